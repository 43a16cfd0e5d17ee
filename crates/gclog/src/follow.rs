//! Following a log that a running JVM is still writing: each poll reads only what was
//! appended since the previous one, so following costs the same every time however long
//! the JVM has been running, and nothing is ever read twice.
//!
//! [`LogTail`] hands out complete lines and follows HotSpot's rotation
//! (`-Xlog:...::filecount=N,filesize=M`): when the file fills up, HotSpot renames `gc.log`
//! to `gc.log.K` (K cycling through 0..N) and opens a new `gc.log`. The tail keeps the file
//! open, so a rename does not lose its last lines: the open file is read to its end, then
//! the archives written after it, then the new file from its start. JDK 8's rotation
//! (`-Xloggc:gc.log -XX:+UseGCLogFileRotation`) writes into `gc.log.K.current` instead and
//! renames it to `gc.log.K` when full: when the name itself does not exist, the tail
//! follows the newest `name.K.current`, with the same archives. [`GcLogFollower`] runs the
//! GC log parser over those lines.

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use pauselab_pause::input::open_regular_file;

use crate::parse::{parse_line, Parsed};
use crate::stitch::Stitcher;

/// A line longer than this is not a line of these logs (a GC log line is at most a few KiB,
/// an interval log line a few tens of KiB): it is dropped rather than buffered.
pub const MAX_LINE: usize = 1 << 20;

/// Bytes read per `read` call.
const CHUNK: usize = 64 << 10;

/// Which file on disk: a renamed file keeps it, a new file under the old name does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    fn of(meta: &fs::Metadata) -> FileId {
        FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }
}

/// What one poll read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    pub bytes: u64,
    /// Rotations followed (the file was renamed and a new one opened under its name).
    pub rotations: u64,
    /// The byte budget ran out before the end of the file: more is waiting.
    pub more: bool,
}

/// The unread end of a file that grows by whole lines, followed through rotation.
#[derive(Debug)]
pub struct LogTail {
    path: PathBuf,
    file: Option<File>,
    /// The file being read, once it was opened.
    id: Option<FileId>,
    offset: u64,
    /// The start of a line whose end has not been written yet.
    partial: Vec<u8>,
    /// Dropping bytes up to the next newline (a line longer than [`MAX_LINE`]).
    skipping: bool,
}

impl Clone for LogTail {
    /// The clone opens the file again on its first poll and goes on at the same offset
    /// (if it is still the same file).
    fn clone(&self) -> Self {
        LogTail {
            path: self.path.clone(),
            file: None,
            id: self.id,
            offset: self.offset,
            partial: self.partial.clone(),
            skipping: self.skipping,
        }
    }
}

impl LogTail {
    /// Follows `path` from its start (a file that does not exist yet is waited for).
    pub fn new(path: &Path) -> LogTail {
        LogTail {
            path: path.to_path_buf(),
            file: None,
            id: None,
            offset: 0,
            partial: Vec::new(),
            skipping: false,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes held for a line not complete yet (at most [`MAX_LINE`]).
    pub fn held_bytes(&self) -> usize {
        self.partial.len()
    }

    /// Hands every line completed since the last call to `each` (without its newline). A
    /// file that does not exist yet has no lines. With `at_end` (the writer has exited), a
    /// last line without a newline counts as complete, and the file is closed afterwards
    /// (a later call opens it again and goes on at the same offset): an open descriptor
    /// would keep its filesystem busy, and a lab run unmounts the device its logs are on
    /// once their writers have exited.
    pub fn read_new_lines(&mut self, at_end: bool, each: impl FnMut(&[u8])) -> Result<(), String> {
        let read = self
            .poll(u64::MAX, at_end, each)
            .map(|_| ())
            .map_err(|e| format!("{}: {e}", self.path.display()));
        if at_end {
            self.file = None;
        }
        read
    }

    /// Like [`LogTail::read_new_lines`], reading at most about `budget` bytes; the rest is
    /// read by the next polls ([`Progress::more`]).
    pub fn poll(
        &mut self,
        budget: u64,
        at_end: bool,
        mut each: impl FnMut(&[u8]),
    ) -> io::Result<Progress> {
        let mut progress = Progress::default();
        if self.file.is_none() && !self.open_current()? {
            return Ok(progress);
        }
        loop {
            let Some(file) = self.file.as_mut() else {
                return Ok(progress);
            };
            let meta = file.metadata()?;
            if meta.len() < self.offset {
                // Truncated in place (copytruncate): what is there now is new.
                self.offset = 0;
                self.partial.clear();
                self.skipping = false;
                file.seek(SeekFrom::Start(0))?;
            }
            let read = self.read_open(budget.saturating_sub(progress.bytes), &mut each)?;
            progress.bytes += read.bytes;
            if !read.at_eof {
                progress.more = true;
                return Ok(progress);
            }
            // At the end of the open file: has the JVM moved on to a new one?
            let current = match fs::metadata(self.current_name()) {
                Ok(meta) => Some(FileId::of(&meta)),
                // Between HotSpot's rename and its open of the new file: look next time.
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => return Err(e),
            };
            if current.is_none() || current == self.id {
                if at_end {
                    self.flush_partial(&mut each);
                }
                return Ok(progress);
            }
            // Rotated: what the JVM wrote just before renaming the file is read first; then
            // the file is complete and its last line ends there.
            progress.bytes += self.read_open(u64::MAX, &mut each)?.bytes;
            self.flush_partial(&mut each);
            let finished_at = meta.modified().ok();
            progress.bytes += self.read_later_archives(finished_at, current, &mut each)?;
            progress.rotations += 1;
            self.file = None;
            self.id = None;
            self.offset = 0;
            if !self.open_current()? {
                return Ok(progress);
            }
        }
    }

    /// Reads the open file from the kept offset.
    fn read_open(&mut self, budget: u64, each: &mut impl FnMut(&[u8])) -> io::Result<ReadOutcome> {
        let Some(file) = self.file.as_mut() else {
            return Ok(ReadOutcome {
                bytes: 0,
                at_eof: true,
            });
        };
        read_lines(
            file,
            budget,
            &mut self.offset,
            &mut self.partial,
            &mut self.skipping,
            each,
        )
    }

    fn flush_partial(&mut self, each: &mut impl FnMut(&[u8])) {
        if !self.partial.is_empty() && !self.skipping {
            each(&self.partial);
        }
        self.partial.clear();
        self.skipping = false;
    }

    /// Opens the file under its name. Goes on at the kept offset if it is the file read
    /// before (a clone of this tail), else from its start. False if there is no file yet.
    /// The name comes from a JVM's command line and the directory may be its user's: a
    /// FIFO, a device or a symbolic link planted there is refused, never waited on.
    fn open_current(&mut self) -> io::Result<bool> {
        let mut file = match open_regular_file(&self.current_name(), false) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e),
        };
        let id = FileId::of(&file.metadata()?);
        if self.id == Some(id) {
            file.seek(SeekFrom::Start(self.offset))?;
        } else {
            self.offset = 0;
            self.partial.clear();
            self.skipping = false;
        }
        self.id = Some(id);
        self.file = Some(file);
        Ok(true)
    }

    /// The name the JVM writes under now: the name itself, or when it does not exist, the
    /// newest `name.K.current` (JDK 8's rotation). Between JDK 8's rename of the full file
    /// and its creation of the next one, neither exists: the name is returned, not found.
    fn current_name(&self) -> PathBuf {
        if fs::symlink_metadata(&self.path).is_ok() {
            return self.path.clone();
        }
        jdk8_current_files(&self.path)
            .into_iter()
            .max_by_key(|(modified, _)| *modified)
            .map_or_else(|| self.path.clone(), |(_, path)| path)
    }

    /// Reads, whole and in the order they were written, the archives (`gc.log.0`,
    /// `gc.log.1`, ...) that HotSpot wrote after the file just finished: more than one
    /// rotation may have happened since the previous poll. HotSpot numbers its archives
    /// in a cycle, so the later ones follow the finished file's own archive number; older
    /// archives (from the previous cycle) are told apart by their modification time, and
    /// the finished and the current file by inode.
    fn read_later_archives(
        &mut self,
        finished_at: Option<SystemTime>,
        current: Option<FileId>,
        each: &mut impl FnMut(&[u8]),
    ) -> io::Result<u64> {
        let Some(finished_at) = finished_at else {
            return Ok(0);
        };
        let mut archives: Vec<(u64, FileId, SystemTime, PathBuf)> = archives_of(&self.path)
            .into_iter()
            .filter_map(|(number, path)| {
                let meta = fs::metadata(&path).ok()?;
                Some((number, FileId::of(&meta), meta.modified().ok()?, path))
            })
            .collect();
        archives.sort_by_key(|a| a.0);
        // The finished file's own archive, when it still exists: the later ones come next.
        let own = archives.iter().position(|a| Some(a.1) == self.id);
        let later: Vec<PathBuf> = match own {
            Some(own) => {
                let n = archives.len();
                (1..n)
                    .map(|step| &archives[(own + step) % n])
                    .take_while(|a| a.2 >= finished_at && Some(a.1) != current)
                    .map(|a| a.3.clone())
                    .collect()
            }
            None => {
                let mut newer: Vec<_> = archives
                    .iter()
                    .filter(|a| a.2 > finished_at && Some(a.1) != current)
                    .collect();
                newer.sort_by_key(|a| a.2);
                newer.into_iter().map(|a| a.3.clone()).collect()
            }
        };
        let mut bytes = 0;
        for path in later {
            // Deleted meanwhile (more rotations than files kept): nothing to read.
            let Ok(mut file) = open_regular_file(&path, false) else {
                continue;
            };
            let (mut offset, mut partial, mut skipping) = (0, Vec::new(), false);
            let read = read_lines(
                &mut file,
                u64::MAX,
                &mut offset,
                &mut partial,
                &mut skipping,
                each,
            )?;
            if !partial.is_empty() && !skipping {
                each(&partial);
            }
            bytes += read.bytes;
        }
        Ok(bytes)
    }
}

/// `path.N.current` for every number N in `path`'s directory (the file JDK 8 writes with
/// `-XX:+UseGCLogFileRotation`), with its modification time.
fn jdk8_current_files(path: &Path) -> Vec<(SystemTime, PathBuf)> {
    siblings_of(path)
        .into_iter()
        .filter(|(suffix, _)| {
            suffix
                .strip_suffix(".current")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|(_, path)| Some((fs::metadata(&path).ok()?.modified().ok()?, path)))
        .collect()
}

/// `path.N` for every number N in `path`'s directory (HotSpot's archive names), with N.
fn archives_of(path: &Path) -> Vec<(u64, PathBuf)> {
    siblings_of(path)
        .into_iter()
        .filter_map(|(suffix, path)| Some((suffix.parse().ok()?, path)))
        .collect()
}

/// Every `path.SUFFIX` in `path`'s directory, with SUFFIX.
fn siblings_of(path: &Path) -> Vec<(String, PathBuf)> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return Vec::new();
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let suffix = e
                .file_name()
                .to_str()?
                .strip_prefix(name)?
                .strip_prefix('.')?
                .to_string();
            Some((suffix, e.path()))
        })
        .collect()
}

struct ReadOutcome {
    bytes: u64,
    at_eof: bool,
}

/// Reads from `file` (positioned at `offset`) up to about `budget` bytes, handing out every
/// complete line.
fn read_lines(
    file: &mut File,
    budget: u64,
    offset: &mut u64,
    partial: &mut Vec<u8>,
    skipping: &mut bool,
    each: &mut impl FnMut(&[u8]),
) -> io::Result<ReadOutcome> {
    let mut chunk = vec![0u8; CHUNK];
    let mut bytes = 0u64;
    loop {
        if bytes >= budget {
            return Ok(ReadOutcome {
                bytes,
                at_eof: false,
            });
        }
        let n = match file.read(&mut chunk) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            return Ok(ReadOutcome {
                bytes,
                at_eof: true,
            });
        }
        *offset += n as u64;
        bytes += n as u64;
        let mut rest = &chunk[..n];
        while let Some(end) = memchr::memchr(b'\n', rest) {
            if !*skipping {
                if partial.is_empty() {
                    each(&rest[..end]);
                } else {
                    partial.extend_from_slice(&rest[..end]);
                    each(partial);
                    partial.clear();
                }
            }
            *skipping = false;
            rest = &rest[end + 1..];
        }
        if !*skipping {
            partial.extend_from_slice(rest);
            if partial.len() > MAX_LINE {
                partial.clear();
                *skipping = true;
            }
        }
    }
}

/// A GC log read as the JVM writes it, parsed line by line. JDK 8 events that the JVM
/// spread over several lines are joined first, as `pauselab analyze` does.
pub struct GcLogFollower {
    tail: LogTail,
    stitcher: Stitcher,
    line: u64,
}

impl GcLogFollower {
    /// Follows `path` from its start.
    pub fn new(path: &Path) -> GcLogFollower {
        GcLogFollower {
            tail: LogTail::new(path),
            stitcher: Stitcher::new(),
            line: 0,
        }
    }

    pub fn path(&self) -> &Path {
        self.tail.path()
    }

    /// Bytes held between polls: a line not complete yet and a JDK 8 event not joined yet.
    pub fn held_bytes(&self) -> usize {
        self.tail.held_bytes() + self.stitcher.held_bytes()
    }

    /// Parses what was appended (at most about `budget` bytes) and hands every line the
    /// parser recognised to `each`, in log order.
    pub fn poll(&mut self, budget: u64, mut each: impl FnMut(Parsed)) -> io::Result<Progress> {
        let (stitcher, line) = (&mut self.stitcher, &mut self.line);
        let mut parsed = |bytes: &[u8], _: u64, _| {
            if let Ok(p) = parse_line(bytes) {
                each(p);
            }
        };
        self.tail.poll(budget, false, |bytes| {
            *line += 1;
            stitcher.push(bytes, *line, &mut parsed);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn lines_of(tail: &mut LogTail, at_end: bool) -> Vec<String> {
        let mut lines = Vec::new();
        tail.read_new_lines(at_end, |l| {
            lines.push(String::from_utf8_lossy(l).into_owned())
        })
        .unwrap();
        lines
    }

    #[test]
    fn lines_are_handed_out_once_and_only_when_complete() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tail.log");
        let mut file = File::create(&path).unwrap();
        let mut tail = LogTail::new(&path);
        let mut seen: Vec<String> = Vec::new();
        file.write_all(b"one\ntw").unwrap();
        seen.extend(lines_of(&mut tail, false));
        assert_eq!(seen, ["one"]);
        file.write_all(b"o\nthree").unwrap();
        seen.extend(lines_of(&mut tail, false));
        assert_eq!(seen, ["one", "two"]);
        assert!(lines_of(&mut tail, false).is_empty());
        seen.extend(lines_of(&mut tail, true));
        assert_eq!(seen, ["one", "two", "three"]);
        // A line longer than the limit is dropped whole; the next one is read.
        file.write_all(&vec![b'x'; MAX_LINE + 10]).unwrap();
        assert!(lines_of(&mut tail, false).is_empty());
        file.write_all(b"xx\nfour\n").unwrap();
        assert_eq!(lines_of(&mut tail, false), ["four"]);
        // A clone goes on where the original was.
        let mut clone = tail.clone();
        file.write_all(b"five\n").unwrap();
        assert_eq!(lines_of(&mut clone, false), ["five"]);
    }

    /// Whether this process has `path` open.
    fn is_open(path: &Path) -> bool {
        fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|fd| fs::read_link(fd.ok()?.path()).ok())
            .any(|target| target == path)
    }

    #[test]
    fn the_file_is_closed_once_its_writer_has_exited_and_reopened_if_it_grows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gc.log");
        fs::write(&path, "one\ntwo").unwrap();
        let mut tail = LogTail::new(&path);
        assert_eq!(lines_of(&mut tail, false), ["one"]);
        assert!(is_open(&path));
        assert_eq!(lines_of(&mut tail, true), ["two"]);
        assert!(!is_open(&path), "the log keeps its filesystem busy");
        fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(b"three\n"))
            .unwrap();
        assert_eq!(lines_of(&mut tail, false), ["three"]);
    }

    #[test]
    fn a_budget_splits_the_reading_without_losing_a_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.log");
        let text: String = (0..50_000).map(|i| format!("line {i}\n")).collect();
        fs::write(&path, &text).unwrap();
        let mut tail = LogTail::new(&path);
        let mut lines = 0;
        let mut polls = 0;
        loop {
            let progress = tail.poll(100_000, false, |_| lines += 1).unwrap();
            polls += 1;
            if !progress.more {
                break;
            }
        }
        assert_eq!(lines, 50_000);
        assert!(polls > 3, "{polls} polls");
    }

    /// Writes 40 lines into `writing(K)` in `dir`, renaming it to `gc.log.K` after every
    /// fourth line (K cycling through 0..3) and starting `writing(K + 1)`, while a tail of
    /// `gc.log` polls after some writes only (up to two rotations between polls). Returns
    /// the lines written, the lines the tail saw and the rotations it counted.
    fn follow_rotations(
        dir: &Path,
        writing: impl Fn(usize) -> PathBuf,
    ) -> (Vec<String>, Vec<String>, u64) {
        let files_kept = 3;
        let mut k = 0;
        let mut file = File::create(writing(k)).unwrap();
        let mut tail = LogTail::new(&dir.join("gc.log"));
        let (mut written, mut seen, mut rotations) = (Vec::new(), Vec::new(), 0);
        let poll = |tail: &mut LogTail, seen: &mut Vec<String>| {
            tail.poll(u64::MAX, false, |l| {
                seen.push(String::from_utf8_lossy(l).into_owned())
            })
            .unwrap()
            .rotations
        };
        for i in 0..40 {
            let line = format!("event {i}");
            // The last line of a file may lack its newline only until the rotation.
            writeln!(file, "{line}").unwrap();
            written.push(line);
            if i % 4 == 3 {
                drop(file);
                std::thread::sleep(std::time::Duration::from_millis(5));
                fs::rename(writing(k), dir.join(format!("gc.log.{k}"))).unwrap();
                k = (k + 1) % files_kept;
                file = File::create(writing(k)).unwrap();
            }
            if i % 7 == 0 {
                rotations += poll(&mut tail, &mut seen);
            }
        }
        poll(&mut tail, &mut seen);
        (written, seen, rotations)
    }

    /// Rotation as HotSpot 9+ does it: the full `gc.log` becomes `gc.log.K` and a new
    /// `gc.log` starts.
    #[test]
    fn rotation_loses_no_line_and_reads_none_twice() {
        let dir = tempfile::tempdir().unwrap();
        let (written, seen, rotations) =
            follow_rotations(dir.path(), |_| dir.path().join("gc.log"));
        assert_eq!(seen, written);
        assert!(rotations >= 5, "{rotations} rotations seen");
    }

    /// JDK 8's rotation: lines go to `gc.log.K.current`, which becomes `gc.log.K` when full
    /// (replacing an archive of the previous cycle); the next `gc.log.K.current` follows.
    /// The name given, `gc.log`, never exists.
    #[test]
    fn jdk8_rotation_loses_no_line_and_reads_none_twice() {
        let dir = tempfile::tempdir().unwrap();
        let (written, seen, rotations) = follow_rotations(dir.path(), |k| {
            dir.path().join(format!("gc.log.{k}.current"))
        });
        assert_eq!(seen, written);
        assert!(rotations >= 5, "{rotations} rotations seen");
        assert!(!dir.path().join("gc.log").exists());
    }

    #[test]
    fn a_fifo_or_a_link_under_the_name_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.log");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        assert!(LogTail::new(&fifo).poll(u64::MAX, false, |_| {}).is_err());
        let link = dir.path().join("link.log");
        std::os::unix::fs::symlink("/etc/hostname", &link).unwrap();
        assert!(LogTail::new(&link).poll(u64::MAX, false, |_| {}).is_err());
    }

    #[test]
    fn a_truncated_file_is_read_again_from_its_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gc.log");
        fs::write(&path, "a long first line\nsecond\n").unwrap();
        let mut tail = LogTail::new(&path);
        assert_eq!(lines_of(&mut tail, false).len(), 2);
        fs::write(&path, "new\n").unwrap();
        assert_eq!(lines_of(&mut tail, false), ["new"]);
    }
}
