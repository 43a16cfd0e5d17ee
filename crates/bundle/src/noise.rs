//! What makes a run's verdict `noisy` (docs/lab.md, "Noise: a busy host"): the lab judges
//! a run by these thresholds and the report draws them beside the host's series
//! (`host.csv`'s `psi_*_some_avg10` and `other_cpu_pct` columns), so both read them here.

/// `some avg10` of /proc/pressure/cpu before the run, percent.
pub const CPU_PRESSURE_PCT: f64 = 20.0;
/// `some avg10` of /proc/pressure/io before the run, percent.
pub const IO_PRESSURE_PCT: f64 = 20.0;
/// `some avg10` of /proc/pressure/memory before the run, percent.
pub const MEMORY_PRESSURE_PCT: f64 = 10.0;
/// CPU time of processes outside the run, percent of all CPUs over one second.
pub const OTHER_CPU_PCT: f64 = 25.0;
/// Seconds of the run with other processes above [`OTHER_CPU_PCT`] that make it noisy.
pub const BUSY_SECONDS: usize = 3;
