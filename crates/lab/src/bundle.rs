//! The result bundle of a run (layout in docs/lab.md): manifest.json, per variant the
//! hiccup log, GC log, safepoint interval log, workload output and summary.json, the host
//! time series, and verdict.json.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use serde::Serialize;

use crate::experiment::{Metric, Role};
use crate::hlog::{self, Stats};
use crate::runner::Finished;
use crate::verdict::{self, Judgement, VariantVerdict, Vulnerable};
use crate::LabError;

pub const HICCUP_LOG: &str = "hiccup.hlog";
pub const GC_LOG: &str = "gc.log";
pub const SAFEPOINT_LOG: &str = "safepoints.hlog";
pub const SUMMARY: &str = "summary.json";
pub const MANIFEST: &str = "manifest.json";
pub const VERDICT: &str = "verdict.json";
pub const HOST_SERIES: &str = "host-timeseries.jsonl";
/// Version of the bundle layout; bumped on incompatible changes.
pub const FORMAT_VERSION: u32 = 1;

/// Creates the bundle directory; refuses a non-empty one (results are never mixed).
pub fn prepare_out_dir(out: &Path) -> Result<(), LabError> {
    let text = out.to_string_lossy();
    if text.contains(',') || text.contains(':') {
        return Err(LabError::Experiment(format!(
            "{text}: the output directory may not contain ',' or ':' (JVM option syntax); choose another --out"
        )));
    }
    if out.exists() {
        let mut entries =
            fs::read_dir(out).map_err(|e| LabError::io(out, "read the output directory", e))?;
        if entries.next().is_some() {
            return Err(LabError::Experiment(format!(
                "{}: output directory is not empty; choose another --out",
                out.display()
            )));
        }
    }
    fs::create_dir_all(out).map_err(|e| LabError::io(out, "create the output directory", e))
}

/// The summary of one variant on one JDK (`summary.json`).
#[derive(Debug, Clone, Serialize)]
pub struct VariantSummary {
    pub jdk: String,
    pub variant: String,
    pub role: Role,
    pub skipped: Option<String>,
    pub early_exit: Option<String>,
    pub hiccups: Option<Stats>,
    pub safepoints: Option<Stats>,
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

/// `verdict.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub format_version: u32,
    pub experiment: String,
    pub vulnerable: Vulnerable,
    pub metric: Metric,
    pub rule: crate::experiment::VerdictRule,
    pub per_jdk: Vec<JdkVerdict>,
    pub variants: Vec<VariantSummary>,
    pub interrupted: bool,
    pub notes: Vec<String>,
}

/// Reads every variant's logs, judges them, and writes the bundle files.
pub fn write(finished: &Finished) -> Result<Outcome, LabError> {
    let out = &finished.options.out;
    let rule = &finished.experiment.verdict;
    let mut summaries: Vec<(VariantSummary, PathBuf)> = Vec::new();
    for instance in &finished.instances {
        let mut summary = VariantSummary {
            jdk: instance.jdk.clone(),
            variant: instance.variant.clone(),
            role: instance.role,
            skipped: instance.skipped.clone(),
            early_exit: instance.early_exit.clone(),
            hiccups: None,
            safepoints: None,
            errors: Vec::new(),
            verdict: VariantVerdict::NoData,
            evidence: String::new(),
        };
        if instance.skipped.is_none() {
            let hiccup_path = instance.out_dir.join(HICCUP_LOG);
            if finished.experiment.workload.hiccup_agent {
                match hlog::read_interval_log(&hiccup_path) {
                    Ok((h, _)) => summary.hiccups = Some(hlog::stats(&h)),
                    Err(e) => summary.errors.push(e),
                }
            }
            let gc_path = instance.out_dir.join(GC_LOG);
            if finished.experiment.workload.gc_log.is_some() {
                match crate::safepoints::read(&gc_path) {
                    Ok(points) => {
                        let mut h = hlog::new_histogram();
                        for p in &points {
                            h.saturating_record((p.total_ms * 1e6) as u64);
                        }
                        summary.safepoints = Some(hlog::stats(&h));
                        let start = instance.started_at().unwrap_or(finished.started);
                        let end_s = finished
                            .ended
                            .duration_since(start)
                            .unwrap_or_default()
                            .as_secs_f64()
                            .max(points.last().map(|p| p.uptime_s + 1.0).unwrap_or(1.0));
                        let pauses: Vec<(f64, f64)> =
                            points.iter().map(|p| (p.uptime_s, p.total_ms)).collect();
                        if let Err(e) = hlog::write_pause_log(
                            &instance.out_dir.join(SAFEPOINT_LOG),
                            start,
                            &pauses,
                            end_s,
                            Duration::from_secs(1),
                        ) {
                            summary.errors.push(e);
                        }
                    }
                    Err(e) => summary.errors.push(e),
                }
            }
            if summary.hiccups.as_ref().is_some_and(|h| h.count == 0) {
                summary
                    .errors
                    .push(format!("{}: no hiccup samples", hiccup_path.display()));
            }
        }
        summaries.push((summary, instance.out_dir.clone()));
    }

    let metric_of = |s: &VariantSummary| -> Option<Stats> {
        match rule.metric {
            Metric::Hiccup => s.hiccups.clone(),
            Metric::Safepoint => s.safepoints.clone(),
        }
    };
    let mut per_jdk = Vec::new();
    for jdk in &finished.jdks {
        let baseline = summaries
            .iter()
            .find(|(s, _)| s.jdk == jdk.label && s.variant == finished.experiment.baseline)
            .and_then(|(s, _)| metric_of(s));
        let mut roles = Vec::new();
        for (summary, _) in summaries.iter_mut().filter(|(s, _)| s.jdk == jdk.label) {
            let judgement = match (metric_of(summary), &baseline) {
                _ if summary.variant == finished.experiment.baseline => Judgement {
                    verdict: VariantVerdict::Baseline,
                    evidence: "the baseline".into(),
                },
                (Some(stats), Some(base)) if base.count > 0 => verdict::judge(rule, &stats, base),
                (_, None) => Judgement {
                    verdict: VariantVerdict::NoData,
                    evidence: "the baseline has no data".into(),
                },
                _ => Judgement {
                    verdict: VariantVerdict::NoData,
                    evidence: "no data".into(),
                },
            };
            summary.verdict = judgement.verdict;
            summary.evidence = judgement.evidence;
            roles.push((summary.role, summary.verdict));
        }
        let (vulnerable, reason) = verdict::experiment_verdict(rule, baseline.as_ref(), &roles);
        per_jdk.push(JdkVerdict {
            jdk: jdk.label.clone(),
            vulnerable,
            reason,
            baseline_max_ms: baseline.map(|b| b.max_ms),
        });
    }
    let mut vulnerable =
        verdict::combine(&per_jdk.iter().map(|j| j.vulnerable).collect::<Vec<_>>());
    if finished.interrupted && vulnerable != Vulnerable::Yes {
        vulnerable = Vulnerable::Inconclusive;
    }

    for (summary, dir) in &summaries {
        write_json(&dir.join(SUMMARY), summary)?;
    }
    let outcome = Outcome {
        format_version: FORMAT_VERSION,
        experiment: finished.experiment.name.clone(),
        vulnerable,
        metric: rule.metric,
        rule: rule.clone(),
        per_jdk,
        variants: summaries.into_iter().map(|(s, _)| s).collect(),
        interrupted: finished.interrupted,
        notes: finished.notes.clone(),
    };
    write_json(&out.join(MANIFEST), &manifest(finished))?;
    write_json(&out.join(VERDICT), &outcome)?;
    fs::write(out.join("experiment.toml"), &finished.experiment_toml)
        .map_err(|e| LabError::io(&out.join("experiment.toml"), "write", e))?;
    Ok(outcome)
}

fn write_json(path: &Path, value: &impl Serialize) -> Result<(), LabError> {
    let mut text = serde_json::to_string_pretty(value).expect("bundle values serialize");
    text.push('\n');
    fs::write(path, text).map_err(|e| LabError::io(path, "write", e))
}

fn unix_s(t: std::time::SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

fn manifest(finished: &Finished) -> serde_json::Value {
    serde_json::json!({
        "format_version": FORMAT_VERSION,
        "tool": format!("pauselab {}", env!("CARGO_PKG_VERSION")),
        "experiment": finished.experiment,
        "start_unix_s": unix_s(finished.started),
        "end_unix_s": unix_s(finished.ended),
        "interrupted": finished.interrupted,
        "options": {
            "duration_s": finished.options.duration.map(|d| d.as_secs_f64()),
            "jdks": finished.options.jdks,
            "disk": finished.options.disk,
            "no_fault": finished.options.no_fault,
        },
        "host": finished.host_facts,
        "jdks": finished.jdks,
        "fault": finished.slow_device,
        "stressors": finished.stressors,
        "instances": finished.instances,
        "notes": finished.notes,
        "cleanup_failures": finished.cleanup_failures,
    })
}
