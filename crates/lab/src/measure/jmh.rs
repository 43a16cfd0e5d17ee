//! JMH results: the JSON file JMH writes with `-rf json -rff FILE` (an array with one entry
//! per benchmark and parameter combination), read into a variant's measurements.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::bundle::{JdkVerdict, VariantSummary};
use crate::experiment::{Experiment, Role, VerdictRule};
use crate::judge::verdict::{Judgement, VariantVerdict, Vulnerable};
use crate::measure::Measurement;

/// Where a JMH variant writes its results: `-rff {out_dir}/jmh.json`.
pub const RESULT_FILE: &str = "jmh.json";

/// JMH's own entry point: a workload with this main class must leave a result file.
pub const JMH_MAIN: &str = "org.openjdk.jmh.Main";

/// The result file of a variant to read, if any: always for JMH's own main class (a
/// missing file is then an error), otherwise when the workload wrote one.
pub fn result_file(experiment: &Experiment, out_dir: &Path) -> Option<std::path::PathBuf> {
    let path = out_dir.join(RESULT_FILE);
    (experiment.workload.main == JMH_MAIN || path.exists()).then_some(path)
}

/// The measurements of a variant's result file (names below).
pub fn measurements(path: &Path) -> Result<Vec<Measurement>, String> {
    read(path).map(|results| readings(&results))
}

/// The secondary metric of JMH's GC profiler (`-prof gc`): bytes allocated per operation.
pub const ALLOC_NORM: &str = "gc.alloc.rate.norm";

/// A score with its error (half the 99.9% confidence interval; None when JMH could not
/// compute it, e.g. from fewer than three iterations) and unit, as JMH reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Score {
    pub value: f64,
    pub error: Option<f64>,
    pub unit: String,
}

/// One benchmark and parameter combination of a JMH run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchmarkResult {
    /// Fully qualified method, e.g. `pauselab.bench.SocketWriteBenchmark.writeOneByte`.
    pub benchmark: String,
    /// `avgt`, `thrpt`, `sample`, `ss`.
    pub mode: String,
    pub params: BTreeMap<String, String>,
    pub forks: Option<u64>,
    pub jdk_version: Option<String>,
    pub primary: Score,
    /// Bytes per operation from the GC profiler, when it ran.
    pub alloc_norm: Option<Score>,
}

/// Reads a JMH JSON result file. Errors are one line naming the file.
pub fn read(path: &Path) -> Result<Vec<BenchmarkResult>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "{}: cannot read the JMH result: {e} (JMH writes it when it finishes: did it finish within the run's duration? see workload.out)",
            path.display()
        )
    })?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Parses the text of a JMH JSON result file.
pub fn parse(text: &str) -> Result<Vec<BenchmarkResult>, String> {
    if text.trim().is_empty() {
        return Err("empty JMH result file (the run did not finish)".into());
    }
    let document: Value =
        serde_json::from_str(text).map_err(|e| format!("not a complete JMH JSON result: {e}"))?;
    let entries = document
        .as_array()
        .ok_or("not a JMH JSON result: expected an array of benchmark results")?;
    if entries.is_empty() {
        return Err("no benchmark results (every benchmark failed? see workload.out)".into());
    }
    entries
        .iter()
        .enumerate()
        .map(|(i, entry)| parse_entry(entry).map_err(|e| format!("result {}: {e}", i + 1)))
        .collect()
}

fn parse_entry(entry: &Value) -> Result<BenchmarkResult, String> {
    let benchmark = entry["benchmark"]
        .as_str()
        .ok_or("no \"benchmark\" name")?
        .to_string();
    let mode = entry["mode"].as_str().unwrap_or_default().to_string();
    let params = match &entry["params"] {
        Value::Null => BTreeMap::new(),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| {
                let value = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), value)
            })
            .collect(),
        _ => return Err(format!("{benchmark}: \"params\" is not an object")),
    };
    let primary =
        score(&entry["primaryMetric"]).map_err(|e| format!("{benchmark}: primaryMetric: {e}"))?;
    let alloc_norm = match &entry["secondaryMetrics"][ALLOC_NORM] {
        Value::Null => None,
        metric => Some(score(metric).map_err(|e| format!("{benchmark}: {ALLOC_NORM}: {e}"))?),
    };
    Ok(BenchmarkResult {
        benchmark,
        mode,
        params,
        forks: entry["forks"].as_u64(),
        jdk_version: entry["jdkVersion"].as_str().map(str::to_string),
        primary,
        alloc_norm,
    })
}

fn score(metric: &Value) -> Result<Score, String> {
    if !metric.is_object() {
        return Err("missing".into());
    }
    let value = number(&metric["score"])
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("no finite \"score\" (found {})", metric["score"]))?;
    let unit = metric["scoreUnit"]
        .as_str()
        .filter(|u| !u.is_empty())
        .ok_or("no \"scoreUnit\"")?
        .to_string();
    Ok(Score {
        value,
        error: number(&metric["scoreError"]).filter(|e| e.is_finite()),
        unit,
    })
}

/// JMH writes non-finite numbers as the strings "NaN", "Infinity" and "-Infinity".
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

impl BenchmarkResult {
    /// `writeOneByte` or `writeOneByte(jfr=off)`: the method name and its parameters.
    pub fn short_name(&self) -> String {
        let method = self.benchmark.rsplit('.').next().unwrap_or(&self.benchmark);
        if self.params.is_empty() {
            return method.to_string();
        }
        let params: Vec<String> = self
            .params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        format!("{method}({})", params.join(","))
    }
}

/// Measurement names: `jmh.score`, `jmh.score_error` and, when the GC profiler ran,
/// `jmh.gc.alloc.rate.norm` (B/op). With several results in one file the result's short
/// name comes between: `jmh.writeOneByte(jfr=off).score`.
pub const SCORE: &str = "jmh.score";
pub const SCORE_ERROR: &str = "jmh.score_error";
pub const ALLOC_NORM_MEASUREMENT: &str = "jmh.gc.alloc.rate.norm";

/// The readings of a run (names above).
pub fn readings(results: &[BenchmarkResult]) -> Vec<Measurement> {
    let mut readings = Vec::new();
    for result in results {
        let prefix = if results.len() > 1 {
            format!("jmh.{}.", result.short_name())
        } else {
            "jmh.".to_string()
        };
        let mut push = |name: &str, value: f64, unit: &str| {
            readings.push(Measurement::new(&format!("{prefix}{name}"), value, unit))
        };
        push("score", result.primary.value, &result.primary.unit);
        if let Some(error) = result.primary.error {
            push("score_error", error, &result.primary.unit);
        }
        if let Some(alloc) = &result.alloc_norm {
            push(ALLOC_NORM, alloc.value, &alloc.unit);
        }
    }
    readings
}

/// Whether a higher score means more cost: times per operation (`us/op`, `ns/op`, ...) do,
/// throughputs (`ops/s`, ...) do not.
pub fn higher_is_costlier(unit: &str) -> bool {
    !unit.starts_with("ops/")
}

/// A variant's score against the baseline's (same benchmark, same JDK).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cost {
    /// Cost per operation relative to the baseline: 2.0 = each operation takes twice as
    /// long (or throughput halves).
    pub ratio: f64,
    /// Whether the two confidence intervals (score +- error) are apart, so the difference
    /// is not JMH's own noise. False when an error is unknown.
    pub separated: bool,
    /// The baseline's error relative to its score (None when JMH gave no error).
    pub baseline_relative_error: Option<f64>,
}

/// Compares two scores of the same unit; None when the units differ or a score is 0.
pub fn cost(subject: &Score, baseline: &Score) -> Option<Cost> {
    if subject.unit != baseline.unit || subject.value <= 0.0 || baseline.value <= 0.0 {
        return None;
    }
    let ratio = if higher_is_costlier(&subject.unit) {
        subject.value / baseline.value
    } else {
        baseline.value / subject.value
    };
    let separated = match (subject.error, baseline.error) {
        (Some(s), Some(b)) => {
            subject.value - s > baseline.value + b || subject.value + s < baseline.value - b
        }
        _ => false,
    };
    Some(Cost {
        ratio,
        separated,
        baseline_relative_error: baseline.error.map(|e| e / baseline.value),
    })
}

/// A variant judged on its score against the baseline's.
#[derive(Debug, Clone, PartialEq)]
pub struct CostJudgement {
    /// `Slower`: at least `margin` times the baseline's cost, with the confidence
    /// intervals apart; `Unclear`: at least `margin` times, within the error bars;
    /// `NotSlower`: below the margin.
    pub verdict: VariantVerdict,
    pub cost: Cost,
    /// `3.70x jfr-off (+270%): 8.692 +- 2.132 us/op vs 2.350 +- 0.257 us/op`.
    pub evidence: String,
}

/// Judges `subject` against `baseline` (named `baseline_name` in the evidence): slower
/// when its cost is at least `margin` times the baseline's and the difference is larger
/// than JMH's errors. None when the scores cannot be compared (different units).
pub fn judge_cost(
    margin: f64,
    subject: &Score,
    baseline: &Score,
    baseline_name: &str,
) -> Option<CostJudgement> {
    let cost = cost(subject, baseline)?;
    let verdict = match (cost.ratio >= margin, cost.separated) {
        (true, true) => VariantVerdict::Slower,
        (true, false) => VariantVerdict::Unclear,
        (false, _) => VariantVerdict::NotSlower,
    };
    let mut evidence = format!(
        "{:.2}x {baseline_name} ({:+.0}%): {} vs {}",
        cost.ratio,
        (cost.ratio - 1.0) * 100.0,
        format_score(subject),
        format_score(baseline)
    );
    match verdict {
        VariantVerdict::Unclear => evidence.push_str("; within the error bars"),
        VariantVerdict::NotSlower => evidence.push_str(&format!("; below the {margin}x margin")),
        _ => {}
    }
    Some(CostJudgement {
        verdict,
        cost,
        evidence,
    })
}

/// A variant's primary JMH score, from its measurements (`jmh.score`, `jmh.score_error`).
pub fn score_of(measurements: &[Measurement]) -> Option<Score> {
    let score = measurements.iter().find(|m| m.name == SCORE)?;
    Some(Score {
        value: score.value,
        error: measurements
            .iter()
            .find(|m| m.name == SCORE_ERROR)
            .map(|m| m.value),
        unit: score.unit.clone(),
    })
}

/// Judges the summaries of one JDK on `jmh.score` (sets their verdict and evidence).
pub fn judge_summaries(
    rule: &VerdictRule,
    baseline: &str,
    jdk: &str,
    summaries: &mut [&mut VariantSummary],
) -> JdkVerdict {
    let inputs: Vec<CostInput> = summaries
        .iter()
        .map(|s| CostInput {
            variant: s.variant.clone(),
            role: s.role,
            score: score_of(&s.measurements),
        })
        .collect();
    let (judgements, vulnerable, reason) = judge_jdk(rule, baseline, &inputs);
    for (summary, judgement) in summaries.iter_mut().zip(judgements) {
        match judgement {
            Some(j) => {
                summary.verdict = j.verdict;
                summary.evidence = j.evidence;
            }
            None => {
                summary.evidence = summary
                    .skipped
                    .clone()
                    .or_else(|| summary.early_exit.clone())
                    .or_else(|| summary.errors.first().cloned())
                    .unwrap_or_else(|| "no JMH result".into())
            }
        }
    }
    JdkVerdict {
        jdk: jdk.to_string(),
        vulnerable,
        reason,
        baseline_max_ms: None,
    }
}

/// One variant of one JDK, for [`judge_jdk`].
#[derive(Debug, Clone)]
pub struct CostInput {
    pub variant: String,
    pub role: Role,
    /// None when the variant gave no JMH result.
    pub score: Option<Score>,
}

/// The `jmh-score` verdict of one JDK: a judgement per variant (None: no score, the
/// variant keeps its failed/skipped verdict) and the JDK's answer with its reason.
pub fn judge_jdk(
    rule: &VerdictRule,
    baseline: &str,
    inputs: &[CostInput],
) -> (Vec<Option<Judgement>>, Vulnerable, String) {
    let base = inputs
        .iter()
        .find(|i| i.variant == baseline)
        .and_then(|i| i.score.as_ref());
    let mut judgements = Vec::new();
    let mut subjects = Vec::new();
    for input in inputs {
        let judgement = match (&input.score, base) {
            (None, _) => None,
            (Some(score), _) if input.variant == baseline => Some(Judgement {
                verdict: VariantVerdict::Baseline,
                evidence: format_score(score),
            }),
            (Some(_), None) => Some(Judgement {
                verdict: VariantVerdict::NoData,
                evidence: "the baseline has no JMH result".into(),
            }),
            (Some(score), Some(base)) => {
                Some(match judge_cost(rule.margin, score, base, baseline) {
                    Some(c) => {
                        if input.role == Role::Subject {
                            subjects.push((input.variant.clone(), c.clone()));
                        }
                        Judgement {
                            verdict: c.verdict,
                            evidence: c.evidence,
                        }
                    }
                    None => Judgement {
                        verdict: VariantVerdict::Failed,
                        evidence: format!(
                            "score in {} cannot be compared with the baseline's {}",
                            score.unit, base.unit
                        ),
                    },
                })
            }
        };
        judgements.push(judgement);
    }
    let (answer, reason) = jdk_answer(rule, baseline, base, &subjects);
    (judgements, answer, reason)
}

fn jdk_answer(
    rule: &VerdictRule,
    baseline: &str,
    base: Option<&Score>,
    subjects: &[(String, CostJudgement)],
) -> (Vulnerable, String) {
    let Some(base) = base else {
        return (
            Vulnerable::Inconclusive,
            "the baseline variant gave no JMH result".into(),
        );
    };
    if let Some((name, c)) = subjects
        .iter()
        .find(|(_, c)| c.verdict == VariantVerdict::Slower)
    {
        return (
            Vulnerable::Yes,
            format!(
                "{name} costs {:.2}x {baseline} per operation ({:+.0}%)",
                c.cost.ratio,
                (c.cost.ratio - 1.0) * 100.0
            ),
        );
    }
    match base.error {
        None => {
            return (
                Vulnerable::Inconclusive,
                "JMH gave no error for the baseline (too few iterations): cannot tell".into(),
            )
        }
        Some(error) if error / base.value > rule.max_baseline_error => {
            return (
                Vulnerable::Inconclusive,
                format!(
                    "noise too high: the baseline's error is {:.0}% of its score (limit {:.0}%)",
                    100.0 * error / base.value,
                    100.0 * rule.max_baseline_error
                ),
            )
        }
        Some(_) => {}
    }
    if let Some((name, c)) = subjects
        .iter()
        .find(|(_, c)| c.verdict == VariantVerdict::Unclear)
    {
        return (Vulnerable::Inconclusive, format!("{name}: {}", c.evidence));
    }
    match subjects.first() {
        None => (
            Vulnerable::Inconclusive,
            "no subject variant gave a JMH result".into(),
        ),
        Some((name, c)) => (Vulnerable::No, format!("{name}: {}", c.evidence)),
    }
}

/// `7.85 +- 1.20 us/op`.
pub fn format_score(score: &Score) -> String {
    match score.error {
        Some(e) => format!("{:.3} +- {:.3} {}", score.value, e, score.unit),
        None => format!("{:.3} {}", score.value, score.unit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/jmh")
            .join(name)
    }

    #[test]
    fn reads_one_result_with_the_gc_profiler() {
        let results = read(&fixture("socket-write-enabled-jdk25.json")).unwrap();
        assert_eq!(results.len(), 1);
        let r = &results[0];
        assert_eq!(
            r.benchmark,
            "pauselab.bench.SocketWriteBenchmark.writeOneByte"
        );
        assert_eq!(r.mode, "avgt");
        assert_eq!(r.params["jfr"], "socket-write-enabled");
        assert_eq!(r.forks, Some(1));
        assert_eq!(r.jdk_version.as_deref(), Some("25.0.3"));
        assert_eq!(r.primary.unit, "us/op");
        // The fixture's primary score is the mean of its rawData; check against that, not
        // a copied constant.
        let text = std::fs::read_to_string(fixture("socket-write-enabled-jdk25.json")).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        let raw: Vec<f64> = doc[0]["primaryMetric"]["rawData"][0]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let mean = raw.iter().sum::<f64>() / raw.len() as f64;
        assert!((r.primary.value - mean).abs() < 1e-9 * mean);
        assert!(r.primary.error.unwrap() > 0.0);
        let alloc = r.alloc_norm.as_ref().unwrap();
        assert_eq!(alloc.unit, "B/op");
        // Every write emits an event: about a hundred bytes each.
        assert!(alloc.value > 50.0 && alloc.value < 500.0, "{alloc:?}");

        let readings = readings(&results);
        let names: Vec<&str> = readings.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, [SCORE, SCORE_ERROR, ALLOC_NORM_MEASUREMENT]);
        assert_eq!(readings[0].unit, "us/op");
        assert_eq!(readings[2].unit, "B/op");
        assert_eq!(readings[2].value, alloc.value);
    }

    #[test]
    fn several_results_are_prefixed_and_nan_errors_are_left_out() {
        let results = read(&fixture("socket-write-all-jdk17.json")).unwrap();
        let setups: Vec<&str> = results.iter().map(|r| r.params["jfr"].as_str()).collect();
        assert_eq!(
            setups,
            ["off", "socket-write-disabled", "socket-write-enabled"]
        );
        // Two iterations: JMH gives no error ("NaN").
        assert!(results.iter().all(|r| r.primary.error.is_none()));
        let readings = readings(&results);
        let names: Vec<&str> = readings.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "jmh.writeOneByte(jfr=off).score",
                "jmh.writeOneByte(jfr=off).gc.alloc.rate.norm",
                "jmh.writeOneByte(jfr=socket-write-disabled).score",
                "jmh.writeOneByte(jfr=socket-write-disabled).gc.alloc.rate.norm",
                "jmh.writeOneByte(jfr=socket-write-enabled).score",
                "jmh.writeOneByte(jfr=socket-write-enabled).gc.alloc.rate.norm",
            ]
        );
        // With the event on, writes allocate; with JFR off they do not (below 1 B/op: the
        // profiler's own noise).
        let off = results[0].alloc_norm.as_ref().unwrap().value;
        let on = results[2].alloc_norm.as_ref().unwrap().value;
        assert!(off < 1.0 && on > 50.0, "off {off} on {on}");
    }

    #[test]
    fn bad_files_give_one_line_naming_the_file() {
        let dir = std::env::temp_dir().join(format!("pauselab-jmh-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = std::fs::read_to_string(fixture("socket-write-off-jdk17.json")).unwrap();
        let cases: Vec<(&str, String, &str)> = vec![
            ("empty.json", String::new(), "empty"),
            (
                "truncated.json",
                good[..good.len() / 2].to_string(),
                "not a complete",
            ),
            (
                "garbage.json",
                "\u{1}\u{2}binary junk".into(),
                "not a complete",
            ),
            (
                "object.json",
                "{\"benchmark\":\"x\"}".into(),
                "expected an array",
            ),
            ("none.json", "[]".into(), "no benchmark results"),
            (
                "noscore.json",
                good.replace("\"score\" :", "\"scor\" :"),
                "score",
            ),
            ("nanscore.json", nan_primary(&good), "no finite"),
            (
                "nounit.json",
                good.replace("\"scoreUnit\" : \"us/op\"", "\"x\" : 1"),
                "scoreUnit",
            ),
        ];
        for (name, text, expected) in cases {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            let err = read(&path).unwrap_err();
            assert!(err.contains(&path.display().to_string()), "{name}: {err}");
            assert!(err.contains(expected), "{name}: {err}");
            assert!(!err.contains('\n'), "{name}: {err}");
        }
        let err = read(&dir.join("missing.json")).unwrap_err();
        assert!(
            err.contains("missing.json") && err.contains("cannot read"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn nan_primary(good: &str) -> String {
        let mut doc: Value = serde_json::from_str(good).unwrap();
        doc[0]["primaryMetric"]["score"] = Value::String("NaN".into());
        doc.to_string()
    }

    #[test]
    fn truncation_at_every_point_is_an_error_or_a_complete_result() {
        let good = std::fs::read_to_string(fixture("socket-write-off-jdk17.json")).unwrap();
        let complete = parse(&good).unwrap();
        for cut in 0..good.len() {
            if !good.is_char_boundary(cut) {
                continue;
            }
            match parse(&good[..cut]) {
                Ok(results) => assert_eq!(results, complete, "cut at {cut}"),
                Err(e) => assert!(!e.contains('\n'), "{e}"),
            }
        }
    }

    fn score(value: f64, error: Option<f64>, unit: &str) -> Score {
        Score {
            value,
            error,
            unit: unit.into(),
        }
    }

    #[test]
    fn cost_is_relative_to_the_baseline_in_the_direction_of_the_unit() {
        let base = score(2.0, Some(0.2), "us/op");
        let c = cost(&score(8.0, Some(1.0), "us/op"), &base).unwrap();
        assert_eq!(c.ratio, 4.0);
        assert!(c.separated);
        assert_eq!(c.baseline_relative_error, Some(0.1));
        // Overlapping intervals: not separated.
        let c = cost(&score(2.3, Some(0.2), "us/op"), &base).unwrap();
        assert!(!c.separated);
        // Faster and apart is separated too.
        assert!(
            cost(&score(1.0, Some(0.1), "us/op"), &base)
                .unwrap()
                .separated
        );
        // Throughput: half the operations per second is twice the cost.
        let c = cost(&score(250.0, None, "ops/s"), &score(500.0, None, "ops/s")).unwrap();
        assert_eq!(c.ratio, 2.0);
        assert!(!c.separated);
        assert_eq!(c.baseline_relative_error, None);
        assert!(cost(&score(1.0, None, "ns/op"), &base).is_none());
        assert!(cost(&score(1.0, None, "us/op"), &score(0.0, None, "us/op")).is_none());
        assert_eq!(format_score(&base), "2.000 +- 0.200 us/op");
        assert_eq!(format_score(&score(3.0, None, "B/op")), "3.000 B/op");
    }

    #[test]
    fn judged_slower_only_beyond_the_margin_and_the_error_bars() {
        let base = score(2.35, Some(0.257), "us/op");
        let on = judge_cost(1.5, &score(8.692, Some(2.132), "us/op"), &base, "jfr-off").unwrap();
        assert_eq!(on.verdict, VariantVerdict::Slower);
        assert_eq!(
            on.evidence,
            "3.70x jfr-off (+270%): 8.692 +- 2.132 us/op vs 2.350 +- 0.257 us/op"
        );
        let disabled = judge_cost(1.5, &score(2.138, Some(0.239), "us/op"), &base, "jfr-off");
        let disabled = disabled.unwrap();
        assert_eq!(disabled.verdict, VariantVerdict::NotSlower);
        assert!(disabled.evidence.contains("(-9%)"), "{}", disabled.evidence);
        assert!(
            disabled.evidence.contains("below the 1.5x margin"),
            "{}",
            disabled.evidence
        );
        // Twice as slow, but JMH's errors overlap: not enough to say so.
        let noisy = judge_cost(1.5, &score(5.0, Some(2.5), "us/op"), &base, "jfr-off").unwrap();
        assert_eq!(noisy.verdict, VariantVerdict::Unclear);
        assert!(
            noisy.evidence.contains("within the error bars"),
            "{}",
            noisy.evidence
        );
        assert!(judge_cost(1.5, &score(5.0, None, "ops/s"), &base, "jfr-off").is_none());
    }

    fn rule() -> VerdictRule {
        VerdictRule {
            metric: crate::experiment::Metric::JmhScore,
            margin: 1.5,
            floor_ms: 0.0,
            noise_ms: 0.0,
            max_baseline_error: 0.5,
        }
    }

    fn input(variant: &str, role: Role, s: Option<Score>) -> CostInput {
        CostInput {
            variant: variant.into(),
            role,
            score: s,
        }
    }

    #[test]
    fn jdk_answers() {
        let off = || Some(score(2.35, Some(0.257), "us/op"));
        let setups = |on: Option<Score>| {
            vec![
                input("jfr-off", Role::Baseline, off()),
                input(
                    "event-disabled",
                    Role::Mitigation,
                    Some(score(2.138, Some(0.239), "us/op")),
                ),
                input("event-enabled", Role::Subject, on),
            ]
        };
        let (judgements, answer, reason) = judge_jdk(
            &rule(),
            "jfr-off",
            &setups(Some(score(8.692, Some(2.132), "us/op"))),
        );
        let verdicts: Vec<VariantVerdict> = judgements
            .iter()
            .map(|j| j.as_ref().unwrap().verdict)
            .collect();
        assert_eq!(
            verdicts,
            [
                VariantVerdict::Baseline,
                VariantVerdict::NotSlower,
                VariantVerdict::Slower
            ]
        );
        assert_eq!(answer, Vulnerable::Yes);
        assert_eq!(
            reason,
            "event-enabled costs 3.70x jfr-off per operation (+270%)"
        );

        let (_, answer, reason) = judge_jdk(
            &rule(),
            "jfr-off",
            &setups(Some(score(2.5, Some(0.2), "us/op"))),
        );
        assert_eq!(answer, Vulnerable::No);
        assert!(
            reason.starts_with("event-enabled: 1.06x jfr-off"),
            "{reason}"
        );

        // A quiet baseline, but the subject's own error bars reach back to it: cannot tell.
        let (judgements, answer, reason) = judge_jdk(
            &rule(),
            "jfr-off",
            &setups(Some(score(5.0, Some(3.0), "us/op"))),
        );
        assert_eq!(
            judgements[2].as_ref().unwrap().verdict,
            VariantVerdict::Unclear
        );
        assert_eq!(answer, Vulnerable::Inconclusive);
        assert!(reason.contains("within the error bars"), "{reason}");

        // No result from the subject: its own verdict stays, the answer is inconclusive.
        let (judgements, answer, _) = judge_jdk(&rule(), "jfr-off", &setups(None));
        assert!(judgements[2].is_none());
        assert_eq!(answer, Vulnerable::Inconclusive);

        // A noisy baseline cannot say "no"...
        let mut noisy = setups(Some(score(2.5, Some(0.2), "us/op")));
        noisy[0].score = Some(score(2.35, Some(1.5), "us/op"));
        let (_, answer, reason) = judge_jdk(&rule(), "jfr-off", &noisy);
        assert_eq!(answer, Vulnerable::Inconclusive);
        assert!(reason.contains("64% of its score"), "{reason}");
        // ...nor can one without an error.
        noisy[0].score = Some(score(2.35, None, "us/op"));
        assert_eq!(
            judge_jdk(&rule(), "jfr-off", &noisy).1,
            Vulnerable::Inconclusive
        );

        // No baseline result.
        let mut none = setups(Some(score(8.0, Some(1.0), "us/op")));
        none[0].score = None;
        let (judgements, answer, _) = judge_jdk(&rule(), "jfr-off", &none);
        assert_eq!(answer, Vulnerable::Inconclusive);
        assert_eq!(
            judgements[2].as_ref().unwrap().verdict,
            VariantVerdict::NoData
        );
    }

    #[test]
    fn cost_direction_follows_the_unit() {
        assert!(higher_is_costlier("us/op"));
        assert!(higher_is_costlier("ns/op"));
        assert!(!higher_is_costlier("ops/s"));
        assert!(!higher_is_costlier("ops/us"));
    }
}
