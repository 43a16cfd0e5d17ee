//! `/proc/vmstat` snapshots and the counters that move with JVM stalls.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::read::{parse_error, read_string};
use crate::Result;

const VMSTAT: &str = "/proc/vmstat";

/// Event counters (monotonic) worth showing beside pauses, in display order.
pub const STALL_EVENTS: &[&str] = &[
    "pgmajfault",
    "pswpin",
    "pswpout",
    "allocstall",
    "compact_stall",
    "thp_fault_alloc",
    "thp_split",
];

/// Gauges (current page counts) shown as they are, not as deltas.
pub const STALL_GAUGES: &[&str] = &["nr_dirty", "nr_writeback"];

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct VmStat {
    pub values: BTreeMap<String, u64>,
}

impl VmStat {
    pub fn parse(path: &Path, text: &str) -> Result<VmStat> {
        let mut values = BTreeMap::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let (name, value) = line
                .split_once(' ')
                .ok_or_else(|| parse_error(path, format!("bad line {line:?}")))?;
            let value = value
                .trim()
                .parse()
                .map_err(|_| parse_error(path, format!("bad value in {line:?}")))?;
            values.insert(name.to_string(), value);
        }
        Ok(VmStat { values })
    }

    pub fn read() -> Result<VmStat> {
        VmStat::parse(Path::new(VMSTAT), &read_string(VMSTAT)?)
    }

    /// A counter; the kernel splits some into per-zone or per-kind counters with a common
    /// prefix (`allocstall_normal`, `thp_split_pmd`, ...): those are summed, except the
    /// `*_failed` ones, which count attempts that did not happen.
    pub fn get(&self, name: &str) -> u64 {
        if let Some(value) = self.values.get(name) {
            return *value;
        }
        let prefix = format!("{name}_");
        self.values
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .filter(|(k, _)| !k.ends_with("_failed"))
            .map(|(_, v)| *v)
            .sum()
    }

    /// Increase of `name` since `earlier` (0 if it went backwards, e.g. after a wrap).
    pub fn delta(&self, earlier: &VmStat, name: &str) -> u64 {
        self.get(name).saturating_sub(earlier.get(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_split_counters_and_computes_deltas() {
        let before = VmStat::parse(Path::new(VMSTAT), "pgmajfault 10\nallocstall_dma 1\nallocstall_normal 2\nallocstall_movable 3\nallocstalls_other 99\nthp_split_page 2\nthp_split_page_failed 7\nthp_split_pmd 1\n").unwrap();
        let after = VmStat::parse(
            Path::new(VMSTAT),
            "pgmajfault 15\nallocstall_dma 1\nallocstall_normal 4\nallocstall_movable 3\n",
        )
        .unwrap();
        assert_eq!(before.get("allocstall"), 6);
        assert_eq!(before.get("thp_split"), 3);
        assert_eq!(after.delta(&before, "allocstall"), 2);
        assert_eq!(after.delta(&before, "pgmajfault"), 5);
        assert_eq!(before.delta(&after, "pgmajfault"), 0);
        assert!(VmStat::parse(Path::new(VMSTAT), "pgmajfault x\n").is_err());
    }

    #[test]
    fn live_vmstat_has_the_stall_counters() {
        let stat = VmStat::read().unwrap();
        for name in STALL_GAUGES {
            assert!(stat.values.contains_key(*name), "{name}");
        }
    }
}
