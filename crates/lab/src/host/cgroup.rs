//! Cgroups per variant, cgroup v1 or v2: a CPU cgroup for CFS bandwidth limits
//! (`cpu_quota`), and a memory cgroup (`memory_cgroup`: memory and swap limits, swappiness)
//! with the JVM and an optional filler process in cgroups of their own inside it. Created
//! through the journal, removed with the run; the JVM joins its cgroups between fork and
//! exec, so every thread it ever starts is inside.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::experiment::MemoryCgroup;
use crate::host::journal::{Change, Journal};
use crate::LabError;

/// CFS period used for every quota (the kernel's default).
pub const PERIOD_US: u64 = 100_000;

/// The cgroup hierarchies of this host: each v1 controller's mount point, and the cgroup2
/// mount with the controllers its root offers (`cgroup.controllers`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hierarchies {
    pub v1: Vec<(String, PathBuf)>,
    pub v2: Option<V2Root>,
}

/// The cgroup2 mount and what it offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2Root {
    pub root: PathBuf,
    /// Controllers in the root's `cgroup.controllers`: not bound to a v1 hierarchy, so they
    /// can be enabled for child cgroups.
    pub available: Vec<String>,
}

/// What kind of cgroup host this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HostKind {
    /// Only cgroup v1 controllers.
    V1,
    /// Only cgroup2.
    V2,
    /// v1 controllers beside a cgroup2 mount.
    Hybrid,
    /// No cgroup filesystem (some containers).
    None,
}

impl Hierarchies {
    /// This host's hierarchies, from /proc/self/mountinfo.
    pub fn read() -> Hierarchies {
        let text = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        Hierarchies::parse(&text, |root| {
            fs::read_to_string(root.join("cgroup.controllers"))
                .map(|t| t.split_whitespace().map(str::to_string).collect())
                .unwrap_or_default()
        })
    }

    /// From a mountinfo text; `controllers` reads a cgroup2 root's `cgroup.controllers`.
    pub fn parse(mountinfo: &str, controllers: impl Fn(&Path) -> Vec<String>) -> Hierarchies {
        let mut found = Hierarchies::default();
        for line in mountinfo.lines() {
            let Some((left, right)) = line.split_once(" - ") else {
                continue;
            };
            let mount_point = PathBuf::from(left.split_whitespace().nth(4).unwrap_or_default());
            let mut fields = right.split_whitespace();
            let fstype = fields.next().unwrap_or_default();
            let super_options = fields.nth(1).unwrap_or_default();
            match fstype {
                "cgroup" => {
                    for option in super_options.split(',') {
                        if !matches!(option, "rw" | "ro") && !option.starts_with("name=") {
                            found.v1.push((option.to_string(), mount_point.clone()));
                        }
                    }
                }
                "cgroup2" if found.v2.is_none() => {
                    found.v2 = Some(V2Root {
                        available: controllers(&mount_point),
                        root: mount_point,
                    });
                }
                _ => {}
            }
        }
        found
    }

    pub fn kind(&self) -> HostKind {
        match (self.v1.is_empty(), &self.v2) {
            (true, None) => HostKind::None,
            (false, None) => HostKind::V1,
            (true, Some(_)) => HostKind::V2,
            (false, Some(_)) => HostKind::Hybrid,
        }
    }

    /// The v1 hierarchy holding `controller`.
    pub fn v1(&self, controller: &str) -> Option<&Path> {
        self.v1
            .iter()
            .find(|(c, _)| c == controller)
            .map(|(_, p)| p.as_path())
    }

    /// The cgroup2 root, when it offers `controller`.
    pub fn v2_with(&self, controller: &str) -> Option<&Path> {
        self.v2
            .as_ref()
            .filter(|v2| v2.available.iter().any(|c| c == controller))
            .map(|v2| v2.root.as_path())
    }
}

/// Where a controller is mounted, and which cgroup version it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hierarchy {
    V1(PathBuf),
    V2(PathBuf),
}

/// What this host's cgroups cannot do that the run asks for, in one line saying what is
/// missing and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CgroupError {
    #[error("{}: cgroup v2 does not offer the {controller} controller (cgroup.controllers), and no cgroup v1 hierarchy has it", v2_root.display())]
    NotOnV2 {
        v2_root: PathBuf,
        controller: String,
    },
    #[error("no cgroup {0} controller is mounted (neither cgroup v1 nor v2)")]
    NotMounted(String),
    #[error("this kernel does not account swap per cgroup (no memory.memsw.limit_in_bytes; boot with swapaccount=1), so a swap limit cannot be set")]
    NoSwapAccounting,
    #[error("per-cgroup swappiness exists only in cgroup v1; set /proc/sys/vm/swappiness as a host setting of the variant instead")]
    SwappinessOnV2,
    /// Neither v1 blkio nor v2 io: `v2` is the v2 root and the controllers it offers.
    #[error("no way to throttle the slow device: no cgroup v1 blkio controller, and {}; pass --no-fault or --disk DIR", v2_without_io(v2.as_ref()))]
    NoWriteThrottle { v2: Option<(PathBuf, Vec<String>)> },
}

fn v2_without_io(v2: Option<&(PathBuf, Vec<String>)>) -> String {
    match v2 {
        Some((root, available)) => format!(
            "cgroup v2 at {} offers no io controller (cgroup.controllers: {})",
            root.display(),
            if available.is_empty() {
                "none".to_string()
            } else {
                available.join(" ")
            }
        ),
        None => "no cgroup v2 is mounted".to_string(),
    }
}

impl Hierarchy {
    /// Finds `controller` (`cpu`, `memory`) on this host: its own v1 hierarchy, else the v2
    /// one when its root offers the controller (the lab enables it on the way down).
    pub fn find(controller: &str) -> Result<Hierarchy, CgroupError> {
        Hierarchy::find_in(&Hierarchies::read(), controller)
    }

    fn find_in(hierarchies: &Hierarchies, controller: &str) -> Result<Hierarchy, CgroupError> {
        if let Some(root) = hierarchies.v1(controller) {
            return Ok(Hierarchy::V1(root.to_path_buf()));
        }
        if let Some(root) = hierarchies.v2_with(controller) {
            return Ok(Hierarchy::V2(root.to_path_buf()));
        }
        match &hierarchies.v2 {
            Some(v2) => Err(CgroupError::NotOnV2 {
                v2_root: v2.root.clone(),
                controller: controller.to_string(),
            }),
            None => Err(CgroupError::NotMounted(controller.to_string())),
        }
    }

    fn root(&self) -> &Path {
        match self {
            Hierarchy::V1(p) | Hierarchy::V2(p) => p,
        }
    }

    fn version(&self) -> Version {
        match self {
            Hierarchy::V1(_) => Version::V1,
            Hierarchy::V2(_) => Version::V2,
        }
    }

    /// `<root>/pauselab-<run_id>`, created (journaled) by the first variant that needs it;
    /// in v2 with `controller` enabled on the way down to the cgroups below it.
    fn run_group(
        &self,
        journal: &mut Journal,
        run_id: &str,
        controller: &str,
    ) -> Result<PathBuf, LabError> {
        match self {
            Hierarchy::V1(root) => {
                let run_group = run_group_path(root, run_id);
                if !run_group.exists() {
                    make_group(journal, &run_group)?;
                }
                Ok(run_group)
            }
            Hierarchy::V2(root) => v2_run_group(journal, root, run_id, &[controller]),
        }
    }
}

/// The leaf of the run's v2 cgroup that holds the lab process itself (with its stressor
/// threads) and the JVMs without a cgroup of their own.
pub const RUNNER_GROUP: &str = "runner";

fn run_group_path(root: &Path, run_id: &str) -> PathBuf {
    root.join(format!("pauselab-{run_id}"))
}

/// v2: `<root>/pauselab-<run_id>` (created, journaled, when missing) with `controllers`
/// enabled in the root's and its own `cgroup.subtree_control`, so every cgroup below it
/// has them. Each controller the lab enables is journaled and disabled again.
pub fn v2_run_group(
    journal: &mut Journal,
    root: &Path,
    run_id: &str,
    controllers: &[&str],
) -> Result<PathBuf, LabError> {
    let run_group = run_group_path(root, run_id);
    for controller in controllers {
        enable_controller(journal, root, controller)?;
    }
    if !run_group.exists() {
        make_group(journal, &run_group)?;
    }
    for controller in controllers {
        enable_controller(journal, &run_group, controller)?;
    }
    Ok(run_group)
}

/// v2: moves process `pid` into `group` (journaled: moved back to the cgroup it was in, if
/// it still lives).
pub fn join(journal: &mut Journal, root: &Path, group: &Path, pid: u32) -> Result<(), LabError> {
    let own = fs::read_to_string(format!("/proc/{pid}/cgroup"))
        .map_err(|e| LabError::Host(format!("/proc/{pid}/cgroup: {e}")))?;
    let relative = own
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .ok_or_else(|| LabError::Host(format!("/proc/{pid}/cgroup: no cgroup v2 line")))?;
    let previous = root.join(relative.trim_start_matches('/'));
    let started = crate::host::sys::process_start_ticks(pid)
        .ok_or_else(|| LabError::Host(format!("process {pid} is gone")))?;
    journal.record(Change::JoinCgroup {
        pid,
        started,
        previous,
    })?;
    write(&group.join("cgroup.procs"), &pid.to_string())
}

/// v2: limits writes of `group`'s processes to `device` (MAJ:MIN) to `bytes_per_s`
/// (`io.max`, journaled: set back to `wbps=max`).
pub fn limit_writes(
    journal: &mut Journal,
    group: &Path,
    device: &str,
    bytes_per_s: u64,
) -> Result<(), LabError> {
    let control = group.join("io.max");
    journal.record(Change::IoMax {
        control: control.clone(),
        device: device.to_string(),
    })?;
    write(&control, &format!("{device} wbps={bytes_per_s}"))
}

/// The cgroup version of a hierarchy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

/// Creates `<controller>/pauselab-<run_id>/<name>` limited to `cpus` CPUs; returns the
/// path of its `cgroup.procs`, which the JVM joins before exec.
pub fn create_cpu_limited(
    journal: &mut Journal,
    run_id: &str,
    name: &str,
    cpus: f64,
) -> Result<PathBuf, LabError> {
    let hierarchy =
        Hierarchy::find("cpu").map_err(|e| LabError::Host(format!("cpu_quota: {e}")))?;
    let run_group = hierarchy.run_group(journal, run_id, "cpu")?;
    let group = run_group.join(name);
    make_group(journal, &group)?;
    let quota_us = ((cpus * PERIOD_US as f64).round() as u64).max(1000);
    match &hierarchy {
        Hierarchy::V1(_) => {
            write(&group.join("cpu.cfs_period_us"), &PERIOD_US.to_string())?;
            write(&group.join("cpu.cfs_quota_us"), &quota_us.to_string())?;
        }
        Hierarchy::V2(_) => {
            write(&group.join("cpu.max"), &format!("{quota_us} {PERIOD_US}"))?;
        }
    }
    Ok(group.join("cgroup.procs"))
}

/// The cgroups of a variant with a memory cgroup: `<memory>/pauselab-<run_id>/<name>` holds
/// the limits; the JVM is in `jvm/` inside it, the filler in `filler/`.
#[derive(Debug, Clone)]
pub struct MemoryGroups {
    pub variant: PathBuf,
    pub jvm: PathBuf,
    pub filler: PathBuf,
}

impl MemoryGroups {
    pub fn jvm_procs(&self) -> PathBuf {
        self.jvm.join("cgroup.procs")
    }

    pub fn filler_procs(&self) -> PathBuf {
        self.filler.join("cgroup.procs")
    }
}

/// Which of a variant's memory cgroups a setting is written to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Member {
    Variant,
    Jvm,
    Filler,
}

/// One control file write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    pub member: Member,
    pub file: &'static str,
    pub value: String,
}

/// The control file writes that give a variant's cgroups `spec`, in the order they must be
/// made. `host_swappiness` is `vm.swappiness` now: a v1 cgroup copies its parent's
/// swappiness when it is created, so the run's cgroup (made in the first variant's turn)
/// would otherwise keep the value of that turn; it is written explicitly so that v1 follows
/// the host setting as v2 does. `memsw` says whether v1 has `memory.memsw.*` (swap
/// accounting on).
pub fn memory_settings(
    version: Version,
    spec: &MemoryCgroup,
    host_swappiness: u32,
    memsw: bool,
) -> Result<Vec<Setting>, CgroupError> {
    let set = |member, file, value: String| Setting {
        member,
        file,
        value,
    };
    let mut out = Vec::new();
    match version {
        Version::V1 => {
            let swappiness = spec.swappiness.unwrap_or(host_swappiness).to_string();
            out.push(set(
                Member::Variant,
                "memory.swappiness",
                swappiness.clone(),
            ));
            // memsw >= limit at all times: the limit first.
            out.push(set(
                Member::Variant,
                "memory.limit_in_bytes",
                spec.limit.to_string(),
            ));
            if let Some(swap) = spec.swap {
                if !memsw {
                    return Err(CgroupError::NoSwapAccounting);
                }
                out.push(set(
                    Member::Variant,
                    "memory.memsw.limit_in_bytes",
                    (spec.limit + swap).to_string(),
                ));
            }
            out.push(set(Member::Filler, "memory.swappiness", swappiness.clone()));
            if let Some(own) = spec.filler_limit {
                out.push(set(
                    Member::Filler,
                    "memory.limit_in_bytes",
                    own.to_string(),
                ));
            }
            if spec.jvm_swap {
                out.push(set(Member::Jvm, "memory.swappiness", swappiness));
            } else {
                // memsw = limit stops the JVM's cgroup from reaching swap through its own
                // limit, but pages pushed out by the parent's limit move their charge from
                // memory to swap inside memsw: only swappiness 0 keeps them in memory.
                out.push(set(Member::Jvm, "memory.swappiness", "0".into()));
                out.push(set(
                    Member::Jvm,
                    "memory.limit_in_bytes",
                    spec.limit.to_string(),
                ));
                if memsw {
                    out.push(set(
                        Member::Jvm,
                        "memory.memsw.limit_in_bytes",
                        spec.limit.to_string(),
                    ));
                }
            }
        }
        Version::V2 => {
            if spec.swappiness.is_some() {
                return Err(CgroupError::SwappinessOnV2);
            }
            out.push(set(Member::Variant, "memory.max", spec.limit.to_string()));
            if let Some(swap) = spec.swap {
                out.push(set(Member::Variant, "memory.swap.max", swap.to_string()));
            }
            if !spec.jvm_swap {
                out.push(set(Member::Jvm, "memory.swap.max", "0".into()));
            }
            if let Some(own) = spec.filler_limit {
                out.push(set(Member::Filler, "memory.max", own.to_string()));
            }
        }
    }
    Ok(out)
}

/// Creates the memory cgroups of variant `name` (journaled) and gives them `spec`.
pub fn create_memory_limited(
    journal: &mut Journal,
    run_id: &str,
    name: &str,
    spec: &MemoryCgroup,
) -> Result<MemoryGroups, LabError> {
    let fail = |e: &dyn std::fmt::Display| LabError::Host(format!("memory_cgroup: {e}"));
    let hierarchy = Hierarchy::find("memory").map_err(|e| fail(&e))?;
    let host_swappiness = pauselab_host::vm::swap()
        .map(|s| s.swappiness)
        .unwrap_or(60);
    let run_group = hierarchy.run_group(journal, run_id, "memory")?;
    let variant = run_group.join(name);
    let memsw = hierarchy
        .root()
        .join("memory.memsw.limit_in_bytes")
        .exists();
    let settings =
        memory_settings(hierarchy.version(), spec, host_swappiness, memsw).map_err(|e| fail(&e))?;
    if variant.exists() {
        // cgroup v2 has one hierarchy: `cpu_quota` made this very cgroup already, and the
        // JVM can only be in one of them.
        return Err(fail(&format!(
            "{} exists already: on cgroup v2, cpu_quota and memory_cgroup cannot be combined in one variant",
            variant.display()
        )));
    }
    make_group(journal, &variant)?;
    let groups = MemoryGroups {
        jvm: variant.join("jvm"),
        filler: variant.join("filler"),
        variant,
    };
    if hierarchy.version() == Version::V2 {
        enable_controller(journal, &groups.variant, "memory")?;
    }
    make_group(journal, &groups.jvm)?;
    make_group(journal, &groups.filler)?;
    for setting in settings {
        let dir = match setting.member {
            Member::Variant => &groups.variant,
            Member::Jvm => &groups.jvm,
            Member::Filler => &groups.filler,
        };
        write(&dir.join(setting.file), &setting.value)?;
    }
    Ok(groups)
}

/// v2: lets the cgroups below `group` use `controller` (`cgroup.subtree_control`); journaled
/// when the lab is the one enabling it.
pub fn enable_controller(
    journal: &mut Journal,
    group: &Path,
    controller: &str,
) -> Result<(), LabError> {
    let control = group.join("cgroup.subtree_control");
    let enabled = fs::read_to_string(&control).map_err(|e| LabError::io(&control, "read", e))?;
    if enabled.split_whitespace().any(|c| c == controller) {
        return Ok(());
    }
    journal.record(Change::SubtreeControl {
        group: group.to_path_buf(),
        controller: controller.to_string(),
    })?;
    write(&control, &format!("+{controller}"))
}

pub(crate) fn make_group(journal: &mut Journal, path: &Path) -> Result<(), LabError> {
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

    const HYBRID: &str = "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const V2: &str = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";

    fn offers(list: &'static str) -> impl Fn(&Path) -> Vec<String> {
        move |_| list.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn v1_v2_hybrid_and_cgroup_free_hosts_are_told_apart() {
        let hybrid = Hierarchies::parse(HYBRID, offers("hugetlb"));
        assert_eq!(hybrid.kind(), HostKind::Hybrid);
        assert_eq!(hybrid.v1("blkio"), Some(Path::new("/sys/fs/cgroup/blkio")));
        assert_eq!(hybrid.v1("systemd"), None);
        assert_eq!(hybrid.v2_with("io"), None);
        assert_eq!(
            Hierarchy::find_in(&hybrid, "cpu"),
            Ok(Hierarchy::V1("/sys/fs/cgroup/cpu".into()))
        );
        let err = Hierarchy::find_in(&hybrid, "memory")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("/sys/fs/cgroup/unified") && err.contains("memory"),
            "{err}"
        );

        let v2 = Hierarchies::parse(V2, offers("cpuset cpu io memory pids"));
        assert_eq!(v2.kind(), HostKind::V2);
        assert_eq!(
            Hierarchy::find_in(&v2, "cpu"),
            Ok(Hierarchy::V2("/sys/fs/cgroup".into()))
        );
        let v1_only = Hierarchies::parse(
            &HYBRID.lines().take(3).collect::<Vec<_>>().join("\n"),
            offers(""),
        );
        assert_eq!(v1_only.kind(), HostKind::V1);
        let none = Hierarchies::parse("22 1 0:21 / /proc rw - proc proc rw\n", offers(""));
        assert_eq!(none.kind(), HostKind::None);
        let err = Hierarchy::find_in(&none, "cpu").unwrap_err();
        assert_eq!(err, CgroupError::NotMounted("cpu".into()));
        let err = err.to_string();
        assert!(err.contains("neither cgroup v1 nor v2"), "{err}");
    }

    /// The tests that change the cgroup2 root's subtree_control run one at a time, so each
    /// sees the root as it was before it.
    static V2_ROOT: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// A test that changes the cgroup2 root: the root (held for this test alone), a state
    /// directory for its journal, and the root's subtree_control before it.
    struct V2Test {
        root: PathBuf,
        state: PathBuf,
        before: String,
        _one_at_a_time: std::sync::MutexGuard<'static, ()>,
    }

    /// The cgroup2 root of this host for `test`, or why that test cannot run (printed).
    fn writable_v2_root(test: &str) -> Option<V2Test> {
        let reason = if !crate::host::sys::is_root() {
            "needs root".to_string()
        } else {
            match Hierarchies::read().v2 {
                Some(v2) => {
                    let guard = V2_ROOT.lock().unwrap_or_else(|e| e.into_inner());
                    return Some(V2Test {
                        before: subtree(&v2.root),
                        state: state_dir(test),
                        root: v2.root,
                        _one_at_a_time: guard,
                    });
                }
                None => "no cgroup2 filesystem is mounted".to_string(),
            }
        };
        eprintln!("skipped {test}: {reason}");
        None
    }

    fn state_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("pauselab-cgroup-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// After the undo: the run's cgroup is gone and the root's subtree_control is as it was.
    fn assert_restored(root: &Path, before: &str, group: &Path, state: &Path) {
        assert!(!group.exists(), "{} left behind", group.display());
        assert_eq!(
            subtree(root),
            before,
            "the root's subtree_control was not restored"
        );
        fs::remove_dir_all(state).unwrap();
    }

    fn subtree(group: &Path) -> String {
        fs::read_to_string(group.join("cgroup.subtree_control")).unwrap()
    }

    fn cgroup_of(pid: u32) -> String {
        fs::read_to_string(format!("/proc/{pid}/cgroup"))
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("0::").map(str::to_string))
            .unwrap()
    }

    /// The controllers a v2 test enables: those the lab uses, else any this host offers
    /// (on a hybrid host that may be hugetlb alone), so subtree_control is changed for real.
    fn controllers_to_enable(root: &Path) -> Vec<String> {
        let available = Hierarchies::read()
            .v2
            .map(|v2| v2.available)
            .unwrap_or_default();
        let used: Vec<String> = available
            .iter()
            .filter(|c| ["cpu", "io", "memory"].contains(&c.as_str()))
            .cloned()
            .collect();
        let chosen = if used.is_empty() {
            available.into_iter().take(1).collect()
        } else {
            used
        };
        if chosen.is_empty() {
            eprintln!(
                "{}: offers no controller; subtree_control is not exercised",
                root.display()
            );
        }
        chosen
    }

    /// Makes the run's v2 cgroup with the controllers a test enables, and moves `pid` into
    /// its runner leaf, as a run with the io.max fault does.
    fn hold_run_group(journal: &mut Journal, root: &Path, pid: u32) -> PathBuf {
        let controllers = controllers_to_enable(root);
        let names: Vec<&str> = controllers.iter().map(String::as_str).collect();
        let run_id = journal.run_id().to_string();
        let group = v2_run_group(journal, root, &run_id, &names).unwrap();
        let leaf = group.join(RUNNER_GROUP);
        make_group(journal, &leaf).unwrap();
        join(journal, root, &leaf, pid).unwrap();
        for controller in &names {
            for dir in [root, group.as_path()] {
                let enabled = subtree(dir);
                assert!(
                    enabled.split_whitespace().any(|c| c == *controller),
                    "{controller} not enabled in {}",
                    dir.display()
                );
            }
        }
        group
    }

    /// A run's v2 cgroup with controllers enabled on the way down and a process moved into
    /// it; the undo moves the process back, removes the cgroups and leaves the root's
    /// subtree_control as it was.
    #[test]
    fn v2_run_group_subtree_control_and_join_are_undone() {
        let Some(V2Test {
            root,
            state,
            before,
            _one_at_a_time,
        }) = writable_v2_root("v2_run_group_subtree_control_and_join_are_undone")
        else {
            return;
        };
        let mut sleeper = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let home = cgroup_of(sleeper.id());
        let run_id = format!("unit-join-{}", std::process::id());
        let mut journal = Journal::create(&state, &run_id, "test").unwrap();
        let group = hold_run_group(&mut journal, &root, sleeper.id());
        assert_eq!(
            cgroup_of(sleeper.id()),
            format!("/pauselab-{run_id}/{RUNNER_GROUP}")
        );
        let failures = journal.undo_all();
        assert!(failures.is_empty(), "{failures:?}");
        assert_eq!(
            cgroup_of(sleeper.id()),
            home,
            "the process was not moved back"
        );
        let _ = sleeper.kill();
        let _ = sleeper.wait();
        assert_restored(&root, &before, &group, &state);
    }

    /// cpu.max, io.max, memory.max and memory.swap.max written in a run's v2 cgroups, and
    /// gone with the undo; each part skips (printed) when this host's v2 lacks the controller.
    #[test]
    fn v2_limits_are_written_and_undone() {
        let Some(V2Test {
            root,
            state,
            before,
            _one_at_a_time,
        }) = writable_v2_root("v2_limits_are_written_and_undone")
        else {
            return;
        };
        let hierarchies = Hierarchies::read();
        let run_id = format!("unit-limits-{}", std::process::id());
        let mut journal = Journal::create(&state, &run_id, "test").unwrap();
        let mut exercised = 0;
        if let Ok(Hierarchy::V2(_)) = Hierarchy::find_in(&hierarchies, "cpu") {
            let procs = create_cpu_limited(&mut journal, &run_id, "cpu", 0.5).unwrap();
            let cpu_max = fs::read_to_string(procs.with_file_name("cpu.max")).unwrap();
            assert_eq!(cpu_max.trim(), "50000 100000");
            exercised += 1;
        } else {
            eprintln!("v2_limits_are_written_and_undone: cpu.max skipped: the cpu controller is not on cgroup v2 here");
        }
        if let Ok(Hierarchy::V2(_)) = Hierarchy::find_in(&hierarchies, "memory") {
            let spec = MemoryCgroup {
                swap: Some(64 << 20),
                ..spec(None, false, None)
            };
            let groups = create_memory_limited(&mut journal, &run_id, "memory", &spec).unwrap();
            let read = |dir: &Path, file| {
                fs::read_to_string(dir.join(file))
                    .unwrap()
                    .trim()
                    .to_string()
            };
            assert_eq!(read(&groups.variant, "memory.max"), "1782579200");
            assert_eq!(read(&groups.variant, "memory.swap.max"), "67108864");
            assert_eq!(read(&groups.jvm, "memory.swap.max"), "0");
            exercised += 1;
        } else {
            eprintln!("v2_limits_are_written_and_undone: memory.max skipped: the memory controller is not on cgroup v2 here");
        }
        if hierarchies.v2_with("io").is_some() {
            let group = v2_run_group(&mut journal, &root, &run_id, &["io"]).unwrap();
            let device = whole_disk().expect("a block device for io.max");
            let mark = journal.mark();
            limit_writes(&mut journal, &group, &device, 4 << 20).unwrap();
            let io_max = fs::read_to_string(group.join("io.max")).unwrap();
            assert!(
                io_max.contains(&format!("{device} ")) && io_max.contains("wbps=4194304"),
                "{io_max}"
            );
            assert!(journal.undo_to(mark).is_empty());
            let io_max = fs::read_to_string(group.join("io.max")).unwrap();
            assert!(
                !io_max.contains("wbps=4194304"),
                "io.max not undone: {io_max}"
            );
            exercised += 1;
        } else {
            eprintln!("v2_limits_are_written_and_undone: io.max skipped: the io controller is not on cgroup v2 here");
        }
        let group = run_group_path(&root, &run_id);
        assert_eq!(group.exists(), exercised > 0);
        assert!(journal.undo_all().is_empty());
        assert_restored(&root, &before, &group, &state);
    }

    /// MAJ:MIN of a whole disk (io.max takes no partitions, loop devices or RAM disks).
    fn whole_disk() -> Option<String> {
        let mut names: Vec<String> = fs::read_dir("/sys/block")
            .ok()?
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with("loop") && !n.starts_with("ram") && !n.starts_with("zram"))
            .collect();
        names.sort();
        names
            .first()
            .and_then(|n| crate::host::sys::block_dev_numbers(n).ok())
    }

    /// A process holding a v2 cgroup of its own (with controllers it enabled) is killed
    /// with SIGKILL; replaying its journal, as `pauselab lab cleanup` does, removes the
    /// cgroups and restores the root's subtree_control.
    #[test]
    fn v2_cgroup_of_a_killed_run_is_cleaned_up() {
        const HOLDER: &str = "PAUSELAB_TEST_V2_HOLDER";
        if let Some(state) = std::env::var_os(HOLDER) {
            // The run that gets killed.
            let root = Hierarchies::read().v2.unwrap().root;
            let run_id = format!("unit-killed-{}", std::process::id());
            let mut journal = Journal::create(Path::new(&state), &run_id, "test").unwrap();
            let group = hold_run_group(&mut journal, &root, std::process::id());
            println!("holding {}", group.display());
            std::thread::sleep(std::time::Duration::from_secs(60));
            std::process::exit(1);
        }
        let Some(V2Test {
            root,
            state,
            before,
            _one_at_a_time,
        }) = writable_v2_root("v2_cgroup_of_a_killed_run_is_cleaned_up")
        else {
            return;
        };
        let mut holder = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "host::cgroup::tests::v2_cgroup_of_a_killed_run_is_cleaned_up",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(HOLDER, &state)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let mut stdout = std::io::BufReader::new(holder.stdout.take().unwrap());
        while !line.contains("holding ") {
            line.clear();
            assert!(
                std::io::BufRead::read_line(&mut stdout, &mut line).unwrap() > 0,
                "the holder ended"
            );
        }
        let group = PathBuf::from(line.split("holding ").nth(1).unwrap().trim());
        assert!(group.join(RUNNER_GROUP).exists());
        holder.kill().unwrap();
        holder.wait().unwrap();
        assert!(
            group.exists(),
            "SIGKILL left nothing: the test would prove nothing"
        );
        let reports = crate::host::journal::cleanup_stale(&state).unwrap();
        assert_eq!(reports.len(), 1);
        assert!(reports[0].failures.is_empty(), "{:?}", reports[0]);
        assert_restored(&root, &before, &group, &state);
    }

    #[test]
    fn this_host_has_a_cpu_controller_or_says_why() {
        match Hierarchy::find("cpu") {
            Ok(h) => assert!(h.root().join("cgroup.procs").exists(), "{h:?}"),
            Err(e) => {
                let e = e.to_string();
                assert!(e.contains("cgroup") || e.contains("cpu"), "{e}")
            }
        }
    }

    fn spec(swap: Option<u64>, jvm_swap: bool, swappiness: Option<u32>) -> MemoryCgroup {
        MemoryCgroup {
            limit: 1700 << 20,
            swap,
            jvm_swap,
            swappiness,
            filler: None,
            filler_limit: None,
        }
    }

    fn files(settings: &[Setting], member: Member) -> Vec<(&str, &str)> {
        settings
            .iter()
            .filter(|s| s.member == member)
            .map(|s| (s.file, s.value.as_str()))
            .collect()
    }

    #[test]
    fn v1_limits_memory_before_memory_plus_swap() {
        let settings =
            memory_settings(Version::V1, &spec(Some(1 << 30), true, None), 60, true).unwrap();
        let variant = files(&settings, Member::Variant);
        assert_eq!(
            variant,
            [
                ("memory.swappiness", "60"),
                ("memory.limit_in_bytes", "1782579200"),
                ("memory.memsw.limit_in_bytes", "2856321024"),
            ]
        );
        assert_eq!(files(&settings, Member::Jvm), [("memory.swappiness", "60")]);
    }

    #[test]
    fn v1_keeps_the_jvm_out_of_swap_with_swappiness_0_and_memsw() {
        let settings =
            memory_settings(Version::V1, &spec(None, false, Some(100)), 60, true).unwrap();
        assert_eq!(
            files(&settings, Member::Jvm),
            [
                ("memory.swappiness", "0"),
                ("memory.limit_in_bytes", "1782579200"),
                ("memory.memsw.limit_in_bytes", "1782579200"),
            ]
        );
        assert_eq!(
            files(&settings, Member::Filler),
            [("memory.swappiness", "100")]
        );
        let err = memory_settings(Version::V1, &spec(Some(0), true, None), 60, false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("swapaccount=1"), "{err}");
    }

    #[test]
    fn v2_uses_memory_max_and_swap_max_and_refuses_swappiness() {
        let settings =
            memory_settings(Version::V2, &spec(Some(0), false, None), 60, false).unwrap();
        assert_eq!(
            files(&settings, Member::Variant),
            [("memory.max", "1782579200"), ("memory.swap.max", "0")]
        );
        assert_eq!(files(&settings, Member::Jvm), [("memory.swap.max", "0")]);
        let neighbour = MemoryCgroup {
            filler_limit: Some(300 << 20),
            ..spec(None, false, None)
        };
        let settings = memory_settings(Version::V2, &neighbour, 60, false).unwrap();
        assert_eq!(
            files(&settings, Member::Filler),
            [("memory.max", "314572800")]
        );
        let settings = memory_settings(Version::V1, &neighbour, 60, true).unwrap();
        assert_eq!(
            files(&settings, Member::Filler),
            [
                ("memory.swappiness", "60"),
                ("memory.limit_in_bytes", "314572800")
            ]
        );
        let err = memory_settings(Version::V2, &spec(None, true, Some(1)), 60, false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("/proc/sys/vm/swappiness"), "{err}");
    }
}
