//! `pauselab lab run`: one experiment into one bundle, or a matrix of them
//! (`matrix.rs`); `--dry-run` prints the plan alone.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Context;
use pauselab_lab::experiment::{Experiment, FaultUse};
use pauselab_lab::experiment::{Filesystem, Gc, MountOptions};
use pauselab_lab::{journal, units, RunOptions};

use super::{exit_code, matrix, timestamp};
use crate::render::lab_plan::print_plan;
use crate::render::lab_progress::Bars;
use crate::render::lab_table::print_run;

#[derive(clap::Args)]
pub(super) struct RunArgs {
    /// Built-in experiment name or TOML file
    #[arg(default_value = "hsperf-mmap")]
    pub experiment: String,
    /// Run time: 90s, 2m, 1h; a bare number is seconds (default: the experiment's)
    #[arg(long, value_name = "DURATION", value_parser = |text: &str| units::DURATION.parse(text))]
    pub duration: Option<Duration>,
    /// JDK home or major version (11: from /usr/lib/jvm, $JAVA_HOME or `make jdks`); repeat
    /// for a matrix (every variant on every JDK, in the same run)
    #[arg(long = "jdk")]
    pub jdks: Vec<PathBuf>,
    /// Result bundle directory (default: ./pauselab-lab-NAME-DATE)
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Stress this directory (your own disk) instead of injecting the slow device; repeat
    /// for a matrix (one cell per disk)
    #[arg(long = "disk", value_name = "DIR", conflicts_with = "no_fault")]
    pub disks: Vec<PathBuf>,
    /// Do not inject the fault: show what this host does on its own
    #[arg(long)]
    pub no_fault: bool,
    /// Collector of every variant (Serial, Parallel, G1, ZGC, Shenandoah); repeat for a
    /// matrix (one cell per collector)
    #[arg(long = "gc", value_name = "GC")]
    pub gcs: Vec<Gc>,
    /// Filesystem of the slow device (ext4, xfs, btrfs); repeat for a matrix
    #[arg(long = "fs", value_name = "FS")]
    pub filesystems: Vec<Filesystem>,
    /// Mount options of the slow device, as `mount -o` takes them (noatime, lazytime,
    /// data=writeback); repeat for a matrix
    #[arg(long = "mount-options", value_name = "OPTIONS")]
    pub mount_options: Vec<MountOptions>,
    /// Run each cell of the matrix N times, in interleaved order
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// Print the plan and its expected duration, change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Print verdict.json instead of the table
    #[arg(long)]
    pub json: bool,
}

impl RunArgs {
    /// Whether the run injects the experiment's fault (no `--disk`, no `--no-fault`).
    pub fn fault(&self) -> FaultUse {
        if !self.disks.is_empty() || self.no_fault {
            FaultUse::Skip
        } else {
            FaultUse::Inject
        }
    }
}

pub(super) fn run_experiment(args: RunArgs) -> anyhow::Result<ExitCode> {
    let (experiment, text) = Experiment::load(&args.experiment)?;
    let needs_root = experiment.root_requirements(args.fault());
    if !needs_root.is_empty() && !pauselab_lab::sys::is_root() {
        anyhow::bail!(
            "lab run {}: needs root for {}; run it as root (nothing was changed)",
            args.experiment,
            needs_root.join(", ")
        );
    }
    let (plan, jdks) =
        matrix::plan(&args, &experiment).with_context(|| format!("lab run {}", args.experiment))?;
    if args.dry_run {
        let mut out = io::stdout().lock();
        print_plan(&mut out, &experiment, &plan, &jdks, args.json)?;
        return Ok(ExitCode::SUCCESS);
    }
    if matrix::is_matrix(&args) {
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
    let finished = pauselab_lab::run(experiment, text, options, stop.clone(), &mut Bars::new())
        .with_context(|| format!("lab run {}", args.experiment))?;
    let interrupted = stop.load(Ordering::SeqCst);
    for failure in &finished.cleanup_failures {
        eprintln!("pauselab: warning: could not undo {failure}; run `pauselab lab cleanup`");
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
        eprintln!(
            "pauselab: lab run {} interrupted (SIGINT or SIGTERM): rounds were cut short, host changes undone; the bundle {} holds what was measured until then",
            args.experiment,
            bundle_dir.display()
        );
    }
    Ok(exit_code(outcome.result))
}
