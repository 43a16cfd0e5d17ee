//! Host facts for the manifest (docs/bundle-format.md), taken while the run's filesystems
//! are mounted.

use std::fs;
use std::path::Path;

use pauselab_host::facts::HostFacts;
use pauselab_host::mounts::filesystem_of;
use serde_json::{json, Value};

fn read_trim(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// The manifest's `host` object: the contract's fields, plus every fact pauselab-host
/// reads under `details`. `paths` are (role, path).
pub fn collect(paths: &[(&str, &Path)]) -> Value {
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
    let path_facts: Vec<Value> = paths
        .iter()
        .map(|(role, path)| match filesystem_of(path) {
            Ok(fs) => json!({
                "role": role,
                "path": path,
                "filesystem": fs.fs_type,
                "device": fs.block_device.as_ref().map(|d| format!("/dev/{}", d.name)).unwrap_or(fs.source.clone()),
                "stable_writes": fs.stable_writes(),
                "mount_point": fs.mount_point,
                "memory_backed": fs.memory_backed,
            }),
            Err(e) => json!({ "role": role, "path": path, "error": e.to_string() }),
        })
        .collect();
    json!({
        "hostname": read_trim("/proc/sys/kernel/hostname"),
        "kernel": facts.kernel.as_ref().map(|k| k.release.clone()),
        "distribution": distribution,
        "cpu": cpu_model,
        "cpus": std::thread::available_parallelism().map(|n| n.get()).ok(),
        "memory_bytes": memory_bytes,
        "thp": facts.transparent_huge_pages.as_ref().and_then(|t| t.enabled.as_ref()).map(|c| c.selected.clone()),
        "swap_bytes": facts.swap.as_ref().map(|s| s.total_kib * 1024),
        "dirty": facts.dirty.as_ref().map(|d| json!({
            "dirty_ratio": d.dirty_ratio,
            "dirty_bytes": d.dirty_bytes,
            "dirty_background_ratio": d.dirty_background_ratio,
            "dirty_background_bytes": d.dirty_background_bytes,
            "dirty_expire_centisecs": d.dirty_expire_centisecs,
            "dirty_writeback_centisecs": d.dirty_writeback_centisecs,
        })),
        "cgroup_v1_blkio": Path::new(crate::host::fault::BLKIO_WRITE_BPS).exists(),
        "paths": path_facts,
        "details": facts,
    })
}
