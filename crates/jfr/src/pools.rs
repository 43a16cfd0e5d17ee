//! A chunk's constant pools: the texts (GC names, causes, G1 young kinds, VM operations,
//! strings) that events refer to by index. Filled by the chunk reader, read by events.

use crate::cursor::{Cursor, RawStr};
use crate::metadata::Metadata;
use crate::Malformed;

/// Texts kept from constant pools per chunk (GC names, causes, VM operations, threads,
/// strings).
const MAX_POOL_TEXTS: usize = 200_000;
/// Bytes of text kept from constant pools per chunk.
const MAX_POOL_TEXT_BYTES: usize = 16 << 20;

/// Classes whose constants are kept: the names the events read refer to.
const TEXT_POOLS: &[&str] = &[
    "java.lang.String",
    "jdk.types.GCName",
    "jdk.types.GCCause",
    "jdk.types.GCWhen",
    "jdk.types.G1YCType",
    "jdk.types.VMOperationType",
    "jdk.types.ZPageTypeType",
    // Threads, by their Java name (`javaName`; see `Metadata::constant`).
    "java.lang.Thread",
];

/// Texts of the constant pools read so far in a chunk, by (class id, constant index).
#[derive(Default)]
pub(crate) struct Pools {
    texts: foldhash::HashMap<(u64, u64), RawStr>,
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
