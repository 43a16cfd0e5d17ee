//! Compressed inputs, for every reader (GC logs, JFR recordings): gzip (concatenated
//! members read as one stream, as `zcat` does) and zip, recognised by their first bytes.
//!
//! A zip archive is read from its central directory ([`zip_members`]): an archive whose
//! entries share bytes (the classic zip bomb) is refused before any member is read, and so
//! is one of more than [`MAX_ZIP_MEMBERS`] entries. Each member is then streamed from where
//! the directory says it lies ([`open_zip_member`]).

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use crate::input::{escape_control, Peeked};

/// Most files a zip archive may hold: listing is linear, but each member is read to order
/// them, and a GC log archive holds a rotated set (tens of files), not thousands.
pub const MAX_ZIP_MEMBERS: usize = 10_000;

/// A decompressed input; `Send` so that one thread can read it while another analyses it.
pub type Reader = Box<dyn Read + Send>;

/// Why a compressed input could not be read. The messages are whole: they name the input.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// Reading failed.
    #[error("{0}: {1}")]
    Io(String, #[source] io::Error),
    /// A directory where a file was expected.
    #[error("{0}: is a directory; give the log files in it, e.g. {0}/gc.log")]
    IsDirectory(String),
    /// The zip archive is unreadable, or refused (the reason).
    #[error("{0}: not a readable zip archive: {1}")]
    Zip(String, String),
}

/// Where a member's data lies in its archive, read from the central directory once.
#[derive(Debug, Clone, Copy)]
pub struct ZipMember {
    data_start: u64,
    compressed_size: u64,
    method: zip::CompressionMethod,
    encrypted: bool,
}

/// A path as messages show it: control characters escaped.
pub fn display_name(path: &Path) -> String {
    escape_control(&path.display().to_string()).into_owned()
}

/// The file entries of the zip archive at `path`, in the archive's order, each with its
/// name (control characters escaped); `None` when `path` is no zip archive, or one the
/// central directory cannot be read of (streamed by [`decompress`], which names what is
/// wrong). The archive is opened once.
pub fn zip_members(path: &Path) -> Result<Option<Vec<(String, ZipMember)>>, ArchiveError> {
    let Ok(mut file) = File::open(path) else {
        return Ok(None); // reported when the file is read
    };
    let mut magic = [0u8; 4];
    if file.read_exact(&mut magic).is_err() || magic != *b"PK\x03\x04" {
        return Ok(None);
    }
    let Ok(mut archive) = zip::ZipArchive::new(file) else {
        return Ok(None);
    };
    if archive.len() > MAX_ZIP_MEMBERS {
        return Err(ArchiveError::Zip(
            display_name(path),
            format!(
                "{} entries, more than the {MAX_ZIP_MEMBERS} a GC log archive may hold; unzip the logs you need",
                archive.len()
            ),
        ));
    }
    // Where each entry's bytes lie, from its local header to the end of its data, read
    // before any member is decompressed.
    let mut spans = Vec::with_capacity(archive.len());
    let mut members = Vec::new();
    for index in 0..archive.len() {
        let Ok(entry) = archive.by_index_raw(index) else {
            return Ok(None);
        };
        let name = escape_control(&String::from_utf8_lossy(entry.name_raw())).into_owned();
        let end = entry.data_start().saturating_add(entry.compressed_size());
        spans.push((entry.header_start(), end, name.clone()));
        if !entry.is_file() {
            continue;
        }
        let member = ZipMember {
            data_start: entry.data_start(),
            compressed_size: entry.compressed_size(),
            method: entry.compression(),
            encrypted: entry.encrypted(),
        };
        members.push((name, member));
    }
    refuse_overlaps(&mut spans, path)?;
    Ok(Some(members))
}

/// Refuses an archive two of whose entries share bytes (`spans`: local header start, data
/// end, name): zip tools never write one, and it is the classic zip bomb, where many
/// entries name one highly compressed stream and a small file expands without end.
fn refuse_overlaps(spans: &mut [(u64, u64, String)], path: &Path) -> Result<(), ArchiveError> {
    spans.sort_unstable();
    match spans.windows(2).find(|pair| pair[1].0 < pair[0].1) {
        Some(pair) => Err(ArchiveError::Zip(
            display_name(path),
            format!(
                "entries {} and {} overlap (the same bytes named twice, as in a zip bomb); refused",
                pair[0].2, pair[1].2
            ),
        )),
        None => Ok(()),
    }
}

/// Streams one member of the zip archive at `path` from where the central directory says
/// it lies (a member that is itself gzip is decompressed too); `name` names it in errors.
pub fn open_zip_member(path: &Path, member: ZipMember, name: &str) -> Result<Reader, ArchiveError> {
    use std::io::{Seek, SeekFrom};
    let bad = |msg: &str| ArchiveError::Zip(name.to_string(), msg.to_string());
    if member.encrypted {
        return Err(bad("encrypted entries are not supported"));
    }
    let mut file = File::open(path).map_err(|e| ArchiveError::Io(name.to_string(), e))?;
    file.seek(SeekFrom::Start(member.data_start))
        .map_err(|e| ArchiveError::Io(name.to_string(), e))?;
    let data = io::BufReader::new(file).take(member.compressed_size);
    let content: Reader = match member.method {
        zip::CompressionMethod::Deflated => Box::new(flate2::read::DeflateDecoder::new(data)),
        zip::CompressionMethod::Stored => Box::new(data),
        m => {
            return Err(bad(&format!(
                "compression method {m} is not supported (only deflate and stored)"
            )))
        }
    };
    decompress(content, name)
}

/// `reader` decompressed: gzip and zip are recognised by their first bytes, which stay part
/// of the stream (a pipe is read once); of a zip, the first file entry is streamed. Anything
/// else is handed back as it is. `name` names the input in errors.
pub fn decompress(reader: Reader, name: &str) -> Result<Reader, ArchiveError> {
    let peeked = Peeked::new(reader, 4).map_err(|e| match e {
        // EISDIR: a directory given as stdin or raced in after the metadata check.
        _ if e.kind() == io::ErrorKind::IsADirectory => ArchiveError::IsDirectory(name.to_string()),
        _ => ArchiveError::Io(name.to_string(), e),
    })?;
    if peeked.is_gzip() {
        return Ok(Box::new(flate2::read::MultiGzDecoder::new(peeked)));
    }
    if peeked.head() == b"PK\x03\x04" {
        return open_zip_entry(io::BufReader::new(peeked), name);
    }
    Ok(Box::new(peeked))
}

/// Streams the first file entry of a zip archive (GC logs are zipped one per archive).
fn open_zip_entry(
    mut r: io::BufReader<Peeked<Reader>>,
    name: &str,
) -> Result<Reader, ArchiveError> {
    let bad = |msg: &str| ArchiveError::Zip(name.to_string(), msg.to_string());
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

    /// A zip of 100 entries that all name one deflated stream of 64 MiB of zeros (a local
    /// header written once, its central-directory record repeated under new names).
    fn overlapping_zip(path: &Path) {
        use std::io::Write;
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        zip.start_file("m00.jfr", options).unwrap();
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..64 {
            zip.write_all(&zeros).unwrap();
        }
        let bytes = zip.finish().unwrap().into_inner();
        let le = |at: usize, n: usize| {
            bytes[at..at + n]
                .iter()
                .rev()
                .fold(0usize, |v, b| v << 8 | *b as usize)
        };
        let eocd = bytes.len() - 22;
        let (cd_size, cd_start) = (le(eocd + 12, 4), le(eocd + 16, 4));
        let record = &bytes[cd_start..cd_start + cd_size];
        let mut out = bytes[..cd_start].to_vec();
        for i in 0..100u32 {
            let mut copy = record.to_vec();
            copy[46..53].copy_from_slice(format!("m{i:02}.jfr").as_bytes());
            out.extend(copy);
        }
        let mut end = bytes[eocd..].to_vec();
        end[8..10].copy_from_slice(&100u16.to_le_bytes());
        end[10..12].copy_from_slice(&100u16.to_le_bytes());
        end[12..16].copy_from_slice(&(100 * cd_size as u32).to_le_bytes());
        out.extend(end);
        std::fs::write(path, out).unwrap();
    }

    #[test]
    fn a_zip_whose_entries_overlap_is_refused_before_any_is_read() {
        let dir = std::env::temp_dir().join(format!("pauselab-bomb-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bomb = dir.join("bomb.zip");
        overlapping_zip(&bomb);
        assert!(std::fs::metadata(&bomb).unwrap().len() < 1 << 20);
        let error = match zip_members(&bomb) {
            Ok(members) => panic!("{:?}", members.map(|m| m.len())),
            Err(e) => e.to_string(),
        };
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            error.contains("bomb.zip") && error.contains("entries m00.jfr and m01.jfr overlap"),
            "{error}"
        );
        assert_eq!(error.lines().count(), 1, "{error}");
    }
}
