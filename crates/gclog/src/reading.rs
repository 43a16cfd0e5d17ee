//! Reads one input on a thread of its own: lines are read, the lines of JDK 8 events joined,
//! and the result sent to the analysis in batches, in order.
//!
//! Parsing is shared so that two cores are busy: the reading thread parses the first part of
//! each batch and the analysing thread the rest (reading and joining cost about as much as
//! analysing, and parsing as much as both together).

use pauselab_pause::recycle;

use crate::classify::{ClassifiedLine, LineFeed, PREFETCH_AHEAD};
use crate::input::Input;
use crate::lines::{Line, LineReader, MAX_LINE};
use crate::parse::{LeadingStamps, LineParser};
use crate::stitch::{Piece, Stitcher};
use crate::{input, Error};
use std::collections::BTreeMap;
use std::sync::mpsc;
use std::thread::{Scope, ScopedJoinHandle};

/// Lines sent at a time.
const BATCH_LINES: usize = 2048;
/// Text sent at a time, at most (plus one line): JDK 8 events joined may be 64 KiB each.
const BATCH_BYTES: usize = 1 << 20;
/// Text a batch is given room for at first: [`BATCH_LINES`] lines of a unified log.
const BATCH_TEXT: usize = 256 * 1024;
/// Share of each batch's lines parsed by the reading thread: reading and joining lines
/// cost it a little more than analysing them costs the other (measured on unified G1 logs
/// with `valgrind --tool=callgrind --separate-threads=yes`).
const READER_SHARE_PCT: usize = 40;
/// Batches in flight: bounds how far (and with how much memory) reading runs ahead.
pub(crate) const BATCHES_IN_FLIGHT: usize = 4;

/// What reading one input found besides its lines.
#[derive(Default)]
pub(crate) struct ReadSummary {
    pub lines: u64,
    pub bytes: u64,
    pub binary_lines: u64,
    /// The first line with text, for the "not a GC log" error.
    pub first_text: Option<(u64, String)>,
    /// Events too long to join (see [`crate::stitch::MAX_PENDING`]).
    pub overflows: u64,
}

/// Consecutive logical lines of one input: their text, and the first of them already parsed.
pub(crate) struct Batch {
    text: Vec<u8>,
    lines: Vec<RawLine>,
    parsed: Vec<ClassifiedLine>,
}

struct RawLine {
    /// Where the line's text ends in [`Batch::text`] (it starts where the previous ends).
    end: usize,
    number: u64,
    /// The input's last line, without a newline, ends this line's text, so many lines
    /// after its first (see [`stitch_line`]).
    unterminated: Option<u64>,
    truncated: bool,
    /// Not a line of text but so many indented lines passed over from `number` on, which
    /// the parser reads as [`ClassifiedLine::plain_indented`] (see
    /// [`pass_indented_lines`]); their text is not kept.
    indented: u64,
}

impl Batch {
    fn new() -> Self {
        Batch {
            // Grown once, not by doubling from nothing in every batch (the reallocations
            // cost 5 % of reading a unified log).
            text: Vec::with_capacity(BATCH_TEXT),
            lines: Vec::with_capacity(BATCH_LINES),
            parsed: Vec::with_capacity(BATCH_LINES),
        }
    }

    fn line_text(&self, index: usize) -> &[u8] {
        let start = index.checked_sub(1).map_or(0, |i| self.lines[i].end);
        &self.text[start..self.lines[index].end]
    }

    /// Feeds the batch's lines to the analysis, in order, parsing those not parsed yet,
    /// and empties it (its vectors keep their room, for another batch).
    pub(crate) fn analyse(&mut self, feed: &mut LineFeed<'_>) {
        let mut parsed = self.parsed.drain(..);
        let mut start = 0;
        for raw in &self.lines {
            let text = &self.text[start..raw.end];
            start = raw.end;
            if let Some(ahead) = parsed.as_slice().get(PREFETCH_AHEAD) {
                ahead.prefetch_record();
            }
            match parsed.next() {
                Some(line) => feed.apply_run(line, raw.number, raw.indented.max(1)),
                None if raw.indented > 0 => {
                    feed.apply_run(ClassifiedLine::plain_indented(), raw.number, raw.indented);
                }
                None => feed.line(text, raw.number, raw.unterminated, raw.truncated),
            }
        }
        drop(parsed);
        self.text.clear();
        self.lines.clear();
    }
}

/// A batch analysed and emptied, with the boxes its records were spent into (see
/// [`recycle`]): back to the thread that read it, which fills them again. Allocated on
/// the reading thread and freed on the analysing one, they stayed with the reading
/// thread's heap once it ended with its input: a rotated set of twenty gzipped 20 MB logs
/// of safepoint lines took 68 MB with 16 threads (docs/analyze.md, "Batches filled
/// again").
pub(crate) struct Spent {
    batch: Batch,
    boxes: recycle::Pool,
}

/// The batch being filled, and what the reading side knows of the lines it parsed.
struct Filling<'a> {
    batch: Batch,
    /// Batches analysed, to fill again (none when the analysis is on this thread).
    returned: Option<&'a mpsc::Receiver<Spent>>,
    /// Lines of this input recognised by the reading side.
    recognised: u64,
    /// Only the first unparsed line is shown: keep the text of one.
    keep_text: bool,
    parser: LineParser,
}

impl Filling<'_> {
    fn push(&mut self, bytes: &[u8], number: u64, unterminated: Option<u64>, truncated: bool) {
        let batch = &mut self.batch;
        batch.text.extend_from_slice(bytes);
        batch.lines.push(RawLine {
            end: batch.text.len(),
            number,
            unterminated,
            truncated,
            indented: 0,
        });
        // Until a line is recognised every line is parsed at once: the binary-data check
        // needs to know whether this is a log.
        if self.recognised == 0 && batch.parsed.len() + 1 == batch.lines.len() {
            self.parse_next();
        }
    }

    /// `count` indented lines from number `number` on, passed over (see
    /// [`pass_indented_lines`]): once the input is known to be a log.
    fn push_indented(&mut self, number: u64, count: u64) {
        let batch = &mut self.batch;
        batch.lines.push(RawLine {
            end: batch.text.len(),
            number,
            unterminated: None,
            truncated: false,
            indented: count,
        });
    }

    fn parse_next(&mut self) {
        let batch = &mut self.batch;
        let raw = &batch.lines[batch.parsed.len()];
        if raw.indented > 0 {
            batch.parsed.push(ClassifiedLine::plain_indented());
            return;
        }
        let (unterminated, truncated) = (raw.unterminated, raw.truncated);
        let line = ClassifiedLine::new(
            &mut self.parser,
            batch.line_text(batch.parsed.len()),
            unterminated,
            truncated,
            self.keep_text,
        );
        self.recognised += u64::from(line.recognised());
        self.keep_text &= !line.has_unparsed_text();
        batch.parsed.push(line);
    }

    fn full(&self) -> bool {
        self.batch.lines.len() >= BATCH_LINES || self.batch.text.len() >= BATCH_BYTES
    }

    /// The batch, its first [`READER_SHARE_PCT`] % parsed here.
    fn take(&mut self) -> Batch {
        while self.batch.parsed.len() < self.batch.lines.len() * READER_SHARE_PCT / 100 {
            self.parse_next();
        }
        let next = match self.returned.and_then(|returned| returned.try_recv().ok()) {
            Some(Spent { batch, boxes }) => {
                recycle::give_pool(boxes);
                batch
            }
            None => Batch::new(),
        };
        std::mem::replace(&mut self.batch, next)
    }
}

/// Where the lines read go.
pub(crate) enum Destination<'a, 'b> {
    /// To the analysis on this thread: in batches until the input is known to be a log
    /// (lines read before it turns out to be binary data are never analysed), then line by
    /// line, without copying them into batches.
    Here(&'a mut LineFeed<'b>),
    /// In batches to another thread, through `deliver` (false when the analysis stopped),
    /// which come back through `returned` once analysed.
    Batches {
        deliver: &'a mut dyn FnMut(Batch) -> bool,
        returned: &'a mpsc::Receiver<Spent>,
    },
}

impl Destination<'_, '_> {
    fn deliver(&mut self, batch: Batch) -> bool {
        match self {
            Destination::Here(feed) => {
                let mut batch = batch;
                batch.analyse(feed);
                true
            }
            Destination::Batches { deliver, .. } => deliver(batch),
        }
    }
}

/// Reads one input's lines, joins the lines of JDK 8 events and hands them to
/// `destination`. Stops at the first I/O error, or when the input turns out to be binary
/// data.
pub(crate) fn read_lines(
    reader: input::Reader,
    name: &str,
    mut destination: Destination<'_, '_>,
) -> Result<ReadSummary, Error> {
    let mut lines = LineReader::new(reader);
    let mut stitcher = Stitcher::new();
    let mut sniff = Sniff::default();
    let mut count = 0u64;
    let returned = match &destination {
        Destination::Batches { returned, .. } => Some(*returned),
        Destination::Here(_) => None,
    };
    let mut filling = Filling {
        batch: Batch::new(),
        returned,
        recognised: 0,
        keep_text: true,
        parser: LineParser::default(),
    };
    // The analysis on this thread takes the lines one by one (see `Destination::Here`).
    let mut direct = false;
    loop {
        let line = lines
            .next_line()
            .map_err(|e| Error::Io(name.to_string(), e))?;
        let Some(line) = line else { break };
        count += 1;
        sniff.check(&line, filling.recognised == 0, name)?;
        if let (true, Destination::Here(feed)) = (direct, &mut destination) {
            if stitcher.passes_on_as_is(line.bytes) {
                // Every line of a unified log: handed on without the stitcher's pieces and
                // stamps (passing them cost 2 % of reading one).
                let (bytes, number) = (line.bytes, line.number);
                feed.line(
                    bytes,
                    number,
                    line.unterminated.then_some(0),
                    line.truncated,
                );
                continue;
            }
            stitch_other_line(
                &mut stitcher,
                &line,
                line.number,
                &mut |bytes, stamps, number, u, t| {
                    feed.line_after_stamps(bytes, stamps, number, u, t);
                },
            );
            count += pass_printouts(&mut lines, &stitcher, u64::MAX);
            let indented = pass_indented_lines(&mut lines, &stitcher, u64::MAX);
            if indented > 0 {
                feed.apply_run(ClassifiedLine::plain_indented(), count + 1, indented);
                count += indented;
            }
            continue;
        }
        stitch_line(
            &mut stitcher,
            &line,
            line.number,
            &mut |bytes, number, u, t| {
                filling.push(bytes, number, u, t);
            },
        );
        if filling.recognised > 0 {
            // Known to be a log: lines passed over need no binary-data check.
            count += pass_printouts(&mut lines, &stitcher, u64::MAX);
            let indented = pass_indented_lines(&mut lines, &stitcher, u64::MAX);
            if indented > 0 {
                filling.push_indented(count + 1, indented);
                count += indented;
            }
        }
        if matches!(destination, Destination::Here(_)) && filling.recognised > 0 {
            destination.deliver(filling.take());
            direct = true;
        } else if filling.full() && !destination.deliver(filling.take()) {
            break;
        }
    }
    match &mut destination {
        Destination::Here(feed) if direct => {
            stitcher.finish(&mut |bytes, number, _| feed.line(bytes, number, None, false));
        }
        _ => {
            stitcher.finish(&mut |bytes, number, _| filling.push(bytes, number, None, false));
            destination.deliver(filling.take());
        }
    }
    Ok(ReadSummary {
        lines: count,
        bytes: lines.bytes_read(),
        binary_lines: sniff.binary_lines,
        first_text: sniff.first_text,
        overflows: stitcher.overflows(),
    })
}

/// An input being read on a thread of its own: its batches, in order, and the thread.
pub(crate) struct Reading<'scope> {
    batches: mpsc::Receiver<Batch>,
    /// Batches analysed, back to the thread.
    spent: mpsc::Sender<Spent>,
    thread: ScopedJoinHandle<'scope, Result<ReadSummary, Error>>,
}

impl<'scope> Reading<'scope> {
    /// Starts reading `reader` on a thread of `scope`, at most [`BATCHES_IN_FLIGHT`]
    /// batches ahead of the analysis.
    pub(crate) fn spawn<'env>(
        scope: &'scope Scope<'scope, 'env>,
        reader: input::Reader,
        name: &'env str,
    ) -> Self {
        let (send, batches) = mpsc::sync_channel(BATCHES_IN_FLIGHT);
        let (spent, returned) = mpsc::channel();
        let thread = scope.spawn(move || {
            let mut deliver = |batch| send.send(batch).is_ok();
            let destination = Destination::Batches {
                deliver: &mut deliver,
                returned: &returned,
            };
            let summary = read_lines(reader, name, destination);
            // The last batch is sent: the analysis ends after it, and hands back the ones
            // still on their way, freed here, by the thread that allocated them.
            drop(send);
            returned.iter().for_each(drop);
            summary
        });
        Reading {
            batches,
            spent,
            thread,
        }
    }

    /// Feeds every batch to the analysis, in order; what reading found.
    pub(crate) fn analyse(self, feed: &mut LineFeed<'_>) -> Result<ReadSummary, Error> {
        let Reading {
            batches,
            spent,
            thread,
        } = self;
        for mut batch in batches {
            batch.analyse(feed);
            let boxes = recycle::take_pool();
            // Refused only once the thread has ended.
            let _ = spent.send(Spent { batch, boxes });
        }
        drop(spent);
        thread
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }
}

/// Inputs read at most this many ahead of the one analysed: a rotated set of small or
/// compressed files keeps the cores busy across the files' edges, and each input ahead
/// holds at most [`BATCHES_IN_FLIGHT`] batches.
const INPUTS_AHEAD: usize = 2;

/// The inputs after the one being analysed, read (decompressed, joined and partly parsed)
/// while it is: each on a thread of its own, its batches waiting for their turn, so the
/// result is the same as reading them one after the other. Only inputs that one thread
/// reads are read ahead: a large plain file is read in chunks by every thread when its
/// turn comes (see `crate::chunks`), and standard input and pipes are not opened early.
pub(crate) struct ReadAhead<'scope, 'env> {
    scope: &'scope Scope<'scope, 'env>,
    inputs: &'env [Input],
    threads: usize,
    /// Inputs started (or that failed to open), by index.
    started: BTreeMap<usize, Result<Reading<'scope>, Error>>,
    /// The first input not looked at yet (inputs up to the one analysed are not read ahead).
    next: usize,
}

impl<'scope, 'env> ReadAhead<'scope, 'env> {
    pub(crate) fn new(
        scope: &'scope Scope<'scope, 'env>,
        inputs: &'env [Input],
        threads: usize,
    ) -> Self {
        ReadAhead {
            scope,
            inputs,
            threads,
            started: BTreeMap::new(),
            next: 0,
        }
    }

    /// Input `index`, when it was started ahead (or failed to open then).
    pub(crate) fn take(&mut self, index: usize) -> Option<Result<Reading<'scope>, Error>> {
        self.started.remove(&index)
    }

    /// Starts reading the inputs after `index` that are read by one thread, up to
    /// [`INPUTS_AHEAD`] of them (with one thread, none).
    pub(crate) fn start_after(&mut self, index: usize) {
        let ahead = INPUTS_AHEAD.min(self.threads - 1);
        self.next = self.next.max(index + 1);
        while self.next < self.inputs.len() && self.next <= index + ahead {
            let input = &self.inputs[self.next];
            if read_by_one_thread(input) {
                let reading = input::open_for_reading(input, self.threads)
                    .map(|reader| Reading::spawn(self.scope, reader, &input.name));
                self.started.insert(self.next, reading);
            }
            self.next += 1;
        }
    }

    /// Inputs being read ahead.
    #[cfg(test)]
    fn started(&self) -> usize {
        self.started.len()
    }
}

/// A zip member, or a regular file too small to be read in chunks (or compressed).
fn read_by_one_thread(input: &Input) -> bool {
    let Some(path) = &input.path else {
        return false;
    };
    input.zip_entry.is_some()
        || (std::fs::metadata(path).is_ok_and(|m| m.is_file())
            && input::open_splittable(input, 2 * crate::chunks::CHUNK).is_none())
}

/// Hands one physical line to the stitcher; `emit(text, number, unterminated, truncated)`
/// receives the logical lines it completes, with the physical line's flags. `unterminated`:
/// the physical line is the input's last, has no newline and ends the text, so many lines
/// after the text's first (0 but for a JDK 8 event), a count that stays true when a
/// chunk's line numbers are moved on.
#[inline]
pub(crate) fn stitch_line(
    stitcher: &mut Stitcher,
    line: &Line<'_>,
    number: u64,
    emit: &mut impl FnMut(&[u8], u64, Option<u64>, bool),
) {
    stitch_line_and_stamps(stitcher, line, number, &mut |bytes, _, first, u, t| {
        emit(bytes, first, u, t)
    });
}

/// [`stitch_line`], `emit` also given the stamps an event starts with when the stitcher
/// read them (see [`Piece::Event`]): the parser need not read them again.
#[inline]
pub(crate) fn stitch_line_and_stamps(
    stitcher: &mut Stitcher,
    line: &Line<'_>,
    number: u64,
    emit: &mut impl FnMut(&[u8], Option<&LeadingStamps>, u64, Option<u64>, bool),
) {
    stitch_line_with(stitcher, line, number, emit, false);
}

/// [`stitch_line_and_stamps`] of a line the stitcher does not [pass on as it
/// is](Stitcher::passes_on_as_is): not asked again.
#[inline]
pub(crate) fn stitch_other_line(
    stitcher: &mut Stitcher,
    line: &Line<'_>,
    number: u64,
    emit: &mut impl FnMut(&[u8], Option<&LeadingStamps>, u64, Option<u64>, bool),
) {
    stitch_line_with(stitcher, line, number, emit, true);
}

/// [`stitch_line_and_stamps`]; `other`: the line is known not to be one the stitcher
/// passes on as it is.
#[inline(always)]
fn stitch_line_with(
    stitcher: &mut Stitcher,
    line: &Line<'_>,
    number: u64,
    emit: &mut impl FnMut(&[u8], Option<&LeadingStamps>, u64, Option<u64>, bool),
    other: bool,
) {
    let (unterminated, truncated) = (line.unterminated, line.truncated);
    // A concurrent phase cut out of the last line is whole even when that line has no
    // newline: only what runs to the line's end may be cut off.
    let last = number;
    let mut feed = |bytes: &[u8], first: u64, piece: Piece| {
        let lines_on = (unterminated && piece != Piece::CutOut).then(|| last - first);
        let stamps = match &piece {
            Piece::Event(stamps) => Some(stamps),
            Piece::Lines | Piece::CutOut => None,
        };
        emit(bytes, stamps, first, lines_on, truncated)
    };
    if truncated {
        stitcher.finish(&mut feed);
        feed(line.bytes, number, Piece::Lines);
    } else if other {
        stitcher.push_other(line.bytes, number, &mut feed);
    } else {
        stitcher.push(line.bytes, number, &mut feed);
    }
}

/// Passes over the buffered lines that start before input offset `end` and that the
/// stitcher would pass over one by one (printouts inside a JDK 8 event); returns how many.
#[inline]
pub(crate) fn pass_printouts<R: std::io::Read>(
    lines: &mut LineReader<R>,
    stitcher: &Stitcher,
    end: u64,
) -> u64 {
    if !stitcher.holds_event() {
        return 0;
    }
    lines.pass_lines_before(end, |ahead| stitcher.printouts_ahead(ahead, MAX_LINE))
}

/// Passes over the buffered lines that start before input offset `end` and that an idle
/// stitcher would hand on one by one for the parser to read as lines without a record nor
/// a stamp (see [`Stitcher::indented_lines_ahead`]); returns how many. The analysis is
/// given them as one run of such lines ([`ClassifiedLine::plain_indented`]).
#[inline]
pub(crate) fn pass_indented_lines<R: std::io::Read>(
    lines: &mut LineReader<R>,
    stitcher: &Stitcher,
    end: u64,
) -> u64 {
    // Most lines are not followed by an indented one: told by a byte.
    if lines.next_byte() != Some(b' ') || !stitcher.is_idle() {
        return 0;
    }
    lines.pass_lines_before(end, |ahead| stitcher.indented_lines_ahead(ahead, MAX_LINE))
}

/// What the first lines of an input say about whether it is a log at all.
#[derive(Default)]
pub(crate) struct Sniff {
    pub binary_lines: u64,
    /// The first line with text, for the "not a GC log" error.
    pub first_text: Option<(u64, String)>,
}

impl Sniff {
    /// Looks at one physical line; `unknown`: nothing of the input was recognised yet.
    /// Binary data matters only while nothing of this input was recognised (see
    /// `analyze_input`): once it is known to be a log, the check is skipped, it costs as
    /// much as parsing.
    #[inline]
    pub(crate) fn check(
        &mut self,
        line: &Line<'_>,
        unknown: bool,
        name: &str,
    ) -> Result<(), Error> {
        if line.truncated || (unknown && is_binary(line.bytes)) {
            self.binary_lines += 1;
            if self.binary_lines >= 3 && unknown {
                return Err(Error::Binary {
                    file: name.to_string(),
                    line: line.number,
                });
            }
        }
        if self.first_text.is_none() && !line.bytes.is_empty() {
            self.first_text = Some((line.number, printable(line.bytes)));
        }
        Ok(())
    }
}

/// A line with control bytes other than tab, or invalid UTF-8 in most of it.
fn is_binary(line: &[u8]) -> bool {
    let control = line
        .iter()
        .filter(|&&b| (b < 0x20 && b != b'\t' && b != 0) || b == 0x7f)
        .count();
    let nul_inside = line.iter().skip_while(|&&b| b == 0).any(|&b| b == 0);
    control * 10 > line.len().max(1) || nul_inside || std::str::from_utf8(line).is_err()
}

fn printable(line: &[u8]) -> String {
    String::from_utf8_lossy(&line[..line.len().min(120)])
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::path::Path;

    use pauselab_analysis::{Analyzer, Options};

    use super::ReadAhead;
    use crate::input::Input;

    /// A rotated set, its members plain, gzip, empty and missing, read ahead while the
    /// members before are analysed, reads as one thread reads it member by member.
    #[test]
    fn a_rotated_set_read_ahead_reads_as_one_thread_reads_it() {
        let log = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/gclogs/demo-g1-jdk17.log"),
        )
        .unwrap();
        let lines: Vec<&str> = log.lines().collect();
        let third = lines.len() / 3;
        let part =
            |i: usize| lines[i * third..((i + 1) * third).min(lines.len())].join("\n") + "\n";
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        };
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(part(1).as_bytes()).unwrap();
        let paths = [
            file("gc.log.0", part(0).as_bytes()),
            file("gc.log.1.gz", &gz.finish().unwrap()),
            dir.path().join("gc.log.2"), // rotated away while being read
            file("gc.log.3", b""),
            file("gc.log", part(2).as_bytes()),
        ];
        let inputs: Vec<Input> = paths
            .iter()
            .map(|p| Input {
                name: p.file_name().unwrap().to_string_lossy().into_owned(),
                path: Some(p.clone()),
                zip_entry: None,
            })
            .collect();

        std::thread::scope(|scope| {
            let mut ahead = ReadAhead::new(scope, &inputs, 3);
            ahead.start_after(0);
            // The gzip member is being read while the first is analysed; the missing one
            // is left for its turn, which reports it.
            assert_eq!(ahead.started(), 1);
            ahead.start_after(1);
            assert_eq!(ahead.started(), 2);
            assert!(ahead.take(1).is_some_and(|reading| reading.is_ok()));
            assert!(ahead.take(2).is_none());
            // Never the input being analysed, nor any with one thread.
            ahead.start_after(3);
            assert_eq!(ahead.started(), 2);
        });
        std::thread::scope(|scope| {
            let mut ahead = ReadAhead::new(scope, &inputs, 1);
            ahead.start_after(0);
            ahead.start_after(1);
            assert_eq!(ahead.started(), 0);
        });

        let report = |threads: usize| {
            let mut analyzer = Analyzer::new(Options::default());
            let result = crate::analyze_inputs_with(&inputs, &mut analyzer, threads);
            let error = result.err().map(|e| e.to_string()).unwrap_or_default();
            (error, serde_json::to_string(&analyzer.finish()).unwrap())
        };
        let one = report(1);
        assert!(one.0.contains("gc.log.2: no such file"), "{}", one.0);
        assert!(one.1.contains("Pause Young"));
        assert_eq!(one, report(3));
    }

    /// A batch the analysis is done with is filled again by the thread that read it, with
    /// the boxes its records were spent into.
    #[test]
    fn an_analysed_batch_is_filled_again_by_its_reading_thread() {
        let (spent, returned) = std::sync::mpsc::channel();
        let mut filling = super::Filling {
            batch: super::Batch::new(),
            returned: Some(&returned),
            recognised: 1,
            keep_text: true,
            parser: crate::parse::LineParser::default(),
        };
        let line = b"[0.058s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 12M->1M(256M) 1.626ms";
        filling.push(line, 1, None, false);
        let mut first = filling.take();
        let mut sink = Analyzer::new(Options::default());
        pauselab_pause::RecordSink::begin_input(&mut sink, "log");
        first.analyse(&mut crate::classify::LineFeed::new(&mut sink, "log"));
        assert!(first.text.is_empty() && first.lines.is_empty() && first.parsed.is_empty());
        let text_at = first.text.as_ptr();
        let boxes = vec![pauselab_pause::recycle::boxed(pauselab_pause::Parsed {
            format: pauselab_pause::Format::Unified,
            stamp: pauselab_pause::Stamp::default(),
            record: pauselab_pause::Record::DroppedMessages(1),
        })];
        let box_at = &*boxes[0] as *const pauselab_pause::Parsed;
        spent
            .send(super::Spent {
                batch: first,
                boxes,
            })
            .unwrap();
        // The batch being filled goes; the one given back is the next.
        filling.push(line, 2, None, false);
        let _second = filling.take();
        assert_eq!(
            filling.batch.text.as_ptr(),
            text_at,
            "the returned batch is filled"
        );
        let filled = pauselab_pause::recycle::boxed(pauselab_pause::Parsed {
            format: pauselab_pause::Format::Unified,
            stamp: pauselab_pause::Stamp::default(),
            record: pauselab_pause::Record::DroppedMessages(2),
        });
        assert_eq!(
            &*filled as *const pauselab_pause::Parsed, box_at,
            "its box is filled"
        );
    }

    /// What reaches the parser from one stitched line: its text, the stamps read, its first
    /// line's number, how many lines on it ends the input without a newline, and whether it
    /// was cut.
    type Handed = (Vec<u8>, Option<LeadingStamps>, u64, Option<u64>, bool);

    /// Lines of unified and JDK 8 logs, events' pieces among them.
    fn mixed_lines() -> Vec<&'static str> {
        let unified = [
            "[0.058s][info][gc] Using G1",
            "[10.749s][info][gc,start     ] GC(0) Pause Young (Normal) (G1 Evacuation Pause)",
            "[GC (Allocation Failure) [PSYoungGen: 10K->1K(20K)] 30K->2K(90K), 0.0050000 secs]",
            "[Full GC (System.gc()) ",
            "[",
            "",
            "1.0: [GC (Allocation Failure) ",
        ];
        include_str!("../tests/data/event_pieces.txt")
            .lines()
            .chain(unified)
            .collect()
    }

    use crate::lines::Line;
    use crate::parse::LeadingStamps;
    use crate::stitch::{Piece, Stitcher};

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// The lines the stitcher passes on as they are, handed on without it (see
        /// `read_lines`), reach the parser as through the stitcher's general way,
        /// and every line after them too, whatever the lines before, cut or left without a
        /// newline.
        #[test]
        fn a_line_passed_on_as_is_reaches_the_parser_as_stitched(
            lines in proptest::collection::vec(
                (proptest::sample::select(mixed_lines()), proptest::bool::weighted(0.1)),
                1..60,
            ),
            unterminated: bool,
        ) {
            let run = |passing: bool| {
                let mut stitcher = Stitcher::new();
                let mut handed: Vec<Handed> = Vec::new();
                for (at, &(text, truncated)) in lines.iter().enumerate() {
                    let line = Line {
                        bytes: text.as_bytes(),
                        number: at as u64 + 1,
                        unterminated: unterminated && at + 1 == lines.len(),
                        truncated,
                        offset: 0,
                    };
                    if passing && stitcher.passes_on_as_is(line.bytes) {
                        let lines_on = line.unterminated.then_some(0);
                        handed.push((line.bytes.to_vec(), None, line.number, lines_on, truncated));
                        continue;
                    }
                    // The general way: every line through the stitcher's pieces.
                    let last = line.number;
                    let mut feed = |bytes: &[u8], first: u64, piece: Piece| {
                        let lines_on =
                            (line.unterminated && piece != Piece::CutOut).then(|| last - first);
                        let stamps = match piece {
                            Piece::Event(stamps) => Some(stamps),
                            Piece::Lines | Piece::CutOut => None,
                        };
                        handed.push((bytes.to_vec(), stamps, first, lines_on, truncated));
                    };
                    if truncated {
                        stitcher.finish(&mut feed);
                        feed(line.bytes, line.number, Piece::Lines);
                    } else {
                        stitcher.push_other(line.bytes, line.number, &mut feed);
                    }
                }
                stitcher.finish(&mut |bytes, number, _| {
                    handed.push((bytes.to_vec(), None, number, None, false));
                });
                handed
            };
            proptest::prop_assert_eq!(run(true), run(false));
        }
    }
}
