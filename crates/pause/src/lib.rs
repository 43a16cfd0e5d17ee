//! The pause model shared by every pauselab source and renderer: pause events, histograms
//! over time and HdrHistogram interval logs (compatible with Java's HdrHistogram).

pub mod archive;
pub mod civil;
mod collector;
pub mod event;
pub mod input;
pub mod interval_log;
pub mod output;
pub mod record;
pub mod severity;
pub mod stats;
pub mod units;

pub use collector::Collector;
pub use event::{CpuTimes, PauseEvent, PauseKind, SourceLine};
pub use record::{Record, RecordSink, Stamp};
pub use severity::Severity;
pub use stats::{DurationStats, Summary};
