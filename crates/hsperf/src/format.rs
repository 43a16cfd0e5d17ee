//! The hsperfdata format (versions 2.0 and 1.0, either byte order), parsed from a private
//! copy of the region with every offset bounds-checked.
//!
//! A [`Snapshot`] owns the copied bytes and an index of the entries; [`Counter`]s borrow
//! from it, so taking a snapshot costs one copy and one pass over the entry headers.

use std::borrow::Cow;
use std::time::SystemTime;

use serde::Serialize;

use crate::error::{Error, Result};

/// First four bytes of every hsperf region (read big-endian).
pub const MAGIC: u32 = 0xCAFE_C0C0;
/// Size of the version 2.0 prologue.
pub const PROLOGUE_V2_SIZE: usize = 32;
/// Size of the version 1.0 prologue.
pub const PROLOGUE_V1_SIZE: usize = 24;
/// Offset of `mod_time_stamp` in both prologue versions.
pub(crate) const MOD_TIME_STAMP_OFFSET: usize = 16;
/// Offset of `accessible` in the prologue.
pub(crate) const ACCESSIBLE_OFFSET: usize = 7;

/// The unit of a counter (`data_units` in the entry header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Units {
    None,
    Bytes,
    Ticks,
    Events,
    String,
    Hertz,
    /// A code this reader does not know; kept so nothing is dropped silently.
    Unknown(u8),
}

impl Units {
    fn from_code(code: u8) -> Units {
        match code {
            1 => Units::None,
            2 => Units::Bytes,
            3 => Units::Ticks,
            4 => Units::Events,
            5 => Units::String,
            6 => Units::Hertz,
            other => Units::Unknown(other),
        }
    }
}

/// How a counter's value changes (`data_variability` in the entry header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Variability {
    Constant,
    Monotonic,
    Variable,
    Unknown(u8),
}

impl Variability {
    fn from_code(code: u8) -> Variability {
        match code {
            1 => Variability::Constant,
            2 => Variability::Monotonic,
            3 => Variability::Variable,
            other => Variability::Unknown(other),
        }
    }
}

/// A counter's value, borrowed from its snapshot.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value<'a> {
    /// Scalar integer types (`J`, and the rarely used `I`, `S`, `B`, `Z`, `C` scalars).
    Long(i64),
    /// Scalar `D`/`F`.
    Double(f64),
    /// A byte vector with units String, up to its first NUL.
    String(Cow<'a, str>),
    /// Any other vector, raw.
    Bytes(&'a [u8]),
}

/// One named counter of a snapshot.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Counter<'a> {
    pub name: &'a str,
    pub value: Value<'a>,
    pub units: Units,
    pub variability: Variability,
}

/// Where one counter's value lives in the region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot<'a> {
    /// The counter's name.
    pub name: &'a str,
    /// Byte offsets of its value, from the start of the region.
    pub value: std::ops::Range<usize>,
    /// Whether the JVM may change it.
    pub variability: Variability,
}

/// The prologue fields of a region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Prologue {
    pub major: u8,
    pub minor: u8,
    pub big_endian: bool,
    /// False while the JVM is still starting.
    pub accessible: bool,
    /// Bytes in use, including the prologue.
    pub used: u32,
    /// Bytes of counters that did not fit (those counters are invisible).
    pub overflow: u32,
    /// Ticks at the last structural change (an entry added).
    pub mod_time_stamp: i64,
}

#[derive(Debug, Clone)]
struct Entry {
    name: (u32, u32),
    data: (u32, u32),
    type_code: u8,
    vector: bool,
    units: Units,
    variability: Variability,
}

/// A consistent copy of one JVM's counters.
#[derive(Debug, Clone)]
pub struct Snapshot {
    buf: Vec<u8>,
    entries: Vec<Entry>,
    prologue: Prologue,
    capacity: usize,
    taken_at: SystemTime,
}

fn read_u32(b: &[u8], off: usize, big: bool) -> Option<u32> {
    let bytes: [u8; 4] = b.get(off..off.checked_add(4)?)?.try_into().ok()?;
    Some(if big {
        u32::from_be_bytes(bytes)
    } else {
        u32::from_le_bytes(bytes)
    })
}

fn read_i32(b: &[u8], off: usize, big: bool) -> Option<i32> {
    read_u32(b, off, big).map(|v| v as i32)
}

fn read_i64(b: &[u8], off: usize, big: bool) -> Option<i64> {
    let bytes: [u8; 8] = b.get(off..off.checked_add(8)?)?.try_into().ok()?;
    Some(if big {
        i64::from_be_bytes(bytes)
    } else {
        i64::from_le_bytes(bytes)
    })
}

/// Reads the prologue of a region, checking magic, byte order and version.
pub fn parse_prologue(buf: &[u8], origin: &str) -> Result<Prologue> {
    if buf.len() < PROLOGUE_V1_SIZE {
        return Err(Error::format(
            origin,
            format!("{} bytes, shorter than a prologue", buf.len()),
        ));
    }
    let magic = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
    if magic != MAGIC {
        return Err(Error::format(
            origin,
            format!("bad magic 0x{magic:08X} (expected 0xCAFEC0C0)"),
        ));
    }
    let big_endian = match buf[4] {
        0 => true,
        1 => false,
        other => return Err(Error::format(origin, format!("bad byte order {other}"))),
    };
    let (major, minor) = (buf[5], buf[6]);
    if !matches!((major, minor), (1, 0) | (2, 0)) {
        return Err(Error::format(
            origin,
            format!("unsupported version {major}.{minor} (this reader knows 1.0 and 2.0)"),
        ));
    }
    let used = read_i32(buf, 8, big_endian).unwrap_or(-1);
    let overflow = read_i32(buf, 12, big_endian).unwrap_or(-1);
    let mod_time_stamp = read_i64(buf, MOD_TIME_STAMP_OFFSET, big_endian).unwrap_or(0);
    if used < 0 || overflow < 0 {
        return Err(Error::format(
            origin,
            format!("negative used ({used}) or overflow ({overflow})"),
        ));
    }
    Ok(Prologue {
        major,
        minor,
        big_endian,
        // Version 1.0 has no accessible flag (the byte is reserved).
        accessible: major == 1 || buf[ACCESSIBLE_OFFSET] != 0,
        used: used as u32,
        overflow: overflow as u32,
        mod_time_stamp,
    })
}

impl Snapshot {
    /// Parses a private copy of a region. `capacity` is the size of the whole region (the
    /// file size or the mapped size), reported as `sun.perfdata.size`; `origin` names the
    /// pid or file in errors.
    pub fn parse(buf: Vec<u8>, capacity: usize, origin: &str) -> Result<Snapshot> {
        let mut snapshot = Snapshot {
            buf: Vec::new(),
            entries: Vec::new(),
            prologue: parse_prologue(&buf, origin)?,
            capacity,
            taken_at: SystemTime::now(),
        };
        snapshot.buf = buf;
        snapshot.index(origin)?;
        Ok(snapshot)
    }

    /// Re-parses `buf` into this snapshot, reusing its allocations.
    pub(crate) fn reparse(&mut self, capacity: usize, origin: &str) -> Result<()> {
        self.prologue = parse_prologue(&self.buf, origin)?;
        self.capacity = capacity;
        self.taken_at = SystemTime::now();
        self.index(origin)
    }

    pub(crate) fn empty() -> Snapshot {
        Snapshot {
            buf: Vec::new(),
            entries: Vec::new(),
            prologue: Prologue {
                major: 0,
                minor: 0,
                big_endian: false,
                accessible: false,
                used: 0,
                overflow: 0,
                mod_time_stamp: 0,
            },
            capacity: 0,
            taken_at: SystemTime::UNIX_EPOCH,
        }
    }

    pub(crate) fn buffer_mut(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    fn index(&mut self, origin: &str) -> Result<()> {
        self.entries.clear();
        let p = self.prologue;
        let big = p.big_endian;
        let buf = &self.buf[..];
        let end = (p.used as usize).min(buf.len());
        let (mut pos, header_len, declared) = if p.major == 2 {
            let entry_offset = read_i32(buf, 24, big).unwrap_or(-1);
            let num_entries = read_i32(buf, 28, big).unwrap_or(-1);
            if entry_offset < PROLOGUE_V2_SIZE as i32 || num_entries < 0 {
                return Err(Error::format(
                    origin,
                    format!("bad entry offset {entry_offset} or entry count {num_entries}"),
                ));
            }
            (entry_offset as usize, 20usize, Some(num_entries as usize))
        } else {
            (PROLOGUE_V1_SIZE, 16usize, None)
        };
        let bad = |what: String| Error::format(origin, what);
        while pos < end {
            if declared.is_some_and(|n| self.entries.len() >= n) {
                break;
            }
            if pos % 4 != 0 || pos + header_len > end {
                return Err(bad(format!(
                    "entry at offset {pos} is misaligned or truncated"
                )));
            }
            let entry_length = read_i32(buf, pos, big).unwrap_or(-1);
            if entry_length == 0 {
                // The JVM bumps the count before writing the header: end of data.
                break;
            }
            if entry_length < header_len as i32 || pos + entry_length as usize > end {
                return Err(bad(format!(
                    "entry at offset {pos} has length {entry_length}, beyond the {end} bytes in use"
                )));
            }
            let entry_end = pos + entry_length as usize;
            let second = read_i32(buf, pos + 4, big).unwrap_or(-1);
            let vector_length = read_i32(buf, pos + 8, big).unwrap_or(-1);
            let type_code = buf[pos + 12];
            let units = Units::from_code(buf[pos + 14]);
            let variability = Variability::from_code(buf[pos + 15]);
            if vector_length < 0 || vector_length > entry_length {
                return Err(bad(format!(
                    "entry at offset {pos} has vector length {vector_length}"
                )));
            }
            let (name_start, name_limit, data_start) = if p.major == 2 {
                let data_offset = read_i32(buf, pos + 16, big).unwrap_or(-1);
                if second < header_len as i32
                    || second >= entry_length
                    || data_offset < second
                    || data_offset >= entry_length
                {
                    return Err(bad(format!(
                        "entry at offset {pos} has name offset {second}, data offset {data_offset}"
                    )));
                }
                (
                    pos + second as usize,
                    pos + data_offset as usize,
                    pos + data_offset as usize,
                )
            } else {
                // Version 1.0: the second field is the name length including its NUL.
                if second <= 0 || second > entry_length - header_len as i32 {
                    return Err(bad(format!(
                        "entry at offset {pos} has name length {second}"
                    )));
                }
                let name_start = pos + header_len;
                let name_limit = name_start + second as usize;
                let data_start = if vector_length == 0 {
                    entry_end.saturating_sub(8).max(name_limit)
                } else {
                    name_limit
                };
                (name_start, name_limit, data_start)
            };
            let name_len = buf[name_start..name_limit]
                .iter()
                .position(|&b| b == 0)
                .ok_or_else(|| bad(format!("entry at offset {pos}: name is not terminated")))?;
            let name = &buf[name_start..name_start + name_len];
            if name.is_empty() || std::str::from_utf8(name).is_err() {
                return Err(bad(format!(
                    "entry at offset {pos}: empty or non-text name"
                )));
            }
            let data_len = if vector_length == 0 {
                scalar_size(type_code).ok_or_else(|| {
                    bad(format!(
                        "entry at offset {pos}: unknown scalar type {:?}",
                        type_code as char
                    ))
                })?
            } else {
                vector_length as usize * scalar_size(type_code).unwrap_or(1)
            };
            if data_start + data_len > entry_end {
                return Err(bad(format!(
                    "entry at offset {pos}: data runs past the entry end"
                )));
            }
            self.entries.push(Entry {
                name: (name_start as u32, (name_start + name_len) as u32),
                data: (data_start as u32, (data_start + data_len) as u32),
                type_code,
                vector: vector_length != 0,
                units,
                variability,
            });
            pos = entry_end;
        }
        Ok(())
    }

    /// The prologue fields.
    pub fn prologue(&self) -> &Prologue {
        &self.prologue
    }

    /// Size of the whole region in bytes (`-XX:PerfDataMemorySize`, 32 KiB by default).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Wall-clock time at which the region was copied.
    pub fn taken_at(&self) -> SystemTime {
        self.taken_at
    }

    /// Number of counters.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True if the region holds no counters.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// All counters, in the order the JVM created them.
    pub fn counters(&self) -> impl Iterator<Item = Counter<'_>> + '_ {
        self.entries.iter().map(|e| self.counter(e))
    }

    /// The counter with this exact name.
    pub fn get(&self, name: &str) -> Option<Counter<'_>> {
        let wanted = name.as_bytes();
        self.entries
            .iter()
            .find(|e| &self.buf[e.name.0 as usize..e.name.1 as usize] == wanted)
            .map(|e| self.counter(e))
    }

    /// The value of an integer counter.
    pub fn value_i64(&self, name: &str) -> Option<i64> {
        match self.get(name)?.value {
            Value::Long(v) => Some(v),
            _ => None,
        }
    }

    /// The value of a string counter.
    pub fn value_str(&self, name: &str) -> Option<Cow<'_, str>> {
        match self.get(name)?.value {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// `sun.os.hrt.frequency`: ticks per second of Ticks counters.
    pub fn tick_frequency(&self) -> Option<i64> {
        self.value_i64("sun.os.hrt.frequency").filter(|&f| f > 0)
    }

    /// A Ticks counter converted to seconds with `sun.os.hrt.frequency`.
    pub fn seconds(&self, name: &str) -> Option<f64> {
        Some(self.value_i64(name)? as f64 / self.tick_frequency()? as f64)
    }

    /// The bytes copied from the region, from its start to the end of the part in use:
    /// offsets into it are offsets into the region (and the file).
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Where each counter's value lives in the region, in the order the JVM created them.
    pub fn slots(&self) -> impl Iterator<Item = Slot<'_>> + '_ {
        self.entries.iter().map(|e| Slot {
            name: std::str::from_utf8(&self.buf[e.name.0 as usize..e.name.1 as usize])
                .unwrap_or_default(),
            value: e.data.0 as usize..e.data.1 as usize,
            variability: e.variability,
        })
    }

    /// The six `sun.perfdata.*` counters that `jcmd PerfCounter.print` derives from the
    /// prologue, computed the same way (they are not entries of the region).
    pub fn prologue_counters(&self) -> [Counter<'static>; 6] {
        let p = &self.prologue;
        let c = |name, v: i64, units, variability| Counter {
            name,
            value: Value::Long(v),
            units,
            variability,
        };
        [
            c(
                "sun.perfdata.majorVersion",
                p.major.into(),
                Units::None,
                Variability::Constant,
            ),
            c(
                "sun.perfdata.minorVersion",
                p.minor.into(),
                Units::None,
                Variability::Constant,
            ),
            c(
                "sun.perfdata.overflow",
                p.overflow.into(),
                Units::Bytes,
                Variability::Monotonic,
            ),
            c(
                "sun.perfdata.size",
                self.capacity as i64,
                Units::Bytes,
                Variability::Monotonic,
            ),
            c(
                "sun.perfdata.timestamp",
                p.mod_time_stamp,
                Units::Ticks,
                Variability::Monotonic,
            ),
            c(
                "sun.perfdata.used",
                p.used.into(),
                Units::Bytes,
                Variability::Monotonic,
            ),
        ]
    }

    fn counter(&self, e: &Entry) -> Counter<'_> {
        let big = self.prologue.big_endian;
        let name = std::str::from_utf8(&self.buf[e.name.0 as usize..e.name.1 as usize])
            .unwrap_or_default();
        let data = &self.buf[e.data.0 as usize..e.data.1 as usize];
        let value = if e.vector {
            if e.type_code == b'B' && e.units == Units::String {
                let len = data.iter().position(|&b| b == 0).unwrap_or(data.len());
                Value::String(String::from_utf8_lossy(&data[..len]))
            } else {
                Value::Bytes(data)
            }
        } else {
            decode_scalar(e.type_code, data, big)
        };
        Counter {
            name,
            value,
            units: e.units,
            variability: e.variability,
        }
    }
}

fn scalar_size(type_code: u8) -> Option<usize> {
    match type_code {
        b'J' | b'D' => Some(8),
        b'I' | b'F' => Some(4),
        b'S' | b'C' => Some(2),
        b'B' | b'Z' => Some(1),
        _ => None,
    }
}

fn decode_scalar(type_code: u8, d: &[u8], big: bool) -> Value<'static> {
    macro_rules! num {
        ($t:ty) => {{
            let bytes = d.try_into().unwrap_or_default();
            if big {
                <$t>::from_be_bytes(bytes)
            } else {
                <$t>::from_le_bytes(bytes)
            }
        }};
    }
    match type_code {
        b'J' => Value::Long(num!(i64)),
        b'I' => Value::Long(num!(i32).into()),
        b'S' => Value::Long(num!(i16).into()),
        b'C' => Value::Long(num!(u16).into()),
        b'B' => Value::Long(num!(i8).into()),
        b'Z' => Value::Long(i64::from(d.first().is_some_and(|&b| b != 0))),
        b'D' => Value::Double(num!(f64)),
        _ => Value::Double(num!(f32).into()),
    }
}

impl std::fmt::Display for Value<'_> {
    /// The way `jcmd PerfCounter.print` shows values: strings quoted, numbers plain.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Long(v) => write!(f, "{v}"),
            Value::Double(v) => write!(f, "{v}"),
            Value::String(s) => write!(f, "\"{s}\""),
            Value::Bytes(b) => {
                f.write_str("[")?;
                for (i, x) in b.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{x}")?;
                }
                f.write_str("]")
            }
        }
    }
}
