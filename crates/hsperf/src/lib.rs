//! HotSpot perf data (hsperfdata): read any HotSpot JVM's counters natively.
//!
//! - [`discover_jvms`] finds every JVM on the host by its libjvm.so mapping, also those
//!   running with `-XX:+PerfDisableSharedMem` (no file) and those in containers.
//! - [`Reader`] reads one JVM's counters from its file or straight from its memory
//!   ([`Source`]), keeping the route open so repeated snapshots cost microseconds.
//! - [`Snapshot`] is a consistent copy with typed [`Counter`]s: `get`, `value_i64`,
//!   `value_str`, `seconds`.
//! - [`jstat`] evaluates the JDK's jstat columns; [`attach`] speaks the dynamic attach
//!   protocol (`jcmd`).
//!
//! ```no_run
//! use pauselab_hsperf::{Reader, Source};
//! let mut reader = Reader::open(1234, Source::Auto)?;
//! let snapshot = reader.snapshot()?;
//! let young_gc_seconds = snapshot.seconds("sun.gc.collector.0.time");
//! # Ok::<(), pauselab_hsperf::Error>(())
//! ```
//!
//! Format and routes are described in docs/hsperf.md.

pub mod attach;
mod discover;
mod elf;
mod error;
mod format;
#[doc(hidden)]
pub mod fuzzing;
mod gc;
pub mod jstat;
mod memory;
mod pages;
mod process;
mod rate;
mod read_at;
mod reader;
mod select;
#[cfg(test)]
mod test_region;

pub use discover::{
    discover_jvms, inspect, jvm_options, main_class, JvmDetails, JvmProcess, PerfData,
};
pub use error::{Error, Result};
pub use format::{
    parse_prologue, Counter, Prologue, Slot, Snapshot, Units, Value, Variability, MAGIC,
};
pub use gc::{CollectorCounters, HeapCounters};
pub use memory::{locate_region, AddressSource, RemoteRegion};
pub use pages::{CounterWrites, PageMap, PageMapper, PageWrites, PAGE_SIZE};
pub use process::{read_cmdline, read_environ, read_status, ProcStatus, ProcessHandle};
pub use rate::{CounterRate, IntervalRates, RateTracker};
pub use reader::{Reader, Route, SnapshotCost, Source};
pub use select::{glob_match, CounterFilter};
