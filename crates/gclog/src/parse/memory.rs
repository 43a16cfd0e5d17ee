//! What GC lines say besides pause durations: heap occupancy around a collection, ZGC
//! stalls, concurrent cycles, and the failures that make collections expensive.

use super::{
    lossy, paren_groups, top_level_groups, trim_spaces, GcCycle, HeapChange, OldChange,
    OutOfMemory, Record, Stall, StallKind,
};
use crate::num::{decimal_scaled, duration_with_unit};
use pauselab_pause::Collector;

/// `24M`, `1234K`, `0.0B`, `12.5G` into bytes.
pub fn size_bytes(s: &[u8]) -> Option<u64> {
    let (&unit, num) = s.split_last()?;
    let scale = unit_bytes(unit)?;
    // Three fraction digits are more than any GC log prints.
    let thousandths = decimal_scaled(num, 3)?;
    Some((u128::from(thousandths) * u128::from(scale) / 1000).min(u128::from(u64::MAX)) as u64)
}

/// `24M->4M(256M)`, `1234K->567K(8192K)`, ZGC's `58M(91%)->64M(100%)`; capacity is the
/// number in parentheses after the arrow when it is a size.
pub fn heap_change(token: &[u8]) -> Option<HeapChange> {
    whole_sizes_change(token).or_else(|| any_heap_change(token))
}

/// [`heap_change`] of any of the forms it reads.
fn any_heap_change(token: &[u8]) -> Option<HeapChange> {
    let arrow = crate::num::find(token, b"->")?;
    let before = &token[..arrow];
    let before = &before[..memchr::memchr(b'(', before).unwrap_or(before.len())];
    let after = &token[arrow + 2..];
    let (after, capacity) = match memchr::memchr(b'(', after) {
        Some(open) => {
            let inner = after[open + 1..].strip_suffix(b")")?;
            (&after[..open], size_bytes(inner))
        }
        None => (after, None),
    };
    Some(HeapChange {
        before: size_bytes(before)?,
        after: size_bytes(after)?,
        capacity,
    })
}

/// Bytes in one of the units a size is written in (`B`, `K`, `M`, `G`, `T`), looked up
/// rather than compared unit by unit: a JDK 8 event prints up to a dozen sizes.
#[inline]
fn unit_bytes(unit: u8) -> Option<u64> {
    const NO_UNIT: u8 = u8::MAX;
    const SHIFTS: [u8; 256] = {
        let mut shifts = [NO_UNIT; 256];
        shifts[b'B' as usize] = 0;
        shifts[b'K' as usize] = 10;
        shifts[b'M' as usize] = 20;
        shifts[b'G' as usize] = 30;
        shifts[b'T' as usize] = 40;
        shifts
    };
    let shift = SHIFTS[usize::from(unit)];
    (shift != NO_UNIT).then(|| 1 << shift)
}

/// [`heap_change`] of the form JDK 8 prints, whole sizes (`830688K->36167K(4980736K)`),
/// read in one pass; `None` for any other, which the general reading reads.
fn whole_sizes_change(token: &[u8]) -> Option<HeapChange> {
    let (before, rest) = whole_size(token)?;
    let (after, rest) = whole_size(rest.strip_prefix(b"->")?)?;
    let capacity = match rest {
        [] => None,
        [b'(', inner @ .., b')'] => match whole_size(inner)? {
            (capacity, []) => Some(capacity),
            _ => return None,
        },
        _ => return None,
    };
    Some(HeapChange {
        before,
        after,
        capacity,
    })
}

/// A whole number of at most 15 digits (no overflow) and its unit, in bytes, and what
/// follows its unit. A loop over the digits: iterator adapters cost four times as much on
/// the few digits of a size (three sizes in every transition of a JDK 8 event).
#[inline]
fn whole_size(text: &[u8]) -> Option<(u64, &[u8])> {
    let (number, digits) = match crate::num::few_leading_digits(text) {
        Some(few) => few,
        None => whole_digits(text)?,
    };
    if digits == 0 {
        return None;
    }
    let scale = unit_bytes(*text.get(digits)?)?;
    Some((number.saturating_mul(scale), &text[digits + 1..]))
}

/// The transition of whole sizes with a capacity `text` starts with
/// (`830688K->36167K(4980736K)`), as [`heap_change`] reads it, and what follows it.
#[inline]
pub fn whole_transition(text: &[u8]) -> Option<(HeapChange, &[u8])> {
    quick_whole_transition(text).or_else(|| any_whole_transition(text))
}

/// [`whole_transition`] of sizes of fewer than eight digits with eight bytes to load at
/// each (what JDK 8 prints but for heaps of 10 GiB or more), in one straight pass:
/// each size's digits found and read from one load, its unit's bytes a shift for `K`,
/// all of it inlined. Three calls to [`whole_size`] returned their results through
/// memory and cost 210 instructions a transition. `None` for anything else, which
/// [`any_whole_transition`] reads.
#[inline(always)]
fn quick_whole_transition(text: &[u8]) -> Option<(HeapChange, &[u8])> {
    let (before, at) = quick_whole_size(text, 0)?;
    if text.get(at..at + 2)? != b"->" {
        return None;
    }
    let (after, at) = quick_whole_size(text, at + 2)?;
    if text.get(at) != Some(&b'(') {
        return None;
    }
    let (capacity, at) = quick_whole_size(text, at + 1)?;
    if text.get(at) != Some(&b')') {
        return None;
    }
    let change = HeapChange {
        before,
        after,
        capacity: Some(capacity),
    };
    Some((change, &text[at + 1..]))
}

/// [`whole_size`] of the size at `text[at..]` when it has fewer than eight digits and
/// eight bytes follow `at`: its bytes and where its unit ends. Fewer than eight digits
/// times a terabyte fit in a `u64`: nothing saturates.
#[inline(always)]
fn quick_whole_size(text: &[u8], at: usize) -> Option<(u64, usize)> {
    let chunk = text.get(at..)?.first_chunk::<8>()?;
    let (number, digits) = crate::num::few_digits_in(chunk)?;
    if digits == 0 {
        return None;
    }
    let unit = chunk[digits];
    let bytes = if unit == b'K' {
        number << 10
    } else {
        number * other_unit_bytes(unit)?
    };
    Some((bytes, at + digits + 1))
}

/// [`unit_bytes`] of a unit other than `K`, out of line: inlined, the compiler folded the
/// test for `K` into a jump table over every unit.
#[cold]
#[inline(never)]
fn other_unit_bytes(unit: u8) -> Option<u64> {
    unit_bytes(unit)
}

/// [`whole_transition`] of any whole sizes.
#[inline(never)]
fn any_whole_transition(text: &[u8]) -> Option<(HeapChange, &[u8])> {
    let (before, rest) = whole_size(text)?;
    let (after, rest) = whole_size(rest.strip_prefix(b"->")?)?;
    let (capacity, rest) = whole_size(rest.strip_prefix(b"(")?)?;
    let change = HeapChange {
        before,
        after,
        capacity: Some(capacity),
    };
    Some((change, rest.strip_prefix(b")")?))
}

/// What follows the occupancy of whole sizes `text` starts with (`73765K(95616K)`), which
/// is passed over unread: what reads it keeps none of its numbers.
pub fn whole_occupancy(text: &[u8]) -> Option<&[u8]> {
    let rest = after_whole_size(text)?;
    let rest = after_whole_size(rest.strip_prefix(b"(")?)?;
    rest.strip_prefix(b")")
}

/// What follows the transition of whole sizes with a capacity `text` starts with
/// (`830688K->36167K(4980736K)`), passed over unread (an old generation's in a young
/// collection's event, which nothing keeps).
pub fn after_whole_transition(text: &[u8]) -> Option<&[u8]> {
    let rest = after_whole_size(text)?;
    let rest = after_whole_size(rest.strip_prefix(b"->")?)?;
    whole_occupancy_end(rest)
}

/// What follows `(4980736K)` at the start of `text`.
fn whole_occupancy_end(text: &[u8]) -> Option<&[u8]> {
    after_whole_size(text.strip_prefix(b"(")?)?.strip_prefix(b")")
}

/// What follows a whole number and its unit (`830688K`) at the start of `text`, the
/// number not read.
#[inline]
fn after_whole_size(text: &[u8]) -> Option<&[u8]> {
    let digits = crate::num::leading_digit_count(text);
    if digits == 0 {
        return None;
    }
    unit_bytes(*text.get(digits)?)?;
    Some(&text[digits + 1..])
}

/// The digits `text` starts with, one by one: their value and how many there are; `None`
/// for more than [`MAX_WHOLE_DIGITS`].
fn whole_digits(text: &[u8]) -> Option<(u64, usize)> {
    let mut number = 0u64;
    let mut digits = 0;
    while let Some(&c) = text.get(digits).filter(|c| c.is_ascii_digit()) {
        if digits == MAX_WHOLE_DIGITS {
            return None;
        }
        number = number * 10 + u64::from(c - b'0');
        digits += 1;
    }
    Some((number, digits))
}

/// Most digits [`whole_size`] reads.
const MAX_WHOLE_DIGITS: usize = 15;

/// `heap_change(word_around(text, start, end, arrow))`: the transition whose `->` is at
/// `arrow`, read from the arrow outwards when it is whole sizes between separators (as
/// JDK 8 prints them), without first looking for where its word starts and ends.
fn heap_change_around(text: &[u8], start: usize, end: usize, arrow: usize) -> Option<HeapChange> {
    whole_sizes_around(text, start, end, arrow)
        .or_else(|| heap_change(word_around(text, start, end, arrow)))
}

/// The first transition in `text` (` 1306380K->1038374K(1310720K), 0.5 secs`).
pub fn transition_in(text: &[u8]) -> Option<HeapChange> {
    let arrow = crate::num::find(text, b"->")?;
    heap_change_around(text, 0, text.len(), arrow)
}

/// [`transition_in`] of a generation's body in a full collection, `text[..end]`
/// (` 13262K->15771K(43712K)`, before its `]`; two in each of Parallel's full collections),
/// read in one pass where it is a transition and nothing else: the search for the arrow
/// and the reading back from it cost 500 instructions. The text after `end` lets each
/// size be loaded in one read.
pub fn generation_transition(text: &[u8], end: usize) -> Option<HeapChange> {
    let body = text.get(..end)?;
    if let Some((change, rest)) = text.strip_prefix(b" ").and_then(whole_transition) {
        if rest.len() == text.len() - end {
            return Some(change);
        }
    }
    transition_in(body)
}

/// [`heap_change_around`] of whole sizes; `None` for anything else.
fn whole_sizes_around(text: &[u8], start: usize, end: usize, arrow: usize) -> Option<HeapChange> {
    let text = text.get(..end)?;
    if text.get(arrow..arrow + 2) != Some(b"->") {
        return None;
    }
    // Before the arrow: the unit, then the digits back to the word's start.
    let unit_at = arrow.checked_sub(1).filter(|&at| at >= start)?;
    let scale = unit_bytes(text[unit_at])?;
    let (number, from) = match crate::num::few_trailing_digits(&text[..unit_at], unit_at - start) {
        Some((number, digits)) => (number, unit_at - digits),
        None => {
            let (mut number, mut power, mut from) = (0u64, 1u64, unit_at);
            while from > start && text[from - 1].is_ascii_digit() {
                if unit_at - from == MAX_WHOLE_DIGITS {
                    return None;
                }
                from -= 1;
                number += u64::from(text[from] - b'0') * power;
                power = power.saturating_mul(10);
            }
            (number, from)
        }
    };
    if from == unit_at || (from > start && !ends_words(text[from - 1])) {
        return None;
    }
    let before = number.saturating_mul(scale);
    // After it: a size, and a capacity in parentheses, up to the word's end.
    let (after, rest) = whole_size(text.get(arrow + 2..)?)?;
    let (capacity, rest) = match rest.strip_prefix(b"(") {
        Some(inner) => {
            let (capacity, rest) = whole_size(inner)?;
            (Some(capacity), rest.strip_prefix(b")")?)
        }
        None => (None, rest),
    };
    if rest.first().is_some_and(|&c| !ends_words(c)) {
        return None;
    }
    Some(HeapChange {
        before,
        after,
        capacity,
    })
}

/// The old generation's line of a unified `gc,heap` collection summary: Serial
/// `Tenured: 2741K->2741K(174784K)` (JDK 17+: `2762K(174784K)->2762K(174784K)`), Parallel
/// `ParOldGen: 982K(175104K)->982K(175104K)` (`PSOldGen:` on old JDKs), CMS `CMS: ...`, G1
/// `Old regions: 1->3`.
pub fn old_generation(body: &[u8]) -> Option<(OldChange, Collector)> {
    if let Some(regions) = body.strip_prefix(b"Old regions: ") {
        let arrow = crate::num::find(regions, b"->")?;
        let after = &regions[arrow + 2..];
        let after = &after[..memchr::memchr(b'(', after).unwrap_or(after.len())];
        let change = OldChange::Regions {
            before: decimal_scaled(trim_spaces(&regions[..arrow]), 0)?,
            after: decimal_scaled(trim_spaces(after), 0)?,
        };
        return Some((change, Collector::G1));
    }
    let (transition, collector) = [
        (&b"Tenured: "[..], Collector::Serial),
        (b"ParOldGen: ", Collector::Parallel),
        (b"PSOldGen: ", Collector::Parallel),
        (b"CMS: ", Collector::Cms),
    ]
    .iter()
    .find_map(|(name, collector)| Some((body.strip_prefix(*name)?, *collector)))?;
    let token = transition.split(|&c| c == b' ').next()?;
    heap_change(token).map(|change| (OldChange::Bytes(change), collector))
}

/// The heap and the young generation of a JDK 7/8 G1 `-XX:+PrintGCDetails` event, from its
/// detail line `[Eden: 24.0M(24.0M)->0.0B(20.0M) Survivors: 0.0B->3072.0K Heap:
/// 24.0M(256.0M)->4000.0K(256.0M)]` (given without `[Eden: `). The young generation is eden
/// plus survivors, before and after.
pub fn g1_details_heap(text: &[u8]) -> Option<(HeapChange, HeapChange)> {
    usual_g1_details_heap(text).or_else(|| any_g1_details_heap(text))
}

/// [`g1_details_heap`] of the line as HotSpot prints it, every size with one decimal (a `.`,
/// or a `,` in a locale with a decimal comma)
/// (`20.0G(20.0G)->0.0B(17.5G) Survivors: 0.0B->2560.0M Heap: 21.5G(80.0G)->14.5G(80.0G)]`),
/// read in one pass: the general reading searches for each field and reads each size
/// twice. `None` for anything else, which the general reading reads.
fn usual_g1_details_heap(text: &[u8]) -> Option<(HeapChange, HeapChange)> {
    let (eden, rest) = tenths_transition(text)?;
    let (survivors, rest) = tenths_transition(rest.strip_prefix(b" Survivors: ")?)?;
    let (heap, rest) = tenths_transition(rest.strip_prefix(b" Heap: ")?)?;
    if rest != b"]" {
        return None;
    }
    let young = HeapChange {
        before: eden.before.saturating_add(survivors.before),
        after: eden.after.saturating_add(survivors.after),
        capacity: None,
    };
    Some((heap, young))
}

/// A transition of sizes with one decimal, `20.0G(20.0G)->0.0B(17.5G)` or `0.0B->2560.0M`,
/// as [`heap_change`] reads it when the word ends there (the size in parentheses before
/// the arrow is not kept), and what follows it.
fn tenths_transition(text: &[u8]) -> Option<(HeapChange, &[u8])> {
    /// A size in parentheses at the start of `text`, and what follows them (inlined: as a
    /// closure it stayed a call, 60 instructions a size).
    #[inline(always)]
    fn in_parentheses(text: &[u8]) -> Option<(u64, &[u8])> {
        let (size, rest) = tenths_size(text.strip_prefix(b"(")?)?;
        Some((size, rest.strip_prefix(b")")?))
    }
    let (before, mut rest) = tenths_size(text)?;
    if let Some((_, after)) = in_parentheses(rest) {
        rest = after;
    }
    let (after, mut rest) = tenths_size(rest.strip_prefix(b"->")?)?;
    let mut capacity = None;
    if let Some((size, after)) = in_parentheses(rest) {
        capacity = Some(size);
        rest = after;
    }
    let change = HeapChange {
        before,
        after,
        capacity,
    };
    Some((change, rest))
}

/// A size of one to nine digits, one decimal and its unit (`17.5G`, or `17,5G` in a locale
/// with a decimal comma), in bytes as [`size_bytes`] gives them, and what follows it. Its
/// digits are read eight bytes at a time, and it is inlined into [`tenths_transition`]
/// (`#[inline]` alone left it a call): with both, a line reads in 940 instructions, 1,180
/// before.
#[inline(always)]
fn tenths_size(text: &[u8]) -> Option<(u64, &[u8])> {
    let (whole, digits) = match crate::num::few_leading_digits(text) {
        Some((_, 0)) => return None,
        Some(few) => few,
        None => super::nine_digits(text, 0)?,
    };
    let [b'.' | b',', tenth @ b'0'..=b'9', unit, ..] = text[digits..] else {
        return None;
    };
    let scale = unit_bytes(unit)?;
    // `size_bytes` takes thousandths times the scale over a thousand: the whole part times
    // the scale plus a tenth of the tenths times it, without its 128-bit division, and as
    // it saturates.
    let tenths = u64::from(tenth - b'0') * scale / 10;
    let bytes = whole
        .checked_mul(scale)
        .and_then(|bytes| bytes.checked_add(tenths))
        .unwrap_or(u64::MAX);
    Some((bytes, &text[digits + 3..]))
}

/// [`g1_details_heap`] of any of the forms it reads.
fn any_g1_details_heap(text: &[u8]) -> Option<(HeapChange, HeapChange)> {
    let text = text.strip_suffix(b"]").unwrap_or(text);
    let field = |name: &[u8]| -> Option<HeapChange> {
        let at = crate::num::find(text, name)?;
        let token = text[at + name.len()..].split(|&c| c == b' ').next()?;
        heap_change(token)
    };
    let eden = heap_change(text.split(|&c| c == b' ').next()?)?;
    let survivors = field(b"Survivors: ")?;
    let heap = field(b"Heap: ")?;
    let young = HeapChange {
        before: eden.before.saturating_add(survivors.before),
        after: eden.after.saturating_add(survivors.after),
        capacity: None,
    };
    Some((heap, young))
}

/// The last space-separated word of `text` that is a heap transition.
pub fn last_heap_change(text: &[u8]) -> Option<HeapChange> {
    last_transition_word(text, |c| c == b' ').and_then(heap_change)
}

/// The last word of `text` holding `->` (words end where `separates` says), whether or not
/// it reads as a transition.
fn last_transition_word(text: &[u8], separates: impl Fn(u8) -> bool) -> Option<&[u8]> {
    text.rsplit(|&c| separates(c)).find(|w| has_arrow(w))
}

fn has_arrow(text: &[u8]) -> bool {
    memchr::memchr_iter(b'-', text).any(|at| text.get(at + 1) == Some(&b'>'))
}

/// `Allocation Stall (thread name) 315.000ms`, `Relocation Stall (...) 1.2ms` (ZGC).
pub fn stall(msg: &[u8]) -> Option<Result<Record, super::Unparsed>> {
    let (kind, rest) = if let Some(r) = msg.strip_prefix(b"Allocation Stall (") {
        (StallKind::Allocation, r)
    } else if let Some(r) = msg.strip_prefix(b"Relocation Stall (") {
        (StallKind::Relocation, r)
    } else {
        return None;
    };
    // Thread names may hold parentheses and spaces: the duration is after the last ") ".
    let Some(close) = memchr::memmem::rfind(rest, b") ") else {
        return Some(Err(super::Unparsed::Malformed));
    };
    let Some(duration_ns) = duration_with_unit(trim_spaces(&rest[close + 2..])) else {
        return Some(Err(super::Unparsed::Malformed));
    };
    Some(Ok(Record::Stall(Stall {
        kind,
        thread: lossy(&rest[..close]),
        duration_ns,
    })))
}

/// ZGC's `Out Of Memory (main)`: the thread's allocation failed after its stalls, and it
/// gets `java.lang.OutOfMemoryError: Java heap space`.
pub fn zgc_out_of_memory(msg: &[u8]) -> Option<Record> {
    let thread = msg.strip_prefix(b"Out Of Memory (")?.strip_suffix(b")")?;
    Some(Record::OutOfMemory(OutOfMemory {
        thread: Some(lossy(thread)),
        what: Some("Java heap space".to_string()),
        thrown: false,
    }))
}

/// An `OutOfMemoryError` as the JVM prints it where no logging framework catches it
/// (standard output or error, where `-verbose:gc` writes too): `Exception in thread "main"
/// java.lang.OutOfMemoryError: Java heap space`, or the error alone, as
/// `-XX:+HeapDumpOnOutOfMemoryError` prints it before `Dumping heap to ...`.
pub fn thrown_out_of_memory(line: &[u8]) -> Option<Record> {
    const ERROR: &[u8] = b"java.lang.OutOfMemoryError";
    let (thread, error) = match line.strip_prefix(b"Exception in thread \"") {
        Some(rest) => {
            let close = memchr::memmem::find(rest, b"\" ")?;
            (Some(lossy(&rest[..close])), &rest[close + 2..])
        }
        None => (None, line),
    };
    let rest = error.strip_prefix(ERROR)?;
    let what = rest.strip_prefix(b": ").map(|w| lossy(trim_spaces(w)));
    (rest.is_empty() || what.is_some()).then_some(Record::OutOfMemory(OutOfMemory {
        thread,
        what,
        thrown: true,
    }))
}

/// Lines that close a whole collection cycle: G1 `Concurrent Mark Cycle 12.3ms` (JDK 11:
/// `Concurrent Cycle`), ZGC `Garbage Collection (Warmup) 14M(11%)->10M(8%)`, generational ZGC
/// `Minor Collection (Allocation Rate) 58M(91%)->64M(100%) 0.008s` / `Major Collection`,
/// Shenandoah `Concurrent cleanup 45M->12M(256M) 0.1ms` (heap after its cycle).
pub fn cycle(gc_id: u64, body: &[u8]) -> Option<Record> {
    let name: &str = if body.starts_with(b"Concurrent Mark Cycle ") {
        "Concurrent Mark Cycle"
    } else if body.starts_with(b"Concurrent Cycle ") {
        "Concurrent Cycle"
    } else if body.starts_with(b"Minor Collection") {
        "Minor Collection"
    } else if body.starts_with(b"Major Collection") {
        "Major Collection"
    } else if body.starts_with(b"Garbage Collection") {
        "Garbage Collection"
    } else if body.starts_with(b"Concurrent cleanup") {
        "Concurrent cleanup"
    } else {
        return None;
    };
    let last = body.rsplit(|&c| c == b' ').next().unwrap_or_default();
    let duration_ns = last
        .first()
        .filter(|c| c.is_ascii_digit())
        .and_then(|_| duration_with_unit(last));
    let heap = last_heap_change(body);
    if duration_ns.is_none() && heap.is_none() {
        return None; // the line that opens the cycle
    }
    let groups = paren_groups(&body[name.len()..]);
    let cause = match name {
        "Minor Collection" | "Major Collection" | "Garbage Collection" => {
            groups.first().map(|g| lossy(g))
        }
        _ => None,
    };
    Some(Record::Cycle(GcCycle {
        gc_id,
        name: name.to_string(),
        cause,
        heap,
        // Shenandoah's cleanup is one phase, not the cycle.
        duration_ns: duration_ns.filter(|_| name != "Concurrent cleanup"),
    }))
}

/// The young generation and whole-heap transitions of a JDK 8 one-line event:
/// `[GC (Allocation Failure) [PSYoungGen: 100K->10K(200K)] 300K->210K(1000K), 0.01 secs]`.
/// The heap transition is the last one outside nested brackets; the young one is the first
/// nested bracket's. A CMS remark that holds a young collection
/// (`-XX:+CMSScavengeBeforeRemark`) prints no transition of its own: that collection's are
/// the pause's.
#[cfg(test)]
pub fn jdk8_heap(inner: &[u8]) -> Jdk8Heap {
    jdk8_heap_of(inner, &event_scan(inner, false))
}

/// `jdk8_heap` of an event whose text is read in `scan`.
fn jdk8_heap_of(inner: &[u8], scan: &EventScan) -> Jdk8Heap {
    let (heap, young) = match (scan.heap, scan.young) {
        (None, _) => match top_level_groups(inner, b'[', b']').find(|g| g.starts_with(b"GC")) {
            Some(young_gc) => event_heap(young_gc),
            None => (None, None),
        },
        found => found,
    };
    Jdk8Heap {
        heap,
        young,
        collects_old_generation: scan.collects_old_generation,
    }
}

/// What one pass over a JDK 6-8 event, from its `[` to the `]` that closes it, reads.
pub struct Jdk8Event {
    /// Where the `]` that closes the event is.
    pub close: usize,
    /// Its heap and young generation (as `jdk8_heap` reads them).
    pub heap: Jdk8Heap,
    /// Whether it holds `CMS-initial-mark`, and whether it holds `CMS-remark`.
    pub cms_phases: (bool, bool),
}

/// [`Jdk8Event`] of `event` (which starts with its `[`): `None` when no bracket closes it.
/// One pass finds the closing bracket and reads the event's brackets, arrows and CMS
/// phases together (each was a pass of its own, over the same text).
pub fn jdk8_event(event: &[u8]) -> Option<Jdk8Event> {
    let text = event.get(1..)?;
    let scan = event_scan(text, true);
    let inner_len = scan.close?;
    Some(Jdk8Event {
        close: inner_len + 1,
        heap: jdk8_heap_of(&text[..inner_len], &scan),
        cms_phases: scan.cms_phases,
    })
}

/// What `jdk8_heap` reads of a JDK 6-8 event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Jdk8Heap {
    /// The whole heap before and after.
    pub heap: Option<HeapChange>,
    /// The young generation before and after.
    pub young: Option<HeapChange>,
    /// The event holds a collection of the old generation (`[CMS:`, `[CMS (concurrent
    /// mode failure)`, Serial's `[Tenured:`; not CMS's concurrent phases, `[CMS-`): in a
    /// young collection's event, a full collection ran inside it, after a failed
    /// promotion, or when the young collection saw that the old generation could not
    /// take what it would promote (Serial and CMS print nothing then: `[GC [DefNew:
    /// ...][Tenured: ...]`). Parallel's `GC--` has none: its full collection is an event
    /// of its own.
    pub collects_old_generation: bool,
}

/// What one pass over an event's brackets and arrows reads (see [`event_heap`]).
struct EventScan {
    heap: Option<HeapChange>,
    young: Option<HeapChange>,
    collects_old_generation: bool,
    /// Whether the text holds `CMS-initial-mark`, and whether it holds `CMS-remark`.
    cms_phases: (bool, bool),
    /// Where the first `]` that closes no group of the text is, when the scan stopped
    /// there.
    close: Option<usize>,
}

/// Whether the bracket at `at` opens a collection of the old generation (see
/// [`Jdk8Heap::collects_old_generation`]).
fn opens_old_generation(text: &[u8], at: usize) -> bool {
    match text.get(at + 1) {
        Some(b'T') => text[at + 1..].starts_with(b"Tenured"),
        Some(b'C') => text[at + 1..].starts_with(b"CMS") && text.get(at + 4) != Some(&b'-'),
        _ => false,
    }
}

/// `jdk8_heap` of one event's text, without copying it: words end at spaces and commas, and
/// nested groups (`[ParNew: ...]`) separate the text outside them (the gaps). The young
/// generation's transition is the last word with a `->` in the first group, the heap's the
/// last one in the last gap that holds any.
///
/// One pass over the brackets and arrows: the text between them is never looked at, and
/// only the two words wanted are read (a CMS remark with date stamps has a dozen groups
/// and gaps, and its dates hold more `-` than its transitions).
fn event_heap(inner: &[u8]) -> (Option<HeapChange>, Option<HeapChange>) {
    let scan = event_scan(inner, false);
    (scan.heap, scan.young)
}

/// [`event_heap`], and in the same pass whether any bracket opens a collection of the old
/// generation (a search of its own cost 1 % of reading a log of one-line CMS events) and
/// which CMS phases the text names. With `stop_at_close`, the text read ends at the first
/// `]` that closes no group (the event's own, when `text` follows its `[`); without, such
/// a `]` is text.
fn event_scan(text: &[u8], stop_at_close: bool) -> EventScan {
    let mut collects_old_generation = false;
    let mut cms_phases = (false, false);
    let mut close = None;
    // Where the last `->` seen so far starts.
    let mut last_arrow: Option<usize> = None;
    let mut depth = 0usize;
    // The gap being read starts here, after the last top-level group closed.
    let mut gap_start = 0;
    // The open top-level group's `[`, and the last `->` before it.
    let mut open = 0;
    let mut arrow_before_open = None;
    let mut first_group_closed = false;
    let mut young = None;
    // The last gap that holds a `->`: where it starts and ends, and its last `->`.
    let mut heap_gap: Option<(usize, usize, usize)> = None;
    for at in crate::scan::any_of(text, [b'[', b']', b'-']) {
        match text[at] {
            b'-' => {
                if text.get(at + 1) == Some(&b'>') {
                    last_arrow = Some(at);
                } else if at >= 3 && &text[at - 3..at] == b"CMS" {
                    let phase = &text[at + 1..];
                    cms_phases.0 |= phase.starts_with(b"initial-mark");
                    cms_phases.1 |= phase.starts_with(b"remark");
                }
            }
            b'[' => {
                collects_old_generation |= opens_old_generation(text, at);
                if depth == 0 {
                    open = at;
                    arrow_before_open = last_arrow;
                }
                depth += 1;
            }
            _ => {
                if depth == 0 {
                    if stop_at_close {
                        close = Some(at);
                        break;
                    }
                    continue; // a stray `]` is text
                }
                depth -= 1;
                if depth > 0 {
                    continue;
                }
                if let Some(arrow) = arrow_before_open.filter(|&a| a >= gap_start) {
                    heap_gap = Some((gap_start, open, arrow));
                }
                if !first_group_closed && !precedes_generation(&text[open + 1..]) {
                    first_group_closed = true;
                    young = last_arrow
                        .filter(|&a| a > open)
                        .and_then(|arrow| heap_change_around(text, open + 1, at, arrow));
                }
                gap_start = at + 1;
            }
        }
    }
    // The text after the last group closed, with any group left open in it.
    let end = close.unwrap_or(text.len());
    if let Some(arrow) = last_arrow.filter(|&a| a >= gap_start) {
        heap_gap = Some((gap_start, end, arrow));
    }
    let heap = heap_gap.and_then(|(start, end, arrow)| heap_change_around(text, start, end, arrow));
    EventScan {
        heap,
        young,
        collects_old_generation,
        cms_phases,
        close,
    }
}

/// How each phase of reference processing that `-XX:+PrintReferenceGC` prints into a pause
/// starts, after its `[`: `SoftReference, 0 refs, 0.0000813 secs]` (`PhantomReference`
/// gives two counts, `JNI Weak Reference` none).
pub(super) const REFERENCE_PHASES: [&[u8]; 5] = [
    b"SoftReference, ",
    b"WeakReference, ",
    b"FinalReference, ",
    b"PhantomReference, ",
    b"JNI Weak Reference, ",
];

/// Whether a group (the text after its `[`) is one that the JVM prints into a young
/// collection before its generation, so that the young generation is the first group that
/// is not one:
/// - a phase of reference processing, which Parallel prints before its generations
///   (`[GC (Allocation Failure)0.198: [SoftReference, 0 refs, 0.0001036 secs]...[JNI Weak
///   Reference, 0.0000340 secs] [PSYoungGen: ...`);
/// - the thread of `-XX:+PrintTLAB`'s first line, which the collection's first line runs
///   into (`[GC (Allocation Failure)TLAB: gc thread: 0x00007fc6e881b000 [id: 14851]
///   desired_size: ...`, its `[ParNew: ...` lines later).
fn precedes_generation(group: &[u8]) -> bool {
    group.starts_with(b"id: ")
        || REFERENCE_PHASES
            .iter()
            .any(|phase| group.starts_with(phase))
}

/// Whether `c` ends a word of an event's text: a space or a comma.
fn ends_words(c: u8) -> bool {
    c == b' ' || c == b','
}

/// The word of `text[start..end]` (words end at spaces and commas) that holds position `at`.
fn word_around(text: &[u8], start: usize, end: usize, at: usize) -> &[u8] {
    // Index loops: `rposition` and `position` with a closure cost twice as much a byte.
    let (text, at) = (&text[..end], at.min(end));
    let mut from = at;
    while from > start && !ends_words(text[from - 1]) {
        from -= 1;
    }
    let mut to = at;
    while to < text.len() && !ends_words(text[to]) {
        to += 1;
    }
    &text[from..to]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`event_heap`] as it was written first, over the groups one by one: what the one-pass
    /// reading must agree with.
    fn event_heap_by_groups(inner: &[u8]) -> (Option<HeapChange>, Option<HeapChange>) {
        let word_end = |c: u8| c == b' ' || c == b',';
        let mut young = None;
        let mut last_gap_with_arrow: Option<&[u8]> = None;
        let mut from = 0;
        let mut young_read = false;
        for group in top_level_groups(inner, b'[', b']') {
            let at = group.as_ptr() as usize - inner.as_ptr() as usize;
            let gap = &inner[from..(at - 1).max(from)];
            if has_arrow(gap) {
                last_gap_with_arrow = Some(gap);
            }
            from = at + group.len() + 1;
            // The first group that is no phase of reference processing nor a TLAB's thread.
            let before_generation = [
                "SoftReference, ",
                "WeakReference, ",
                "FinalReference, ",
                "PhantomReference, ",
                "JNI Weak Reference, ",
                "id: ",
            ]
            .iter()
            .any(|phase| group.starts_with(phase.as_bytes()));
            if !young_read && !before_generation {
                young_read = true;
                young = last_transition_word(group, word_end).and_then(heap_change);
            }
        }
        let gap = &inner[from.min(inner.len())..];
        if has_arrow(gap) {
            last_gap_with_arrow = Some(gap);
        }
        let heap = last_gap_with_arrow
            .and_then(|text| last_transition_word(text, word_end))
            .and_then(heap_change);
        (heap, young)
    }

    /// One of `usual` nine times in ten, else one of `misses`.
    fn mostly(
        usual: &[&'static str],
        misses: &[&'static str],
    ) -> impl proptest::strategy::Strategy<Value = &'static str> {
        proptest::prop_oneof![
            9 => proptest::sample::select(usual.to_vec()),
            1 => proptest::sample::select(misses.to_vec()),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5000))]

        /// G1's detail heap read in one pass reads as the general reading reads it, for
        /// sizes of one decimal and near misses of each part.
        #[test]
        fn usual_g1_details_heap_read_as_any(
            sizes in proptest::collection::vec(mostly(
                &["20.0G", "0.0B", "2560.0M", "17.5G", "999999999.9T", "3,5M", "0,0B"],
                &["1234567890.0K", "3.5", "2.0MB", "3.55M", "3M", "3;5M", ".5M", "3.xM", "", "7.0%", "3,,5M", "3.,5M"],
            ), 6),
            parens in proptest::collection::vec(mostly(&["(", ""], &[")", "(("]), 4),
            keys in proptest::collection::vec(mostly(
                &[" Survivors: "], &[" Heap: ", " Survivors:", "  Survivors: ", " "],
            ), 2),
            arrows in proptest::collection::vec(mostly(&["->"], &["-", "", "->->"]), 3),
            end in mostly(&["]"], &["", "]]", " ]", "] x", "x]"]),
        ) {
            let paren = |open: &str, size: &str| match open {
                "(" => format!("({size})"),
                other => format!("{other}{size}"),
            };
            let heap_key = if keys[1] == " Survivors: " { " Heap: " } else { keys[1] };
            let text = format!(
                "{}{}{}{}{}{}{}{}{}{}{}{}{}",
                sizes[0], paren(parens[0], sizes[1]), arrows[0], sizes[2], paren(parens[1], sizes[3]),
                keys[0], sizes[4], arrows[1], sizes[5],
                heap_key, paren(parens[2], sizes[1]), arrows[2], sizes[0],
            ) + &paren(parens[3], sizes[3]) + end;
            let usual = usual_g1_details_heap(text.as_bytes());
            proptest::prop_assert!(
                usual.is_none() || usual == any_g1_details_heap(text.as_bytes()),
                "{}", text
            );
        }
    }

    proptest::proptest! {
        /// Whole sizes read in one pass read as the general reading reads them, whatever
        /// the digits, units and what surrounds them.
        #[test]
        fn whole_sizes_read_as_any_sizes(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "0", "7", "830688", "18446744073709551615", "K", "M", "B", "G", "T", "%",
                "->", "(", ")", ".5", " ", "-",
            ]), 0..10),
            usual in (0u64..10_000_000, 0u64..10_000_000, 1u64..10_000_000,
                proptest::sample::select(vec!["K", "M", "G", "B"])),
            end in proptest::sample::select(vec![")", ")", "", "))", "%)", ") ", "K)"]),
        ) {
            let (before, after, capacity, unit) = usual;
            let usual = format!("{before}{unit}->{after}{unit}({capacity}{unit}{end}");
            for token in [pieces.concat(), usual] {
                let quick = whole_sizes_change(token.as_bytes());
                proptest::prop_assert!(
                    quick.is_none() || quick == any_heap_change(token.as_bytes()),
                    "{}", token
                );
                proptest::prop_assert_eq!(heap_change(token.as_bytes()), any_heap_change(token.as_bytes()));
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5000))]

        /// A transition read in one straight pass reads as size by size, whatever the
        /// digits (up to and past seven), units, separators and what follows, and however
        /// near the end of the text it lies (eight bytes are loaded at each size).
        #[test]
        fn quick_whole_transitions_read_as_size_by_size(
            sizes in [(); 3].map(|()| ("[0-9]{0,9}", proptest::sample::select(vec![
                "K", "K", "K", "M", "G", "B", "T", "x", "", "k",
            ]))),
            separators in [(); 3].map(|()| proptest::sample::select(vec![
                "->", "(", ")", "->", "(", ")", "-", ">", "", " ",
            ])),
            tail in proptest::sample::select(vec![
                "", ", 0.1302057 secs]", ",", " ", "K", "7", "))",
            ]),
            order in proptest::bool::weighted(0.8),
        ) {
            let [(before, before_unit), (after, after_unit), (capacity, capacity_unit)] = sizes;
            let [arrow, open, close] = if order {
                ["->", "(", ")"]
            } else {
                separators
            };
            let text = format!(
                "{before}{before_unit}{arrow}{after}{after_unit}{open}{capacity}{capacity_unit}{close}{tail}"
            );
            let quick = quick_whole_transition(text.as_bytes());
            let any = any_whole_transition(text.as_bytes());
            proptest::prop_assert!(quick.is_none() || quick == any, "{} {:?} {:?}", text, quick, any);
            proptest::prop_assert_eq!(whole_transition(text.as_bytes()), any, "{}", text);
            // The same text as a generation's body, before its `]` or the text's end.
            let body = format!(" {text}");
            for after in ["] 1225K->1147K(2029056K), [Metaspace: 3339K->3339K(1056768K)]", ""] {
                let generation = format!("{body}{after}");
                proptest::prop_assert_eq!(
                    generation_transition(generation.as_bytes(), body.len()),
                    transition_in(body.as_bytes()),
                    "{}", generation
                );
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5000))]

        /// A transition read from its arrow outwards reads as its word does, whatever
        /// surrounds it and wherever the text it is looked for in starts and ends.
        #[test]
        fn transitions_read_from_the_arrow_read_as_their_word(
            around in proptest::collection::vec(proptest::sample::select(vec![
                "0", "7", "K", "x", "->", "(", ")", " ", ",", "-", "]", "[",
            ]), 0..6),
            transition in (
                "[0-9]{0,17}", proptest::sample::select(vec!["K", "M", "B", "x", ""]),
                "[0-9]{0,17}", proptest::sample::select(vec!["K", "M", "B", "x", ""]),
                proptest::sample::select(vec!["", "(4980736K)", "(12", "(1K)x", "(3K))", "()", "(7M) "]),
            ),
            split in 0usize..6,
            bounds in (0usize..64, 0usize..64),
        ) {
            let (before, unit, after, after_unit, capacity) = transition;
            let split = split.min(around.len());
            let pieces = [
                around[..split].concat(),
                format!("{before}{unit}->{after}{after_unit}{capacity}"),
                around[split..].concat(),
            ];
            let text = pieces.concat();
            let text = text.as_bytes();
            for arrow in (0..text.len().saturating_sub(1)).filter(|&at| &text[at..at + 2] == b"->") {
                let start = bounds.0.min(arrow);
                let end = (arrow + 2 + bounds.1).min(text.len());
                proptest::prop_assert_eq!(
                    heap_change_around(text, start, end, arrow),
                    heap_change(word_around(text, start, end, arrow)),
                    "{} {} {} {}", String::from_utf8_lossy(text), start, end, arrow
                );
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// Events made of the pieces real ones hold, brackets left open or closed twice,
        /// arrows at every depth and dates between them read as group by group.
        #[test]
        fn one_pass_reads_the_heap_as_group_by_group(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "[", "]", "[ParNew: ", "[ParNew: 100K->10K(200K), 0.01 secs]", "[x]", "[a [b] c]",
                "[1K->2K]", "GC ", "100K->10K(200K)", "1K->2K", "->", "-", ">", ", ", " ",
                "0.01 secs", "2020-09-13T12:26:37.504+0000: ", "58M(91%)->64M(100%)",
                "24.0M(256.0M)->4000.0K(256.0M)", "[Tenured: ", "[CMS: ", "[CMS-concurrent-mark: ",
                "[CMS", "[Tenure", "[C", "[T", "[SoftReference, 0 refs, 0.0001036 secs]",
                "[JNI Weak Reference, 0.1 secs]", "[WeakReference, ", "[PhantomReference, 1K->2K]",
                "[FinalReference,", "[JNI Weak Reference", "[id: 14851]", "[id: 1K->2K]", "[id:",
            ]), 0..16),
        ) {
            let text = pieces.concat();
            proptest::prop_assert_eq!(
                event_heap(text.as_bytes()),
                event_heap_by_groups(text.as_bytes()),
                "{}", text
            );
            // The old generation's brackets, found in the same pass as by a search.
            let searched = memchr::memchr_iter(b'[', text.as_bytes()).any(|at| {
                let name = &text[at + 1..];
                name.starts_with("Tenured")
                    || (name.starts_with("CMS") && !name[3..].starts_with('-'))
            });
            proptest::prop_assert_eq!(
                jdk8_heap(text.as_bytes()).collects_old_generation,
                searched,
                "{}", text
            );
        }
    }

    #[test]
    fn sizes_and_transitions() {
        assert_eq!(size_bytes(b"24M"), Some(24 << 20));
        assert_eq!(size_bytes(b"0.0B"), Some(0));
        assert_eq!(size_bytes(b"1234K"), Some(1234 << 10));
        assert_eq!(size_bytes(b"12"), None);
        let h = heap_change(b"24M->4M(256M)").unwrap();
        assert_eq!(
            (h.before, h.after, h.capacity),
            (24 << 20, 4 << 20, Some(256 << 20))
        );
        let z = heap_change(b"58M(91%)->64M(100%)").unwrap();
        assert_eq!((z.before, z.after, z.capacity), (58 << 20, 64 << 20, None));
        assert_eq!(heap_change(b"->"), None);
    }

    #[test]
    fn g1_detail_line_gives_the_heap_and_eden_plus_survivors() {
        let (heap, young) = g1_details_heap(
            b"24.0M(24.0M)->0.0B(20.0M) Survivors: 0.0B->3072.0K Heap: 24.0M(256.0M)->4000.0K(256.0M)]",
        )
        .unwrap();
        assert_eq!(
            heap,
            HeapChange {
                before: 24 << 20,
                after: 4000 << 10,
                capacity: Some(256 << 20)
            }
        );
        assert_eq!((young.before, young.after), (24 << 20, 3072 << 10));
        assert_eq!(g1_details_heap(b"24.0M(24.0M)->0.0B(20.0M)]"), None);
        // As HotSpot prints it, the line is read in one pass.
        assert!(usual_g1_details_heap(
            b"20.0G(20.0G)->0.0B(17.5G) Survivors: 0.0B->2560.0M Heap: 21.5G(80.0G)->14.5G(80.0G)]"
        )
        .is_some());
    }

    #[test]
    fn jdk8_young_and_heap() {
        let Jdk8Heap { heap, young, .. } = jdk8_heap(
            b"GC (Allocation Failure) [PSYoungGen: 100K->10K(200K)] 300K->210K(1000K), 0.0100 secs",
        );
        assert_eq!(heap.unwrap().after, 210 << 10);
        assert_eq!(young.unwrap().before, 100 << 10);
    }

    #[test]
    fn cms_remark_takes_the_transitions_of_the_young_collection_it_holds() {
        let Jdk8Heap { heap, young, .. } = jdk8_heap(b"GC (CMS Final Remark) [YG occupancy: 400 K (600 K)]1.0: [GC (CMS Final Remark) 1.0: [ParNew: 400K->50K(600K), 0.2 secs] 2800K->2500K(4000K), 0.2 secs] 1.2: [Rescan (parallel) , 0.1 secs][1 CMS-remark: 2450K(3400K)] 2500K(4000K), 0.5 secs");
        assert_eq!(
            (heap.unwrap().before, heap.unwrap().after),
            (2800 << 10, 2500 << 10)
        );
        assert_eq!(young.unwrap().before, 400 << 10);
        // Without -XX:+PrintGCDetails the young collection prints the heap only.
        let Jdk8Heap { heap, young, .. } = jdk8_heap(b"GC (CMS Final Remark) 1.0: [GC (CMS Final Remark)  900K->700K(8000K), 0.1 secs] 700K(8000K), 0.2 secs");
        assert_eq!(heap.unwrap().after, 700 << 10);
        assert_eq!(young, None);
        // A remark without a young collection has no transition.
        let remark = jdk8_heap(b"GC (CMS Final Remark) [YG occupancy: 4 K (6 K)]1.0: [Rescan (parallel) , 0.1 secs][1 CMS-remark: 24K(34K)] 25K(40K), 0.1 secs");
        assert_eq!((remark.heap, remark.young), (None, None));
    }
}
