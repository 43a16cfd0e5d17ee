//! The plan of a lab run (`lab run --dry-run`, and before a matrix starts): its cells,
//! the variants and JDKs each runs, their order, the expected duration.

use std::io::Write;
use std::time::Duration;

use pauselab_lab::experiment::{Experiment, Role, Schedule};
use pauselab_lab::java::Jdk;
use pauselab_lab::matrix::Plan;

/// The plan for people (or as JSON): cells, the variants and JDKs each runs, order,
/// expected duration.
pub fn print_plan(
    out: &mut dyn Write,
    experiment: &Experiment,
    plan: &Plan,
    jdks: &[Jdk],
    json: bool,
) -> anyhow::Result<()> {
    if json {
        let doc = serde_json::json!({
            "experiment": experiment.name,
            "schedule": experiment.schedule,
            "variants": experiment.variants.iter().map(|v| serde_json::json!({
                "name": v.name,
                "role": v.role,
                "flags": v.flags,
            })).collect::<Vec<_>>(),
            "jdks": jdks.iter().map(|j| serde_json::json!({
                "label": j.label,
                "major": j.major,
                "home": j.home,
                "version": j.version,
            })).collect::<Vec<_>>(),
            "cells": plan.cells.iter().map(|c| serde_json::json!({
                "label": c.label(),
                "gc": c.gc.map(|g| g.name()),
                "filesystem": c.filesystem.map(|f| f.name()),
                "mount_options": c.mount_options.as_ref().map(|o| o.as_str()),
                "disk": c.disk,
            })).collect::<Vec<_>>(),
            "repeats": plan.repeats,
            "runs": plan.runs.iter().map(|r| plan.bundle_name(*r)).collect::<Vec<_>>(),
            "duration_s": plan.duration.as_secs_f64(),
            "warmup_s": experiment.warmup.get().as_secs_f64(),
            "per_run_s": plan.per_run.as_secs_f64(),
            "expected_duration_s": plan.expected.as_secs_f64(),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "plan: {}: {} cell(s) x {} repeat(s) = {} run(s) of {}{} (about {} each with set-up and tear-down)",
        experiment.name,
        plan.cells.len(),
        plan.repeats,
        plan.runs.len(),
        human_duration(plan.duration),
        match experiment.warmup.get() {
            warmup if warmup.is_zero() => String::new(),
            warmup => format!(", the first {} not measured", human_duration(warmup)),
        },
        human_duration(plan.per_run)
    )?;
    for (i, cell) in plan.cells.iter().enumerate() {
        let mut parts = Vec::new();
        if let Some(gc) = cell.gc {
            parts.push(format!("gc {gc}"));
        }
        if let Some(fs) = cell.filesystem {
            parts.push(format!("fs {fs}"));
        }
        if let Some(o) = &cell.mount_options {
            parts.push(format!("mount -o {o}"));
        }
        if let Some(d) = &cell.disk {
            parts.push(format!("disk {}", d.display()));
        }
        if parts.is_empty() {
            parts.push("as the experiment is written".into());
        }
        writeln!(
            out,
            "  cell {:>2}  {:<28} {}",
            i + 1,
            cell.label(),
            parts.join(", ")
        )?;
    }
    let variants: Vec<String> = experiment
        .variants
        .iter()
        .map(|v| format!("{} ({})", v.name, role_word(v.role)))
        .collect();
    let schedule = match experiment.schedule {
        Schedule::Together => "together",
        Schedule::OneByOne => "one by one",
    };
    writeln!(
        out,
        "  each cell runs {} variant(s), {schedule}: {}",
        variants.len(),
        variants.join(", ")
    )?;
    for jdk in jdks {
        writeln!(
            out,
            "  on {}: {} ({})",
            jdk.label,
            jdk.home.display(),
            jdk.version
        )?;
    }
    if plan.repeats > 1 {
        let order: Vec<String> = plan.runs.iter().map(|r| plan.bundle_name(*r)).collect();
        writeln!(out, "  order: {}", order.join(", "))?;
    }
    writeln!(out, "expected duration: {}", human_duration(plan.expected))?;
    Ok(())
}

fn role_word(role: Role) -> &'static str {
    match role {
        Role::Subject => "subject",
        Role::Mitigation => "mitigation",
        Role::Baseline => "baseline",
    }
}

/// `2m05s`, `45s`.
pub fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}
