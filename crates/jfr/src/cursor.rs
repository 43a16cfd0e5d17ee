//! Reading the primitive encodings of a chunk from a byte slice, never past its end.

use crate::Malformed;

/// How a string value is encoded (the byte in front of every string).
const STRING_NULL: u8 = 0;
const STRING_EMPTY: u8 = 1;
const STRING_CONSTANT: u8 = 2;
const STRING_UTF8: u8 = 3;
const STRING_CHARS: u8 = 4;
const STRING_LATIN1: u8 = 5;

/// A string field as written: inline text, or an index into the chunk's string pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RawStr {
    Null,
    Text(String),
    Constant(u64),
}

pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Integers are LEB128-style varints (chunk feature bit 0; always set since JDK 11).
    compressed: bool,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8], compressed: bool) -> Self {
        Cursor {
            buf,
            pos: 0,
            compressed,
        }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(crate) fn u8(&mut self) -> Result<u8, Malformed> {
        let b = *self.buf.get(self.pos).ok_or(Malformed::Truncated)?;
        self.pos += 1;
        Ok(b)
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        if n > self.remaining() {
            return Err(Malformed::Truncated);
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn fixed(&mut self, n: usize) -> Result<u64, Malformed> {
        Ok(self
            .bytes(n)?
            .iter()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    /// A varint of up to 9 bytes: 7 bits per byte with a continuation bit, the ninth byte
    /// carrying 8 bits.
    #[inline(always)]
    pub(crate) fn varint(&mut self) -> Result<u64, Malformed> {
        // Decoded in place when the 9 bytes a varint can take are there (all but the
        // last few bytes of a buffer), byte by byte with bounds checks near its end.
        if let Some(bytes) = self.buf[self.pos..].first_chunk::<9>() {
            let (value, len) = decode_varint(bytes);
            self.pos += len;
            return Ok(value);
        }
        self.varint_near_end()
    }

    /// Reads past `count` varints without decoding them (the stack frames of a pool).
    pub(crate) fn skip_varints(&mut self, count: usize) -> Result<(), Malformed> {
        let mut pos = self.pos;
        for _ in 0..count {
            // Up to 8 bytes with the continuation bit, then one more.
            let mut len = 0;
            loop {
                let byte = *self.buf.get(pos + len).ok_or(Malformed::Truncated)?;
                len += 1;
                if byte & 0x80 == 0 || len == 9 {
                    break;
                }
            }
            pos += len;
        }
        self.pos = pos;
        Ok(())
    }

    /// Whether integers are varints (see [`Cursor::varint`]).
    pub(crate) fn compressed(&self) -> bool {
        self.compressed
    }

    #[cold]
    fn varint_near_end(&mut self) -> Result<u64, Malformed> {
        let mut value = 0u64;
        for i in 0..8 {
            let b = self.u8()?;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Ok(value | u64::from(self.u8()?) << 56)
    }

    #[inline]
    pub(crate) fn long(&mut self) -> Result<i64, Malformed> {
        if self.compressed {
            Ok(self.varint()? as i64)
        } else {
            Ok(self.fixed(8)? as i64)
        }
    }

    #[inline]
    pub(crate) fn int(&mut self) -> Result<i32, Malformed> {
        if self.compressed {
            Ok(self.varint()? as i32)
        } else {
            Ok(self.fixed(4)? as i32)
        }
    }

    #[inline]
    pub(crate) fn short(&mut self) -> Result<i16, Malformed> {
        if self.compressed {
            Ok(self.varint()? as i16)
        } else {
            Ok(self.fixed(2)? as i16)
        }
    }

    pub(crate) fn float(&mut self) -> Result<f32, Malformed> {
        Ok(f32::from_bits(self.fixed(4)? as u32))
    }

    pub(crate) fn double(&mut self) -> Result<f64, Malformed> {
        Ok(f64::from_bits(self.fixed(8)?))
    }

    /// A count of items that each take at least one byte: never more than the bytes left,
    /// so no loop or allocation runs on a hostile length.
    pub(crate) fn count(&mut self) -> Result<usize, Malformed> {
        let n = self.int()?;
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= self.remaining())
            .ok_or(Malformed::Length)
    }

    pub(crate) fn string(&mut self) -> Result<RawStr, Malformed> {
        match self.u8()? {
            STRING_NULL => Ok(RawStr::Null),
            STRING_EMPTY => Ok(RawStr::Text(String::new())),
            STRING_CONSTANT => Ok(RawStr::Constant(self.varint_or_long()?)),
            STRING_UTF8 => {
                let n = self.count()?;
                Ok(RawStr::Text(
                    String::from_utf8_lossy(self.bytes(n)?).into_owned(),
                ))
            }
            STRING_LATIN1 => {
                let n = self.count()?;
                Ok(RawStr::Text(
                    self.bytes(n)?.iter().map(|&b| char::from(b)).collect(),
                ))
            }
            STRING_CHARS => {
                let n = self.count()?;
                let mut s = String::with_capacity(n);
                for _ in 0..n {
                    let c = self.short()? as u16;
                    s.push(char::from_u32(u32::from(c)).unwrap_or('\u{fffd}'));
                }
                Ok(RawStr::Text(s))
            }
            _ => Err(Malformed::StringEncoding),
        }
    }

    /// Reads past a string without building it.
    pub(crate) fn skip_string(&mut self) -> Result<(), Malformed> {
        match self.u8()? {
            STRING_NULL | STRING_EMPTY => {}
            STRING_CONSTANT => {
                self.varint_or_long()?;
            }
            STRING_UTF8 | STRING_LATIN1 => {
                let n = self.count()?;
                self.bytes(n)?;
            }
            STRING_CHARS => {
                let n = self.count()?;
                for _ in 0..n {
                    self.short()?;
                }
            }
            _ => return Err(Malformed::StringEncoding),
        }
        Ok(())
    }

    fn varint_or_long(&mut self) -> Result<u64, Malformed> {
        Ok(self.long()? as u64)
    }
}

/// The varint at the start of `bytes` (7 bits a byte, the ninth carrying 8) and its length.
#[inline(always)]
pub(crate) fn decode_varint(bytes: &[u8; 9]) -> (u64, usize) {
    let mut value = 0u64;
    for (i, &b) in bytes[..8].iter().enumerate() {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return (value, i + 1);
        }
    }
    (value | u64::from(bytes[8]) << 56, 9)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Reading past varints ends where decoding them one by one ends, and fails where it
        /// fails (a varint cut by the end of the buffer).
        #[test]
        fn skipped_varints_end_where_decoded_ones_do(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
            count in 0usize..24,
        ) {
            let mut skipped = Cursor::new(&bytes, true);
            let mut decoded = Cursor::new(&bytes, true);
            let decoded_all = (0..count).try_for_each(|_| decoded.varint().map(drop));
            proptest::prop_assert_eq!(skipped.skip_varints(count), decoded_all);
            if decoded_all.is_ok() {
                proptest::prop_assert_eq!(skipped.remaining(), decoded.remaining());
            }
        }
    }

    #[test]
    fn varints_decode_like_the_jdk_writes_them() {
        // 300 = 0b10_0101100: low 7 bits with the continuation bit, then 2.
        assert_eq!(Cursor::new(&[0xac, 0x02], true).varint(), Ok(300));
        // A padded 4-byte size (the JDK reserves event sizes this way).
        assert_eq!(Cursor::new(&[0x85, 0x80, 0x80, 0x00], true).varint(), Ok(5));
        // Nine bytes: the last carries a full 8 bits.
        let all = [0xff; 9];
        assert_eq!(Cursor::new(&all, true).varint(), Ok(u64::MAX));
        // The same values decoded in place (9 bytes or more left) and near the end.
        let mut long = vec![0xac, 0x02];
        long.extend([0; 9]);
        assert_eq!(Cursor::new(&long, true).varint(), Ok(300));
        let mut nine = all.to_vec();
        nine.push(0);
        let mut c = Cursor::new(&nine, true);
        assert_eq!((c.varint(), c.remaining()), (Ok(u64::MAX), 1));
        assert_eq!(
            Cursor::new(&[0x80], true).varint(),
            Err(Malformed::Truncated)
        );
    }

    #[test]
    fn hostile_lengths_are_refused_before_allocating() {
        // A UTF-8 string claiming 2^31-1 bytes in a 6-byte buffer.
        let mut c = Cursor::new(&[3, 0xff, 0xff, 0xff, 0xff, 0x07], true);
        assert_eq!(c.string(), Err(Malformed::Length));
    }
}
