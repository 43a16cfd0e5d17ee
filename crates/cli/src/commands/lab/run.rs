//! `pauselab lab run`: one experiment into one bundle, or a matrix of them
//! (`matrix.rs`); `--dry-run` prints the plan alone.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use anyhow::Context;
use pauselab_lab::experiment::Experiment;
use pauselab_lab::{journal, RunOptions};
use pauselab_render::{print_plan, print_run, Bars};

use super::args::RunArgs;
use super::{exit_code, matrix, timestamp};

pub(super) fn run_experiment(args: RunArgs) -> anyhow::Result<ExitCode> {
    let (mut experiment, text) = Experiment::load(&args.experiment)?;
    args.adjust(&mut experiment);
    let needs_root = experiment.root_requirements(args.fault());
    if !needs_root.is_empty() && !pauselab_lab::sys::is_root() {
        anyhow::bail!(
            "lab run {}: needs root for {}; run it as root (nothing was changed)",
            args.experiment,
            needs_root.join(", ")
        );
    }
    let (plan, jdks) = args
        .plan(&experiment)
        .with_context(|| format!("lab run {}", args.experiment))?;
    if args.dry_run {
        let mut out = io::stdout().lock();
        print_plan(&mut out, &experiment, &plan, &jdks, args.json)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.is_matrix() {
        return matrix::run(&args, &experiment, &text, &plan, &jdks);
    }
    let columns = experiment.measurements.clone();
    let conclusion = experiment.conclusion.clone();
    let bundle_dir = args.out.clone().unwrap_or_else(|| {
        PathBuf::from(format!("pauselab-lab-{}-{}", experiment.name, timestamp()))
    });
    let options = RunOptions {
        duration: args.duration,
        jdks: args.jdks.clone(),
        out: bundle_dir.clone(),
        disk: args.disks.first().cloned(),
        no_fault: args.no_fault,
        state_dir: journal::state_dir(),
        cell: None,
    };
    let stop = pauselab_lab::runner::interrupt_flag()?;
    let mut bars = Bars::default();
    let finished = pauselab_lab::run(experiment, text, options, stop.clone(), &mut bars)
        .with_context(|| format!("lab run {}", args.experiment))?;
    let interrupted = stop.load(Ordering::SeqCst);
    for failure in &finished.cleanup_failures {
        pauselab_pause::eprintln_lossy!(
            "pauselab: warning: could not undo {failure}; run `pauselab lab cleanup`"
        );
    }
    let outcome = pauselab_lab::bundle::finish(&finished)?;
    let mut out = io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&outcome)?)?;
    } else {
        print_run(
            &mut out,
            &outcome,
            &columns,
            conclusion.as_ref(),
            &bundle_dir,
        )?;
    }
    if interrupted {
        // On stderr, also with --json: the run was cut short, whatever the table says.
        pauselab_pause::eprintln_lossy!(
            "pauselab: lab run {} interrupted (SIGINT or SIGTERM): rounds were cut short, host changes undone; the bundle {} holds what was measured until then",
            args.experiment,
            bundle_dir.display()
        );
    }
    Ok(exit_code(outcome.result))
}
