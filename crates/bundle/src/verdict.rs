//! `verdict.json` and the per-variant `summary.json`: the verdicts as enums, the pause
//! statistics and the measurements.

use pauselab_pause::Summary;
use serde::{Deserialize, Serialize};

/// What a variant is in its experiment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// The set-up whose stalls the experiment is about: it decides "vulnerable".
    Subject,
    /// A set-up expected to avoid the stall.
    #[default]
    Mitigation,
    /// The reference every variant is compared with (named by `baseline` too).
    Baseline,
}

/// The verdict of one variant against the baseline (`variants[].verdict`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VariantVerdict {
    /// At least `margin` times the baseline's p99.9 or max, and above the floor.
    Stalls,
    /// Below the margin or the floor.
    NoStalls,
    /// The variant is the baseline itself.
    Baseline,
    /// Not run here (e.g. not root).
    Skipped,
    /// Ran but gave no data to judge (crashed, no log).
    Failed,
    /// Judged against a baseline that has no data.
    NoData,
    /// `jmh-score`: costs at least `margin` times the baseline per operation, beyond the
    /// error bars.
    Slower,
    /// `jmh-score`: below the margin.
    NotSlower,
    /// `jmh-score`: above the margin but within the error bars: cannot tell.
    Unclear,
}

impl VariantVerdict {
    /// The word `verdict.json` holds (`no_stalls`).
    pub fn as_str(self) -> &'static str {
        match self {
            VariantVerdict::Stalls => "stalls",
            VariantVerdict::NoStalls => "no_stalls",
            VariantVerdict::Baseline => "baseline",
            VariantVerdict::Skipped => "skipped",
            VariantVerdict::Failed => "failed",
            VariantVerdict::NoData => "no_data",
            VariantVerdict::Slower => "slower",
            VariantVerdict::NotSlower => "not_slower",
            VariantVerdict::Unclear => "unclear",
        }
    }
}

/// The experiment's answer (`result`, `per_jdk[].vulnerable`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Vulnerable {
    /// A subject variant stalls.
    #[serde(rename = "vulnerable")]
    Yes,
    /// No subject variant stalls and the baseline is quiet.
    #[serde(rename = "not_vulnerable")]
    No,
    /// The baseline is too noisy or has no data, or the run was interrupted.
    #[serde(rename = "inconclusive")]
    Inconclusive,
}

impl Vulnerable {
    /// The word `verdict.json` holds (`not_vulnerable`).
    pub fn as_str(self) -> &'static str {
        match self {
            Vulnerable::Yes => "vulnerable",
            Vulnerable::No => "not_vulnerable",
            Vulnerable::Inconclusive => "inconclusive",
        }
    }

    /// Several answers as one (a run's JDKs, a matrix's runs): any yes wins, then any
    /// inconclusive; no answer at all is inconclusive.
    pub fn combine(answers: &[Vulnerable]) -> Vulnerable {
        if answers.contains(&Vulnerable::Yes) {
            Vulnerable::Yes
        } else if answers.is_empty() || answers.contains(&Vulnerable::Inconclusive) {
            Vulnerable::Inconclusive
        } else {
            Vulnerable::No
        }
    }
}

/// One number of a variant besides its pause histograms (docs/lab.md, "Measurements").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// `workload.mib_per_s`, `gc.max_young_pause_ms`, `process.elapsed_s`, ...
    pub name: String,
    /// The value, in `unit`.
    pub value: f64,
    /// `ms`, `s`, `B`, `MiB/s`, `1/s`, or empty for counts.
    pub unit: String,
}

impl Measurement {
    /// A measurement named `name` of `value` `unit`.
    pub fn new(name: &str, value: f64, unit: &str) -> Measurement {
        Measurement {
            name: name.to_string(),
            value,
            unit: unit.to_string(),
        }
    }
}

/// What the hsperf reader companion did: reads, failed reads, the slowest read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReaderSummary {
    /// Successful reads.
    pub reads: u64,
    /// Failed reads.
    pub errors: u64,
    /// The slowest read, in microseconds.
    pub max_read_us: f64,
    /// The message of the last failed read.
    pub last_error: Option<String>,
}

/// The summary of one variant on one JDK (`summary.json`, and `verdict.json`'s
/// `variants[]`). Bundles of the first lab versions hold only `id`, `verdict`, `evidence`
/// and `measurements`: the other fields default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantSummary {
    /// `<variant>-jdk<id>`, also the directory name under `variants/`.
    pub id: String,
    /// The JDK's label (`jdk17`).
    #[serde(default)]
    pub jdk: String,
    /// The experiment's variant name.
    #[serde(default)]
    pub variant: String,
    /// The variant's role in the experiment.
    #[serde(default)]
    pub role: Role,
    /// Why the variant did not run.
    #[serde(default)]
    pub skipped: Option<String>,
    /// How the JVM ended before the run did.
    #[serde(default)]
    pub early_exit: Option<String>,
    /// Hiccups after the warm-up.
    #[serde(default)]
    pub hiccups: Option<Summary>,
    /// Safepoint pauses after the warm-up.
    #[serde(default)]
    pub safepoints: Option<Summary>,
    /// Request latencies after the warm-up, each from the request's scheduled start
    /// (open-loop workloads that write `latency.hlog`).
    #[serde(default)]
    pub latency: Option<Summary>,
    /// How long the application stopped after the warm-up, whatever stopped it: the
    /// safepoint pauses, with the max raised to the workload's longest gap between two
    /// allocations when that was longer (a stall outside any safepoint, such as a thread
    /// waiting for a concurrent GC phase blocked on I/O). Absent when the workload reports
    /// no per-interval gaps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stops: Option<Summary>,
    /// The JVM's exit code.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// The native counter reader beside the JVM, when the variant has one.
    #[serde(default)]
    pub hsperf_reader: Option<ReaderSummary>,
    /// The workload's summary numbers, the GC log's and the run time (docs/lab.md,
    /// "Measurements").
    #[serde(default)]
    pub measurements: Vec<Measurement>,
    /// Rules of `pauselab analyze` that fire on this variant's GC log.
    #[serde(default)]
    pub gc_findings: Vec<String>,
    /// Host changes made for this variant alone.
    #[serde(default)]
    pub host_changes: Vec<String>,
    /// Problems reading this variant's logs.
    #[serde(default)]
    pub errors: Vec<String>,
    /// The verdict against the baseline.
    pub verdict: VariantVerdict,
    /// Why, with the numbers.
    #[serde(default)]
    pub evidence: String,
}

/// The experiment's answer on one JDK.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JdkVerdict {
    /// The JDK's label.
    pub jdk: String,
    /// The answer.
    pub vulnerable: Vulnerable,
    /// Why, with the numbers.
    pub reason: String,
    /// The baseline's max on this JDK.
    pub baseline_max_ms: Option<f64>,
}

/// `verdict.json`. `Rule` is the verdict rule: the lab's typed rule when writing, any JSON
/// when reading (the report shows it as it is).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict<Rule = serde_json::Value> {
    /// The format version (absent in the first bundles).
    #[serde(default)]
    pub format_version: u32,
    /// The experiment's name (absent in the first bundles).
    #[serde(default)]
    pub experiment: String,
    /// `vulnerable`, `not_vulnerable` or `inconclusive`.
    pub result: Vulnerable,
    /// How variants were judged.
    pub rule: Rule,
    /// The highest of the baselines' max (one per JDK), the noise floor of the run.
    #[serde(default)]
    pub baseline_max_ms: Option<f64>,
    /// The answer per JDK (absent in the first bundles).
    #[serde(default)]
    pub per_jdk: Vec<JdkVerdict>,
    /// Every variant on every JDK.
    pub variants: Vec<VariantSummary>,
    /// Whether the run was stopped early (absent in the first bundles).
    #[serde(default)]
    pub interrupted: bool,
    /// What the run noted (absent in the first bundles).
    #[serde(default)]
    pub notes: Vec<String>,
    /// What kept the host busy beside the run, and when (pressure before it, other
    /// processes' CPU during it); empty on a quiet host. Non-empty: the verdict is noisy.
    #[serde(default)]
    pub noisy: Vec<String>,
    /// The experiment's conclusion in its own terms (its `[conclusion]`): each pair of
    /// variants compared on its measurements, per JDK. Empty for experiments without one.
    #[serde(default)]
    pub conclusions: Vec<Comparison>,
}

/// One variant against another on one JDK, on the measurements the experiment concludes
/// with (pretouch: start-up time against throughput; jfr-overhead: us/op and B/op).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The JDK's label.
    pub jdk: String,
    pub variant: String,
    /// The variant it is compared with.
    pub against: String,
    pub measures: Vec<Compared>,
}

/// One measurement of a [`Comparison`]; a value is absent when that variant did not give it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compared {
    pub name: String,
    pub unit: String,
    pub value: Option<f64>,
    pub against: Option<f64>,
    /// `value / against`, when both exist and `against` is not 0.
    pub ratio: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words shown to users are the words serde writes.
    #[test]
    fn words_are_the_serialized_names() {
        use VariantVerdict::*;
        for v in [
            Stalls, NoStalls, Baseline, Skipped, Failed, NoData, Slower, NotSlower, Unclear,
        ] {
            assert_eq!(serde_json::to_value(v).unwrap(), v.as_str());
            assert_eq!(
                serde_json::from_value::<VariantVerdict>(v.as_str().into()).unwrap(),
                v
            );
        }
        for v in [Vulnerable::Yes, Vulnerable::No, Vulnerable::Inconclusive] {
            assert_eq!(serde_json::to_value(v).unwrap(), v.as_str());
        }
    }
}
