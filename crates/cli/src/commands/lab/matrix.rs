//! `pauselab lab run` over a matrix: the plan (printed before anything starts, or alone
//! with `--dry-run`), one ordinary run and bundle per cell and repeat, `matrix.json` beside
//! them, and the matrix table with its conclusions at the end.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Instant;

use anyhow::Context;
use pauselab_lab::experiment::{Experiment, FaultUse, Role, Schedule};
use pauselab_lab::java::Jdk;
use pauselab_lab::matrix::{MatrixRequest, Plan};
use pauselab_lab::verdict::Vulnerable;
use pauselab_lab::{journal, LabError, RunOptions};
use pauselab_report::bundle::{Bundle, MatrixRun, MATRIX_FORMAT};
use pauselab_report::model::{self, Section};

use super::{human_duration, timestamp, Bars, RunArgs, EXIT_INCONCLUSIVE};

/// Whether the command line asks for a matrix (any dimension, several disks or repeats)
/// rather than one run into one bundle.
pub(super) fn is_matrix(args: &RunArgs) -> bool {
    !args.gcs.is_empty()
        || !args.filesystems.is_empty()
        || !args.mount_options.is_empty()
        || args.disks.len() > 1
        || args.repeat > 1
}

/// The plan of the command line and the JDKs it runs on; refuses, in one line and before
/// any change, what this host cannot run.
pub(super) fn plan(args: &RunArgs, experiment: &Experiment) -> anyhow::Result<(Plan, Vec<Jdk>)> {
    let duration = args.duration.unwrap_or_else(|| experiment.duration.get());
    let jdks = pauselab_lab::java::resolve_jdks(&args.jdks)?;
    let fault = if !args.disks.is_empty() || args.no_fault {
        FaultUse::Skip
    } else {
        FaultUse::Inject
    };
    let request = MatrixRequest {
        gcs: args.gcs.clone(),
        filesystems: args.filesystems.clone(),
        mount_options: args.mount_options.clone(),
        disks: if is_matrix(args) {
            args.disks.clone()
        } else {
            Vec::new()
        },
        repeats: args.repeat,
        no_fault: args.no_fault || !args.disks.is_empty(),
        can_inject: fault == FaultUse::Inject && pauselab_lab::sys::is_root(),
    };
    let plan = pauselab_lab::matrix::plan(experiment, &request, &jdks, duration)?;
    Ok((plan, jdks))
}

/// The plan for people (or as JSON): cells, the variants and JDKs each runs, order,
/// expected duration.
pub(super) fn print_plan(
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
            "per_run_s": plan.per_run.as_secs_f64(),
            "expected_duration_s": plan.expected.as_secs_f64(),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "plan: {}: {} cell(s) x {} repeat(s) = {} run(s) of {} (about {} each with set-up and tear-down)",
        experiment.name,
        plan.cells.len(),
        plan.repeats,
        plan.runs.len(),
        human_duration(plan.duration),
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

/// Runs every cell of the plan in its order, each an ordinary run with its own journal
/// (undone before the next cell starts), writing matrix.json after each; then prints the
/// matrix.
pub(super) fn run(
    args: RunArgs,
    experiment: Experiment,
    text: String,
    plan: Plan,
    jdks: &[Jdk],
) -> anyhow::Result<ExitCode> {
    let dir = args.out.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "pauselab-lab-{}-matrix-{}",
            experiment.name,
            timestamp()
        ))
    });
    prepare_matrix_dir(&dir)?;
    print_plan(&mut io::stderr().lock(), &experiment, &plan, jdks, false)?;
    let default_gc = experiment.gc();
    let mut record = MatrixRun {
        format: MATRIX_FORMAT.to_string(),
        experiment: experiment.name.clone(),
        cells: plan
            .cells
            .iter()
            .enumerate()
            .map(|(cell, _)| {
                let mut entry = plan.cell_entry(
                    pauselab_lab::matrix::PlannedRun { cell, repeat: 0 },
                    default_gc,
                );
                entry.repeat = 0;
                entry
            })
            .collect(),
        repeats: plan.repeats,
        duration_s: plan.duration.as_secs_f64(),
        expected_duration_s: plan.expected.as_secs_f64(),
        actual_duration_s: None,
        bundles: Vec::new(),
        interrupted: false,
    };
    pauselab_lab::bundle::write_matrix(&dir, &record)?;
    let stop = pauselab_lab::runner::interrupt_flag()?;
    let begin = Instant::now();
    let mut results = Vec::new();
    for (number, planned) in plan.runs.iter().enumerate() {
        if stop.load(Ordering::SeqCst) {
            record.interrupted = true;
            break;
        }
        let name = plan.bundle_name(*planned);
        let cell = &plan.cells[planned.cell];
        let remaining = plan.per_run * (plan.runs.len() - number) as u32;
        eprintln!(
            "run {}/{}: {name} (about {} left)",
            number + 1,
            plan.runs.len(),
            human_duration(remaining)
        );
        let cell_experiment = experiment
            .for_cell(cell)
            .map_err(|e| anyhow::anyhow!("lab run {}: {e}", args.experiment))?;
        let options = RunOptions {
            duration: Some(plan.duration),
            jdks: args.jdks.clone(),
            out: dir.join(&name),
            disk: cell.disk.clone(),
            no_fault: args.no_fault,
            state_dir: journal::state_dir(),
            cell: Some(plan.cell_entry(*planned, default_gc)),
        };
        let mut observer = Bars::new();
        let finished = match pauselab_lab::run(
            cell_experiment,
            text.clone(),
            options,
            stop.clone(),
            &mut observer,
        ) {
            Ok(finished) => finished,
            Err(LabError::Interrupted) => {
                record.interrupted = true;
                break;
            }
            Err(e) => {
                record.interrupted = true;
                record.actual_duration_s = Some(begin.elapsed().as_secs_f64());
                pauselab_lab::bundle::write_matrix(&dir, &record)?;
                return Err(anyhow::Error::new(e)).with_context(|| {
                    format!(
                        "lab run {}: {name} (the cells before it are in {})",
                        args.experiment,
                        dir.display()
                    )
                });
            }
        };
        for failure in &finished.cleanup_failures {
            eprintln!("pauselab: warning: could not undo {failure}; run `pauselab lab cleanup`");
        }
        let outcome = pauselab_lab::bundle::write(&finished)?;
        eprintln!("  {name}: {}", super::result_word(outcome.result));
        results.push(outcome.result);
        record.bundles.push(name);
        record.interrupted = finished.interrupted;
        record.actual_duration_s = Some(begin.elapsed().as_secs_f64());
        pauselab_lab::bundle::write_matrix(&dir, &record)?;
        if finished.interrupted {
            break;
        }
    }
    record.actual_duration_s = Some(begin.elapsed().as_secs_f64());
    pauselab_lab::bundle::write_matrix(&dir, &record)?;
    // The runs' answers combine as every verdict's do; an interrupted matrix cannot say No.
    let result = match pauselab_lab::verdict::combine(&results) {
        Vulnerable::No if record.interrupted => Vulnerable::Inconclusive,
        combined => combined,
    };
    report(&args, &dir, &record, &results, result)?;
    if record.interrupted {
        eprintln!(
            "pauselab: lab run {} interrupted (SIGINT or SIGTERM): {} of {} runs done, host changes undone; {} holds them",
            args.experiment,
            record.bundles.len(),
            plan.runs.len(),
            dir.display()
        );
    }
    Ok(match result {
        Vulnerable::Yes => ExitCode::from(super::super::EXIT_CONDITION),
        Vulnerable::Inconclusive => ExitCode::from(EXIT_INCONCLUSIVE),
        Vulnerable::No => ExitCode::SUCCESS,
    })
}

/// The matrix of the bundles made, its conclusions and the plan's prediction against the
/// time taken.
fn report(
    args: &RunArgs,
    dir: &Path,
    record: &MatrixRun,
    results: &[Vulnerable],
    result: Vulnerable,
) -> anyhow::Result<()> {
    let mut sections: Vec<Section> = Vec::new();
    for name in &record.bundles {
        sections.push(Section::from_bundle(&Bundle::open(&dir.join(name))?));
    }
    let matrix = model::matrix(&sections);
    let actual = record.actual_duration_s.unwrap_or(0.0);
    let mut out = io::stdout().lock();
    if args.json {
        let doc = serde_json::json!({
            "matrix_dir": dir,
            "result": result,
            "vulnerable_runs": results.iter().filter(|r| **r == Vulnerable::Yes).count(),
            "run": record,
            "matrix": matrix,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(());
    }
    out.write_all(pauselab_report::text::matrix_text(&matrix).as_bytes())?;
    writeln!(
        out,
        "experiment {}: {} (vulnerable in {} of {} runs); {} of {} cells consistent across repeats",
        record.experiment,
        super::result_word(result),
        results.iter().filter(|r| **r == Vulnerable::Yes).count(),
        results.len(),
        matrix.consistent_cells,
        matrix.cells
    )?;
    writeln!(
        out,
        "took {:.0} s, planned {:.0} s ({:+.0} %)",
        actual,
        record.expected_duration_s,
        (actual / record.expected_duration_s.max(1.0) - 1.0) * 100.0
    )?;
    writeln!(
        out,
        "matrix: {} (pauselab report --matrix {} --html matrix.html)",
        dir.display(),
        dir.display()
    )?;
    Ok(())
}

/// The matrix directory must not exist or be empty, as a bundle's.
fn prepare_matrix_dir(dir: &Path) -> anyhow::Result<()> {
    if dir.exists() {
        let mut entries = std::fs::read_dir(dir)
            .with_context(|| format!("{}: cannot read the output directory", dir.display()))?;
        anyhow::ensure!(
            entries.next().is_none(),
            "{}: output directory is not empty; choose another --out",
            dir.display()
        );
    }
    pauselab_pause::output::create_dir(dir)
        .with_context(|| format!("{}: cannot create the output directory", dir.display()))
}
