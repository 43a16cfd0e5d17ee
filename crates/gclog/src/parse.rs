//! The line parser: one GC or safepoint log line in, at most one record out.
//!
//! Works on bytes (no UTF-8 validation on the hot path) and recognises, per line, JDK 8
//! `-XX:+PrintGCDetails` output and unified logging (`-Xlog`, JDK 9+) with any decorations.
//! It keeps no state that changes a result ([`LineParser`] remembers the decorations of
//! the line before only to save reading them again): pairing records (a pause with its CPU times or its safepoint) is the
//! analyzer's job, so the parser can be fuzzed and tested line by line.

use std::borrow::Cow;

use pauselab_pause::known_text::{known_or_owned, Assembled};
use pauselab_pause::Collector;

use crate::num::{decimal_scaled, duration_with_unit, iso_timestamp_ms, secs_to_ns, POW10};

mod memory;
mod timeout;
pub use memory::size_bytes;

pub use pauselab_pause::record::{
    Cpu, CpuLoad, Failure, Failures, Format, GcCycle, GcPause, Generations, HeapChange, OldChange,
    OutOfMemory, Parsed, Record, Safepoint, Stall, StallKind, Stamp, TimeoutLine,
};

/// Why a line was not understood.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unparsed {
    /// Looks like a pause or safepoint line but its numbers could not be read.
    Malformed,
    /// A JDK 8 event whose brackets do not close on the line (split by concurrent output).
    Incomplete,
    /// Not a GC log line at all.
    Unknown,
}

/// Parses one line (without its newline). [`LineParser::parse`] for the lines of a log,
/// one after the other.
pub fn parse_line(line: &[u8]) -> Result<Parsed, Unparsed> {
    LineParser::default().parse(line)
}

/// Parses the lines of a log one after the other, remembering the decorations of the line
/// before and the minute of the last JDK 8 date stamp read:
/// the result for a line is what [`parse_line`] gives.
#[derive(Default)]
pub struct LineParser {
    /// All of the last line's decorations, with the stamp they gave.
    decorations: RememberedBytes,
    stamp: Stamp,
    /// The last line's decorations after the first, when they held no number.
    tail: RememberedBytes,
    last_date: LastDate,
    /// An event of Parallel's was read: its readers are tried first (see
    /// [`LineParser::parse_after_stamps`]).
    parallel_events: bool,
}

/// The minute of the last JDK 8 date stamp a [`LineParser`] read: the lines of a log follow
/// each other within a minute, and most stamps need only their seconds read (a stamp's
/// calendar arithmetic costs more than the rest of a line outside an event).
#[derive(Default)]
struct LastDate(crate::num::LastMinute);

impl LastDate {
    /// [`iso_timestamp_ms`] of `stamp`.
    #[inline]
    fn read(&mut self, stamp: &[u8; DATE_STAMP_LEN]) -> Option<i64> {
        self.0.read(stamp)
    }
}

impl LineParser {
    /// Parses one line (without its newline).
    pub fn parse(&mut self, line: &[u8]) -> Result<Parsed, Unparsed> {
        match line.first() {
            None => Ok(Parsed {
                format: Format::Jdk8,
                stamp: Stamp::default(),
                record: Record::Other,
            }),
            Some(b'[') => match parse_decorations_by::<true>(line, self) {
                Some((stamp, msg)) => Ok(Parsed {
                    format: Format::Unified,
                    stamp,
                    record: parse_unified_message(msg)?,
                }),
                None => parse_jdk8(line, &mut self.last_date),
            },
            // Told by its last eight bytes: few other lines end so.
            Some(b'0'..=b'9') if line.ends_with(b" seconds") => {
                match usual_application_time_line(line, &mut self.last_date) {
                    Some(parsed) => Ok(parsed),
                    None => parse_jdk8(line, &mut self.last_date),
                }
            }
            _ => parse_jdk8(line, &mut self.last_date),
        }
    }

    /// [`LineParser::parse`] of a JDK 8 line whose stamps were read already: `stamps` is
    /// what [`usual_jdk8_prefix`] gives for `line`, and the text after them starts with a
    /// `[` (an event's first line, read by the stitcher to tell that it opens one).
    pub(crate) fn parse_after_stamps(
        &mut self,
        line: &[u8],
        stamps: LeadingStamps,
    ) -> Result<Parsed, Unparsed> {
        let (rest, stamp) = (&line[stamps.rest_at..], stamps.stamp());
        // A log holds one collector's events: once an event of Parallel's was read, its
        // readers go first (after those of CMS's and G1's events, which each event of a
        // Parallel log failed: 270 instructions of its 5,900). No other reader reads what
        // they read, so the order changes no result.
        if self.parallel_events {
            if let Some(mut pause) = usual_parallel_event(rest) {
                pause.start = stamp;
                return jdk8_parsed(stamp, Record::Pause(pause));
            }
        }
        // The stamps are followed by a `[`: no uptime is glued to the text after them.
        let parsed = jdk8_bracketed(rest, stamp);
        if !self.parallel_events {
            if let Ok(Parsed {
                record: Record::Pause(pause),
                ..
            }) = &parsed
            {
                self.parallel_events =
                    pause.collector == Some(Collector::Parallel) || pause.name == PARALLEL_YOUNG;
            }
        }
        parsed
    }
}

// ---------------------------------------------------------------------------------------
// Unified logging

/// Splits `[dec][dec]... message` into a stamp and the message. `None` when the brackets
/// are not a valid decoration set. `QUICK`: with the one-pass reading of the usual
/// decorations and the decorations `parser` remembers (and then remembers this line's);
/// without, each decoration is read apart. The tests check that both give the same result
/// for any line.
fn parse_decorations_by<'l, const QUICK: bool>(
    line: &'l [u8],
    parser: &mut LineParser,
) -> Option<(Stamp, &'l [u8])> {
    if QUICK && parser.decorations.begins(line) {
        return Some((parser.stamp, &line[parser.decorations.len..]));
    }
    let mut found = Decorations::default();
    let mut pos = 0;
    // Where the decorations after the first begin, and how many numbers were read by then.
    let mut tail_start = None;
    let msg = loop {
        let quick = if QUICK {
            quick_decoration(line, pos + 1, &mut found)
        } else {
            None
        };
        let close = match quick {
            Some(close) => close,
            None => {
                let close = pos + 1 + memchr::memchr(b']', &line[pos + 1..])?;
                found.classify(trim_spaces(&line[pos + 1..close]))?;
                close
            }
        };
        pos = close + 1;
        match line.get(pos) {
            Some(b'[') => {
                if QUICK && tail_start.is_none() {
                    if let Some(msg) = parser.tail.skip(&line[pos..]) {
                        break msg;
                    }
                    tail_start = Some((pos, found.numbers_read));
                }
                continue;
            }
            Some(b' ') => {
                if let Some((start, numbers_read)) = tail_start {
                    if QUICK && found.numbers_read == numbers_read {
                        parser.tail.set(&line[start..=pos]);
                    }
                }
                break &line[pos + 1..];
            }
            None => break &line[pos..],
            _ => return None,
        }
    };
    let stamp = found.into_stamp();
    let msg_start = line.len() - msg.len();
    if QUICK && line[..msg_start].ends_with(b"] ") && parser.decorations.set(&line[..msg_start]) {
        parser.stamp = stamp;
    }
    Some((stamp, msg))
}

/// Decorations remembered from the line before, with the space after them. Two memos: all of a line's decorations (`[12.345s][info][gc,phases    ] `) with
/// the stamp they gave, and those after the first when they held no number (levels, tags
/// and host names, which change nothing in a stamp). Most lines of a log repeat both (a
/// `gc*` log's details share their collection's stamp), so a line that begins with the
/// remembered bytes has its stamp and message without reading them again: the bytes up to
/// a decoration's `] ` decide how it reads, whatever follows (a property test reads lines
/// both ways).
struct RememberedBytes {
    bytes: [u8; RememberedBytes::MAX],
    len: usize,
}

impl RememberedBytes {
    /// Longest decorations remembered: an uptime, a level and padded tags are about 35
    /// bytes.
    const MAX: usize = 64;

    /// What follows the remembered bytes at the start of `rest`, when they are there.
    #[inline]
    fn skip<'l>(&self, rest: &'l [u8]) -> Option<&'l [u8]> {
        self.begins(rest).then(|| &rest[self.len..])
    }

    /// `rest` begins with the remembered bytes (never when none are). Compared eight bytes
    /// at a time: `starts_with` calls `memcmp`, which costs more than the comparison of
    /// twenty bytes.
    #[inline]
    fn begins(&self, rest: &[u8]) -> bool {
        let (Some(rest), Some(known)) = (rest.get(..self.len), self.bytes.get(..self.len)) else {
            return false;
        };
        let mut at = 0;
        while at + 8 <= self.len {
            let eight = |s: &[u8]| {
                <[u8; 8]>::try_from(&s[at..at + 8])
                    .ok()
                    .map(u64::from_ne_bytes)
            };
            if eight(rest) != eight(known) {
                return false;
            }
            at += 8;
        }
        self.len > 0 && rest[at..].iter().zip(&known[at..]).all(|(a, b)| a == b)
    }

    /// Remembers `bytes` when they fit; false when they do not (nothing is remembered).
    fn set(&mut self, bytes: &[u8]) -> bool {
        let fits = bytes.len() <= RememberedBytes::MAX;
        self.len = if fits { bytes.len() } else { 0 };
        if fits {
            self.bytes[..bytes.len()].copy_from_slice(bytes);
        }
        fits
    }
}

impl Default for RememberedBytes {
    fn default() -> Self {
        RememberedBytes {
            bytes: [0; RememberedBytes::MAX],
            len: 0,
        }
    }
}

/// What the decorations of one line said, until they are all read.
#[derive(Default)]
struct Decorations {
    stamp: Stamp,
    uptime_secs: Option<u64>,
    uptime_millis: Option<u64>,
    nanos: [Option<u64>; 2],
    /// Bare numbers seen: pid, then tid.
    numbers: u32,
    /// Decorations read that start with a digit (any number or date).
    numbers_read: u32,
}

impl Decorations {
    /// Reads one decoration, trimmed of its padding. `None` when it cannot be one.
    fn classify(&mut self, token: &[u8]) -> Option<()> {
        // All blanks: the tags of a line that has none (`[warning][     ]`, JDK 17+ async
        // logging's drop notices), or the decorations of a message's second line, blanked
        // (JDK 25).
        let Some(&first) = token.first() else {
            return Some(());
        };
        if first.is_ascii_digit() {
            self.numbers_read += 1;
            if token.len() >= 19 && token[4] == b'-' {
                self.stamp.wall_ms = Some(iso_timestamp_ms(token)?);
            } else if let Some(n) = token.strip_suffix(b"ns") {
                let v = decimal_scaled(n, 0)?;
                let slot = if self.nanos[0].is_none() { 0 } else { 1 };
                self.nanos[slot] = Some(v);
            } else if let Some(n) = token.strip_suffix(b"ms") {
                let v = decimal_scaled(n, 0)?;
                // `timemillis` is the epoch (13 digits today), `uptimemillis` a JVM uptime.
                if v > 100_000_000_000 {
                    self.stamp.wall_ms = Some(v as i64);
                } else {
                    self.uptime_millis = Some(v * 1_000_000);
                }
            } else if let Some(n) = token.strip_suffix(b"s") {
                self.uptime_secs = Some(secs_to_ns(n)?);
            } else {
                // pid, then tid (a lone number may be either: see `into_stamp`)
                let v = decimal_scaled(token, 0)?;
                if self.numbers == 0 {
                    self.stamp.pid = Some(v);
                }
                self.numbers += 1;
            }
            return Some(());
        }
        // level, tags or hostname: short words without spaces inside (tags are padded, which
        // trim_spaces removed) and no characters a JDK 8 bracket would contain.
        if token.len() > MAX_WORD || !token.iter().all(|&c| WORD_BYTES[usize::from(c)]) {
            return None;
        }
        Some(())
    }

    fn into_stamp(self) -> Stamp {
        let mut stamp = self.stamp;
        // A bare number is the pid only when the tid follows it: `tid` alone looks the same,
        // and a thread id taken for a pid would make one JVM look like several.
        if self.numbers < 2 {
            stamp.pid = None;
        }
        // Prefer the uptime decoration that is surely JVM uptime; of two nanosecond values
        // the smaller is `uptimenanos` (the other is the monotonic clock since boot).
        stamp.uptime_ns = self
            .uptime_secs
            .or(self.uptime_millis)
            .or(match self.nanos {
                [Some(a), Some(b)] => Some(a.min(b)),
                [a, b] => a.or(b),
            });
        stamp
    }
}

/// Longest level, tags or hostname decoration.
const MAX_WORD: usize = 256;

/// The decorations nearly every line has, `uptime` in seconds (`12.345s`), a level and
/// tags (`info`, `gc,phases   `), read in one pass from `start` (just after `[`): the index
/// of the closing `]`, or `None` for any other decoration, left to
/// [`Decorations::classify`] (which reads these the same way, in several passes: finding
/// the `]`, trimming, then the number; a third of the time of a `gc*` log's lines).
fn quick_decoration(line: &[u8], start: usize, found: &mut Decorations) -> Option<usize> {
    let mut i = start;
    while line.get(i) == Some(&b' ') {
        i += 1;
    }
    if line.get(i)?.is_ascii_digit() {
        found.numbers_read += 1;
        let mut int: u64 = 0;
        while let Some(&c) = line.get(i).filter(|c| c.is_ascii_digit()) {
            int = int.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
            i += 1;
        }
        let (mut frac, mut frac_digits) = (0, 0);
        if matches!(line.get(i), Some(b'.' | b',')) {
            i += 1;
            while let Some(&c) = line.get(i).filter(|c| c.is_ascii_digit()) {
                // Nanoseconds: further digits are dropped, as `secs_to_ns` drops them.
                if frac_digits < 9 {
                    frac = frac * 10 + u64::from(c - b'0');
                    frac_digits += 1;
                }
                i += 1;
            }
        }
        if line.get(i) != Some(&b's') {
            return None;
        }
        let close = closing_bracket(line, i + 1)?;
        found.uptime_secs = Some(
            int.checked_mul(1_000_000_000)?
                .checked_add(frac * 10u64.pow(9 - frac_digits))?,
        );
        return Some(close);
    }
    let word_start = i;
    while line.get(i).is_some_and(|&c| WORD_BYTES[usize::from(c)]) {
        i += 1;
    }
    if i == word_start || i - word_start > MAX_WORD {
        return None;
    }
    closing_bracket(line, i)
}

/// The index of the `]` at `at`, after padding.
fn closing_bracket(line: &[u8], mut at: usize) -> Option<usize> {
    while line.get(at) == Some(&b' ') {
        at += 1;
    }
    (line.get(at) == Some(&b']')).then_some(at)
}

/// The bytes of a level, tags or hostname decoration, as a table: this runs on every byte
/// of every unified line's tags.
const WORD_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        table[c] = b.is_ascii_alphanumeric() || matches!(b, b',' | b'+' | b'_' | b'-' | b'.');
        c += 1;
    }
    table
};

fn trim_spaces(s: &[u8]) -> &[u8] {
    let mut end = s.len();
    // Eight spaces at a time, then four, two and one: unified logging pads its tags with
    // up to a dozen.
    // (Compared as integers: comparing slices calls memcmp.)
    while end >= 8 && <[u8; 8]>::try_from(&s[end - 8..end]).is_ok_and(|b| b == [b' '; 8]) {
        end -= 8;
    }
    if end >= 4 && <[u8; 4]>::try_from(&s[end - 4..end]).is_ok_and(|b| b == [b' '; 4]) {
        end -= 4;
    }
    if end >= 2 && s[end - 2] == b' ' && s[end - 1] == b' ' {
        end -= 2;
    }
    if end >= 1 && s[end - 1] == b' ' {
        end -= 1;
    }
    let mut start = 0;
    while start < end && s[start] == b' ' {
        start += 1;
    }
    &s[start..end]
}

fn parse_unified_message(msg: &[u8]) -> Result<Record, Unparsed> {
    if let Some(rest) = msg.strip_prefix(b"GC(") {
        let (gc_id, close) = match gc_id_digits(rest) {
            Some(read) => read,
            None => {
                let close = memchr::memchr(b')', rest).ok_or(Unparsed::Malformed)?;
                let gc_id = decimal_scaled(&rest[..close], 0).ok_or(Unparsed::Malformed)?;
                (gc_id, close)
            }
        };
        let body = rest.get(close + 1..).unwrap_or_default();
        let body = body.strip_prefix(b" ").unwrap_or(body);
        return parse_unified_gc_body(gc_id, body);
    }
    // A log of `-Xlog:safepoint` holds little else: its lines are told first (no other
    // message starts as they do).
    if let Some(rest) = msg.strip_prefix(b"Safepoint \"") {
        return parse_safepoint_fields(rest);
    }
    if let Some(stall) = memory::stall(msg) {
        return stall;
    }
    if let Some(oom) = memory::zgc_out_of_memory(msg) {
        return Ok(oom);
    }
    if let Some(count) = msg.strip_suffix(b" messages dropped due to async logging") {
        return decimal_scaled(trim_spaces(count), 0)
            .map(Record::DroppedMessages)
            .ok_or(Unparsed::Malformed);
    }
    if let Some(rest) = msg.strip_prefix(STOPPED_TIME) {
        return parse_stopped_time(rest).map(Record::Safepoint);
    }
    if let Some(op) = msg.strip_prefix(b"Entering safepoint region: ") {
        return Ok(Record::SafepointBegin(lossy(op)));
    }
    if let Some(name) = msg.strip_prefix(b"Using ") {
        if let Some(collector) = collector_name(name) {
            return Ok(Record::Collector(collector.to_string()));
        }
    }
    if let Some(size) = msg
        .strip_prefix(b"Heap region size: ")
        .or_else(|| msg.strip_prefix(b"Heap Region Size: "))
    {
        if let Some(bytes) = memory::size_bytes(trim_spaces(size)) {
            return Ok(Record::RegionSize(bytes));
        }
    }
    // `-Xlog:arguments`: the JVM's options as given (`jvm_args`) and from flag files.
    if let Some(flags) = msg
        .strip_prefix(b"jvm_args: ")
        .or_else(|| msg.strip_prefix(b"jvm_flags: "))
    {
        return Ok(Record::Flags(lossy(trim_spaces(flags))));
    }
    if let Some(v) = msg.strip_prefix(b"Version: ") {
        let v = v.strip_suffix(b" (release)").unwrap_or(v);
        return Ok(Record::Version(lossy(v)));
    }
    if let Some(record) = timeout::timeout_line(msg) {
        return Ok(record);
    }
    // A stopped-time line with another thread's text glued in front of it is a safepoint
    // that could not be read, not a line to skip.
    if crate::num::find(msg, STOPPED_TIME).is_some() {
        return Err(Unparsed::Malformed);
    }
    Ok(Record::Other)
}

/// A GC id of digits and the index of its `)`, read in one pass (most lines of a `gc*` log
/// carry one); `None` for anything else, which the caller reads the slow way.
fn gc_id_digits(rest: &[u8]) -> Option<(u64, usize)> {
    let mut id: u64 = 0;
    for (at, &c) in rest.iter().enumerate() {
        match c {
            // Nineteen digits always fit: checked only from the twentieth on.
            b'0'..=b'9' if at < 19 => id = id * 10 + u64::from(c - b'0'),
            b'0'..=b'9' => id = id.checked_mul(10)?.checked_add(u64::from(c - b'0'))?,
            b')' if at > 0 => return Some((id, at)),
            _ => return None,
        }
    }
    None
}

/// The text of a JDK 8-16 stopped-time line (`-XX:+PrintGCApplicationStoppedTime`,
/// `-Xlog:safepoint`).
const STOPPED_TIME: &[u8] = b"Total time for which application threads were stopped: ";

/// How `-XX:+PrintGCApplicationConcurrentTime`'s lines (JDK 8) begin after their stamps.
const APPLICATION_TIME: &[u8] = b"Application time: ";

fn collector_name(using: &[u8]) -> Option<&'static str> {
    let using = std::str::from_utf8(using).ok()?;
    Collector::from_log_announcement(using).map(Collector::name)
}

fn parse_unified_gc_body(gc_id: u64, body: &[u8]) -> Result<Record, Unparsed> {
    // Generational ZGC prefixes its phases: `y:` minor (young only) collections, `Y:` the
    // young and `O:` the old generation of major collections.
    // Most lines of a `gc*` log are `gc,phases` details, indented under their GC id
    // (`GC(20)     Object Copy (ms): ...`), or other lines whose first letter none of the
    // records below starts with: dismissed by that byte, before any search.
    if !body.first().is_some_and(|b| b"yYOTPCMGU".contains(b)) {
        return Ok(Record::Other);
    }
    let (prefix, body) = match body {
        [g @ (b'y' | b'Y' | b'O'), b':', b' ', rest @ ..] => (Some(*g), rest),
        _ => (None, body),
    };
    if body == b"To-space exhausted" {
        return Ok(Record::ToSpaceExhausted { gc_id });
    }
    if prefix.is_some() && body.first() == Some(&b'R') {
        // Generational ZGC's workers stall on relocation too, under the collection's id:
        // `GC(54) y: Relocation Stall (ZWorkerYoung#0) 0.352ms`, counted with the others
        // as HotSpot's own statistics count them (`Critical: Relocation Stall`).
        if let Some(stall) = memory::stall(body) {
            return stall;
        }
    }
    if let Some((change, collector)) = memory::old_generation(body) {
        return Ok(Record::OldGeneration {
            gc_id,
            change,
            collector,
        });
    }
    if let Some(cycle) = memory::cycle(gc_id, body) {
        return Ok(cycle);
    }
    if let Some(rest) = body.strip_prefix(b"Pause ") {
        let Some(space) = memchr::memrchr(b' ', rest) else {
            // "Pause Remark": the start line, no duration yet
            return Ok(Record::PauseStart { gc_id });
        };
        let last = &rest[space + 1..];
        if !last.ends_with(b"ms") || !last.first().is_some_and(u8::is_ascii_digit) {
            // start line of a pause with a cause: "Pause Young (...)"
            return Ok(Record::PauseStart { gc_id });
        }
        let duration_ns = duration_with_unit(last).ok_or(Unparsed::Malformed)?;
        let mut text = trim_spaces(&rest[..space]);
        let heap = memory::last_heap_change(text);
        // Drop the heap transition "12M->1M(256M)".
        if let Some(sp) = memchr::memrchr(b' ', text) {
            if crate::num::find(&text[sp + 1..], b"->").is_some() {
                text = trim_spaces(&text[..sp]);
            }
        } else if crate::num::find(text, b"->").is_some() {
            text = b"";
        }
        let (mut name, cause, failures) = pause_name_and_cause(text);
        if let Some(g) = prefix {
            name = Cow::Owned(format!("{}: {name}", g as char));
        }
        return Ok(Record::Pause(GcPause {
            gc_id: Some(gc_id),
            start: Stamp::default(),
            duration_ns,
            name,
            cause,
            cpu: None,
            heap,
            young: None,
            failures,
            upgraded_to_full: false,
            collector: None,
            generations: None,
            icms_duty_cycle: None,
        }));
    }
    if let Some(rest) = body.strip_prefix(b"User=") {
        return parse_unified_cpu(rest)
            .map(|cpu| Record::Cpu {
                gc_id: Some(gc_id),
                cpu,
            })
            .ok_or(Unparsed::Malformed);
    }
    Ok(Record::Other)
}

/// `0.01s Sys=0.00s Real=0.00s` (after `User=`).
fn parse_unified_cpu(rest: &[u8]) -> Option<Cpu> {
    let mut fields = rest.split(|&c| c == b' ');
    let user = duration_with_unit(fields.next()?)?;
    let sys = duration_with_unit(fields.next()?.strip_prefix(b"Sys=")?)?;
    let real = duration_with_unit(fields.next()?.strip_prefix(b"Real=")?)?;
    Some(Cpu {
        user_ns: user,
        sys_ns: sys,
        real_ns: real,
    })
}

/// `Young (Normal) (G1 Evacuation Pause)` -> ("Pause Young (Normal)", "G1 Evacuation Pause").
/// G1's `(Evacuation Failure[: Allocation|Pinned])` (JDK 17+) is a failure, not a name.
fn pause_name_and_cause(text: &[u8]) -> (Cow<'static, str>, Option<Cow<'static, str>>, Failures) {
    let paren = memchr::memchr(b'(', text).unwrap_or(text.len());
    let base = trim_spaces(&text[..paren]);
    let mut groups = paren_groups(&text[paren..]);
    let before = groups.len();
    groups.retain(|g| !g.starts_with(b"Evacuation Failure"));
    let failures = Failures {
        evacuation: groups.len() != before,
        ..Failures::default()
    };
    let mut name = Assembled::new();
    name.push(b"Pause ");
    name.push(base);
    let has_cause = matches!(base, b"Young" | b"Full" | b"Initial Mark" | b"Mixed");
    let mut cause = None;
    for (i, g) in groups.iter().enumerate() {
        let is_last = i + 1 == groups.len();
        if has_cause && is_last && !is_g1_young_kind(g) {
            cause = Some(known_or_owned(g));
        } else {
            name.push(b" (");
            name.push(g);
            name.push(b")");
        }
    }
    (name.finish(), cause, failures)
}

fn is_g1_young_kind(g: &[u8]) -> bool {
    matches!(
        g,
        b"Normal" | b"Mixed" | b"Concurrent Start" | b"Prepare Mixed" | b"Initial Mark"
    )
}

/// The contents of top-level `(...)` groups, nesting respected: `(System.gc())` is one.
fn paren_groups(s: &[u8]) -> Vec<&[u8]> {
    bracket_groups(s, b'(', b')')
}

/// The contents of top-level `open ... close` groups, nesting respected.
fn bracket_groups(s: &[u8], open: u8, close: u8) -> Vec<&[u8]> {
    top_level_groups(s, open, close).collect()
}

/// [`bracket_groups`] one at a time, without collecting them.
fn top_level_groups(s: &[u8], open: u8, close: u8) -> impl Iterator<Item = &[u8]> {
    let mut depth = 0usize;
    let mut start = 0;
    crate::scan::any_of(s, [open, close]).filter_map(move |i| {
        if s[i] == open {
            if depth == 0 {
                start = i + 1;
            }
            depth += 1;
        } else if depth > 0 {
            depth -= 1;
            if depth == 0 {
                return Some(&s[start..i]);
            }
        }
        None
    })
}

/// JDK 17+: `NAME", Time since last: N ns, Reaching safepoint: N ns, [Cleanup: N ns,]
/// At safepoint: N ns, [Leaving safepoint: N ns,] Total: N ns[, Threads: ...]`.
/// Fields are found by name: their set and order differ between releases.
fn parse_safepoint_fields(rest: &[u8]) -> Result<Record, Unparsed> {
    // The name's closing quote is a few bytes on: `memchr`'s set-up costs more than the
    // search.
    let quote = crate::scan::any_of(rest, [b'"'])
        .next()
        .ok_or(Unparsed::Malformed)?;
    let operation = known_or_owned(&rest[..quote]);
    let fields = &rest[quote + 1..];
    let (ttsp_ns, total_ns) = match usual_safepoint_fields(fields) {
        Some((ttsp, total)) => (Some(ttsp), total),
        None => any_safepoint_fields(fields)?,
    };
    Ok(Record::Safepoint(Safepoint {
        start: Stamp::default(),
        total_ns,
        ttsp_ns,
        operation: Some(operation),
    }))
}

/// The time to reach the safepoint and the total of [`parse_safepoint_fields`]' fields as
/// JDK 17 to 25 print them, read straight through: `, Time since last: N ns, Reaching
/// safepoint: N ns, [Cleanup: N ns, ]At safepoint: N ns, [Leaving safepoint: N ns, ]Total:
/// N ns` and the line's end. `None` for anything else, which [`any_safepoint_fields`]
/// reads: splitting the fields and trimming each cost 1,500 instructions a line, a log of
/// safepoints holding little else.
fn usual_safepoint_fields(text: &[u8]) -> Option<(u64, u64)> {
    /// The field `key`, its value read as [`decimal_scaled`] reads whole digits, and what
    /// follows it. The key is compared as an array: as a slice, each comparison called
    /// `memcmp`.
    #[inline(always)]
    fn field<'t, const N: usize>(text: &'t [u8], key: &[u8; N]) -> Option<(u64, &'t [u8])> {
        let value = text.strip_prefix(b", ")?;
        let (name, value) = value.split_first_chunk::<N>()?;
        if name != key {
            return None;
        }
        let value = value.strip_prefix(b": ")?;
        // Fewer than eight digits (most values) read from one load; more a digit at a time.
        let (ns, digits) = crate::num::few_leading_digits(value).unwrap_or_else(|| {
            let mut ns = 0u64;
            let mut digits = 0;
            for &c in value.iter().take_while(|c| c.is_ascii_digit()) {
                ns = ns.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
                digits += 1;
            }
            (ns, digits)
        });
        // Nineteen digits cannot overflow; a longer number is left to the reader by name,
        // which tells whether it fits (checking each digit cost 5 % of a log of safepoints).
        if digits == 0 || digits > 19 {
            return None;
        }
        Some((ns, value[digits..].strip_prefix(b" ns")?))
    }
    let (_, rest) = field(text, b"Time since last")?;
    let (ttsp, rest) = field(rest, b"Reaching safepoint")?;
    let rest = field(rest, b"Cleanup").map_or(rest, |(_, after)| after);
    let (_, rest) = field(rest, b"At safepoint")?;
    let rest = field(rest, b"Leaving safepoint").map_or(rest, |(_, after)| after);
    let (total, rest) = field(rest, b"Total")?;
    rest.is_empty().then_some((ttsp, total))
}

/// [`usual_safepoint_fields`] of any fields, found by name.
fn any_safepoint_fields(fields: &[u8]) -> Result<(Option<u64>, u64), Unparsed> {
    let mut total = None;
    let mut ttsp = None;
    for field in fields.split(|&c| c == b',') {
        let field = trim_spaces(field);
        let Some(colon) = memchr::memchr(b':', field) else {
            continue;
        };
        let key = &field[..colon];
        let value = trim_spaces(&field[colon + 1..]);
        let slot = match key {
            b"Total" => &mut total,
            b"Reaching safepoint" => &mut ttsp,
            _ => continue,
        };
        let num = value.strip_suffix(b" ns").ok_or(Unparsed::Malformed)?;
        *slot = Some(decimal_scaled(num, 0).ok_or(Unparsed::Malformed)?);
    }
    Ok((ttsp, total.ok_or(Unparsed::Malformed)?))
}

/// [`parse_jdk8`] of a line of `-XX:+PrintGCApplicationStoppedTime` or
/// `-XX:+PrintGCApplicationConcurrentTime` as HotSpot writes it, its stamps the usual ones
/// (`2020-09-13T12:26:50.000+0000: 10.000: Total time for which application threads were
/// stopped: 0.0004130 seconds, Stopping threads took: 0.0000120 seconds`, `...: Application
/// time: 0.9874560 seconds`), read straight through; `None` for any other line, which
/// `parse_jdk8` reads. A tenth of the lines of a JDK 8 log are stopped times: the general
/// way, through its tests for other kinds of line and with its answers moved from call to
/// call, cost 460 instructions a line.
#[inline(always)]
fn usual_application_time_line(line: &[u8], last_date: &mut LastDate) -> Option<Parsed> {
    let (stamp, rest) = usual_jdk8_stamps(line, |date| last_date.read(date))?;
    let record = match rest.strip_prefix(STOPPED_TIME) {
        Some(times) => Record::Safepoint(usual_stopped_time(times)?),
        None if rest.starts_with(APPLICATION_TIME) => Record::Other,
        None => return None,
    };
    Some(Parsed {
        format: Format::Jdk8,
        stamp,
        record,
    })
}

/// `X seconds, Stopping threads took: Y seconds` (JDK 8-16).
fn parse_stopped_time(rest: &[u8]) -> Result<Safepoint, Unparsed> {
    match usual_stopped_time(rest) {
        Some(safepoint) => Ok(safepoint),
        None => any_stopped_time(rest),
    }
}

/// [`parse_stopped_time`] of the line as HotSpot prints it (`0.0001234 seconds, Stopping
/// threads took: 0.0000567 seconds`, or without the time to stop, as JDK 7 and early JDK 8
/// print it), read straight through; `None` for anything else, which [`any_stopped_time`]
/// reads.
#[inline(always)]
fn usual_stopped_time(rest: &[u8]) -> Option<Safepoint> {
    const BETWEEN: &[u8] = b" seconds, Stopping threads took: ";
    let (total_ns, end) = usual_fine_seconds(rest)?;
    let after_total = &rest[end..];
    let ttsp_ns = if after_total == b" seconds" {
        None
    } else {
        let ttsp = after_total.strip_prefix(BETWEEN)?;
        let (ttsp_ns, end) = usual_fine_seconds(ttsp)?;
        // The number ends its word, as the general reading takes it.
        if !matches!(ttsp.get(end), None | Some(b' ')) {
            return None;
        }
        Some(ttsp_ns)
    };
    Some(Safepoint {
        start: Stamp::default(),
        total_ns,
        ttsp_ns,
        operation: None,
    })
}

/// [`parse_stopped_time`] of any line.
fn any_stopped_time(rest: &[u8]) -> Result<Safepoint, Unparsed> {
    let mut parts = rest.split(|&c| c == b' ');
    let total_ns = secs_to_ns(parts.next().unwrap_or_default()).ok_or(Unparsed::Malformed)?;
    let ttsp_ns = crate::num::find(rest, b"Stopping threads took: ").and_then(|at| {
        let v = &rest[at + b"Stopping threads took: ".len()..];
        let end = memchr::memchr(b' ', v).unwrap_or(v.len());
        secs_to_ns(&v[..end])
    });
    Ok(Safepoint {
        start: Stamp::default(),
        total_ns,
        ttsp_ns,
        operation: None,
    })
}

// ---------------------------------------------------------------------------------------
// JDK 8 -XX:+PrintGCDetails

/// What [`parse_jdk8`] answers for a line stamped `stamp` that says `record`.
fn jdk8_parsed(stamp: Stamp, record: Record) -> Result<Parsed, Unparsed> {
    Ok(Parsed {
        format: Format::Jdk8,
        stamp,
        record,
    })
}

/// Whether a JDK 8 line's stamps gave it a time on either clock.
fn has_jdk8_stamp(stamp: &Stamp) -> bool {
    stamp.uptime_ns.is_some() || stamp.wall_ms.is_some()
}

fn parse_jdk8(line: &[u8], last_date: &mut LastDate) -> Result<Parsed, Unparsed> {
    if matches!(line.first(), Some(b' ' | b'\t')) {
        // No stamp starts with a blank: the stamps' readers are not asked.
        return indented_jdk8(line, Stamp::default(), last_date);
    }
    // Nor does a line that starts with neither a digit, the `#` of a GC id nor the `.` or
    // `,` an uptime glued to an event may start with (`Heap after GC ...`, `}`: the heap
    // printed after a CMS event, outside it).
    let (stamp, rest) = if matches!(line.first(), Some(b'0'..=b'9' | b'#' | b'.' | b',')) {
        let (mut stamp, mut rest) = jdk8_prefix_reading(line, |date| last_date.read(date));
        if let Some((ns, after)) = glued_uptime(rest) {
            stamp.uptime_ns = Some(ns);
            rest = after;
        }
        (stamp, rest)
    } else {
        (Stamp::default(), line)
    };
    let has_stamp = has_jdk8_stamp(&stamp);
    match rest.first() {
        Some(b'[') => {}
        Some(b' ' | b'\t') => return indented_jdk8(rest, stamp, last_date),
        Some(_) => return parse_jdk8_text(rest, stamp, has_stamp),
        None => {
            return if has_stamp {
                jdk8_parsed(stamp, Record::Other)
            } else {
                Err(Unparsed::Unknown)
            }
        }
    }
    jdk8_bracketed(rest, stamp)
}

/// [`parse_jdk8`] of the text after a line's stamps (which gave `stamp`) when it starts
/// with a `[`. Inlined into each of its two callers: called, the pause an event is read
/// into was copied twice more on its way out.
#[inline(always)]
fn jdk8_bracketed(rest: &[u8], stamp: Stamp) -> Result<Parsed, Unparsed> {
    let has_stamp = has_jdk8_stamp(&stamp);
    if !has_stamp && is_g1_detail(rest) {
        // G1's details with their indentation stripped (by a log shipper, or an editor).
        if let Some(eden) = rest.strip_prefix(b"[Eden: ") {
            if let Some((heap, young)) = memory::g1_details_heap(eden) {
                return jdk8_parsed(stamp, Record::DetailsHeap { heap, young });
            }
        }
        // As when indented: a full collection's `[Eden: ...], [Metaspace: ...]` adds
        // nothing to its event's heap.
        return jdk8_parsed(stamp, Record::Other);
    }
    if rest.starts_with(b"[GC") || rest.starts_with(b"[Full GC") {
        if rest.starts_with(b"[GC concurrent") {
            return jdk8_parsed(stamp, Record::Other);
        }
        return parse_jdk8_event(rest).map(|mut pause| {
            pause.start = stamp;
            Parsed {
                format: Format::Jdk8,
                stamp,
                record: Record::Pause(pause),
            }
        });
    }
    if rest.starts_with(b"[CMS-concurrent")
        || rest.starts_with(b"[CMS")
        || rest.starts_with(b"[ASCMS")
        // JDK 8 Shenandoah's concurrent phases
        || rest.starts_with(b"[Concurrent ")
        // CMS's concurrent preclean, with -XX:+PrintReferenceGC: `[Preclean SoftReferences,
        // 0.0000049 secs]...[CMS-concurrent-preclean: ...]`
        || rest.starts_with(b"[Preclean ")
    {
        return jdk8_parsed(stamp, Record::Other);
    }
    if let Some(body) = rest.strip_prefix(b"[Pause ") {
        return match parse_jdk8_shenandoah_pause(body)? {
            Some(mut pause) => {
                pause.start = stamp;
                jdk8_parsed(stamp, Record::Pause(pause))
            }
            None => jdk8_parsed(stamp, Record::Other),
        };
    }
    if let Some(times) = rest.strip_prefix(b"[Times: ") {
        return match parse_jdk8_times(times) {
            Some(cpu) => jdk8_parsed(stamp, Record::Cpu { gc_id: None, cpu }),
            None => Err(Unparsed::Malformed),
        };
    }
    if rest.starts_with(b"[PSYoungGen")
        || rest.starts_with(b"[ParNew")
        || rest.starts_with(b"[DefNew")
    {
        // the rest of an event whose start was written on the previous line
        return Err(Unparsed::Incomplete);
    }
    Err(Unparsed::Unknown)
}

/// The text of a JDK 8 line after its `stamp` when it starts with a blank: details of a
/// multi-line event (G1's, heap printouts); a G1 `[Times: ...]` line belongs to the pause
/// just before it.
fn indented_jdk8(rest: &[u8], stamp: Stamp, last_date: &mut LastDate) -> Result<Parsed, Unparsed> {
    let parsed = |record| {
        Ok(Parsed {
            format: Format::Jdk8,
            stamp,
            record,
        })
    };
    if let Some(record) = usual_indented_line(rest) {
        return parsed(record);
    }
    any_indented_jdk8(rest, stamp, last_date)
}

/// [`indented_jdk8`] of any line.
fn any_indented_jdk8(
    rest: &[u8],
    stamp: Stamp,
    last_date: &mut LastDate,
) -> Result<Parsed, Unparsed> {
    let parsed = |record| {
        Ok(Parsed {
            format: Format::Jdk8,
            stamp,
            record,
        })
    };
    let has_stamp = stamp.uptime_ns.is_some() || stamp.wall_ms.is_some();
    let trimmed = trim_spaces(rest);
    if !has_stamp && trimmed.first().is_some_and(u8::is_ascii_digit) {
        // A stamped line indented by whatever wrote before it (two logs
        // concatenated); details never start with a time stamp.
        if let Ok(indented) = parse_jdk8(trimmed, last_date) {
            if indented.stamp.uptime_ns.is_some() || indented.stamp.wall_ms.is_some() {
                return Ok(indented);
            }
        }
    }
    if let Some(times) = trimmed.strip_prefix(b"[Times: ") {
        return match parse_jdk8_times(times) {
            Some(cpu) => parsed(Record::Cpu { gc_id: None, cpu }),
            None => Err(Unparsed::Malformed),
        };
    }
    if is_event_tail(trimmed) {
        return Err(Unparsed::Incomplete);
    }
    if let Some(eden) = trimmed.strip_prefix(b"[Eden: ") {
        if let Some((heap, young)) = memory::g1_details_heap(eden) {
            return parsed(Record::DetailsHeap { heap, young });
        }
    }
    // Of the timeout report's lines, only a thread's state is indented: the others
    // start with `#`.
    parsed(timeout::java_state(trimmed).unwrap_or(Record::Other))
}

/// [`indented_jdk8`] of the usual indented lines, read as [`Record::Other`] without
/// trimming the line's end: G1's detail lines, whose text starts with `[` but not with
/// `[Times: ` or `[Eden: ` (`   [Parallel Time: ...]`), and heap printouts, whose text
/// starts with a letter (`  eden space 1048576K, ...`, the heap after a CMS event, written
/// outside it) other than the `j` of a thread's state (`java.lang.Thread.State: `).
/// `None` for any other line.
#[inline]
fn usual_indented_line(line: &[u8]) -> Option<Record> {
    is_usual_indented_line(line).then_some(Record::Other)
}

/// Whether [`usual_indented_line`] reads `line`, told by its first bytes.
#[inline(always)]
fn is_usual_indented_line(line: &[u8]) -> bool {
    // The indentation and the bytes after it from 8-byte loads (byte by byte, with the
    // two comparisons, they cost 80 instructions a line).
    let Some((spaces, after)) = indentation_and_after(line) else {
        return is_usual_indented_line_bytewise(line);
    };
    match line[spaces] {
        // `Times: ` in seven bytes, `Eden: ` in six.
        b'[' => {
            after & 0x00ff_ffff_ffff_ffff != u64::from_le_bytes(*b"Times: \0")
                && after & 0x0000_ffff_ffff_ffff != u64::from_le_bytes(*b"Eden: \0\0")
        }
        c => c.is_ascii_alphabetic() && c != b'j',
    }
}

/// How many spaces `line` starts with, when fewer than 16 (G1 indents its details by up
/// to 9), and the 8 bytes after the byte that follows them, read from 8-byte loads; `None`
/// when the line is too short for them.
#[inline(always)]
fn indentation_and_after(line: &[u8]) -> Option<(usize, u64)> {
    let off_space = |at: usize| -> Option<u64> {
        let bytes = line.get(at..)?.first_chunk::<8>()?;
        Some(u64::from_le_bytes(*bytes) ^ u64::from_ne_bytes([b' '; 8]))
    };
    let first = off_space(0)?;
    let spaces = if first != 0 {
        (first.trailing_zeros() / 8) as usize
    } else {
        let second = off_space(8).filter(|&second| second != 0)?;
        8 + (second.trailing_zeros() / 8) as usize
    };
    let after = line.get(spaces + 1..)?.first_chunk::<8>()?;
    Some((spaces, u64::from_le_bytes(*after)))
}

/// [`is_usual_indented_line`] a byte at a time: for lines too short for its loads, or
/// indented by 16 blanks or more.
#[cold]
fn is_usual_indented_line_bytewise(line: &[u8]) -> bool {
    let mut spaces = 0;
    while line.get(spaces) == Some(&b' ') {
        spaces += 1;
    }
    match line.get(spaces) {
        Some(b'[') => {
            let text = &line[spaces + 1..];
            !(text.starts_with(b"Times: ") || text.starts_with(b"Eden: "))
        }
        Some(&c) => c.is_ascii_alphabetic() && c != b'j',
        None => false,
    }
}

/// Whether [`LineParser::parse`] reads the line that `text` starts with as a
/// [`Record::Other`] of a JDK 8 log without a stamp, told by its first bytes (what follows
/// the line, and a `\r` ending it, do not change the answer): an indented line that
/// [`usual_indented_line`] takes (G1's details, `   [Parallel Time: ...]`, and heap
/// printouts after an event). The parser is not asked of such lines when they come in a
/// row (see `Stitcher::indented_lines_ahead`).
#[inline]
pub(crate) fn is_plain_indented_line(text: &[u8]) -> bool {
    text.first() == Some(&b' ') && is_usual_indented_line(text)
}

/// One of the lines JDK 7 and 8 G1 print under a pause with `-XX:+PrintGCDetails`
/// (`[Parallel Time: 18.9 ms, GC Workers: 1]`, `[GC Worker Start (ms):  3793.7]`,
/// `[Eden: ...]`), named as HotSpot's `G1GCPhaseTimes` names them.
fn is_g1_detail(line: &[u8]) -> bool {
    const NAMES: [&[u8]; 52] = [
        b"Parallel Time",
        b"GC Worker Start",
        b"Ext Root Scanning",
        b"Thread Roots",
        b"StringTable Roots",
        b"Universe Roots",
        b"JNI Handles Roots",
        b"ObjectSynchronizer Roots",
        b"FlatProfiler Roots",
        b"Management Roots",
        b"SystemDictionary Roots",
        b"CLDG Roots",
        b"JVMTI Roots",
        b"CodeCache Roots",
        b"CM RefProcessor Roots",
        b"Wait For Strong CLD",
        b"Weak CLD Roots",
        b"SATB Filtering",
        b"Update RS",
        b"Processed Buffers",
        b"Scan RS",
        b"Code Root Scanning",
        b"Object Copy",
        b"Termination",
        b"Termination Attempts",
        b"GC Worker Other",
        b"GC Worker Total",
        b"GC Worker End",
        b"GC Worker",
        b"Code Root Fixup",
        b"Code Root Purge",
        b"Code Root Migration",
        b"Clear CT",
        b"Other",
        b"Choose CSet",
        b"Ref Proc",
        b"Ref Enq",
        b"Redirty Cards",
        b"Parallel Redirty",
        b"Redirtied Cards",
        b"Humongous Register",
        b"Humongous Total",
        b"Humongous Candidate",
        b"Humongous Reclaim",
        b"Humongous Reclaimed",
        b"Free CSet",
        b"Young Free CSet",
        b"Non-Young Free CSet",
        b"Eden",
        b"Evacuation Failure",
        b"String Dedup Fixup",
        b"Root Region Scan Waiting",
    ];
    let Some(body) = line.strip_prefix(b"[") else {
        return false;
    };
    let Some(colon) = memchr::memchr(b':', body) else {
        return false;
    };
    let name = &body[..colon];
    let name = name.strip_suffix(b" (ms)").unwrap_or(name);
    NAMES.contains(&name)
}

/// The end of an event whose opening line was lost or not recognised:
/// ` 798M->797M(5120M), 3.4595066 secs]`, ` 620060K(7992832K), 0.2328529 secs]`,
/// `, 0.0078450 secs]`. The stitcher joins such a line to its event; on its own it is a
/// pause that could not be read, never one of the detail lines (`[Eden: ...`, heap
/// printouts) that are rightly skipped.
fn is_event_tail(trimmed: &[u8]) -> bool {
    trimmed
        .first()
        .is_some_and(|&c| c.is_ascii_digit() || c == b',' || c == b']')
        && crate::num::find(trimmed, b" secs]").is_some()
}

/// Optional `2012-10-19T18:28:46.210+0100: ` then optional `2.193: `, then the optional
/// `#12: ` of `-XX:+PrintGCID`.
pub(crate) fn jdk8_prefix(line: &[u8]) -> (Stamp, &[u8]) {
    jdk8_prefix_reading(line, |date| iso_timestamp_ms(date))
}

/// [`jdk8_prefix`], a date stamp read through `last_minute` (the minute of the last one its
/// reader read).
pub(crate) fn jdk8_prefix_remembering<'l>(
    line: &'l [u8],
    last_minute: &mut crate::num::LastMinute,
) -> (Stamp, &'l [u8]) {
    jdk8_prefix_reading(line, |date| last_minute.read(date))
}

/// The text after [`jdk8_prefix`]'s stamps, for the stitcher's test of every line that
/// may open an event: inlined there, the uptime's value, never used, is not computed.
#[inline]
pub(crate) fn jdk8_rest(line: &[u8]) -> &[u8] {
    jdk8_prefix_reading(line, |date| iso_timestamp_ms(date)).1
}

/// The stamps a JDK 8 line starts with and where the text after them (and after a GC id)
/// starts, as [`jdk8_prefix`] reads them, when they are the usual ones (see
/// `usual_jdk8_stamps`). What the stitcher read of an event's first line, handed on with
/// the event so that the parser does not read the same stamps again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeadingStamps {
    /// The stamp's clocks (a JDK 8 line names no process): kept apart, so that the
    /// stamps handed from call to call with each event are five words, not seven.
    uptime_ns: Option<u64>,
    wall_ms: Option<i64>,
    /// Where the text after the stamps starts.
    pub(crate) rest_at: usize,
}

impl LeadingStamps {
    /// The stamp they gave.
    pub(crate) fn stamp(&self) -> Stamp {
        Stamp {
            uptime_ns: self.uptime_ns,
            wall_ms: self.wall_ms,
            ..Stamp::default()
        }
    }
}

/// [`LeadingStamps`] of `line`, or `None` when its stamps are not the usual ones (which
/// [`jdk8_prefix`] reads the general way). They depend on the bytes up to `rest_at` alone
/// (the byte there included): the same for any text that starts with those bytes.
#[cfg(test)]
pub(crate) fn usual_jdk8_prefix(line: &[u8]) -> Option<LeadingStamps> {
    usual_jdk8_prefix_remembering(line, &mut crate::num::LastMinute::default())
}

/// [`usual_jdk8_prefix`], a date stamp read through `last_minute` (the minute of the last
/// one its reader read).
#[inline]
pub(crate) fn usual_jdk8_prefix_remembering(
    line: &[u8],
    last_minute: &mut crate::num::LastMinute,
) -> Option<LeadingStamps> {
    let (stamp, rest) = usual_jdk8_stamps(line, |date| last_minute.read(date))?;
    let rest = strip_gc_id(rest);
    debug_assert_eq!(stamp.pid, None);
    Some(LeadingStamps {
        uptime_ns: stamp.uptime_ns,
        wall_ms: stamp.wall_ms,
        rest_at: line.len() - rest.len(),
    })
}

/// [`jdk8_prefix`], the usual date stamp read by `read_date` (which gives what
/// [`iso_timestamp_ms`] gives).
#[inline]
fn jdk8_prefix_reading(
    line: &[u8],
    read_date: impl FnOnce(&[u8; DATE_STAMP_LEN]) -> Option<i64>,
) -> (Stamp, &[u8]) {
    let (stamp, rest) = usual_jdk8_stamps(line, read_date).unwrap_or_else(|| jdk8_stamps(line));
    (stamp, strip_gc_id(rest))
}

/// [`jdk8_stamps`] of the stamps HotSpot prints, `2020-09-13T12:26:37.504+0000: 10.000: `
/// or the uptime alone, read straight through: every line of a JDK 8 log starts so, and
/// the general reading's loop tries each kind of stamp again after each one. `None` for
/// anything else (stamps repeated or run together, other forms), which the general
/// reading reads.
#[inline]
fn usual_jdk8_stamps(
    line: &[u8],
    read_date: impl FnOnce(&[u8; DATE_STAMP_LEN]) -> Option<i64>,
) -> Option<(Stamp, &[u8])> {
    let mut stamp = Stamp::default();
    let mut rest = line;
    if let Some((date, after)) = line.split_first_chunk::<DATE_STAMP_LEN>() {
        if date[4] == b'-' {
            rest = after.strip_prefix(b": ")?;
            stamp.wall_ms = Some(read_date(date)?);
        }
    }
    let (ns, end) = usual_seconds(rest)?;
    stamp.uptime_ns = Some(ns);
    rest = rest[end..].strip_prefix(b": ")?;
    // Another stamp or a lone `: ` would be read by the general loop.
    match rest.first() {
        Some(c) if c.is_ascii_digit() || *c == b':' => None,
        _ => Some((stamp, rest)),
    }
}

/// Position of the first `": "` (a two-byte needle: cheaper than building a memmem searcher).
fn find_colon_space(s: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b':', s).find(|&at| s.get(at + 1) == Some(&b' '))
}

/// `#12: ` (`-XX:+PrintGCID`).
fn strip_gc_id(rest: &[u8]) -> &[u8] {
    let Some(after_hash) = rest.strip_prefix(b"#") else {
        return rest;
    };
    let digits = after_hash.iter().take_while(|c| c.is_ascii_digit()).count();
    match after_hash[digits..].strip_prefix(b": ") {
        Some(after) if digits > 0 => after,
        _ => rest,
    }
}

/// The date and uptime stamps at the start of a JDK 8 line. Two JVM threads that begin their
/// lines at the same moment interleave their stamps: repeated
/// (`2016-10-12T09:53:38.901+0200: 2016-10-12T09:53:38.901+0200: 298.027: 298.027: `), run
/// together with the separators after them (`79244.87279244.872: : `), in any order. Every
/// stamp is taken, the later one counts, and a lone `: ` after a stamp is skipped.
fn jdk8_stamps(line: &[u8]) -> (Stamp, &[u8]) {
    let mut stamp = Stamp::default();
    let mut rest = line;
    loop {
        if let Some((ms, after)) = date_stamp(rest) {
            stamp.wall_ms = Some(ms);
            rest = after;
        } else if let Some((ns, after)) = uptime_stamp(rest) {
            stamp.uptime_ns = Some(ns);
            rest = after;
        } else if rest.starts_with(b": ") && (stamp.wall_ms.is_some() || stamp.uptime_ns.is_some())
        {
            rest = &rest[2..];
        } else {
            return (stamp, rest);
        }
    }
}

/// Length of a date stamp as HotSpot prints it: `2016-10-12T09:53:38.901+0200`.
const DATE_STAMP_LEN: usize = 28;

/// `2016-10-12T09:53:38.901+0200: ` (or two run together before the `: `) and what follows.
/// Another thread's stamp can also be glued to the text of a line with no `: ` after it
/// (`2023-07-25T13:18:04.900+0000Total time for which ...`): the stamp is taken and the
/// text after it read.
fn date_stamp(s: &[u8]) -> Option<(i64, &[u8])> {
    if s.len() <= 24 || s[4] != b'-' || !s[0].is_ascii_digit() {
        return None;
    }
    if let Some((stamp, after)) = s.split_at_checked(DATE_STAMP_LEN) {
        let glued_to_text =
            after.first().is_some_and(u8::is_ascii_alphabetic) || after.first() == Some(&b'[');
        if glued_to_text {
            return iso_timestamp_ms(stamp).map(|ms| (ms, after));
        }
        // The usual `: ` right after the stamp: a stamp that reads has no `: ` in it, so
        // this is the first one, found without searching.
        if let (Some(rest), Some(ms)) = (after.strip_prefix(b": "), iso_timestamp_ms(stamp)) {
            return Some((ms, rest));
        }
    }
    let colon_sp = find_colon_space(s)?;
    let text = &s[..colon_sp];
    let ms = iso_timestamp_ms(text).or_else(|| {
        // Two stamps run together: the second is the later.
        let (first, second) = text.split_at_checked(DATE_STAMP_LEN)?;
        iso_timestamp_ms(first).and(iso_timestamp_ms(second))
    })?;
    Some((ms, &s[colon_sp + 2..]))
}

/// An uptime glued to the event after it by another thread's output (`517.850[GC ...`,
/// the stitcher hands such a line on as it is) and what follows.
fn glued_uptime(s: &[u8]) -> Option<(u64, &[u8])> {
    let number = s
        .iter()
        .take(32)
        .take_while(|c| c.is_ascii_digit() || matches!(c, b'.' | b','))
        .count();
    if number == 0 || s.get(number) != Some(&b'[') {
        return None;
    }
    secs_to_ns(&s[..number]).map(|ns| (ns, &s[number..]))
}

/// `298.027: ` (or two run together, `79244.87279244.872: `) and what follows.
fn uptime_stamp(s: &[u8]) -> Option<(u64, &[u8])> {
    if !s.first().is_some_and(u8::is_ascii_digit) {
        return None;
    }
    usual_uptime_stamp(s).or_else(|| any_uptime_stamp(s))
}

/// [`uptime_stamp`] of any of the forms it reads.
fn any_uptime_stamp(s: &[u8]) -> Option<(u64, &[u8])> {
    let colon_sp = find_colon_space(&s[..s.len().min(32)])?;
    let text = &s[..colon_sp];
    let ns = secs_to_ns(text).or_else(|| {
        // Two stamps run together: HotSpot prints uptimes with three decimals, so the first
        // ends three digits after its decimal separator; the second is the later.
        let sep = text.iter().position(|&c| c == b'.' || c == b',')?;
        let (first, second) = text.split_at_checked(sep + 4)?;
        secs_to_ns(first).and(secs_to_ns(second))
    })?;
    Some((ns, &s[colon_sp + 2..]))
}

/// [`uptime_stamp`] of the stamp HotSpot prints, `298.027: ` (up to nine digits on each
/// side of the separator), read in one pass: a stamp starts nearly every line of a JDK 8
/// log, and the general reading's search for its `: ` cost as much as the rest of it.
/// `None` for anything else, which the general reading reads.
fn usual_uptime_stamp(s: &[u8]) -> Option<(u64, &[u8])> {
    let (ns, end) = usual_seconds(s)?;
    Some((ns, s[end..].strip_prefix(b": ")?))
}

/// Seconds as HotSpot prints them at the start of `s` (`298.027`, `0,45`: one to nine
/// digits on each side of a `.` or `,`), in nanoseconds, and where they end.
#[inline(always)]
fn usual_seconds(s: &[u8]) -> Option<(u64, usize)> {
    let (seconds, separator) = nine_digits(s, 0)?;
    if !matches!(s.get(separator), Some(b'.' | b',')) {
        return None;
    }
    let (fraction, end) = nine_digits(s, separator + 1)?;
    let fraction_digits = end - separator - 1;
    Some((
        seconds * 1_000_000_000 + fraction * POW10[9 - fraction_digits],
        end,
    ))
}

/// One to nine digits of `s` from `from` on: their value and where they end (`None` for
/// none or more than nine). An index loop: iterator adapters cost twice as much on the few
/// digits of a stamp or a time.
#[inline(always)]
fn nine_digits(s: &[u8], from: usize) -> Option<(u64, usize)> {
    let mut value = 0u64;
    let mut at = from;
    while let Some(&c) = s.get(at).filter(|c| c.is_ascii_digit()) {
        value = value * 10 + u64::from(c - b'0');
        at += 1;
        if at - from > 9 {
            return None;
        }
    }
    (at > from).then_some((value, at))
}

/// Lines of JDK 8 logs that are not bracketed events.
fn parse_jdk8_text(rest: &[u8], stamp: Stamp, has_stamp: bool) -> Result<Parsed, Unparsed> {
    let parsed = |record| {
        Ok(Parsed {
            format: Format::Jdk8,
            stamp,
            record,
        })
    };
    if rest.first() == Some(&b'#') {
        // JDK 8 and 11 print the safepoint timeout report on stdout, undecorated.
        if let Some(record) = timeout::timeout_line(rest) {
            return parsed(record);
        }
    }
    if let Some(r) = rest.strip_prefix(STOPPED_TIME) {
        return parse_stopped_time(r).map(|sp| Parsed {
            format: Format::Jdk8,
            stamp,
            record: Record::Safepoint(sp),
        });
    }
    if rest.starts_with(APPLICATION_TIME) {
        return parsed(Record::Other);
    }
    if let Some(flags) = rest.strip_prefix(b"CommandLine flags: ") {
        return parsed(Record::Flags(checked_lossy(trim_spaces(flags))));
    }
    if rest.starts_with(b"Java HotSpot") || rest.starts_with(b"OpenJDK") {
        // `... VM (25.151-b12) for linux-amd64 JRE (1.8.0_151-b12), built on ...`
        if let Some(at) = crate::num::find(rest, b"JRE (") {
            let v = &rest[at + 5..];
            if let Some(end) = memchr::memchr(b')', v) {
                return parsed(Record::Version(checked_lossy(&v[..end])));
            }
        }
        return parsed(Record::Other);
    }
    if rest.starts_with(b"Memory: ")
        // `CMS: abort preclean due to time 2010-04-20T18:50:11.324+0100: 401.421:
        // [CMS-concurrent-abortable-preclean: ...]`: a concurrent phase.
        || rest.starts_with(b"CMS: abort preclean due to time ")
        // -XX:+PrintFLSStatistics's largest free block: `CMS: Large Block: 0x...; Proximity:`
        || rest.starts_with(b"CMS: Large ")
        || rest.starts_with(b"Desired survivor size")
        || rest.starts_with(b"- age ")
        || rest.starts_with(b"No shared spaces configured")
        || rest.starts_with(b"Heap")
        || rest.starts_with(b"{Heap")
        || rest == b"}"
        || rest.starts_with(b"vmop ")
        || rest.starts_with(b"Polling page")
        // The header's memory, on BSD and macOS (nothing follows it there).
        || rest == b"/proc/meminfo:"
    {
        return parsed(Record::Other);
    }
    if let Some(oom) = memory::thrown_out_of_memory(rest) {
        return parsed(oom);
    }
    if rest.starts_with(b"Dumping heap to ")
        || rest.starts_with(b"Heap dump file created")
        || rest.starts_with(b"\tat ")
    {
        // -XX:+HeapDumpOnOutOfMemoryError after the error, and the error's stack.
        return parsed(Record::Other);
    }
    // A searcher built once: `num::find` looks at every blank, and the long lines of
    // free-list statistics come this way.
    static GC_LOG_FILE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b" GC log file "));
    if GC_LOG_FILE.find(rest).is_some() {
        // `2016-04-14 22:37:22 GC log file created ...` (-XX:+UseGCLogFileRotation)
        return parsed(Record::Other);
    }
    if has_stamp {
        if let Some(sp) = parse_safepoint_statistics(rest) {
            return parsed(Record::SafepointStatistics(sp));
        }
        // What is left of a line whose event the stitcher cut out (`0.204: #4: `) says
        // nothing; any other text after a stamp is a line not understood, never dropped.
        if rest
            .iter()
            .all(|&c| c.is_ascii_digit() || matches!(c, b'#' | b':' | b' '))
        {
            return parsed(Record::Other);
        }
    }
    if shenandoah_statistics(rest) {
        return parsed(Record::Other);
    }
    if !has_stamp && is_event_tail(rest) {
        return Err(Unparsed::Incomplete);
    }
    Err(Unparsed::Unknown)
}

/// JDK 8 Shenandoah's statistics: the table of phase times it prints at exit (`GC
/// STATISTICS:`, its explanation, `Pause Init Mark (G) = 0.745 s (a = 516 us) (n = 1444)
/// ...`, the cycle counts after it) or after each cycle (`Pause Init Mark (G)  1096 us`),
/// and its free set (`Free: 116M, Max: 256K regular, ...`). Its pauses are in the log's
/// events; the table only sums them. Asked of lines nothing else reads.
fn shenandoah_statistics(rest: &[u8]) -> bool {
    /// The explanation's and the cycle counts' lines, as HotSpot prints them.
    const PROSE: [&[u8]; 47] = [
        b"GC STATISTICS:",
        b"\"(G)\" (gross) pauses",
        b"and post-safepoint housekeeping",
        b"\"(N)\" (net) pauses",
        b"\"a\" is average time",
        b"\"lvls\" are quantiles",
        b"All times are wall-clock times",
        b"all workers. Dividing the <total>",
        b"Pacing delays are measured",
        b"observed pacing delays may be higher",
        b"time in the pacing code",
        b"OS takes longer to unblock",
        b"Higher delay would prevent",
        b"from the STW pause times",
        b"invisible to the usual profiling tools",
        b"Raise max pacing delay",
        b"Under allocation pressure, concurrent cycles",
        b"under stop-the-world pause or result in",
        b"tune GC heuristics, set more aggressive",
        b"to avoid Degenerated and Full GC",
        b"ALLOCATION PACING:",
        b"Max pacing delay is set for",
        b"Allocation tracing is disabled",
        b"Free: ",
        b"Evacuation Reserve: ",
        b"Collector Reserve: ",
        b"Mutator Free: ",
        // Its start-up lines, its cycles' triggers, and its heap at exit.
        b"Regions: ",
        b"Humongous object threshold: ",
        b"Max TLAB size: ",
        b"GC threads: ",
        b"Heuristics ergonomically sets ",
        b"Shenandoah GC mode: ",
        b"Shenandoah heuristics: ",
        b"Initialize Shenandoah heap: ",
        b"Reference processing: ",
        b"Soft Max Heap Size: ",
        b"Pacer for ",
        b"Trigger: ",
        b"Allocation pacing accrued:",
        b"Cancelling GC: ",
        b"Cancelling concurrent GC: ",
        b"Shenandoah Heap",
        b"Status: ",
        b"Reserved region:",
        b"Collection set:",
        // What ends a cycle's printout: its metaspace, after the statistics.
        b", [Metaspace: ",
    ];
    /// `1444 successful concurrent GCs`, `0 invoked explicitly`, ...
    const COUNTS: [&[u8]; 9] = [
        b" successful concurrent GCs",
        b" invoked explicitly",
        b" invoked implicitly",
        b" Degenerated GCs",
        b" caused by allocation failure",
        b" upgraded to Full GC",
        b" Full GCs",
        b" upgraded from Degenerated GC",
        b" abbreviated",
    ];
    let text = trim_spaces(rest);
    let Some(&first) = text.first() else {
        return false;
    };
    // Only where a line's first byte begins one of them (a table): CMS's free-list
    // statistics (`Total Free Space: 0`, `size[3] : demand: ...`) come this way on
    // every collection.
    const PROSE_FIRST_BYTES: [bool; 256] = {
        let mut table = [false; 256];
        let mut i = 0;
        while i < PROSE.len() {
            table[PROSE[i][0] as usize] = true;
            i += 1;
        }
        table
    };
    if PROSE_FIRST_BYTES[usize::from(first)]
        && PROSE.iter().any(|p| p[0] == first && text.starts_with(p))
    {
        return true;
    }
    let digits = text.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 && COUNTS.contains(&&text[digits..]) {
        return true;
    }
    // `4 happened at Update Refs`; pacing, `0 of  4436 ms (  0.0%): <total>`.
    if digits > 0
        && (text[digits..].starts_with(b" happened at ")
            || (text[digits..].starts_with(b" of ") && crate::num::find(text, b" ms (").is_some()))
    {
        return true;
    }
    // A phase's row: its name, then `= 0.745 s (a = ...` at exit, `1096 us` after a cycle.
    let named = |name: &[u8]| {
        let name = trim_spaces(name);
        !name.is_empty()
            && name
                .iter()
                .all(|c| c.is_ascii_alphanumeric() || b" :<>()-".contains(c))
    };
    if let Some(equals) = memchr::memchr(b'=', text) {
        let total = trim_spaces(&text[equals + 1..]);
        let digits = total
            .iter()
            .take_while(|c| c.is_ascii_digit() || **c == b'.')
            .count();
        return named(&text[..equals]) && digits > 0 && total[digits..].starts_with(b" s (a = ");
    }
    static MICROSECONDS: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b" us"));
    let Some(unit) = MICROSECONDS.find(text) else {
        return false;
    };
    let after = &text[unit + 3..];
    let digits = text[..unit]
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_digit() || **c == b'.')
        .count();
    let number_start = unit - digits;
    digits > 0
        && text[..number_start].ends_with(b" ")
        && named(&text[..number_start])
        && (after.is_empty() || after.starts_with(b", "))
}

/// `ParallelGCFailedAllocation  [ 10 0 0 ] [ 0 0 0 0 5 ] 0` (times: spin block sync cleanup vmop, ms).
fn parse_safepoint_statistics(rest: &[u8]) -> Option<Safepoint> {
    let name_end = memchr::memchr(b' ', rest)?;
    let name = &rest[..name_end];
    if name.is_empty() || !name.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_') {
        return None;
    }
    let mut groups = Vec::with_capacity(2);
    let mut pos = name_end;
    for _ in 0..2 {
        let open = pos + memchr::memchr(b'[', &rest[pos..])?;
        let close = open + memchr::memchr(b']', &rest[open..])?;
        groups.push(&rest[open + 1..close]);
        pos = close + 1;
    }
    let times: Vec<u64> = groups[1]
        .split(|c| *c == b' ')
        .filter(|t| !t.is_empty())
        .map(|t| decimal_scaled(t, 6))
        .collect::<Option<_>>()?;
    let [_spin, _block, sync, cleanup, vmop] = times[..] else {
        return None;
    };
    Some(Safepoint {
        start: Stamp::default(),
        total_ns: sync + cleanup + vmop,
        ttsp_ns: Some(sync),
        operation: Some(known_or_owned(name)),
    })
}

/// `user=0.00 sys=0.00, real=0.01 secs]`
fn parse_jdk8_times(s: &[u8]) -> Option<Cpu> {
    if let Some((cpu, _)) = usual_jdk8_times(s) {
        return Some(cpu);
    }
    any_jdk8_times(s)
}

/// [`parse_jdk8_times`] of the times as HotSpot prints them, `user=0.45 sys=0.02, real=0.12`
/// (one digit and two decimals each), read straight through, and what follows them; `None`
/// for anything else, which [`any_jdk8_times`] reads.
fn usual_jdk8_times(s: &[u8]) -> Option<(Cpu, &[u8])> {
    if let Some(cpu) = s.first_chunk::<32>().and_then(one_digit_times) {
        return Some((cpu, &s[ONE_DIGIT_TIMES.len()..]));
    }
    usual_jdk8_times_by_field(s)
}

/// [`usual_jdk8_times`] read one field after the other (out of line: G1's times, of
/// several whole digits, then pay for the look at one digit's without saving registers).
#[inline(never)]
fn usual_jdk8_times_by_field(s: &[u8]) -> Option<(Cpu, &[u8])> {
    let (user_ns, after_user) = two_decimals(s.strip_prefix(b"user=")?)?;
    let (sys_ns, after_sys) = two_decimals(after_user.strip_prefix(b" sys=")?)?;
    let (real_ns, after_real) = two_decimals(after_sys.strip_prefix(b", real=")?)?;
    // Nothing of a number may follow one (a comma ends the field `sys=` only).
    if after_real
        .first()
        .is_some_and(|&c| c.is_ascii_digit() || c == b'.' || c == b',')
    {
        return None;
    }
    let cpu = Cpu {
        user_ns,
        sys_ns,
        real_ns,
    };
    Some((cpu, after_real))
}

/// The times as a young collection prints them, one whole digit each: `0` for a digit,
/// `.` for a separator (`.` or `,`), anything else as it is.
const ONE_DIGIT_TIMES: &[u8; 29] = b"user=0.00 sys=0.00, real=0.00";

/// [`ONE_DIGIT_TIMES`] (and the three bytes after it, whatever they are) as four words:
/// its bytes, the bytes compared as they are (separators with their `0x02` bit set,
/// which makes a `,` a `.` and no other byte one), the separators' `0x02` bits, and
/// the digits.
const ONE_DIGIT_TIMES_WORDS: [[u64; 4]; 4] = {
    let mut words = [[0u64; 4]; 4];
    let mut at = 0;
    while at < ONE_DIGIT_TIMES.len() {
        let (word, shift) = (at / 8, 8 * (at % 8));
        let byte = ONE_DIGIT_TIMES[at];
        words[0][word] |= (byte as u64) << shift;
        match byte {
            b'0' => words[3][word] |= 0xff << shift,
            b'.' => {
                words[1][word] |= 0xff << shift;
                words[2][word] |= 0x02 << shift;
            }
            _ => words[1][word] |= 0xff << shift,
        }
        at += 1;
    }
    words
};

/// [`usual_jdk8_times`] of the first 32 bytes of the times when they are
/// [`ONE_DIGIT_TIMES`] and no digit or separator follows them: four loads compared at
/// once with the fixed bytes and checked for digits eight at a time, where reading
/// the three numbers one after the other cost 150 instructions. `None` for anything
/// else, which the reading field by field reads.
#[inline(always)]
fn one_digit_times(chunk: &[u8; 32]) -> Option<Cpu> {
    let [template, fixed, separator_bits, digits] = ONE_DIGIT_TIMES_WORDS;
    let mut differs = 0;
    let mut all_digits = true;
    for i in 0..4 {
        let eight = chunk[8 * i..]
            .first_chunk::<8>()
            .expect("four words of eight bytes");
        differs |= ((u64::from_le_bytes(*eight) | separator_bits[i]) ^ template[i]) & fixed[i];
        all_digits &= crate::num::digits_at(eight, digits[i]);
    }
    let after = chunk[ONE_DIGIT_TIMES.len()];
    if differs != 0 || !all_digits || after.is_ascii_digit() || (after | 0x02) == b'.' {
        return None;
    }
    // Hundredths first, then one multiplication to nanoseconds.
    let seconds = |whole: usize, tenths: usize, hundredths: usize| {
        let digit = |at: usize| u64::from(chunk[at] - b'0');
        (digit(whole) * 100 + digit(tenths) * 10 + digit(hundredths)) * 10_000_000
    };
    Some(Cpu {
        user_ns: seconds(5, 7, 8),
        sys_ns: seconds(14, 16, 17),
        real_ns: seconds(25, 27, 28),
    })
}

/// `0.45` (or `152.96`: up to nine whole digits) at the start of `text`, in nanoseconds,
/// and what follows it.
#[inline]
fn two_decimals(text: &[u8]) -> Option<(u64, &[u8])> {
    match text {
        [whole @ b'0'..=b'9', b'.' | b',', tenths @ b'0'..=b'9', hundredths @ b'0'..=b'9', rest @ ..] =>
        {
            let hundredths = u64::from(tenths - b'0') * 10 + u64::from(hundredths - b'0');
            Some((
                u64::from(whole - b'0') * 1_000_000_000 + hundredths * 10_000_000,
                rest,
            ))
        }
        _ => two_decimals_of_whole_digits(text),
    }
}

/// [`two_decimals`] of a number of any whole digits; out of line, as few times have more
/// than one.
#[inline(never)]
fn two_decimals_of_whole_digits(text: &[u8]) -> Option<(u64, &[u8])> {
    let (whole, separator) = nine_digits(text, 0)?;
    match &text[separator..] {
        [b'.' | b',', tenths @ b'0'..=b'9', hundredths @ b'0'..=b'9', rest @ ..] => {
            let hundredths = u64::from(tenths - b'0') * 10 + u64::from(hundredths - b'0');
            Some((whole * 1_000_000_000 + hundredths * 10_000_000, rest))
        }
        _ => None,
    }
}

/// [`parse_jdk8_times`] of any times.
fn any_jdk8_times(s: &[u8]) -> Option<Cpu> {
    if let Some(fields) = jdk8_times_in_order(s) {
        return fields.map(|[user_ns, sys_ns, real_ns]| Cpu {
            user_ns,
            sys_ns,
            real_ns,
        });
    }
    jdk8_times_searched(s)
}

/// [`parse_jdk8_times`] of fields in any order: each is searched for.
fn jdk8_times_searched(s: &[u8]) -> Option<Cpu> {
    let field = |key: &[u8]| -> Option<u64> {
        let at = crate::num::find(s, key)? + key.len();
        secs_to_ns(times_number(&s[at..]).0)
    };
    Some(Cpu {
        user_ns: field(b"user=")?,
        sys_ns: field(b"sys=")?,
        real_ns: field(b"real=")?,
    })
}

/// The three numbers of `user=0.45 sys=0.02, real=0.12 secs]` as HotSpot orders them,
/// read one after the other; `None` when they are not so (then each is searched for).
/// Each key found there is the first of its kind in `s`, as a search would find it.
fn jdk8_times_in_order(s: &[u8]) -> Option<Option<[u64; 3]>> {
    let (user, rest) = times_seconds(s.strip_prefix(b"user=")?);
    let (sys, rest) = times_seconds(rest.strip_prefix(b" sys=")?);
    let (real, _) = times_seconds(rest.strip_prefix(b" real=")?);
    Some((|| Some([user?, sys?, real?]))())
}

/// The seconds of the [`times_number`] at the start of `v` (`None` when they do not read),
/// and what follows it.
#[inline]
fn times_seconds(v: &[u8]) -> (Option<u64>, &[u8]) {
    usual_times_seconds(v).unwrap_or_else(|| {
        let (number, rest) = times_number(v);
        (secs_to_ns(number), rest)
    })
}

/// [`times_seconds`] of the number HotSpot prints (`0.45`, `0,02,` before `real`: up to
/// nine digits on each side of the separator), read in one pass; `None` for anything
/// else, which the general reading reads.
fn usual_times_seconds(v: &[u8]) -> Option<(Option<u64>, &[u8])> {
    let (ns, mut end) = match v.first_chunk::<5>() {
        // `0.45`, two decimals as HotSpot prints these times: read as `usual_seconds`
        // reads it, without its loops.
        Some(
            &[whole @ b'0'..=b'9', b'.' | b',', tenths @ b'0'..=b'9', hundredths @ b'0'..=b'9', next],
        ) if !next.is_ascii_digit() => {
            let hundredths = u64::from(tenths - b'0') * 10 + u64::from(hundredths - b'0');
            (
                u64::from(whole - b'0') * 1_000_000_000 + hundredths * 10_000_000,
                4,
            )
        }
        _ => usual_seconds(v)?,
    };
    // A comma that ends the field (`sys=0.00, real=`) is not the number's; after it, as
    // after the number, nothing of a number may follow.
    if v.get(end) == Some(&b',') {
        end += 1;
    }
    if v.get(end)
        .is_some_and(|&c| c.is_ascii_digit() || c == b'.' || c == b',')
    {
        return None;
    }
    Some((Some(ns), &v[end..]))
}

/// The number at the start of `v` (digits, `.` and `,`) without a trailing comma, which
/// separates fields (`sys=0.00,`), and what follows the number.
fn times_number(v: &[u8]) -> (&[u8], &[u8]) {
    let end = v
        .iter()
        .position(|c| !(c.is_ascii_digit() || *c == b'.' || *c == b','))
        .unwrap_or(v.len());
    let (number, rest) = v.split_at(end);
    (number.strip_suffix(b",").unwrap_or(number), rest)
}

/// `[GC ... , 0.0085510 secs] [Times: user=0.00 sys=0.00, real=0.01 secs]`
fn parse_jdk8_event(rest: &[u8]) -> Result<GcPause, Unparsed> {
    match usual_young_event(rest)
        .or_else(|| usual_g1_pause(rest))
        .or_else(|| usual_initial_mark(rest))
        .or_else(|| usual_remark(rest))
    {
        Some(pause) => Ok(pause),
        None => other_jdk8_event(rest),
    }
}

/// [`parse_jdk8_event`] of the events that CMS's usual ones are not: Parallel's young
/// collections and G1's cycle, each read straight through where it can be. Out of line,
/// after CMS's readers: a CMS log's remarks and initial marks would pay for Parallel's
/// cause, and one more reader in [`parse_jdk8_event`]'s own chain made each of a CMS
/// log's events dearer by 90 instructions (1 % of the whole).
#[inline(never)]
fn other_jdk8_event(rest: &[u8]) -> Result<GcPause, Unparsed> {
    let usual = usual_parallel_young_event(rest)
        .or_else(|| usual_parallel_full_event(rest))
        .or_else(|| usual_g1_cycle_pause(rest));
    match usual {
        Some(pause) => Ok(pause),
        None => any_jdk8_event(rest),
    }
}

/// [`parse_jdk8_event`] of the line JDK 7 and 8 G1 open a pause's details with, read
/// straight through: `[GC pause (G1 Evacuation Pause) (young), 0.0154 secs]` (JDK 7 prints
/// no cause: `[GC pause (young) (initial-mark), ...`; `(young) , 0.1587570 secs]` where the
/// stitcher cut G1's ergonomics out of the line; `(young) (to-space exhausted)`, a failure
/// to evacuate, named so; the processing of references, see [`after_reference_phase`]); its
/// heap and times follow on lines of their own. `None` for
/// anything else (other kinds, a heap on the line, text after it
/// other than times), which the general reading reads: with its groups and their names
/// built, 2,800 instructions a pause.
fn usual_g1_pause(rest: &[u8]) -> Option<GcPause> {
    /// The kinds, as the name takes them, and whether they are a failure to evacuate (which
    /// the general reading finds by its words: no other word of such an event is one).
    const KINDS: [(&[u8], &str, bool); 6] = [
        (b"young", "young", false),
        (b"mixed", "mixed", false),
        (b"initial-mark", "initial-mark", false),
        (b"partial", "partial", false),
        (b"to-space exhausted", "to-space exhausted", true),
        (b"to-space overflow", "to-space overflow", true),
    ];
    let mut text = rest.strip_prefix(b"[GC pause")?;
    let mut cause = None;
    let mut evacuation = false;
    let mut name = Assembled::new();
    name.push(b"GC pause");
    while let Some(group) = text.strip_prefix(b" (") {
        let end = memchr::memchr(b')', group)?;
        let word = &group[..end];
        if let Some(&(_, kind, failed)) = KINDS.iter().find(|(bytes, ..)| *bytes == word) {
            name.push(b" (");
            name.push(kind.as_bytes());
            name.push(b")");
            evacuation |= failed;
        } else {
            // Only the first group may be a cause (words only: no failure or phase).
            let usual = text.len() + 9 == rest.len()
                && !word.is_empty()
                && word.iter().all(|&c| CAUSE_BYTES[usize::from(c)])
                && !is_g1_kind(word)
                && word != b"CMS Initial Mark"
                && word != b"CMS Final Remark";
            if !usual {
                return None;
            }
            cause = Some(known_or_owned(word));
        }
        text = &group[end + 1..];
    }
    // A blank before the comma: what HotSpot's G1 ergonomics printed into the line before it
    // (`[GC pause (young) 17.265: [G1Ergonomics (CSet Construction) ...]`) was cut out.
    let blanks = text.iter().take_while(|&&c| c == b' ').count();
    let mut text = &text[blanks..];
    if !text.starts_with(b", ") {
        // `-XX:+PrintReferenceGC`: each kind of reference processed, stamped (`2020-09-13T12:27:04.192+0000:
        // 24.192: [SoftReference, 0 refs, 0.0000813 secs]...[JNI Weak Reference, 0.0239112 secs]`).
        loop {
            text = after_reference_phase(skip_stamp_bytes(text).strip_prefix(b"[")?)?;
            if text.starts_with(b", ") {
                break;
            }
        }
    }
    let (duration_ns, after_event) = usual_event_seconds(&text[2..])?;
    let cpu = if after_event.is_empty() {
        None
    } else {
        times_without_failures(after_event)?
    };
    Some(GcPause {
        gc_id: None,
        start: Stamp::default(),
        duration_ns,
        name: name.finish(),
        cause,
        cpu,
        heap: None,
        young: None,
        failures: Failures {
            evacuation,
            ..Failures::default()
        },
        upgraded_to_full: false,
        collector: None,
        generations: None,
        icms_duty_cycle: None,
    })
}

/// What follows the phase of reference processing `text` starts with (after its `[`), as
/// HotSpot prints them into a pause with `-XX:+PrintReferenceGC`: `SoftReference, 0 refs,
/// 0.0000813 secs]` (`PhantomReference` gives two counts, `JNI Weak Reference` none). The
/// names hold no failure's words, no generation's and no CMS phase; the numbers are not
/// read. `None` for any other text.
fn after_reference_phase(text: &[u8]) -> Option<&[u8]> {
    let mut numbers = memory::REFERENCE_PHASES
        .iter()
        .find_map(|phase| text.strip_prefix(*phase))?;
    loop {
        let after = after_unread_number(numbers)?;
        match after.strip_prefix(b" refs, ") {
            Some(next) => numbers = next,
            None => return after.strip_prefix(b" secs]"),
        }
    }
}

/// [`parse_jdk8_event`] of CMS's initial mark as JDK 6-8 print it, read straight through:
/// `[GC [1 CMS-initial-mark: 73765K(95616K)] 78715K(138624K), 0.0001983 secs] [Times: ...`
/// (`ASCMS-` with the incremental mode; JDK 8 prints the cause, `[GC (CMS Initial Mark) [1
/// ...`). It holds no transition: no heap is read. `None` for anything else, which the
/// general reading reads.
fn usual_initial_mark(rest: &[u8]) -> Option<GcPause> {
    const NAME: &str = "CMS Initial Mark";
    let after_gc = rest.strip_prefix(b"[GC")?;
    let (cause, phase) = match after_gc.strip_prefix(b" (CMS Initial Mark)") {
        Some(after) => (Some(Cow::Borrowed(NAME)), after),
        None => (None, after_gc),
    };
    let phase = phase.strip_prefix(b" [1 ")?;
    let old = phase
        .strip_prefix(b"CMS-initial-mark: ")
        .or_else(|| phase.strip_prefix(b"ASCMS-initial-mark: "))?;
    let after_old = memory::whole_occupancy(old)?;
    let after_heap = memory::whole_occupancy(after_old.strip_prefix(b"] ")?)?;
    let (duration_ns, after_event) = usual_event_seconds(after_heap.strip_prefix(b", ")?)?;
    // As after a young collection: failure words may follow the event.
    let cpu = times_without_failures(after_event)?;
    Some(GcPause {
        gc_id: None,
        start: Stamp::default(),
        duration_ns,
        name: Cow::Borrowed(NAME),
        cause,
        cpu,
        heap: None,
        young: None,
        failures: Failures::default(),
        upgraded_to_full: false,
        collector: None,
        generations: None,
        icms_duty_cycle: None,
    })
}

/// The name of Parallel's young collections.
const PARALLEL_YOUNG: &str = "PSYoungGen";

/// [`usual_parallel_young_event`] or [`usual_parallel_full_event`].
fn usual_parallel_event(rest: &[u8]) -> Option<GcPause> {
    usual_parallel_young_event(rest).or_else(|| usual_parallel_full_event(rest))
}

/// [`parse_jdk8_event`] of Parallel's young collection as JDK 6-8 print it, read straight
/// through: `[GC (Allocation Failure) [PSYoungGen: 540800K->1217K(617472K)]
/// 592910K->53464K(2015744K), 0.0082230 secs] [Times: ...` (JDK 6 and 7 print no cause:
/// `[GC [PSYoungGen: ...`). Its one bracket inside names no old generation and no CMS
/// phase, and its words no failure (a failed promotion, `[GC--` or `) --[PSYoungGen`, is
/// left to the general reading, as is anything else). The general reading finds its
/// brackets, arrows, name and cause in a pass each and collects its groups: about 3,000
/// instructions an event.
fn usual_parallel_young_event(rest: &[u8]) -> Option<GcPause> {
    let (cause, young, after_young) = cause_and_young_generation(rest.strip_prefix(b"[GC ")?)?;
    let (heap, after_heap) = memory::whole_transition(after_young.strip_prefix(b"] ")?)?;
    let (duration_ns, after_event) = usual_event_seconds(after_heap.strip_prefix(b", ")?)?;
    let cpu = if after_event.is_empty() {
        None
    } else {
        times_without_failures(after_event)?
    };
    Some(parallel_pause(
        PARALLEL_YOUNG,
        cause,
        (duration_ns, cpu),
        heap,
        young,
    ))
}

/// A pause of Parallel's read straight through: `cause` empty for none, `(duration, cpu)`
/// and its heap's and young generation's transitions; no failure, no generations.
/// Inlined: returned through memory, the pause was copied once more (100 instructions an
/// event).
#[inline(always)]
fn parallel_pause(
    name: &'static str,
    cause: &[u8],
    (duration_ns, cpu): (u64, Option<Cpu>),
    heap: HeapChange,
    young: HeapChange,
) -> GcPause {
    GcPause {
        gc_id: None,
        start: Stamp::default(),
        duration_ns,
        name: Cow::Borrowed(name),
        cause: (!cause.is_empty()).then(|| known_or_owned(cause)),
        cpu,
        heap: Some(heap),
        young: Some(young),
        failures: Failures::default(),
        upgraded_to_full: false,
        collector: None,
        generations: None,
        icms_duty_cycle: None,
    }
}

/// [`parse_jdk8_event`] of Parallel's full collection as JDK 6-8 print it, read straight
/// through: `[Full GC (Ergonomics) [PSYoungGen: 2657K->0K(19136K)] [ParOldGen:
/// 13262K->15771K(43712K)] 15919K->15771K(62848K), [Metaspace: 2626K->2626K(1056768K)],
/// 0.0326 secs] [Times: ...` (JDK 6 and 7 print no cause, `[PSOldGen:` and `[PSPermGen:
/// ...]`). Its generations are read as [`full_gc_generations`] reads them. `None` for
/// anything else, which the general reading reads: with its groups, the generations and a
/// search for an interruption, about 2,500 instructions an event, a full collection of
/// Parallel every few young ones.
fn usual_parallel_full_event(rest: &[u8]) -> Option<GcPause> {
    let (cause, young, after_young) = cause_and_young_generation(rest.strip_prefix(b"[Full GC ")?)?;
    let old_generation = after_young.strip_prefix(b"] [")?;
    let old_body = old_generation
        .strip_prefix(b"ParOldGen:")
        .or_else(|| old_generation.strip_prefix(b"PSOldGen:"))?;
    let old_end = generation_end(old_body)?;
    let after_old = &old_body[old_end..];
    let (heap, after_heap) = memory::whole_transition(after_old.strip_prefix(b"] ")?)?;
    // JDK 8 writes a comma before its `[Metaspace: ...]`.
    let other_generation = after_heap
        .strip_prefix(b" [")
        .or_else(|| after_heap.strip_prefix(b", ["))?;
    let (other_body, metaspace) = match other_generation.strip_prefix(b"PSPermGen:") {
        Some(body) => (body, false),
        None => (other_generation.strip_prefix(b"Metaspace:")?, true),
    };
    let other_end = generation_end(other_body)?;
    let after_other = &other_body[other_end..];
    let (duration_ns, after_event) = usual_event_seconds(after_other.strip_prefix(b"], ")?)?;
    let cpu = if after_event.is_empty() {
        None
    } else {
        times_without_failures(after_event)?
    };
    let generations = Generations {
        old: memory::generation_transition(old_body, old_end),
        perm: (!metaspace)
            .then(|| memory::generation_transition(other_body, other_end))
            .flatten(),
        metaspace,
    };
    Some(GcPause {
        collector: Some(Collector::Parallel),
        generations: Some(Box::new(generations)).filter(|g| !g.is_empty()),
        ..parallel_pause("Full GC", cause, (duration_ns, cpu), heap, young)
    })
}

/// The cause, if any, and Parallel's young generation that follow the name of one of its
/// events (`(Allocation Failure) [PSYoungGen: 540800K->1217K(617472K)`), as the straight
/// readers take them, and the text after the generation's transition. Between the cause
/// and the generation, `-XX:+PrintReferenceGC` prints each kind of reference processed
/// (`(Allocation Failure)2013-10-12T23:05:32.860+0200: 0.198: [SoftReference, 0 refs,
/// 0.0001036 secs]...[JNI Weak Reference, 0.0000340 secs] [PSYoungGen: ...`): passed over,
/// as the general reading passes over them, which took 6,400 instructions an event.
#[inline(always)]
fn cause_and_young_generation(after_name: &[u8]) -> Option<(&[u8], HeapChange, &[u8])> {
    let (cause, generation) = match after_name.strip_prefix(b"(") {
        Some(group) => {
            let (cause, mut after) = usual_cause(group)?;
            while !after.starts_with(b" ") {
                // A stamp or the phase itself: not the `--` of a failed promotion, which
                // the stamp's bytes would pass over.
                if !matches!(after.first(), Some(b'0'..=b'9' | b'[')) {
                    return None;
                }
                after = after_reference_phase(skip_stamp_bytes(after).strip_prefix(b"[")?)?;
            }
            (cause, &after[1..])
        }
        None => (&b""[..], after_name),
    };
    let (young, after_young) =
        memory::whole_transition(generation.strip_prefix(b"[PSYoungGen: ")?)?;
    Some((cause, young, after_young))
}

/// Where a generation's bracket closes in `body` (the text after its `Name:`), when no
/// bracket opens in it first.
fn generation_end(body: &[u8]) -> Option<usize> {
    memchr::memchr2(b'[', b']', body).filter(|&at| body[at] == b']')
}

/// A cause as the straight readers take it, after its `(`: words (see [`is_cause_byte`]:
/// no failure's `f` or `x`), maybe ending with `()` (`System.gc()`), which neither name a
/// G1 kind nor one of CMS's phases (the general reading names the event after those);
/// the cause and what follows its `)`. `None` for anything else.
#[inline]
fn usual_cause(group: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut end = group.iter().position(|&c| !CAUSE_BYTES[usize::from(c)])?;
    if end == 0 {
        return None;
    }
    // `System.gc()`: the cause the general reading reads with its parentheses.
    if group[end..].starts_with(b"()") {
        end += 2;
    }
    let (cause, after) = group.split_at(end);
    let usual = !is_g1_kind(cause) && cause != b"CMS Initial Mark" && cause != b"CMS Final Remark";
    Some((usual.then_some(cause)?, after.strip_prefix(b")")?))
}

/// [`parse_jdk8_event`] of the pauses of G1's concurrent cycle and of its full collection
/// as JDK 7 and 8 print them, read straight through: `[GC cleanup 1389M->1389M(2048M),
/// 0.0009700 secs]`, `[Full GC (Allocation Failure)  1023M->1023M(1024M), 2.3445510 secs]`
/// (no cause in JDK 7; the generations follow on a line of their own), and the remark
/// with its phases (`[GC remark 12.345: [Finalize Marking, 0.0001 secs] 12.345: [GC
/// ref-proc, 0.0002 secs] 12.346: [Unloading, 0.0014 secs], 0.0039 secs]`, or `[GC remark,
/// 0.0039 secs]` without details). None names a generation, a CMS phase or a failure.
/// `None` for anything else (other phases, a heap in the remark, text after the event
/// other than times), which the general reading reads, at about 3,500 instructions an
/// event.
fn usual_g1_cycle_pause(rest: &[u8]) -> Option<GcPause> {
    let (name, cause, heap, after_heap) = if let Some(change) = rest.strip_prefix(b"[GC cleanup ") {
        let (heap, after) = memory::whole_transition(change)?;
        ("GC cleanup", None, Some(heap), after)
    } else if let Some(full) = rest.strip_prefix(b"[Full GC ") {
        let (cause, change) = match full.strip_prefix(b"(") {
            Some(group) => {
                let (cause, after) = usual_cause(group)?;
                let after = after.strip_prefix(b" ")?;
                // JDK 8 leaves the blank of the young generation it no longer prints.
                (Some(cause), after.strip_prefix(b" ").unwrap_or(after))
            }
            None => (None, full),
        };
        let (heap, after) = memory::whole_transition(change)?;
        ("Full GC", cause, Some(heap), after)
    } else {
        let mut text = rest.strip_prefix(b"[GC remark")?;
        if !text.starts_with(b", ") {
            text = text.strip_prefix(b" ")?;
            loop {
                let phase = skip_stamp_bytes(text).strip_prefix(b"[")?;
                let seconds = g1_remark_phase(phase)?;
                text = after_unread_seconds(seconds)?;
                if text.starts_with(b", ") {
                    break;
                }
            }
        }
        ("GC remark", None, None, text)
    };
    let (duration_ns, after_event) = usual_event_seconds(after_heap.strip_prefix(b", ")?)?;
    let cpu = if after_event.is_empty() {
        None
    } else {
        times_without_failures(after_event)?
    };
    Some(GcPause {
        gc_id: None,
        start: Stamp::default(),
        duration_ns,
        name: Cow::Borrowed(name),
        cause: cause.map(known_or_owned),
        cpu,
        heap,
        young: None,
        failures: Failures::default(),
        upgraded_to_full: false,
        collector: None,
        generations: None,
        icms_duty_cycle: None,
    })
}

/// The seconds of one of the phases of a G1 remark HotSpot prints (`GC ref-proc, 0.0002
/// secs]`, after its `[`), `None` for any other text.
#[inline]
fn g1_remark_phase(phase: &[u8]) -> Option<&[u8]> {
    match phase.first()? {
        b'G' => phase.strip_prefix(b"GC ref-proc, "),
        b'F' => phase.strip_prefix(b"Finalize Marking, "),
        b'U' => phase.strip_prefix(b"Unloading, "),
        _ => None,
    }
}

/// The young generations whose collections [`usual_young_event`] reads.
const USUAL_YOUNG_GENERATIONS: [&str; 3] = ["ParNew", "ASParNew", "DefNew"];

/// [`parse_jdk8_event`] of the young collections JDK 6-8 print most often, read straight
/// through: `[GC` and maybe a cause, stamps, `[ParNew: 830688K->25255K(1310720K), 0.1302057
/// secs] 830688K->36167K(4980736K), 0.1306264 secs] [Times: ...` (or `ASParNew`, `DefNew`;
/// with CMS's incremental mode, `... 36167K(4980736K) icms_dc=18 , 0.1306264 secs]`), and
/// those CMS's old generation took over after a concurrent mode failure (see
/// [`usual_failed_young_event`]). The general reading looks at such an event a dozen times
/// (its brackets, arrows, phases, failures, name and cause, each in a pass), three
/// quarters of the time of a CMS log's lines. `None` for anything else, which the general
/// reading reads: what this reads holds no text the general reading would find more in
/// (no other bracket, arrow, phase or failure word).
fn usual_young_event(rest: &[u8]) -> Option<GcPause> {
    let generation = usual_young_generation(rest.strip_prefix(b"[GC")?, false)?;
    let Some(heap) = generation.after.strip_prefix(b" ") else {
        return usual_failed_young_event(&generation);
    };
    let (heap, after_heap) = memory::whole_transition(heap)?;
    let (icms_duty_cycle, duration_ns, after_event) = usual_event_end(after_heap)?;
    // Failures are told by words with an `f` or an `x`, anywhere in the line: none is in
    // what was read (`DefNew`'s `f` begins none), any may be in what follows.
    let cpu = times_without_failures(after_event)?;
    Some(usual_young_pause(
        &generation,
        heap,
        cpu,
        (icms_duty_cycle, duration_ns),
    ))
}

/// The pause of a young collection read straight through: its generation, the heap's
/// transition, its CPU times, and its duty cycle and duration as [`usual_event_end`] reads
/// them.
fn usual_young_pause(
    generation: &UsualYoungGeneration<'_>,
    heap: HeapChange,
    cpu: Option<Cpu>,
    (icms_duty_cycle, duration_ns): (Option<u8>, u64),
) -> GcPause {
    GcPause {
        gc_id: None,
        start: Stamp::default(),
        duration_ns,
        name: Cow::Borrowed(generation.name),
        cause: (!generation.cause.is_empty()).then(|| known_or_owned(generation.cause)),
        cpu,
        heap: Some(heap),
        young: Some(generation.young),
        failures: Failures::default(),
        upgraded_to_full: false,
        collector: None,
        generations: None,
        icms_duty_cycle,
    }
}

/// What [`usual_young_generation`] reads of a young collection.
struct UsualYoungGeneration<'l> {
    /// Its cause (empty when it prints none).
    cause: &'l [u8],
    /// One of [`USUAL_YOUNG_GENERATIONS`].
    name: &'static str,
    young: HeapChange,
    /// What follows the generation's `]`.
    after: &'l [u8],
}

/// The start of a young collection after its `[GC`, up to its generation's `]`: maybe a
/// cause (`(Allocation Failure)`, words only: no failure, phase or G1 kind; `(CMS Final
/// Remark)` too with `in_remark`, the collection that `-XX:+CMSScavengeBeforeRemark` runs
/// inside a remark), stamps, and `[ParNew: 830688K->25255K(1310720K), 0.1302057 secs]`,
/// where a concurrent phase may be glued to the name (see [`glued_concurrent_phase`]).
#[inline]
fn usual_young_generation(after_gc: &[u8], in_remark: bool) -> Option<UsualYoungGeneration<'_>> {
    let (cause, stamps) = match after_gc.strip_prefix(b" (") {
        Some(group) => {
            let end = group.iter().position(|&c| !is_cause_byte(c))?;
            let (cause, after) = group.split_at(end);
            let usual = !cause.is_empty()
                && !is_g1_kind(cause)
                && cause != b"CMS Initial Mark"
                && (in_remark || cause != b"CMS Final Remark");
            (usual.then_some(cause)?, after.strip_prefix(b") ")?)
        }
        None => (&b""[..], after_gc.strip_prefix(b" ").unwrap_or(after_gc)),
    };
    // The stamps before the generation (`10.001: `, `2020-09-13T12:27:13.456+0000: 34.204: `),
    // starting with a digit (not `--`, Parallel's failed promotion).
    let generation = event_stamps(stamps)?.strip_prefix(b"[")?;
    let name = USUAL_YOUNG_GENERATIONS
        .into_iter()
        .find(|name| generation.starts_with(name.as_bytes()))?;
    let mut in_generation = &generation[name.len()..];
    if in_generation.first().is_some_and(u8::is_ascii_digit) {
        // The general reading names the generation by its word less the digits a stamp
        // glued to it ends with: `ASParNew2020-...`, not a generation `ASParNew2`.
        in_generation = glued_concurrent_phase(in_generation)?;
        in_generation = in_generation.strip_prefix(b" ").unwrap_or(in_generation);
    }
    let (young, after_young) = memory::whole_transition(in_generation.strip_prefix(b": ")?)?;
    let after = after_unread_seconds(after_young.strip_prefix(b", ")?)?;
    Some(UsualYoungGeneration {
        cause,
        name,
        young,
        after,
    })
}

/// Stamps inside an event (`10.001: `, `2020-09-13T12:27:13.456+0000: 34.204: `) starting
/// with a digit at the start of `text`, and what follows them.
#[inline]
fn event_stamps(text: &[u8]) -> Option<&[u8]> {
    if !text.first().is_some_and(u8::is_ascii_digit) {
        return None;
    }
    Some(skip_stamp_bytes(text))
}

/// What follows any stamps and blanks at the start of `text`: found 16 bytes at a time
/// (see [`crate::scan::stamp_bytes_run`]); a byte at a time, the stamps between a remark's
/// phases cost a fifth of reading it.
#[inline]
fn skip_stamp_bytes(text: &[u8]) -> &[u8] {
    &text[crate::scan::stamp_bytes_run(text)..]
}

/// A concurrent phase another thread wrote into an event, with its stamps and maybe its
/// times (`2020-09-13T12:34:13.423+0000: 123.052: [ASCMS-concurrent-abortable-preclean:
/// 0.036/0.592 secs] [Times: user=0.62 sys=0.06, real=0.59 secs]`), at the start of
/// `text`: what follows it. Its name holds no failure's `f` or `x`, and no CMS phase the
/// general reading looks for (`CMS-` is followed by `concurrent`).
fn glued_concurrent_phase(text: &[u8]) -> Option<&[u8]> {
    let phase = event_stamps(text)?.strip_prefix(b"[")?;
    let phase = phase.strip_prefix(b"AS").unwrap_or(phase);
    let name = phase.strip_prefix(b"CMS-concurrent-")?;
    let name_end = name
        .iter()
        .position(|&c| !(c.is_ascii_lowercase() && c != b'f' && c != b'x' || c == b'-'))?;
    let times = name[name_end..].strip_prefix(b": ")?;
    // `0.036/0.592`: the phase's time and its wall time.
    let times_end = times
        .iter()
        .position(|&c| !(c.is_ascii_digit() || matches!(c, b'.' | b',' | b'/')))?;
    let after = times[times_end..].strip_prefix(b" secs]")?;
    match after.strip_prefix(b" [Times: ") {
        Some(times) => after_unread_times(times),
        None => Some(after),
    }
}

/// The end of a young collection after its heap's transition: maybe CMS's incremental
/// duty cycle (` icms_dc=18 `), then `, 0.1306264 secs]`: the duty cycle, the duration and
/// what follows the event's bracket.
#[inline]
fn usual_event_end(after_heap: &[u8]) -> Option<(Option<u8>, u64, &[u8])> {
    let (icms_duty_cycle, duration) = match after_heap.strip_prefix(b" icms_dc=") {
        Some(duty_cycle) => {
            let digits = duty_cycle
                .iter()
                .take(4)
                .take_while(|c| c.is_ascii_digit())
                .count();
            if !(1..=3).contains(&digits) {
                return None;
            }
            let value = duty_cycle[..digits]
                .iter()
                .fold(0u16, |n, &d| n * 10 + u16::from(d - b'0'));
            let value = u8::try_from(value).ok().filter(|&v| v <= 100);
            (value, duty_cycle[digits..].strip_prefix(b" , ")?)
        }
        None => (None, after_heap.strip_prefix(b", ")?),
    };
    let (duration_ns, after_event) = usual_event_seconds(duration)?;
    Some((icms_duty_cycle, duration_ns, after_event))
}

/// [`usual_young_event`] of a young collection whose promotion CMS's old generation could
/// not take while it collected concurrently: `[GC 11.315: [ParNew: 19586K->19586K(19648K),
/// 0.0000242 secs]11.315: [CMS (concurrent mode failure): 83511K->54817K(84032K), 0.0353489
/// secs] 103097K->54817K(103680K), [CMS Perm : 2472K->2471K(21248K)], 0.0356364 secs]
/// [Times: ...` (`ASCMS` with the incremental mode; a concurrent phase glued to `CMS`, or
/// the free-list statistics' `CMS: Large block 0x00000000f8424ec0`). `generation` is what
/// [`usual_young_generation`] read of `rest`. The event is named after the young
/// generation and upgraded to a full collection; the old and permanent generations are
/// not kept for it.
fn usual_failed_young_event(generation: &UsualYoungGeneration<'_>) -> Option<GcPause> {
    let old = event_stamps(generation.after)?.strip_prefix(b"[")?;
    let old = old.strip_prefix(b"AS").unwrap_or(old);
    let mut failure = old.strip_prefix(b"CMS")?;
    if let Some(address) = failure.strip_prefix(b"CMS: Large block 0x") {
        // Hexadecimal digits: an `f` there starts no failure's word.
        let digits = address.iter().position(|c| !c.is_ascii_hexdigit())?;
        failure = &address[digits..];
    } else if failure.first().is_some_and(u8::is_ascii_digit) {
        failure = glued_concurrent_phase(failure)?;
    }
    let spaces = failure.iter().position(|&c| c != b' ')?;
    if spaces == 0 {
        return None;
    }
    let old_change = failure[spaces..].strip_prefix(b"(concurrent mode failure): ")?;
    let after_old = memory::after_whole_transition(old_change)?;
    let after_old = after_unread_seconds(after_old.strip_prefix(b", ")?)?;
    let (heap, mut after_heap) = memory::whole_transition(after_old.strip_prefix(b" ")?)?;
    if let Some(permanent) = after_heap
        .strip_prefix(b", [CMS Perm : ")
        .or_else(|| after_heap.strip_prefix(b", [Metaspace: "))
    {
        let after_permanent = memory::after_whole_transition(permanent)?;
        after_heap = after_permanent.strip_prefix(b"]")?;
    }
    let (icms_duty_cycle, duration_ns, after_event) = usual_event_end(after_heap)?;
    let cpu = times_without_failures(after_event)?;
    let mut pause = usual_young_pause(generation, heap, cpu, (icms_duty_cycle, duration_ns));
    pause.failures.concurrent_mode = true;
    pause.upgraded_to_full = true;
    Some(pause)
}

/// [`parse_jdk8_event`] of CMS's remark as JDK 6-8 print it with `-XX:+PrintGCDetails`,
/// read straight through: `[GC[YG occupancy: 30716 K (59008 K)]35.599: [Rescan (parallel)
/// , 0.0006399 secs]35.600: [weak refs processing, 0.0000164 secs]...[1 CMS-remark:
/// 186553K(458752K)] 217270K(517760K), 0.0011261 secs] [Times: ...` (`ASCMS-` with the
/// incremental mode; JDK 8 prints the cause, `[GC (CMS Final Remark) [YG ...`). With
/// `-XX:+CMSScavengeBeforeRemark` a young collection (and its times) comes before the
/// phases: its heap and young generation are the remark's. `None` for anything else,
/// which the general reading reads.
fn usual_remark(rest: &[u8]) -> Option<GcPause> {
    const NAME: &str = "CMS Final Remark";
    let after_gc = rest.strip_prefix(b"[GC")?;
    let (cause, occupancy) = match after_gc.strip_prefix(b" (CMS Final Remark)") {
        Some(after) => (Some(Cow::Borrowed(NAME)), after),
        None => (None, after_gc),
    };
    let occupancy = occupancy.strip_prefix(b" ").unwrap_or(occupancy);
    // `[YG occupancy: 30716 K (59008 K)]`: no transition, and nothing the event is read for.
    fn after_digits(text: &[u8]) -> Option<&[u8]> {
        let digits = text.iter().position(|c| !c.is_ascii_digit())?;
        (digits > 0).then(|| &text[digits..])
    }
    let capacity = after_digits(occupancy.strip_prefix(b"[YG occupancy: ")?)?;
    let after = after_digits(capacity.strip_prefix(b" K (")?)?;
    let mut text = skip_stamp_bytes(after.strip_prefix(b" K)]")?);
    let (mut heap, mut young) = (None, None);
    if let Some(after_gc) = text.strip_prefix(b"[GC") {
        let generation = usual_young_generation(after_gc, true)?;
        let (change, after_heap) = memory::whole_transition(generation.after.strip_prefix(b" ")?)?;
        let mut after = after_unread_seconds(after_heap.strip_prefix(b", ")?)?;
        if let Some(times) = after.strip_prefix(b" [Times: ") {
            after = after_unread_times(times)?;
        }
        (heap, young) = (Some(change), Some(generation.young));
        text = skip_stamp_bytes(after);
    }
    while let Some(phase) = text.strip_prefix(b"[") {
        let Some(seconds) = remark_phase(phase) else {
            break;
        };
        text = skip_stamp_bytes(after_unread_seconds(seconds)?);
    }
    let remark = text.strip_prefix(b"[1 ")?;
    let remark = remark.strip_prefix(b"AS").unwrap_or(remark);
    let old = remark.strip_prefix(b"CMS-remark: ")?;
    let after_old = memory::whole_occupancy(old)?;
    let after_heap = memory::whole_occupancy(after_old.strip_prefix(b"] ")?)?;
    let (duration_ns, after_event) = usual_event_seconds(after_heap.strip_prefix(b", ")?)?;
    let cpu = times_without_failures(after_event)?;
    Some(GcPause {
        gc_id: None,
        start: Stamp::default(),
        duration_ns,
        name: Cow::Borrowed(NAME),
        cause,
        cpu,
        heap,
        young,
        failures: Failures::default(),
        upgraded_to_full: false,
        collector: None,
        generations: None,
        icms_duty_cycle: None,
    })
}

/// The seconds of one of the phases of a CMS remark HotSpot prints (`Rescan (parallel) ,
/// 0.0006399 secs]`, after its `[`), `None` for any other text. Their names hold no
/// failure's words. Told by their first byte and compared as arrays of known length:
/// a search through a list of slices cost a call to `memcmp` for each.
#[inline]
fn remark_phase(phase: &[u8]) -> Option<&[u8]> {
    fn after<'t, const N: usize>(text: &'t [u8], name: &[u8; N]) -> Option<&'t [u8]> {
        let (head, rest) = text.split_first_chunk::<N>()?;
        (head == name).then_some(rest)
    }
    match phase.first()? {
        b'R' => after(phase, b"Rescan (parallel) , "),
        b'w' => after(phase, b"weak refs processing, "),
        b'c' => after(phase, b"class unloading, "),
        b's' => after(phase, b"scrub symbol table, ")
            .or_else(|| after(phase, b"scrub string table, "))
            .or_else(|| after(phase, b"scrub symbol & string tables, ")),
        _ => None,
    }
}

/// The times of an event, from ` [Times: ...` (`after_event`, what follows its bracket):
/// `None` when they are not there, or when any `f` or `x` (of a failure's words) follows
/// the event.
fn times_without_failures(after_event: &[u8]) -> Option<Option<Cpu>> {
    let times = after_event.strip_prefix(b" [Times: ")?;
    // The times HotSpot prints hold none: only what follows them is looked at.
    let (cpu, unread) = match usual_jdk8_times(times) {
        // ` secs]` holds neither: the byte loop is left the blank or line end after it.
        Some((cpu, after_times)) => (
            Some(cpu),
            after_times.strip_prefix(b" secs]").unwrap_or(after_times),
        ),
        None => (any_jdk8_times(times), after_event),
    };
    let holds_f_or_x = if unread.len() <= 16 {
        unread.iter().any(|&c| c == b'f' || c == b'x')
    } else {
        memchr::memchr2(b'f', b'x', unread).is_some()
    };
    (!holds_f_or_x).then_some(cpu)
}

/// What follows `0.1302057 secs]` at the start of `text`: seconds that nothing keeps (a
/// generation's inside its event, a remark's phases), passed over without being read.
/// Digits and separators hold nothing the general reading looks for.
#[inline]
fn after_unread_seconds(text: &[u8]) -> Option<&[u8]> {
    after_unread_number(text)?.strip_prefix(b" secs]")
}

/// What follows the times of a collection inside an event (`user=0.62 sys=0.06, real=0.59
/// secs]`, after `[Times: `), which nothing keeps: passed over without being read.
#[inline]
fn after_unread_times(times: &[u8]) -> Option<&[u8]> {
    let rest = after_unread_number(times.strip_prefix(b"user=")?)?;
    // The comma that ends `sys=0.06,` is passed over with its number.
    let rest = after_unread_number(rest.strip_prefix(b" sys=")?)?;
    let rest = after_unread_number(rest.strip_prefix(b" real=")?)?;
    rest.strip_prefix(b" secs]")
}

/// What follows the digits, `.` and `,` at the start of `text` (at least one): runs of
/// digits counted eight at a time, a separator after each (a byte at a time, the loop
/// cost more than reading the number).
#[inline]
fn after_unread_number(text: &[u8]) -> Option<&[u8]> {
    quick_after_unread_number(text).or_else(|| any_after_unread_number(text))
}

/// [`after_unread_number`] of the numbers HotSpot prints (`0.1302057`: fewer than eight
/// digits, a separator, fewer than eight digits) with eight bytes to load at each run of
/// digits: two loads, no loop. `None` for anything else, which
/// [`any_after_unread_number`] reads.
#[inline(always)]
fn quick_after_unread_number(text: &[u8]) -> Option<&[u8]> {
    let whole = crate::num::leading_digits_in(text.first_chunk::<8>()?);
    if whole == 0 || whole == 8 || !matches!(text[whole], b'.' | b',') {
        return None;
    }
    let fraction = whole + 1;
    let end = fraction + crate::num::leading_digits_in(text.get(fraction..)?.first_chunk::<8>()?);
    // A run of eight digits, or another separator, goes on: the loop reads those.
    if end - fraction == 8 || matches!(text[end], b'.' | b',') {
        return None;
    }
    Some(&text[end..])
}

/// [`after_unread_number`] of any number.
#[inline(never)]
fn any_after_unread_number(text: &[u8]) -> Option<&[u8]> {
    let mut end = 0;
    loop {
        end += crate::num::leading_digit_count(&text[end..]);
        match text.get(end) {
            Some(b'.' | b',') => end += 1,
            _ => break,
        }
    }
    (end > 0).then(|| &text[end..])
}

/// `0.1302057 secs]` at the start of `text`: the seconds, in nanoseconds, as
/// [`secs_to_ns`] reads them, and what follows the bracket (see [`usual_fine_seconds`]).
#[inline]
fn usual_event_seconds(text: &[u8]) -> Option<(u64, &[u8])> {
    quick_event_seconds(text).or_else(|| any_event_seconds(text))
}

/// [`usual_event_seconds`] of a duration under ten seconds (`0.1306264 secs]`: one whole
/// digit, a separator, one to seven more) with eight bytes to load after the separator:
/// the fraction read from one load, no loop over the whole digits. `None` for anything
/// else, which [`any_event_seconds`] reads.
#[inline(always)]
fn quick_event_seconds(text: &[u8]) -> Option<(u64, &[u8])> {
    let (&[first, separator], after) = text.split_first_chunk::<2>()?;
    let whole = first.wrapping_sub(b'0');
    if whole > 9 || (separator | 0x02) != b'.' {
        return None;
    }
    let (fraction, digits) = crate::num::few_leading_digits(after)?;
    if digits == 0 {
        return None;
    }
    let rest = after[digits..].strip_prefix(b" secs]")?;
    let ns = u64::from(whole) * 1_000_000_000 + fraction * POW10[9 - digits];
    Some((ns, rest))
}

/// [`usual_event_seconds`] of any seconds [`usual_fine_seconds`] reads.
#[inline(never)]
fn any_event_seconds(text: &[u8]) -> Option<(u64, &[u8])> {
    let (ns, end) = usual_fine_seconds(text)?;
    Some((ns, text[end..].strip_prefix(b" secs]")?))
}

/// Seconds as HotSpot prints durations at the start of `text` (`0.1302057`: up to nine
/// digits before a `.` or `,` and one to seven after it), in nanoseconds, and where they
/// end; the fraction's digits read at once. `None` for anything else.
#[inline(always)]
fn usual_fine_seconds(text: &[u8]) -> Option<(u64, usize)> {
    let (seconds, separator) = nine_digits(text, 0)?;
    if !matches!(text.get(separator), Some(b'.' | b',')) {
        return None;
    }
    let fraction = &text[separator + 1..];
    let (value, digits) = crate::num::few_leading_digits(fraction).filter(|&(_, n)| n > 0)?;
    Some((
        seconds * 1_000_000_000 + value * POW10[9 - digits],
        separator + 1 + digits,
    ))
}

/// The bytes of a cause [`usual_young_event`] reads: letters, digits, blanks and dots.
const fn is_cause_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() && c != b'f' && c != b'x' || c == b' ' || c == b'.'
}

/// [`is_cause_byte`] of every byte, looked up: the test took ten instructions a byte of a
/// cause (`Allocation Failure`, read for every Parallel and G1 pause).
const CAUSE_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut c = 0;
    while c < 256 {
        table[c] = is_cause_byte(c as u8);
        c += 1;
    }
    table
};

/// [`parse_jdk8_event`] of any event.
fn any_jdk8_event(rest: &[u8]) -> Result<GcPause, Unparsed> {
    let event = memory::jdk8_event(rest).ok_or(Unparsed::Incomplete)?;
    let close = event.close;
    let inner = &rest[1..close];
    let before_secs = inner.strip_suffix(b" secs").ok_or(Unparsed::Malformed)?;
    let num_start = memchr::memrchr(b' ', before_secs).map_or(0, |p| p + 1);
    let duration_ns = secs_to_ns(&before_secs[num_start..]).ok_or(Unparsed::Malformed)?;
    let icms_duty_cycle = icms_duty_cycle(&before_secs[..num_start]);
    let (name, mut cause) = jdk8_name_and_cause(inner, event.cms_phases);
    let after = &rest[close + 1..];
    // HotSpot writes the times right after the event: found there without a search.
    let times_at = if after.starts_with(b" [Times: ") {
        Some(1)
    } else {
        crate::num::find(after, b"[Times: ")
    };
    let cpu = times_at.and_then(|at| parse_jdk8_times(&after[at + 8..]));
    let memory::Jdk8Heap {
        heap,
        young,
        collects_old_generation,
    } = event.heap;
    let failures = jdk8_failures(rest);
    let is_full = crate::PauseType::is_full(&name);
    let upgraded_to_full = !is_full && (failures.concurrent_mode || collects_old_generation);
    // A searcher built once: built at each full collection without a cause (every one of
    // JDK 6 and 7's Parallel logs), it cost a third of reading the event.
    static INTERRUPTED_FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(INTERRUPTED));
    if is_full && cause.is_none() && INTERRUPTED_FINDER.find(rest).is_some() {
        // CMS gave way to a collection that was asked for (System.gc(), a heap dump or
        // inspection): JDK 6 and 7 print no other cause for it.
        cause = Some(Cow::Borrowed("concurrent mode interrupted"));
    }
    // A young collection is named after its generation; a full one's generations tell
    // the collector, and what had filled. G1's `[Eden: ...]` follows the event's brackets.
    // (A young collection upgraded to a full one is judged by its heap: reading its
    // generations cost a twentieth of reading a CMS log that fails every few seconds.)
    let (collector, generations) = if is_full {
        let (collector, generations) = full_gc_generations(rest);
        (
            collector,
            Some(Box::new(generations)).filter(|g| !g.is_empty()),
        )
    } else if heap.is_none() && is_occupancy_only(inner) {
        // `[GC 47513K(83008K), 0.0026705 secs]`: with `-verbose:gc` alone, CMS's initial
        // mark and remark print the heap's occupancy, not a transition; no other collector
        // does.
        (Some(Collector::Cms), None)
    } else if upgraded_to_full && name == "ParNew" && crate::num::find(rest, b"[Tenured").is_some()
    {
        // ParNew's young collection and, in it, Serial's old generation's: `-XX:+UseParNewGC`
        // without CMS (looked for in these events only, a few in a log).
        (Some(Collector::ParNew), None)
    } else {
        (None, None)
    };
    Ok(GcPause {
        gc_id: None,
        start: Stamp::default(),
        duration_ns,
        name,
        cause,
        cpu,
        heap,
        young,
        failures,
        upgraded_to_full,
        collector,
        generations,
        icms_duty_cycle,
    })
}

/// CMS's incremental mode prints its duty cycle where an event's duration follows
/// (`... 230295K->193281K(517760K) icms_dc=18 , 0.0103660 secs]`): `head` is the event up
/// to the duration. Read there and nowhere else, so no other event pays for a search.
fn icms_duty_cycle(head: &[u8]) -> Option<u8> {
    let before_comma = head.strip_suffix(b" , ")?;
    let digits = before_comma
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .count();
    let at = before_comma.len() - digits;
    if !(1..=3).contains(&digits) || !before_comma[..at].ends_with(b"icms_dc=") {
        return None;
    }
    let value = before_comma[at..]
        .iter()
        .fold(0u16, |n, &d| n * 10 + u16::from(d - b'0'));
    u8::try_from(value).ok().filter(|&v| v <= 100)
}

/// The young generation a JDK 6-8 young collection's event names first: `[DefNew:`,
/// `[ParNew:`, `[PSYoungGen:`, `[ASParNew:`; also `[ParNew :` (a concurrent phase cut out
/// of the line left its blank behind), `[ParNew (promotion failed):`, and
/// `[ParNew2016-03-22T10:02:41.970-0100: 13.404: [SoftReference, ...` (reference
/// processing's stamp glued to it). Brackets that name no generation are passed over:
/// `-XX:+PrintTLAB` writes `[id: 27957]` into the event.
fn young_generation(inner: &[u8]) -> Option<&[u8]> {
    // The first bracket names it in nearly every event: one `memchr` each, no set-up.
    let mut from = 0;
    let brackets = std::iter::from_fn(|| {
        let open = from + memchr::memchr(b'[', inner.get(from..)?)?;
        from = open + 1;
        Some(open)
    });
    brackets.take(8).find_map(|open| {
        let word = &inner[open + 1..];
        let end = word
            .iter()
            .position(|c| !c.is_ascii_alphanumeric())
            .unwrap_or(word.len());
        // A stamp glued to the name: `ParNew2016-...`, `ParNew62.880: ...`.
        let name_end = word[..end]
            .iter()
            .rposition(|c| !c.is_ascii_digit())
            .map_or(0, |p| p + 1);
        let name = &word[..name_end];
        (name.ends_with(b"New") || name.ends_with(b"Gen")).then_some(name)
    })
}

/// What CMS prints in a full collection it gave way to.
const INTERRUPTED: &[u8] = b"(concurrent mode interrupted)";

/// `GC 47513K(83008K), 0.0026705 secs`: an event that gives one size and the heap's
/// capacity, and nothing else.
fn is_occupancy_only(inner: &[u8]) -> bool {
    let Some(rest) = inner.strip_prefix(b"GC ") else {
        return false;
    };
    let size = |s: &[u8]| -> Option<usize> {
        let digits = s.iter().take_while(|c| c.is_ascii_digit()).count();
        (digits > 0 && matches!(s.get(digits), Some(b'K' | b'M' | b'G'))).then_some(digits + 1)
    };
    let Some(used) = size(rest) else {
        return false;
    };
    let Some(capacity) = rest[used..].strip_prefix(b"(") else {
        return false;
    };
    size(capacity).is_some_and(|n| capacity[n..].starts_with(b"), "))
}

/// JDK 8 Shenandoah: `Init Mark (process weakrefs), 3.341 ms]` (after `[Pause `), or the
/// pause's opening line, `Init Mark, start]` (`None`).
fn parse_jdk8_shenandoah_pause(body: &[u8]) -> Result<Option<GcPause>, Unparsed> {
    let close = memchr::memchr(b']', body).ok_or(Unparsed::Incomplete)?;
    let inner = &body[..close];
    let comma = memchr::memrchr(b',', inner).ok_or(Unparsed::Malformed)?;
    let value = trim_spaces(&inner[comma + 1..]);
    if value == b"start" {
        return Ok(None);
    }
    let number = value.strip_suffix(b" ms").ok_or(Unparsed::Malformed)?;
    let duration_ns = decimal_scaled(number, 6).ok_or(Unparsed::Malformed)?;
    let mut text = trim_spaces(&inner[..comma]);
    // Drop the heap transition of a degenerated or full GC: "3941M->1733M(3966M)".
    if let Some(sp) = memchr::memrchr(b' ', text) {
        if crate::num::find(&text[sp + 1..], b"->").is_some() {
            text = trim_spaces(&text[..sp]);
        }
    }
    let (name, cause, failures) = pause_name_and_cause(text);
    Ok(Some(GcPause {
        gc_id: None,
        start: Stamp::default(),
        duration_ns,
        name,
        cause,
        cpu: None,
        heap: None,
        young: None,
        failures,
        upgraded_to_full: false,
        collector: None,
        generations: None,
        icms_duty_cycle: None,
    }))
}

/// A CMS collection that fails to promote and then has a concurrent mode failure reports
/// both: both are kept.
fn jdk8_failures(line: &[u8]) -> Failures {
    // Parallel Scavenge marks a young collection that could not promote with `GC--`, and
    // puts the mark after the cause when it prints one: `[GC (Allocation Failure) --[PSYo`.
    let parallel_promotion = line.starts_with(b"[GC--")
        || (line.starts_with(b"[GC (")
            && memchr::memchr(b')', line).is_some_and(|close| {
                let after = &line[close + 1..];
                after.starts_with(b" --") || after.starts_with(b"--")
            }));
    let mut failures = Failures {
        promotion: parallel_promotion,
        ..Failures::default()
    };
    // Each failure's words hold an `f` or an `x` (`exhausted`), which are rare in an event:
    // one pass over them, each looked at in its place, instead of a search for each word.
    for at in crate::scan::any_of(line, [b'f', b'x']) {
        let (before, after) = line.split_at(at);
        if line[at] == b'x' {
            // `to-space exhausted` (G1)
            failures.evacuation |=
                before.ends_with(b"to-space e") && after.starts_with(b"xhausted");
        } else if after.starts_with(b"fail") {
            failures.concurrent_mode |=
                before.ends_with(b"concurrent mode ") && after.starts_with(b"failure");
            failures.promotion |= before.ends_with(b"promotion ") && after.starts_with(b"failed");
        } else {
            // `to-space overflow` (Parallel)
            failures.evacuation |= before.ends_with(b"to-space over") && after.starts_with(b"flow");
        }
    }
    failures
}

/// Where the `]` that closes the `[` that `s` starts with is (what
/// [`memory::jdk8_event`] finds in its pass).
#[cfg(test)]
fn matching_bracket(s: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    for i in crate::scan::any_of(s, [b'[', b']']) {
        if s[i] == b'[' {
            depth += 1;
        } else {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// The name and cause of the event `inner`, which holds the CMS phases `cms_phases` (see
/// [`memory::Jdk8Event::cms_phases`]).
fn jdk8_name_and_cause(
    inner: &[u8],
    cms_phases: (bool, bool),
) -> (Cow<'static, str>, Option<Cow<'static, str>>) {
    let (head, after_head) = if let Some(r) = inner.strip_prefix(b"Full GC") {
        ("Full GC", r)
    } else if let Some(r) = inner.strip_prefix(b"GC pause") {
        ("GC pause", r)
    } else if let Some(r) = inner.strip_prefix(b"GC remark") {
        ("GC remark", r)
    } else if let Some(r) = inner.strip_prefix(b"GC cleanup") {
        ("GC cleanup", r)
    } else {
        ("GC", inner.strip_prefix(b"GC").unwrap_or(inner))
    };
    // Leading groups right after the head: JDK 8 prints the cause first, "(G1 Evacuation
    // Pause)", then G1 adds the kind, "(young)", "(mixed)", "(initial-mark)".
    let mut groups = Vec::new();
    let mut rest = after_head;
    loop {
        let t = trim_spaces(rest);
        if t.first() != Some(&b'(') {
            break;
        }
        let g = paren_groups(t);
        let Some(first) = g.first() else { break };
        groups.push(*first);
        rest = &t[first.len() + 2..];
    }
    // JDK 6 and 7 print no cause: `[GC pause (young)`, `[GC pause (mixed)`.
    let has_cause = groups.first().is_some_and(|g| !is_g1_kind(g));
    let cause = groups
        .first()
        .filter(|_| has_cause)
        .map(|g| known_or_owned(g));
    let (initial_mark, remark) = cms_phases;
    let name = if initial_mark || cause.as_deref() == Some("CMS Initial Mark") {
        Cow::Borrowed("CMS Initial Mark")
    } else if remark || cause.as_deref() == Some("CMS Final Remark") {
        // Without -XX:+PrintGCDetails the cause alone says it: `[GC (CMS Final Remark) ...`.
        Cow::Borrowed("CMS Final Remark")
    } else if head == "GC pause" {
        // The kinds are part of the name, the cause is not: `GC pause (young) (initial-mark)`.
        let mut n = Assembled::new();
        n.push(b"GC pause");
        for g in groups.iter().skip(usize::from(has_cause)) {
            n.push(b" (");
            n.push(g);
            n.push(b")");
        }
        n.finish()
    } else if head == "GC" && is_occupancy_only(inner) {
        // `[GC 47513K(83008K), 0.0026705 secs]`: `-verbose:gc` alone, where CMS's initial
        // mark and remark print the heap's occupancy and nothing tells which one it is.
        Cow::Borrowed("CMS Initial Mark or Remark")
    } else if head == "GC" {
        young_generation(inner).map_or(Cow::Borrowed("GC"), known_or_owned)
    } else {
        Cow::Borrowed(head)
    };
    (name, cause)
}

/// What the generations printed in a JDK 6-8 event (`[CMS: ...`, `[Tenured: ...`,
/// `[PSYoungGen: ...`, `[CMS Perm : ...`) tell: the collector they name (CMS when any is
/// CMS's, which may use Serial's `DefNew`; else the first that tells), and the old and
/// permanent generations' occupancy.
fn full_gc_generations(event: &[u8]) -> (Option<Collector>, Generations) {
    let mut first = None;
    let mut cms = false;
    let mut generations = Generations::default();
    for at in crate::scan::any_of(event, [b'[']) {
        let rest = &event[at + 1..];
        let end = rest
            .iter()
            .position(|c| !(c.is_ascii_alphanumeric() || *c == b' '))
            .unwrap_or(rest.len());
        if rest.get(end) != Some(&b':') {
            continue;
        }
        let name = &rest[..end];
        let told = std::str::from_utf8(name)
            .ok()
            .and_then(Collector::from_generation);
        cms |= told == Some(Collector::Cms);
        first = first.or(told);
        // The generation's own transition, before any bracket nested in it.
        let body = &rest[end + 1..];
        let body = &body[..memchr::memchr2(b'[', b']', body).unwrap_or(body.len())];
        let change = || memory::transition_in(body);
        match name {
            b"ParOldGen" | b"PSOldGen" | b"CMS" | b"Tenured" => {
                generations.old = generations.old.or_else(change);
            }
            b"PSPermGen" | b"CMS Perm " | b"Perm " | b"Perm" | b"PS Perm" => {
                generations.perm = generations.perm.or_else(change);
            }
            b"Metaspace" => generations.metaspace = true,
            _ => {}
        }
    }
    // `[CMS2013-05-01T10:00:00.000+0000: 12.0: [CMS-concurrent-mark: ...] (concurrent mode
    // failure): 1234K->567K(2048K), 3.4 secs]` (or `interrupted`): the phase cut in hides
    // the name.
    if generations.old.is_none() {
        // Searchers built once (`num::find` looks at every place the last byte, a blank,
        // occurs).
        static CONCURRENT_MODE: std::sync::LazyLock<[memchr::memmem::Finder<'static>; 2]> =
            std::sync::LazyLock::new(|| {
                [&b"(concurrent mode "[..], b"): "].map(memchr::memmem::Finder::new)
            });
        let [mode, colon] = &*CONCURRENT_MODE;
        let ended = mode
            .find(event)
            .and_then(|at| colon.find(&event[at..]).map(|end| at + end + 3));
        if let Some(start) = ended {
            let body = &event[start..];
            let body = &body[..memchr::memchr2(b'[', b']', body).unwrap_or(body.len())];
            generations.old = memory::transition_in(body);
        }
    }
    (if cms { Some(Collector::Cms) } else { first }, generations)
}

/// Whether `event` holds `CMS-initial-mark` and whether it holds `CMS-remark` (what
/// [`memory::jdk8_event`] finds in its pass).
#[cfg(test)]
fn cms_phases(event: &[u8]) -> (bool, bool) {
    let mut found = (false, false);
    for at in crate::scan::any_of(event, [b'-']) {
        if at >= 3 && &event[at - 3..at] == b"CMS" {
            let phase = &event[at + 1..];
            found.0 |= phase.starts_with(b"initial-mark");
            found.1 |= phase.starts_with(b"remark");
        }
    }
    found
}

/// The kinds of G1 collections JDK 6-8 print after `GC pause` (early G1 said
/// `partial` for what became `mixed`).
fn is_g1_kind(group: &[u8]) -> bool {
    matches!(
        group,
        b"young"
            | b"mixed"
            | b"partial"
            | b"initial-mark"
            | b"to-space exhausted"
            | b"to-space overflow"
    )
}

/// `s` as text, each byte that is not UTF-8 replaced. (Checking it with `from_utf8` before
/// the lossy conversion saved little on a JDK 8 log and, inlined into the reading of
/// unified lines, cost 1.5 % of it.)
fn lossy(s: &[u8]) -> String {
    String::from_utf8_lossy(s).into_owned()
}

/// [`lossy`], the bytes checked first: the check reads ASCII a word at a time where the
/// lossy conversion reads it byte by byte, and a JDK 8 log's header (its command line
/// flags, hundreds of bytes) is nearly always valid. Not inlined, and not in [`lossy`]:
/// inlined into the reading of unified lines, the check cost more than it saved there.
#[inline(never)]
fn checked_lossy(s: &[u8]) -> String {
    match std::str::from_utf8(s) {
        Ok(text) => text.to_owned(),
        Err(_) => lossy(s),
    }
}

#[cfg(test)]
mod tests;
