//! `pauselab lab run`'s command line: one experiment, or a matrix of them, and the plan it
//! asks for.

use std::path::PathBuf;
use std::time::Duration;

use pauselab_lab::experiment::units::WrittenDuration;
use pauselab_lab::experiment::{Experiment, FaultUse};
use pauselab_lab::experiment::{Filesystem, Gc, MountOptions};
use pauselab_lab::java::Jdk;
use pauselab_lab::matrix::{MatrixRequest, Plan};
use pauselab_lab::units;

#[derive(clap::Args)]
pub struct RunArgs {
    /// Built-in experiment name or TOML file
    #[arg(default_value = "hsperf-mmap")]
    pub experiment: String,
    /// Run time: 90s, 2m, 1h; a bare number is seconds (default: the experiment's)
    #[arg(long, value_name = "DURATION", value_parser = |text: &str| units::DURATION.parse(text))]
    pub duration: Option<Duration>,
    /// Time at the start of each run left out of its measurements, as --duration takes it
    /// (default: the experiment's `warmup`)
    #[arg(long, value_name = "DURATION", value_parser = |text: &str| text.parse::<WrittenDuration>())]
    pub warmup: Option<WrittenDuration>,
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

    /// The experiment as this command line runs it: `--warmup` replaces its warm-up (the
    /// bundle's copy of the definition shows the one used).
    pub fn adjust(&self, experiment: &mut Experiment) {
        if let Some(warmup) = &self.warmup {
            experiment.warmup = warmup.clone();
        }
    }

    /// Whether the command line asks for a matrix (any dimension, several disks or repeats)
    /// rather than one run into one bundle.
    pub fn is_matrix(&self) -> bool {
        !self.gcs.is_empty()
            || !self.filesystems.is_empty()
            || !self.mount_options.is_empty()
            || self.disks.len() > 1
            || self.repeat > 1
    }

    /// The plan of the command line and the JDKs it runs on; refuses, in one line and before
    /// any change, what this host cannot run.
    pub fn plan(&self, experiment: &Experiment) -> anyhow::Result<(Plan, Vec<Jdk>)> {
        let duration = self.duration.unwrap_or_else(|| experiment.duration.get());
        let jdks = pauselab_lab::java::resolve_jdks(&self.jdks)?;
        let request = MatrixRequest {
            gcs: self.gcs.clone(),
            filesystems: self.filesystems.clone(),
            mount_options: self.mount_options.clone(),
            disks: if self.is_matrix() {
                self.disks.clone()
            } else {
                Vec::new()
            },
            repeats: self.repeat,
            no_fault: self.no_fault || !self.disks.is_empty(),
            can_inject: self.fault() == FaultUse::Inject && pauselab_lab::sys::is_root(),
        };
        let plan = pauselab_lab::matrix::plan(experiment, &request, &jdks, duration)?;
        Ok((plan, jdks))
    }
}
