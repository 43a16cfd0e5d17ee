//! Streaming analysis: records from every source in, summaries and findings out.
//! Memory is bounded by the number of distinct pause names and VM operations, never by the
//! length of the log.
//!
//! The analyzer keeps the report's numbers; the diagnosis rules (`crate::rules`) watch the
//! same pauses, safepoints, stalls and samples and word the findings.

mod clock;
mod finish;
mod jvm;
mod nesting;
mod pauses;
mod records;
mod report;
mod safepoints;

use std::collections::BTreeMap;

use pauselab_pause::civil::format_epoch_ms;
use pauselab_pause::record::{Format, GcPause, OldChange, Parsed, Record, Stamp};
use pauselab_pause::{recycle, DurationStats, LogLine, PauseEvent};

use crate::health::{MemoryStats, PauseWindows, StallStats};
use crate::rules::{Rules, Thresholds};
use crate::timeouts::Timeouts;
use crate::totals::{Totals, TotalsByName};
use crate::waiting::Pending;
use clock::{Clock, UptimeRange};
use jvm::JvmFacts;
use nesting::{NestedPause, OpenPauses};
use safepoints::SafepointSeries;

pub use report::{
    FileSummary, Jvm, PauseSection, Report, SafepointSection, Span, UnparsedLine, Warning,
    WorstPause,
};

/// How much the analysis keeps and the rules' margins.
#[derive(Debug, Clone)]
pub struct Options {
    /// How many worst pauses to keep.
    pub top: usize,
    /// How many examples each finding keeps.
    pub evidence: usize,
    /// The rules' margins.
    pub thresholds: Thresholds,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            top: 10,
            evidence: 5,
            thresholds: Thresholds::default(),
        }
    }
}

/// Receives every GC pause, in log order, once its CPU times and safepoint are known.
pub trait PauseSink {
    /// A GC pause, once its CPU times and safepoint are known.
    fn pause(&mut self, event: &PauseEvent);
    /// The same pause with the record it was counted from (its GC id, its heap change),
    /// for sinks that need more than the pause model holds.
    fn gc_pause(&mut self, event: &PauseEvent, _pause: &GcPause) {
        self.pause(event)
    }
    /// The heap around a collection (pause or cycle), in log order.
    fn heap(&mut self, _sample: &HeapSample) {}
    /// A safepoint as counted, named by its VM operation (`GC` or `(not a GC)` when the
    /// line does not say). `statistics`: a JDK 8 `-XX:+PrintSafepointStatistics` row, a
    /// second view of the stopped-time lines' safepoints; the report counts one of the two
    /// series (`safepoints.source`).
    fn safepoint(&mut self, _event: &PauseEvent, _statistics: bool) {}
}

/// Heap occupancy around one collection, for charts.
#[derive(Debug, Clone, PartialEq)]
pub struct HeapSample {
    /// When the collection ended: ms since JVM start, when the log has it.
    pub uptime_ms: Option<f64>,
    /// The same, ms since the epoch, when the log has a wall clock.
    pub wall_ms: Option<f64>,
    /// The heap's occupancy before the collection.
    pub before_bytes: u64,
    /// After it.
    pub after_bytes: u64,
    /// The heap's committed size, when the source gives it.
    pub capacity_bytes: Option<u64>,
    /// The pause or cycle.
    pub name: String,
    /// Its `GC(N)` id, when the source numbers collections.
    pub gc_id: Option<u64>,
}

/// The analysis of one JVM's inputs: fed records (and a text log's lines) as a
/// [`RecordSink`](pauselab_pause::RecordSink), one input after another, it keeps summaries
/// and the rules' observations, and [`Analyzer::finish`] makes the [`Report`].
pub struct Analyzer<'s> {
    opts: Options,
    sink: Option<&'s mut dyn PauseSink>,
    files: Vec<FileSummary>,
    clocks: Vec<Clock>,
    format_counts: Vec<[u64; 2]>,
    /// Per file: lines of the JVM's header (version, collector and flags, region size).
    header_lines: Vec<u64>,
    gc: DurationStats,
    by_name: TotalsByName,
    /// Every rule of the registry, shown each pause, safepoint, stall and sample.
    rules: Rules,
    safepoint_lines: SafepointSeries,
    safepoint_statistics: SafepointSeries,
    pending: Vec<Pending>,
    /// The boxes of records analysed, on their way back to be filled again.
    spent: recycle::SpentBoxes,
    /// A JDK 6-8 collection ran whose event line is lost: the log (a rotated file) begins
    /// inside it, or its line could not be read, and only its tail was seen (`, 0.085
    /// secs]`, G1's `[Eden: ...]` or `[Times: ...]`). The next safepoint line ran it, and
    /// is not a stop without a GC.
    lost_gc: bool,
    pending_operation: Option<String>,
    worst: Vec<WorstPause>,
    /// The durations of `worst`, ns, in its order: once it is full, no pause as short as
    /// the last can enter (see [`pauses::cannot_enter`]).
    worst_ns: Vec<u64>,
    unparsed: u64,
    first_unparsed: Option<UnparsedLine>,
    warnings: Vec<Warning>,
    jvm: JvmFacts,
    /// Over every input.
    uptime: UptimeRange,
    allocation_stalls: StallStats,
    relocation_stalls: StallStats,
    memory: MemoryStats,
    /// Worst 1-minute and 10-minute windows of pause time.
    windows: PauseWindows,
    full_gc_causes: BTreeMap<String, Totals>,
    /// `GC(N) To-space exhausted` seen for this collection (JDK 9-16 G1).
    evacuation_failed_gc_id: Option<u64>,
    /// The old generation's change in the collection of that id, until its pause line.
    old_generation: Option<(u64, OldChange)>,
    /// G1's region size, from the log's start.
    region_size: Option<u64>,
    timeouts: Timeouts,
    /// GC ids whose pause began (`gc,start` line) and has not ended yet, oldest first.
    open_pauses: OpenPauses,
    /// A pause that ended inside another's, waiting for the outer pause's line.
    nested: Option<NestedPause>,
    /// Per file: it has `gc,start` lines (`GC(N) Pause Young (...)` without a duration),
    /// which tell nested pauses by their ids.
    files_pause_starts: Vec<bool>,
    /// The stamp of the line before when it carried no record and nothing came after it:
    /// a line with the same stamp changes no clock (most lines of a `gc*` log share
    /// their collection's stamp), so only its format is counted.
    clocks_saw: Option<Stamp>,
    /// The stamp of the current input's unified line that last moved its clocks and windows:
    /// a record with the same stamp (the lines of one collection) would move them nowhere.
    clocks_at: Option<Stamp>,
    /// The input is a text log (its lines are fed): no CPU sample will come, so no pause
    /// waits for one. Inputs of one analysis are all logs or all recordings.
    text_log: bool,
    /// The current input's first notice of messages that asynchronous logging dropped.
    first_drop_line: Option<u64>,
}

impl<'s> Analyzer<'s> {
    /// An analyzer keeping what `opts` asks for.
    pub fn new(opts: Options) -> Self {
        Analyzer {
            opts,
            sink: None,
            files: Vec::new(),
            clocks: Vec::new(),
            format_counts: Vec::new(),
            header_lines: Vec::new(),
            gc: DurationStats::new(),
            by_name: TotalsByName::new(pauses::MAX_NAMES),
            rules: Rules::default(),
            safepoint_lines: SafepointSeries::default(),
            safepoint_statistics: SafepointSeries::default(),
            pending: Vec::new(),
            spent: recycle::SpentBoxes::default(),
            lost_gc: false,
            pending_operation: None,
            worst: Vec::new(),
            worst_ns: Vec::new(),
            unparsed: 0,
            first_unparsed: None,
            warnings: Vec::new(),
            jvm: JvmFacts::default(),
            uptime: UptimeRange::default(),
            allocation_stalls: StallStats::default(),
            relocation_stalls: StallStats::default(),
            memory: MemoryStats::default(),
            windows: PauseWindows::new(60, 600),
            full_gc_causes: BTreeMap::new(),
            evacuation_failed_gc_id: None,
            old_generation: None,
            region_size: None,
            timeouts: Timeouts::default(),
            open_pauses: OpenPauses::default(),
            nested: None,
            files_pause_starts: Vec::new(),
            clocks_saw: None,
            clocks_at: None,
            text_log: false,
            first_drop_line: None,
        }
    }

    /// Also hands every pause, heap sample and safepoint to `sink` as it is counted.
    pub fn with_sink(mut self, sink: &'s mut dyn PauseSink) -> Self {
        self.sink = Some(sink);
        self
    }

    pub(crate) fn warn(&mut self, file: &str, line: Option<u64>, message: String) {
        self.warnings.push(Warning {
            file: file.to_string(),
            line,
            message,
        });
    }

    /// Starts a new input; later lines belong to it.
    pub(crate) fn begin_file(&mut self, name: &str) {
        self.clocks_saw = None;
        self.clocks_at = None;
        self.first_drop_line = None;
        self.release_nested();
        self.open_pauses = OpenPauses::default();
        self.flush_pending();
        self.files.push(FileSummary {
            file: name.to_string(),
            format: None,
            lines: 0,
            bytes: 0,
            pauses: 0,
            safepoints: 0,
            unparsed_lines: 0,
            dropped_messages: 0,
        });
        self.clocks.push(Clock::default());
        self.format_counts.push([0, 0]);
        self.header_lines.push(0);
        self.files_pause_starts.push(false);
        self.pending_operation = None;
    }

    /// Ends the current input; `bytes` is how much was read from it.
    pub(crate) fn end_file(&mut self, bytes: u64) {
        self.clocks_saw = None;
        self.release_nested();
        self.flush_pending();
        self.timeouts.end_file(self.opts.evidence);
        let i = self.files.len() - 1;
        let counts = self.format_counts[i];
        let file = &mut self.files[i];
        file.bytes = bytes;
        file.format = match counts {
            [0, 0] => None,
            [jdk8, unified] if unified >= jdk8 => Some(Format::Unified),
            _ => Some(Format::Jdk8),
        };
        let name = file.file.clone();
        let dropped = file.dropped_messages;
        if dropped > 0 {
            let msg = format!(
                "asynchronous logging (-Xlog:async) dropped {dropped} log messages: the pauses and safepoints they told of are missing, so counts and sums are lower bounds; raise -XX:AsyncLogBufferSize"
            );
            self.warn(&name, self.first_drop_line, msg);
        }
        let clock = &self.clocks[i];
        let (first_jump, jumps_back, pids) =
            (clock.first_jump, clock.jumps_back, clock.pids.clone());
        let (first_wall_step, wall_steps_back) = (clock.first_wall_step, clock.wall_steps_back);
        if let Some((line, from, to)) = first_jump {
            let msg = format!(
                "time stamps go back {} time(s), first from {:.3} s to {:.3} s: the file holds several JVM runs or two JVMs writing into it; the covered time counts each run separately",
                jumps_back,
                from as f64 / 1e9,
                to as f64 / 1e9
            );
            self.warn(&name, Some(line), msg);
        }
        if let Some((line, from, to)) = first_wall_step {
            let msg = format!(
                "the wall clock goes back {} time(s) while the uptime goes on, first from {} to {} ({:.3} s back): the host's clock was set back (NTP or by hand), or another JVM's lines follow; wall-clock times after it do not follow the uptime, the covered time uses the uptime",
                wall_steps_back,
                format_epoch_ms(from),
                format_epoch_ms(to),
                (from - to) as f64 / 1e3
            );
            self.warn(&name, Some(line), msg);
        }
        if pids.len() > 1 {
            let pids: Vec<String> = pids.iter().map(u64::to_string).collect();
            let msg = format!(
                "lines of {} processes (pids {}) are interleaved: two JVMs write into one log file; give each JVM its own file (-Xlog:gc:file=gc-%p.log)",
                pids.len(),
                pids.join(", ")
            );
            self.warn(&name, None, msg);
        }
    }

    /// Feeds one record of the current input that did not come from a log line (a pause or
    /// safepoint of a JFR recording). `end` is when its event ended, like the stamp of a
    /// unified log line; `number` locates it in the input (for JFR, the event's ordinal).
    pub(crate) fn record(&mut self, end: Stamp, record: Record, number: u64) {
        self.clocks_saw = None;
        let parsed = Box::new(Parsed {
            format: Format::Unified,
            stamp: end,
            record,
        });
        self.parsed(parsed, number);
    }

    /// The JVM's options, from a source other than a log line (a recording's
    /// `jdk.JVMInformation`): findings never advise what the JVM already does.
    pub(crate) fn jvm_flags(&mut self, options: &str) {
        self.jvm.flags.add(options);
    }

    /// Closes the pauses waiting for their safepoint: the next safepoint fed is not theirs
    /// (for sources that know which safepoint a pause ran in).
    pub(crate) fn close_pauses(&mut self) {
        self.clocks_saw = None;
        // A full collection held for the pause it might be nested in is closed too.
        self.release_nested();
        self.flush_pending();
    }

    /// One line of a text log (see [`RecordSink::line`](pauselab_pause::RecordSink::line)).
    pub(crate) fn line(&mut self, line: LogLine<'_>, number: u64) {
        let (format, stamp) = match line {
            LogLine::Other { format, stamp } => (format, stamp),
            LogLine::Record(parsed) => {
                self.text_log = true;
                self.clocks_saw = None;
                let fi = self.files.len() - 1;
                self.files[fi].lines += 1;
                return self.parsed(parsed, number);
            }
            LogLine::Nothing => {
                self.text_log = true;
                self.clocks_saw = None;
                let fi = self.files.len() - 1;
                self.files[fi].lines += 1;
                return;
            }
            LogLine::Unparsed {
                text,
                partial_event,
            } => {
                self.text_log = true;
                self.clocks_saw = None;
                let fi = self.files.len() - 1;
                self.files[fi].lines += 1;
                self.lost_gc |= partial_event;
                return self.unparsed_line(text, number);
            }
        };
        self.other_lines(format, stamp, number, 1);
    }

    /// `count` lines without a record that share `format` and `stamp` (see
    /// [`RecordSink::other_lines`](pauselab_pause::RecordSink::other_lines)): the first
    /// moves the clocks, the others only count.
    pub(crate) fn other_lines(&mut self, format: Format, stamp: Stamp, number: u64, count: u64) {
        if count == 0 {
            return;
        }
        self.text_log = true;
        let fi = self.files.len() - 1;
        self.files[fi].lines += count;
        if self.clocks_saw == Some(stamp) {
            self.count_format(format, &stamp, false, count);
        } else {
            self.observe(format, &stamp, false, number, count);
            self.clocks_saw = Some(stamp);
        }
        self.timeouts.other_record();
    }

    /// Sets how many lines the current input has: lines joined into one event (JDK 8) reach
    /// [`Analyzer::line`] as one.
    pub(crate) fn set_line_count(&mut self, count: u64) {
        if let Some(file) = self.files.last_mut() {
            file.lines = count;
        }
    }
}
