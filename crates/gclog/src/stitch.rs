//! Puts JDK 6-8 `-XX:+PrintGCDetails` events back together when the JVM spread one event over
//! several lines, so that the line parser sees each event whole.
//!
//! The JVM writes an event's opening (`12.3: [GC (Allocation Failure) `) before it collects
//! and the rest (`[PSYoungGen: ...], 0.0966940 secs]`) after; whatever else it prints in
//! between lands inside the event: `-XX:+PrintTenuringDistribution`,
//! `PrintAdaptiveSizePolicy`, `PrintHeapAtGC` and `PrintFLSStatistics` blocks, CMS's
//! free-list census, G1's ergonomics, and the phases a concurrent collector thread prints
//! at the same moment.
//!
//! While an event's brackets are open, following lines are either parts of it (they start
//! with `,` `:` `(` `[` or a time stamp and a bracket) and are appended, or printouts of
//! those flags and skipped. Concurrent phases printed into an event
//! (`[CMS-concurrent-mark: 2.830/3.179 secs]`, `[GC concurrent-mark-end, ...]`) are cut out
//! and handed on as lines of their own, so both the pause and the phase are kept.
//!
//! Two threads writing at once also mix up time stamps: a stamp may end up on the other
//! thread's line without its `: ` (`6627.019[GC concurrent-root-region-scan-start]`), the
//! event following on the next line as `: [Full GC ...`; that line gets the stamps back.
//!
//! Streaming: the event being stitched is the only state, capped at [`MAX_PENDING`] bytes;
//! an event that grows beyond is handed on as it is (and counted as unparsed).

use crate::num::{iso_timestamp_ms, secs_to_ns, LastMinute};
use crate::parse::{
    jdk8_prefix, jdk8_prefix_remembering, usual_jdk8_prefix_remembering, LeadingStamps,
};

/// Longest event text held while its brackets are open (a real event is a few KiB even
/// with reference processing details).
pub const MAX_PENDING: usize = 64 * 1024;

/// Text cut out of an event and not handed on: G1's ergonomics decisions.
const DROPPED_FRAGMENTS: [&[u8]; 1] = [b"[G1Ergonomics"];
/// Text cut out of an event and handed on as a line of its own: concurrent phases.
const CONCURRENT_FRAGMENTS: [&[u8]; 2] = [b"[CMS-concurrent", b"[GC concurrent"];
/// Where a printout starts in the middle of an event's line; the rest of the line is the
/// printout. Their first bytes (`{ A B D M`) are what [`scan_line`] looks for.
const PRINTOUT_STARTS: [&[u8]; 6] = [
    b"{Heap before",
    b"Before GC:",
    b"After GC:",
    b"AdaptiveSize",
    b"Desired survivor",
    b"Mark stack is full",
];
/// Where CMS's census of its free lists starts when it is printed into an event, after
/// `(concurrent mode failure)` (`size[3] : demand: 1693, old_rate: ...`, or every size on
/// one line, `size[3] : size[4] : ... size[256] : CMS: Large block 0x...`): the rest of
/// the line is the census. It runs to a few KiB, which the event no longer carries.
const FREE_LIST_CENSUS: &[u8] = b"size[";

/// Joins the lines of JDK 8 events; see the module documentation.
#[derive(Default)]
pub struct Stitcher {
    /// The open event's text so far (empty when no event is open).
    pending: Vec<u8>,
    /// Line number of the open event's first line.
    first_line: u64,
    /// Brackets open in `pending`.
    depth: usize,
    /// The open event is a CMS remark, which may hold a young collection
    /// (`-XX:+CMSScavengeBeforeRemark`).
    holds_scavenge: bool,
    /// The stamps the open event starts with, when they were read (see [`Piece::Event`]).
    stamps: Option<LeadingStamps>,
    /// How the stitcher reads stamps, and what it read last.
    reader: StampReader,
    /// The stamps that began the previous line when the last of them had no `: ` after it
    /// (see [`stamps_without_separator`]); empty otherwise.
    orphan_stamps: Vec<u8>,
    /// Scratch buffer for a line with fragments cut out.
    scratch: Vec<u8>,
    /// Concurrent phases cut out of the open event, handed on after it (they were written
    /// after it began, so time stamps stay in order).
    held: Held,
    overflows: u64,
}

/// What a logical line handed on by the stitcher is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    /// A line, or an event joined from lines: it ends where its last line ends, so it is
    /// cut off when that line is the input's last and has no newline.
    Lines,
    /// [`Piece::Lines`] of an event whose first line's stamps the stitcher read to tell
    /// that it opens one: what [`crate::parse::usual_jdk8_prefix`] gives for its text,
    /// which starts with a `[` after them.
    Event(LeadingStamps),
    /// A concurrent phase cut out of an event's line, up to its closing bracket: whole,
    /// whatever happened to the rest of that line.
    CutOut,
}

/// Lines kept back, one after the other in `text`, each with its end and line number.
#[derive(Default)]
struct Held {
    text: Vec<u8>,
    lines: Vec<(usize, u64)>,
}

impl Held {
    fn push(&mut self, line: &[u8], number: u64, emit: &mut dyn FnMut(&[u8], u64, Piece)) {
        if self.text.len() + line.len() > MAX_PENDING {
            // Never grow without bound: out of order rather than lost.
            emit(line, number, Piece::CutOut);
            return;
        }
        self.text.extend_from_slice(line);
        self.lines.push((self.text.len(), number));
    }

    fn flush(&mut self, emit: &mut dyn FnMut(&[u8], u64, Piece)) {
        let mut start = 0;
        for &(end, number) in &self.lines {
            emit(&self.text[start..end], number, Piece::CutOut);
            start = end;
        }
        self.text.clear();
        self.lines.clear();
    }
}

impl Stitcher {
    pub fn new() -> Self {
        Stitcher::default()
    }

    /// Bytes held for the open event and the concurrent phases cut out of it, or for the
    /// stamps the previous line left open (at most 2 x [`MAX_PENDING`]).
    pub fn held_bytes(&self) -> usize {
        self.pending.len() + self.held.text.len() + self.orphan_stamps.len()
    }

    /// An event is open: the lines that follow are joined to it or passed over.
    pub fn holds_event(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Events handed on unfinished because they outgrew [`MAX_PENDING`].
    pub fn overflows(&self) -> u64 {
        self.overflows
    }

    /// Holds nothing: no open event, no stamps left open by the previous line. Two
    /// stitchers that are both idle after the same line hand on the same lines from there
    /// on, whatever came before (what lets a log be stitched in pieces; see `chunks`).
    pub fn is_idle(&self) -> bool {
        self.pending.is_empty() && self.held.lines.is_empty() && self.orphan_stamps.is_empty()
    }

    /// This stitcher, fed a piece of a log numbered from 1, continuing after `lines_before`
    /// lines, having made `overflows_before` of its overflows before the lines it now
    /// stands for.
    pub(crate) fn rebase(&mut self, lines_before: u64, overflows_before: u64) {
        self.first_line += lines_before;
        for (_, number) in &mut self.held.lines {
            *number += lines_before;
        }
        self.overflows -= overflows_before;
    }

    /// Whether [`Stitcher::push`] hands `line` on as it is, as a [`Piece::Lines`] of that
    /// line alone, changing nothing: a unified line (`[0.058s][info]...`), which never
    /// opens an event nor leaves stamps open, told by its first bytes while no event is
    /// open. An idle stitcher has nothing to [finish](Stitcher::finish) either.
    #[inline]
    pub fn passes_on_as_is(&self, line: &[u8]) -> bool {
        // The first byte first: a JDK 8 line, which starts with a digit or a space, is out
        // at once (this is asked of every line).
        line.first() == Some(&b'[') && !opens_event(line) && self.is_idle()
    }

    /// Feeds one physical line; `emit(line, number)` receives each complete logical line
    /// (a whole event, a concurrent phase cut out of one, or an unrelated line as it is).
    #[inline]
    pub fn push(&mut self, line: &[u8], number: u64, emit: &mut impl FnMut(&[u8], u64, Piece)) {
        if self.passes_on_as_is(line) {
            emit(line, number, Piece::Lines);
            return;
        }
        self.push_other(line, number, emit);
    }

    /// [`Stitcher::push`] of a line it does not [pass on as it is](Stitcher::passes_on_as_is).
    #[inline]
    pub(crate) fn push_other(
        &mut self,
        line: &[u8],
        number: u64,
        emit: &mut impl FnMut(&[u8], u64, Piece),
    ) {
        // The usual line between JDK 8 events is handed on as it is: inlined into the
        // reader's loop, with `emit` called directly.
        if self.is_idle() {
            let stamps = match outside_event(line, &mut self.reader) {
                Outside::Plain { orphan_stamps } => {
                    self.orphan_stamps.extend_from_slice(&line[..orphan_stamps]);
                    emit(line, number, Piece::Lines);
                    return;
                }
                Outside::MayOpen => self.reader.opening,
            };
            let emit: &mut dyn FnMut(&[u8], u64, Piece) = emit;
            self.open(line, number, Opens::read(stamps), emit);
            if self.pending.is_empty() {
                self.held.flush(emit);
            }
            return;
        }
        self.push_into_event(line, number, emit);
    }

    /// [`Stitcher::push`] of a line that may open an event or belong to one.
    fn push_into_event(
        &mut self,
        line: &[u8],
        number: u64,
        emit: &mut dyn FnMut(&[u8], u64, Piece),
    ) {
        if self.pending.is_empty() {
            if !self.orphan_stamps.is_empty() && opens_event_after_separator(line) {
                // The stamps the previous line left without their `: ` are this event's.
                let mut joined = std::mem::take(&mut self.orphan_stamps);
                joined.extend_from_slice(line);
                self.open(&joined, number, Opens::Ask, emit);
                joined.clear();
                self.orphan_stamps = joined;
            } else {
                self.orphan_stamps.clear();
                match outside_event(line, &mut self.reader) {
                    Outside::Plain { orphan_stamps } => {
                        self.orphan_stamps.extend_from_slice(&line[..orphan_stamps]);
                        emit(line, number, Piece::Lines);
                        return;
                    }
                    Outside::MayOpen => {
                        let opens = Opens::read(self.reader.opening);
                        self.open(line, number, opens, emit);
                    }
                }
            }
        } else {
            self.continue_event(line, number, emit);
        }
        if self.pending.is_empty() {
            self.held.flush(emit);
        }
    }

    /// How many of the whole lines at the start of `text` [`Stitcher::push`] would pass
    /// over one by one, changing nothing: printouts inside an open event. Returns their
    /// bytes and their number; lines are ended by `\n` and at most `max_line` bytes long,
    /// and the rest of `text` is left to `push`.
    ///
    /// Heap and free-list printouts are 85 % of the lines of a JDK 8 log written with
    /// `-XX:+PrintHeapAtGC` and `-XX:+PrintFLSStatistics`: one sweep over them for line ends
    /// and brackets costs a sixth of splitting them into lines and looking at each.
    pub fn printouts_ahead(&self, text: &[u8], max_line: usize) -> (usize, u64) {
        if !self.holds_event() || !is_printout_start(text) {
            return (0, 0);
        }
        // A line with what may be a fragment to cut out (see `next_fragment`) ends the
        // sweep: `push` decides.
        crate::scan::sweep_lines(text, max_line, is_printout_start)
    }

    /// How many of the whole lines at the start of `text` an idle stitcher would hand on
    /// one by one, as they are, that the parser reads as lines without a record nor a
    /// stamp ([`crate::parse::is_plain_indented_line`]): G1's detail lines and the heap
    /// printed after an event. Returns their bytes and their number; lines are ended by
    /// `\n` and at most `max_line` bytes long.
    ///
    /// They are two thirds of the lines of a JDK 7 or 8 G1 log with `-XX:+PrintGCDetails`;
    /// handed on and parsed one by one, each cost about 400 instructions.
    pub fn indented_lines_ahead(&self, text: &[u8], max_line: usize) -> (usize, u64) {
        if !self.is_idle() || !crate::parse::is_plain_indented_line(text) {
            return (0, 0);
        }
        crate::scan::sweep_line_ends(text, max_line, crate::parse::is_plain_indented_line)
    }

    /// Hands on an event left open (the log ends inside it): it parses as incomplete.
    pub fn finish(&mut self, emit: &mut dyn FnMut(&[u8], u64, Piece)) {
        self.orphan_stamps.clear();
        if !self.pending.is_empty() {
            emit(&self.pending, self.first_line, self.event_piece());
            self.reset();
        }
        self.held.flush(emit);
    }

    fn reset(&mut self) {
        self.pending.clear();
        self.depth = 0;
        self.holds_scavenge = false;
        self.stamps = None;
    }

    /// What the open event is handed on as.
    fn event_piece(&self) -> Piece {
        self.stamps.map_or(Piece::Lines, Piece::Event)
    }

    /// A line that may start an event (`opens`: what [`may_open_event`] said of it, if it
    /// was asked): handed on at once when its brackets close on it.
    fn open(
        &mut self,
        line: &[u8],
        number: u64,
        opens: Opens,
        emit: &mut dyn FnMut(&[u8], u64, Piece),
    ) {
        let scan = scan_line(line, 0, Fragments::Sought);
        if !scan.fragment {
            // Nothing to cut out (most lines): the line as it is, not copied.
            self.open_scanned(line, number, opens, scan, emit);
            return;
        }
        let mut kept = std::mem::take(&mut self.scratch);
        kept.clear();
        cut_fragments(line, number, &mut kept, &mut self.held, emit);
        // Unless something was cut out, what is kept opens an event as the line does.
        let opens = if kept.len() == line.len() {
            opens
        } else {
            Opens::Ask
        };
        self.open_kept(&kept, number, opens, emit);
        self.scratch = kept;
    }

    /// `open` for a line whose fragments are already cut out; `opens`: what is known of
    /// whether it [`may_open_event`].
    fn open_kept(
        &mut self,
        kept: &[u8],
        number: u64,
        opens: Opens,
        emit: &mut dyn FnMut(&[u8], u64, Piece),
    ) {
        let scan = scan_line(kept, 0, Fragments::CutOut);
        self.open_scanned(kept, number, opens, scan, emit);
    }

    /// `open_kept` with what [`scan_line`] found in `kept`, from depth 0.
    fn open_scanned(
        &mut self,
        kept: &[u8],
        number: u64,
        opens: Opens,
        scan: LineScan,
        emit: &mut dyn FnMut(&[u8], u64, Piece),
    ) {
        let printout = scan.printout;
        let kept = &kept[..printout.unwrap_or(kept.len())];
        // Whether what is kept opens an event, and the stamps read to tell.
        let (opening, stamps) = match opens {
            // A printout never starts inside the stamps nor in the `[GC` or `[Full GC`
            // after them (none holds its first bytes): the text kept before it opens an
            // event after the same stamps, which depend on its first bytes alone.
            Opens::Read(stamps) => (
                printout.is_none() || opens_after_stamps(kept, stamps),
                Some(stamps),
            ),
            Opens::Yes if printout.is_none() => (true, None),
            _ => match outside_event(kept, &mut self.reader) {
                Outside::MayOpen => (true, self.reader.opening),
                Outside::Plain { .. } => (false, None),
            },
        };
        let (depth, closed) = if opening { scan.brackets } else { (0, None) };
        // What is kept, when it does not open an event, is handed on as a line.
        let stamps = stamps.filter(|_| opening);
        let piece = stamps.map_or(Piece::Lines, Piece::Event);
        if depth == 0 {
            if let Some(next) = closed.and_then(|at| next_event_after(kept, at)) {
                // Another event follows on the same line (its line break lost).
                emit(&kept[..next], number, piece);
                self.open_kept(&kept[next..], number, Opens::Yes, emit);
                return;
            }
            if !kept.is_empty() {
                emit(kept, number, piece);
            }
            return;
        }
        self.pending.extend_from_slice(kept);
        self.first_line = number;
        self.depth = depth;
        self.stamps = stamps;
        self.holds_scavenge = is_cms_remark(kept, scan.young_occupancy);
    }

    fn continue_event(
        &mut self,
        line: &[u8],
        number: u64,
        emit: &mut dyn FnMut(&[u8], u64, Piece),
    ) {
        // Told before the scan when its first bytes are those of most (` 12.345: [G1...`);
        // otherwise only when the scan found a fragment, which most lines inside an event
        // (printouts, CMS's stamped parts) have not.
        let usual_start = matches!(line, [b' ', b'0'..=b'9', ..] | [b'[', b'G', ..]);
        if usual_start && is_ergonomics_line(line) {
            return;
        }
        let scan = scan_line(line, self.depth, Fragments::Sought);
        if !(scan.fragment && !usual_start && is_ergonomics_line(line)) {
            self.continue_scanned_generally(line, number, scan, emit);
        }
    }

    /// [`Stitcher::continue_event`] of any line, G1 ergonomics or not, with what
    /// [`scan_line`] found in it.
    fn continue_scanned_generally(
        &mut self,
        line: &[u8],
        number: u64,
        scan: LineScan,
        emit: &mut dyn FnMut(&[u8], u64, Piece),
    ) {
        if !scan.fragment {
            // Nothing to cut out: the line as it is, not copied. Most lines inside an
            // event are printouts (heap at GC, free list statistics) that start with a
            // letter: skipped at once.
            if may_continue(line) {
                self.continue_scanned(line, number, scan, emit);
            }
            return;
        }
        let mut kept = std::mem::take(&mut self.scratch);
        kept.clear();
        cut_fragments(line, number, &mut kept, &mut self.held, emit);
        self.continue_with(&kept, number, emit);
        self.scratch = kept;
    }

    /// [`Stitcher::continue_event`] with a line whose fragments are cut out (`kept`).
    fn continue_with(&mut self, kept: &[u8], number: u64, emit: &mut dyn FnMut(&[u8], u64, Piece)) {
        let scan = scan_line(kept, self.depth, Fragments::CutOut);
        self.continue_scanned(kept, number, scan, emit);
    }

    /// `continue_with` with what [`scan_line`] found in `kept`, from the open event's depth.
    fn continue_scanned(
        &mut self,
        kept: &[u8],
        number: u64,
        scan: LineScan,
        emit: &mut dyn FnMut(&[u8], u64, Piece),
    ) {
        let part = if may_continue(kept) {
            &kept[..scan.printout.unwrap_or(kept.len())]
        } else {
            &[][..]
        };
        match continuation(part, &mut self.reader.last_minute) {
            Continuation::Printout => {}
            Continuation::Part => self.append(part, number, scan.brackets, emit),
            Continuation::NewEvent if self.holds_scavenge => {
                self.append(part, number, scan.brackets, emit);
            }
            Continuation::NewEvent | Continuation::Unrelated => {
                // The open event never closed (a cut log, an unknown printout): hand it on
                // as it is and take this line afresh.
                emit(&self.pending, self.first_line, self.event_piece());
                self.reset();
                self.open_kept(kept, number, Opens::Ask, emit);
            }
        }
    }

    /// Appends `part` to the open event; `brackets`: the bracket depth after `part` from
    /// the event's depth ([`scan_line`]).
    fn append(
        &mut self,
        part: &[u8],
        number: u64,
        brackets: (usize, Option<usize>),
        emit: &mut dyn FnMut(&[u8], u64, Piece),
    ) {
        if self.pending.len() + part.len() > MAX_PENDING {
            self.overflows += 1;
            emit(&self.pending, self.first_line, self.event_piece());
            self.reset();
            emit(part, number, Piece::Lines);
            return;
        }
        let (depth, closed) = brackets;
        self.depth = depth;
        // Another event after this one's end on the same line (its line break lost) is
        // taken afresh.
        let next = closed
            .filter(|_| depth == 0)
            .and_then(|at| next_event_after(part, at));
        self.pending
            .extend_from_slice(&part[..next.unwrap_or(part.len())]);
        if self.depth == 0 {
            emit(&self.pending, self.first_line, self.event_piece());
            self.reset();
            if let Some(next) = next {
                self.open_kept(&part[next..], number, Opens::Yes, emit);
            }
        }
    }
}

/// Cheap test run on every line: could it open a JDK 8 event (`[GC`, `[Full GC` after the
/// optional time stamps)? Unified logging lines (`[0.058s][info]...`) and indented detail
/// lines are out after a byte or two.
fn may_open_event(line: &[u8]) -> bool {
    matches!(
        outside_event(line, &mut StampReader::default()),
        Outside::MayOpen
    )
}

/// [`may_open_event`] of `kept`, the start of a line that may open one after its `stamps`
/// (read from the line), cut after them: told by the text after the stamps, which depend on
/// the bytes up to `rest_at` alone.
fn opens_after_stamps(kept: &[u8], stamps: LeadingStamps) -> bool {
    opens_event(&kept[stamps.rest_at..])
}

/// What is known of whether a line [`may_open_event`].
#[derive(Clone, Copy)]
enum Opens {
    /// Nothing: it is asked.
    Ask,
    /// It may.
    Yes,
    /// It may, told by these stamps (its first bytes) and the text after them.
    Read(LeadingStamps),
}

impl Opens {
    /// A line that may open an event, told by its stamps when they were read.
    fn read(stamps: Option<LeadingStamps>) -> Self {
        stamps.map_or(Opens::Yes, Opens::Read)
    }
}

/// How the stitcher reads stamps, and what it read of the last line that may open an event.
#[derive(Default)]
struct StampReader {
    /// The minute of the last date stamp read: the stamps of a log's lines follow each other
    /// (reaching the thread's memo of it instead cost a third of reading a stamp).
    last_minute: LastMinute,
    /// The stamps of the last line [`outside_event`] found may open an event, when they were
    /// read to tell (the usual ones: see [`crate::parse::usual_jdk8_prefix`]). Kept here
    /// rather than returned: the answer for every other line stays two words.
    opening: Option<LeadingStamps>,
}

/// What a line read while no event is open is.
#[cfg_attr(test, derive(Debug, PartialEq, Eq))]
enum Outside {
    /// It may open an event (see [`may_open_event`]; the stamps read to tell are in the
    /// [`StampReader`]).
    MayOpen,
    /// Any other line, and where the time stamps it leaves open for the next line end
    /// (see [`stamps_without_separator`]; 0 when it leaves none).
    Plain { orphan_stamps: usize },
}

/// [`may_open_event`], and when it may not, [`stamps_without_separator`], with the line's
/// stamps looked over once for both.
/// `reader`: the stitcher's, through which a date stamp is read and which is left the
/// stamps of a line that may open an event.
fn outside_event(line: &[u8], reader: &mut StampReader) -> Outside {
    match line.first() {
        Some(b'[') if opens_event(line) => {
            reader.opening = None;
            Outside::MayOpen
        }
        Some(c) if c.is_ascii_digit() => {
            // An event opens with a `[`, and stamps left for the next line run into one: a
            // line without any is plain. Asked of the lines of stopped and application time
            // alone (told by their last word, a tenth of a JDK 8 log's lines), where one
            // vector search costs a third of the walk over the stamps; other lines hold a
            // `[` more often than not.
            if line.ends_with(b" seconds") && crate::scan::any_of(line, [b'[']).next().is_none() {
                return Outside::Plain { orphan_stamps: 0 };
            }
            stamped_outside_event(line, reader)
        }
        _ => Outside::Plain { orphan_stamps: 0 },
    }
}

/// [`outside_event`] of a line that starts with a digit, told by a walk over its stamps.
#[inline(always)]
fn stamped_outside_event(line: &[u8], reader: &mut StampReader) -> Outside {
    let Some(after) = after_stamps(line) else {
        return Outside::Plain { orphan_stamps: 0 };
    };
    if after.unsure || opens_event(&line[after.at..]) {
        // The stamps are read once, here, and handed on with the event.
        match usual_jdk8_prefix_remembering(line, &mut reader.last_minute) {
            Some(stamps) if opens_event(&line[stamps.rest_at..]) => {
                reader.opening = Some(stamps);
                return Outside::MayOpen;
            }
            Some(_) => {}
            None if opens_event(crate::parse::jdk8_rest(line)) => {
                reader.opening = None;
                return Outside::MayOpen;
            }
            None => {}
        }
    }
    Outside::Plain {
        orphan_stamps: stamps_without_separator(line, &after).unwrap_or(0),
    }
}

/// Where the time stamps and GC id (`#12: `) that a line starts with may end, told without
/// reading them (a date stamp's calendar arithmetic costs more than the rest of the
/// stitching of a line outside an event).
struct AfterStamps {
    /// The first byte that none of them holds: they end there, or before it (and then
    /// what follows them starts with one of their bytes, never a `[`).
    at: usize,
    /// That byte may be the one byte of a date stamp that is not looked at (between its
    /// minutes and seconds, 12 bytes after its `-`): they may end further on.
    unsure: bool,
}

fn after_stamps(line: &[u8]) -> Option<AfterStamps> {
    let at = crate::scan::stamp_bytes_run(line);
    if at == line.len() {
        return None;
    }
    Some(AfterStamps {
        at,
        unsure: at >= 16 && line[at - 12] == b'-',
    })
}

/// Whether the last of the time stamps that `line` starts with (which end at or after
/// `after`) may run straight into a `[`. Not when a space comes before that `[`: the
/// stamps then end with their `: `, which is most lines of a JDK 8 log (a stamp ends with
/// a digit or a `Z`).
fn stamp_may_run_into_bracket(line: &[u8], after: &AfterStamps) -> bool {
    after.unsure
        || (line[after.at] == b'['
            && after
                .at
                .checked_sub(1)
                .is_some_and(|last| line[last] != b' '))
}

fn opens_event(rest: &[u8]) -> bool {
    rest.starts_with(b"[GC") || rest.starts_with(b"[Full GC")
}

/// `: [Full GC ...`: an event whose time stamps ended the previous line, where another
/// thread's output (a G1 concurrent phase) came between a stamp and its `: `.
fn opens_event_after_separator(line: &[u8]) -> bool {
    line.strip_prefix(b": ").is_some_and(opens_event)
}

/// Longest run of stamps kept for the next line (two date stamps and two uptimes).
const MAX_ORPHAN_STAMPS: usize = 128;

/// End of a line's leading time stamps when the last of them runs straight into another
/// thread's text, without its `: ` (`...: 6627.019: 6627.019[GC concurrent-mark-start]`): that
/// stamp's `: ` and the rest of its line follow on the next line.
fn stamps_without_separator(line: &[u8], after: &AfterStamps) -> Option<usize> {
    if !line.first().is_some_and(u8::is_ascii_digit) || !stamp_may_run_into_bracket(line, after) {
        return None;
    }
    let rest = jdk8_prefix(line).1;
    let run = rest
        .iter()
        .position(|&c| !matches!(c, b'0'..=b'9' | b'.' | b',' | b':' | b'-' | b'+' | b'T'))?;
    let stamp = &rest[..run];
    let is_stamp = secs_to_ns(stamp).is_some() || iso_timestamp_ms(stamp).is_some();
    let end = line.len() - rest.len() + run;
    (is_stamp && rest[run] == b'[' && end <= MAX_ORPHAN_STAMPS).then_some(end)
}

/// A CMS remark's opening: `[YG occupancy: ...]` with `-XX:+PrintGCDetails`, the JDK 8
/// cause `[GC (CMS Final Remark) ` without. `young_occupancy`: [`scan_line`] found the
/// first in `event`.
fn is_cms_remark(event: &[u8], young_occupancy: bool) -> bool {
    young_occupancy || opens_cms_final_remark(event)
}

/// Whether `event`'s stamps are followed by `[GC (CMS Final Remark)`. The stamps are read
/// (which a date stamp makes dear) only when the text after the bytes they are written
/// with says so: a bracket after stamps that read is right after those bytes (see
/// [`AfterStamps`]).
fn opens_cms_final_remark(event: &[u8]) -> bool {
    const REMARK: &[u8] = b"[GC (CMS Final Remark)";
    let Some(after) = after_stamps(event) else {
        return false;
    };
    (after.unsure || event[after.at..].starts_with(REMARK))
        && jdk8_prefix(event).1.starts_with(REMARK)
}

/// Brackets still open after `text`, starting from `depth` (a stray `]` does not go below
/// 0), and, when they were all closed and then another bracket opened other than the one
/// `[Times: ...]` that ends an event, where they were first all closed (the position after
/// that `]`): another event may follow there. What [`scan_line`] counts in its pass; kept
/// as the reference it is checked against.
#[cfg(test)]
fn bracket_depth(text: &[u8], depth: usize) -> (usize, Option<usize>) {
    let mut count = BracketCount::new(depth);
    for at in crate::scan::any_of(text, [b'[', b']']) {
        if text[at] == b'[' {
            count.open(text, at);
        } else {
            count.close(at);
        }
    }
    count.finish()
}

/// The bracket depth of [`scan_line`] counted a bracket at a time.
struct BracketCount {
    depth: usize,
    /// Where the brackets were first all closed.
    closed: Option<usize>,
    /// Brackets opened after `closed` at depth 0, and whether the first is `[Times: `.
    groups_after: u32,
    times_first: bool,
}

impl BracketCount {
    fn new(depth: usize) -> Self {
        BracketCount {
            depth,
            closed: None,
            groups_after: 0,
            times_first: false,
        }
    }

    /// The `[` at `at` in `text`.
    fn open(&mut self, text: &[u8], at: usize) {
        if self.depth == 0 && self.closed.is_some() {
            if self.groups_after == 0 {
                self.times_first = text[at..].starts_with(b"[Times: ");
            }
            self.groups_after += 1;
        }
        self.depth += 1;
    }

    /// The `]` at `at` (a stray one does not go below 0).
    fn close(&mut self, at: usize) {
        if self.depth > 0 {
            self.depth -= 1;
            if self.depth == 0 && self.closed.is_none() {
                self.closed = Some(at + 1);
            }
        }
    }

    fn finish(self) -> (usize, Option<usize>) {
        let more = self.groups_after > 1 || (self.groups_after == 1 && !self.times_first);
        (self.depth, self.closed.filter(|_| more))
    }
}

/// Whether [`scan_line`] looks for fragments to cut out.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fragments {
    /// A line as it was read: the first fragment ends the scan.
    Sought,
    /// A line with its fragments cut out: its brackets are all counted.
    CutOut,
}

/// What one pass over a line finds.
#[derive(Debug, PartialEq, Eq)]
struct LineScan {
    /// A fragment to cut out ([`next_fragment`]): the rest is not to be used.
    fragment: bool,
    /// Where the first printout starts (one of [`PRINTOUT_STARTS`]).
    printout: Option<usize>,
    /// The bracket depth of the text before the printout, from the depth given.
    brackets: (usize, Option<usize>),
    /// The text before the printout holds a CMS remark's [`YOUNG_OCCUPANCY`] (see
    /// [`is_cms_remark`]), told at its `[` rather than searched for in the line again.
    young_occupancy: bool,
}

/// How a CMS remark with `-XX:+PrintGCDetails` begins (see [`is_cms_remark`]).
const YOUNG_OCCUPANCY: &[u8] = b"[YG occupancy";

/// What [`next_fragment`] (whether there is one, when `fragments` are sought), where the
/// first printout starts and the bracket depth (of the text before the printout, from
/// `depth`) are in `text`, in one pass: the bytes of an event's line are compared once
/// instead of three times.
fn scan_line(text: &[u8], depth: usize, fragments: Fragments) -> LineScan {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked just above.
        return unsafe { scan_line_avx2(text, depth, fragments) };
    }
    scan_line_in(text, depth, fragments, crate::scan::any_of(text, LOOKED_AT))
}

/// The bytes of an event's line that [`scan_line`] looks at: brackets, and the first bytes
/// of printouts (see [`printout_at`]).
const LOOKED_AT: [u8; 8] = [b'[', b']', b'{', b'A', b'B', b'D', b'M', b'z'];
/// [`LOOKED_AT`] as a [`crate::scan::NibbleSet`]'s tables.
#[cfg(target_arch = "x86_64")]
static LOOKED_AT_TABLES: crate::scan::NibbleTables = crate::scan::NibbleTables::of(LOOKED_AT);

/// [`scan_line`] with AVX2, [`LOOKED_AT`] found 32 bytes at a time by their nibbles.
///
/// # Safety
/// The processor must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scan_line_avx2(text: &[u8], depth: usize, fragments: Fragments) -> LineScan {
    // SAFETY: the processor has AVX2, as this function requires.
    let set = unsafe { crate::scan::NibbleSet::from_tables(&LOOKED_AT_TABLES) };
    scan_line_in(text, depth, fragments, crate::scan::any_in(text, set))
}

/// [`scan_line`] of the positions of [`LOOKED_AT`] in `text`.
#[inline(always)]
fn scan_line_in(
    text: &[u8],
    depth: usize,
    fragments: Fragments,
    looked_at: impl Iterator<Item = usize>,
) -> LineScan {
    let mut brackets = BracketCount::new(depth);
    let mut printout = None;
    let mut young_occupancy = false;
    for at in looked_at {
        match text[at] {
            b'[' => {
                if fragments == Fragments::Sought && fragment_at(&text[at..]).is_some() {
                    return LineScan {
                        fragment: true,
                        printout,
                        brackets: brackets.finish(),
                        young_occupancy,
                    };
                }
                if text.get(at + 1) == Some(&b'Y') {
                    young_occupancy |= text[at..].starts_with(YOUNG_OCCUPANCY);
                }
                brackets.open(text, at);
            }
            b']' => brackets.close(at),
            _ => {
                printout = printout_at(text, at);
                if printout.is_some() {
                    // The rest of the line is the printout: only a fragment in it matters
                    // (a free-list census runs to a few KiB of `size[3] : size[4] : ...`).
                    let fragment = fragments == Fragments::Sought && has_fragment(&text[at..]);
                    return LineScan {
                        fragment,
                        printout,
                        brackets: brackets.finish(),
                        young_occupancy,
                    };
                }
            }
        }
    }
    LineScan {
        fragment: false,
        printout,
        brackets: brackets.finish(),
        young_occupancy,
    }
}

/// Where another event starts in `text` after an event that ended at `end` (and the
/// `[Times: ...]` after it): a log whose line breaks were lost holds several on one line.
fn next_event_after(text: &[u8], end: usize) -> Option<usize> {
    let blanks = |from: usize| {
        from + text[from..]
            .iter()
            .take_while(|&&c| c == b' ' || c == b'\t')
            .count()
    };
    let mut at = blanks(end);
    if text[at..].starts_with(b"[Times: ") {
        at = blanks(at + memchr::memchr(b']', &text[at..])? + 1);
    }
    (at < text.len() && may_open_event(&text[at..])).then_some(at)
}

/// Where the first printout starts in `text`: only where one of their first bytes is, so
/// the searchers run on a few places of a line rather than over all of it six times, or
/// where a [`FREE_LIST_CENSUS`] starts, told by its `z` (no event holds one). What
/// [`scan_line`] finds in its pass; kept as the reference it is checked against.
#[cfg(test)]
fn printout_start(text: &[u8]) -> Option<usize> {
    crate::scan::any_of(text, [b'{', b'A', b'B', b'D', b'M', b'z'])
        .find_map(|at| printout_at(text, at))
}

/// Where the printout whose first byte (`{ A B D M`, or the `z` of a [`FREE_LIST_CENSUS`])
/// is at `at` starts, if one does.
fn printout_at(text: &[u8], at: usize) -> Option<usize> {
    if text[at] == b'z' {
        let start = at.checked_sub(2)?;
        return text[start..].starts_with(FREE_LIST_CENSUS).then_some(start);
    }
    // Only the starts with this first byte are compared (one or two of the six).
    PRINTOUT_STARTS
        .iter()
        .any(|marker| marker[0] == text[at] && text[at..].starts_with(marker))
        .then_some(at)
}

/// Whether a line starting `text` is not one that [`may_continue`] an event (what follows
/// the line does not matter: a line that is all blanks is a printout too).
#[inline]
fn is_printout_start(text: &[u8]) -> bool {
    // Most printout lines start with a letter (`Total Free Space:`, `Desired survivor`):
    // told by that byte, before any search for the first that is not a blank.
    if text.first().is_some_and(u8::is_ascii_alphabetic) {
        return true;
    }
    match text.iter().find(|&&c| c != b' ' && c != b'\t') {
        Some(&c) => !(matches!(c, b',' | b':' | b'(' | b'[') || c.is_ascii_digit()),
        None => true,
    }
}

/// A line inside an open event that may be a part of it ([`continuation`] says
/// [`Continuation::Printout`] of any other, whatever printout it holds).
fn may_continue(line: &[u8]) -> bool {
    !is_printout_start(line)
}

enum Continuation {
    /// Belongs to the open event.
    Part,
    /// Another event's first line.
    NewEvent,
    /// Output of a `-XX:+Print...` flag inside the event.
    Printout,
    /// A line the JVM never writes inside an event (safepoint lines, unified logging).
    Unrelated,
}

/// `last_minute`: the stitcher's, through which a date stamp is read.
fn continuation(line: &[u8], last_minute: &mut LastMinute) -> Continuation {
    let trimmed = trim_start(line);
    match trimmed.first() {
        None => Continuation::Printout,
        Some(b',' | b':' | b'(') => Continuation::Part,
        Some(b'[') if is_unified(trimmed) => Continuation::Unrelated,
        Some(b'[') if opens_event(trimmed) => Continuation::NewEvent,
        Some(b'[') => Continuation::Part,
        Some(c) if c.is_ascii_digit() => {
            let (stamp, rest) = jdk8_prefix_remembering(trimmed, last_minute);
            if stamp.uptime_ns.is_none() && stamp.wall_ms.is_none() {
                // A G1 heap transition, ` 150M->150M(256M), 0.0136035 secs]`.
                Continuation::Part
            } else if opens_event(rest) {
                Continuation::NewEvent
            } else if rest.first() == Some(&b'[') {
                Continuation::Part
            } else if rest.starts_with(b"Total time for which")
                || rest.starts_with(b"Application time:")
            {
                Continuation::Unrelated
            } else {
                Continuation::Printout
            }
        }
        Some(_) => Continuation::Printout,
    }
}

/// `[0.058s][info][gc] ...`: decorations follow each other without a space.
fn is_unified(line: &[u8]) -> bool {
    memchr::memchr(b']', line).is_some_and(|close| line.get(close + 1) == Some(&b'['))
}

fn trim_start(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|&c| c != b' ' && c != b'\t')
        .unwrap_or(s.len());
    &s[start..]
}

/// Copies `line` into `kept` without its G1 ergonomics and concurrent phase fragments
/// (each with the time stamps before it); concurrent phases, with the `[Times: ...]` that
/// follows them, go to `held` as lines of their own.
fn cut_fragments(
    line: &[u8],
    number: u64,
    kept: &mut Vec<u8>,
    held: &mut Held,
    emit: &mut dyn FnMut(&[u8], u64, Piece),
) {
    let mut rest = line;
    loop {
        let Some((at, concurrent)) = next_fragment(rest) else {
            kept.extend_from_slice(rest);
            return;
        };
        let start = stamps_before(rest, at);
        let mut end = at + closing_bracket(&rest[at..]).map_or(rest.len() - at, |c| c + 1);
        if concurrent {
            let after = &rest[end..];
            let spaces = after.len() - trim_start(after).len();
            if after[spaces..].starts_with(b"[Times: ") {
                if let Some(close) = memchr::memchr(b']', &after[spaces..]) {
                    end += spaces + close + 1;
                }
            }
            held.push(&rest[start..end], number, emit);
        }
        kept.extend_from_slice(&rest[..start]);
        rest = &rest[end..];
    }
}

/// Whether `line` is one G1 ergonomics decision and nothing else (`   12.345: [G1Ergonomics
/// (CSet Construction) ...]`, blanks and stamps before it optional): inside an event, what
/// the general way makes of it is nothing (the decision and its stamps are cut out, and the
/// blanks left are a printout), told here in one pass. With
/// `-XX:+PrintAdaptiveSizePolicy`, G1 writes several into each event: cut out one by one,
/// each cost 1,200 instructions, a tenth of reading such a log.
fn is_ergonomics_line(line: &[u8]) -> bool {
    const ERGONOMICS: &[u8] = DROPPED_FRAGMENTS[0];
    let blanks = line.iter().take_while(|&&c| c == b' ').count();
    // The stamps as `stamps_before` reads them back from the bracket; they start with a
    // digit, or the text before the bracket would be kept.
    let stamps = line[blanks..]
        .iter()
        .take_while(|&&c| {
            matches!(
                c,
                b'0'..=b'9' | b'.' | b',' | b':' | b' ' | b'-' | b'+' | b'T'
            )
        })
        .count();
    if stamps > 0 && !line[blanks].is_ascii_digit() {
        return false;
    }
    let fragment = &line[blanks + stamps..];
    // Cut out up to its closing bracket, or to the end when it has none: nothing may follow.
    fragment.starts_with(ERGONOMICS)
        && closing_bracket(fragment).is_none_or(|close| close + 1 == fragment.len())
}

/// Where the first fragment to cut out of `text` starts, and whether it is a concurrent
/// phase (handed on) rather than G1 ergonomics (dropped).
fn next_fragment(text: &[u8]) -> Option<(usize, bool)> {
    // Every fragment starts with a bracket: look only where one opens.
    crate::scan::any_of(text, [b'[']).find_map(|at| Some((at, fragment_at(&text[at..])?)))
}

/// Whether a fragment to cut out is in `text` ([`next_fragment`]), looked for with the
/// vector search that sweeps printouts: for the rest of a line that is a printout.
fn has_fragment(text: &[u8]) -> bool {
    let mut from = 0;
    // A line has no line end: the search stops at each `[C` or `[G`, or at the end.
    while let Some(at) = crate::scan::line_ends_before_fragment(&text[from..], |_| true) {
        if fragment_at(&text[from + at..]).is_some() {
            return true;
        }
        from += at + 1;
    }
    false
}

/// Whether a fragment starts `here` (a text starting with a `[`), and whether it is a
/// concurrent phase (handed on) rather than G1 ergonomics (dropped).
fn fragment_at(here: &[u8]) -> Option<bool> {
    // Every fragment's name starts with `C` or `G`; most brackets are others' (`size[8]`,
    // `[0x00000000e0000000, ...`): passed over without comparing the names.
    if !matches!(here.get(1), Some(b'C' | b'G')) {
        None
    } else if DROPPED_FRAGMENTS.iter().any(|m| here.starts_with(m)) {
        Some(false)
    } else if CONCURRENT_FRAGMENTS.iter().any(|m| here.starts_with(m)) {
        Some(true)
    } else {
        None
    }
}

/// Start of the time stamps (`2014-03-12T21:18:31.372-0500: 13300.980: `) right before
/// `at`, or `at` when there are none.
fn stamps_before(text: &[u8], at: usize) -> usize {
    let mut start = at;
    while start > 0
        && matches!(
            text[start - 1],
            b'0'..=b'9' | b'.' | b',' | b':' | b' ' | b'-' | b'+' | b'T'
        )
    {
        start -= 1;
    }
    // Never swallow text that is not a stamp: a stamp starts with a digit.
    while start < at && !text[start].is_ascii_digit() {
        start += 1;
    }
    start
}

/// Position of the `]` closing the `[` at the start of `text`.
fn closing_bracket(text: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    for at in crate::scan::any_of(text, [b'[', b']']) {
        if text[at] == b'[' {
            depth += 1;
        } else {
            depth -= 1;
            if depth == 0 {
                return Some(at);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests;
