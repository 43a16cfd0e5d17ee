//! Inputs: plain files, rotated sets (`gc.log`, `gc.log.0..N`, `gc.log.N.current`), gzip,
//! zip and stdin. Compression is recognised by content, not by name.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::lines::LineReader;
use crate::parse::parse_line;
use crate::Error;

/// One readable input, named as the user will see it in messages.
pub struct Input {
    pub name: String,
    pub path: Option<PathBuf>,
    /// The index of a file inside the zip archive at `path` (an archive holding several
    /// files is read as one input per file, named `archive.zip!member`).
    pub zip_entry: Option<usize>,
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
                return Err(Error::IsDirectory(arg.clone()));
            }
        }
        let mut set = rotated_siblings(&path);
        if meta.is_ok() && !set.contains(&path) {
            set.push(path.clone());
        }
        if set.is_empty() {
            return Err(match meta {
                Err(e) if e.kind() == io::ErrorKind::NotFound => Error::NotFound(arg.clone()),
                Err(e) => Error::Io(arg.clone(), e),
                Ok(_) => Error::NotFound(arg.clone()),
            });
        }
        order_rotated_set(&mut set);
        for p in set {
            let canonical = std::fs::canonicalize(&p).unwrap_or_else(|_| p.clone());
            if seen.contains(&canonical) {
                continue;
            }
            seen.push(canonical);
            match zip_members(&p) {
                Some(members) => out.extend(members),
                None => out.push(Input {
                    name: p.display().to_string(),
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
fn first_stamp_of(reader: Box<dyn Read>) -> (Option<i64>, Option<u64>) {
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

/// Opens an input for reading, decompressing gzip and zip.
pub fn open(input: &Input) -> Result<Box<dyn Read>, Error> {
    match (&input.path, input.zip_entry) {
        (None, _) => decompress(Box::new(io::stdin().lock()), &input.name),
        (Some(p), Some(index)) => {
            let member = ZipMemberReader::start(p.clone(), index, input.name.clone());
            decompress(Box::new(member), &input.name)
        }
        (Some(p), None) => open_path(p),
    }
}

/// The files of a zip archive holding more than one, oldest first (by their first time
/// stamps, as a rotated set); None for anything else (a single-file archive streams as it
/// is, through [`decompress`]).
fn zip_members(path: &Path) -> Option<Vec<Input>> {
    let mut file = File::open(path).ok()?;
    let mut magic = [0u8; 4];
    file.read_exact(&mut magic).ok()?;
    if magic != *b"PK\x03\x04" {
        return None;
    }
    let mut archive = zip::ZipArchive::new(file).ok()?;
    let mut members = Vec::new();
    for index in 0..archive.len() {
        let entry = archive.by_index_raw(index).ok()?;
        if entry.is_file() {
            members.push(Input {
                name: format!("{}!{}", path.display(), entry.name()),
                path: Some(path.to_path_buf()),
                zip_entry: Some(index),
            });
        }
    }
    if members.len() < 2 {
        return None;
    }
    // Members have no modification time of their own here: without stamps they keep the
    // archive's order.
    let keys: Vec<AgeKey> = members
        .iter()
        .map(|m| {
            let (wall, uptime) = open(m).map(first_stamp_of).unwrap_or((None, None));
            (wall, uptime, None)
        })
        .collect();
    let mut slots: Vec<Option<Input>> = members.into_iter().map(Some).collect();
    Some(
        oldest_first(&keys)
            .iter()
            .filter_map(|&i| slots[i].take())
            .collect(),
    )
}

/// Streams one member of a zip archive: a thread decompresses it into a bounded channel
/// (the `zip` crate's member reader borrows its archive, so it cannot be handed out), and
/// stops when the reader is dropped.
struct ZipMemberReader {
    chunks: std::sync::mpsc::Receiver<io::Result<Vec<u8>>>,
    current: Vec<u8>,
    position: usize,
}

impl ZipMemberReader {
    fn start(path: PathBuf, index: usize, name: String) -> ZipMemberReader {
        let (sender, chunks) = std::sync::mpsc::sync_channel(4);
        std::thread::spawn(move || {
            let result = (|| -> io::Result<()> {
                let file = File::open(&path)?;
                let mut archive = zip::ZipArchive::new(file).map_err(io::Error::other)?;
                let mut member = archive.by_index(index).map_err(io::Error::other)?;
                loop {
                    let mut chunk = vec![0u8; 64 * 1024];
                    let n = member.read(&mut chunk)?;
                    if n == 0 {
                        return Ok(());
                    }
                    chunk.truncate(n);
                    if sender.send(Ok(chunk)).is_err() {
                        return Ok(()); // the reader is gone
                    }
                }
            })();
            if let Err(e) = result {
                let _ = sender.send(Err(io::Error::new(e.kind(), format!("{name}: {e}"))));
            }
        });
        ZipMemberReader {
            chunks,
            current: Vec::new(),
            position: 0,
        }
    }
}

impl Read for ZipMemberReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.position == self.current.len() {
            match self.chunks.recv() {
                Ok(Ok(chunk)) => {
                    self.current = chunk;
                    self.position = 0;
                }
                Ok(Err(e)) => return Err(e),
                Err(_) => return Ok(0), // finished
            }
        }
        let n = out.len().min(self.current.len() - self.position);
        out[..n].copy_from_slice(&self.current[self.position..self.position + n]);
        self.position += n;
        Ok(n)
    }
}

fn open_path(path: &Path) -> Result<Box<dyn Read>, Error> {
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => Error::NotFound(name.clone()),
        _ => Error::Io(name.clone(), e),
    })?;
    decompress(Box::new(file), &name)
}

fn decompress(reader: Box<dyn Read>, name: &str) -> Result<Box<dyn Read>, Error> {
    let mut buffered = BufReader::with_capacity(64 * 1024, reader);
    let head = match buffered.fill_buf() {
        Ok(h) => h,
        // EISDIR: a directory given as stdin or raced in after the metadata check.
        Err(e) if e.raw_os_error() == Some(21) => return Err(Error::IsDirectory(name.to_string())),
        Err(e) => return Err(Error::Io(name.to_string(), e)),
    };
    if head.starts_with(&[0x1f, 0x8b]) {
        return Ok(Box::new(flate2::read::MultiGzDecoder::new(buffered)));
    }
    if head.starts_with(b"PK\x03\x04") {
        return open_zip_entry(buffered, name);
    }
    Ok(Box::new(buffered))
}

/// Streams the first file entry of a zip archive (GC logs are zipped one per archive).
fn open_zip_entry(mut r: BufReader<Box<dyn Read>>, name: &str) -> Result<Box<dyn Read>, Error> {
    let bad = |msg: &str| Error::Zip(name.to_string(), msg.to_string());
    loop {
        let mut header = [0u8; 30];
        r.read_exact(&mut header)
            .map_err(|_| bad("truncated local file header"))?;
        if header[..4] != *b"PK\x03\x04" {
            return Err(bad("no file entry in the archive"));
        }
        let le16 = |i: usize| u16::from_le_bytes([header[i], header[i + 1]]);
        let le32 =
            |i: usize| u32::from_le_bytes([header[i], header[i + 1], header[i + 2], header[i + 3]]);
        let flags = le16(6);
        let method = le16(8);
        let compressed = u64::from(le32(18));
        let name_len = u64::from(le16(26));
        let extra_len = u64::from(le16(28));
        let mut entry_name = Vec::new();
        (&mut r)
            .take(name_len)
            .read_to_end(&mut entry_name)
            .map_err(|_| bad("truncated entry name"))?;
        io::copy(&mut (&mut r).take(extra_len), &mut io::sink())
            .map_err(|_| bad("truncated header"))?;
        if flags & 1 != 0 {
            return Err(bad("encrypted entries are not supported"));
        }
        if entry_name.ends_with(b"/") {
            io::copy(&mut (&mut r).take(compressed), &mut io::sink())
                .map_err(|_| bad("truncated archive"))?;
            continue;
        }
        return match method {
            8 => Ok(Box::new(flate2::read::DeflateDecoder::new(r))),
            0 if flags & 8 == 0 => Ok(Box::new(r.take(compressed))),
            m => Err(bad(&format!(
                "compression method {m} is not supported (only deflate and stored)"
            ))),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
