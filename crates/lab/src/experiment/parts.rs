//! The parts an experiment declares besides its workload and variants: stressors,
//! companions (memory filler, THP governor), preparation steps and the slow device. Each
//! is checked when the experiment is loaded; the layers above turn it into running code.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::experiment::units;

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
        chunk: String,
        #[serde(default)]
        max_rate: Option<String>,
    },
    /// Calls `sync_file_range(SYNC_FILE_RANGE_WRITE)` on every file the variants keep on
    /// the stressed filesystem, every `interval`, so their pages are under writeback.
    WritebackForcer { interval: String },
    /// Keeps `size` of memory (at most a quarter of what is available) touched.
    MemoryHog { size: String },
    /// Keeps `threads` threads busy `duty` percent of the time.
    CpuHog { threads: u32, duty: u32 },
}

/// Bytes of one chunk: filled and released as a unit.
pub const CHUNK: u64 = 64 << 20;

/// How close to its limit the host is taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PressureSpec {
    /// MemAvailable the filler leaves to everything else (the JVM's heap included).
    pub leave: String,
    /// When MemAvailable falls under this, chunks are released until it is above again.
    pub floor: String,
    /// At most this much is held, whatever is available (default: no limit but `leave`).
    #[serde(default)]
    pub max: Option<String>,
}

/// The spec in bytes, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub leave: u64,
    pub floor: u64,
    pub max: u64,
}

impl PressureSpec {
    pub fn bounds(&self) -> Result<Bounds, String> {
        let leave = units::parse_bytes(&self.leave)?;
        let floor = units::parse_bytes(&self.floor)?;
        let max = match &self.max {
            Some(m) => units::parse_bytes(m)?,
            None => u64::MAX,
        };
        // Filling stops at `leave`; releasing starts at `floor`. Without a chunk between
        // them the filler would take and give back the same chunk forever.
        if floor == 0 || leave < floor + CHUNK {
            return Err(format!(
                "memory pressure: leave ({}) must exceed floor ({}) by at least {} MiB, and floor must not be 0",
                self.leave,
                self.floor,
                CHUNK >> 20
            ));
        }
        Ok(Bounds { leave, floor, max })
    }
}

/// A swap area for the whole run (`[swap]`): a file of `size` on the lab's device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwapSpec {
    pub size: String,
}

impl SwapSpec {
    /// The size in bytes: at least 64 MiB (mkswap's own minimum is far lower, but a
    /// smaller area fills before anything interesting happens).
    pub fn bytes(&self) -> Result<u64, String> {
        let bytes = units::parse_bytes(&self.size)?;
        if bytes < 64 << 20 {
            return Err(format!("swap size {} is under 64m", self.size));
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
    pub limit: String,
    /// Swap they may use on top of `limit`; "0" forbids it. Default: no swap limit.
    #[serde(default)]
    pub swap: Option<String>,
    /// `false` keeps the JVM's own pages out of swap, whatever happens to the filler's.
    #[serde(default = "yes")]
    pub jvm_swap: bool,
    /// Per-cgroup swappiness (cgroup v1 only). Default: the host's `vm.swappiness` when
    /// the variant starts.
    #[serde(default)]
    pub swappiness: Option<u32>,
    /// A process in the cgroup, beside the JVM, that takes this much memory...
    #[serde(default)]
    pub filler: Option<String>,
    /// ...this long after the JVM started, touches every page once and holds them.
    #[serde(default = "zero_seconds")]
    pub filler_after: String,
}

fn yes() -> bool {
    true
}

fn zero_seconds() -> String {
    "0s".into()
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
}

impl MemoryCgroupSpec {
    pub fn resolve(&self) -> Result<MemoryCgroup, String> {
        let limit = units::parse_bytes(&self.limit)?;
        if limit < 16 << 20 {
            return Err(format!("memory_cgroup limit {} is under 16m", self.limit));
        }
        let swap = self.swap.as_deref().map(units::parse_bytes).transpose()?;
        if let Some(s) = self.swappiness.filter(|s| *s > 200) {
            return Err(format!(
                "memory_cgroup swappiness {s} is not between 0 and 200"
            ));
        }
        let filler = match &self.filler {
            Some(size) => {
                let bytes = units::parse_bytes(size)?;
                if bytes == 0 || bytes >= limit + swap.unwrap_or(u64::MAX - limit) {
                    return Err(format!(
                        "memory_cgroup filler {size} must be above 0 and below limit + swap"
                    ));
                }
                Some((bytes, units::parse_duration(&self.filler_after)?))
            }
            None => None,
        };
        Ok(MemoryCgroup {
            limit,
            swap,
            jvm_swap: self.jvm_swap,
            swappiness: self.swappiness,
            filler,
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
    pub available_low: String,
    /// On again when PSI is at most `psi_low` and MemAvailable at least `available_high`...
    #[serde(default = "default_psi_low")]
    pub psi_low: f64,
    pub available_high: String,
    /// ...for this long without a break.
    #[serde(default = "default_hold")]
    pub hold: String,
    #[serde(default = "default_interval")]
    pub interval: String,
}

fn default_psi_high() -> f64 {
    10.0
}
fn default_psi_low() -> f64 {
    1.0
}
fn default_hold() -> String {
    "5s".into()
}
fn default_interval() -> String {
    "250ms".into()
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
    pub fn thresholds(&self) -> Result<Thresholds, String> {
        let t = Thresholds {
            psi_high: self.psi_high,
            psi_low: self.psi_low,
            available_low: units::parse_bytes(&self.available_low)?,
            available_high: units::parse_bytes(&self.available_high)?,
            hold: units::parse_duration(&self.hold)?,
            interval: units::parse_duration(&self.interval)?,
        };
        // Hysteresis: otherwise one reading could switch it off and the next one on.
        if !(t.psi_low < t.psi_high && t.available_low < t.available_high) {
            return Err(format!(
                "thp governor: needs psi_low < psi_high ({} < {}) and available_low < available_high ({} < {})",
                self.psi_low, self.psi_high, self.available_low, self.available_high
            ));
        }
        if t.interval.is_zero() {
            return Err("thp governor: interval must be more than 0".into());
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
    pub timeout: String,
}

fn ten_minutes() -> String {
    "10m".into()
}

/// Checks the steps when the experiment is loaded: names unique and file-safe, timeouts valid.
pub fn validate_steps(steps: &[PrepareStep]) -> Result<(), String> {
    for (i, step) in steps.iter().enumerate() {
        if !is_plain_name(&step.name) {
            return Err(format!(
                "prepare step {:?}: the name must be letters, digits, - or _",
                step.name
            ));
        }
        if steps[..i].iter().any(|s| s.name == step.name) {
            return Err(format!("prepare step {:?} appears twice", step.name));
        }
        if step.java.is_empty() {
            return Err(format!("prepare step {:?}: `java` is empty", step.name));
        }
        units::parse_duration(&step.timeout)
            .map_err(|e| format!("prepare step {:?}: timeout: {e}", step.name))?;
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
    /// `ext4` or `xfs`.
    pub fstype: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(name: &str, java: &[&str]) -> PrepareStep {
        PrepareStep {
            name: name.into(),
            java: java.iter().map(|s| s.to_string()).collect(),
            creates: Vec::new(),
            timeout: "10m".into(),
        }
    }

    #[test]
    fn validation_names_the_problem() {
        assert!(validate_steps(&[step("archive", &["-version"])]).is_ok());
        let err = validate_steps(&[step("a b", &["-version"])]).unwrap_err();
        assert!(err.contains("\"a b\""), "{err}");
        let err =
            validate_steps(&[step("x", &["-version"]), step("x", &["-version"])]).unwrap_err();
        assert!(err.contains("twice"), "{err}");
        assert!(validate_steps(&[step("x", &[])])
            .unwrap_err()
            .contains("empty"));
        let mut slow = step("x", &["-version"]);
        slow.timeout = "soon".into();
        assert!(validate_steps(&[slow]).unwrap_err().contains("timeout"));
    }

    #[test]
    fn leave_must_clear_the_floor_by_a_chunk() {
        let spec = |leave: &str, floor: &str| PressureSpec {
            leave: leave.into(),
            floor: floor.into(),
            max: None,
        };
        assert!(spec("4G", "2G").bounds().is_ok());
        let err = spec("2G", "2G").bounds().unwrap_err();
        assert!(err.contains("leave (2G) must exceed floor (2G)"), "{err}");
        assert!(spec("4G", "0").bounds().is_err());
        assert!(spec("lots", "1G").bounds().is_err());
    }

    #[test]
    fn thresholds_need_hysteresis() {
        let mut spec = GovernorSpec {
            psi_high: 10.0,
            psi_low: 10.0,
            available_low: "2G".into(),
            available_high: "4G".into(),
            hold: "5s".into(),
            interval: "250ms".into(),
        };
        assert!(spec
            .thresholds()
            .unwrap_err()
            .contains("psi_low < psi_high"));
        spec.psi_low = 1.0;
        spec.available_high = "1G".into();
        assert!(spec.thresholds().is_err());
    }
}
