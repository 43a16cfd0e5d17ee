//! Streaming analysis: records from the line parser in, summaries and findings out.
//! Memory is bounded by the number of distinct pause names and VM operations, never by the
//! length of the log.

use std::collections::BTreeMap;

use pauselab_pause::{
    Collector, CpuTimes, DurationStats, PauseEvent, PauseKind, SourceLine, Summary,
};
use serde::Serialize;

use crate::busy_cpu::BusyCpu;
use crate::findings::{Context, Evidence, Finding, JvmFlags, Rules, Thresholds};
use crate::health::{
    MemorySection, MemoryStats, SlidingShare, StallSection, StallStats, WindowShare,
};
use crate::num::format_epoch_ms;
use crate::parse::{
    parse_line, Cpu, Failure, Format, GcPause, HeapChange, OldChange, Parsed, Record, Safepoint,
    StallKind, Stamp,
};
use crate::timeouts::{TimeoutSection, Timeouts};
use crate::totals::Totals;

pub use crate::pause_type::is_gc_operation;
pub use crate::totals::NameTotals;

#[derive(Debug, Clone)]
pub struct Options {
    /// How many worst pauses to keep.
    pub top: usize,
    /// How many examples each finding keeps.
    pub evidence: usize,
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
    pub before_bytes: u64,
    pub after_bytes: u64,
    pub capacity_bytes: Option<u64>,
    /// The pause or cycle.
    pub name: String,
    /// Its `GC(N)` id, when the source numbers collections.
    pub gc_id: Option<u64>,
}

/// A GC pause waiting for its `gc+cpu` line or its safepoint line.
struct Pending {
    pause: GcPause,
    file: usize,
    line: u64,
    /// Other pauses of the same GC id came before it (ZGC, Shenandoah cycles): the cycle's
    /// CPU times are not this pause's.
    shares_gc_id: bool,
    ttsp_ns: Option<u64>,
    stopped_ns: Option<u64>,
}

/// Safepoints from one kind of line (stopped-time / `Safepoint "..."` lines, or the JDK 8
/// safepoint statistics table); both describe the same stops, so they are never added up.
#[derive(Default)]
struct SafepointSeries {
    stats: DurationStats,
    ttsp: DurationStats,
    non_gc: Totals,
    operations: BTreeMap<String, Totals>,
    rules: Rules,
}

/// Per input file.
#[derive(Debug, Clone, Serialize)]
pub struct FileSummary {
    pub file: String,
    /// `unified`, `jdk8`, or null when no line was recognised.
    pub format: Option<Format>,
    pub lines: u64,
    pub bytes: u64,
    pub pauses: u64,
    pub safepoints: u64,
    pub unparsed_lines: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Warning {
    pub file: String,
    pub line: Option<u64>,
    pub message: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct UnparsedLine {
    pub file: String,
    pub line: u64,
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Jvm {
    pub version: Option<String>,
    pub collector: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Span {
    pub start_uptime_s: Option<f64>,
    pub end_uptime_s: Option<f64>,
    pub start_wall: Option<String>,
    pub end_wall: Option<String>,
    /// Time the logs cover (sum over JVM runs when a log holds several), seconds.
    pub covered_s: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct PauseSection {
    #[serde(flatten)]
    pub summary: Summary,
    /// Share of the covered time spent in GC pauses, percent.
    pub share_pct: Option<f64>,
    pub by_name: Vec<NameTotals>,
    /// The worst 1-minute and 10-minute windows of pause time (localized throughput), when
    /// the log covers that long.
    pub worst_windows: Vec<WindowShare>,
    /// Full collections by cause.
    pub full_gc_causes: Vec<NameTotals>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SafepointSection {
    /// `safepoint_lines` (stopped-time or `Safepoint "..."` lines), `safepoint_statistics`
    /// (JDK 8 -XX:+PrintSafepointStatistics), or null when the log has neither.
    pub source: Option<&'static str>,
    #[serde(flatten)]
    pub summary: Summary,
    /// Time to safepoint; null when the input recorded none (no safepoint lines, or a
    /// recording without safepoint-begin events).
    pub ttsp_max_ms: Option<f64>,
    pub ttsp_p99_ms: Option<f64>,
    /// Share of the covered time the application was stopped, percent.
    pub stopped_share_pct: Option<f64>,
    pub non_gc_count: u64,
    pub non_gc_total_ms: f64,
    pub operations: Vec<NameTotals>,
    /// HotSpot's safepoint timeout reports (`-XX:+SafepointTimeout`) and the threads named.
    pub timeouts: TimeoutSection,
}

#[derive(Debug, Clone, Serialize)]
pub struct WorstPause {
    #[serde(flatten)]
    pub event: PauseEvent,
    /// The whole safepoint around this pause, when the log has safepoint lines.
    pub stopped_ms: Option<f64>,
}

/// Everything `pauselab analyze` reports; serialised as its `--json` output.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub inputs: Vec<FileSummary>,
    pub jvm: Jvm,
    pub span: Span,
    pub pauses: PauseSection,
    pub safepoints: SafepointSection,
    /// ZGC `Allocation Stall` lines: threads that waited for memory; not pauses.
    pub allocation_stalls: StallSection,
    /// ZGC `Relocation Stall` lines.
    pub relocation_stalls: StallSection,
    pub memory: MemorySection,
    pub worst: Vec<WorstPause>,
    pub findings: Vec<Finding>,
    pub unparsed_lines: u64,
    pub first_unparsed: Option<UnparsedLine>,
    pub warnings: Vec<Warning>,
}

/// Per-file time tracking: covered span and JVM restarts or interleaving.
#[derive(Default)]
struct Clock {
    first_uptime: Option<u64>,
    segment_start: Option<u64>,
    last_uptime: Option<u64>,
    /// The latest pause end of the current run: a JDK 8 event is stamped at its start, so
    /// it can end after the last stamp.
    segment_end: Option<u64>,
    covered_uptime_ns: u64,
    first_wall: Option<i64>,
    last_wall: Option<i64>,
    jumps_back: u64,
    first_jump: Option<(u64, u64, u64)>,
    pids: Vec<u64>,
}

impl Clock {
    fn observe(&mut self, stamp: &Stamp, line: u64) {
        if let Some(u) = stamp.uptime_ns {
            self.first_uptime.get_or_insert(u);
            match self.last_uptime {
                // Stamps of one JVM never go back by more than output buffering can explain.
                Some(last) if u + 1_000_000_000 < last => {
                    let end = self.segment_end.take().map_or(last, |e| e.max(last));
                    let run = end - self.segment_start.unwrap_or(end).min(end);
                    self.covered_uptime_ns = self.covered_uptime_ns.saturating_add(run);
                    self.segment_start = Some(u);
                    self.jumps_back += 1;
                    if self.first_jump.is_none() {
                        self.first_jump = Some((line, last, u));
                    }
                }
                None => self.segment_start = Some(u),
                _ => {}
            }
            if self
                .last_uptime
                .is_none_or(|l| u > l || u + 1_000_000_000 < l)
            {
                self.last_uptime = Some(u);
            }
        }
        if let Some(w) = stamp.wall_ms {
            self.first_wall = Some(self.first_wall.map_or(w, |f| f.min(w)));
            self.last_wall = Some(self.last_wall.map_or(w, |l| l.max(w)));
        }
        if let Some(pid) = stamp.pid {
            if !self.pids.contains(&pid) && self.pids.len() < 16 {
                self.pids.push(pid);
            }
        }
    }

    /// A pause (or safepoint) from `start` to `end`: the time covered includes all of it,
    /// not just the stamp of its line.
    fn extend(&mut self, start: &Stamp, end: &Stamp) {
        if let (Some(s), Some(e)) = (start.uptime_ns, end.uptime_ns) {
            self.segment_start = Some(self.segment_start.map_or(s, |f| f.min(s)));
            self.segment_end = Some(self.segment_end.map_or(e, |l| l.max(e)));
        }
        if let (Some(s), Some(e)) = (start.wall_ms, end.wall_ms) {
            self.first_wall = Some(self.first_wall.map_or(s, |f| f.min(s)));
            self.last_wall = Some(self.last_wall.map_or(e, |l| l.max(e)));
        }
    }

    fn covered_ns(&self) -> u64 {
        let end = match (self.last_uptime, self.segment_end) {
            (Some(l), Some(e)) => Some(l.max(e)),
            (l, e) => l.or(e),
        };
        match (self.segment_start, end) {
            (Some(s), Some(l)) => self.covered_uptime_ns.saturating_add(l.saturating_sub(s)),
            _ => match (self.first_wall, self.last_wall) {
                (Some(f), Some(l)) => (l.saturating_sub(f).max(0) as u64).saturating_mul(1_000_000),
                _ => 0,
            },
        }
    }
}

pub struct Analyzer<'s> {
    opts: Options,
    sink: Option<&'s mut dyn PauseSink>,
    files: Vec<FileSummary>,
    clocks: Vec<Clock>,
    format_counts: Vec<[u64; 2]>,
    /// Per file: lines of the JVM's header (version, collector and flags, region size).
    header_lines: Vec<u64>,
    gc: DurationStats,
    by_name: BTreeMap<String, Totals>,
    rules: Rules,
    safepoint_lines: SafepointSeries,
    safepoint_statistics: SafepointSeries,
    pending: Vec<Pending>,
    last_gc_id: Option<u64>,
    pending_operation: Option<String>,
    worst: Vec<WorstPause>,
    unparsed: u64,
    first_unparsed: Option<UnparsedLine>,
    warnings: Vec<Warning>,
    version: Option<String>,
    collector: Option<String>,
    first_pause_name: Option<String>,
    global_first_uptime: Option<u64>,
    global_last_uptime: Option<u64>,
    allocation_stalls: StallStats,
    relocation_stalls: StallStats,
    memory: MemoryStats,
    /// Worst 1-minute and 10-minute windows of pause time.
    windows: [SlidingShare; 2],
    full_gc_causes: BTreeMap<String, Totals>,
    /// `GC(N) To-space exhausted` seen for this collection (JDK 9-16 G1).
    evacuation_failed_gc_id: Option<u64>,
    /// The old generation's change in the collection of that id, until its pause line.
    old_generation: Option<(u64, OldChange)>,
    /// G1's region size, from the log's start.
    region_size: Option<u64>,
    timeouts: Timeouts,
    /// Long pauses matched with a recording's CPU load samples.
    busy_cpu: BusyCpu,
    /// GC ids whose pause began (`gc,start` line) and has not ended yet, oldest first.
    open_pauses: OpenPauses,
    /// A pause that ended inside another's, waiting for the outer pause's line.
    nested: Option<NestedPause>,
    /// Per file: it has `gc,start` lines (`GC(N) Pause Young (...)` without a duration),
    /// which tell nested pauses by their ids.
    files_pause_starts: Vec<bool>,
    /// The JVM's options, when the input states them.
    flags: JvmFlags,
}

/// A pause line whose pause began after another pause began and before it ended.
struct NestedPause {
    /// The GC id of the pause it lies in: known from `gc,start` lines, or, in a log
    /// without them, any earlier id whose pause line follows and covers it ([`Outer::Earlier`]).
    outer: Outer,
    pause: GcPause,
    stamp: Stamp,
    format: Format,
    line: u64,
}

/// Which pause a nested pause lies in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outer {
    /// The pause of this GC id (its start line came before the nested pause's).
    Id(u64),
    /// No start lines to tell (`-Xlog:gc` on JDK 9-11): JDK 9-11 Serial and CMS print a
    /// young collection upgraded to a full one as `GC(6) Pause Full ...` then `GC(5) Pause
    /// Young ...` at the same stamp, the outer one a little longer; so a full pause line is
    /// held until the next pause line says whether it is that shape.
    Earlier,
}

/// Stamp resolution of the coarsest unified decoration (`uptime`, `time`: milliseconds).
const STAMP_RESOLUTION_NS: u64 = 1_000_000;

/// GC ids of pauses begun and not ended, oldest first; a few at most (one pause nests in
/// another), so a start line whose pause line never comes is dropped in time.
#[derive(Default)]
struct OpenPauses(Vec<u64>);

impl NestedPause {
    /// Whether `outer`, a pause line ending at `end`, is the pause this one lies in.
    fn lies_in(&self, outer: &GcPause, end: &Stamp) -> bool {
        match self.outer {
            Outer::Id(id) => outer.gc_id == Some(id),
            Outer::Earlier => {
                let earlier =
                    matches!((outer.gc_id, self.pause.gc_id), (Some(o), Some(i)) if o < i);
                let longer = outer.duration_ns >= self.pause.duration_ns;
                // Began no later and ended no earlier, to the stamps' resolution.
                let covers = match (clock_ns(end), clock_ns(&self.stamp)) {
                    (Some(outer_end), Some(inner_end)) => {
                        outer_end + STAMP_RESOLUTION_NS >= inner_end
                            && outer_end.saturating_sub(outer.duration_ns)
                                <= inner_end.saturating_sub(self.pause.duration_ns)
                                    + STAMP_RESOLUTION_NS
                    }
                    _ => *end == self.stamp,
                };
                earlier && longer && covers
            }
        }
    }
}

impl OpenPauses {
    const MAX: usize = 4;

    fn begin(&mut self, gc_id: u64) {
        if !self.0.contains(&gc_id) {
            if self.0.len() == Self::MAX {
                self.0.remove(0);
            }
            self.0.push(gc_id);
        }
    }

    /// The pause of `gc_id` ended: the pause it lies in, when one began before it and is
    /// still open.
    fn end(&mut self, gc_id: u64) -> Option<u64> {
        let at = self.0.iter().position(|&id| id == gc_id)?;
        self.0.remove(at);
        at.checked_sub(1).map(|outer| self.0[outer])
    }

    fn forget(&mut self, gc_id: u64) {
        self.0.retain(|&id| id != gc_id);
    }
}

/// A time on one forward-going clock: uptime, else the wall clock.
fn clock_ns(stamp: &Stamp) -> Option<u64> {
    stamp.uptime_ns.or_else(|| {
        stamp
            .wall_ms
            .and_then(|w| u64::try_from(w).ok())
            .map(|w| w * 1_000_000)
    })
}

impl<'s> Analyzer<'s> {
    pub fn new(opts: Options) -> Self {
        Analyzer {
            opts,
            sink: None,
            files: Vec::new(),
            clocks: Vec::new(),
            format_counts: Vec::new(),
            header_lines: Vec::new(),
            gc: DurationStats::new(),
            by_name: BTreeMap::new(),
            rules: Rules::default(),
            safepoint_lines: SafepointSeries::default(),
            safepoint_statistics: SafepointSeries::default(),
            pending: Vec::new(),
            last_gc_id: None,
            pending_operation: None,
            worst: Vec::new(),
            unparsed: 0,
            first_unparsed: None,
            warnings: Vec::new(),
            version: None,
            collector: None,
            first_pause_name: None,
            global_first_uptime: None,
            global_last_uptime: None,
            allocation_stalls: StallStats::default(),
            relocation_stalls: StallStats::default(),
            memory: MemoryStats::default(),
            windows: [SlidingShare::new(60), SlidingShare::new(600)],
            full_gc_causes: BTreeMap::new(),
            evacuation_failed_gc_id: None,
            old_generation: None,
            region_size: None,
            timeouts: Timeouts::default(),
            busy_cpu: BusyCpu::default(),
            open_pauses: OpenPauses::default(),
            nested: None,
            files_pause_starts: Vec::new(),
            flags: JvmFlags::default(),
        }
    }

    pub fn with_sink(mut self, sink: &'s mut dyn PauseSink) -> Self {
        self.sink = Some(sink);
        self
    }

    pub fn warn(&mut self, file: &str, line: Option<u64>, message: String) {
        self.warnings.push(Warning {
            file: file.to_string(),
            line,
            message,
        });
    }

    /// Starts a new input; later lines belong to it.
    pub fn begin_file(&mut self, name: &str) {
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
        });
        self.clocks.push(Clock::default());
        self.format_counts.push([0, 0]);
        self.header_lines.push(0);
        self.files_pause_starts.push(false);
        self.pending_operation = None;
        self.last_gc_id = None;
    }

    /// Ends the current input; `bytes` is how much was read from it.
    pub fn end_file(&mut self, bytes: u64) {
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
        let clock = &self.clocks[i];
        let (first_jump, jumps_back, pids) =
            (clock.first_jump, clock.jumps_back, clock.pids.clone());
        if let Some((line, from, to)) = first_jump {
            let msg = format!(
                "time stamps go back {} time(s), first from {:.3} s to {:.3} s: the file holds several JVM runs or two JVMs writing into it; the covered time counts each run separately",
                jumps_back,
                from as f64 / 1e9,
                to as f64 / 1e9
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

    /// Feeds one line of the current input.
    pub fn line(&mut self, bytes: &[u8], number: u64, unterminated: bool, overlong: bool) {
        let keep_text = self.first_unparsed.is_none();
        self.apply(
            ClassifiedLine::new(bytes, unterminated, overlong, keep_text),
            number,
        );
    }

    /// Feeds one line of the current input already classified (see [`ClassifiedLine`]).
    pub fn apply(&mut self, line: ClassifiedLine, number: u64) {
        let fi = self.files.len() - 1;
        self.files[fi].lines += 1;
        if let Some(counted) = line.unterminated {
            let name = self.files[fi].file.clone();
            self.warn(
                &name,
                Some(number),
                if counted {
                    "the last line has no newline (the log was still being written); it parsed completely and was counted"
                } else {
                    "the last line is cut off (no newline at the end): the log was still being written or was truncated; it was not counted"
                }
                .to_string(),
            );
        }
        match line.outcome {
            Outcome::Nothing => {}
            Outcome::Other { format, stamp } => {
                self.observe(format, &stamp, false, number);
                self.timeouts.other_record();
            }
            Outcome::Record(parsed) => self.parsed(*parsed, number),
            Outcome::Unparsed(text) => self.unparsed_line(&text, number),
        }
    }

    /// `text` is the line's beginning, or empty when it was not kept (an unparsed line was
    /// seen before it).
    fn unparsed_line(&mut self, text: &[u8], number: u64) {
        let fi = self.files.len() - 1;
        self.unparsed += 1;
        self.files[fi].unparsed_lines += 1;
        if self.first_unparsed.is_none() {
            let text: String = String::from_utf8_lossy(text)
                .chars()
                .map(|c| if c.is_control() { '?' } else { c })
                .collect();
            self.first_unparsed = Some(UnparsedLine {
                file: self.files[fi].file.clone(),
                line: number,
                text,
            });
        }
    }

    /// Sets how many lines the current input has: lines joined into one event (JDK 8) reach
    /// [`Analyzer::line`] as one.
    pub fn set_line_count(&mut self, count: u64) {
        if let Some(file) = self.files.last_mut() {
            file.lines = count;
        }
    }

    /// Feeds one record of the current input that did not come from a log line (a pause or
    /// safepoint of a JFR recording). `end` is when its event ended, like the stamp of a
    /// unified log line; `number` locates it in the input (for JFR, the event's ordinal).
    pub fn record(&mut self, end: Stamp, record: Record, number: u64) {
        let parsed = Parsed {
            format: Format::Unified,
            stamp: end,
            record,
        };
        self.parsed(parsed, number);
    }

    /// The JVM's options, from a source other than a log line (a recording's
    /// `jdk.JVMInformation`): findings never advise what the JVM already does.
    pub fn jvm_flags(&mut self, options: &str) {
        self.flags.add(options);
    }

    /// Closes the pauses waiting for their safepoint: the next safepoint fed is not theirs
    /// (for sources that know which safepoint a pause ran in).
    pub fn close_pauses(&mut self) {
        self.flush_pending();
    }

    /// Lines this file has that were recognised as GC or safepoint log lines.
    pub fn recognised_lines(&self) -> u64 {
        let c = self.format_counts.last().copied().unwrap_or_default();
        c[0] + c[1]
    }

    /// What every parsed line tells, `record` or not: the log's format and its clock.
    fn observe(&mut self, format: Format, stamp: &Stamp, record: bool, line: u64) {
        let fi = self.files.len() - 1;
        if !is_blank(format, stamp, record) {
            self.format_counts[fi][format as usize] += 1;
        }
        self.clocks[fi].observe(stamp, line);
        // Windows of pause time move with the log's clock, pauses or not.
        if let Some(at) = clock_ns(stamp) {
            for w in &mut self.windows {
                w.tick(at);
            }
        }
        if let Some(u) = stamp.uptime_ns {
            self.global_first_uptime = Some(self.global_first_uptime.map_or(u, |f| f.min(u)));
            self.global_last_uptime = Some(self.global_last_uptime.map_or(u, |l| l.max(u)));
        }
    }

    fn parsed(&mut self, p: Parsed, line: u64) {
        let record = !matches!(p.record, Record::Other);
        self.observe(p.format, &p.stamp, record, line);
        if !matches!(p.record, Record::SafepointTimeout(_)) {
            self.timeouts.other_record();
        }
        let fi = self.files.len() - 1;
        if matches!(
            p.record,
            Record::Version(_) | Record::Collector(_) | Record::Flags(_) | Record::RegionSize(_)
        ) {
            self.header_lines[fi] += 1;
        }
        match p.record {
            Record::Other => {}
            Record::SafepointTimeout(timeout) => {
                let file = self.files[fi].file.clone();
                self.timeouts
                    .line(timeout, p.stamp, &file, line, self.opts.evidence);
            }
            Record::Pause(mut pause) => {
                if pause.gc_id.is_some() && pause.gc_id == self.evacuation_failed_gc_id {
                    pause.failures.add(Failure::Evacuation);
                }
                self.pause_line(pause, p.stamp, p.format, line);
            }
            Record::PauseStart { gc_id } => {
                self.files_pause_starts[fi] = true;
                self.open_pauses.begin(gc_id);
            }
            Record::Cpu { gc_id, cpu } => {
                // The nested pause's own CPU line: kept in case its outer pause never ends.
                if let Some(nested) = self.nested.as_mut().filter(|n| n.pause.gc_id == gc_id) {
                    nested.pause.cpu.get_or_insert(cpu);
                } else if let Some(pending) = self
                    .pending
                    .iter_mut()
                    .rev()
                    .find(|pp| pp.pause.gc_id == gc_id && pp.pause.cpu.is_none())
                {
                    if !pending.shares_gc_id {
                        pending.pause.cpu = Some(cpu);
                    }
                }
            }
            Record::DetailsHeap { heap, young } => {
                // The detail line comes after its pause's line: the pause is counted, its
                // heap sample is taken now.
                let pause = self
                    .pending
                    .last_mut()
                    .map(|pp| &mut pp.pause)
                    .filter(|pause| pause.heap.is_none());
                if let Some(pause) = pause {
                    pause.heap = Some(heap);
                    pause.young = Some(young);
                    let (start, name, gc_id) = (pause.start, pause.name.clone(), pause.gc_id);
                    self.heap_sample(&start, heap, &name, gc_id);
                    // A mixed collection frees old regions too: what it promoted is unknown.
                    if !name.contains("mixed") {
                        self.memory.young(clock_ns(&start), young, heap);
                    }
                }
            }
            Record::SafepointBegin(op) => self.pending_operation = Some(op),
            Record::Safepoint(mut sp) => {
                // A safepoint ends every pause inside it: a pause still waiting for the
                // pause it seemed nested in was not nested.
                self.release_nested();
                sp.start = p.stamp.minus(sp.total_ns);
                self.clocks[fi].extend(&sp.start, &p.stamp);
                if sp.operation.is_none() {
                    sp.operation = self.pending_operation.take();
                }
                self.files[fi].safepoints += 1;
                let held_up_by = self.timeouts.take_for_safepoint(self.opts.evidence);
                self.safepoint(sp, fi, line, false, held_up_by);
            }
            Record::SafepointStatistics(mut sp) => {
                sp.start = p.stamp;
                self.safepoint(sp, fi, line, true, None);
            }
            Record::Collector(c) => {
                if self.collector.is_none() {
                    self.collector = Some(c);
                }
            }
            Record::Flags(options) => {
                if self.collector.is_none() {
                    self.collector =
                        crate::parse::collector_from_flags(&options).map(str::to_string);
                }
                self.flags.add(&options);
            }
            Record::Version(v) => {
                if self.version.is_none() {
                    self.version = Some(v);
                }
            }
            Record::CpuLoad(load) => {
                self.busy_cpu.sample(
                    clock_ns(&p.stamp),
                    load,
                    &mut self.rules.busy_cpu,
                    self.opts.evidence,
                );
            }
            Record::Stall(stall) => {
                let stats = match stall.kind {
                    StallKind::Allocation => &mut self.allocation_stalls,
                    StallKind::Relocation => &mut self.relocation_stalls,
                };
                stats.record(&stall.thread, stall.duration_ns);
                if stall.kind == StallKind::Allocation
                    && stall.duration_ns >= self.opts.thresholds.alloc_stall_ns
                {
                    let start = p.stamp.minus(stall.duration_ns);
                    let file = self.files[fi].file.clone();
                    self.rules
                        .allocation_stalls
                        .hit(stall.duration_ns, self.opts.evidence, || Evidence {
                            file,
                            line,
                            uptime_s: start.uptime_ns.map(|u| u as f64 / 1e9),
                            wall: start.wall_ms.map(format_epoch_ms),
                            what: format!("Allocation Stall ({})", stall.thread),
                            detail: format!(
                                "thread waited {:.1} ms for memory",
                                stall.duration_ns as f64 / 1e6
                            ),
                            excess_ms: stall.duration_ns as f64 / 1e6,
                        });
                }
            }
            Record::Cycle(cycle) => {
                if let Some(heap) = cycle.heap {
                    self.heap_sample(&p.stamp, heap, &cycle.name, Some(cycle.gc_id));
                }
                if let Some(ns) = cycle.duration_ns {
                    self.memory.cycle(&cycle.name, ns);
                }
            }
            Record::ToSpaceExhausted { gc_id } => {
                self.evacuation_failed_gc_id = Some(gc_id);
            }
            Record::OldGeneration { gc_id, change } => {
                self.old_generation = Some((gc_id, change));
            }
            Record::RegionSize(bytes) => self.region_size = Some(bytes),
        }
    }

    /// A pause line. A pause that began after another one began and ended before it (Serial
    /// and Parallel upgrading a young collection to a full one: `GC(2) Pause Full` inside
    /// `GC(1) Pause Young`) is one stop of the application: the outer pause counts, marked
    /// as upgraded to a full collection when the nested one was full.
    fn pause_line(&mut self, mut pause: GcPause, stamp: Stamp, format: Format, line: u64) {
        if let Some(nested) = self.nested.take() {
            if nested.lies_in(&pause, &stamp) {
                self.forget_outer(nested.outer);
                let inner = &nested.pause;
                pause.upgraded_to_full |= inner.upgraded_to_full || is_full_collection(&inner.name);
                for failure in [
                    Failure::Evacuation,
                    Failure::ConcurrentMode,
                    Failure::Promotion,
                ] {
                    if inner.failures.has(failure) {
                        pause.failures.add(failure);
                    }
                }
                return self.count_pause(pause, stamp, format, line);
            }
            // The outer pause's line never came: the nested one was a pause of its own.
            self.forget_outer(nested.outer);
            self.count_pause(nested.pause, nested.stamp, nested.format, nested.line);
        }
        let outer = match pause.gc_id {
            Some(id) if self.files_pause_starts[self.files.len() - 1] => {
                self.open_pauses.end(id).map(Outer::Id)
            }
            Some(_) if format == Format::Unified && is_full_collection(&pause.name) => {
                Some(Outer::Earlier)
            }
            _ => None,
        };
        if let Some(outer) = outer {
            self.nested = Some(NestedPause {
                outer,
                pause,
                stamp,
                format,
                line,
            });
            return;
        }
        self.count_pause(pause, stamp, format, line);
    }

    fn forget_outer(&mut self, outer: Outer) {
        if let Outer::Id(id) = outer {
            self.open_pauses.forget(id);
        }
    }

    /// Counts a pause held as nested whose outer pause did not follow.
    fn release_nested(&mut self) {
        if let Some(nested) = self.nested.take() {
            self.forget_outer(nested.outer);
            self.count_pause(nested.pause, nested.stamp, nested.format, nested.line);
        }
    }

    /// One stop of the application: its heap, its time and its place in the pause windows.
    fn count_pause(&mut self, mut pause: GcPause, stamp: Stamp, format: Format, line: u64) {
        let fi = self.files.len() - 1;
        if let Some(heap) = pause.heap {
            self.heap_sample(&stamp, heap, &pause.name, pause.gc_id);
            // A young collection that failed and was upgraded promoted nothing it can tell.
            if let Some(young) = pause.young.filter(|_| !pause.upgraded_to_full) {
                self.memory.young(clock_ns(&stamp), young, heap);
            }
        }
        if let Some(bytes) = self.promoted_by(&pause) {
            self.memory.promoted(clock_ns(&stamp), bytes);
        }
        let (start, end) = match format {
            // A unified pause line is written when the pause ends.
            Format::Unified => (stamp.minus(pause.duration_ns), stamp),
            // A JDK 8 event is stamped when it begins.
            Format::Jdk8 => (stamp, stamp.plus(pause.duration_ns)),
        };
        pause.start = start;
        self.clocks[fi].extend(&start, &end);
        for u in [start.uptime_ns, end.uptime_ns].into_iter().flatten() {
            self.global_first_uptime = Some(self.global_first_uptime.map_or(u, |f| f.min(u)));
            self.global_last_uptime = Some(self.global_last_uptime.map_or(u, |l| l.max(u)));
        }
        if let Some(start) = clock_ns(&start) {
            for w in &mut self.windows {
                w.pause(start, start.saturating_add(pause.duration_ns));
            }
        }
        let file = &self.files[fi].file;
        self.busy_cpu
            .pause(clock_ns(&end), pause.duration_ns, || Evidence {
                file: file.clone(),
                line,
                uptime_s: start.uptime_ns.map(|u| u as f64 / 1e9),
                wall: start.wall_ms.map(format_epoch_ms),
                what: pause.described(),
                detail: String::new(),
                excess_ms: 0.0,
            });
        self.flush_pending();
        let shares = pause.gc_id.is_some() && pause.gc_id == self.last_gc_id;
        self.last_gc_id = pause.gc_id;
        if self.first_pause_name.is_none() {
            self.first_pause_name = Some(pause.name.clone());
        }
        self.pending.push(Pending {
            pause,
            file: fi,
            line,
            shares_gc_id: shares,
            ttsp_ns: None,
            stopped_ns: None,
        });
    }

    /// What a young collection of a unified log moved into the old generation, from the
    /// old generation's line of the same collection. Mixed and full collections also free
    /// old space, so their growth says nothing of promotion.
    fn promoted_by(&self, pause: &GcPause) -> Option<u64> {
        let (gc_id, change) = self.old_generation?;
        if pause.gc_id != Some(gc_id)
            || pause.upgraded_to_full
            || !pause.name.starts_with("Pause Young")
            || pause.name.contains("Mixed")
        {
            return None;
        }
        Some(match change {
            OldChange::Bytes(old) => old.after.saturating_sub(old.before),
            OldChange::Regions { before, after } => {
                after.saturating_sub(before) * self.region_size?
            }
        })
    }

    fn heap_sample(&mut self, stamp: &Stamp, heap: HeapChange, name: &str, gc_id: Option<u64>) {
        self.memory.heap(clock_ns(stamp), heap);
        if let Some(sink) = self.sink.as_deref_mut() {
            sink.heap(&HeapSample {
                uptime_ms: stamp.uptime_ns.map(|u| u as f64 / 1e6),
                wall_ms: stamp.wall_ms.map(|w| w as f64),
                before_bytes: heap.before,
                after_bytes: heap.after,
                capacity_bytes: heap.capacity,
                name: name.to_string(),
                gc_id,
            });
        }
    }

    /// `held_up_by`: the threads a safepoint timeout report named for this safepoint.
    fn safepoint(
        &mut self,
        sp: Safepoint,
        fi: usize,
        line: u64,
        statistics: bool,
        held_up_by: Option<String>,
    ) {
        let t = self.opts.thresholds;
        let keep = self.opts.evidence;
        let gc_ns: u64 = if statistics {
            0
        } else {
            self.pending.iter().map(|pp| pp.pause.duration_ns).sum()
        };
        let had_gc = !statistics && !self.pending.is_empty();
        let is_gc = match &sp.operation {
            Some(op) => is_gc_operation(op) || had_gc,
            None => had_gc,
        };
        let file = self.files[fi].file.clone();
        let evidence = |what: String, detail: String, excess_ns: u64| Evidence {
            file: file.clone(),
            line,
            uptime_s: sp.start.uptime_ns.map(|u| u as f64 / 1e9),
            wall: sp.start.wall_ms.map(format_epoch_ms),
            what,
            detail,
            excess_ms: excess_ns as f64 / 1e6,
        };
        let series = if statistics {
            &mut self.safepoint_statistics
        } else {
            &mut self.safepoint_lines
        };
        series.stats.record(sp.total_ns);
        let op_name = sp
            .operation
            .clone()
            .unwrap_or_else(|| if is_gc { "GC" } else { "(not a GC)" }.to_string());
        if let Some(ttsp) = sp.ttsp_ns {
            series.ttsp.record(ttsp);
            if ttsp > t.ttsp_ns {
                series.rules.long_ttsp.hit(ttsp, keep, || {
                    evidence(
                        op_name.clone(),
                        format!(
                            "time to safepoint {:.1} ms of {:.1} ms stopped{}",
                            ttsp as f64 / 1e6,
                            sp.total_ns as f64 / 1e6,
                            held_up_by
                                .as_ref()
                                .map_or(String::new(), |t| format!("; held up by {t}"))
                        ),
                        ttsp,
                    )
                });
            }
        }
        if series.operations.len() < 1000 || series.operations.contains_key(&op_name) {
            series
                .operations
                .entry(op_name.clone())
                .or_insert_with(|| Totals {
                    gc: Some(is_gc),
                    ..Totals::default()
                })
                .add(sp.total_ns);
        }
        if !is_gc {
            series.non_gc.add(sp.total_ns);
            if sp.total_ns >= t.non_gc_ns {
                series.rules.non_gc_safepoints.hit(sp.total_ns, keep, || {
                    evidence(
                        op_name.clone(),
                        format!("stopped {:.1} ms without a GC", sp.total_ns as f64 / 1e6),
                        sp.total_ns,
                    )
                });
            }
        }
        if let Some(sink) = self.sink.as_deref_mut() {
            let event = PauseEvent {
                start_ms: sp.start.uptime_ns.map_or(0.0, |u| u as f64 / 1e6),
                wall_start_ms: sp.start.wall_ms.map(|w| w as f64),
                duration_ms: sp.total_ns as f64 / 1e6,
                kind: PauseKind::Safepoint,
                name: op_name.clone(),
                cause: None,
                cpu: None,
                ttsp_ms: sp.ttsp_ns.map(|t| t as f64 / 1e6),
                source: Some(SourceLine {
                    file: file.clone(),
                    line,
                }),
            };
            sink.safepoint(&event, statistics);
        }
        if statistics {
            return;
        }
        if had_gc {
            // Time to safepoint is spent before the stop's work (long_ttsp reports it).
            let ttsp_ns = sp.ttsp_ns.unwrap_or(0);
            let excess = sp.total_ns.saturating_sub(gc_ns).saturating_sub(ttsp_ns);
            let at_safepoint = sp.total_ns.saturating_sub(ttsp_ns);
            if excess > t.stopped_excess_ns && at_safepoint >= gc_ns + gc_ns / 2 {
                let names: Vec<&str> = self
                    .pending
                    .iter()
                    .map(|pp| pp.pause.name.as_str())
                    .collect();
                let what = names.join(" + ");
                // The stop's own operation when it is not a collection (a heap dump
                // collects first: `HeapDumper`, cause `Heap Dump Initiated GC`).
                let operation = sp
                    .operation
                    .clone()
                    .filter(|op| !is_gc_operation(op))
                    .or_else(|| {
                        self.pending
                            .iter()
                            .find_map(|pp| pp.pause.cause.as_deref().and_then(operation_of_cause))
                            .map(str::to_string)
                    });
                if let Some(op) = &operation {
                    series.rules.stopped_operation(op);
                }
                series.rules.stopped_gt_gc.hit(excess, keep, || {
                    let ttsp = if ttsp_ns > 0 {
                        format!(
                            ", time to safepoint {}",
                            crate::num::dur(ttsp_ns as f64 / 1e6)
                        )
                    } else {
                        String::new()
                    };
                    let op = operation
                        .as_ref()
                        .map_or(String::new(), |op| format!(", in VM operation {op}"));
                    evidence(
                        what,
                        format!(
                            "stopped {}, GC {}{ttsp}: {} outside the collector{op}",
                            crate::num::dur(sp.total_ns as f64 / 1e6),
                            crate::num::dur(gc_ns as f64 / 1e6),
                            crate::num::dur(excess as f64 / 1e6)
                        ),
                        excess,
                    )
                });
            }
            for pp in &mut self.pending {
                pp.ttsp_ns = sp.ttsp_ns;
                pp.stopped_ns = Some(sp.total_ns);
            }
            self.flush_pending();
        }
    }

    fn flush_pending(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for pp in pending {
            self.commit(pp);
        }
    }

    fn commit(&mut self, pp: Pending) {
        let t = self.opts.thresholds;
        let keep = self.opts.evidence;
        let p = &pp.pause;
        self.files[pp.file].pauses += 1;
        self.gc.record(p.duration_ns);
        let distinct = self.by_name.len();
        match self.by_name.get_mut(&p.name) {
            Some(tot) => tot.add(p.duration_ns),
            None if distinct < 1000 => {
                let mut tot = Totals::default();
                tot.add(p.duration_ns);
                self.by_name.insert(p.name.clone(), tot);
            }
            None => {}
        }
        let file = &self.files[pp.file].file;
        let event = || to_event(&pp, file);
        let evidence = |detail: String, excess_ns: u64| Evidence {
            file: file.clone(),
            line: pp.line,
            uptime_s: p.start.uptime_ns.map(|u| u as f64 / 1e9),
            wall: p.start.wall_ms.map(format_epoch_ms),
            what: p.described(),
            detail,
            excess_ms: excess_ns as f64 / 1e6,
        };
        if let Some(cpu) = p.cpu {
            check_cpu(&mut self.rules, cpu, &t, keep, &evidence);
        }
        let ms = |ns: u64| ns as f64 / 1e6;
        // A CMS collection can fail to promote and then have a concurrent mode failure:
        // each failure counts for its own rule.
        let failure_rules = [
            (
                Failure::Evacuation,
                &mut self.rules.evacuation_failure,
                "evacuation failed",
            ),
            (
                Failure::ConcurrentMode,
                &mut self.rules.concurrent_mode_failure,
                "concurrent mode failure",
            ),
            (
                Failure::Promotion,
                &mut self.rules.promotion_failure,
                "promotion failed",
            ),
        ];
        for (failure, tracker, what) in failure_rules {
            if p.failures.has(failure) {
                tracker.hit(p.duration_ns, keep, || {
                    evidence(
                        format!("{what}: {:.1} ms pause", ms(p.duration_ns)),
                        p.duration_ns,
                    )
                });
            }
        }
        if is_full_collection(&p.name) || p.upgraded_to_full {
            let cause = p
                .cause
                .clone()
                .or_else(|| upgrade_reason(p).map(str::to_string))
                .unwrap_or_else(|| "cause not in log".to_string());
            if self.full_gc_causes.len() < 100 || self.full_gc_causes.contains_key(&cause) {
                self.full_gc_causes
                    .entry(cause)
                    .or_default()
                    .add(p.duration_ns);
            }
            let upgraded = match upgrade_reason(p) {
                Some(why) => format!(" ({} upgraded to a full one: {why})", p.name),
                None => String::new(),
            };
            self.rules.full_gc.hit(p.duration_ns, keep, || {
                evidence(
                    format!("full collection, {:.1} ms{upgraded}", ms(p.duration_ns)),
                    p.duration_ns,
                )
            });
        }
        if p.cause.as_deref().is_some_and(|c| c.contains("Humongous")) {
            self.rules
                .humongous_allocation
                .hit(p.duration_ns, keep, || {
                    evidence(format!("{:.1} ms pause", ms(p.duration_ns)), p.duration_ns)
                });
        }
        if p.name.starts_with("Pause Degenerated") {
            self.rules.degenerated_gc.hit(p.duration_ns, keep, || {
                evidence(
                    format!("stop-the-world {:.1} ms", ms(p.duration_ns)),
                    p.duration_ns,
                )
            });
        }
        // Worst pauses: a small sorted vector, cheaper than a heap at N = 10.
        let n = self.opts.top;
        if n > 0 {
            let worst_min = self.worst.last().map(|w| w.event.duration_ms);
            let ms = p.duration_ns as f64 / 1e6;
            if self.worst.len() < n || worst_min.is_some_and(|m| ms > m) {
                let w = WorstPause {
                    event: event(),
                    stopped_ms: pp.stopped_ns.map(|s| s as f64 / 1e6),
                };
                let at = self.worst.partition_point(|x| x.event.duration_ms >= ms);
                self.worst.insert(at, w);
                self.worst.truncate(n);
            }
        }
        if let Some(sink) = self.sink.as_deref_mut() {
            sink.gc_pause(&to_event(&pp, &self.files[pp.file].file), &pp.pause);
        }
    }

    /// Finishes the analysis.
    pub fn finish(mut self) -> Report {
        self.release_nested();
        self.flush_pending();
        let covered_ns = self
            .clocks
            .iter()
            .fold(0u64, |sum, c| sum.saturating_add(c.covered_ns()));
        // Pauses that overlap in the log (two JVMs in one file) could add up to more.
        let share =
            |ns: u128| (covered_ns > 0).then(|| (ns as f64 * 100.0 / covered_ns as f64).min(100.0));
        let (source, series) = if self.safepoint_lines.stats.count() > 0 {
            (Some("safepoint_lines"), &self.safepoint_lines)
        } else if self.safepoint_statistics.stats.count() > 0 {
            (Some("safepoint_statistics"), &self.safepoint_statistics)
        } else {
            (None, &self.safepoint_lines)
        };
        let (timeouts, unmatched_timeouts) = self.timeouts.finish(self.opts.evidence);
        let mut rules = self.rules.clone();
        rules.stopped_gt_gc = series.rules.stopped_gt_gc.clone();
        rules.stopped_operations = series.rules.stopped_operations.clone();
        // Without safepoint lines (a stdout capture), each timeout report is the evidence
        // of a long time to safepoint.
        rules.long_ttsp = if series.stats.count() == 0 {
            unmatched_timeouts
        } else {
            series.rules.long_ttsp.clone()
        };
        rules.non_gc_safepoints = series.rules.non_gc_safepoints.clone();
        let mut operations: Vec<NameTotals> = series
            .operations
            .iter()
            .map(|(name, t)| t.named(name))
            .collect();
        operations.sort_by(|a, b| b.total_ms.total_cmp(&a.total_ms));
        let top_non_gc = operations
            .iter()
            .filter(|o| o.gc == Some(false))
            .take(3)
            .map(|o| (o.name.clone(), o.count, o.total_ms))
            .collect();
        let mut full_gc_causes: Vec<NameTotals> = self
            .full_gc_causes
            .iter()
            .map(|(name, t)| t.named(name))
            .collect();
        full_gc_causes.sort_by_key(|n| std::cmp::Reverse(n.count));
        let worst_windows: Vec<WindowShare> = self
            .windows
            .iter()
            .filter_map(SlidingShare::worst)
            .collect();
        let allocation_stalls = self.allocation_stalls.section();
        let ctx = Context {
            thresholds: self.opts.thresholds,
            pause_count: self.gc.count(),
            safepoint_count: series.stats.count(),
            covered_ns,
            non_gc_total_ns: series.non_gc.total_ns,
            non_gc_count: series.non_gc.count,
            top_non_gc_operations: top_non_gc,
            pause_total_ns: self.gc.total_ns(),
            full_gc_causes: full_gc_causes
                .iter()
                .map(|c| (c.name.clone(), c.count, c.total_ms))
                .collect(),
            worst_windows: worst_windows.clone(),
            allocation_stalls: {
                let s = &allocation_stalls.summary;
                (s.count, s.total_ms, s.max_ms)
            },
            safepoint_timeouts: timeouts.threads.clone(),
            long_pauses_cpu_sampled: self.busy_cpu.long_pauses_sampled,
            flags: self.flags.clone(),
        };
        let findings = rules.findings(&ctx);
        let mut by_name: Vec<NameTotals> =
            self.by_name.iter().map(|(name, t)| t.named(name)).collect();
        by_name.sort_by_key(|n| std::cmp::Reverse(n.count));
        let safepoints = SafepointSection {
            source,
            summary: series.stats.summary(),
            ttsp_max_ms: (series.ttsp.count() > 0).then(|| series.ttsp.max_ns() as f64 / 1e6),
            ttsp_p99_ms: (series.ttsp.count() > 0)
                .then(|| series.ttsp.percentile_ns(99.0) as f64 / 1e6),
            stopped_share_pct: if series.stats.count() > 0 {
                share(series.stats.total_ns())
            } else {
                None
            },
            non_gc_count: series.non_gc.count,
            non_gc_total_ms: series.non_gc.total_ns as f64 / 1e6,
            operations,
            timeouts,
        };
        let first_wall = self.clocks.iter().filter_map(|c| c.first_wall).min();
        let last_wall = self.clocks.iter().filter_map(|c| c.last_wall).max();
        // Not stated in JDK 8 logs without the flags line, nor in a rotated unified log's
        // later files: the pause names tell. CMS's own pauses first (a CMS young
        // collection may be `DefNew`), then the first pause, then any pause that tells.
        let collector = self.collector.clone().or_else(|| {
            let names = || self.by_name.keys().map(String::as_str);
            names()
                .find(|n| n.starts_with("CMS"))
                .and_then(Collector::from_pause_name)
                .or_else(|| {
                    self.first_pause_name
                        .as_deref()
                        .and_then(Collector::from_pause_name)
                })
                .or_else(|| names().find_map(Collector::from_pause_name))
                // Only CMS reports a concurrent mode failure or `(promotion failed)`
                // (Parallel's failed promotion is `GC--`, counted apart).
                .or_else(|| {
                    (self.rules.concurrent_mode_failure.count > 0).then_some(Collector::Cms)
                })
                .map(|c| c.name().to_string())
        });
        let version = self.version.clone().or_else(|| {
            (self.files.iter().any(|f| f.format == Some(Format::Jdk8))
                && !self.files.iter().any(|f| f.format == Some(Format::Unified)))
            .then(|| "8 or earlier (PrintGCDetails format)".to_string())
        });
        let mut report = Report {
            jvm: Jvm { version, collector },
            span: Span {
                start_uptime_s: self.global_first_uptime.map(|u| u as f64 / 1e9),
                end_uptime_s: self.global_last_uptime.map(|u| u as f64 / 1e9),
                start_wall: first_wall.map(format_epoch_ms),
                end_wall: last_wall.map(format_epoch_ms),
                covered_s: covered_ns as f64 / 1e9,
            },
            pauses: PauseSection {
                summary: self.gc.summary(),
                share_pct: if self.gc.count() > 0 {
                    share(self.gc.total_ns())
                } else {
                    None
                },
                by_name,
                worst_windows,
                full_gc_causes,
            },
            safepoints,
            allocation_stalls,
            relocation_stalls: self.relocation_stalls.section(),
            memory: self.memory.section(),
            worst: self.worst,
            findings,
            unparsed_lines: self.unparsed,
            first_unparsed: self.first_unparsed,
            warnings: self.warnings,
            inputs: self.files,
        };
        if !report.has_events() {
            // A header or decorated lines alone must not read as a healthy JVM.
            for (i, file) in report.inputs.iter().enumerate() {
                let recognised: u64 = self.format_counts[i].iter().sum();
                if recognised == 0 {
                    continue;
                }
                let holds = if recognised <= self.header_lines[i] {
                    "only the JVM's header (version, collector, command line flags): GC logging began, nothing was collected yet, or the log was cut".to_string()
                } else {
                    format!("{recognised} log line(s), none of them a pause, safepoint, stall or collection cycle: e.g. concurrent phases, statistics printed at exit, or a log level that leaves pauses out (use -Xlog:gc*)")
                };
                report.warnings.push(Warning {
                    file: file.file.clone(),
                    line: None,
                    message: format!("no GC events (the log holds {holds})"),
                });
            }
        }
        report
    }
}

impl Report {
    /// The log held something that happened in the JVM: a pause, a safepoint, a ZGC stall,
    /// a collection cycle or a heap transition, or a safepoint timeout report.
    pub fn has_events(&self) -> bool {
        self.pauses.summary.count > 0
            || self.safepoints.summary.count > 0
            || self.safepoints.timeouts.count > 0
            || self.allocation_stalls.summary.count > 0
            || self.relocation_stalls.summary.count > 0
            || self.memory.heap_samples > 0
            || !self.memory.cycles.is_empty()
    }
}

fn check_cpu(
    rules: &mut Rules,
    cpu: Cpu,
    t: &Thresholds,
    keep: usize,
    evidence: &dyn Fn(String, u64) -> Evidence,
) {
    let on_cpu = cpu.user_ns + cpu.sys_ns;
    if cpu.real_ns > on_cpu + t.off_cpu_ns {
        let excess = cpu.real_ns - on_cpu;
        let sums = &mut rules.off_cpu;
        sums.user_ns += u128::from(cpu.user_ns);
        sums.sys_ns += u128::from(cpu.sys_ns);
        sums.real_ns += u128::from(cpu.real_ns);
        rules.real_gt_cpu.hit(excess, keep, || {
            evidence(
                format!(
                    "real {:.0} ms, user {:.0} ms + sys {:.0} ms: {:.0} ms off-CPU",
                    cpu.real_ns as f64 / 1e6,
                    cpu.user_ns as f64 / 1e6,
                    cpu.sys_ns as f64 / 1e6,
                    excess as f64 / 1e6
                ),
                excess,
            )
        });
    }
    if cpu.sys_ns > cpu.user_ns && cpu.sys_ns >= t.sys_ns {
        let excess = cpu.sys_ns - cpu.user_ns;
        rules.sys_gt_user.hit(cpu.sys_ns, keep, || {
            evidence(
                format!(
                    "sys {:.0} ms > user {:.0} ms (real {:.0} ms)",
                    cpu.sys_ns as f64 / 1e6,
                    cpu.user_ns as f64 / 1e6,
                    cpu.real_ns as f64 / 1e6
                ),
                excess,
            )
        });
    }
}

fn to_event(pp: &Pending, file: &str) -> PauseEvent {
    let p = &pp.pause;
    PauseEvent {
        start_ms: p.start.uptime_ns.map_or(0.0, |u| u as f64 / 1e6),
        wall_start_ms: p.start.wall_ms.map(|w| w as f64),
        duration_ms: p.duration_ns as f64 / 1e6,
        kind: PauseKind::Gc,
        name: p.name.clone(),
        cause: p.cause.clone(),
        cpu: p.cpu.map(|c| CpuTimes {
            user_ms: c.user_ns as f64 / 1e6,
            sys_ms: c.sys_ns as f64 / 1e6,
            real_ms: c.real_ns as f64 / 1e6,
        }),
        ttsp_ms: pp.ttsp_ns.map(|t| t as f64 / 1e6),
        source: Some(SourceLine {
            file: file.to_string(),
            line: pp.line,
        }),
    }
}

/// Unified `Pause Full`, JDK 8 `Full GC` (Shenandoah's and G1's fallbacks included).
fn is_full_collection(name: &str) -> bool {
    crate::PauseType::of(name) == crate::PauseType::Full
}

/// Why a collection not named full was one: the failure that made the JVM collect the old
/// generation, or the full collection nested in it.
fn upgrade_reason(p: &GcPause) -> Option<&'static str> {
    if !p.upgraded_to_full {
        None
    } else if p.failures.concurrent_mode {
        Some("concurrent mode failure")
    } else if p.failures.promotion {
        Some("promotion failed")
    } else {
        Some("a full collection ran inside it")
    }
}

/// The VM operation a collection's cause says it ran in, when that is not a collection.
fn operation_of_cause(cause: &str) -> Option<&'static str> {
    match cause {
        "Heap Dump Initiated GC" => Some("HeapDumper"),
        "Heap Inspection Initiated GC" => Some("HeapInspection"),
        _ => None,
    }
}

/// Longest beginning of an unparsed line kept for the report.
const UNPARSED_TEXT: usize = 200;

/// One log line as the parser understood it, decided without the analysis state: lines can
/// be classified on one thread while another feeds them to [`Analyzer::apply`], in order.
pub struct ClassifiedLine {
    outcome: Outcome,
    /// The line had no newline at the end of the input: whether it was counted all the same.
    unterminated: Option<bool>,
}

enum Outcome {
    /// Nothing but NUL bytes.
    Nothing,
    /// A line of the log that carries no record (most lines): only its clock counts.
    Other { format: Format, stamp: Stamp },
    /// Boxed: few lines are records, and lines move between threads in batches.
    Record(Box<Parsed>),
    /// Not understood; the line's beginning, when asked to keep it.
    Unparsed(Box<[u8]>),
}

impl ClassifiedLine {
    /// Parses one line. `overlong`: it was cut at the line reader's limit (never trusted).
    /// `keep_text`: keep an unparsed line's beginning for the report (only the first one
    /// is shown, so callers stop asking once they have one).
    pub fn new(bytes: &[u8], unterminated: bool, overlong: bool, keep_text: bool) -> Self {
        let unparsed = |bytes: &[u8]| {
            Outcome::Unparsed(if keep_text {
                bytes[..bytes.len().min(UNPARSED_TEXT)].into()
            } else {
                Box::default()
            })
        };
        if overlong {
            return ClassifiedLine {
                outcome: unparsed(bytes),
                unterminated: None,
            };
        }
        // A file truncated while the JVM was writing it (logrotate copytruncate) starts
        // with NUL bytes; the text after them is still a log line.
        let bytes = if bytes.first() == Some(&0) {
            let skip = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
            if skip == bytes.len() {
                return ClassifiedLine {
                    outcome: Outcome::Nothing,
                    unterminated: None,
                };
            }
            &bytes[skip..]
        } else {
            bytes
        };
        match parse_line(bytes) {
            // A line without its newline may be cut anywhere: trust it only when it parsed
            // into a record with values (a pause line cut before its duration reads as the
            // pause's start line).
            Ok(p)
                if unterminated
                    && matches!(p.record, Record::Other | Record::PauseStart { .. }) =>
            {
                ClassifiedLine {
                    outcome: unparsed(bytes),
                    unterminated: Some(false),
                }
            }
            Ok(p) => ClassifiedLine {
                outcome: match p.record {
                    Record::Other => Outcome::Other {
                        format: p.format,
                        stamp: p.stamp,
                    },
                    _ => Outcome::Record(Box::new(p)),
                },
                unterminated: unterminated.then_some(true),
            },
            Err(_) => ClassifiedLine {
                outcome: unparsed(bytes),
                unterminated: unterminated.then_some(false),
            },
        }
    }

    /// The line was recognised as a line of a GC or safepoint log (it counts for
    /// [`Analyzer::recognised_lines`]).
    pub fn recognised(&self) -> bool {
        match &self.outcome {
            Outcome::Other { format, stamp } => !is_blank(*format, stamp, false),
            Outcome::Record(_) => true,
            Outcome::Nothing | Outcome::Unparsed(_) => false,
        }
    }

    /// An unparsed line whose beginning was kept.
    pub fn has_unparsed_text(&self) -> bool {
        matches!(&self.outcome, Outcome::Unparsed(text) if !text.is_empty())
    }
}

/// An empty JDK 8 line (no record, no stamp): parsed, but says nothing about the log's
/// format.
fn is_blank(format: Format, stamp: &Stamp, record: bool) -> bool {
    !record && *stamp == Stamp::default() && format == Format::Jdk8
}
