//! The pause event: one stop-the-world interval, whatever source it was read from.

use serde::{Deserialize, Serialize};

/// What stopped the application.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PauseKind {
    /// A stop-the-world GC pause (young, mixed, full, remark, cleanup, ZGC/Shenandoah pauses).
    Gc,
    /// A whole safepoint or "application threads were stopped" interval (includes GC pauses
    /// when the log has both: the two are kept as separate series, never added up).
    Safepoint,
    /// A wake-up delay measured by a hiccup meter (the agent, jHiccup).
    Hiccup,
    /// A store into a mapped page or another probe measurement.
    Probe,
}

/// CPU times the JVM reports for a pause (`[Times: user=.. sys=.. real=..]`, `gc+cpu`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CpuTimes {
    pub user_ms: f64,
    pub sys_ms: f64,
    pub real_ms: f64,
}

/// One stop-the-world pause.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PauseEvent {
    /// Start, milliseconds since JVM start (uptime), when the source has it: a log with
    /// only wall-clock stamps has none (`null` in JSON, never a made-up 0).
    pub start_ms: Option<f64>,
    /// Absolute start, milliseconds since the Unix epoch, when the source has a wall clock.
    pub wall_start_ms: Option<f64>,
    pub duration_ms: f64,
    pub kind: PauseKind,
    /// The pause's name as the source gives it: "Pause Young (Normal)", "DefNew",
    /// "G1CollectForAllocation", ...
    pub name: String,
    /// The cause when the source gives one: "G1 Evacuation Pause", "Allocation Failure", ...
    pub cause: Option<String>,
    pub cpu: Option<CpuTimes>,
    /// Time to safepoint ("Reaching safepoint", "Stopping threads took").
    pub ttsp_ms: Option<f64>,
    /// Where it came from: file name and 1-based line number.
    pub source: Option<SourceLine>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceLine {
    pub file: String,
    pub line: u64,
}
