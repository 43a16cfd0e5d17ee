//! `pauselab lab run` over a matrix: the command line as the lab's matrix request and
//! plan, the lab's executor run with real JVMs, the matrix of the bundles it made.

use std::io;
use std::path::PathBuf;
use std::process::ExitCode;

use pauselab_lab::experiment::{Experiment, FaultUse};
use pauselab_lab::java::Jdk;
use pauselab_lab::matrix::{MatrixRequest, Plan};
use pauselab_lab::{bundle::JvmExecutor, journal, Matrix};
use pauselab_report::bundle::Bundle;
use pauselab_report::model::{self, Section};

use super::run::RunArgs;
use super::{exit_code, timestamp};
use crate::render::lab_matrix::{print_matrix, MatrixLines};
use crate::render::lab_progress::Bars;

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
        can_inject: args.fault() == FaultUse::Inject && pauselab_lab::sys::is_root(),
    };
    let plan = pauselab_lab::matrix::plan(experiment, &request, &jdks, duration)?;
    Ok((plan, jdks))
}

/// Runs every run of the plan in its order, each an ordinary run with its own journal
/// (undone before the next starts), then prints the matrix.
pub(super) fn run(
    args: &RunArgs,
    experiment: &Experiment,
    text: &str,
    plan: &Plan,
    jdks: &[Jdk],
) -> anyhow::Result<ExitCode> {
    let dir = args.out.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "pauselab-lab-{}-matrix-{}",
            experiment.name,
            timestamp()
        ))
    });
    let matrix = Matrix {
        experiment,
        text,
        named: &args.experiment,
        plan,
        dir: dir.clone(),
        jdks: args.jdks.clone(),
        no_fault: args.no_fault,
        state_dir: journal::state_dir(),
    };
    let stop = pauselab_lab::runner::interrupt_flag()?;
    let mut executor = JvmExecutor {
        observer: &mut Bars::new(),
    };
    let mut lines = MatrixLines {
        experiment,
        plan,
        jdks,
    };
    let done = pauselab_lab::run_matrix(&matrix, &mut executor, &stop, &mut lines)?;
    let mut sections: Vec<Section> = Vec::new();
    for name in &done.record.bundles {
        sections.push(Section::from_bundle(&Bundle::open(&dir.join(name))?));
    }
    let table = model::matrix(&sections);
    print_matrix(&mut io::stdout().lock(), &dir, &done, &table, args.json)?;
    if done.record.interrupted {
        eprintln!(
            "pauselab: lab run {} interrupted (SIGINT or SIGTERM): {} of {} runs done, host changes undone; {} holds them",
            args.experiment,
            done.record.bundles.len(),
            plan.runs.len(),
            dir.display()
        );
    }
    Ok(exit_code(done.result))
}
