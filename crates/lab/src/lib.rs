//! pauselab-lab: reproduce stalls on this host and compare JVM variants side by side.
//!
//! An [`experiment::Experiment`] (TOML) names a workload, JVM variants, stressors and a
//! fault; [`runner::run`] sets up the host through the [`journal::Journal`] (every change
//! recorded before it is made and undone in reverse order on every exit path), runs every
//! variant on every JDK at the same time, and [`bundle::write`] judges the results and
//! writes the result bundle. See docs/lab.md.

pub mod bundle;
pub mod cgroup;
pub mod companion;
pub mod experiment;
pub mod fault;
pub mod follow;
pub mod hlog;
pub mod hostfacts;
pub mod hostseries;
pub mod hostsettings;
pub mod isolation;
pub mod java;
pub mod jdk_lookup;
pub mod jmh;
pub mod journal;
pub mod measure;
pub mod memory;
pub mod prepare;
pub mod pressure;
pub mod runner;
pub mod safepoints;
pub mod stressors;
pub mod sys;
pub mod testpoint;
pub mod thp;
pub mod units;
pub mod verdict;

use std::path::Path;

pub use experiment::Experiment;
pub use runner::{run, RunOptions};

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
