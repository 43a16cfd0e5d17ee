//! A chunk's header: where its metadata is, its clock, its size. Read by the chunk reader,
//! by events (their times) and by the spooler (checked before a chunk is copied).

use crate::Malformed;

/// The bytes every chunk starts with.
pub(crate) const MAGIC: &[u8; 4] = b"FLR\0";
/// A chunk header's size in bytes.
pub(crate) const HEADER_SIZE: u64 = 68;

/// A chunk's header, checked.
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

#[cfg(test)]
/// For tests: a chunk of `size` bytes: a valid version 2.0 header, then filler.
pub(crate) fn test_chunk(size: u64) -> Vec<u8> {
    let mut bytes = b"FLR\0".to_vec();
    bytes.extend(2u16.to_be_bytes());
    bytes.extend(0u16.to_be_bytes());
    bytes.extend(size.to_be_bytes()); // chunk size
    bytes.extend(0u64.to_be_bytes()); // constant pool offset
    bytes.extend(HEADER_SIZE.to_be_bytes()); // metadata offset
    bytes.extend(0u64.to_be_bytes()); // start, ns
    bytes.extend(0u64.to_be_bytes()); // duration, ns
    bytes.extend(0u64.to_be_bytes()); // start, ticks
    bytes.extend(1_000_000_000u64.to_be_bytes()); // ticks per second
    bytes.extend(1u32.to_be_bytes()); // flags: compressed integers
    assert_eq!(bytes.len() as u64, HEADER_SIZE);
    bytes.resize(size as usize, 7);
    bytes
}
