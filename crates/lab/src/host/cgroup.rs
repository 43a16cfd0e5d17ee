//! A CPU cgroup per variant, for CFS bandwidth limits (`cpu_quota`): cgroup v1 (`cpu`
//! controller) or v2 (`cpu.max`). Created through the journal, removed with the run; the
//! JVM joins it between fork and exec, so every thread it ever starts is inside.

use std::fs;
use std::path::{Path, PathBuf};

use crate::host::journal::{Change, Journal};
use crate::LabError;

/// CFS period used for every quota (the kernel's default).
pub const PERIOD_US: u64 = 100_000;

/// Where the CPU controller is mounted, and which cgroup version it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuHierarchy {
    V1(PathBuf),
    V2(PathBuf),
}

impl CpuHierarchy {
    /// Finds the CPU controller of this host from /proc/self/mountinfo.
    pub fn find() -> Result<CpuHierarchy, String> {
        let text = fs::read_to_string("/proc/self/mountinfo")
            .map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
        let mut v2 = None;
        for line in text.lines() {
            let Some((left, right)) = line.split_once(" - ") else {
                continue;
            };
            let mount_point = left.split_whitespace().nth(4).unwrap_or_default();
            let mut fields = right.split_whitespace();
            let fstype = fields.next().unwrap_or_default();
            let super_options = fields.nth(1).unwrap_or_default();
            if fstype == "cgroup" && super_options.split(',').any(|o| o == "cpu") {
                return Ok(CpuHierarchy::V1(PathBuf::from(mount_point)));
            }
            if fstype == "cgroup2" && v2.is_none() {
                v2 = Some(PathBuf::from(mount_point));
            }
        }
        if let Some(root) = v2 {
            let controllers =
                fs::read_to_string(root.join("cgroup.subtree_control")).unwrap_or_default();
            if controllers.split_whitespace().any(|c| c == "cpu") {
                return Ok(CpuHierarchy::V2(root));
            }
            return Err(format!(
                "{}: the cpu controller is not enabled for child cgroups (cgroup.subtree_control)",
                root.display()
            ));
        }
        Err("no cgroup cpu controller is mounted".into())
    }

    fn root(&self) -> &Path {
        match self {
            CpuHierarchy::V1(p) | CpuHierarchy::V2(p) => p,
        }
    }
}

/// Creates `<controller>/pauselab-<run_id>/<name>` limited to `cpus` CPUs; returns the
/// path of its `cgroup.procs`, which the JVM joins before exec.
pub fn create_cpu_limited(
    journal: &mut Journal,
    run_id: &str,
    name: &str,
    cpus: f64,
) -> Result<PathBuf, LabError> {
    let hierarchy = CpuHierarchy::find().map_err(|e| LabError::Host(format!("cpu_quota: {e}")))?;
    let run_group = hierarchy.root().join(format!("pauselab-{run_id}"));
    if !run_group.exists() {
        make_group(journal, &run_group)?;
    }
    let group = run_group.join(name);
    make_group(journal, &group)?;
    let quota_us = ((cpus * PERIOD_US as f64).round() as u64).max(1000);
    match &hierarchy {
        CpuHierarchy::V1(_) => {
            write(&group.join("cpu.cfs_period_us"), &PERIOD_US.to_string())?;
            write(&group.join("cpu.cfs_quota_us"), &quota_us.to_string())?;
        }
        CpuHierarchy::V2(_) => {
            write(&group.join("cpu.max"), &format!("{quota_us} {PERIOD_US}"))?;
        }
    }
    Ok(group.join("cgroup.procs"))
}

fn make_group(journal: &mut Journal, path: &Path) -> Result<(), LabError> {
    journal.record(Change::Cgroup {
        path: path.to_path_buf(),
    })?;
    fs::create_dir(path).map_err(|e| LabError::io(path, "create the cgroup", e))
}

fn write(path: &Path, value: &str) -> Result<(), LabError> {
    fs::write(path, value).map_err(|e| LabError::io(path, "write", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_host_has_a_cpu_controller_or_says_why() {
        match CpuHierarchy::find() {
            Ok(h) => assert!(h.root().join("cgroup.procs").exists(), "{h:?}"),
            Err(e) => assert!(e.contains("cgroup") || e.contains("cpu"), "{e}"),
        }
    }
}
