//! What `pauselab analyze` reports: the sections of [`Report`], serialised as `--json`.

use pauselab_pause::{PauseEvent, Summary};
use serde::Serialize;

use crate::health::{MemorySection, StallSection, WindowShare};
use crate::parse::Format;
use crate::rules::finding::Finding;
use crate::timeouts::TimeoutSection;
use crate::totals::NameTotals;
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
