//! CPU limits of a process: CFS quota (cgroup v1 `cpu.cfs_quota_us`, v2 `cpu.max`) over the
//! whole cgroup ancestry, throttling counters, and the CPUs it may run on.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::mounts::{parse_mountinfo, MountEntry};
use crate::read::{parse_error, read_optional, read_string, require_process};
use crate::Result;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CgroupVersion {
    V1,
    V2,
}

/// The tightest quota found between the process's cgroup and the root.
#[derive(Debug, Clone, Serialize)]
pub struct CpuQuota {
    pub quota_us: u64,
    pub period_us: u64,
    /// The file the limiting value was read from.
    pub source: PathBuf,
}

impl CpuQuota {
    /// The quota expressed in CPUs (e.g. 0.2 = 20 ms of CPU time per 100 ms).
    pub fn cpus(&self) -> f64 {
        self.quota_us as f64 / self.period_us as f64
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CpuLimits {
    pub pid: u32,
    pub version: Option<CgroupVersion>,
    /// The process's cpu cgroup directory, when the cgroup filesystem is mounted.
    pub cgroup_dir: Option<PathBuf>,
    /// `None`: no quota anywhere up the hierarchy.
    pub quota: Option<CpuQuota>,
    /// Throttling counters of the process's own cgroup (since it was created).
    pub nr_periods: Option<u64>,
    pub nr_throttled: Option<u64>,
    pub throttled_us: Option<u64>,
    /// CPUs in the process's affinity mask (`Cpus_allowed_list`, covers cpusets).
    pub cpus_allowed: usize,
    /// CPUs online on the host.
    pub online_cpus: usize,
}

impl CpuLimits {
    /// CPUs the process can really use: the smaller of quota and affinity mask.
    pub fn effective_cpus(&self) -> f64 {
        let allowed = self.cpus_allowed as f64;
        match &self.quota {
            Some(quota) => quota.cpus().min(allowed),
            None => allowed,
        }
    }
}

/// One line of `/proc/<pid>/cgroup`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CgroupLine {
    controllers: Vec<String>,
    path: PathBuf,
}

fn parse_cgroup_file(path: &Path, text: &str) -> Result<Vec<CgroupLine>> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let mut parts = line.splitn(3, ':');
            let (Some(_id), Some(controllers), Some(cgroup)) =
                (parts.next(), parts.next(), parts.next())
            else {
                return Err(parse_error(path, format!("bad line {line:?}")));
            };
            Ok(CgroupLine {
                controllers: controllers
                    .split(',')
                    .filter(|c| !c.is_empty())
                    .map(str::to_string)
                    .collect(),
                path: PathBuf::from(cgroup),
            })
        })
        .collect()
}

/// Directory of `cgroup` (a path relative to the hierarchy root) under `mount`.
fn cgroup_dir(mount: &MountEntry, cgroup: &Path) -> PathBuf {
    let relative = cgroup.strip_prefix(&mount.root).unwrap_or(cgroup);
    let relative = relative.strip_prefix("/").unwrap_or(relative);
    mount.mount_point.join(relative)
}

/// Parses a "Cpus_allowed_list" value such as `0-3,8,10-11`.
fn count_cpu_list(list: &str) -> Option<usize> {
    let mut count = 0;
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
                count += b.checked_sub(a)? + 1;
            }
            None => {
                part.parse::<usize>().ok()?;
                count += 1;
            }
        }
    }
    Some(count)
}

fn online_cpus() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n > 0 {
        n as usize
    } else {
        1
    }
}

fn cpus_allowed(pid: u32) -> Result<usize> {
    let path = PathBuf::from(format!("/proc/{pid}/status"));
    let text = read_string(&path)?;
    text.lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .and_then(count_cpu_list)
        .ok_or_else(|| parse_error(&path, "no valid Cpus_allowed_list"))
}

/// Reads `key value` lines of a `cpu.stat` file.
fn stat_value(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

/// CPU limits of process `pid`.
pub fn cpu_limits(pid: u32) -> Result<CpuLimits> {
    require_process(pid)?;
    let cgroup_path = PathBuf::from(format!("/proc/{pid}/cgroup"));
    let lines = parse_cgroup_file(&cgroup_path, &read_string(&cgroup_path)?)?;
    let mountinfo = Path::new("/proc/self/mountinfo");
    let mounts = parse_mountinfo(mountinfo, &read_string(mountinfo)?)?;
    let mut limits = CpuLimits {
        pid,
        version: None,
        cgroup_dir: None,
        quota: None,
        nr_periods: None,
        nr_throttled: None,
        throttled_us: None,
        cpus_allowed: cpus_allowed(pid)?,
        online_cpus: online_cpus(),
    };
    // cgroup v1 with a cpu controller takes precedence: on hybrid hosts v2 has no cpu.
    let v1 = lines
        .iter()
        .find(|l| l.controllers.iter().any(|c| c == "cpu"));
    let v1_mount = mounts
        .iter()
        .find(|m| m.fs_type == "cgroup" && m.super_options.split(',').any(|o| o == "cpu"));
    if let (Some(line), Some(mount)) = (v1, v1_mount) {
        let dir = cgroup_dir(mount, &line.path);
        limits.version = Some(CgroupVersion::V1);
        limits.quota = tightest_quota(&dir, &mount.mount_point, v1_quota)?;
        if let Some(stat) = read_optional(dir.join("cpu.stat"))? {
            limits.nr_periods = stat_value(&stat, "nr_periods");
            limits.nr_throttled = stat_value(&stat, "nr_throttled");
            limits.throttled_us = stat_value(&stat, "throttled_time").map(|ns| ns / 1000);
        }
        limits.cgroup_dir = Some(dir);
        return Ok(limits);
    }
    let v2 = lines.iter().find(|l| l.controllers.is_empty());
    let v2_mount = mounts.iter().find(|m| m.fs_type == "cgroup2");
    if let (Some(line), Some(mount)) = (v2, v2_mount) {
        let dir = cgroup_dir(mount, &line.path);
        limits.version = Some(CgroupVersion::V2);
        limits.quota = tightest_quota(&dir, &mount.mount_point, v2_quota)?;
        if let Some(stat) = read_optional(dir.join("cpu.stat"))? {
            limits.nr_periods = stat_value(&stat, "nr_periods");
            limits.nr_throttled = stat_value(&stat, "nr_throttled");
            limits.throttled_us = stat_value(&stat, "throttled_usec");
        }
        limits.cgroup_dir = Some(dir);
    }
    Ok(limits)
}

/// Walks from `dir` up to `top` and keeps the smallest quota in CPUs.
fn tightest_quota(
    dir: &Path,
    top: &Path,
    read: fn(&Path) -> Result<Option<CpuQuota>>,
) -> Result<Option<CpuQuota>> {
    let mut best: Option<CpuQuota> = None;
    let mut current = dir.to_path_buf();
    loop {
        if let Some(quota) = read(&current)? {
            if best.as_ref().is_none_or(|b| quota.cpus() < b.cpus()) {
                best = Some(quota);
            }
        }
        if current == top || !current.pop() || !current.starts_with(top) {
            break;
        }
    }
    Ok(best)
}

fn v1_quota(dir: &Path) -> Result<Option<CpuQuota>> {
    let quota_path = dir.join("cpu.cfs_quota_us");
    let Some(quota) = read_optional(&quota_path)? else {
        return Ok(None);
    };
    let quota: i64 = quota
        .trim()
        .parse()
        .map_err(|_| parse_error(&quota_path, format!("not a number: {:?}", quota.trim())))?;
    if quota <= 0 {
        return Ok(None); // -1 = unlimited
    }
    let period_path = dir.join("cpu.cfs_period_us");
    let period = read_string(&period_path)?;
    let period: u64 = period
        .trim()
        .parse()
        .map_err(|_| parse_error(&period_path, format!("not a number: {:?}", period.trim())))?;
    if period == 0 {
        return Err(parse_error(&period_path, "period is 0"));
    }
    Ok(Some(CpuQuota {
        quota_us: quota as u64,
        period_us: period,
        source: quota_path,
    }))
}

fn v2_quota(dir: &Path) -> Result<Option<CpuQuota>> {
    let path = dir.join("cpu.max");
    let Some(text) = read_optional(&path)? else {
        return Ok(None);
    };
    let mut words = text.split_whitespace();
    let (Some(quota), Some(period)) = (words.next(), words.next()) else {
        return Err(parse_error(
            &path,
            format!("expected `QUOTA PERIOD`, found {:?}", text.trim()),
        ));
    };
    if quota == "max" {
        return Ok(None);
    }
    let bad = || {
        parse_error(
            &path,
            format!("expected `QUOTA PERIOD`, found {:?}", text.trim()),
        )
    };
    let quota_us: u64 = quota.parse().map_err(|_| bad())?;
    let period_us: u64 = period.parse().map_err(|_| bad())?;
    if period_us == 0 {
        return Err(bad());
    }
    Ok(Some(CpuQuota {
        quota_us,
        period_us,
        source: path,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_lines_and_cpu_lists_parse() {
        let lines =
            parse_cgroup_file(Path::new("c"), "4:memory:/a/b\n1:cpu,cpuacct:/x\n0::/y\n").unwrap();
        assert_eq!(lines[1].controllers, vec!["cpu", "cpuacct"]);
        assert!(lines[2].controllers.is_empty());
        assert_eq!(lines[2].path, Path::new("/y"));
        assert!(parse_cgroup_file(Path::new("c"), "garbage\n").is_err());
        assert_eq!(count_cpu_list("0-3,8,10-11\n"), Some(7));
        assert_eq!(count_cpu_list("0"), Some(1));
        assert_eq!(count_cpu_list("3-1"), None);
    }

    #[test]
    fn own_process_limits_are_consistent() {
        let limits = cpu_limits(std::process::id()).unwrap();
        assert!(
            limits.cpus_allowed >= 1
                && limits.cpus_allowed <= limits.online_cpus.max(limits.cpus_allowed)
        );
        assert!(limits.effective_cpus() > 0.0);
    }

    #[test]
    fn missing_process_is_named() {
        let err = cpu_limits(u32::MAX - 1).unwrap_err();
        assert!(err.to_string().contains("does not exist"), "{err}");
    }
}

/// The container a process runs in, as far as its cgroup path tells: container runtimes
/// and Kubernetes name cgroups after the container's id and the pod's uid (never after
/// names).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ContainerIds {
    /// The container's id (64 hex digits), as `docker ps --no-trunc` and
    /// kube-state-metrics' `container_id` (after `containerd://`) show it.
    pub container_id: Option<String>,
    /// `docker`, `containerd`, `crio` or `podman`, when the path says which.
    pub runtime: Option<&'static str>,
    /// The Kubernetes pod's uid.
    pub pod_uid: Option<String>,
}

/// The container of process `pid` from `/proc/<pid>/cgroup`; empty when it is in none, or
/// the file cannot be read.
pub fn container_ids(pid: u32) -> ContainerIds {
    std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
        .map(|text| container_ids_from(&text))
        .unwrap_or_default()
}

/// The container named by the cgroup paths in a `/proc/<pid>/cgroup` file (v1 and v2,
/// cgroupfs and systemd drivers): the first line that names one.
pub fn container_ids_from(cgroup_file: &str) -> ContainerIds {
    let mut best = ContainerIds::default();
    for line in cgroup_file.lines() {
        let Some(path) = line.splitn(3, ':').nth(2) else {
            continue;
        };
        let ids = ids_in_path(path);
        if ids.container_id.is_some() {
            return ids;
        }
        if best.pod_uid.is_none() {
            best = ids;
        }
    }
    best
}

fn ids_in_path(path: &str) -> ContainerIds {
    let mut ids = ContainerIds::default();
    let mut parent_is_docker = false;
    for component in path.split('/') {
        let name = component
            .strip_suffix(".scope")
            .or_else(|| component.strip_suffix(".slice"))
            .unwrap_or(component);
        let prefixed = [
            ("docker-", "docker"),
            ("cri-containerd-", "containerd"),
            ("crio-", "crio"),
            ("libpod-", "podman"),
        ]
        .into_iter()
        .find_map(|(prefix, runtime)| Some((name.strip_prefix(prefix)?, runtime)));
        match prefixed {
            Some((id, runtime)) if is_container_id(id) => {
                ids.container_id = Some(id.to_string());
                ids.runtime = Some(runtime);
            }
            _ if is_container_id(name) => {
                ids.container_id = Some(name.to_string());
                ids.runtime = parent_is_docker.then_some("docker");
            }
            _ => {
                if let Some(uid) = name.rfind("pod").map(|at| &name[at + 3..]) {
                    // The systemd driver writes the uid's dashes as underscores.
                    let uid = uid.replace('_', "-");
                    if is_pod_uid(&uid) {
                        ids.pod_uid = Some(uid);
                    }
                }
            }
        }
        parent_is_docker = name == "docker";
    }
    ids
}

fn is_container_id(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A UUID: 8-4-4-4-12 hex digits.
fn is_pod_uid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod container_tests {
    use super::*;

    const ID: &str = "3f4e8a2b9c1d0e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f";
    const UID: &str = "0a1b2c3d-4e5f-6789-abcd-ef0123456789";

    #[test]
    fn ids_from_every_runtime_and_driver() {
        let uid_ = UID.replace('-', "_");
        let cases = [
            (format!("0::/system.slice/docker-{ID}.scope\n"), Some(ID), Some("docker"), None),
            (format!("12:memory:/docker/{ID}\n11:cpu:/docker/{ID}\n"), Some(ID), Some("docker"), None),
            (format!("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{uid_}.slice/cri-containerd-{ID}.scope\n"), Some(ID), Some("containerd"), Some(UID)),
            (format!("0::/kubepods.slice/kubepods-pod{uid_}.slice/crio-{ID}.scope\n"), Some(ID), Some("crio"), Some(UID)),
            (format!("10:cpuset:/kubepods/besteffort/pod{UID}/{ID}\n"), Some(ID), None, Some(UID)),
            (format!("0::/machine.slice/libpod-{ID}.scope/container\n"), Some(ID), Some("podman"), None),
            ("0::/user.slice/user-1000.slice/session-3.scope\n".to_string(), None, None, None),
            ("0::/\n".to_string(), None, None, None),
            ("garbage".to_string(), None, None, None),
        ];
        for (file, id, runtime, uid) in cases {
            let ids = container_ids_from(&file);
            assert_eq!(ids.container_id.as_deref(), id, "{file}");
            assert_eq!(ids.runtime, runtime, "{file}");
            assert_eq!(ids.pod_uid.as_deref(), uid, "{file}");
        }
        // This test's own process: whatever it is in, the reading must not fail.
        let _ = container_ids(std::process::id());
    }
}
