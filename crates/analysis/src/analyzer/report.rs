//! What `pauselab analyze` reports: the sections of [`Report`], serialised as `--json`.

use pauselab_pause::record::Format;
use pauselab_pause::{PauseEvent, Summary};
use serde::Serialize;

use crate::health::{MemorySection, StallSection, WindowShare};
use crate::rules::finding::Finding;
use crate::timeouts::TimeoutSection;
use crate::totals::NameTotals;
/// Per input file.
#[derive(Debug, Clone, Serialize)]
pub struct FileSummary {
    /// The input's name as given.
    pub file: String,
    /// `unified`, `jdk8`, or null when no line was recognised.
    pub format: Option<Format>,
    /// Lines read (a text log; 0 for a recording).
    pub lines: u64,
    /// Bytes read.
    pub bytes: u64,
    /// GC pauses counted.
    pub pauses: u64,
    /// Safepoints counted.
    pub safepoints: u64,
    /// Lines not understood.
    pub unparsed_lines: u64,
    /// Messages HotSpot's asynchronous logging (`-Xlog:async`) dropped: what they said is
    /// missing from the counts (given when there are any).
    #[serde(skip_serializing_if = "is_zero")]
    pub dropped_messages: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Something about an input the user should know.
#[derive(Debug, Clone, Serialize)]
pub struct Warning {
    /// The input.
    pub file: String,
    /// The line it is about, when it is about one.
    pub line: Option<u64>,
    /// What happened.
    pub message: String,
}

/// The first line not understood, shown as an example.
#[derive(Debug, Clone, Serialize)]
pub struct UnparsedLine {
    /// The input.
    pub file: String,
    /// Its line number.
    pub line: u64,
    /// Its beginning, control characters shown as `?`.
    pub text: String,
}

/// What the inputs say of the JVM.
#[derive(Debug, Clone, Serialize)]
pub struct Jvm {
    /// The JDK version stated, else what the log's format implies.
    pub version: Option<String>,
    /// The collector named, else the one its pauses' names imply.
    pub collector: Option<String>,
}

/// The time the inputs cover.
#[derive(Debug, Clone, Serialize)]
pub struct Span {
    /// First stamp, seconds since JVM start.
    pub start_uptime_s: Option<f64>,
    /// Last stamp, seconds since JVM start.
    pub end_uptime_s: Option<f64>,
    /// First wall-clock stamp, ISO-8601 UTC.
    pub start_wall: Option<String>,
    /// Last wall-clock stamp, ISO-8601 UTC.
    pub end_wall: Option<String>,
    /// Time the logs cover (sum over JVM runs when a log holds several), seconds.
    pub covered_s: f64,
}

/// GC pauses: their latency summary, share of time and totals by name.
#[derive(Debug, Clone, Serialize)]
pub struct PauseSection {
    /// The pauses' durations.
    #[serde(flatten)]
    pub summary: Summary,
    /// Share of the covered time spent in GC pauses, percent.
    pub share_pct: Option<f64>,
    /// Count, total and maximum per pause name, largest total first.
    pub by_name: Vec<NameTotals>,
    /// The worst 1-minute and 10-minute windows of pause time (localized throughput), when
    /// the log covers that long.
    pub worst_windows: Vec<WindowShare>,
    /// Full collections by cause.
    pub full_gc_causes: Vec<NameTotals>,
}

/// Safepoints (stopped time): their latency summary, time to safepoint, VM operations.
#[derive(Debug, Clone, Serialize)]
pub struct SafepointSection {
    /// `safepoint_lines` (stopped-time or `Safepoint "..."` lines), `safepoint_statistics`
    /// (JDK 8 -XX:+PrintSafepointStatistics), or null when the log has neither.
    pub source: Option<&'static str>,
    /// The safepoints' stopped times.
    #[serde(flatten)]
    pub summary: Summary,
    /// Time to safepoint; null when the input recorded none (no safepoint lines, or a
    /// recording without safepoint-begin events).
    pub ttsp_max_ms: Option<f64>,
    /// 99th percentile time to safepoint.
    pub ttsp_p99_ms: Option<f64>,
    /// Share of the covered time the application was stopped, percent.
    pub stopped_share_pct: Option<f64>,
    /// Safepoints that were not garbage collections.
    pub non_gc_count: u64,
    /// Their stopped time in total.
    pub non_gc_total_ms: f64,
    /// Count, total and maximum per VM operation.
    pub operations: Vec<NameTotals>,
    /// HotSpot's safepoint timeout reports (`-XX:+SafepointTimeout`) and the threads named.
    pub timeouts: TimeoutSection,
}

/// One of the longest pauses.
#[derive(Debug, Clone, Serialize)]
pub struct WorstPause {
    /// The pause.
    #[serde(flatten)]
    pub event: PauseEvent,
    /// The whole safepoint around this pause, when the log has safepoint lines.
    pub stopped_ms: Option<f64>,
}

/// Everything `pauselab analyze` reports; serialised as its `--json` output.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Per input.
    pub inputs: Vec<FileSummary>,
    /// The JVM's version and collector.
    pub jvm: Jvm,
    /// The time covered.
    pub span: Span,
    /// GC pauses.
    pub pauses: PauseSection,
    /// Safepoints.
    pub safepoints: SafepointSection,
    /// ZGC `Allocation Stall` lines: threads that waited for memory; not pauses.
    pub allocation_stalls: StallSection,
    /// ZGC `Relocation Stall` lines.
    pub relocation_stalls: StallSection,
    /// Heap, allocation and promotion rates, concurrent cycles.
    pub memory: MemorySection,
    /// The longest pauses, longest first.
    pub worst: Vec<WorstPause>,
    /// What the rules found, most severe first.
    pub findings: Vec<Finding>,
    /// Lines not understood, over every input.
    pub unparsed_lines: u64,
    /// The first of them.
    pub first_unparsed: Option<UnparsedLine>,
    /// Warnings about the inputs, in the order they arose.
    pub warnings: Vec<Warning>,
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
