//! What memory pressure did to one variant: the JVM's major page faults (`/proc/PID/stat`,
//! sampled while it runs, since the numbers go with the process) and its memory cgroup's
//! own counters, read after the run (cgroup v1 or v2).

use std::fs;
use std::path::{Path, PathBuf};

use crate::measure::Measurement;

/// Major page faults of process `pid` so far: field 12 of `/proc/PID/stat` (None once the
/// process is gone).
pub fn major_faults(pid: u32) -> Option<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_major_faults(&text)
}

/// `majflt` from a `/proc/PID/stat` line; the command name in parentheses may hold spaces
/// and parentheses, so fields are counted after the last `)`.
fn parse_major_faults(stat: &str) -> Option<u64> {
    let (_, rest) = stat.rsplit_once(')')?;
    // rest starts at field 3 (state); majflt is field 12.
    rest.split_whitespace().nth(9)?.parse().ok()
}

/// One JVM's memory as the run watches it: major faults, and the peak of its cgroup's
/// swap, sampled once a second while it runs (both go with the process).
#[derive(Debug, Clone)]
pub struct MemoryWatch {
    pid: u32,
    /// The variant's memory cgroup and the JVM's own inside it.
    cgroups: Option<(PathBuf, PathBuf)>,
    major_faults: Option<u64>,
    peak_swap_bytes: Option<u64>,
}

impl MemoryWatch {
    pub fn new(pid: u32, cgroups: Option<(PathBuf, PathBuf)>) -> MemoryWatch {
        MemoryWatch {
            pid,
            cgroups,
            major_faults: None,
            peak_swap_bytes: None,
        }
    }

    /// Takes a sample; call while the JVM runs (a gone process keeps the last values).
    pub fn sample(&mut self) {
        if let Some(faults) = major_faults(self.pid) {
            self.major_faults = Some(faults);
        }
        if let Some(swap) = self.cgroups.as_ref().and_then(|(_, jvm)| swap_bytes(jvm)) {
            self.peak_swap_bytes = Some(self.peak_swap_bytes.unwrap_or(0).max(swap));
        }
    }

    /// `process.major_faults`, `memcg.jvm_peak_swap_mib` and the cgroup's own counters.
    pub fn measurements(&self) -> Vec<Measurement> {
        let mut out = Vec::new();
        if let Some(faults) = self.major_faults {
            out.push(Measurement::new("process.major_faults", faults as f64, ""));
        }
        if let Some(peak) = self.peak_swap_bytes {
            out.push(Measurement::new(
                "memcg.jvm_peak_swap_mib",
                peak as f64 / 1048576.0,
                "MiB",
            ));
        }
        if let Some((variant, _)) = &self.cgroups {
            out.extend(cgroup_counters(variant));
        }
        out
    }
}

/// Bytes of a cgroup's memory in swap now (v1 `memory.stat` `swap`, v2 `memory.swap.current`).
fn swap_bytes(group: &Path) -> Option<u64> {
    let stat = fs::read_to_string(group.join("memory.stat")).ok();
    stat.and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("swap ")?.trim().parse().ok())
    })
    .or_else(|| {
        fs::read_to_string(group.join("memory.swap.current"))
            .ok()?
            .trim()
            .parse()
            .ok()
    })
}

/// Counters of a variant's memory cgroup (the one holding the limits), read after the run:
/// how often its usage hit the limit (v1 `memory.failcnt`, v2 `memory.events` `max`) and its
/// peak usage (v1 `memory.max_usage_in_bytes`, v2 `memory.peak`).
fn cgroup_counters(variant: &Path) -> Vec<Measurement> {
    let number = |file: &str| {
        fs::read_to_string(variant.join(file))
            .ok()
            .and_then(|t| t.trim().parse::<f64>().ok())
    };
    let events_max = || {
        fs::read_to_string(variant.join("memory.events"))
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix("max ")?.trim().parse::<f64>().ok())
    };
    let mut out = Vec::new();
    if let Some(hits) = number("memory.failcnt").or_else(events_max) {
        out.push(Measurement::new("memcg.limit_hits", hits, ""));
    }
    if let Some(peak) = number("memory.max_usage_in_bytes").or_else(|| number("memory.peak")) {
        out.push(Measurement::new("memcg.peak_mib", peak / 1048576.0, "MiB"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn major_faults_are_counted_after_the_command_name() {
        let line =
            "4242 (java (x) y) S 1 4242 4242 0 -1 4194560 120 0 37 0 5 3 0 0 20 0 9 0 100 0 0";
        assert_eq!(parse_major_faults(line), Some(37));
        assert_eq!(parse_major_faults("garbage"), None);
    }

    #[test]
    fn this_process_has_a_fault_count() {
        let mine = major_faults(std::process::id()).expect("own /proc/PID/stat");
        // An independent reading: getrusage counts the same major faults.
        // SAFETY: getrusage writes into a zeroed struct we own.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) }, 0);
        assert!(
            usage.ru_majflt as u64 >= mine,
            "{} < {mine}",
            usage.ru_majflt
        );
    }
}
