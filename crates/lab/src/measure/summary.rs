//! The summary of one variant on one JDK (`summary.json`): its pause and latency
//! statistics after the warm-up, its measurements, and what went wrong reading them. The
//! verdict fields are left for the judges.

use std::fs;
use std::path::Path;
use std::time::SystemTime;

use crate::experiment::layout::{GC_LOG, HICCUP_LOG, LATENCY_LOG, SAFEPOINT_LOG, WORKLOAD_OUT};
use crate::experiment::Experiment;
use crate::measure::follow::IntervalLogFollower;
use crate::measure::hlog;
use crate::measure::instance::Instance;
use crate::measure::measurement::{gc_log, workload_summary};
use crate::measure::Measurement;
use pauselab_bundle::{ReaderSummary, VariantSummary, VariantVerdict};
use pauselab_pause::{DurationStats, Summary};

/// Reads what `instance` left (its followed logs, workload output, GC log, JMH result)
/// into its summary, and writes its safepoint interval log. `run_started` and `run_ended`
/// bound the run (the safepoint log's start when the JVM's own is unknown, and its end).
pub fn summarise(
    instance: &Instance,
    experiment: &Experiment,
    run_started: SystemTime,
    run_ended: SystemTime,
) -> VariantSummary {
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
    if instance.skipped.is_some() {
        return summary;
    }
    let warmup_s = experiment.warmup.get().as_secs_f64();
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
    if let Some(safepoints) = &instance.follow.safepoints {
        match safepoints.points() {
            Ok(points) => {
                let mut after_warmup = DurationStats::new();
                for p in points.iter().filter(|p| p.uptime_s >= warmup_s) {
                    after_warmup.record((p.total_ms * 1e6) as u64);
                }
                summary.safepoints = Some(after_warmup.summary());
                let start = instance.started_at().unwrap_or(run_started);
                let end_s = run_ended
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
                    summary.errors.push(e.to_string());
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
    if let Some(workload) = workload_summary(&instance.out_dir.join(WORKLOAD_OUT)) {
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
    let gc_path = instance.out_dir.join(GC_LOG);
    if experiment.workload.gc_log.is_some() && gc_path.exists() {
        match gc_log(&gc_path, warmup_s) {
            Ok(gc) => {
                summary.measurements.extend(gc.measurements);
                summary.gc_findings = gc.findings;
            }
            Err(e) => summary.errors.push(e.to_string()),
        }
    }
    if let Some(result) = crate::measure::jmh::result_file(experiment, &instance.out_dir) {
        match crate::measure::jmh::measurements(&result) {
            Ok(jmh) => summary.measurements.extend(jmh),
            Err(e) => summary.errors.push(e.to_string()),
        }
    }
    if summary.hiccups.as_ref().is_some_and(|h| h.count == 0) {
        summary
            .errors
            .push(format!("{}: no hiccup samples", hiccup_path.display()));
    }
    summary
}

/// The hsperf reader companion's log: reads, errors, the slowest read.
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

/// The statistics of a followed interval log after the warm-up; an error naming the file
/// when it holds no `what` after the warm-up or could not be read.
fn interval_log_stats(
    log: &IntervalLogFollower,
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
