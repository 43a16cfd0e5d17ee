//! Finding recordings: files (by their `FLR` magic or a `.jfr` name), gzip and zip
//! archives of them, and JFR repository directories (the chunk files a running JVM
//! writes); a compressed recording is copied once into a temporary file of capped size.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use pauselab_pause::archive::{self, display_name, ZipMember};
use pauselab_pause::units::ByteSize;

use crate::spool::{spool, Spooled};
use crate::{Error, Recording};

/// The inputs when they are JFR recordings (see [`is_recording`]), `None` when none is;
/// recordings mixed with GC logs are refused: a GC log of the same JVM would count every
/// pause twice, and of another JVM it belongs in its own report.
pub fn recordings(inputs: &[String]) -> Result<Option<Vec<String>>, Error> {
    let (jfr, logs): (Vec<&String>, Vec<&String>) = inputs.iter().partition(|n| is_recording(n));
    match (jfr.first(), logs.first()) {
        (None, _) => Ok(None),
        (Some(_), None) => Ok(Some(jfr.into_iter().cloned().collect())),
        (Some(rec), Some(log)) => Err(Error::MixedWithLogs {
            recording: rec.to_string(),
            log: log.to_string(),
        }),
    }
}

/// A JFR recording: a file by its `FLR` magic or a `.jfr` name, a compressed one
/// (`.jfr.gz`, `.jfr.zip`, a zip of `.jfr` files), or a JFR repository directory (the
/// chunk files a running JVM writes under `-XX:FlightRecorderOptions:repository=`, or
/// `/tmp/<date>_<pid>`). `-`, stdin, never is.
pub fn is_recording(name: &str) -> bool {
    if name == "-" {
        return false;
    }
    let path = Path::new(name);
    if path.is_dir() {
        // A repository of one JVM holds chunk files; the repository root, one directory
        // of them per JVM (refused with a message naming how many).
        return has_chunks(path)
            || std::fs::read_dir(path)
                .is_ok_and(|entries| entries.flatten().any(|e| has_chunks(&e.path())));
    }
    if name.ends_with(".jfr") || name.ends_with(".jfr.gz") || name.ends_with(".jfr.zip") {
        return true;
    }
    // Only a regular file is sniffed: reading from a pipe or a FIFO would consume its
    // first bytes (or wait for a writer) before the analysis reads it.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut magic = [0u8; 4];
    let head = File::open(path).and_then(|mut f| f.read_exact(&mut magic));
    if head.is_err() {
        return false;
    }
    if Recording::<File>::sniff(&magic) {
        return true;
    }
    // A gzip or zip file is a recording when what it holds starts like one.
    let packed = magic.starts_with(&[0x1f, 0x8b]) || magic == *b"PK\x03\x04";
    packed
        && packed_members(path).is_ok_and(|members| {
            members.iter().any(|one| {
                let mut head = [0u8; 4];
                one.open()
                    .is_ok_and(|mut r| r.read_exact(&mut head).is_ok())
                    && Recording::<File>::sniff(&head)
            })
        })
}

/// The most chunk files a repository directory may hold (a JVM rotates chunks at 12 MB or
/// every few minutes: days of recording).
pub const MAX_REPOSITORY_CHUNKS: usize = 100_000;

/// The most a compressed recording may decompress to, by default: the copy lands in
/// `$TMPDIR` (RAM where that is a tmpfs); a recording this large is better given as a file.
pub const DEFAULT_MAX_DECOMPRESSED: ByteSize = ByteSize(4 << 30);

/// The environment variable that sets another limit (docs/jfr.md), in the size syntax of
/// docs/units.md.
pub const MAX_DECOMPRESSED_ENV: &str = "PAUSELAB_MAX_DECOMPRESSED";

/// The most a compressed recording may decompress to: `$PAUSELAB_MAX_DECOMPRESSED`, else
/// [`DEFAULT_MAX_DECOMPRESSED`].
pub fn max_decompressed() -> Result<ByteSize, Error> {
    match std::env::var(MAX_DECOMPRESSED_ENV) {
        Ok(text) => ByteSize::parse(&text)
            .map_err(|e| Error::DecompressedLimit(format!("{MAX_DECOMPRESSED_ENV}: {e}"))),
        Err(std::env::VarError::NotPresent) => Ok(DEFAULT_MAX_DECOMPRESSED),
        Err(std::env::VarError::NotUnicode(_)) => Err(Error::DecompressedLimit(format!(
            "{MAX_DECOMPRESSED_ENV}: not a size (see docs/units.md)"
        ))),
    }
}

/// Where one recording's chunks are: a file, or the members of an archive or a repository
/// directory, in the order they were written.
pub(crate) enum Part {
    /// A recording file, read in place.
    File(PathBuf),
    /// A chunk file of a repository directory, read in place; one that is no recording
    /// (another program's `*.jfr`) is skipped with a warning, as the JVM never wrote it.
    RepositoryFile(PathBuf),
    /// A recording inside gzip or zip, copied once into an unnamed temporary file: the
    /// reader seeks between a chunk's parts, which a decompressor cannot.
    Packed(Packed),
}

/// A compressed recording: a gzip file (or a zip of one file), or one member of a zip.
pub(crate) struct Packed {
    /// As messages name it: `rec.jfr.gz`, `recordings.zip!a.jfr`.
    name: String,
    path: PathBuf,
    member: Option<ZipMember>,
}

impl Packed {
    /// Its bytes, decompressed.
    fn open(&self) -> Result<archive::Reader, Error> {
        let reader = match self.member {
            Some(member) => archive::open_zip_member(&self.path, member, &self.name)?,
            None => {
                let file = pauselab_pause::input::open_file(&self.path)
                    .map_err(|e| Error::Io(self.name.clone(), e))?;
                archive::decompress(Box::new(file), &self.name)?
            }
        };
        Ok(reader)
    }
}

/// The recordings a gzip or zip file holds: each member of a zip of several files, else
/// the file itself.
fn packed_members(path: &Path) -> Result<Vec<Packed>, Error> {
    let name = display_name(path);
    Ok(match archive::zip_members(path)? {
        Some(members) if members.len() > 1 => members
            .into_iter()
            .map(|(member_name, member)| Packed {
                name: format!("{name}!{member_name}"),
                path: path.to_path_buf(),
                member: Some(member),
            })
            .collect(),
        _ => vec![Packed {
            name,
            path: path.to_path_buf(),
            member: None,
        }],
    })
}

/// The parts of the recording named `name`.
pub(crate) fn parts_of(name: &str) -> Result<Vec<Part>, Error> {
    let path = Path::new(name);
    if path.is_dir() {
        return repository_chunks(path);
    }
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        // A FIFO or a device: opening it could wait for a writer, and the reader seeks.
        return Err(Error::NotRegular(name.to_string()));
    }
    let mut magic = [0u8; 4];
    let plain = File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|_| Recording::<File>::sniff(&magic));
    if plain || !path.exists() {
        // A missing file is reported by the reader, naming it.
        return Ok(vec![Part::File(path.to_path_buf())]);
    }
    Ok(packed_members(path)?
        .into_iter()
        .map(Part::Packed)
        .collect())
}

/// The chunk files of a JFR repository directory, oldest first (their names are the times
/// they were started, `2026_11_26_10_18_59.jfr`).
fn repository_chunks(dir: &Path) -> Result<Vec<Part>, Error> {
    let shown = || dir.display().to_string();
    let read = |e: std::io::Error| Error::Io(shown(), e);
    let mut chunks = Vec::new();
    let mut jvm_dirs = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read)? {
        let entry = entry.map_err(read)?;
        let path = entry.path();
        if path.is_dir() {
            if has_chunks(&path) {
                jvm_dirs.push(path);
            }
        } else if is_chunk_file(&path) {
            chunks.push(path);
        }
        if chunks.len() > MAX_REPOSITORY_CHUNKS {
            return Err(Error::Repository(
                shown(),
                format!("more than {MAX_REPOSITORY_CHUNKS} chunk files; name the ones to analyze"),
            ));
        }
    }
    if chunks.is_empty() {
        // The repository root: one directory per JVM.
        match jvm_dirs.len() {
            0 => return Err(Error::Repository(
                shown(),
                "a directory without .jfr files: give a recording, or the repository directory of one JVM".to_string(),
            )),
            1 => return repository_chunks(&jvm_dirs[0]),
            n => return Err(Error::Repository(
                shown(),
                format!("holds the JFR repositories of {n} JVMs, one directory each: name the one to analyze"),
            )),
        }
    }
    chunks.sort();
    Ok(chunks.into_iter().map(Part::RepositoryFile).collect())
}

/// Whether `dir` is a directory holding `.jfr` files.
fn has_chunks(dir: &Path) -> bool {
    dir.is_dir()
        && std::fs::read_dir(dir)
            .is_ok_and(|entries| entries.flatten().any(|e| is_chunk_file(&e.path())))
}

/// A regular file named `*.jfr` (a FIFO or a device of that name is left alone: opening it
/// could wait for a writer).
fn is_chunk_file(path: &Path) -> bool {
    path.extension().is_some_and(|x| x == "jfr")
        && std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// Reads one part: a file in place, a packed one through a temporary copy of at most
/// `limit` bytes, made chunk by chunk ([`spool`]: the first 68 bytes that are not a chunk
/// header end the copy).
pub(crate) fn open_part(part: &Part, limit: ByteSize) -> Result<Recording<BufReader<File>>, Error> {
    match part {
        Part::File(path) | Part::RepositoryFile(path) => Recording::open(path),
        Part::Packed(one) => {
            let reader = one.open()?;
            let mut copy = tempfile::tempfile().map_err(Error::TemporaryFile)?;
            let spooled = spool(reader, &mut copy, limit.bytes())
                .map_err(|e| Error::Decompressing(one.name.clone(), e))?;
            if spooled == Spooled::OverLimit {
                return Err(Error::OverLimit {
                    file: one.name.clone(),
                    limit,
                });
            }
            Recording::new(BufReader::with_capacity(256 << 10, copy), one.name.clone())
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::header::test_chunk;

    fn text(e: Error) -> String {
        e.to_string()
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn a_repository_root_names_its_one_jvm_and_refuses_two() {
        let root = tempfile::tempdir().unwrap();
        let jvm = root.path().join("2026_11_26_10_18_59_4242");
        std::fs::create_dir(&jvm).unwrap();
        for name in [
            "2026_11_26_10_19_30.jfr",
            "2026_11_26_10_18_59.jfr",
            "notes.txt",
        ] {
            std::fs::write(jvm.join(name), test_chunk(100)).unwrap();
        }
        let root_name = root.path().display().to_string();
        assert!(is_recording(&root_name));
        let chunks: Vec<PathBuf> = match parts_of(&root_name) {
            Ok(parts) => parts
                .into_iter()
                .map(|p| match p {
                    Part::RepositoryFile(path) => path,
                    _ => panic!("not a chunk file"),
                })
                .collect(),
            Err(e) => panic!("{e}"),
        };
        assert_eq!(
            chunks,
            [
                jvm.join("2026_11_26_10_18_59.jfr"),
                jvm.join("2026_11_26_10_19_30.jfr")
            ]
        );

        let other = root.path().join("2026_11_26_11_00_00_4343");
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join("2026_11_26_11_00_00.jfr"), test_chunk(100)).unwrap();
        let error = parts_of(&root_name).map(drop).map_err(text).unwrap_err();
        assert_eq!(
            error,
            format!("{root_name}: holds the JFR repositories of 2 JVMs, one directory each: name the one to analyze")
        );

        let empty = tempfile::tempdir().unwrap();
        let empty_name = empty.path().display().to_string();
        assert!(!is_recording(&empty_name));
        let error = parts_of(&empty_name).map(drop).map_err(text).unwrap_err();
        assert!(error.contains("a directory without .jfr files"), "{error}");
    }

    #[test]
    fn packed_files_are_recordings_by_what_they_hold_and_capped_when_copied() {
        let dir = tempfile::tempdir().unwrap();
        let path = |name: &str| dir.path().join(name).display().to_string();
        std::fs::write(path("rec.bin"), gzip(&test_chunk(4096))).unwrap();
        std::fs::write(path("log.bin"), gzip(b"[0.004s][info][gc] Using G1\n")).unwrap();
        assert!(is_recording(&path("rec.bin")));
        assert!(!is_recording(&path("log.bin")));
        assert!(!is_recording("-"));

        let parts = parts_of(&path("rec.bin")).unwrap();
        assert_eq!(parts.len(), 1);
        let copy = open_part(&parts[0], ByteSize(4096)).unwrap();
        assert_eq!(copy.len(), 4096);
        let error = open_part(&parts[0], ByteSize(4095)).map(drop).map_err(text);
        assert_eq!(
            error.unwrap_err(),
            format!("{}: decompresses to more than 4095, the limit for a compressed recording (PAUSELAB_MAX_DECOMPRESSED); decompress it to a file and give that, or raise the limit", path("rec.bin"))
        );

        // A zip of two recordings: one part each, named archive!member, in the archive's order.
        let mut zip = zip::ZipWriter::new(std::fs::File::create(path("two.zip")).unwrap());
        for member in ["b.jfr", "a.jfr"] {
            zip.start_file(member, zip::write::SimpleFileOptions::default())
                .unwrap();
            zip.write_all(&test_chunk(200)).unwrap();
        }
        zip.finish().unwrap();
        assert!(is_recording(&path("two.zip")));
        let names: Vec<String> = parts_of(&path("two.zip"))
            .unwrap()
            .iter()
            .map(|p| match p {
                Part::Packed(packed) => packed.name.clone(),
                _ => panic!("not packed"),
            })
            .collect();
        assert_eq!(
            names,
            [
                format!("{}!b.jfr", path("two.zip")),
                format!("{}!a.jfr", path("two.zip"))
            ]
        );
    }

    #[test]
    fn recordings_mixed_with_gc_logs_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let rec = dir.path().join("rec.jfr").display().to_string();
        let log = dir.path().join("gc.log").display().to_string();
        std::fs::write(&rec, test_chunk(100)).unwrap();
        std::fs::write(&log, "[0.004s][info][gc] Using G1\n").unwrap();
        assert_eq!(recordings(std::slice::from_ref(&log)).unwrap(), None);
        assert_eq!(
            recordings(std::slice::from_ref(&rec)).unwrap(),
            Some(vec![rec.clone()])
        );
        let error = recordings(&[rec.clone(), log.clone()])
            .map_err(text)
            .unwrap_err();
        assert!(
            error.starts_with(&format!(
                "{rec} is a JFR recording and {log} a GC log: analyze them separately"
            )),
            "{error}"
        );
    }
}
