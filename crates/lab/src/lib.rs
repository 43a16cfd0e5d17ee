//! pauselab-lab: reproduce stalls on this host and compare JVM variants side by side.
//!
//! An [`experiment::Experiment`] (TOML) names a workload, JVM variants, stressors and a
//! fault; [`runner::run`] sets up the host through the [`journal::Journal`] (every change
//! recorded before it is made and undone in reverse order on every exit path), runs every
//! variant on every JDK at the same time, and [`bundle::finish`] summarises, judges and
//! writes the result bundle; [`run_matrix`] runs a matrix of such runs. See docs/lab.md.

// stdout and stderr may be closed pipes (`| head`): `println!`/`eprintln!` would panic
// there, and a lab run must never die before undoing its host changes. Output goes through
// `writeln!` and `?`, messages through `pauselab_pause::eprintln_lossy!`.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

// Layers, bottom to top: each imports only its own layer and those below it (checked by
// tests/it/layers.rs; docs/ARCHITECTURE.md, "The lab's layers").
pub mod bundle;
pub mod experiment;
mod host;
mod judge;
mod jvm;
mod measure;
mod run;
mod stress;

use std::path::Path;

pub use experiment::{units, Experiment};
pub use host::{cgroup, fault, journal, sys};
pub use judge::verdict;
pub use jvm::java;
pub use measure::follow::IntervalLogFollower;
pub use measure::jmh;
pub use run::matrix;
pub use run::runner::{self, run, RunOptions};
pub use run::{run_matrix, Executed, Executor, Matrix, MatrixObserver, MatrixOutcome};

#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error("{path}: cannot {what}: {source}")]
    Io {
        path: String,
        what: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Host(String),
    #[error("{0}")]
    Experiment(String),
    #[error("{0}")]
    Java(String),
    #[error("interrupted")]
    Interrupted,
    /// A part of the experiment does not hold together.
    #[error(transparent)]
    Part(#[from] experiment::PartError),
    /// This host's cgroups lack what the run needs.
    #[error(transparent)]
    Cgroup(#[from] host::cgroup::CgroupError),
    /// A stressor, the memory filler or the THP governor could not start.
    #[error(transparent)]
    Stress(#[from] stress::StressError),
    /// A system call or tool failed (`host::sys`).
    #[error(transparent)]
    Sys(#[from] host::sys::SysError),
    /// A run of a matrix failed; the runs before it are in `dir`.
    #[error("lab run {named}: {bundle} (the cells before it are in {})", dir.display())]
    MatrixRun {
        named: String,
        bundle: String,
        dir: std::path::PathBuf,
        #[source]
        source: Box<LabError>,
    },
}

impl LabError {
    pub fn io(path: &Path, what: &str, source: std::io::Error) -> LabError {
        LabError::Io {
            path: path.display().to_string(),
            what: what.to_string(),
            source,
        }
    }
}
