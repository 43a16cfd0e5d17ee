//! JDK Flight Recorder recordings (`.jfr`, JDK 11 to 25) into GC pauses, safepoints,
//! allocation stalls, heap and CPU figures.
//!
//! pauselab reads the chunk format itself rather than using the `jfrs` crate: jfrs sizes
//! buffers from untrusted lengths (`Vec::with_capacity` of a count read from the file) and
//! reads whole chunks into memory, and recordings come from untrusted places. Here every
//! length is checked against the bytes left before anything is allocated, constant pools
//! and metadata are capped, and chunks are read one at a time, so memory stays bounded on
//! any input and no input panics.
//!
//! - [`Recording`]: opens a file and hands out its chunks' events in time order, its
//!   chunks read on one thread or several;
//! - [`Assembler`]: joins the events of one GC pause or one safepoint into [`Item`]s;
//! - [`Extras`]: allocation stalls, heap before/after, CPU load of the recording;
//! - [`spool`]: copies a recording out of a decompressor, checking chunk headers as they
//!   pass;
//! - `find`: which inputs are recordings ([`is_recording`], [`recordings`]): files, gzip and
//!   zip archives, JFR repository directories;
//! - `feed`: [`read_recordings`] hands every item to a [`RecordSink`] as the record a GC
//!   log line of the same event would give (the analysis reads both alike).
//!
//! [`RecordSink`]: pauselab_pause::RecordSink

#![deny(missing_docs)]

mod assemble;
mod chunk;
mod cursor;
mod event;
mod feed;
mod find;
mod header;
mod jvms;
mod metadata;
mod parallel;
mod pools;
mod source;
mod spool;

use std::fs::File;
use std::io;
use std::ops::ControlFlow;
use std::path::Path;

pub use assemble::{
    Assembler, CpuLoadSummary, Extras, GcPause, HeapChange, HeapSummary, Item, PageTypeCount,
    PhysicalMemorySummary, Safepoint, StallSummary,
};
pub use event::{Event, EventData};
pub use feed::{read_recordings, read_recordings_with, RecordingExtras};
pub use find::{
    is_recording, max_decompressed, recordings, DEFAULT_MAX_DECOMPRESSED, MAX_DECOMPRESSED_ENV,
    MAX_REPOSITORY_CHUNKS,
};
pub use jvms::{group_recordings_by_jvm, RecordingsOfJvm};
pub use source::ReadAt;
pub use spool::{spool, Spooled};

use chunk::Scratch;
use header::{Header, HEADER_SIZE, MAGIC};
use source::ChunkError;

/// Why a recording could not be read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be opened or read.
    #[error("{0}: {1}")]
    Io(String, io::Error),
    /// The file does not start like a recording.
    #[error("{0}: not a JFR recording (no FLR header); record with -XX:StartFlightRecording:filename=rec.jfr")]
    NotARecording(String),
    /// A chunk's bytes do not follow the format.
    #[error("{file}: chunk {chunk} at byte {offset}: {problem}")]
    Malformed {
        /// The file.
        file: String,
        /// 1-based chunk number.
        chunk: u64,
        /// Byte offset of the chunk in the file.
        offset: u64,
        /// What is wrong.
        problem: Malformed,
    },
    /// Recordings given with GC logs: a recording and the GC log of the same JVM hold the
    /// same pauses.
    #[error("{recording} is a JFR recording and {log} a GC log: analyze them separately (a recording and the GC log of the same JVM hold the same pauses)")]
    MixedWithLogs {
        /// The first recording.
        recording: String,
        /// The first GC log.
        log: String,
    },
    /// A FIFO or a device: the reader seeks.
    #[error("{0}: not a regular file; a recording is read with seeks, so save it to a file first")]
    NotRegular(String),
    /// A directory that is not the repository of one JVM (the directory, why).
    #[error("{0}: {1}")]
    Repository(String, String),
    /// `$PAUSELAB_MAX_DECOMPRESSED` is not a size.
    #[error("{0}")]
    DecompressedLimit(String),
    /// A gzip or zip file that cannot be read.
    #[error(transparent)]
    Archive(#[from] pauselab_pause::archive::ArchiveError),
    /// No temporary file for a compressed recording's copy.
    #[error(
        "a temporary file for the decompressed recording (set TMPDIR to a directory with room)"
    )]
    TemporaryFile(#[source] io::Error),
    /// Decompressing a recording failed.
    #[error("{0}: decompressing the recording")]
    Decompressing(String, #[source] io::Error),
    /// A compressed recording larger than the limit ([`max_decompressed`]).
    #[error("{file}: decompresses to more than {limit}, the limit for a compressed recording ({MAX_DECOMPRESSED_ENV}); decompress it to a file and give that, or raise the limit")]
    OverLimit {
        /// The recording.
        file: String,
        /// The limit.
        limit: pauselab_pause::units::ByteSize,
    },
}

/// What is wrong with a chunk's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    /// The bytes end inside a value, an event or the chunk.
    #[error("cut off (the file is truncated, or the JVM was still writing it)")]
    Truncated,
    /// Wrong magic bytes.
    #[error("no FLR magic where a chunk should start")]
    Magic,
    /// A format version this reader does not know.
    #[error("format version {0}.{1} is not supported (JDK 11 to 25 write 2.0 and 2.1)")]
    Version(u16, u16),
    /// Chunk format 1.x: a JDK 9 or 10 recording, events named `com.oracle.jdk.*`.
    #[error("format version {0}.{1} is a JDK 9 or 10 recording (events com.oracle.jdk.*), which pauselab does not read; record on JDK 11 or later (format 2.x), or analyze that JVM's GC log")]
    Jdk9Version(u16, u16),
    /// Inconsistent header fields.
    #[error("inconsistent chunk header (size, metadata offset or tick frequency)")]
    Header,
    /// Integers not compressed (JDK 9 and 10 recordings).
    #[error("uncompressed integers (a JDK 9 or 10 recording) are not supported")]
    Uncompressed,
    /// A length larger than the bytes left.
    #[error("a length larger than the data holding it")]
    Length,
    /// An unknown string encoding byte.
    #[error("unknown string encoding")]
    StringEncoding,
    /// An event size that does not fit the chunk.
    #[error("event at chunk byte {0} has a size outside the chunk")]
    EventSize(u64),
    /// The metadata event is missing or inconsistent.
    #[error("metadata: {0}")]
    Metadata(&'static str),
}

/// The events of one chunk, in start-time order.
#[derive(Debug)]
pub struct Chunk {
    /// Chunk start, ns since the Unix epoch.
    pub start_epoch_ns: i64,
    /// Chunk duration, ns.
    pub duration_ns: u64,
    /// The events read, sorted by start.
    pub events: Vec<Event>,
    /// Limits that dropped data in this chunk (`constant pool`, `events`): names can show as
    /// unresolved or events be missing; worth a warning.
    pub limits_hit: Vec<&'static str>,
}

/// A recording file, read chunk by chunk, on one thread ([`Recording::next_chunk`]) or on
/// several ([`Recording::each_chunk`]).
pub struct Recording<R> {
    input: R,
    name: String,
    len: u64,
    /// Where the next chunk's header is.
    offset: u64,
    chunk: u64,
    scratch: Scratch,
}

impl Recording<File> {
    /// Opens `path`; fails when it does not start with a chunk header.
    pub fn open(path: &Path) -> Result<Self, Error> {
        let name = path.display().to_string();
        let file = File::open(path).map_err(|e| Error::Io(name.clone(), e))?;
        Recording::new(file, name)
    }
}

/// A chunk whose header was read, to be read whole.
#[derive(Clone, Copy)]
struct ChunkAt {
    /// 1-based chunk number.
    number: u64,
    offset: u64,
    header: Header,
}

impl<R: ReadAt> Recording<R> {
    /// Reads a recording from `input`; `name` names it in errors.
    pub fn new(input: R, name: String) -> Result<Self, Error> {
        let len = input.size().map_err(|e| Error::Io(name.clone(), e))?;
        let mut magic = [0u8; 4];
        if source::read_exact_at(&input, &mut magic, 0).is_err() || &magic != MAGIC {
            return Err(Error::NotARecording(name));
        }
        if len < HEADER_SIZE {
            return Err(Error::Malformed {
                file: name,
                chunk: 1,
                offset: 0,
                problem: Malformed::Truncated,
            });
        }
        Ok(Recording {
            input,
            name,
            len,
            offset: 0,
            chunk: 0,
            scratch: Scratch::default(),
        })
    }

    /// Whether `bytes` (the start of a file) look like a recording.
    pub fn sniff(bytes: &[u8]) -> bool {
        bytes.starts_with(MAGIC)
    }

    /// The next chunk, or `None` after the last one.
    pub fn next_chunk(&mut self) -> Result<Option<Chunk>, Error> {
        if self.offset >= self.len {
            return Ok(None);
        }
        self.chunk += 1;
        let at = chunk_header(
            &self.input,
            &self.name,
            self.len,
            &mut self.offset,
            self.chunk,
        )?;
        read_whole(&self.input, &self.name, at, &mut self.scratch).map(Some)
    }

    /// Hands `each` every chunk as [`Recording::next_chunk`] gives them, in the same order,
    /// with its number, until the last one, an error (handed to `each` too) or `each`
    /// breaks. Up to `threads` threads read chunks at once, a few chunks ahead of `each`,
    /// so the result is the same whatever their number.
    pub fn each_chunk(
        &mut self,
        threads: usize,
        mut each: impl FnMut(u64, Result<Chunk, Error>) -> ControlFlow<()>,
    ) {
        if threads <= 1 {
            loop {
                match self.next_chunk() {
                    Ok(None) => return,
                    Ok(Some(chunk)) => {
                        if each(self.chunk, Ok(chunk)).is_break() {
                            return;
                        }
                    }
                    Err(e) => {
                        let _ = each(self.chunk, Err(e));
                        return;
                    }
                }
            }
        }
        parallel::each_chunk(self, threads, each);
    }

    /// Chunks read so far.
    pub fn chunks_read(&self) -> u64 {
        self.chunk
    }

    /// Bytes of the recording.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the recording has no bytes (never true once opened).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Reads and checks the header of chunk `number` at `offset` of `input` (`len` bytes),
/// and moves `offset` past the chunk.
fn chunk_header<R: ReadAt + ?Sized>(
    input: &R,
    name: &str,
    len: u64,
    offset: &mut u64,
    number: u64,
) -> Result<ChunkAt, Error> {
    let mut raw = [0u8; HEADER_SIZE as usize];
    let malformed = |problem| Error::Malformed {
        file: name.to_string(),
        chunk: number,
        offset: *offset,
        problem,
    };
    let header = match source::read_exact_at(input, &mut raw, *offset) {
        Ok(()) => Header::parse(&raw).map_err(malformed)?,
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
            return Err(malformed(Malformed::Truncated))
        }
        Err(e) => return Err(Error::Io(name.to_string(), e)),
    };
    if !header.compressed_ints {
        return Err(malformed(Malformed::Uncompressed));
    }
    if header.size > len - *offset {
        return Err(malformed(Malformed::Truncated));
    }
    let at = ChunkAt {
        number,
        offset: *offset,
        header,
    };
    *offset += header.size;
    Ok(at)
}

/// Sorts a chunk's events by start, equal starts in the order they were read (as a stable
/// sort keeps them): the (start, index) pairs are sorted and each event is moved once. An
/// event is a hundred bytes, and a stable sort of the events themselves moved each of them
/// many times (a tenth of the instructions of reading a recording).
fn sort_by_start(events: &mut Vec<Event>) {
    if events.is_sorted_by_key(|e| e.start_epoch_ns) {
        return;
    }
    let mut order: Vec<(i64, usize)> = events
        .iter()
        .enumerate()
        .map(|(index, e)| (e.start_epoch_ns, index))
        .collect();
    // The pairs are distinct, so an unstable sort gives the stable order.
    order.sort_unstable();
    let mut slots: Vec<Option<Event>> = std::mem::take(events).into_iter().map(Some).collect();
    events.extend(
        order
            .into_iter()
            .filter_map(|(_, index)| slots[index].take()),
    );
}

/// Reads the chunk a header was read of: its events, sorted by start.
fn read_whole<R: ReadAt + ?Sized>(
    input: &R,
    name: &str,
    at: ChunkAt,
    scratch: &mut Scratch,
) -> Result<Chunk, Error> {
    let read = chunk::read_chunk(input, at.offset, at.header, scratch).map_err(|e| match e {
        ChunkError::Io(e) => Error::Io(name.to_string(), e),
        ChunkError::Malformed(problem) => Error::Malformed {
            file: name.to_string(),
            chunk: at.number,
            offset: at.offset,
            problem,
        },
    })?;
    let mut events = read.events;
    sort_by_start(&mut events);
    Ok(Chunk {
        start_epoch_ns: read.header.start_nanos,
        duration_ns: read.header.duration_nanos.max(0) as u64,
        events,
        limits_hit: read.limits_hit,
    })
}
