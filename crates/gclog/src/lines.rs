//! Streaming line splitter: reads fixed-size blocks and hands out borrowed lines, so memory
//! stays flat whatever the size of the log and no per-line allocation happens.

use std::io::{self, Read};

const BLOCK: usize = 256 * 1024;
/// Lines longer than this are cut (the rest is skipped): a GC log line is a few hundred bytes,
/// so a longer one is binary data or a log without newlines, and must not grow memory.
pub const MAX_LINE: usize = 64 * 1024;

pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    /// Bytes of an overlong line still to skip up to its newline.
    skipping: bool,
    line_no: u64,
    bytes_read: u64,
    /// `\n` (also ending `\r\n` lines), or `\r` for a log whose lines end in a lone CR
    /// (classic Mac OS, some Windows tools), decided on the first line.
    terminator: u8,
    /// Whether the terminator is still to be decided (not when reading from the middle of
    /// a file, whose first line was read elsewhere).
    detect_terminator: bool,
    /// The `\n`s of the 64 bytes of `buf` before `ends_to`, one bit each, less those
    /// handed out: a line's end is found in a mask rather than by a search per line (one
    /// `memchr` call cost 70 instructions a line, a fifth of them setting up). Bits before
    /// `start` are stale (lines passed over) and skipped.
    ends: u64,
    ends_to: usize,
}

/// One line without its terminator (`\n`, `\r\n` or `\r`).
pub struct Line<'a> {
    pub bytes: &'a [u8],
    /// 1-based.
    pub number: u64,
    /// The line had no newline at the end of the input.
    pub unterminated: bool,
    /// The line was longer than [`MAX_LINE`] and was cut.
    pub truncated: bool,
    /// Where the line starts in the input, in bytes.
    pub offset: u64,
}

impl<R: Read> LineReader<R> {
    pub fn new(inner: R) -> Self {
        LineReader::with_buffer(inner, Vec::new(), true)
    }

    /// A reader of lines ending in `\n` that starts in the middle of a log, at the start of
    /// a line (see `crate::chunks`), in `buffer` (a previous reader's, see
    /// [`LineReader::into_buffer`]: allocating and clearing a new one costs as much as
    /// splitting a third of a chunk).
    pub fn continuing(inner: R, buffer: Vec<u8>) -> Self {
        LineReader::with_buffer(inner, buffer, false)
    }

    fn with_buffer(inner: R, mut buffer: Vec<u8>, detect_terminator: bool) -> Self {
        buffer.resize(BLOCK + MAX_LINE, 0);
        LineReader {
            inner,
            buf: buffer,
            start: 0,
            end: 0,
            eof: false,
            skipping: false,
            line_no: 0,
            bytes_read: 0,
            terminator: b'\n',
            detect_terminator,
            ends: 0,
            ends_to: 0,
        }
    }

    /// The buffer, for another reader.
    pub fn into_buffer(self) -> Vec<u8> {
        self.buf
    }

    /// Where the byte at `buf[at]` is in the input.
    fn offset_of(&self, at: usize) -> u64 {
        self.bytes_read - (self.end - at) as u64
    }

    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// The next line, or `None` at the end of the input.
    #[inline(always)]
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        // The usual case, a whole line in the buffer, inlined into the caller's loop (even
        // a long one, as a chunk's): the line is handed over in registers rather than
        // through memory.
        if self.terminator == b'\n' && !self.skipping && self.terminator_decided() {
            if let Some(line_end) = self.next_newline() {
                let line_start = self.start;
                if line_end - line_start <= MAX_LINE {
                    self.start = line_end + 1;
                    self.line_no += 1;
                    return Ok(Some(Line {
                        bytes: trim_cr(&self.buf[line_start..line_end]),
                        number: self.line_no,
                        unterminated: false,
                        truncated: false,
                        offset: self.offset_of(line_start),
                    }));
                }
            }
        }
        self.next_line_slowly()
    }

    /// Where the first `\n` at or after `start` is, from the masks of 64 bytes at a time;
    /// `None` when it is not found before the last 64 bytes of the buffer (the slow way
    /// looks there).
    #[inline(always)]
    fn next_newline(&mut self) -> Option<usize> {
        loop {
            while self.ends != 0 {
                let at = self.ends_to - 64 + self.ends.trailing_zeros() as usize;
                self.ends &= self.ends - 1;
                if at >= self.start {
                    return Some(at);
                }
            }
            self.ends_to = self.ends_to.max(self.start);
            let window = self.buf.get(self.ends_to..self.end)?.first_chunk::<64>()?;
            self.ends = crate::scan::newlines_in(window)?;
            self.ends_to += 64;
        }
    }

    /// Whether the terminator is known: not before the first line of a log read from its
    /// start (see `ends_lines_in_cr`).
    fn terminator_decided(&self) -> bool {
        self.line_no > 0 || !self.detect_terminator
    }

    /// The first byte of the next line, when it is buffered: what tells, cheaply, whether
    /// a sweep of the lines ahead is worth starting.
    #[inline]
    pub fn next_byte(&self) -> Option<u8> {
        self.buf[self.start..self.end].first().copied()
    }

    /// Passes over whole lines that are already buffered without handing them out, as many
    /// as `sweep` says: it is given the buffered text that starts before input offset
    /// `end` and returns how many bytes and lines at its start to pass over (whole lines,
    /// each ended by `\n`, none longer than [`MAX_LINE`]). Returns the lines passed over.
    /// Nothing is passed over in a log whose lines end in a lone `\r`, or while an overlong
    /// line is skipped.
    pub fn pass_lines_before(
        &mut self,
        end: u64,
        sweep: impl FnOnce(&[u8]) -> (usize, u64),
    ) -> u64 {
        if self.terminator != b'\n' || self.skipping || !self.terminator_decided() {
            return 0;
        }
        let room = end.saturating_sub(self.offset_of(self.start));
        let ahead = &self.buf[self.start..self.end];
        let ahead = &ahead[..ahead.len().min(usize::try_from(room).unwrap_or(usize::MAX))];
        let (bytes, lines) = sweep(ahead);
        debug_assert!(bytes <= ahead.len() && (bytes == 0 || ahead[bytes - 1] == b'\n'));
        self.start += bytes;
        self.line_no += lines;
        lines
    }

    /// [`LineReader::next_line`] at the end of the buffer, for an overlong line, or before
    /// the terminator is decided.
    #[cold]
    #[inline(never)]
    fn next_line_slowly(&mut self) -> io::Result<Option<Line<'_>>> {
        loop {
            if let Some(pos) = memchr::memchr(self.terminator, &self.buf[self.start..self.end]) {
                let line_start = self.start;
                let line_end = self.start + pos;
                self.start = line_end + 1;
                if self.skipping {
                    self.skipping = false;
                    continue;
                }
                self.line_no += 1;
                // A line is cut when it is longer than MAX_LINE, wherever the blocks fall:
                // the same line read from another offset is cut the same way.
                let truncated = pos > MAX_LINE;
                let bytes = if truncated {
                    &self.buf[line_start..line_start + MAX_LINE]
                } else {
                    trim_cr(&self.buf[line_start..line_end])
                };
                return Ok(Some(Line {
                    bytes,
                    number: self.line_no,
                    unterminated: false,
                    truncated,
                    offset: self.offset_of(line_start),
                }));
            }
            let pending = self.end - self.start;
            if self.line_no == 0
                && self.detect_terminator
                && self.terminator == b'\n'
                && ends_lines_in_cr(&self.buf[self.start..self.end])
            {
                self.terminator = b'\r';
                continue;
            }
            if pending > MAX_LINE {
                // Overlong line: hand out its first MAX_LINE bytes, drop the rest.
                let line_start = self.start;
                self.start = self.end;
                if self.skipping {
                    continue;
                }
                self.skipping = true;
                self.line_no += 1;
                return Ok(Some(Line {
                    bytes: &self.buf[line_start..line_start + MAX_LINE],
                    number: self.line_no,
                    unterminated: false,
                    truncated: true,
                    offset: self.offset_of(line_start),
                }));
            }
            if self.eof {
                if pending == 0 || self.skipping {
                    return Ok(None);
                }
                let line_start = self.start;
                self.start = self.end;
                self.line_no += 1;
                return Ok(Some(Line {
                    bytes: trim_cr(&self.buf[line_start..self.end]),
                    number: self.line_no,
                    unterminated: true,
                    truncated: false,
                    offset: self.offset_of(line_start),
                }));
            }
            // Move the partial line to the front and fill the rest of the buffer.
            self.buf.copy_within(self.start..self.end, 0);
            self.start = 0;
            self.end = pending;
            (self.ends, self.ends_to) = (0, 0);
            let n = loop {
                match self.inner.read(&mut self.buf[self.end..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            };
            if n == 0 {
                self.eof = true;
            }
            self.end += n;
            self.bytes_read += n as u64;
        }
    }
}

/// The first line ends in a lone CR (no LF anywhere before it, none right after it).
fn ends_lines_in_cr(text: &[u8]) -> bool {
    memchr::memchr(b'\r', text).is_some_and(|cr| text.get(cr + 1).is_some_and(|&b| b != b'\n'))
}

fn trim_cr(line: &[u8]) -> &[u8] {
    match line.last() {
        Some(b'\r') => &line[..line.len() - 1],
        _ => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(input: &[u8]) -> Vec<(Vec<u8>, u64, bool, bool)> {
        let mut reader = LineReader::new(input);
        let mut out = Vec::new();
        while let Some(l) = reader.next_line().unwrap() {
            out.push((l.bytes.to_vec(), l.number, l.unterminated, l.truncated));
        }
        out
    }

    #[test]
    fn splits_lines_and_flags_the_unterminated_last_one() {
        let lines = collect(b"a\r\nbb\n\nccc");
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0].0, b"a");
        assert_eq!(lines[2].0, b"");
        assert_eq!(lines[3], (b"ccc".to_vec(), 4, true, false));
        assert!(!lines[1].2);
    }

    #[test]
    fn lines_ending_in_a_lone_cr_are_split() {
        let lines = collect(
            b"0.1: [GC 1K->0K(2K), 0.0010000 secs]\r0.2: [GC 1K->0K(2K), 0.0020000 secs]\r\rlast",
        );
        let texts: Vec<&[u8]> = lines.iter().map(|l| &l.0[..]).collect();
        assert_eq!(
            texts,
            [
                &b"0.1: [GC 1K->0K(2K), 0.0010000 secs]"[..],
                b"0.2: [GC 1K->0K(2K), 0.0020000 secs]",
                b"",
                b"last"
            ]
        );
        assert!(lines[3].2);
    }

    #[test]
    fn cuts_overlong_lines_and_resynchronises_on_the_next_newline() {
        let mut input = vec![b'x'; MAX_LINE * 3 + 17];
        input.extend_from_slice(b"\nnext\n");
        let lines = collect(&input);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].0.len(), MAX_LINE);
        assert!(lines[0].3);
        assert_eq!(lines[1].0, b"next");
        assert_eq!(lines[1].1, 2);
    }

    /// Hands out at most `step` bytes per read, as a pipe may.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = out.len().min(self.1).min(self.0.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_line_is_cut_when_longer_than_the_limit_wherever_reads_end() {
        let mut input = vec![b'x'; MAX_LINE];
        input.extend_from_slice(b"\nnext\n");
        for step in [MAX_LINE, 1000, usize::MAX] {
            let mut reader = LineReader::new(Trickle(&input, step));
            let line = reader.next_line().unwrap().unwrap();
            assert_eq!((line.bytes.len(), line.truncated), (MAX_LINE, false));
            assert_eq!(
                reader.next_line().unwrap().unwrap().offset,
                MAX_LINE as u64 + 1
            );
        }
    }

    #[test]
    fn lines_passed_over_are_counted_and_the_next_one_is_where_they_end() {
        let input = b"first\nskip one\nskip two\nkept\n";
        let mut reader = LineReader::new(&input[..]);
        reader.next_line().unwrap();
        let mut seen = Vec::new();
        let passed = reader.pass_lines_before(u64::MAX, |ahead| {
            seen.extend_from_slice(ahead);
            (18, 2)
        });
        assert_eq!((passed, &seen[..]), (2, &input[6..]));
        let line = reader.next_line().unwrap().unwrap();
        assert_eq!(
            (line.bytes, line.number, line.offset),
            (&b"kept"[..], 4, 24)
        );

        // Only what starts before `end` is offered.
        let mut reader = LineReader::new(&input[..]);
        reader.next_line().unwrap();
        reader.pass_lines_before(10, |ahead| {
            assert_eq!(ahead, b"skip");
            (0, 0)
        });

        // Lines ending in a lone CR are never passed over.
        let mut reader = LineReader::new(&b"a\rb\rc\r"[..]);
        reader.next_line().unwrap();
        assert_eq!(reader.pass_lines_before(u64::MAX, |_| panic!("offered")), 0);
    }

    #[test]
    fn lines_spanning_block_boundaries_are_whole() {
        let line = b"[0.016s][info][gc] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 1M->1M(2M) 1.5ms\n";
        let input: Vec<u8> = line
            .iter()
            .copied()
            .cycle()
            .take(line.len() * 10_000)
            .collect();
        let lines = collect(&input);
        assert_eq!(lines.len(), 10_000);
        assert!(lines.iter().all(|l| l.0 == line[..line.len() - 1]));
    }

    /// A line as the reader should hand it out: its text, number, whether it was
    /// unterminated and whether it was cut, and its offset.
    type Expected = (Vec<u8>, u64, bool, bool, u64);

    /// The lines of `input` split the plain way, a line at a time.
    fn split_plainly(input: &[u8]) -> Vec<Expected> {
        let mut lines = Vec::new();
        let mut offset = 0;
        while offset < input.len() {
            let rest = &input[offset..];
            let (text, unterminated, next) = match memchr::memchr(b'\n', rest) {
                Some(end) => (&rest[..end], false, offset + end + 1),
                None => (rest, true, input.len()),
            };
            let number = lines.len() as u64 + 1;
            lines.push(if text.len() > MAX_LINE {
                (
                    text[..MAX_LINE].to_vec(),
                    number,
                    false,
                    true,
                    offset as u64,
                )
            } else {
                (
                    trim_cr(text).to_vec(),
                    number,
                    unterminated,
                    false,
                    offset as u64,
                )
            });
            offset = next;
        }
        lines
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

        /// Lines of any length (some around the limit), CRLF or not, read in pieces of any
        /// size, some of them passed over: each line handed out is the one a plain split
        /// finds there, and those passed over are counted.
        #[test]
        fn lines_are_those_a_plain_split_finds(
            lines in proptest::collection::vec(
                (
                    proptest::prop_oneof![
                        8 => 0usize..200,
                        1 => (MAX_LINE - 2)..(MAX_LINE + 3),
                    ],
                    proptest::bool::ANY,
                ),
                1..60,
            ),
            last_unterminated in proptest::bool::ANY,
            step in proptest::prop_oneof![1usize..70, 60_000usize..70_000, proptest::strategy::Just(usize::MAX)],
            pass_every in 0usize..6,
        ) {
            let mut input = Vec::new();
            for (i, &(len, crlf)) in lines.iter().enumerate() {
                input.extend((0..len).map(|j| b"ab[ 0"[(i + j) % 5]));
                if crlf {
                    input.push(b'\r');
                }
                if !(last_unterminated && i + 1 == lines.len()) {
                    input.push(b'\n');
                }
            }
            let expected = split_plainly(&input);
            let mut reader = LineReader::new(Trickle(&input, step));
            let mut next = 0;
            while let Some(line) = reader.next_line().unwrap() {
                let got = (
                    line.bytes.to_vec(),
                    line.number,
                    line.unterminated,
                    line.truncated,
                    line.offset,
                );
                proptest::prop_assert_eq!(Some(&got), expected.get(next));
                next += 1;
                if pass_every > 0 && next % pass_every == 0 {
                    // Pass over the next line when it is whole in the buffer.
                    let passed = reader.pass_lines_before(u64::MAX, |ahead| {
                        match memchr::memchr(b'\n', ahead) {
                            Some(end) if end <= MAX_LINE => (end + 1, 1),
                            _ => (0, 0),
                        }
                    });
                    next += passed as usize;
                }
            }
            proptest::prop_assert_eq!(next, expected.len());
        }
    }
}
