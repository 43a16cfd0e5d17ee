//! Layer 5, measurements: the workload's output, GC logs, safepoints, interval logs
//! (read after the run and followed during it), host facts and series, JMH result files.

mod error;
pub mod follow;
pub mod hlog;
pub mod hostfacts;
pub mod hostseries;
pub mod instance;
pub mod jmh;
mod measurement;
pub mod memcg;
pub mod noise;
pub mod safepoints;
mod summary;
pub mod throttling;

pub use measurement::Measurement;
pub use summary::summarise;
