//! Host facts for the manifest, taken while the run's filesystems are mounted.

use std::fs;
use std::path::Path;

use serde_json::{json, Value};

fn read_trim(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// Kernel, distribution, CPU, memory, THP, swap and dirty settings, and the filesystem,
/// device and `stable_writes` of each of `paths` (name, path).
pub fn collect(paths: &[(&str, &Path)]) -> Value {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string());
    let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_total_kib = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok());
    let distribution = fs::read_to_string("/etc/os-release").ok().and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("PRETTY_NAME="))
            .map(|v| v.trim_matches('"').to_string())
    });
    let swaps: Vec<String> = fs::read_to_string("/proc/swaps")
        .unwrap_or_default()
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    let dirty: serde_json::Map<String, Value> = [
        "dirty_ratio",
        "dirty_background_ratio",
        "dirty_bytes",
        "dirty_background_bytes",
        "dirty_expire_centisecs",
        "dirty_writeback_centisecs",
    ]
    .iter()
    .filter_map(|k| read_trim(&format!("/proc/sys/vm/{k}")).map(|v| (k.to_string(), json!(v))))
    .collect();
    let path_facts: Vec<Value> = paths.iter().map(|(name, p)| path_fact(name, p)).collect();
    json!({
        "kernel": read_trim("/proc/sys/kernel/osrelease"),
        "kernel_version": read_trim("/proc/sys/kernel/version"),
        "hostname": read_trim("/proc/sys/kernel/hostname"),
        "distribution": distribution,
        "cpu_model": cpu_model,
        "cpus": std::thread::available_parallelism().map(|n| n.get()).ok(),
        "mem_total_kib": mem_total_kib,
        "thp_enabled": read_trim("/sys/kernel/mm/transparent_hugepage/enabled"),
        "thp_defrag": read_trim("/sys/kernel/mm/transparent_hugepage/defrag"),
        "swap": swaps,
        "vm": dirty,
        "cgroup_v1_blkio": Path::new(crate::fault::BLKIO_WRITE_BPS).exists(),
        "psi": Path::new("/proc/pressure/io").exists(),
        "paths": path_facts,
    })
}

/// The mount holding `path`: mount point, filesystem type, source device, and the
/// device's `stable_writes` when it is a block device.
fn path_fact(name: &str, path: &Path) -> Value {
    let canonical = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut best: Option<(String, String, String, String)> = None;
    for line in mountinfo.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let Some(sep) = fields.iter().position(|f| *f == "-") else {
            continue;
        };
        if fields.len() < sep + 3 || fields.len() < 5 {
            continue;
        }
        let mount_point = fields[4].replace("\\040", " ");
        if canonical.starts_with(&mount_point)
            && best
                .as_ref()
                .map_or(true, |(m, ..)| mount_point.len() >= m.len())
        {
            best = Some((
                mount_point,
                fields[sep + 1].to_string(),
                fields[sep + 2].to_string(),
                fields[2].to_string(),
            ));
        }
    }
    let Some((mount_point, fstype, source, dev)) = best else {
        return json!({ "name": name, "path": path });
    };
    let stable_writes = read_trim(&format!("/sys/dev/block/{dev}/queue/stable_writes"));
    json!({
        "name": name,
        "path": path,
        "mount_point": mount_point,
        "fstype": fstype,
        "source": source,
        "device": dev,
        "stable_writes": stable_writes,
    })
}
