//! Where any of a few bytes are in a text, 32 bytes at a time, for texts where they
//! are close together: the brackets of a JDK 8 event, the line ends and brackets of the
//! printouts inside one.
//!
//! Also where the time stamps that start a JDK 8 line end ([`stamp_bytes_run`]), 16 bytes
//! at a time.
//!
//! `memchr`'s iterators (`memchr2_iter`, `memchr3_iter`) restart their search at every
//! match, choosing an implementation and preparing its vectors each time: about 70
//! instructions a match, more than the search itself when matches are a few bytes apart
//! (a third of the time spent reading a JDK 8 CMS log went there). [`AnyOf`] compares a
//! block of 32 bytes (two vectors of sixteen: 5 % fewer instructions than one on a CMS log,
//! the same as four) with every byte wanted once and hands out all the block's matches
//! from one bit mask. `memchr` stays the tool for a single search through a long text.

/// The positions in `text` of the bytes in `wanted`, in order; see [`any_of`].
pub(crate) struct AnyOf<'a, const N: usize> {
    text: &'a [u8],
    wanted: [u8; N],
    /// Where the block whose matches are left in `mask` starts.
    block: usize,
    /// Where the next block starts.
    next: usize,
    /// One bit per byte of the block (the lowest its first) that is one of `wanted` and
    /// not handed out yet.
    mask: u32,
}

/// The positions in `text` of the bytes in `wanted`, in order.
#[inline]
pub(crate) fn any_of<const N: usize>(text: &[u8], wanted: [u8; N]) -> AnyOf<'_, N> {
    AnyOf {
        text,
        wanted,
        block: 0,
        next: 0,
        mask: 0,
    }
}

const BLOCK: usize = 32;

impl<const N: usize> Iterator for AnyOf<'_, N> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            let rest = self.text.get(self.next..).filter(|rest| !rest.is_empty())?;
            self.mask = match rest.first_chunk::<BLOCK>() {
                Some(block) => matches_in(block, &self.wanted),
                // The last, shorter block of a text of at least a block: the text's last
                // 32 bytes, without the matches of those before it, already handed out
                // (padding a copy cost a call to `memcpy`, as much as two blocks).
                None if self.text.len() >= BLOCK => {
                    let start = self.text.len() - BLOCK;
                    let block = self.text[start..].first_chunk::<BLOCK>()?;
                    matches_in(block, &self.wanted) >> (self.next - start)
                }
                None => {
                    // The last, shorter block: padded, and the padding's matches dropped.
                    let mut padded = [0; BLOCK];
                    padded[..rest.len()].copy_from_slice(rest);
                    matches_in(&padded, &self.wanted) & ((1 << rest.len()) - 1)
                }
            };
            self.block = self.next;
            self.next += BLOCK;
        }
        let at = self.block + self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(at)
    }
}

/// One bit per byte of `block` that is one of `wanted`, the lowest for its first byte.
#[cfg(target_arch = "x86_64")]
#[inline]
fn matches_in<const N: usize>(block: &[u8; BLOCK], wanted: &[u8; N]) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        _mm_setzero_si128,
    };
    // SAFETY: SSE2 is part of every x86_64 processor; the loads read the two halves of
    // `block` and need no alignment.
    unsafe {
        let low = _mm_loadu_si128(block.as_ptr().cast());
        let high = _mm_loadu_si128(block[16..].as_ptr().cast());
        let (mut in_low, mut in_high) = (_mm_setzero_si128(), _mm_setzero_si128());
        for &byte in wanted {
            let byte = _mm_set1_epi8(byte as i8);
            in_low = _mm_or_si128(in_low, _mm_cmpeq_epi8(low, byte));
            in_high = _mm_or_si128(in_high, _mm_cmpeq_epi8(high, byte));
        }
        (_mm_movemask_epi8(in_low) as u32 & 0xffff) | (_mm_movemask_epi8(in_high) as u32) << 16
    }
}

/// One bit per byte of `block` that is one of `wanted`, the lowest for its first byte.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn matches_in<const N: usize>(block: &[u8; BLOCK], wanted: &[u8; N]) -> u32 {
    bytewise_matches_in(block, wanted)
}

/// [`matches_in`] a byte at a time: what other processors use, and what the vector
/// comparison is checked against.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn bytewise_matches_in<const N: usize>(block: &[u8; BLOCK], wanted: &[u8; N]) -> u32 {
    block
        .iter()
        .enumerate()
        .filter(|(_, byte)| wanted.contains(byte))
        .fold(0, |mask, (at, _)| mask | 1 << at)
}

/// At most eight bytes looked for by their two halves (nibbles), 32 bytes at a time with
/// AVX2: two table lookups and one comparison a block, where [`any_of`] compares the block
/// with each byte wanted (the eight bytes of an event's line that the stitcher looks at
/// cost it 40 instructions a block).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct NibbleSet {
    /// Bit `k` at the low nibble of the `k`-th byte wanted, in both lanes.
    low: std::arch::x86_64::__m256i,
    /// Bit `k` at its high nibble.
    high: std::arch::x86_64::__m256i,
}

/// The two tables of a [`NibbleSet`] (see [`NibbleTables::of`]), made at compile time for a
/// constant set: loaded from the binary, where tables built on the stack at every call were
/// read back before their bytes had reached the cache (a stall that made making the set of
/// [`crate::stitch`]'s line scan 1.5 % of the time reading a JDK 8 G1 log took, for 0.15 %
/// of its instructions).
#[cfg(target_arch = "x86_64")]
pub(crate) struct NibbleTables {
    low: [u8; 16],
    high: [u8; 16],
}

#[cfg(target_arch = "x86_64")]
impl NibbleTables {
    /// The tables of `wanted` (at most eight bytes).
    pub(crate) const fn of<const N: usize>(wanted: [u8; N]) -> Self {
        let (low, high) = nibble_tables(wanted);
        NibbleTables { low, high }
    }
}

#[cfg(target_arch = "x86_64")]
impl NibbleSet {
    /// The set of `wanted` (at most eight bytes), or `None` on a processor without AVX2:
    /// a set is made only where its search can run.
    #[cfg(test)]
    pub(crate) fn new<const N: usize>(wanted: [u8; N]) -> Option<Self> {
        if !std::is_x86_feature_detected!("avx2") {
            return None;
        }
        let tables = NibbleTables::of(wanted);
        // SAFETY: the processor has AVX2, checked just above.
        Some(unsafe { NibbleSet::from_tables(&tables) })
    }

    /// The set of `tables`, from a function compiled for AVX2 (where this is inlined).
    ///
    /// # Safety
    /// The processor must have AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) unsafe fn from_tables(tables: &NibbleTables) -> Self {
        use std::arch::x86_64::{_mm256_broadcastsi128_si256, _mm_loadu_si128};
        // SAFETY: the loads read the 16 bytes of each table and need no alignment.
        unsafe {
            NibbleSet {
                low: _mm256_broadcastsi128_si256(_mm_loadu_si128(tables.low.as_ptr().cast())),
                high: _mm256_broadcastsi128_si256(_mm_loadu_si128(tables.high.as_ptr().cast())),
            }
        }
    }

    /// One bit per byte of `block` in the set, the lowest for its first byte.
    ///
    /// # Safety
    /// The processor must have AVX2 (it has, where a set was made).
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn matches_in(&self, block: &[u8; BLOCK]) -> u32 {
        use std::arch::x86_64::{
            _mm256_and_si256, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8,
            _mm256_set1_epi8, _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_srli_epi16,
        };
        // SAFETY: the load reads the 32 bytes of `block` and needs no alignment.
        let bytes = unsafe { _mm256_loadu_si256(block.as_ptr().cast()) };
        let nibble = _mm256_set1_epi8(0x0f);
        let low = _mm256_and_si256(bytes, nibble);
        let high = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), nibble);
        let both = _mm256_and_si256(
            _mm256_shuffle_epi8(self.low, low),
            _mm256_shuffle_epi8(self.high, high),
        );
        !(_mm256_movemask_epi8(_mm256_cmpeq_epi8(both, _mm256_setzero_si256())) as u32)
    }
}

/// The tables of a [`NibbleSet`]: bit `k` of `low[l]` and of `high[h]` for the `k`-th byte
/// wanted, `h << 4 | l`. A byte is wanted when the entries of its two nibbles share a bit:
/// each byte wanted has a bit of its own, so no other pair of nibbles shares it.
#[cfg(target_arch = "x86_64")]
const fn nibble_tables<const N: usize>(wanted: [u8; N]) -> ([u8; 16], [u8; 16]) {
    assert!(N <= 8, "one bit a byte");
    let (mut low, mut high) = ([0u8; 16], [0u8; 16]);
    let mut k = 0;
    while k < N {
        low[(wanted[k] & 0x0f) as usize] |= 1 << k;
        high[(wanted[k] >> 4) as usize] |= 1 << k;
        k += 1;
    }
    (low, high)
}

/// The positions in `text` of the bytes of `set`, in order: [`any_of`] for a [`NibbleSet`].
/// Best called from a function compiled for AVX2, where its comparisons are inlined.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn any_in(text: &[u8], set: NibbleSet) -> AnyIn<'_> {
    AnyIn {
        text,
        set,
        block: 0,
        next: 0,
        mask: 0,
    }
}

/// See [`any_in`].
#[cfg(target_arch = "x86_64")]
pub(crate) struct AnyIn<'a> {
    text: &'a [u8],
    set: NibbleSet,
    /// Where the block whose matches are left in `mask` starts.
    block: usize,
    /// Where the next block starts.
    next: usize,
    /// The block's matches not handed out yet, the lowest bit for its first byte.
    mask: u32,
}

#[cfg(target_arch = "x86_64")]
impl Iterator for AnyIn<'_> {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            let rest = self.text.get(self.next..).filter(|rest| !rest.is_empty())?;
            // SAFETY: a `NibbleSet` is made only where the processor has AVX2.
            self.mask = unsafe {
                match rest.first_chunk::<BLOCK>() {
                    Some(block) => self.set.matches_in(block),
                    // The last, shorter block of a text of at least a block: its last 32
                    // bytes, as in `AnyOf` (a padded copy is read back before its bytes
                    // reach the cache).
                    None if self.text.len() >= BLOCK => {
                        let start = self.text.len() - BLOCK;
                        let block = self.text[start..].first_chunk::<BLOCK>()?;
                        self.set.matches_in(block) >> (self.next - start)
                    }
                    None => {
                        // The last block of a shorter text: padded, and the padding's
                        // matches dropped.
                        let mut padded = [0; BLOCK];
                        padded[..rest.len()].copy_from_slice(rest);
                        self.set.matches_in(&padded) & ((1 << rest.len()) - 1)
                    }
                }
            };
            self.block = self.next;
            self.next += BLOCK;
        }
        let at = self.block + self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(at)
    }
}

/// Calls `line_end` with the position of each line end (`\n`) of `text`, in order, until it
/// returns false, or until a bracket that a `C` or a `G` follows comes first (where a
/// fragment the stitcher cuts out may start: `[CMS-concurrent`, `[GC concurrent`,
/// `[G1Ergonomics`); returns where that bracket is, if one stopped it.
///
/// What sweeping printouts needs. Their other brackets (`[0x00000006a0000000`, `size[3]`,
/// on more than half of their lines) are told apart by the vector comparison rather than
/// one by one, 32 bytes at a time with AVX2 where the processor has it (checked once: the
/// sweep runs over 80 % of a JDK 8 log with heap and free-list printouts).
#[inline]
pub(crate) fn line_ends_before_fragment(
    text: &[u8],
    line_end: impl FnMut(usize) -> bool,
) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked just above.
        return unsafe { line_ends_before_fragment_avx2(text, line_end) };
    }
    line_ends_before_fragment_anywhere(text, line_end)
}

/// [`line_ends_before_fragment`] on any processor.
fn line_ends_before_fragment_anywhere(
    text: &[u8],
    mut line_end: impl FnMut(usize) -> bool,
) -> Option<usize> {
    for at in any_of(text, [b'\n', b'[']) {
        if text[at] == b'[' {
            if matches!(text.get(at + 1), Some(b'C' | b'G')) {
                return Some(at);
            }
        } else if !line_end(at) {
            return None;
        }
    }
    None
}

/// [`line_ends_before_fragment`] with AVX2.
///
/// # Safety
/// The processor must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn line_ends_before_fragment_avx2(
    text: &[u8],
    mut line_end: impl FnMut(usize) -> bool,
) -> Option<usize> {
    let mut block = 0;
    while block < text.len() {
        // SAFETY: the processor has AVX2, as this function requires.
        let mut stops = unsafe { stops_at(text, block) };
        while stops != 0 {
            let at = block + stops.trailing_zeros() as usize;
            if text[at] != b'\n' {
                return Some(at);
            }
            if !line_end(at) {
                return None;
            }
            stops &= stops - 1;
        }
        block += AVX2_BLOCK;
    }
    None
}

/// Passes over whole lines at the start of `text`: each line ended by `\n` before the first
/// bracket that a `C` or a `G` follows (see [`line_ends_before_fragment`]), at most
/// `max_line` bytes long, for as long as `passes` says yes of the text after it (the next
/// line and the rest). Returns the bytes and the lines passed over.
///
/// The printout sweep: with AVX2 the count and the position stay in registers, where a
/// callback of [`line_ends_before_fragment`] kept them in memory (a fifth of the sweep).
#[inline]
pub(crate) fn sweep_lines(
    text: &[u8],
    max_line: usize,
    passes: impl Fn(&[u8]) -> bool,
) -> (usize, u64) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked just above.
        return unsafe { sweep_lines_avx2(text, max_line, passes) };
    }
    sweep_lines_anywhere(text, max_line, passes)
}

/// One bit per `\n` in `window`, with SSE2 (which every x86-64 processor has, so this is
/// inlined into the line loop with no check).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn newlines_in(window: &[u8; 64]) -> Option<u64> {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    let mut ends = 0u64;
    for quarter in 0..4 {
        // SAFETY: SSE2 is part of x86-64; the load reads bytes `16 * quarter` to
        // `16 * quarter + 16` of the 64 of `window`, and needs no alignment.
        let bits = unsafe {
            let bytes = _mm_loadu_si128(window.as_ptr().add(16 * quarter).cast());
            _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\n' as i8))) as u16
        };
        ends |= u64::from(bits) << (16 * quarter);
    }
    Some(ends)
}

/// Elsewhere, lines are found by `memchr` (the slow way).
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(crate) fn newlines_in(_window: &[u8; 64]) -> Option<u64> {
    None
}

/// Passes over whole lines at the start of `text`: each ended by `\n`, at most `max_line`
/// bytes long, for as long as `passes` says yes of the text after it (the next line and
/// the rest). Returns the bytes and the lines passed over. [`sweep_lines`] without its
/// stops at brackets, for lines that are handed on whole: the line ends are found 64
/// bytes at a time ([`newlines_in`]).
#[inline]
pub(crate) fn sweep_line_ends(
    text: &[u8],
    max_line: usize,
    passes: impl Fn(&[u8]) -> bool,
) -> (usize, u64) {
    let mut swept = Swept::default();
    let mut block = 0;
    while block < text.len() {
        let mut ends = match text[block..].first_chunk::<64>().and_then(newlines_in) {
            Some(ends) => ends,
            // The last bytes, or no vectors: a byte at a time.
            None => text[block..(block + 64).min(text.len())]
                .iter()
                .enumerate()
                .filter(|&(_, &b)| b == b'\n')
                .fold(0, |ends, (at, _)| ends | 1 << at),
        };
        while ends != 0 {
            let at = block + ends.trailing_zeros() as usize;
            if !swept.line_ends(text, at, max_line, &passes) {
                return swept.result();
            }
            ends &= ends - 1;
        }
        block += 64;
    }
    swept.result()
}

/// [`sweep_lines`] on any processor, through [`line_ends_before_fragment_anywhere`].
fn sweep_lines_anywhere(
    text: &[u8],
    max_line: usize,
    passes: impl Fn(&[u8]) -> bool,
) -> (usize, u64) {
    let mut swept = Swept::default();
    line_ends_before_fragment_anywhere(text, |at| swept.line_ends(text, at, max_line, &passes));
    swept.result()
}

/// How far a sweep of lines went: the bytes and the lines passed over.
#[derive(Default)]
struct Swept {
    passed: usize,
    lines: u64,
}

impl Swept {
    /// Passes over the line that ends at `at` when it is at most `max_line` bytes long;
    /// whether the sweep goes on after it (`passes` of the text after it).
    #[inline(always)]
    fn line_ends(
        &mut self,
        text: &[u8],
        at: usize,
        max_line: usize,
        passes: &impl Fn(&[u8]) -> bool,
    ) -> bool {
        if at - self.passed > max_line {
            return false;
        }
        self.passed = at + 1;
        self.lines += 1;
        passes(&text[self.passed..])
    }

    fn result(&self) -> (usize, u64) {
        (self.passed, self.lines)
    }
}

/// [`sweep_lines`] with AVX2.
///
/// # Safety
/// The processor must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sweep_lines_avx2(
    text: &[u8],
    max_line: usize,
    passes: impl Fn(&[u8]) -> bool,
) -> (usize, u64) {
    let mut swept = Swept::default();
    let mut block = 0;
    while block < text.len() {
        // SAFETY: the processor has AVX2, as this function requires.
        let mut stops = unsafe { stops_at(text, block) };
        while stops != 0 {
            let at = block + stops.trailing_zeros() as usize;
            if text[at] != b'\n' || !swept.line_ends(text, at, max_line, &passes) {
                return swept.result();
            }
            stops &= stops - 1;
        }
        block += AVX2_BLOCK;
    }
    swept.result()
}

/// Bytes the AVX2 sweeps look at a time: two vectors, half the loop's turns of one for
/// lines 80 bytes long on average.
#[cfg(target_arch = "x86_64")]
const AVX2_BLOCK: usize = 64;

/// [`stops_avx2`] of the block of `text` that starts at `block` (padded with zeros, which
/// match nothing, past the end of `text`).
///
/// # Safety
/// The processor must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn stops_at(text: &[u8], block: usize) -> u64 {
    let rest = &text[block..];
    match rest.first_chunk::<{ AVX2_BLOCK + 1 }>() {
        // SAFETY: the processor has AVX2, as this function requires.
        Some(bytes) => unsafe { stops_avx2(bytes) },
        None => {
            let mut padded = [0u8; AVX2_BLOCK + 1];
            padded[..rest.len()].copy_from_slice(rest);
            // SAFETY: as above.
            unsafe { stops_avx2(&padded) }
        }
    }
}

/// For the first [`AVX2_BLOCK`] bytes of `block`: one bit per line end, and per bracket
/// that the next byte (the block's last byte is the next block's first) shows to be `[C` or
/// `[G`, in one mask: the byte tells which. The next bytes are loaded one byte on, so the
/// pair is compared in the vectors: most brackets of a printout are others'
/// (`[0x00000006a0000000`, `size[3]`), which cost more told apart one by one.
///
/// # Safety
/// The processor must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn stops_avx2(block: &[u8; AVX2_BLOCK + 1]) -> u64 {
    use std::arch::x86_64::{
        _mm256_and_si256, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_min_epu8,
        _mm256_movemask_epi8, _mm256_or_si256, _mm256_set1_epi8, _mm256_setzero_si256,
        _mm256_xor_si256,
    };
    let newline = _mm256_set1_epi8(b'\n' as i8);
    let bracket = _mm256_set1_epi8(b'[' as i8);
    // `C` and `G` differ in one bit: without it both are `C`.
    let (c, but_g_bit) = (
        _mm256_set1_epi8(b'C' as i8),
        _mm256_set1_epi8(!(b'C' ^ b'G') as i8),
    );
    let mut stops = 0u64;
    for half in [0, AVX2_BLOCK / 2] {
        // SAFETY: the loads read bytes `half` to `half + 32` of the 65 bytes of `block`,
        // and need no alignment.
        let (here, next) = unsafe {
            (
                _mm256_loadu_si256(block.as_ptr().add(half).cast()),
                _mm256_loadu_si256(block.as_ptr().add(half + 1).cast()),
            )
        };
        // Zero where a byte is a line end, and where a pair is `[C` or `[G`: one comparison
        // at the end. (Comparisons joined by `and` and `or` are taken apart by the
        // compiler bit by bit, ten times the instructions.)
        let off_newline = _mm256_xor_si256(here, newline);
        let off_fragment = _mm256_or_si256(
            _mm256_xor_si256(here, bracket),
            _mm256_xor_si256(_mm256_and_si256(next, but_g_bit), c),
        );
        let stop = _mm256_cmpeq_epi8(
            _mm256_min_epu8(off_newline, off_fragment),
            _mm256_setzero_si256(),
        );
        stops |= u64::from(_mm256_movemask_epi8(stop) as u32) << half;
    }
    stops
}

/// How many bytes at the start of `text` are bytes that time stamps are written with
/// (digits, `. , : - + T Z`, space and `#`): where the stamps of a JDK 8 line may end,
/// looked for 16 bytes at a time (a byte at a time cost more than the rest of telling
/// what a line outside an event is).
pub(crate) fn stamp_bytes_run(text: &[u8]) -> usize {
    let mut at = 0;
    loop {
        let rest = &text[at..];
        let in_stamps = match rest.first_chunk::<16>() {
            Some(chunk) => stamp_bytes_in(chunk),
            None => {
                // The last, shorter piece: padded with a byte no stamp holds.
                let mut padded = [0; 16];
                padded[..rest.len()].copy_from_slice(rest);
                stamp_bytes_in(&padded)
            }
        };
        let others = !in_stamps & 0xffff;
        if others != 0 {
            return at + others.trailing_zeros() as usize;
        }
        at += 16;
    }
}

/// Whether a byte is one [`stamp_bytes_run`] runs over.
const fn is_stamp_byte(byte: u8) -> bool {
    byte.is_ascii_digit()
        || matches!(
            byte,
            b'.' | b',' | b':' | b'-' | b'+' | b'T' | b'Z' | b' ' | b'#'
        )
}

/// One bit per byte of `chunk` that [`is_stamp_byte`], the lowest for its first byte.
#[cfg(target_arch = "x86_64")]
#[inline]
fn stamp_bytes_in(chunk: &[u8; 16]) -> u32 {
    use std::arch::x86_64::{
        _mm_andnot_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8,
        _mm_or_si128, _mm_set1_epi8, _mm_sub_epi8,
    };
    // SAFETY: SSE2 is part of every x86_64 processor; the load reads the 16 bytes of
    // `chunk` and needs no alignment.
    unsafe {
        let bytes = _mm_loadu_si128(chunk.as_ptr().cast());
        // `+ , - . / 0-9 :` are the 16 bytes from 0x2B on: one unsigned comparison after
        // a subtraction, then `/` taken out.
        let from_plus = _mm_sub_epi8(bytes, _mm_set1_epi8(b'+' as i8));
        let in_range = _mm_cmpeq_epi8(_mm_min_epu8(from_plus, _mm_set1_epi8(15)), from_plus);
        let slash = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'/' as i8));
        let mut stamp = _mm_andnot_si128(slash, in_range);
        for byte in [b' ', b'#', b'T', b'Z'] {
            stamp = _mm_or_si128(stamp, _mm_cmpeq_epi8(bytes, _mm_set1_epi8(byte as i8)));
        }
        _mm_movemask_epi8(stamp) as u32
    }
}

/// One bit per byte of `chunk` that [`is_stamp_byte`], the lowest for its first byte.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn stamp_bytes_in(chunk: &[u8; 16]) -> u32 {
    bytewise_stamp_bytes_in(chunk)
}

/// [`stamp_bytes_in`] a byte at a time: what other processors use, and what the vector
/// comparison is checked against.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn bytewise_stamp_bytes_in(chunk: &[u8; 16]) -> u32 {
    chunk
        .iter()
        .enumerate()
        .filter(|(_, &byte)| is_stamp_byte(byte))
        .fold(0, |mask, (at, _)| mask | 1 << at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn stamp_bytes_are_told_as_byte_by_byte_for_every_byte() {
        for first in (0..=255u8).step_by(16) {
            let chunk: [u8; 16] = std::array::from_fn(|at| first + at as u8);
            assert_eq!(
                stamp_bytes_in(&chunk),
                bytewise_stamp_bytes_in(&chunk),
                "{first}"
            );
        }
    }

    proptest! {
        /// The run of stamp bytes at the start of any text, of any length, ends where a
        /// byte-by-byte look says.
        #[test]
        fn stamp_runs_end_where_a_byte_by_byte_look_says(
            text in proptest::collection::vec(
                proptest::sample::select(b"2020-09-13T12:26:37.504+0000: 10.001: [GC/Zz#\0".to_vec()),
                0..70),
        ) {
            let expected = text.iter().position(|&c| !is_stamp_byte(c)).unwrap_or(text.len());
            prop_assert_eq!(stamp_bytes_run(&text), expected);
        }
    }

    /// A `[C` ends the line ends handed out wherever it falls in a block, across the edge
    /// between two blocks too.
    #[test]
    fn a_fragment_stops_the_line_ends_at_every_offset() {
        for at in 0..200 {
            let mut text = b"x\n".repeat(110);
            text[at] = b'[';
            text[at + 1] = b'C';
            let mut ends = Vec::new();
            line_ends_before_fragment(&text, |end| {
                ends.push(end);
                true
            });
            let expected: Vec<usize> = (0..at).filter(|&end| text[end] == b'\n').collect();
            assert_eq!(ends, expected, "[C at {at}");
        }
    }

    proptest! {
        /// The line ends handed out before the first `[C` or `[G`, and where the callback
        /// stops them, are the same on every path, in texts of any length made mostly of
        /// those bytes and zeros (what the last block is padded with).
        #[test]
        fn line_ends_before_a_fragment_are_the_same_on_every_path(
            text in proptest::collection::vec(
                proptest::sample::select(b"[CG\n\0x]".to_vec()), 0..200),
            stop_after in 0usize..50,
        ) {
            let expected: Vec<usize> = {
                let mut ends = Vec::new();
                for at in 0..text.len() {
                    if text[at] == b'[' && matches!(text.get(at + 1), Some(b'C' | b'G')) {
                        break;
                    }
                    if text[at] == b'\n' {
                        ends.push(at);
                        if ends.len() > stop_after {
                            break;
                        }
                    }
                }
                ends
            };
            let stopping = |ends: &mut Vec<usize>, at| {
                ends.push(at);
                ends.len() <= stop_after
            };
            let (mut found, mut found_anywhere) = (Vec::new(), Vec::new());
            let stop = line_ends_before_fragment(&text, |at| stopping(&mut found, at));
            let stop_anywhere =
                line_ends_before_fragment_anywhere(&text, |at| stopping(&mut found_anywhere, at));
            prop_assert_eq!(&found, &expected);
            prop_assert_eq!(&found_anywhere, &expected);
            prop_assert_eq!(stop, stop_anywhere);
            if let Some(at) = stop {
                prop_assert!(text[at] == b'[' && matches!(text.get(at + 1), Some(b'C' | b'G')));
                prop_assert!(found.last().is_none_or(|&end| end < at));
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    proptest! {
        /// A nibble set finds what `any_of` finds, whatever the bytes wanted (those of an
        /// event's line, or any eight, their nibbles shared or not) and the text.
        #[test]
        fn a_nibble_set_finds_what_any_of_finds(
            text in proptest::collection::vec(
                prop_oneof![
                    proptest::sample::select(b"[]{ABDMz\0\n+K{;".to_vec()),
                    any::<u8>(),
                ],
                0..100),
            wanted in proptest::array::uniform8(any::<u8>()),
        ) {
            let Some(set) = NibbleSet::new(wanted) else {
                return Ok(());
            };
            prop_assert_eq!(
                any_in(&text, set).collect::<Vec<_>>(),
                any_of(&text, wanted).collect::<Vec<_>>()
            );
            let event = *b"[]{ABDMz";
            let set = NibbleSet::new(event).unwrap();
            prop_assert_eq!(
                any_in(&text, set).collect::<Vec<_>>(),
                any_of(&text, event).collect::<Vec<_>>()
            );
        }
    }

    proptest! {
        /// The lines swept, and where the sweep stops (a `[C` or `[G`, a line longer than
        /// `max_line`, a next line that does not pass), are the same on every path, in texts
        /// made mostly of those bytes, across the edges of blocks and at the end; and the
        /// sweep by line ends alone stops where a byte-by-byte one does.
        #[test]
        fn sweeping_lines_is_the_same_on_every_path(
            text in proptest::collection::vec(
                proptest::sample::select(b"[CG\n\n\nx 1\0".to_vec()), 0..400),
            max_line in 0usize..120,
        ) {
            // A line passes unless it starts with a digit.
            let passes = |rest: &[u8]| rest.first() != Some(&b'1');
            let swept = sweep_lines(&text, max_line, passes);
            prop_assert_eq!(swept, sweep_lines_anywhere(&text, max_line, passes));
            prop_assert!(swept.0 == 0 || text[swept.0 - 1] == b'\n');

            let (mut passed, mut lines) = (0, 0);
            for at in (0..text.len()).filter(|&at| text[at] == b'\n') {
                if at - passed > max_line {
                    break;
                }
                passed = at + 1;
                lines += 1;
                if !passes(&text[passed..]) {
                    break;
                }
            }
            prop_assert_eq!(sweep_line_ends(&text, max_line, passes), (passed, lines));
        }
    }

    proptest! {
        /// Every position of a wanted byte, in order, in texts of any length made mostly
        /// of the bytes wanted, zeros (what the last block is padded with) and others.
        #[test]
        fn finds_what_a_byte_by_byte_search_finds(
            text in proptest::collection::vec(
                proptest::sample::select(b"[]>\n\0x-\xff".to_vec()), 0..100),
        ) {
            let expected: Vec<usize> = text
                .iter()
                .enumerate()
                .filter(|(_, c)| b"[]>".contains(c))
                .map(|(at, _)| at)
                .collect();
            prop_assert_eq!(any_of(&text, [b'[', b']', b'>']).collect::<Vec<_>>(), expected);
            let newlines: Vec<usize> = memchr::memchr_iter(b'\n', &text).collect();
            prop_assert_eq!(any_of(&text, [b'\n']).collect::<Vec<_>>(), newlines);
            for block in text.chunks_exact(BLOCK) {
                let block = block.try_into().unwrap();
                prop_assert_eq!(
                    matches_in(block, b"\0\xff"),
                    bytewise_matches_in(block, b"\0\xff")
                );
            }
        }
    }
}
