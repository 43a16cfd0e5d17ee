//! The parts an experiment declares besides its workload and variants: stressors,
//! companions (memory filler, THP governor), preparation steps and the slow device. Each
//! is checked when the experiment is loaded; the layers above turn it into running code.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::experiment::units::{WrittenDuration, WrittenSize};

/// Names that become file names: letters, digits, `-` and `_`.
pub fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// A stressor as an experiment declares it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum StressorSpec {
    /// Rewrites a file of `chunk` bytes on the stressed filesystem and `fdatasync`s it, in
    /// a loop, keeping a write backlog of about one chunk. `max_rate` (bytes/s) caps it
    /// when the device is not throttled.
    DiskWriter {
        chunk: WrittenSize,
        #[serde(default)]
        max_rate: Option<WrittenSize>,
    },
    /// Calls `sync_file_range(SYNC_FILE_RANGE_WRITE)` on every file the variants keep on
    /// the stressed filesystem, every `interval`, so their pages are under writeback.
    WritebackForcer { interval: WrittenDuration },
    /// Keeps `size` of memory (at most a quarter of what is available) touched.
    MemoryHog { size: WrittenSize },
    /// Keeps `threads` threads busy `duty` percent of the time.
    CpuHog { threads: u32, duty: u32 },
}

/// The most threads one `cpu-hog` stressor starts: far past what any host's CPUs can run
/// at once, short of a thread count that exhausts the process's memory or pid limit.
pub const MAX_CPU_HOG_THREADS: u32 = 1024;

/// A part of an experiment whose values do not go together; the message names the part
/// and the values as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartError {
    #[error("stressor cpu-hog: threads = {0} is not between 1 and {MAX_CPU_HOG_THREADS}")]
    CpuHogThreads(u32),
    #[error("stressor cpu-hog: duty = {0} is not a percentage between 1 and 100")]
    CpuHogDuty(u32),
    #[error("memory pressure: leave ({leave}) must exceed floor ({floor}) by at least {} MiB, and floor must not be 0", CHUNK >> 20)]
    PressureBounds { leave: String, floor: String },
    #[error("swap size {0} is under 64m")]
    SwapTooSmall(String),
    #[error("memory_cgroup limit {0} is under 16m")]
    CgroupLimit(String),
    #[error("memory_cgroup swappiness {0} is not between 0 and 200")]
    CgroupSwappiness(u32),
    #[error("memory_cgroup filler {0} must be above 0 and below limit + swap")]
    CgroupFiller(String),
    #[error("memory_cgroup filler_limit needs a filler")]
    FillerLimitWithoutFiller,
    #[error("memory_cgroup filler_limit {filler_limit} must be above 0 and below limit {limit}")]
    FillerLimit { filler_limit: String, limit: String },
    #[error("thp governor: needs psi_low < psi_high ({psi_low} < {psi_high}) and available_low < available_high ({available_low} < {available_high})")]
    GovernorHysteresis {
        psi_low: String,
        psi_high: String,
        available_low: String,
        available_high: String,
    },
    #[error("thp governor: interval must be more than 0")]
    GovernorInterval,
    #[error("prepare step {0:?}: the name must be letters, digits, - or _")]
    StepName(String),
    #[error("prepare step {0:?} appears twice")]
    StepTwice(String),
    #[error("prepare step {0:?}: `java` is empty")]
    StepWithoutJava(String),
    #[error("host setting {path:?}: only paths under {allowed} may be set")]
    HostSettingPath { path: String, allowed: String },
    #[error("host setting {0:?}: give one value on one line")]
    HostSettingValue(String),
    /// A matrix cell that changes the slow device of an experiment without one.
    #[error(
        "experiment {0} has no slow device, so --fs and --mount-options have nothing to change"
    )]
    NoSlowDevice(String),
}

impl StressorSpec {
    /// Checks the numbers of a stressor when the experiment is read.
    pub fn check(&self) -> Result<(), PartError> {
        match self {
            StressorSpec::CpuHog { threads, duty } => {
                if !(1..=MAX_CPU_HOG_THREADS).contains(threads) {
                    return Err(PartError::CpuHogThreads(*threads));
                }
                if !(1..=100).contains(duty) {
                    return Err(PartError::CpuHogDuty(*duty));
                }
                Ok(())
            }
            // Bounded where they run (free space, MemAvailable) or harmless at any value.
            StressorSpec::DiskWriter { .. }
            | StressorSpec::WritebackForcer { .. }
            | StressorSpec::MemoryHog { .. } => Ok(()),
        }
    }
}

/// Bytes of one chunk: filled and released as a unit.
pub const CHUNK: u64 = 64 << 20;

/// How close to its limit the host is taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PressureSpec {
    /// MemAvailable the filler leaves to everything else (the JVM's heap included).
    pub leave: WrittenSize,
    /// When MemAvailable falls under this, chunks are released until it is above again.
    pub floor: WrittenSize,
    /// At most this much is held, whatever is available (default: no limit but `leave`).
    #[serde(default)]
    pub max: Option<WrittenSize>,
}

/// The spec in bytes, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub leave: u64,
    pub floor: u64,
    pub max: u64,
}

impl PressureSpec {
    pub fn bounds(&self) -> Result<Bounds, PartError> {
        let leave = self.leave.get();
        let floor = self.floor.get();
        let max = self.max.as_ref().map_or(u64::MAX, WrittenSize::get);
        // Filling stops at `leave`; releasing starts at `floor`. Without a chunk between
        // them the filler would take and give back the same chunk forever.
        if floor == 0 || leave < floor + CHUNK {
            return Err(PartError::PressureBounds {
                leave: self.leave.to_string(),
                floor: self.floor.to_string(),
            });
        }
        Ok(Bounds { leave, floor, max })
    }
}

/// A swap area for the whole run (`[swap]`): a file of `size` on the lab's device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwapSpec {
    pub size: WrittenSize,
}

impl SwapSpec {
    /// The size in bytes: at least 64 MiB (mkswap's own minimum is far lower, but a
    /// smaller area fills before anything interesting happens).
    pub fn bytes(&self) -> Result<u64, PartError> {
        let bytes = self.size.get();
        if bytes < 64 << 20 {
            return Err(PartError::SwapTooSmall(self.size.to_string()));
        }
        Ok(bytes)
    }
}

/// A variant's memory cgroup (`[variant.memory_cgroup]`): the memory its JVM and an
/// optional filler process share, like a container's limit (docs/lab.md, "Memory cgroups").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryCgroupSpec {
    /// Memory the JVM and the filler may use together ("1700m").
    pub limit: WrittenSize,
    /// Swap they may use on top of `limit`; "0" forbids it. Default: no swap limit.
    #[serde(default)]
    pub swap: Option<WrittenSize>,
    /// `false` keeps the JVM's own pages out of swap, whatever happens to the filler's.
    #[serde(default = "yes")]
    pub jvm_swap: bool,
    /// Per-cgroup swappiness (cgroup v1 only). Default: the host's `vm.swappiness` when
    /// the variant starts.
    #[serde(default)]
    pub swappiness: Option<u32>,
    /// A process in the cgroup, beside the JVM, that takes this much memory...
    #[serde(default)]
    pub filler: Option<WrittenSize>,
    /// ...this long after the JVM started, touches every page once and holds them.
    #[serde(default = "zero_seconds")]
    pub filler_after: WrittenDuration,
    /// A limit of the filler's own cgroup: past it the filler's pages go to swap by the
    /// filler's own reclaim, so the JVM does not do that work when it allocates (a
    /// neighbour in a container of its own). Default: none, the two share `limit`.
    #[serde(default)]
    pub filler_limit: Option<WrittenSize>,
}

fn yes() -> bool {
    true
}

fn zero_seconds() -> WrittenDuration {
    "0s".parse().expect("a valid duration")
}

/// A [`MemoryCgroupSpec`] in numbers, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryCgroup {
    pub limit: u64,
    /// None: no swap limit.
    pub swap: Option<u64>,
    pub jvm_swap: bool,
    pub swappiness: Option<u32>,
    /// Bytes and delay of the filler.
    pub filler: Option<(u64, Duration)>,
    /// The filler's own memory limit, bytes.
    pub filler_limit: Option<u64>,
}

impl MemoryCgroupSpec {
    pub fn resolve(&self) -> Result<MemoryCgroup, PartError> {
        let limit = self.limit.get();
        if limit < 16 << 20 {
            return Err(PartError::CgroupLimit(self.limit.to_string()));
        }
        let swap = self.swap.as_ref().map(WrittenSize::get);
        if let Some(s) = self.swappiness.filter(|s| *s > 200) {
            return Err(PartError::CgroupSwappiness(s));
        }
        let filler = match &self.filler {
            Some(size) => {
                let bytes = size.get();
                if bytes == 0 || bytes >= limit + swap.unwrap_or(u64::MAX - limit) {
                    return Err(PartError::CgroupFiller(size.to_string()));
                }
                Some((bytes, self.filler_after.get()))
            }
            None => None,
        };
        let filler_limit = self.filler_limit.as_ref().map(WrittenSize::get);
        match (filler_limit, filler) {
            (Some(_), None) => {
                return Err(PartError::FillerLimitWithoutFiller);
            }
            (Some(own), Some(_)) if own == 0 || own >= limit => {
                return Err(PartError::FillerLimit {
                    filler_limit: self
                        .filler_limit
                        .as_ref()
                        .map_or("", |w| w.text())
                        .to_string(),
                    limit: self.limit.to_string(),
                });
            }
            _ => {}
        }
        Ok(MemoryCgroup {
            limit,
            swap,
            jvm_swap: self.jvm_swap,
            swappiness: self.swappiness,
            filler,
            filler_limit,
        })
    }
}

/// When the governor turns THP off and on again (docs/experiments/memory-pressure.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GovernorSpec {
    /// Off when memory PSI `some avg10` reaches this (percent)...
    #[serde(default = "default_psi_high")]
    pub psi_high: f64,
    /// ...or when MemAvailable falls under this.
    pub available_low: WrittenSize,
    /// On again when PSI is at most `psi_low` and MemAvailable at least `available_high`...
    #[serde(default = "default_psi_low")]
    pub psi_low: f64,
    pub available_high: WrittenSize,
    /// ...for this long without a break.
    #[serde(default = "default_hold")]
    pub hold: WrittenDuration,
    #[serde(default = "default_interval")]
    pub interval: WrittenDuration,
}

fn default_psi_high() -> f64 {
    10.0
}
fn default_psi_low() -> f64 {
    1.0
}
fn default_hold() -> WrittenDuration {
    "5s".parse().expect("5s is a duration")
}
fn default_interval() -> WrittenDuration {
    "250ms".parse().expect("250ms is a duration")
}

/// The spec in numbers, checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    pub psi_high: f64,
    pub psi_low: f64,
    pub available_low: u64,
    pub available_high: u64,
    pub hold: Duration,
    pub interval: Duration,
}

impl GovernorSpec {
    pub fn thresholds(&self) -> Result<Thresholds, PartError> {
        let t = Thresholds {
            psi_high: self.psi_high,
            psi_low: self.psi_low,
            available_low: self.available_low.get(),
            available_high: self.available_high.get(),
            hold: self.hold.get(),
            interval: self.interval.get(),
        };
        // Hysteresis: otherwise one reading could switch it off and the next one on.
        if !(t.psi_low < t.psi_high && t.available_low < t.available_high) {
            return Err(PartError::GovernorHysteresis {
                psi_low: self.psi_low.to_string(),
                psi_high: self.psi_high.to_string(),
                available_low: self.available_low.to_string(),
                available_high: self.available_high.to_string(),
            });
        }
        if t.interval.is_zero() {
            return Err(PartError::GovernorInterval);
        }
        Ok(t)
    }
}

/// One preparation step of an experiment.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrepareStep {
    /// Names the step in notes and in `prepare/<jdk>/<name>.out`.
    pub name: String,
    /// Arguments of the JDK's `java` (placeholders allowed).
    pub java: Vec<String>,
    /// Files (relative to `{prepared}`) the step must leave behind; checked after it.
    #[serde(default)]
    pub creates: Vec<String>,
    /// Longest the step may take (default 10m).
    #[serde(default = "ten_minutes")]
    pub timeout: WrittenDuration,
}

fn ten_minutes() -> WrittenDuration {
    "10m".parse().expect("10m is a duration")
}

/// Checks the steps when the experiment is loaded: names unique and file-safe (timeouts are
/// checked when read).
pub fn validate_steps(steps: &[PrepareStep]) -> Result<(), PartError> {
    for (i, step) in steps.iter().enumerate() {
        if !is_plain_name(&step.name) {
            return Err(PartError::StepName(step.name.clone()));
        }
        if steps[..i].iter().any(|s| s.name == step.name) {
            return Err(PartError::StepTwice(step.name.clone()));
        }
        if step.java.is_empty() {
            return Err(PartError::StepWithoutJava(step.name.clone()));
        }
    }
    Ok(())
}

/// Settings of the slow device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlowDeviceSpec {
    /// Size of the sparse image file, in bytes.
    pub size_bytes: u64,
    /// Write bandwidth the device is throttled to, bytes per second.
    pub write_bps: u64,
    /// Whether the device asks for stable pages (the condition for the hsperf stall).
    pub stable_writes: bool,
    pub fstype: crate::experiment::dimensions::Filesystem,
    /// As `mount -o` takes them; none: the kernel's defaults.
    pub mount_options: Option<crate::experiment::dimensions::MountOptions>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(name: &str, java: &[&str]) -> PrepareStep {
        PrepareStep {
            name: name.into(),
            java: java.iter().map(|s| s.to_string()).collect(),
            creates: Vec::new(),
            timeout: "10m".parse().unwrap(),
        }
    }

    #[test]
    fn validation_names_the_problem() {
        assert!(validate_steps(&[step("archive", &["-version"])]).is_ok());
        let err = validate_steps(&[step("a b", &["-version"])])
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"a b\""), "{err}");
        let err =
            validate_steps(&[step("x", &["-version"]), step("x", &["-version"])]).unwrap_err();
        assert_eq!(err, PartError::StepTwice("x".into()));
        let err = err.to_string();
        assert!(err.contains("twice"), "{err}");
        assert!(validate_steps(&[step("x", &[])])
            .unwrap_err()
            .to_string()
            .contains("empty"));
    }

    #[test]
    fn leave_must_clear_the_floor_by_a_chunk() {
        let spec = |leave: &str, floor: &str| PressureSpec {
            leave: leave.parse().unwrap(),
            floor: floor.parse().unwrap(),
            max: None,
        };
        assert!(spec("4G", "2G").bounds().is_ok());
        let err = spec("2G", "2G").bounds().unwrap_err().to_string();
        assert!(err.contains("leave (2G) must exceed floor (2G)"), "{err}");
        assert!(spec("4G", "0").bounds().is_err());
        assert!("lots".parse::<WrittenSize>().is_err());
    }

    #[test]
    fn thresholds_need_hysteresis() {
        let mut spec = GovernorSpec {
            psi_high: 10.0,
            psi_low: 10.0,
            available_low: "2G".parse().unwrap(),
            available_high: "4G".parse().unwrap(),
            hold: "5s".parse().unwrap(),
            interval: "250ms".parse().unwrap(),
        };
        assert!(spec
            .thresholds()
            .unwrap_err()
            .to_string()
            .contains("psi_low < psi_high"));
        spec.psi_low = 1.0;
        spec.available_high = "1G".parse().unwrap();
        assert!(spec.thresholds().is_err());
    }
}
