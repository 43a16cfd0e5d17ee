//! The names of the files in a result bundle (docs/lab.md, "Result bundle"): the run
//! writes them, the bundle reads and summarizes them.

/// Per variant: the hiccup agent's interval log.
pub const HICCUP_LOG: &str = "hiccups.hlog";
/// Per variant: the workload's standard output and error.
pub const WORKLOAD_OUT: &str = "workload.out";
/// Per variant: the JVM's GC log.
pub const GC_LOG: &str = "gc.log";
/// Per variant: safepoint pauses from the GC log, as an interval log.
pub const SAFEPOINT_LOG: &str = "safepoints.hlog";
/// Per variant: measurements and pause statistics.
pub const SUMMARY: &str = "summary.json";
/// The run: experiment, host, JDKs, variants, notes.
pub const MANIFEST: &str = "manifest.json";
/// The run's verdict.
pub const VERDICT: &str = "verdict.json";
/// The host time series, one row a second.
pub const HOST_SERIES: &str = "host.csv";
/// Version of the bundle layout; bumped on incompatible changes.
pub const FORMAT_VERSION: u32 = 1;
