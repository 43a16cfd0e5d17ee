//! Regions built in memory for tests, laid out as HotSpot lays them out.

use crate::format::Snapshot;

/// A counter's value in a test region.
pub(crate) enum TestValue<'a> {
    /// A variable long counter (units: events).
    Long(i64),
    /// A constant string counter.
    Str(&'a str),
}

/// A version 2.0 little-endian region holding `counters` in order (20-byte entry header,
/// name, value aligned to 8).
pub(crate) fn test_region(counters: &[(&str, TestValue)]) -> Snapshot {
    let mut entries = Vec::new();
    for (name, value) in counters {
        let data_offset = (20 + name.len() + 1).div_ceil(8) * 8;
        let (data, vector, kind): (Vec<u8>, usize, [u8; 4]) = match value {
            // Type long, flags, units events, variability variable.
            TestValue::Long(v) => (v.to_le_bytes().to_vec(), 0, [b'J', 1, 4, 3]),
            // Type byte vector, flags, units string, variability constant.
            TestValue::Str(text) => {
                let mut bytes = text.as_bytes().to_vec();
                bytes.push(0);
                let len = bytes.len();
                (bytes, len, [b'B', 1, 5, 1])
            }
        };
        let length = (data_offset + data.len()).div_ceil(8) * 8;
        let start = entries.len();
        entries.extend_from_slice(&(length as i32).to_le_bytes());
        entries.extend_from_slice(&20i32.to_le_bytes());
        entries.extend_from_slice(&(vector as i32).to_le_bytes());
        entries.extend_from_slice(&kind);
        entries.extend_from_slice(&(data_offset as i32).to_le_bytes());
        entries.extend_from_slice(name.as_bytes());
        entries.resize(start + data_offset, 0);
        entries.extend_from_slice(&data);
        entries.resize(start + length, 0);
    }
    let mut buf = vec![0xCA, 0xFE, 0xC0, 0xC0, 1, 2, 0, 1];
    buf.extend_from_slice(&((32 + entries.len()) as i32).to_le_bytes());
    buf.extend_from_slice(&0i32.to_le_bytes());
    buf.extend_from_slice(&1i64.to_le_bytes());
    buf.extend_from_slice(&32i32.to_le_bytes());
    buf.extend_from_slice(&(counters.len() as i32).to_le_bytes());
    buf.extend_from_slice(&entries);
    let capacity = buf.len();
    Snapshot::parse(buf, capacity, "test").unwrap()
}
