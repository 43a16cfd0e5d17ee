//! `pauselab lab`: reproduce a stall on this host and compare JVM variants side by side.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use pauselab_lab::experiment::{Experiment, FaultUse, BUILTIN};
use pauselab_lab::journal;
use pauselab_lab::verdict::Vulnerable;
use pauselab_render::{print_cleanup, print_experiments, ListedExperiment};

mod args;
mod matrix;
mod run;

/// Exit code when a run could not decide (noisy host, no baseline data, interrupted).
pub const EXIT_INCONCLUSIVE: u8 = 4;

#[derive(clap::Args)]
#[command(arg_required_else_help = true)]
pub struct Args {
    #[command(subcommand)]
    command: LabCommand,
}

#[derive(Subcommand)]
enum LabCommand {
    /// List the built-in experiments
    List {
        #[arg(long)]
        json: bool,
    },
    /// Print an experiment's TOML
    Show { name: String },
    /// Run an experiment (default: hsperf-mmap for 2 minutes); changes the host and undoes it
    Run(Box<args::RunArgs>),
    /// Undo what runs killed with SIGKILL left on the host (mounts, loop devices, throttles, files, processes)
    Cleanup {
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        LabCommand::List { json } => list(json),
        LabCommand::Show { name } => {
            let (_, text) = Experiment::load(&name)?;
            io::stdout().lock().write_all(text.as_bytes())?;
            Ok(ExitCode::SUCCESS)
        }
        LabCommand::Cleanup { json } => cleanup(json),
        LabCommand::Run(run_args) => run::run_experiment(*run_args),
    }
}

fn list(json: bool) -> anyhow::Result<ExitCode> {
    let mut listed = Vec::new();
    for (name, text) in BUILTIN {
        let experiment = Experiment::parse(text, name)?;
        listed.push(ListedExperiment {
            expected: pauselab_lab::matrix::expected_run_duration(
                &experiment,
                experiment.duration.get(),
                1,
                experiment.fault.is_some(),
            ),
            root_for: experiment.root_requirements(FaultUse::Inject),
            experiment,
        });
    }
    print_experiments(&mut io::stdout().lock(), &listed, json)?;
    Ok(ExitCode::SUCCESS)
}

fn cleanup(json: bool) -> anyhow::Result<ExitCode> {
    let state = journal::state_dir();
    let reports = journal::cleanup_stale(&state).context("lab cleanup")?;
    let journals = state.join("lab/journals");
    if print_cleanup(&mut io::stdout().lock(), &reports, &journals, json)? {
        anyhow::bail!("some changes could not be undone; the journals were kept, fix the cause and run `pauselab lab cleanup` again");
    }
    Ok(ExitCode::SUCCESS)
}

/// The exit code of an answer: 0 not vulnerable, 3 vulnerable, 4 inconclusive.
fn exit_code(result: Vulnerable) -> ExitCode {
    match result {
        Vulnerable::Yes => ExitCode::from(super::EXIT_CONDITION),
        Vulnerable::No => ExitCode::SUCCESS,
        Vulnerable::Inconclusive => ExitCode::from(EXIT_INCONCLUSIVE),
    }
}

/// Local-free UTC timestamp for default bundle names: 20261121-234512.
fn timestamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let t = pauselab_pause::civil::UtcTime::from_epoch_ms(secs as i64 * 1000);
    format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}
