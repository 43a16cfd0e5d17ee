//! `pauselab lab run` over a matrix: the command line as the lab's matrix request and
//! plan, the lab's executor run with real JVMs, the matrix of the bundles it made.

use std::io;
use std::path::PathBuf;
use std::process::ExitCode;

use pauselab_lab::experiment::Experiment;
use pauselab_lab::java::Jdk;
use pauselab_lab::matrix::Plan;
use pauselab_lab::{bundle::JvmExecutor, journal, Matrix};
use pauselab_render::{print_matrix, Bars, MatrixLines};
use pauselab_report::bundle::Bundle;
use pauselab_report::model::Section;

use super::args::RunArgs;
use super::{exit_code, timestamp};

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
        observer: &mut Bars::default(),
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
    let table = pauselab_report::matrix::matrix(&sections);
    print_matrix(&mut io::stdout().lock(), &dir, &done, &table, args.json)?;
    if done.record.interrupted {
        pauselab_pause::eprintln_lossy!(
            "pauselab: lab run {} interrupted (SIGINT or SIGTERM): {} of {} runs done, host changes undone; {} holds them",
            args.experiment,
            done.record.bundles.len(),
            plan.runs.len(),
            dir.display()
        );
    }
    Ok(exit_code(done.result))
}
