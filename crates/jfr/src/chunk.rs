//! Chunks: the metadata, the constant pools and the events a chunk holds.
//! A chunk is read in two steps: its metadata first (the header says where), then its
//! events in order, skipping by size every event type that is not read.

use std::io::{self, Read, Seek, SeekFrom};

use crate::cursor::Cursor;
use crate::event::{Decoder, Event};
use crate::header::{Header, HEADER_SIZE};
use crate::metadata::Metadata;
use crate::pools::{read_checkpoint, Pools};
use crate::Malformed;

const EVENT_METADATA: u64 = 0;
const EVENT_CHECKPOINT: u64 = 1;

/// The metadata event of a JDK recording is tens of KiB; far larger is not a recording.
pub(crate) const MAX_METADATA_BYTES: u64 = 16 << 20;
/// Constant pools hold stack traces and can grow large on long profiling chunks; pools
/// larger than this are skipped (names they hold show as unresolved) to bound memory.
pub(crate) const MAX_CHECKPOINT_BYTES: u64 = 24 << 20;
/// An event of a type that is read; the JDK's are under 1 KiB.
const MAX_EVENT_BYTES: u64 = 1 << 20;
/// Events kept per chunk before they are sorted and handed out.
pub(crate) const MAX_EVENTS_PER_CHUNK: usize = 2_000_000;

/// What reading one chunk gave.
pub(crate) struct ChunkRead {
    pub(crate) header: Header,
    pub(crate) events: Vec<Event>,
    /// Constant pools too large to read, events beyond the per-chunk cap.
    pub(crate) limits_hit: Vec<&'static str>,
}

/// Reads the chunk starting at `offset` of `input`, whose `size` the caller checked
/// against the file length.
pub(crate) fn read_chunk<R: Read + Seek>(
    input: &mut R,
    offset: u64,
    header: Header,
    buf: &mut Vec<u8>,
) -> Result<ChunkRead, ChunkError> {
    // Metadata first: events can only be decoded with it.
    input.seek(SeekFrom::Start(offset + header.metadata_offset))?;
    let (kind, body_len) = event_header(input)?;
    if kind != EVENT_METADATA {
        return Err(Malformed::Metadata("the header's metadata offset points elsewhere").into());
    }
    if body_len > MAX_METADATA_BYTES || header.metadata_offset + body_len > header.size {
        return Err(Malformed::Metadata("larger than the chunk or 16 MiB").into());
    }
    read_body(input, body_len, buf)?;
    let meta = Metadata::parse(&mut Cursor::new(buf, header.compressed_ints))?;
    let decoder = Decoder::new(&meta);

    let mut pools = Pools::default();
    let mut limits_hit = Vec::new();
    let mut raw = Vec::new();
    let mut pos = HEADER_SIZE;
    input.seek(SeekFrom::Start(offset + pos))?;
    while pos < header.size {
        let (size, size_len) = varint_from(input)?;
        let (type_id, id_len) = varint_from(input)?;
        let head = size_len + id_len;
        if size < head || size > header.size - pos {
            return Err(Malformed::EventSize(pos).into());
        }
        let body_len = size - head;
        let wanted = type_id == EVENT_CHECKPOINT || decoder.reads(type_id);
        let cap = if type_id == EVENT_CHECKPOINT {
            MAX_CHECKPOINT_BYTES
        } else {
            MAX_EVENT_BYTES
        };
        if wanted && body_len <= cap {
            read_body(input, body_len, buf)?;
            let mut c = Cursor::new(buf, header.compressed_ints);
            if type_id == EVENT_CHECKPOINT {
                read_checkpoint(&mut c, &meta, &mut pools)?;
            } else if raw.len() < MAX_EVENTS_PER_CHUNK {
                raw.push(decoder.decode(type_id, &mut c)?);
            } else {
                note_limit(&mut limits_hit, "events");
            }
        } else {
            if wanted {
                let what = if type_id == EVENT_CHECKPOINT {
                    "constant pool"
                } else {
                    "events"
                };
                note_limit(&mut limits_hit, what);
            }
            skip(input, body_len)?;
        }
        pos += size;
    }
    if pools.dropped {
        note_limit(&mut limits_hit, "constant pool");
    }
    let events = raw.into_iter().map(|r| r.finish(&header, &pools)).collect();
    Ok(ChunkRead {
        header,
        events,
        limits_hit,
    })
}

fn note_limit(limits_hit: &mut Vec<&'static str>, what: &'static str) {
    if !limits_hit.contains(&what) {
        limits_hit.push(what);
    }
}

/// Why a chunk could not be read: the input failed, or its bytes are not a recording.
#[derive(Debug)]
pub(crate) enum ChunkError {
    Io(io::Error),
    Malformed(Malformed),
}

impl From<io::Error> for ChunkError {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            ChunkError::Malformed(Malformed::Truncated)
        } else {
            ChunkError::Io(e)
        }
    }
}

impl From<Malformed> for ChunkError {
    fn from(e: Malformed) -> Self {
        ChunkError::Malformed(e)
    }
}

fn event_header<R: Read>(input: &mut R) -> Result<(u64, u64), ChunkError> {
    let (size, a) = varint_from(input)?;
    let (kind, b) = varint_from(input)?;
    if size < a + b {
        return Err(Malformed::EventSize(0).into());
    }
    Ok((kind, size - a - b))
}

/// A varint straight from the input (event sizes and type ids); returns the value and
/// how many bytes it took.
fn varint_from<R: Read>(input: &mut R) -> Result<(u64, u64), ChunkError> {
    let mut byte = [0u8; 1];
    let mut value = 0u64;
    for i in 0..8u64 {
        input.read_exact(&mut byte)?;
        value |= u64::from(byte[0] & 0x7f) << (7 * i);
        if byte[0] & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    input.read_exact(&mut byte)?;
    Ok((value | u64::from(byte[0]) << 56, 9))
}

fn read_body<R: Read>(input: &mut R, len: u64, buf: &mut Vec<u8>) -> Result<(), ChunkError> {
    buf.clear();
    // `len` is bounded by the caller's caps, so this never allocates from a hostile length.
    let got = input.take(len).read_to_end(buf)?;
    if got as u64 != len {
        return Err(Malformed::Truncated.into());
    }
    Ok(())
}

fn skip<R: Read + Seek>(input: &mut R, len: u64) -> Result<(), ChunkError> {
    // Relative: a buffered reader keeps its buffer when the target is inside it.
    input.seek_relative(i64::try_from(len).map_err(|_| Malformed::EventSize(0))?)?;
    Ok(())
}
