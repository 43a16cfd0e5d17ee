//! The pause model shared by every pauselab source and renderer: the records every source
//! feeds to a [`RecordSink`] ([`record`]), pause events and their types, histograms over
//! time, HdrHistogram interval logs (compatible with Java's HdrHistogram), and opening
//! inputs, compressed ones too ([`archive`]).

pub mod archive;
pub mod civil;
mod collector;
pub mod event;
pub mod input;
pub mod interval_log;
pub mod known_text;
pub mod output;
mod pause_type;
pub mod record;
pub mod recycle;
pub mod severity;
pub mod stats;
pub mod units;

pub use collector::Collector;
pub use event::{CpuTimes, PauseEvent, PauseKind, SourceLine};
pub use pause_type::{is_gc_operation, PauseType};
pub use record::{Format, LogLine, Parsed, Record, RecordSink, Stamp};
pub use severity::Severity;
pub use stats::{DurationStats, Summary};
