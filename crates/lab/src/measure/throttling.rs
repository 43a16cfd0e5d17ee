//! What a CPU cgroup's bandwidth limit did to a variant: `cpu.stat`, read after the run.

use std::fs;
use std::path::Path;

use crate::measure::Measurement;

/// CFS bandwidth statistics of a cgroup made by the host layer's `cgroup::create_cpu_limited` (given its
/// `cgroup.procs`): periods, throttled periods and throttled time in ms, cgroup v1 or v2.
pub fn throttling(procs: &Path) -> Vec<Measurement> {
    let Some(dir) = procs.parent() else {
        return Vec::new();
    };
    let Ok(text) = fs::read_to_string(dir.join("cpu.stat")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let (Some(key), Some(value)) = (fields.next(), fields.next()) else {
            continue;
        };
        let Ok(value) = value.parse::<f64>() else {
            continue;
        };
        match key {
            "nr_periods" => out.push(Measurement::new("cgroup.periods", value, "")),
            "nr_throttled" => out.push(Measurement::new("cgroup.throttled_periods", value, "")),
            "throttled_time" => {
                out.push(Measurement::new("cgroup.throttled_ms", value / 1e6, "ms"))
            }
            "throttled_usec" => {
                out.push(Measurement::new("cgroup.throttled_ms", value / 1e3, "ms"))
            }
            _ => {}
        }
    }
    out
}
