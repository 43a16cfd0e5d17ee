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
