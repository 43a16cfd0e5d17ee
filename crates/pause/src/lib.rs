//! The pause model shared by every pauselab source and renderer: pause events, histograms
//! over time and HdrHistogram interval logs (compatible with Java's HdrHistogram).

pub mod event;
pub mod interval_log;

pub use event::{CpuTimes, PauseEvent, PauseKind, SourceLine};
