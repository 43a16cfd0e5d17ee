//! Inputs: plain files, rotated sets (`gc.log`, `gc.log.0..N`, `gc.log.N.current`), gzip,
//! zip and stdin. Compression is recognised by content, not by name.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

pub use pauselab_pause::archive::MAX_ZIP_MEMBERS;
use pauselab_pause::archive::{self, display_name, open_zip_member, ZipMember};
use pauselab_pause::input::open_file;

use crate::lines::{LineReader, MAX_LINE};
use crate::parse::parse_line;
use crate::Error;

/// One readable input, named as the user will see it in messages (control characters
/// escaped).
pub struct Input {
    pub name: String,
    pub path: Option<PathBuf>,
    /// A file inside the zip archive at `path` (an archive holding several files is read as
    /// one input per file, named `archive.zip!member`).
    pub zip_entry: Option<ZipMember>,
}

/// Expands the command-line arguments into inputs, in reading order: each rotated set is
/// ordered oldest first, arguments keep their order, duplicates are dropped.
pub fn expand(args: &[String]) -> Result<Vec<Input>, Error> {
    let mut out: Vec<Input> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    for arg in args {
        if arg == "-" {
            out.push(Input {
                name: "<stdin>".to_string(),
                path: None,
                zip_entry: None,
            });
            continue;
        }
        let path = PathBuf::from(arg);
        let meta = std::fs::metadata(&path);
        if let Ok(m) = &meta {
            if m.is_dir() {
                return Err(Error::IsDirectory(display_name(&path)));
            }
            if !m.is_file() {
                // A pipe (`<(zcat gc.log.gz)`) or device: opened once, when it is read, so
                // nothing is consumed by probing; [`open`] refuses what is not a pipe.
                out.push(Input {
                    name: display_name(&path),
                    path: Some(path),
                    zip_entry: None,
                });
                continue;
            }
        }
        let mut set = rotated_siblings(&path);
        if meta.is_ok() && !set.contains(&path) {
            set.push(path.clone());
        }
        if set.is_empty() {
            return Err(match meta {
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    Error::NotFound(display_name(&path))
                }
                Err(e) => Error::Io(display_name(&path), e),
                Ok(_) => Error::NotFound(display_name(&path)),
            });
        }
        order_rotated_set(&mut set);
        for p in set {
            let canonical = std::fs::canonicalize(&p).unwrap_or_else(|_| p.clone());
            if seen.contains(&canonical) {
                continue;
            }
            seen.push(canonical);
            match zip_members(&p)? {
                Some(members) => out.extend(members),
                None => out.push(Input {
                    name: display_name(&p),
                    path: Some(p),
                    zip_entry: None,
                }),
            }
        }
    }
    Ok(out)
}

/// `base.N`, `base.N.current`, `base.N.gz` next to `base` (also when `base` is itself one of
/// them: `gc.log.3` finds its set).
fn rotated_siblings(path: &Path) -> Vec<PathBuf> {
    let Some(file_name) = path.file_name().and_then(|n| n.to_str()) else {
        return Vec::new();
    };
    let base = rotation_base(file_name).unwrap_or(file_name);
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut set = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if (name == base || rotation_base(name) == Some(base))
            && entry.file_type().is_ok_and(|t| t.is_file())
        {
            {
                set.push(
                    if path.parent().is_some_and(|p| !p.as_os_str().is_empty()) {
                        dir.join(name)
                    } else {
                        PathBuf::from(name)
                    },
                );
            }
        }
    }
    // Only a set when there is more than the file itself.
    if set.len() <= 1 && set.iter().all(|p| p.file_name() == path.file_name()) {
        return Vec::new();
    }
    set
}

/// `gc.log.3` -> `gc.log`; `gc.log.3.current` -> `gc.log`; `gc.log.3.gz` -> `gc.log`.
fn rotation_base(name: &str) -> Option<&str> {
    let name = name.strip_suffix(".gz").unwrap_or(name);
    let name = name.strip_suffix(".current").unwrap_or(name);
    let dot = name.rfind('.')?;
    let suffix = &name[dot + 1..];
    (!suffix.is_empty() && suffix.bytes().all(|b| b.is_ascii_digit())).then(|| &name[..dot])
}

/// Oldest first: by the first time stamp inside each file (wall clock if all have one, else
/// uptime), falling back to the modification time. Numbering alone cannot order a set:
/// unified logging reuses numbers cyclically and the live file has none.
fn order_rotated_set(set: &mut [PathBuf]) {
    if set.len() < 2 {
        return;
    }
    let keys: Vec<AgeKey> = set
        .iter()
        .map(|p| {
            let (wall, up) = first_stamp(p);
            let mtime = std::fs::metadata(p).and_then(|m| m.modified()).ok();
            (wall, up, mtime)
        })
        .collect();
    let sorted: Vec<PathBuf> = oldest_first(&keys)
        .iter()
        .map(|&i| set[i].clone())
        .collect();
    set.clone_from_slice(&sorted);
}

/// Type of the keys [`oldest_first`] orders by: first wall-clock stamp, first uptime stamp,
/// modification time.
type AgeKey = (Option<i64>, Option<u64>, Option<std::time::SystemTime>);

/// Indices, oldest first: by wall clock when every member has one, else by uptime, else by
/// modification time (members without one keep their order).
fn oldest_first(keys: &[AgeKey]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    if keys.iter().all(|k| k.0.is_some()) {
        order.sort_by_key(|&i| keys[i].0);
    } else if keys.iter().all(|k| k.1.is_some()) {
        order.sort_by_key(|&i| keys[i].1);
    } else {
        order.sort_by_key(|&i| keys[i].2);
    }
    order
}

fn first_stamp(path: &Path) -> (Option<i64>, Option<u64>) {
    match open_path(path) {
        Ok(reader) => first_stamp_of(reader),
        Err(_) => (None, None),
    }
}

/// The first wall-clock and uptime stamps among the first 200 lines.
fn first_stamp_of(reader: impl Read) -> (Option<i64>, Option<u64>) {
    let mut lines = LineReader::new(reader);
    for _ in 0..200 {
        let Ok(Some(line)) = lines.next_line() else {
            break;
        };
        if let Ok(p) = parse_line(line.bytes) {
            if p.stamp.wall_ms.is_some() || p.stamp.uptime_ns.is_some() {
                return (p.stamp.wall_ms, p.stamp.uptime_ns);
            }
        }
    }
    (None, None)
}

/// A readable input, decompressed; `Send` so that one thread can read and parse lines while
/// another analyses them.
pub type Reader = archive::Reader;

/// An input that several threads can read at once (see `crate::chunks`): a regular file,
/// neither gzip nor zip, at least `min_size` bytes long, whose first line ends in `\n`
/// within [`MAX_LINE`] bytes without a lone CR before it (so one thread would not read it
/// as a log of CR-terminated lines). The file and its size; None for any other input,
/// which is read by one thread (and its errors reported there).
pub(crate) fn open_splittable(input: &Input, min_size: u64) -> Option<(File, u64)> {
    use std::os::unix::fs::FileExt;
    let path = input.path.as_ref().filter(|_| input.zip_entry.is_none())?;
    // Looked at before opening: opening a named pipe waits for a writer.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() >= min_size) {
        return None;
    }
    let file = File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut head = vec![0; MAX_LINE];
    let n = file.read_at(&mut head, 0).ok()?;
    let head = &head[..n];
    if head.starts_with(&[0x1f, 0x8b]) || head.starts_with(b"PK\x03\x04") {
        return None;
    }
    let first_line = &head[..memchr::memchr(b'\n', head)?];
    let first_line = first_line.strip_suffix(b"\r").unwrap_or(first_line);
    memchr::memchr(b'\r', first_line)
        .is_none()
        .then_some((file, meta.len()))
}

/// Opens an input for reading, decompressing gzip and zip.
pub fn open(input: &Input) -> Result<Reader, Error> {
    match (&input.path, input.zip_entry) {
        (None, _) => Ok(archive::decompress(Box::new(io::stdin()), &input.name)?),
        (Some(p), Some(member)) => Ok(open_zip_member(p, member, &input.name)?),
        (Some(p), None) => open_path(p),
    }
}

/// [`open`], decompressing on a thread of its own when the input is compressed (gzip,
/// zip) and `threads` > 1: inflating costs about as much as parsing.
pub(crate) fn open_for_reading(input: &Input, threads: usize) -> Result<Reader, Error> {
    let compressed = compressed(input);
    let reader = open(input)?;
    Ok(if threads > 1 && compressed {
        Box::new(ReadAhead::spawn(reader))
    } else {
        reader
    })
}

/// Whether a file input starts with the gzip or zip magic (stdin and pipes: not looked at,
/// they cannot be read twice).
fn compressed(input: &Input) -> bool {
    if input.zip_entry.is_some() {
        return true;
    }
    let Some(path) = input.path.as_ref() else {
        return false;
    };
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = [0u8; 4];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head.starts_with(&[0x1f, 0x8b]) || head == *b"PK\x03\x04")
}

/// Blocks read ahead by the decompressing thread.
const READ_AHEAD_BLOCKS: usize = 4;
/// Bytes per block read ahead.
const READ_AHEAD_BLOCK: usize = 256 * 1024;

/// A reader whose reading (decompressing) runs on a thread of its own, a few blocks ahead.
///
/// The blocks go back to that thread once read, and are filled again. Allocated there and
/// freed on the reading thread, each block's memory stayed with the decompressing thread's
/// heap until it allocated again: a 30 MB gzipped log read by two threads took 39 to 50 MB
/// instead of 7 MB, a rotated set of twenty of them 105 MB (docs/analyze.md, "Blocks of a
/// compressed input filled again").
struct ReadAhead {
    /// Blocks read, each [`READ_AHEAD_BLOCK`] long, with how many of their bytes were read
    /// into.
    blocks: std::sync::mpsc::Receiver<io::Result<(Vec<u8>, usize)>>,
    /// Blocks read, back to the decompressing thread.
    spent: std::sync::mpsc::Sender<Vec<u8>>,
    block: Vec<u8>,
    /// The block's bytes read into.
    len: usize,
    at: usize,
}

impl ReadAhead {
    fn spawn(mut inner: Reader) -> Self {
        let (send, blocks) = std::sync::mpsc::sync_channel(READ_AHEAD_BLOCKS);
        let (spent, refill) = std::sync::mpsc::channel::<Vec<u8>>();
        std::thread::spawn(move || loop {
            // A block filled again keeps its length: only a new one is zeroed.
            let mut block = refill
                .try_recv()
                .unwrap_or_else(|_| vec![0; READ_AHEAD_BLOCK]);
            let mut filled = 0;
            let result = loop {
                match inner.read(&mut block[filled..]) {
                    Ok(0) => break Ok(()),
                    Ok(n) => {
                        filled += n;
                        if filled == block.len() {
                            break Ok(());
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => break Err(e),
                }
            };
            let last = filled == 0 || result.is_err();
            // A closed channel: the reading side stopped; so does this thread.
            if send.send(result.map(|()| (block, filled))).is_err() || last {
                return;
            }
        });
        ReadAhead {
            blocks,
            spent,
            block: Vec::new(),
            len: 0,
            at: 0,
        }
    }
}

impl Read for ReadAhead {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.at == self.len {
            match self.blocks.recv() {
                Ok(next) => {
                    let (block, len) = next?;
                    let read = std::mem::replace(&mut self.block, block);
                    if !read.is_empty() {
                        // Refused once the thread has ended: the block is freed here then.
                        let _ = self.spent.send(read);
                    }
                    (self.len, self.at) = (len, 0);
                }
                // The thread ended after the last block.
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.len - self.at);
        out[..n].copy_from_slice(&self.block[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// The files of a zip archive holding more than one, oldest first (by their first time
/// stamps, as a rotated set); None for anything else (a single-file archive streams as it
/// is, through [`open_path`]). The archive is opened once: the time it takes grows with
/// the number of members, not with its square.
fn zip_members(path: &Path) -> Result<Option<Vec<Input>>, Error> {
    let Some(entries) = archive::zip_members(path)? else {
        return Ok(None);
    };
    let members: Vec<Input> = entries
        .into_iter()
        .map(|(name, member)| Input {
            name: format!("{}!{name}", display_name(path)),
            path: Some(path.to_path_buf()),
            zip_entry: Some(member),
        })
        .collect();
    // Members have no modification time of their own here: without stamps they keep the
    // archive's order.
    let keys: Vec<AgeKey> = members
        .iter()
        .map(|input| {
            let (wall, uptime) = open(input).map(first_stamp_of).unwrap_or((None, None));
            (wall, uptime, None)
        })
        .collect();
    if members.len() < 2 {
        return Ok(None);
    }
    let mut slots: Vec<Option<Input>> = members.into_iter().map(Some).collect();
    Ok(Some(
        oldest_first(&keys)
            .iter()
            .filter_map(|&i| slots[i].take())
            .collect(),
    ))
}

fn open_path(path: &Path) -> Result<Reader, Error> {
    let name = display_name(path);
    let file = open_file(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => Error::NotFound(name.clone()),
        _ => Error::Io(name.clone(), e),
    })?;
    Ok(archive::decompress(Box::new(file), &name)?)
}

/// The compressed input's errors are the reader's, with the same messages.
impl From<archive::ArchiveError> for Error {
    fn from(e: archive::ArchiveError) -> Error {
        match e {
            archive::ArchiveError::Io(name, e) => Error::Io(name, e),
            archive::ArchiveError::IsDirectory(name) => Error::IsDirectory(name),
            archive::ArchiveError::Zip(name, why) => Error::Zip(name, why),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_decompressed_on_its_own_thread_reads_whole_and_reports_a_corrupt_end() {
        use std::io::Write;
        let log = std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/gclogs/demo-g1-jdk17.log"),
        )
        .unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        for _ in 0..20 {
            gz.write_all(&log).unwrap(); // several read-ahead blocks
        }
        let gz = gz.finish().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let read = |bytes: &[u8]| {
            let path = dir.path().join("gc.log.gz");
            std::fs::write(&path, bytes).unwrap();
            let input = Input {
                name: "gc.log.gz".to_string(),
                path: Some(path),
                zip_entry: None,
            };
            let mut out = Vec::new();
            open_for_reading(&input, 2)
                .unwrap()
                .read_to_end(&mut out)
                .map(|_| out)
        };
        assert_eq!(read(&gz).unwrap(), log.repeat(20));
        let mut corrupt = gz.clone();
        let middle = corrupt.len() / 2;
        corrupt[middle..].fill(0xff);
        assert!(read(&corrupt).is_err());
    }

    #[test]
    fn a_zip_of_a_rotated_set_is_read_member_by_member_oldest_first() {
        use std::io::Write;
        let log = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/gclogs/demo-g1-jdk17.log"),
        )
        .unwrap();
        let lines: Vec<&str> = log.lines().collect();
        let (older, newer) = lines.split_at(lines.len() / 2);
        let dir = std::env::temp_dir().join(format!("pauselab-zip-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let archive = dir.join("logs.zip");
        let mut zip = zip::ZipWriter::new(File::create(&archive).unwrap());
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        // The live file first, as `zip logs.zip gc.log*` stores it.
        for (name, part) in [("gc.log", newer), ("gc.log.0", older)] {
            zip.start_file(name, options).unwrap();
            zip.write_all((part.join("\n") + "\n").as_bytes()).unwrap();
        }
        zip.finish().unwrap();

        let inputs = expand(&[archive.display().to_string()]).unwrap();
        let names: Vec<&str> = inputs.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(
            names,
            [
                format!("{}!gc.log.0", archive.display()),
                format!("{}!gc.log", archive.display())
            ]
        );
        let mut text = String::new();
        for input in &inputs {
            open(input).unwrap().read_to_string(&mut text).unwrap();
        }
        assert_eq!(text, lines.join("\n") + "\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn rotation_suffixes() {
        assert_eq!(rotation_base("gc.log.3"), Some("gc.log"));
        assert_eq!(rotation_base("gc.log.3.current"), Some("gc.log"));
        assert_eq!(rotation_base("gc.log.12.gz"), Some("gc.log"));
        assert_eq!(rotation_base("gc.log"), None);
        assert_eq!(rotation_base("gc.log.gz"), None);
    }
}
