//! What the judges work on and give back: the summary of each variant on each JDK
//! (`summary.json`) and the verdict of each JDK.

use serde::Serialize;

use crate::experiment::Role;
use crate::judge::verdict::{VariantVerdict, Vulnerable};
use crate::measure::hlog::Stats;
use crate::measure::Measurement;

/// The summary of one variant on one JDK (`summary.json`).
#[derive(Debug, Clone, Serialize)]
pub struct VariantSummary {
    /// `<variant>-jdk<id>`, also the directory name under `variants/`.
    pub id: String,
    pub jdk: String,
    pub variant: String,
    pub role: Role,
    pub skipped: Option<String>,
    pub early_exit: Option<String>,
    pub hiccups: Option<Stats>,
    pub safepoints: Option<Stats>,
    pub exit_code: Option<i32>,
    /// The native counter reader beside the JVM, when the variant has one.
    pub hsperf_reader: Option<ReaderSummary>,
    /// The workload's summary numbers, the GC log's and the run time (docs/lab.md,
    /// "Measurements").
    pub measurements: Vec<Measurement>,
    /// Rules of `pauselab analyze` that fire on this variant's GC log.
    pub gc_findings: Vec<String>,
    /// Host changes made for this variant alone.
    pub host_changes: Vec<String>,
    /// Problems reading this variant's logs.
    pub errors: Vec<String>,
    pub verdict: VariantVerdict,
    pub evidence: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct JdkVerdict {
    pub jdk: String,
    pub vulnerable: Vulnerable,
    pub reason: String,
    pub baseline_max_ms: Option<f64>,
}

/// What the hsperf reader companion did: reads, failed reads, the slowest read.
#[derive(Debug, Clone, Serialize)]
pub struct ReaderSummary {
    pub reads: u64,
    pub errors: u64,
    pub max_read_us: f64,
    pub last_error: Option<String>,
}
