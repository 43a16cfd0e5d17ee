//! `manifest.json`: what ran where. The fields the report reads are typed; the detail only
//! a person or a script reads (the experiment's definition, the slow device) stays JSON.
//! Bundles of the first lab versions lack the run's own details (tool, options, commands,
//! pids, notes): those fields default.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::verdict::Role;

/// `manifest.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`crate::FORMAT`].
    pub format: String,
    /// See [`crate::check_format`].
    pub format_version: u32,
    /// `pauselab <version>` that wrote the bundle.
    #[serde(default)]
    pub tool: Option<String>,
    /// The experiment.
    pub experiment: ManifestExperiment,
    /// Seconds since the epoch.
    #[serde(default)]
    pub start_time_s: Option<f64>,
    /// Seconds since the epoch.
    #[serde(default)]
    pub end_time_s: Option<f64>,
    /// `slow-stable-pages`, `none`, or `disk`.
    #[serde(default)]
    pub fault_injection: Option<String>,
    /// Whether the run was stopped early.
    #[serde(default)]
    pub interrupted: bool,
    /// The command line's settings.
    #[serde(default)]
    pub options: Option<RunSettings>,
    /// The host's facts.
    #[serde(default)]
    pub host: Host,
    /// The JDKs the variants ran on.
    pub jdks: Vec<ManifestJdk>,
    /// Every variant on every JDK.
    pub variants: Vec<VariantEntry>,
    /// The slow device, when one was set up.
    #[serde(default)]
    pub fault: Option<serde_json::Value>,
    /// The stressors that ran.
    #[serde(default)]
    pub stressors: Vec<String>,
    /// What the run noted.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Host changes that could not be undone.
    #[serde(default)]
    pub cleanup_failures: Vec<String>,
    /// The matrix cell and repeat this bundle is, when it is part of a matrix run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<crate::matrix::CellEntry>,
}

/// The experiment of a bundle.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ManifestExperiment {
    /// Its name.
    pub name: String,
    /// One sentence.
    #[serde(default)]
    pub description: Option<String>,
    /// The configuration users run by default (the one the matrix shows).
    #[serde(default)]
    pub default_variant: Option<String>,
    /// The variant verdicts compare against.
    #[serde(default)]
    pub baseline_variant: Option<String>,
    /// The experiment as run; its `measurements` name the report's measurement columns.
    #[serde(default)]
    pub definition: Option<serde_json::Value>,
}

impl ManifestExperiment {
    /// Measurement names the experiment shows as columns (docs/lab.md, "Measurements").
    pub fn measurement_columns(&self) -> Vec<String> {
        self.definition
            .as_ref()
            .and_then(|d| d["measurements"].as_array())
            .map(|names| {
                names
                    .iter()
                    .filter_map(|n| n.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The settings of `pauselab lab run`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSettings {
    /// The run's length.
    pub duration_s: f64,
    /// `--jdk` homes given.
    pub jdks: Vec<PathBuf>,
    /// `--disk DIR`.
    pub disk: Option<PathBuf>,
    /// `--no-fault`.
    pub no_fault: bool,
}

/// The host's facts. Facts the report does not use are kept in `other`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Host {
    /// `/proc/sys/kernel/hostname`.
    #[serde(default)]
    pub hostname: Option<String>,
    /// The kernel release.
    #[serde(default)]
    pub kernel: Option<String>,
    /// The distribution's pretty name.
    #[serde(default)]
    pub distribution: Option<String>,
    /// The CPU model.
    #[serde(default)]
    pub cpu: Option<String>,
    /// Online CPUs.
    #[serde(default)]
    pub cpus: Option<u32>,
    /// Physical memory.
    #[serde(default)]
    pub memory_bytes: Option<u64>,
    /// Transparent huge pages mode.
    #[serde(default)]
    pub thp: Option<String>,
    /// Swap size.
    #[serde(default)]
    pub swap_bytes: Option<u64>,
    /// The kernel's dirty page settings.
    #[serde(default)]
    pub dirty: Option<BTreeMap<String, serde_json::Value>>,
    /// The filesystems the run used.
    #[serde(default)]
    pub paths: Vec<HostPath>,
    /// Any other fact.
    #[serde(flatten)]
    pub other: BTreeMap<String, serde_json::Value>,
}

/// A filesystem the run used.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostPath {
    /// `stressed` (the filesystem under stress), `gc-logs`, ...
    pub role: String,
    /// The directory.
    pub path: String,
    /// Its filesystem type.
    #[serde(default)]
    pub filesystem: Option<String>,
    /// Its device.
    #[serde(default)]
    pub device: Option<String>,
    /// Whether pages under writeback are stable (writes to them wait).
    #[serde(default)]
    pub stable_writes: Option<bool>,
    /// Any other fact (`error` when the path could not be inspected).
    #[serde(flatten)]
    pub other: BTreeMap<String, serde_json::Value>,
}

/// A JDK of the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ManifestJdk {
    /// The id variants name (`17`).
    pub id: String,
    /// Its home.
    #[serde(default)]
    pub path: Option<PathBuf>,
    /// Its version.
    #[serde(default)]
    pub version: Option<String>,
    /// Its feature release.
    #[serde(default)]
    pub major: Option<u32>,
}

/// One variant on one JDK, as it ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VariantEntry {
    /// Unique in the bundle (`<variant>-jdk<id>`).
    pub id: String,
    /// The experiment's variant name.
    pub variant: String,
    /// The `jdks[].id` it ran on.
    #[serde(default)]
    pub jdk: Option<String>,
    /// One sentence.
    #[serde(default)]
    pub description: Option<String>,
    /// The JVM's options.
    #[serde(default)]
    pub jvm_flags: Vec<String>,
    /// Its directory, relative to the bundle.
    #[serde(default)]
    pub dir: Option<String>,
    /// Its role.
    #[serde(default)]
    pub role: Option<Role>,
    /// Where its temporary directory was (`stressed`, `tmpfs`, `scratch`, `host`).
    #[serde(default)]
    pub tmp: Option<String>,
    /// Its temporary directory.
    #[serde(default)]
    pub tmp_dir: Option<PathBuf>,
    /// The JVM's command line.
    #[serde(default)]
    pub command: Vec<String>,
    /// The JVM's pid.
    #[serde(default)]
    pub pid: Option<u32>,
    /// Why it did not run.
    #[serde(default)]
    pub skipped: Option<String>,
    /// How the JVM ended before the run did.
    #[serde(default)]
    pub early_exit: Option<String>,
    /// The JVM's exit code.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// Companion processes beside the JVM.
    #[serde(default)]
    pub companions: Vec<String>,
    /// Host changes made for this variant alone.
    #[serde(default)]
    pub host_changes: Vec<String>,
    /// Seconds since the epoch.
    #[serde(default)]
    pub start_time_s: Option<f64>,
    /// The JVM's run time.
    #[serde(default)]
    pub elapsed_s: Option<f64>,
}
