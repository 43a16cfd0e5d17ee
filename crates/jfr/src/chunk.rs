//! Chunks: the metadata, the constant pools and the events a chunk holds.
//! A chunk is read in two steps: its metadata first (the header says where), then its
//! events in order, skipping by size every event type that is not read.

use crate::cursor::Cursor;
use crate::event::{Decoder, Event, RawEvent};
use crate::header::{Header, HEADER_SIZE};
use crate::metadata::Metadata;
use crate::pools::{read_checkpoint, Pools};
use crate::source::{ChunkError, ReadAt, Window};
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

/// What one thread keeps from chunk to chunk: its buffers, and the last metadata parsed
/// (a JVM writes the same metadata into every chunk, so it is parsed once).
#[derive(Default)]
pub(crate) struct Scratch {
    window: Vec<u8>,
    body: Vec<u8>,
    metadata: Option<CachedMetadata>,
    /// The events read from a chunk before its constant pools are known. Kept: grown anew
    /// in every chunk, its pages were faulted in again each time (a tenth of the time of
    /// reading a recording went to the kernel's page faults).
    raw: Vec<RawEvent>,
}

/// Events a [`Scratch`] keeps room for between chunks (about 100 bytes each).
const KEPT_RAW_EVENTS: usize = 1 << 16;

/// Metadata as parsed from these bytes (the body after its start, duration and id;
/// `None`: too large to keep a copy of).
struct CachedMetadata {
    bytes: Option<Vec<u8>>,
    metadata: Metadata,
}

/// Metadata bodies kept for the next chunk; the JDK's are tens of KiB.
const MAX_CACHED_METADATA_BYTES: usize = 1 << 20;

/// What reading one chunk gave.
pub(crate) struct ChunkRead {
    pub(crate) header: Header,
    pub(crate) events: Vec<Event>,
    /// Constant pools too large to read, events beyond the per-chunk cap.
    pub(crate) limits_hit: Vec<&'static str>,
}

/// Reads the chunk starting at `offset` of `src`, whose `size` the caller checked
/// against the source's length.
pub(crate) fn read_chunk<S: ReadAt + ?Sized>(
    src: &S,
    offset: u64,
    header: Header,
    scratch: &mut Scratch,
) -> Result<ChunkRead, ChunkError> {
    let Scratch {
        window,
        body,
        metadata,
        raw,
    } = scratch;
    raw.clear();
    let mut input = Window::new(src, std::mem::take(window), offset + header.metadata_offset);
    // Metadata first: events can only be decoded with it.
    let (kind, body_len) = event_header(&mut input)?;
    if kind != EVENT_METADATA {
        return Err(Malformed::Metadata("the header's metadata offset points elsewhere").into());
    }
    if body_len > MAX_METADATA_BYTES || header.metadata_offset + body_len > header.size {
        return Err(Malformed::Metadata("larger than the chunk or 16 MiB").into());
    }
    input.read_into(body_len, body)?;
    let meta = cached_metadata(body, header.compressed_ints, metadata)?;
    let decoder = Decoder::new(meta);

    let mut pools = Pools::default();
    let mut limits_hit = Vec::new();
    let mut pos = HEADER_SIZE;
    input.seek(offset + pos);
    while pos < header.size {
        let (size, size_len) = input.varint()?;
        let (type_id, id_len) = input.varint()?;
        let head = size_len + id_len;
        if size < head || size > header.size - pos {
            return Err(Malformed::EventSize(pos).into());
        }
        let body_len = size - head;
        pos += size;
        // Most events are of types not read: skipped by their size, undecoded.
        let plan = if type_id == EVENT_CHECKPOINT {
            None
        } else {
            match decoder.plan(type_id) {
                Some(plan) => Some(plan),
                None => {
                    input.skip(body_len)?;
                    continue;
                }
            }
        };
        let cap = if plan.is_none() {
            MAX_CHECKPOINT_BYTES
        } else {
            MAX_EVENT_BYTES
        };
        if body_len > cap {
            note_limit(
                &mut limits_hit,
                if plan.is_none() {
                    "constant pool"
                } else {
                    "events"
                },
            );
            input.skip(body_len)?;
            continue;
        }
        input.read_into(body_len, body)?;
        let mut c = Cursor::new(body, header.compressed_ints);
        match plan {
            None => read_checkpoint(&mut c, meta, &mut pools)?,
            Some(_) if raw.len() >= MAX_EVENTS_PER_CHUNK => note_limit(&mut limits_hit, "events"),
            Some(plan) => raw.push(decoder.decode(plan, &mut c)?),
        }
    }
    *window = input.into_buf();
    if pools.dropped {
        note_limit(&mut limits_hit, "constant pool");
    }
    // The buffer held the largest constant pool of the chunk: do not keep it around.
    if body.capacity() > 1 << 20 {
        *body = Vec::new();
    }
    let mut events = Vec::with_capacity(raw.len());
    events.extend(raw.drain(..).map(|r| r.finish(&header, &pools)));
    if raw.capacity() > KEPT_RAW_EVENTS {
        *raw = Vec::new();
    }
    Ok(ChunkRead {
        header,
        events,
        limits_hit,
    })
}

/// The metadata of `body`, parsed, or the last one parsed when its bytes are the same.
fn cached_metadata<'c>(
    body: &[u8],
    compressed_ints: bool,
    cache: &'c mut Option<CachedMetadata>,
) -> Result<&'c Metadata, Malformed> {
    let mut c = Cursor::new(body, compressed_ints);
    Metadata::preamble(&mut c)?;
    let rest = &body[body.len() - c.remaining()..];
    if cache
        .as_ref()
        .is_some_and(|m| m.bytes.as_deref() == Some(rest))
    {
        return Ok(&cache.as_ref().expect("checked").metadata);
    }
    let metadata = Metadata::parse_classes(&mut c)?;
    let bytes = (rest.len() <= MAX_CACHED_METADATA_BYTES).then(|| rest.to_vec());
    Ok(&cache.insert(CachedMetadata { bytes, metadata }).metadata)
}

fn note_limit(limits_hit: &mut Vec<&'static str>, what: &'static str) {
    if !limits_hit.contains(&what) {
        limits_hit.push(what);
    }
}

fn event_header<S: ReadAt + ?Sized>(input: &mut Window<'_, S>) -> Result<(u64, u64), ChunkError> {
    let (size, a) = input.varint()?;
    let (kind, b) = input.varint()?;
    if size < a + b {
        return Err(Malformed::EventSize(0).into());
    }
    Ok((kind, size - a - b))
}
