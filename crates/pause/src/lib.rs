//! The pause model shared by every pauselab source and renderer: pause events, histograms
//! over time and HdrHistogram interval logs (compatible with Java's HdrHistogram).

mod collector;
pub mod event;
pub mod input;
pub mod interval_log;
pub mod stats;

pub use collector::Collector;
pub use event::{CpuTimes, PauseEvent, PauseKind, SourceLine};
pub use stats::{DurationStats, Summary};
