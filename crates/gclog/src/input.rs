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
            out.push(Input {
                name: p.display().to_string(),
                path: Some(p),
            });
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
    let keys: Vec<(Option<i64>, Option<u64>, Option<std::time::SystemTime>)> = set
        .iter()
        .map(|p| {
            let (wall, up) = first_stamp(p);
            let mtime = std::fs::metadata(p).and_then(|m| m.modified()).ok();
            (wall, up, mtime)
        })
        .collect();
    let mut idx: Vec<usize> = (0..set.len()).collect();
    if keys.iter().all(|k| k.0.is_some()) {
        idx.sort_by_key(|&i| keys[i].0);
    } else if keys.iter().all(|k| k.1.is_some()) {
        idx.sort_by_key(|&i| keys[i].1);
    } else {
        idx.sort_by_key(|&i| keys[i].2);
    }
    let sorted: Vec<PathBuf> = idx.iter().map(|&i| set[i].clone()).collect();
    set.clone_from_slice(&sorted);
}

fn first_stamp(path: &Path) -> (Option<i64>, Option<u64>) {
    let Ok(reader) = open_path(path) else {
        return (None, None);
    };
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
    match &input.path {
        None => decompress(Box::new(io::stdin().lock()), &input.name),
        Some(p) => open_path(p),
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
    fn rotation_suffixes() {
        assert_eq!(rotation_base("gc.log.3"), Some("gc.log"));
        assert_eq!(rotation_base("gc.log.3.current"), Some("gc.log"));
        assert_eq!(rotation_base("gc.log.12.gz"), Some("gc.log"));
        assert_eq!(rotation_base("gc.log"), None);
        assert_eq!(rotation_base("gc.log.gz"), None);
    }
}
