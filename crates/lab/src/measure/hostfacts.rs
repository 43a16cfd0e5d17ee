//! Host facts for the manifest (docs/bundle-format.md), taken while the run's filesystems
//! are mounted.

use std::fs;
use std::path::Path;

use pauselab_bundle::{Host, HostPath};
use pauselab_host::facts::HostFacts;
use pauselab_host::mounts::filesystem_of;
use serde_json::json;

fn read_trim(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// The manifest's `host` object: the contract's fields, plus every fact pauselab-host
/// reads under `details`. `paths` are (role, path).
pub fn collect(paths: &[(&str, &Path)]) -> Host {
    let facts = HostFacts::collect();
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string());
    let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory_bytes = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok())
        .map(|kib| kib * 1024);
    let distribution = fs::read_to_string("/etc/os-release").ok().and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("PRETTY_NAME="))
            .map(|v| v.trim_matches('"').to_string())
    });
    let path_facts = paths
        .iter()
        .map(|(role, path)| {
            let mut fact = HostPath {
                role: role.to_string(),
                path: path.display().to_string(),
                ..HostPath::default()
            };
            match filesystem_of(path) {
                Ok(fs) => {
                    fact.device = Some(
                        fs.block_device
                            .as_ref()
                            .map(|d| format!("/dev/{}", d.name))
                            .unwrap_or(fs.source.clone()),
                    );
                    fact.stable_writes = fs.stable_writes();
                    fact.other
                        .insert("mount_point".into(), json!(fs.mount_point));
                    fact.other
                        .insert("memory_backed".into(), json!(fs.memory_backed));
                    fact.filesystem = Some(fs.fs_type);
                }
                Err(e) => {
                    fact.other.insert("error".into(), json!(e.to_string()));
                }
            }
            fact
        })
        .collect();
    let dirty = facts.dirty.as_ref().map(|d| {
        [
            ("dirty_ratio", json!(d.dirty_ratio)),
            ("dirty_bytes", json!(d.dirty_bytes)),
            ("dirty_background_ratio", json!(d.dirty_background_ratio)),
            ("dirty_background_bytes", json!(d.dirty_background_bytes)),
            ("dirty_expire_centisecs", json!(d.dirty_expire_centisecs)),
            (
                "dirty_writeback_centisecs",
                json!(d.dirty_writeback_centisecs),
            ),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_string(), value))
        .collect()
    });
    let hierarchies = crate::host::cgroup::Hierarchies::read();
    let throttle = crate::host::fault::WriteThrottle::choose(&hierarchies);
    let other = [
        (
            "cgroup_v1_blkio".to_string(),
            json!(matches!(
                throttle,
                Ok((crate::host::fault::WriteThrottle::BlkioV1 { .. }, _))
            )),
        ),
        ("cgroup_kind".to_string(), json!(hierarchies.kind())),
        (
            "cgroup_v2_controllers".to_string(),
            json!(hierarchies.v2.as_ref().map(|v2| &v2.available)),
        ),
        (
            "write_throttle".to_string(),
            match throttle {
                Ok((throttle, _)) => json!(throttle),
                Err(missing) => json!({ "missing": missing.to_string() }),
            },
        ),
        ("details".to_string(), json!(facts)),
    ]
    .into_iter()
    .collect();
    Host {
        hostname: read_trim("/proc/sys/kernel/hostname"),
        kernel: facts.kernel.as_ref().map(|k| k.release.clone()),
        distribution,
        cpu: cpu_model,
        cpus: std::thread::available_parallelism()
            .ok()
            .map(|n| n.get() as u32),
        memory_bytes,
        thp: facts
            .transparent_huge_pages
            .as_ref()
            .and_then(|t| t.enabled.as_ref())
            .map(|c| c.selected.clone()),
        swap_bytes: facts.swap.as_ref().map(|s| s.total_kib * 1024),
        dirty,
        paths: path_facts,
        other,
    }
}
