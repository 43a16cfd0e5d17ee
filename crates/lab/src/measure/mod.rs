//! Layer 5, measurements: the workload's output, GC logs, safepoints, interval logs
//! (read after the run and followed during it), host facts and series, JMH result files.

pub mod follow;
pub mod hlog;
pub mod hostfacts;
pub mod hostseries;
pub mod jmh;
mod measurement;
pub mod memcg;
pub mod noise;
pub mod safepoints;
pub mod throttling;

pub use measurement::{gc_log, workload_summary, Measurement};
