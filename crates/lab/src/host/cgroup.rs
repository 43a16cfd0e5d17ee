//! Cgroups per variant, cgroup v1 or v2: a CPU cgroup for CFS bandwidth limits
//! (`cpu_quota`), and a memory cgroup (`memory_cgroup`: memory and swap limits, swappiness)
//! with the JVM and an optional filler process in cgroups of their own inside it. Created
//! through the journal, removed with the run; the JVM joins its cgroups between fork and
//! exec, so every thread it ever starts is inside.

use std::fs;
use std::path::{Path, PathBuf};

use crate::experiment::MemoryCgroup;
use crate::host::journal::{Change, Journal};
use crate::LabError;

/// CFS period used for every quota (the kernel's default).
pub const PERIOD_US: u64 = 100_000;

/// Where a controller is mounted, and which cgroup version it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hierarchy {
    V1(PathBuf),
    V2(PathBuf),
}

impl Hierarchy {
    /// Finds `controller` (`cpu`, `memory`) on this host from /proc/self/mountinfo: its own
    /// v1 hierarchy, else the v2 one when the controller is enabled for child cgroups there.
    pub fn find(controller: &str) -> Result<Hierarchy, String> {
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
            if fstype == "cgroup" && super_options.split(',').any(|o| o == controller) {
                return Ok(Hierarchy::V1(PathBuf::from(mount_point)));
            }
            if fstype == "cgroup2" && v2.is_none() {
                v2 = Some(PathBuf::from(mount_point));
            }
        }
        if let Some(root) = v2 {
            let controllers =
                fs::read_to_string(root.join("cgroup.subtree_control")).unwrap_or_default();
            if controllers.split_whitespace().any(|c| c == controller) {
                return Ok(Hierarchy::V2(root));
            }
            return Err(format!(
                "{}: the {controller} controller is not enabled for child cgroups (cgroup.subtree_control)",
                root.display()
            ));
        }
        Err(format!("no cgroup {controller} controller is mounted"))
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
    /// in v2 with `controller` enabled for the cgroups below it.
    fn run_group(
        &self,
        journal: &mut Journal,
        run_id: &str,
        controller: &str,
    ) -> Result<PathBuf, LabError> {
        let run_group = self.root().join(format!("pauselab-{run_id}"));
        if !run_group.exists() {
            make_group(journal, &run_group)?;
        }
        if let Hierarchy::V2(_) = self {
            enable_controller(&run_group, controller)?;
        }
        Ok(run_group)
    }
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
) -> Result<Vec<Setting>, String> {
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
                    return Err("this kernel does not account swap per cgroup (no memory.memsw.limit_in_bytes; boot with swapaccount=1), so a swap limit cannot be set".into());
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
                return Err("per-cgroup swappiness exists only in cgroup v1; set /proc/sys/vm/swappiness as a host setting of the variant instead".into());
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
    let fail = |e: String| LabError::Host(format!("memory_cgroup: {e}"));
    let hierarchy = Hierarchy::find("memory").map_err(fail)?;
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
        memory_settings(hierarchy.version(), spec, host_swappiness, memsw).map_err(fail)?;
    if variant.exists() {
        // cgroup v2 has one hierarchy: `cpu_quota` made this very cgroup already, and the
        // JVM can only be in one of them.
        return Err(fail(format!(
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
        enable_controller(&groups.variant, "memory")?;
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

/// v2: lets the cgroups below `group` use `controller` (`cgroup.subtree_control`).
fn enable_controller(group: &Path, controller: &str) -> Result<(), LabError> {
    write(
        &group.join("cgroup.subtree_control"),
        &format!("+{controller}"),
    )
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
        match Hierarchy::find("cpu") {
            Ok(h) => assert!(h.root().join("cgroup.procs").exists(), "{h:?}"),
            Err(e) => assert!(e.contains("cgroup") || e.contains("cpu"), "{e}"),
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
        let err = memory_settings(Version::V1, &spec(Some(0), true, None), 60, false).unwrap_err();
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
        let err = memory_settings(Version::V2, &spec(None, true, Some(1)), 60, false).unwrap_err();
        assert!(err.contains("/proc/sys/vm/swappiness"), "{err}");
    }
}
