//! One variant on one JDK as the run starts, follows and ends it: what its summary is
//! measured from.

use std::path::PathBuf;
use std::time::SystemTime;

use serde::Serialize;

use crate::experiment::{Role, TmpLocation};

/// One variant on one JDK, as run.
#[derive(Debug, Clone, Serialize)]
pub struct Instance {
    pub jdk: String,
    pub variant: String,
    pub role: Role,
    pub tmp: TmpLocation,
    /// Directory bound over the JVM's /tmp (None for the host's own /tmp).
    pub tmp_dir: Option<PathBuf>,
    /// Where the JVM writes its GC log (copied into `out_dir` when elsewhere).
    pub gc_log: Option<PathBuf>,
    pub out_dir: PathBuf,
    pub command: Vec<String>,
    pub pid: Option<u32>,
    /// Why it did not run.
    pub skipped: Option<String>,
    /// How it ended, when it ended on its own before the end of the run.
    pub early_exit: Option<String>,
    pub companions: Vec<String>,
    pub exit_code: Option<i32>,
    /// Seconds from start to exit, when the JVM ended on its own.
    pub elapsed_s: Option<f64>,
    /// Host changes made for this variant alone (cgroup, THP).
    pub host_changes: Vec<String>,
    /// Measurements the runner itself takes (CPU throttling of the variant's cgroup).
    pub runner_measurements: Vec<crate::measure::Measurement>,
    #[serde(skip)]
    pub(crate) started_at: Option<SystemTime>,
    /// Its logs, read as the JVM writes them (progress, then the bundle).
    #[serde(skip)]
    pub follow: Follow,
}

impl Instance {
    /// `<variant>-<jdk label>`, unique in the run; the bundle directory name.
    pub fn id(&self) -> String {
        format!("{}-{}", self.variant, self.jdk)
    }

    pub fn started_at(&self) -> Option<SystemTime> {
        self.started_at
    }
}

/// The logs of one instance that the lab reads while the JVM writes them.
#[derive(Debug, Clone, Default)]
pub struct Follow {
    pub safepoints: Option<crate::measure::follow::SafepointFollower>,
    pub hiccups: Option<crate::measure::follow::IntervalLogFollower>,
    pub latency: Option<crate::measure::follow::IntervalLogFollower>,
    pub gaps: Option<crate::measure::follow::GapFollower>,
}

impl Follow {
    pub(crate) fn poll(&mut self, at_end: bool) {
        if let Some(f) = &mut self.safepoints {
            f.poll(at_end);
        }
        for f in [&mut self.hiccups, &mut self.latency].into_iter().flatten() {
            f.poll(at_end);
        }
        if let Some(f) = &mut self.gaps {
            f.poll(at_end);
        }
    }
}
