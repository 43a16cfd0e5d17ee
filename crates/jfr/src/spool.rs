//! Copying a recording out of a stream (a gzip or zip decompressor) into a seekable file,
//! checking each chunk header as it passes: the reader seeks, a decompressor cannot, and a
//! compressed input can expand a thousandfold, so nothing is copied past what the chunk
//! headers announce.

use std::io::{self, Read, Write};

use crate::header::{Header, HEADER_SIZE};

/// What [`spool`] copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spooled {
    /// The stream up to its end, or up to and including a chunk header the reader refuses
    /// (no `FLR` magic, an unknown version, inconsistent sizes): the reader then names what
    /// is wrong, as it would for the same bytes in a file. Holds the bytes written.
    Complete(u64),
    /// A chunk header announces more than the limit in all: nothing past that header was
    /// copied.
    OverLimit,
}

/// Copies the recording `input` holds into `out`, at most `limit` bytes. Each chunk's
/// header is read and checked before its body is copied; the copy stops after a header the
/// reader would refuse (so garbage or zeros after the first 68 bytes are never written) and
/// before a chunk that would end past `limit`.
pub fn spool(mut input: impl Read, mut out: impl Write, limit: u64) -> io::Result<Spooled> {
    let mut buf = vec![0u8; 64 << 10];
    let mut written = 0u64;
    let mut next_header = 0u64;
    loop {
        if written == next_header {
            let mut raw = [0u8; HEADER_SIZE as usize];
            let got = read_up_to(&mut input, &mut raw)?;
            out.write_all(&raw[..got])?;
            written += got as u64;
            if got < raw.len() {
                return Ok(Spooled::Complete(written));
            }
            match Header::parse(&raw) {
                Ok(header) if header.compressed_ints => {
                    match next_header.checked_add(header.size) {
                        Some(end) if end <= limit => next_header = end,
                        _ => return Ok(Spooled::OverLimit),
                    }
                }
                _ => return Ok(Spooled::Complete(written)),
            }
            continue;
        }
        let want = buf.len().min((next_header - written) as usize);
        let n = match input.read(&mut buf[..want]) {
            Ok(0) => return Ok(Spooled::Complete(written)),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        out.write_all(&buf[..n])?;
        written += n as u64;
    }
}

/// Fills `buf` from `input`, fewer bytes only at the end of the input.
fn read_up_to(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::test_chunk as chunk;

    #[test]
    fn zeros_stop_after_the_first_header() {
        let zeros = io::repeat(0).take(1 << 30);
        let mut out = Vec::new();
        assert_eq!(
            spool(zeros, &mut out, u64::MAX).unwrap(),
            Spooled::Complete(HEADER_SIZE)
        );
        assert_eq!(out.len() as u64, HEADER_SIZE);
    }

    #[test]
    fn chunks_are_copied_whole_and_garbage_after_them_is_not() {
        let mut input = chunk(100);
        input.extend(chunk(200));
        let good = input.clone();
        input.extend(vec![0u8; 1 << 20]);
        let mut out = Vec::new();
        assert_eq!(
            spool(&input[..], &mut out, u64::MAX).unwrap(),
            Spooled::Complete(300 + HEADER_SIZE)
        );
        assert_eq!(&out[..300], &good[..]);
        // Cut inside a chunk: copied as it is, for the reader to report.
        let mut out = Vec::new();
        assert_eq!(
            spool(&good[..150], &mut out, u64::MAX).unwrap(),
            Spooled::Complete(150)
        );
        assert_eq!(out, &good[..150]);
    }

    #[test]
    fn a_chunk_ending_past_the_limit_is_not_copied() {
        let mut input = chunk(100);
        input.extend(chunk(200));
        let mut out = Vec::new();
        assert_eq!(
            spool(&input[..], &mut out, 299).unwrap(),
            Spooled::OverLimit
        );
        assert_eq!(out.len() as u64, 100 + HEADER_SIZE);
        // A header claiming a terabyte over a stream of zeros: refused at once.
        let mut huge = chunk(HEADER_SIZE + 8);
        huge[8..16].copy_from_slice(&(1u64 << 40).to_be_bytes());
        let mut out = Vec::new();
        let zeros = huge.chain(io::repeat(0));
        assert_eq!(spool(zeros, &mut out, 4 << 30).unwrap(), Spooled::OverLimit);
        assert_eq!(out.len() as u64, HEADER_SIZE);
    }
}
