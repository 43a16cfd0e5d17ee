//! The diagnosis of a JVM's pauses, from the records of any source: a GC log's lines
//! (pauselab-gclog) and a JFR recording's events (pauselab-jfr) are fed to the same
//! [`Analyzer`], a [`RecordSink`](pauselab_pause::RecordSink). Streaming throughout: memory
//! is bounded by the number of distinct pause names and VM operations, never by the length
//! of the input.
//!
//! - `analyzer`: pairs pauses with CPU times and safepoints, keeps histograms, clocks and
//!   the JVM's facts, and ends in a [`Report`];
//! - `sink`: the analyzer as a `RecordSink`, what every source feeds;
//! - `rules`: the diagnosis rules, one file each, listed in one registry: what each
//!   watches for, its thresholds and its finding's evidence, causes and fixes
//!   (docs/analyze.md, "Adding a rule");
//! - `evidence`: what a rule keeps while the input streams by;
//! - `health`: worst windows of pause time, heap and allocation rate, ZGC stalls;
//! - `timeouts`: safepoint timeout reports, the threads that held a safepoint up;
//! - `condition`: `--fail-on` conditions over a report;
//! - `render`: the report as terminal text; `hlog`: pauses as an HdrHistogram interval log;
//!   `events`: one row per pause and safepoint (CSV, JSON lines); `tee`: both at once;
//!   `pause_files`: both as files beside a report (`analyze --hlog`, `--events`).

#![deny(missing_docs)]

mod analyzer;
mod condition;
mod events;
mod evidence;
mod health;
mod hlog;
mod pause_files;
mod render;
mod rules;
mod sink;
mod tee;
mod terminal;
mod timeouts;
mod totals;
mod waiting;

pub use analyzer::{
    Analyzer, FileSummary, HeapSample, Jvm, Options, PauseSection, PauseSink, Report,
    SafepointSection, Span, UnparsedLine, Warning, WorstPause,
};
pub use condition::{parse_conditions, Condition, ConditionError, Op};
pub use events::{EventRows, EventsFile, EventsFormat, UnknownEventsFormat};
pub use evidence::Evidence;
pub use health::{MemorySection, StallSection, WindowShare};
pub use hlog::{HlogMode, HlogSink};
pub use pause_files::{HlogFile, PauseFileError, PauseFiles};
pub use render::{findings_text, render_text, worst_text};
pub use rules::causes::Cause;
pub use rules::finding::{Finding, Severity};
pub use rules::{Thresholds, RULES};
pub use tee::Tee;
pub use timeouts::{Culprit, TimeoutSection};
pub use totals::NameTotals;
