//! Number and time-stamp scanners for log text. No allocation, no UTF-8 validation: they work
//! on the bytes as written, with `.` or `,` as the decimal separator (locale-dependent).

use pauselab_pause::civil::days_from_civil;

/// Parses an unsigned decimal (`12`, `0.0085510`, `0,246`) and scales it by 10^`scale`,
/// truncating extra fraction digits. `None` when `s` is not exactly such a number.
pub fn decimal_scaled(s: &[u8], scale: u32) -> Option<u64> {
    let mut int: u64 = 0;
    let mut i = 0;
    let mut digits = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        int = int.wrapping_mul(10).wrapping_add(u64::from(s[i] - b'0'));
        i += 1;
        digits += 1;
    }
    // Nineteen digits cannot overflow, and a log's numbers are shorter: only a longer one
    // is read again with each digit checked, rather than checking every number's digits.
    if i > 19 {
        int = s[..i].iter().try_fold(0u64, |int, &c| {
            int.checked_mul(10)?.checked_add(u64::from(c - b'0'))
        })?;
    }
    let mut frac: u64 = 0;
    let mut frac_digits = 0u32;
    if i < s.len() && (s[i] == b'.' || s[i] == b',') {
        i += 1;
        while i < s.len() && s[i].is_ascii_digit() {
            if frac_digits < scale {
                frac = frac * 10 + u64::from(s[i] - b'0');
                frac_digits += 1;
            }
            i += 1;
            digits += 1;
        }
    }
    if digits == 0 || i != s.len() {
        return None;
    }
    // Powers from a table: computing them took a third of this function's time.
    let value = int.checked_mul(*POW10.get(scale as usize)?)?;
    value.checked_add(frac * POW10[(scale - frac_digits) as usize])
}

/// 10^0 to 10^19, every power of ten a u64 holds.
pub(crate) const POW10: [u64; 20] = {
    let mut table = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        table[i] = table[i - 1] * 10;
        i += 1;
    }
    table
};

/// Eight bytes read as one integer, each less its `'0'` (a digit's byte is then its value,
/// 0 to 9), the first byte lowest.
fn less_zeros(bytes: [u8; 8]) -> u64 {
    u64::from_le_bytes(bytes) ^ u64::from_ne_bytes([b'0'; 8])
}

/// The top bit of each byte of `less_zeros` that was not a digit. Each byte is looked at
/// apart: its low seven bits plus 118 reach the top bit from 10 on, without carrying into
/// the next byte.
fn non_digits(less_zeros: u64) -> u64 {
    const LOW_SEVEN: u64 = u64::from_ne_bytes([0x7f; 8]);
    const UP_FROM_TEN: u64 = u64::from_ne_bytes([0x80 - 10; 8]);
    const TOP: u64 = u64::from_ne_bytes([0x80; 8]);
    (((less_zeros & LOW_SEVEN) + UP_FROM_TEN) | less_zeros) & TOP
}

/// The number written by the digit values in the bytes of `digits` (the first byte
/// lowest, the most significant digit; bytes of 0 before the digits are leading zeros):
/// pairs of digits, then pairs of pairs, then the two halves, each a multiplication.
fn eight_digits_value(digits: u64) -> u64 {
    let pairs = (digits.wrapping_mul(10) + (digits >> 8)) & 0x00ff_00ff_00ff_00ff;
    let quads = (pairs.wrapping_mul(100) + (pairs >> 16)) & 0x0000_ffff_0000_ffff;
    (quads.wrapping_mul(10_000) + (quads >> 32)) & 0xffff_ffff
}

/// The digits `bytes` starts with, when fewer than eight: their value and how many there
/// are (none: `(0, 0)`). `None` when eight or more, or when `bytes` is shorter than
/// eight: the caller reads those digit by digit. The eight bytes are looked at at once,
/// not one by one (a size or a time in a JDK 8 event has a few digits, read by a loop at
/// about ten instructions each).
#[inline]
pub(crate) fn few_leading_digits(bytes: &[u8]) -> Option<(u64, usize)> {
    few_digits_in(bytes.first_chunk::<8>()?)
}

/// [`few_leading_digits`] of eight bytes at hand: `None` only when all eight are digits.
/// The count is below eight, so the byte after the digits is in `chunk` (no bounds check).
#[inline(always)]
pub(crate) fn few_digits_in(chunk: &[u8; 8]) -> Option<(u64, usize)> {
    let digits = less_zeros(*chunk);
    let count = (non_digits(digits).trailing_zeros() / 8) as usize;
    match count {
        0 => Some((0, 0)),
        8 => None,
        _ => Some((eight_digits_value(digits << (8 * (8 - count))), count)),
    }
}

/// How many digits `bytes` starts with: eight bytes looked at at once (see
/// [`few_leading_digits`]), a byte at a time only past the first eight or near the end.
#[inline]
pub(crate) fn leading_digit_count(bytes: &[u8]) -> usize {
    if let Some(chunk) = bytes.first_chunk::<8>() {
        let count = leading_digits_in(chunk);
        if count < 8 {
            return count;
        }
    }
    bytes.iter().take_while(|c| c.is_ascii_digit()).count()
}

/// How many of the eight bytes of `chunk` are digits before the first that is not one
/// (8 when all are).
#[inline(always)]
pub(crate) fn leading_digits_in(chunk: &[u8; 8]) -> usize {
    (non_digits(less_zeros(*chunk)).trailing_zeros() / 8) as usize
}

/// Whether every byte of `chunk` that `positions` covers (`0xff` bytes) is a digit.
#[inline(always)]
pub(crate) fn digits_at(chunk: &[u8; 8], positions: u64) -> bool {
    non_digits(less_zeros(*chunk) & positions) == 0
}

/// The digits `bytes` ends with, at most `most` of them, when fewer than eight: their
/// value and how many there are (none: `(0, 0)`). `None` when eight or more, or when
/// `bytes` is shorter than eight: the caller reads those digit by digit.
#[inline]
pub(crate) fn few_trailing_digits(bytes: &[u8], most: usize) -> Option<(u64, usize)> {
    let digits = less_zeros(*bytes.last_chunk::<8>()?);
    let count = ((non_digits(digits).leading_zeros() / 8) as usize).min(most);
    match count {
        0 => Some((0, 0)),
        8 => None,
        _ => Some((
            eight_digits_value(digits >> (8 * (8 - count)) << (8 * (8 - count))),
            count,
        )),
    }
}

/// Haystacks shorter than this are searched without building a searcher (a JDK 8 event
/// joined from its lines is a few hundred bytes to a few KiB).
const SHORT_HAYSTACK: usize = 4096;

/// Position of `needle` in `hay`. A log line is short: on one, looking at each place its
/// last byte occurs (often rarer than its first: `" secs]"`, `"[Times: "`) costs less than
/// building a `memchr::memmem` searcher (which a profile of JDK 8 logs showed taking more
/// time than the searches themselves).
pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let Some(&last) = needle.last() else {
        return Some(0);
    };
    if hay.len() >= SHORT_HAYSTACK {
        return memchr::memmem::find(hay, needle);
    }
    // The first place the needle ends is where it first starts.
    let before_last = needle.len() - 1;
    crate::scan::any_of(hay, [last])
        .filter(|&end| end >= before_last)
        .map(|end| end - before_last)
        .find(|&start| hay[start..].starts_with(needle))
}

/// Parses `12.345` seconds (or `12,345`) into nanoseconds.
pub fn secs_to_ns(s: &[u8]) -> Option<u64> {
    decimal_scaled(s, 9)
}

/// Parses a duration with a unit suffix (`1.626ms`, `0.00s`, `12345ns`, `3us`) into ns.
pub fn duration_with_unit(s: &[u8]) -> Option<u64> {
    let (num, scale) = if let Some(n) = s.strip_suffix(b"ms") {
        (n, 6)
    } else if let Some(n) = s.strip_suffix(b"us") {
        (n, 3)
    } else if let Some(n) = s.strip_suffix(b"ns") {
        (n, 0)
    } else if let Some(n) = s.strip_suffix(b"s") {
        (n, 9)
    } else {
        return None;
    };
    decimal_scaled(num, scale)
}

/// Parses an ISO-8601 time stamp as HotSpot prints it (`2026-11-21T22:42:43.549+0000`,
/// also `+01:00` or `Z`) into milliseconds since the Unix epoch.
pub fn iso_timestamp_ms(s: &[u8]) -> Option<i64> {
    if let Ok(usual) = <&[u8; 28]>::try_from(s) {
        if let Some(ms) = hotspot_timestamp_ms(usual) {
            return Some(ms);
        }
    }
    any_iso_timestamp_ms(s)
}

/// [`iso_timestamp_ms`] of any of the forms it reads (and without the minute of the last
/// stamp read: what the tests of the readers that remember it compare with).
pub(crate) fn any_iso_timestamp_ms(s: &[u8]) -> Option<i64> {
    if s.len() < 19 || s[4] != b'-' || s[7] != b'-' || s[10] != b'T' || s[13] != b':' {
        return None;
    }
    let field = |a: usize, b: usize| -> Option<i64> {
        let mut v = 0i64;
        for &c in &s[a..b] {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + i64::from(c - b'0');
        }
        Some(v)
    };
    let (year, month, day) = (field(0, 4)?, field(5, 7)?, field(8, 10)?);
    let (hour, min, sec) = (field(11, 13)?, field(14, 16)?, field(17, 19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || min > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut millis = 0i64;
    if i < s.len() && (s[i] == b'.' || s[i] == b',') {
        i += 1;
        let mut scale = 100;
        while i < s.len() && s[i].is_ascii_digit() {
            millis += i64::from(s[i] - b'0') * scale;
            scale /= 10;
            i += 1;
        }
    }
    let mut offset_min = 0i64;
    if i < s.len() {
        match s[i] {
            b'Z' => i += 1,
            b'+' | b'-' => {
                let sign = if s[i] == b'-' { -1 } else { 1 };
                let rest = &s[i + 1..];
                // `+0100` or `+01:00`, without allocating (this runs on every JDK 8 line).
                let mut digits = [0u8; 4];
                let mut count = 0;
                for &c in rest.iter().filter(|&&c| c != b':') {
                    if count == 4 || !c.is_ascii_digit() {
                        return None;
                    }
                    digits[count] = c;
                    count += 1;
                }
                if count != 4 {
                    return None;
                }
                let hh = i64::from(digits[0] - b'0') * 10 + i64::from(digits[1] - b'0');
                let mm = i64::from(digits[2] - b'0') * 10 + i64::from(digits[3] - b'0');
                offset_min = sign * (hh * 60 + mm);
                i = s.len();
            }
            _ => return None,
        }
    }
    if i != s.len() {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + min * 60 + sec - offset_min * 60;
    Some(secs * 1000 + millis)
}

/// The minute of the last stamp read by [`hotspot_timestamp_ms`] on this thread: the lines
/// of a JDK 8 log follow each other within the same minute, and each is looked at several
/// times (by the stitcher, then the parser), so most stamps need only their seconds read.
#[derive(Clone, Copy)]
struct MinuteRead {
    /// `2026-11-21T22:42:` and `+0000`.
    minute: [u8; 17],
    offset: [u8; 5],
    /// The minute's start, in milliseconds since the epoch.
    start_ms: i64,
}

impl MinuteRead {
    /// The minute of stamp `s`, which starts at `start_ms`.
    fn of(s: &[u8; 28], start_ms: i64) -> Self {
        let mut minute = [0; 17];
        minute.copy_from_slice(&s[..17]);
        let mut offset = [0; 5];
        offset.copy_from_slice(&s[23..]);
        MinuteRead {
            minute,
            offset,
            start_ms,
        }
    }
}

/// The minute of the last HotSpot date stamp read through it, kept by a reader of many
/// stamps (a log's parser) rather than by its thread: reaching the thread's own copy cost
/// a third of reading a stamp in the same minute.
#[derive(Default)]
pub(crate) struct LastMinute(Option<MinuteRead>);

impl LastMinute {
    /// [`iso_timestamp_ms`] of `s`, its minute read again only when it is not the one
    /// remembered.
    #[inline]
    pub(crate) fn read(&mut self, s: &[u8; 28]) -> Option<i64> {
        if let Some(into_minute) = ms_into_minute(s) {
            if let Some(last) = self.0.as_ref().filter(|m| same_minute(s, m)) {
                return Some(last.start_ms + into_minute);
            }
            // Another minute: the thread's minute is likely this one (the stitcher reads a
            // line's stamp before the parser), and a reader made for one line (the probe of
            // a file's first lines) keeps none of its own.
            if let Some(ms) = hotspot_timestamp_ms(s) {
                self.0 = Some(MinuteRead::of(s, ms - into_minute));
                return Some(ms);
            }
        }
        any_iso_timestamp_ms(s)
    }
}

std::thread_local! {
    static LAST_MINUTE: std::cell::Cell<Option<MinuteRead>> = const { std::cell::Cell::new(None) };
}

/// [`iso_timestamp_ms`] of the stamp HotSpot prints (`2026-11-21T22:42:43.549+0000`), read
/// in one pass without the general case's searching (it runs on every line of a JDK 8 log
/// with `-XX:+PrintGCDateStamps`); `None` for anything else, which the general case reads.
fn hotspot_timestamp_ms(s: &[u8; 28]) -> Option<i64> {
    let into_minute = ms_into_minute(s)?;
    let last = LAST_MINUTE.get();
    if let Some(last) = last.filter(|m| same_minute(s, m)) {
        return Some(last.start_ms + into_minute);
    }
    let ms = read_hotspot_timestamp_ms(s)?;
    LAST_MINUTE.set(Some(MinuteRead::of(s, ms - into_minute)));
    Some(ms)
}

/// Whether stamp `s` is in the minute `read` was read from. Compared as integers:
/// comparing the slices calls `memcmp`, which costs more than the comparison.
fn same_minute(s: &[u8; 28], read: &MinuteRead) -> bool {
    let (minute, offset) = (&s[..17], &s[23..]);
    let wide = |bytes: &[u8]| u128::from_ne_bytes(bytes[..16].try_into().expect("16 bytes"));
    let narrow = |bytes: &[u8]| u32::from_ne_bytes(bytes[..4].try_into().expect("4 bytes"));
    wide(minute) == wide(&read.minute)
        && minute[16] == read.minute[16]
        && narrow(offset) == narrow(&read.offset)
        && offset[4] == read.offset[4]
}

/// `43.549` of `2026-11-21T22:42:43.549+0000`, in milliseconds (a leap second's `60`
/// included).
#[inline]
fn ms_into_minute(s: &[u8; 28]) -> Option<i64> {
    let digit = |at: usize| s[at].is_ascii_digit().then(|| i64::from(s[at] - b'0'));
    let seconds = digit(17)? * 10 + digit(18)?;
    let millis = digit(20)? * 100 + digit(21)? * 10 + digit(22)?;
    (s[19] == b'.' && seconds <= 60).then_some(seconds * 1000 + millis)
}

/// [`hotspot_timestamp_ms`] without the minute remembered.
fn read_hotspot_timestamp_ms(s: &[u8; 28]) -> Option<i64> {
    let separators_in_place = s[4] == b'-'
        && s[7] == b'-'
        && s[10] == b'T'
        && s[13] == b':'
        && s[16] == b':'
        && s[19] == b'.'
        && matches!(s[23], b'+' | b'-');
    if !separators_in_place {
        return None;
    }
    let mut digits_ok = true;
    let mut number = |from: usize, to: usize| {
        s[from..to].iter().fold(0i64, |value, &c| {
            digits_ok &= c.is_ascii_digit();
            value * 10 + i64::from(c.wrapping_sub(b'0'))
        })
    };
    let (year, month, day) = (number(0, 4), number(5, 7), number(8, 10));
    let (hour, min, sec, millis) = (
        number(11, 13),
        number(14, 16),
        number(17, 19),
        number(20, 23),
    );
    let (offset_hours, offset_mins) = (number(24, 26), number(26, 28));
    if !digits_ok
        || !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || min > 59
        || sec > 60
    {
        return None;
    }
    let sign = if s[23] == b'-' { -1 } else { 1 };
    let offset_min = sign * (offset_hours * 60 + offset_mins);
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + min * 60 + sec - offset_min * 60;
    Some(secs * 1000 + millis)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pauselab_pause::civil::format_epoch_ms;

    #[test]
    fn decimals_with_point_or_comma() {
        assert_eq!(secs_to_ns(b"0.0085510"), Some(8_551_000));
        assert_eq!(secs_to_ns(b"0,246"), Some(246_000_000));
        assert_eq!(secs_to_ns(b"12"), Some(12_000_000_000));
        assert_eq!(secs_to_ns(b"1.1234567891"), Some(1_123_456_789));
        assert_eq!(secs_to_ns(b""), None);
        assert_eq!(secs_to_ns(b"."), None);
        assert_eq!(secs_to_ns(b"1.2x"), None);
        assert_eq!(secs_to_ns(b"99999999999999999999"), None);
        assert_eq!(decimal_scaled(b"18446744073709551615", 0), Some(u64::MAX));
        assert_eq!(decimal_scaled(b"18446744073709551616", 0), None);
        assert_eq!(decimal_scaled(b"1.5", 20), None);
        // Past nineteen digits, read again with each digit checked.
        assert_eq!(decimal_scaled(b"18446744073709551615", 0), Some(u64::MAX));
        assert_eq!(decimal_scaled(b"18446744073709551616", 0), None);
        assert_eq!(decimal_scaled(b"99999999999999999999", 0), None);
        assert_eq!(decimal_scaled(b"000000000000000000000012.5", 1), Some(125));
        assert_eq!(duration_with_unit(b"1.626ms"), Some(1_626_000));
        assert_eq!(duration_with_unit(b"0,01s"), Some(10_000_000));
        assert_eq!(duration_with_unit(b"4155ns"), Some(4155));
        assert_eq!(duration_with_unit(b"12M"), None);
    }

    #[test]
    fn iso_timestamps_with_offsets() {
        let utc = iso_timestamp_ms(b"2026-11-21T22:42:43.549+0000").unwrap();
        assert_eq!(format_epoch_ms(utc), "2026-11-21T22:42:43.549Z");
        let plus_one = iso_timestamp_ms(b"2012-10-19T18:28:46.210+0100").unwrap();
        assert_eq!(format_epoch_ms(plus_one), "2012-10-19T17:28:46.210Z");
        assert_eq!(
            iso_timestamp_ms(b"2012-10-19T18:28:46.210+01:00"),
            Some(plus_one)
        );
        assert_eq!(iso_timestamp_ms(b"1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(iso_timestamp_ms(b"2012-13-19T18:28:46.210+0100"), None);
        assert_eq!(iso_timestamp_ms(b"not a date at all!!!"), None);
    }

    /// The digits at the start and the end of `bytes` (at most `most` at the end), read
    /// one by one.
    fn digits_one_by_one(bytes: &[u8], most: usize) -> ((u64, usize), (u64, usize)) {
        let value = |digits: &[u8]| digits.iter().fold(0, |v, &d| v * 10 + u64::from(d - b'0'));
        let first = bytes.iter().take_while(|c| c.is_ascii_digit()).count();
        let last = bytes
            .iter()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .count()
            .min(most);
        (
            (value(&bytes[..first]), first),
            (value(&bytes[bytes.len() - last..]), last),
        )
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]

        /// Digits looked at eight bytes at once read as one by one, whatever bytes are
        /// around them (those next to the digits' in value above all).
        #[test]
        fn few_digits_read_as_one_by_one(
            bytes in proptest::collection::vec(proptest::sample::select(
                b"0123456789/:.,K ->(\x00\xff\xb0\xb9\x8a\x7f".to_vec()), 0..12),
            most in 0usize..10,
        ) {
            let (first, last) = digits_one_by_one(&bytes, most);
            let leading = few_leading_digits(&bytes);
            let trailing = few_trailing_digits(&bytes, most);
            proptest::prop_assert_eq!(leading, (bytes.len() >= 8 && first.1 < 8).then_some(first));
            proptest::prop_assert_eq!(trailing, (bytes.len() >= 8 && last.1 < 8).then_some(last));
        }
    }

    proptest::proptest! {
        /// HotSpot's stamps read in one pass read as the general parser reads them, and
        /// anything it does not read is left to that parser.
        #[test]
        fn the_usual_stamp_reads_as_any_stamp_reads(
            bytes in proptest::collection::vec(
                proptest::sample::select(b"0123456789-T:.+,Z 9".to_vec()), 28..=28),
            date in (1900i64..2100, 1i64..=13, 0i64..=32, 0i64..=24, 0i64..=60, 0i64..=61,
                0i64..1000, proptest::bool::ANY, 0i64..24, 0i64..60),
        ) {
            let (year, month, day, hour, min, sec, ms, east, off_h, off_m) = date;
            let sign = if east { '+' } else { '-' };
            let stamp = format!(
                "{year:04}-{month:02}-{day:02}T{hour:02}:{min:02}:{sec:02}.{ms:03}{sign}{off_h:02}{off_m:02}"
            );
            // The same minute again, another second: read from the minute remembered.
            let mut later = stamp.clone().into_bytes();
            later[18] = b'0' + (later[18] - b'0' + 3) % 10;
            later[21] = b'7';
            // And in another time zone.
            let mut elsewhere = later.clone();
            elsewhere[25] = b'0' + (elsewhere[25] - b'0' + 1) % 10;
            // And each digit of the minute or the offset changed in turn, after the minute
            // was remembered.
            let changed = (0..17).chain(23..28).filter(|&at| later[at].is_ascii_digit()).map(|at| {
                let mut other = later.clone();
                other[at] = b'0' + (other[at] - b'0' + 1) % 10;
                other
            });
            let texts = [bytes.clone(), stamp.clone().into_bytes(), later.clone(), elsewhere, bytes.clone()];
            for text in texts.into_iter().chain(changed.flat_map(|other| [later.clone(), other])) {
                let text = &text[..];
                let usual = hotspot_timestamp_ms(text.try_into().unwrap());
                proptest::prop_assert!(usual.is_none() || usual == any_iso_timestamp_ms(text));
                proptest::prop_assert_eq!(iso_timestamp_ms(text), any_iso_timestamp_ms(text));
            }
        }
    }
}
