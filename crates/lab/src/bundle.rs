//! The result bundle of a run (layout in docs/lab.md): manifest.json, per variant the
//! hiccup log, GC log, safepoint interval log, workload output and summary.json, the host
//! time series, and verdict.json.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::experiment::layout::{
    FORMAT, FORMAT_VERSION, GC_LOG, HICCUP_LOG, LATENCY_LOG, MANIFEST, SAFEPOINT_LOG, SUMMARY,
    VERDICT, WORKLOAD_OUT,
};
use crate::experiment::{Metric, Role};
use crate::judge::verdict::{self, Judgement, VariantVerdict, Vulnerable};
use crate::jvm::java::Jdk;
use crate::measure::hlog;
use crate::measure::Measurement;
use crate::run::runner::Finished;
use crate::LabError;
use pauselab_pause::{DurationStats, Summary};

pub use crate::judge::{JdkVerdict, ReaderSummary, VariantSummary};
use pauselab_bundle::{Manifest, ManifestExperiment, ManifestJdk, RunSettings, VariantEntry};

fn read_reader_log(path: &Path) -> Option<ReaderSummary> {
    let text = fs::read_to_string(path).ok()?;
    let mut summary = ReaderSummary {
        reads: 0,
        errors: 0,
        max_read_us: 0.0,
        last_error: None,
    };
    for line in text.lines() {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if let Some(error) = value["error"].as_str() {
            summary.errors += 1;
            summary.last_error = Some(error.to_string());
        } else {
            summary.reads += 1;
            summary.max_read_us = summary
                .max_read_us
                .max(value["read_us"].as_f64().unwrap_or(0.0));
        }
    }
    Some(summary)
}

/// `verdict.json`, with the lab's typed verdict rule.
pub type Outcome = pauselab_bundle::Verdict<crate::experiment::VerdictRule>;

/// Reads every variant's logs, judges them, and writes the bundle files.
pub fn write(finished: &Finished) -> Result<Outcome, LabError> {
    let out = &finished.options.out;
    let rule = &finished.experiment.verdict;
    let warmup_s = finished.experiment.warmup.get().as_secs_f64();
    let mut summaries: Vec<(VariantSummary, PathBuf)> = Vec::new();
    for instance in &finished.instances {
        let mut summary = VariantSummary {
            id: instance.id(),
            jdk: instance.jdk.clone(),
            variant: instance.variant.clone(),
            role: instance.role,
            skipped: instance.skipped.clone(),
            early_exit: instance.early_exit.clone(),
            hiccups: None,
            safepoints: None,
            latency: None,
            stops: None,
            exit_code: instance.exit_code,
            hsperf_reader: read_reader_log(&instance.out_dir.join(crate::stress::READER_LOG)),
            measurements: Vec::new(),
            gc_findings: Vec::new(),
            host_changes: instance.host_changes.clone(),
            errors: Vec::new(),
            verdict: if instance.skipped.is_some() {
                VariantVerdict::Skipped
            } else {
                VariantVerdict::Failed
            },
            evidence: String::new(),
        };
        if instance.skipped.is_none() {
            let hiccup_path = instance.out_dir.join(HICCUP_LOG);
            if let Some(hiccups) = &instance.follow.hiccups {
                summary.hiccups = interval_log_stats(hiccups, &hiccup_path, "hiccup samples")
                    .map_err(|e| summary.errors.push(e))
                    .ok();
            }
            if let Some(latency) = &instance.follow.latency {
                let path = instance.out_dir.join(LATENCY_LOG);
                summary.latency = interval_log_stats(latency, &path, "requests completed")
                    .map_err(|e| summary.errors.push(e))
                    .ok();
            }
            let gc_path = instance.out_dir.join(GC_LOG);
            if let Some(safepoints) = &instance.follow.safepoints {
                match safepoints.points() {
                    Ok(points) => {
                        let mut after_warmup = DurationStats::new();
                        for p in points.iter().filter(|p| p.uptime_s >= warmup_s) {
                            after_warmup.record((p.total_ms * 1e6) as u64);
                        }
                        summary.safepoints = Some(after_warmup.summary());
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
                            crate::host::sys::unix_s(start),
                            &pauses,
                            end_s,
                            1.0,
                        ) {
                            summary.errors.push(e);
                        }
                    }
                    Err(e) => summary.errors.push(e),
                }
            }
            summary
                .measurements
                .extend(instance.runner_measurements.iter().cloned());
            if let Some(elapsed) = instance.elapsed_s {
                summary
                    .measurements
                    .push(Measurement::new("process.elapsed_s", elapsed, "s"));
            }
            if let Some(workload) =
                crate::measure::workload_summary(&instance.out_dir.join(WORKLOAD_OUT))
            {
                summary.measurements.extend(workload);
            }
            let gap_ms = instance
                .follow
                .gaps
                .as_ref()
                .and_then(|g| g.after_warmup_ms());
            if let (Some(safepoints), Some(gap_ms)) = (&summary.safepoints, gap_ms) {
                summary.stops = Some(Summary {
                    max_ms: safepoints.max_ms.max(gap_ms),
                    ..*safepoints
                });
            }
            if let Some(gap_ms) = gap_ms {
                summary.measurements.push(Measurement::new(
                    "workload.max_gap_after_warmup_ms",
                    gap_ms,
                    "ms",
                ));
            }
            if finished.experiment.workload.gc_log.is_some() && gc_path.exists() {
                match crate::measure::gc_log(&gc_path, warmup_s) {
                    Ok(gc) => {
                        summary.measurements.extend(gc.measurements);
                        summary.gc_findings = gc.findings;
                    }
                    Err(e) => summary.errors.push(e),
                }
            }
            if let Some(result) =
                crate::measure::jmh::result_file(&finished.experiment, &instance.out_dir)
            {
                match crate::measure::jmh::measurements(&result) {
                    Ok(jmh) => summary.measurements.extend(jmh),
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

    let metric_of = |s: &VariantSummary| -> Option<Summary> {
        match rule.metric {
            Metric::Hiccup => s.hiccups,
            Metric::Safepoint => s.safepoints,
            Metric::Latency => s.latency,
            Metric::Stop => s.stops,
            Metric::JmhScore => None,
        }
    };
    let mut per_jdk = Vec::new();
    for jdk in &finished.jdks {
        if rule.metric == Metric::JmhScore {
            let mut of_jdk: Vec<&mut VariantSummary> = summaries
                .iter_mut()
                .filter(|(s, _)| s.jdk == jdk.label)
                .map(|(s, _)| s)
                .collect();
            let baseline = &finished.experiment.baseline;
            per_jdk.push(crate::judge::judge_summaries(
                rule,
                baseline,
                &jdk.label,
                &mut of_jdk,
            ));
            continue;
        }
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
                (Some(_), _) => Judgement {
                    verdict: VariantVerdict::NoData,
                    evidence: "the baseline has no data".into(),
                },
                (None, _) => Judgement {
                    verdict: summary.verdict,
                    evidence: summary
                        .skipped
                        .clone()
                        .or_else(|| summary.early_exit.clone())
                        .or_else(|| summary.errors.first().cloned())
                        .unwrap_or_else(|| "no data".into()),
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
    let baseline_max_ms = per_jdk
        .iter()
        .filter_map(|j| j.baseline_max_ms)
        .reduce(f64::max);
    let conclusions = finished
        .experiment
        .conclusion
        .as_ref()
        .map(|c| {
            let all: Vec<&VariantSummary> = summaries.iter().map(|(s, _)| s).collect();
            crate::judge::compare(c, &all)
        })
        .unwrap_or_default();
    let outcome = Outcome {
        format_version: FORMAT_VERSION,
        experiment: finished.experiment.name.clone(),
        result: vulnerable,
        rule: rule.clone(),
        baseline_max_ms,
        per_jdk,
        variants: summaries.into_iter().map(|(s, _)| s).collect(),
        interrupted: finished.interrupted,
        notes: finished.notes.clone(),
        noisy: finished.noise.clone(),
        conclusions,
    };
    write_json(&out.join(MANIFEST), &manifest(finished))?;
    write_json(&out.join(VERDICT), &outcome)?;
    let toml = out.join("experiment.toml");
    write_file(&toml, finished.experiment_toml.as_bytes())?;
    Ok(outcome)
}

/// The statistics of a followed interval log after the warm-up; an error naming the file
/// when it holds no `what` after the warm-up or could not be read.
fn interval_log_stats(
    log: &crate::measure::follow::IntervalLogFollower,
    path: &Path,
    what: &str,
) -> Result<Summary, String> {
    match log.after_warmup() {
        Ok(h) if !h.is_empty() => Ok(Summary::of_histogram(h)),
        Ok(_) => Err(format!(
            "{}: no {what} after the warm-up (missing or empty log)",
            path.display()
        )),
        Err(e) => Err(e),
    }
}

fn write_json(path: &Path, value: &impl Serialize) -> Result<(), LabError> {
    let mut text = serde_json::to_string_pretty(value).expect("bundle values serialize");
    text.push('\n');
    write_file(path, text.as_bytes())
}

/// Every file of the bundle is created without following a link planted under its name.
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), LabError> {
    pauselab_pause::output::write_file(path, bytes).map_err(|e| LabError::io(path, "write", e))
}

fn manifest(finished: &Finished) -> Manifest {
    let experiment = &finished.experiment;
    let default_variant = experiment
        .variants
        .iter()
        .find(|v| v.role == Role::Subject)
        .map(|v| v.name.clone());
    let variants = finished
        .instances
        .iter()
        .map(|i| {
            let definition = experiment.variants.iter().find(|v| v.name == i.variant);
            VariantEntry {
                id: i.id(),
                variant: i.variant.clone(),
                jdk: Some(Jdk::id_of(&i.jdk)),
                description: Some(
                    definition
                        .map(|v| v.description.clone())
                        .unwrap_or_default(),
                ),
                jvm_flags: i
                    .command
                    .iter()
                    .skip(1)
                    .take_while(|a| a.as_str() != "-cp")
                    .cloned()
                    .collect(),
                dir: Some(format!("variants/{}", i.id())),
                role: Some(i.role),
                tmp: json_of(&i.tmp).as_str().map(str::to_string),
                tmp_dir: i.tmp_dir.clone(),
                command: i.command.clone(),
                pid: i.pid,
                skipped: i.skipped.clone(),
                early_exit: i.early_exit.clone(),
                exit_code: i.exit_code,
                companions: i.companions.clone(),
                host_changes: i.host_changes.clone(),
                start_time_s: i.started_at().map(crate::host::sys::unix_s),
                elapsed_s: i.elapsed_s,
            }
        })
        .collect();
    let jdks = finished
        .jdks
        .iter()
        .map(|j| ManifestJdk {
            id: Jdk::id_of(&j.label),
            path: Some(j.home.clone()),
            version: Some(j.version.clone()),
            major: Some(j.major),
        })
        .collect();
    Manifest {
        format: FORMAT.to_string(),
        format_version: FORMAT_VERSION,
        tool: Some(format!("pauselab {}", env!("CARGO_PKG_VERSION"))),
        experiment: ManifestExperiment {
            name: experiment.name.clone(),
            description: Some(experiment.description.clone()),
            default_variant,
            baseline_variant: Some(experiment.baseline.clone()),
            definition: Some(json_of(experiment)),
        },
        start_time_s: Some(crate::host::sys::unix_s(finished.started)),
        end_time_s: Some(crate::host::sys::unix_s(finished.ended)),
        fault_injection: Some(finished.fault_injection.clone()),
        interrupted: finished.interrupted,
        options: Some(RunSettings {
            duration_s: finished.duration.as_secs_f64(),
            jdks: finished.options.jdks.clone(),
            disk: finished.options.disk.clone(),
            no_fault: finished.options.no_fault,
        }),
        host: finished.host_facts.clone(),
        jdks,
        variants,
        fault: finished.slow_device.as_ref().map(json_of),
        stressors: finished.stressors.clone(),
        notes: finished.notes.clone(),
        cleanup_failures: finished.cleanup_failures.clone(),
        cell: finished.options.cell.clone(),
    }
}

/// Writes `matrix.json` into the matrix directory `dir` (again after every cell, so a
/// matrix stopped half-way still lists the bundles it made).
pub fn write_matrix(dir: &Path, matrix: &pauselab_bundle::MatrixRun) -> Result<(), LabError> {
    let path = dir.join(pauselab_bundle::MATRIX);
    let text = serde_json::to_string_pretty(matrix).expect("matrix.json serializes");
    write_file(&path, (text + "\n").as_bytes())
}

/// The JSON of a value of the lab's own types (they serialize to plain JSON objects).
fn json_of(value: &impl Serialize) -> serde_json::Value {
    serde_json::to_value(value).expect("lab types serialize")
}
