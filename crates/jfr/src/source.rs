//! Where a recording's bytes come from: read at any offset (a file by `pread`, bytes in
//! memory), so that several threads read chunks of one recording at once, each through
//! its own [`Window`].

use std::fs::File;
use std::io;

use crate::cursor::decode_varint;
use crate::Malformed;

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

/// Bytes a recording is read from, at any offset and from several threads at once.
pub trait ReadAt: Sync {
    /// Reads into `buf` from `offset`; returns how many bytes were read (0 at the end).
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    /// How many bytes there are.
    fn size(&self) -> io::Result<u64>;
}

impl ReadAt for File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buf, offset)
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }
}

impl<T: AsRef<[u8]> + Sync> ReadAt for io::Cursor<T> {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let bytes = self.get_ref().as_ref();
        let start = usize::try_from(offset).map_or(bytes.len(), |o| o.min(bytes.len()));
        let n = buf.len().min(bytes.len() - start);
        buf[..n].copy_from_slice(&bytes[start..start + n]);
        Ok(n)
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self.get_ref().as_ref().len() as u64)
    }
}

/// Fills `buf` from `offset`; an end of the bytes before it is full is `UnexpectedEof`.
pub(crate) fn read_exact_at<S: ReadAt + ?Sized>(
    src: &S,
    mut buf: &mut [u8],
    mut offset: u64,
) -> io::Result<()> {
    while !buf.is_empty() {
        match src.read_at(buf, offset) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Bytes of a source read ahead at once.
const WINDOW_BYTES: usize = 256 << 10;

/// A read-ahead window over a [`ReadAt`] at a position of its own: event headers are
/// decoded straight from it, and skipping an event inside it costs no read.
pub(crate) struct Window<'s, S: ?Sized> {
    src: &'s S,
    buf: Vec<u8>,
    /// Source offset of `buf[0]`.
    start: u64,
    /// Position in `buf`.
    pos: usize,
    /// Bytes of `buf` holding data.
    end: usize,
}

impl<'s, S: ReadAt + ?Sized> Window<'s, S> {
    /// A window over `src` at `offset`, reading into `buf` (a previous window's, given
    /// back by [`Window::into_buf`]).
    pub(crate) fn new(src: &'s S, mut buf: Vec<u8>, offset: u64) -> Self {
        buf.resize(WINDOW_BYTES, 0);
        Window {
            src,
            buf,
            start: offset,
            pos: 0,
            end: 0,
        }
    }

    /// The buffer, for the next window.
    pub(crate) fn into_buf(self) -> Vec<u8> {
        self.buf
    }

    fn offset(&self) -> u64 {
        self.start + self.pos as u64
    }

    /// Moves to `offset`, keeping the bytes read when it is inside them.
    pub(crate) fn seek(&mut self, offset: u64) {
        match offset.checked_sub(self.start) {
            Some(at) if at <= self.end as u64 => self.pos = at as usize,
            _ => {
                self.start = offset;
                self.pos = 0;
                self.end = 0;
            }
        }
    }

    /// Moves `len` bytes on without reading them.
    pub(crate) fn skip(&mut self, len: u64) -> Result<(), ChunkError> {
        let to = self
            .offset()
            .checked_add(len)
            .ok_or(Malformed::EventSize(0))?;
        self.seek(to);
        Ok(())
    }

    /// Reads more after the bytes not consumed yet; false at the end of the source.
    fn fill(&mut self) -> io::Result<bool> {
        self.buf.copy_within(self.pos..self.end, 0);
        self.start += self.pos as u64;
        self.end -= self.pos;
        self.pos = 0;
        loop {
            match self
                .src
                .read_at(&mut self.buf[self.end..], self.start + self.end as u64)
            {
                Ok(n) => {
                    self.end += n;
                    return Ok(n > 0);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn byte(&mut self) -> Result<u8, ChunkError> {
        if self.pos == self.end && !self.fill()? {
            return Err(Malformed::Truncated.into());
        }
        let b = self.buf[self.pos];
        self.pos += 1;
        Ok(b)
    }

    /// A varint (event sizes and type ids): the value and how many bytes it took.
    #[inline(always)]
    pub(crate) fn varint(&mut self) -> Result<(u64, u64), ChunkError> {
        // Two of these per event: decoded from the buffer when all 9 bytes a varint can
        // take are in it, byte by byte (refilling) only near its end.
        if let Some(bytes) = self.buf[self.pos..self.end].first_chunk::<9>() {
            let (value, len) = decode_varint(bytes);
            self.pos += len;
            return Ok((value, len as u64));
        }
        self.varint_near_end()
    }

    #[cold]
    fn varint_near_end(&mut self) -> Result<(u64, u64), ChunkError> {
        let mut value = 0u64;
        for i in 0..8u64 {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok((value, i + 1));
            }
        }
        Ok((value | u64::from(self.byte()?) << 56, 9))
    }

    /// The next `len` bytes into `out` (`len` is bounded by the caller's caps, so this
    /// never allocates from a hostile length).
    pub(crate) fn read_into(&mut self, len: u64, out: &mut Vec<u8>) -> Result<(), ChunkError> {
        out.clear();
        let len = usize::try_from(len).map_err(|_| Malformed::Length)?;
        let buffered = len.min(self.end - self.pos);
        out.extend_from_slice(&self.buf[self.pos..self.pos + buffered]);
        self.pos += buffered;
        if buffered < len {
            // Past the window: straight from the source, and the window starts after it.
            out.resize(len, 0);
            read_exact_at(self.src, &mut out[buffered..], self.offset())?;
            let after = self.offset() + (len - buffered) as u64;
            self.seek(after);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_reads_across_its_edge_and_skips_past_it() {
        let bytes: Vec<u8> = (0..WINDOW_BYTES * 3).map(|i| (i % 100) as u8).collect();
        let src = io::Cursor::new(&bytes);
        let mut w = Window::new(&src, Vec::new(), 5);
        assert_eq!(w.varint().unwrap(), (5, 1));
        // A varint over the window's edge, read by bytes: the same as inside it.
        let mut varints = bytes.clone();
        varints[WINDOW_BYTES - 3..WINDOW_BYTES + 1].copy_from_slice(&[0xac, 0x82, 0x80, 0x00]);
        varints[..4].copy_from_slice(&[0xac, 0x82, 0x80, 0x00]);
        let varints = io::Cursor::new(&varints);
        let mut edge = Window::new(&varints, Vec::new(), 0);
        assert_eq!(edge.varint().unwrap(), (300, 4));
        edge.seek(WINDOW_BYTES as u64 - 3);
        assert_eq!(edge.varint().unwrap(), (300, 4));
        let mut out = Vec::new();
        // Across the window's end, then past the next window altogether.
        w.skip(WINDOW_BYTES as u64 - 10).unwrap();
        w.read_into(20, &mut out).unwrap();
        assert_eq!(out, bytes[WINDOW_BYTES - 4..WINDOW_BYTES + 16]);
        w.read_into(WINDOW_BYTES as u64 + 7, &mut out).unwrap();
        assert_eq!(out[..], bytes[WINDOW_BYTES + 16..2 * WINDOW_BYTES + 23]);
        assert_eq!(w.byte().unwrap(), bytes[2 * WINDOW_BYTES + 23]);
        // Backwards inside the bytes read, then beyond the end.
        w.seek(2 * WINDOW_BYTES as u64);
        assert_eq!(w.byte().unwrap(), bytes[2 * WINDOW_BYTES]);
        w.skip(u64::from(u32::MAX)).unwrap();
        assert!(matches!(
            w.byte(),
            Err(ChunkError::Malformed(Malformed::Truncated))
        ));
        assert!(matches!(
            w.read_into(1, &mut out),
            Err(ChunkError::Malformed(Malformed::Truncated))
        ));
    }
}
