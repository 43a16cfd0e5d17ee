//! Chunks: the header, the metadata, the constant pools and the events a chunk holds.
//! A chunk is read in two steps: its metadata first (the header says where), then its
//! events in order, skipping by size every event type that is not read.

use std::collections::HashMap;
use std::io::{self, Read, Seek, SeekFrom};

use crate::cursor::{Cursor, RawStr};
use crate::event::{Decoder, Event};
use crate::metadata::Metadata;
use crate::Malformed;

pub(crate) const MAGIC: &[u8; 4] = b"FLR\0";
pub(crate) const HEADER_SIZE: u64 = 68;
const EVENT_METADATA: u64 = 0;
const EVENT_CHECKPOINT: u64 = 1;

/// The metadata event of a JDK recording is tens of KiB; far larger is not a recording.
pub(crate) const MAX_METADATA_BYTES: u64 = 16 << 20;
/// Constant pools hold stack traces and can grow large on long profiling chunks; pools
/// larger than this are skipped (names they hold show as unresolved) to bound memory.
pub(crate) const MAX_CHECKPOINT_BYTES: u64 = 24 << 20;
/// An event of a type that is read; the JDK's are under 1 KiB.
const MAX_EVENT_BYTES: u64 = 1 << 20;
/// Texts kept from constant pools per chunk (GC names, causes, VM operations, strings).
const MAX_POOL_TEXTS: usize = 200_000;
const MAX_POOL_TEXT_BYTES: usize = 16 << 20;
/// Events kept per chunk before they are sorted and handed out.
pub(crate) const MAX_EVENTS_PER_CHUNK: usize = 2_000_000;

/// Classes whose constants are kept: the names the events read refer to.
const TEXT_POOLS: &[&str] = &[
    "java.lang.String",
    "jdk.types.GCName",
    "jdk.types.GCCause",
    "jdk.types.GCWhen",
    "jdk.types.VMOperationType",
    "jdk.types.ZPageTypeType",
];

#[derive(Debug, Clone, Copy)]
pub(crate) struct Header {
    pub(crate) major: u16,
    pub(crate) minor: u16,
    pub(crate) size: u64,
    pub(crate) metadata_offset: u64,
    pub(crate) start_nanos: i64,
    pub(crate) duration_nanos: i64,
    pub(crate) start_ticks: i64,
    pub(crate) ticks_per_second: i64,
    pub(crate) compressed_ints: bool,
}

impl Header {
    pub(crate) fn parse(b: &[u8; HEADER_SIZE as usize]) -> Result<Header, Malformed> {
        if &b[..4] != MAGIC {
            return Err(Malformed::Magic);
        }
        let long = |at: usize| i64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"));
        let header = Header {
            major: u16::from_be_bytes([b[4], b[5]]),
            minor: u16::from_be_bytes([b[6], b[7]]),
            size: long(8) as u64,
            metadata_offset: long(24) as u64,
            start_nanos: long(32),
            duration_nanos: long(40),
            start_ticks: long(48),
            ticks_per_second: long(56),
            compressed_ints: b[67] & 1 != 0,
        };
        match header.major {
            2 => {}
            // JDK 9 and 10 name their events `com.oracle.jdk.*` and lay them out otherwise:
            // read with the `jdk.*` names, such a recording would look empty.
            1 => return Err(Malformed::Jdk9Version(header.major, header.minor)),
            _ => return Err(Malformed::Version(header.major, header.minor)),
        }
        if header.size < HEADER_SIZE
            || header.metadata_offset < HEADER_SIZE
            || header.metadata_offset >= header.size
            || header.ticks_per_second <= 0
        {
            return Err(Malformed::Header);
        }
        Ok(header)
    }

    /// Nanoseconds since the Unix epoch at `ticks`.
    pub(crate) fn epoch_ns(&self, ticks: i64) -> i64 {
        self.start_nanos
            .saturating_add(self.ticks_to_ns(i128::from(ticks) - i128::from(self.start_ticks)))
    }

    /// A tick span in nanoseconds (negative spans of a broken clock read as 0).
    pub(crate) fn span_ns(&self, ticks: i64) -> u64 {
        self.ticks_to_ns(i128::from(ticks)).max(0) as u64
    }

    fn ticks_to_ns(&self, ticks: i128) -> i64 {
        let ns = ticks * 1_000_000_000 / i128::from(self.ticks_per_second);
        ns.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }
}

/// Texts of the constant pools read so far in a chunk, by (class id, constant index).
#[derive(Default)]
pub(crate) struct Pools {
    texts: HashMap<(u64, u64), RawStr>,
    bytes: usize,
    pub(crate) dropped: bool,
    string_class: Option<u64>,
}

impl Pools {
    pub(crate) fn resolve(&self, class_id: u64, index: u64) -> Option<&str> {
        match self.texts.get(&(class_id, index))? {
            RawStr::Text(s) => Some(s),
            // A pooled name that is itself a string-pool reference.
            RawStr::Constant(i) => match self.texts.get(&(self.string_class?, *i))? {
                RawStr::Text(s) => Some(s),
                _ => None,
            },
            RawStr::Null => None,
        }
    }

    pub(crate) fn resolve_string(&self, s: &RawStr) -> Option<String> {
        match s {
            RawStr::Text(t) => Some(t.clone()),
            RawStr::Constant(i) => self.resolve(self.string_class?, *i).map(str::to_string),
            RawStr::Null => None,
        }
    }

    fn insert(&mut self, key: (u64, u64), text: RawStr) {
        let len = match &text {
            RawStr::Text(s) => s.len(),
            _ => 8,
        };
        if self.texts.len() >= MAX_POOL_TEXTS || self.bytes + len > MAX_POOL_TEXT_BYTES {
            self.dropped = true;
            return;
        }
        self.bytes += len;
        self.texts.insert(key, text);
    }
}

/// Reads a checkpoint event's body (after size and type id) into `pools`.
pub(crate) fn read_checkpoint(
    c: &mut Cursor<'_>,
    meta: &Metadata,
    pools: &mut Pools,
) -> Result<(), Malformed> {
    let _start = c.long()?;
    let _duration = c.long()?;
    let _delta_to_previous = c.long()?;
    let _checkpoint_kind = c.u8()?;
    let pool_count = c.count()?;
    for _ in 0..pool_count {
        let class = meta.class(c.long()? as u64)?;
        let keep = TEXT_POOLS.contains(&class.name.as_str());
        if keep && class.name == "java.lang.String" {
            pools.string_class = Some(class.id);
        }
        let n = c.count()?;
        for _ in 0..n {
            let index = c.long()? as u64;
            if let Some(text) = meta.constant(c, class, keep)? {
                pools.insert((class.id, index), text);
            }
        }
    }
    Ok(())
}

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
