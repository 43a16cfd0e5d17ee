//! The size of one scrape, bounded per host: every JVM's series are measured on their own,
//! then kept while they fit in the budget, each user's JVMs taking turns (the user with the
//! least kept so far goes next), so that one user's many JVMs cannot crowd out another's.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::fmt;

use prometheus_client::encoding::text;
use prometheus_client::registry::Registry;

/// The most series one scrape exposes, all JVMs together. A busy host (100 JVMs with GC
/// logs and `--all-counters`) has about half of it.
pub(crate) const MAX_SERIES: usize = 100_000;
/// The largest body of one scrape (before compression).
pub(crate) const MAX_BODY_BYTES: usize = 16 << 20;
/// Kept back from the budget for the exporter's own series, which are never left out.
const RESERVE: Cost = Cost {
    bytes: 256 << 10,
    series: 1_000,
};
/// What the JVMs' series may take together.
pub(crate) const JVM_BUDGET: Cost = Cost {
    bytes: MAX_BODY_BYTES - RESERVE.bytes,
    series: MAX_SERIES - RESERVE.series,
};

/// Bytes and series of an exposition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Cost {
    pub bytes: usize,
    pub series: usize,
}

impl Cost {
    fn plus(self, other: Cost) -> Cost {
        Cost {
            bytes: self.bytes + other.bytes,
            series: self.series + other.series,
        }
    }

    fn within(self, budget: Cost) -> bool {
        self.bytes <= budget.bytes && self.series <= budget.series
    }
}

/// The OpenMetrics text of `registry`, counted, not kept: bytes, and sample lines.
/// Measured alone, a JVM's series cost at least what they add to the whole scrape (which
/// writes each family's `# HELP` and `# TYPE` once for all JVMs).
pub(crate) fn measure(registry: &Registry) -> Cost {
    let mut counter = Counter {
        cost: Cost::default(),
        in_comment: false,
        at_line_start: true,
    };
    // Counting cannot fail; an error here would be a bug in an encoder: count nothing.
    let _ = text::encode(&mut counter, registry);
    counter.cost
}

struct Counter {
    cost: Cost,
    /// Inside a line that starts with `#` (not a sample).
    in_comment: bool,
    at_line_start: bool,
}

impl fmt::Write for Counter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.cost.bytes += s.len();
        for byte in s.bytes() {
            if self.at_line_start {
                self.in_comment = byte == b'#';
            }
            self.at_line_start = byte == b'\n';
            if self.at_line_start && !self.in_comment {
                self.cost.series += 1;
            }
        }
        Ok(())
    }
}

/// Which JVMs to keep, given each one's uid and cost in scrape order: the uid that kept the
/// fewest bytes so far goes next with its next JVM, which is kept if it still fits.
pub(crate) fn fair_share(jvms: &[(u32, Cost)], budget: Cost) -> Vec<bool> {
    let mut by_uid: BTreeMap<u32, std::collections::VecDeque<usize>> = BTreeMap::new();
    for (index, (uid, _)) in jvms.iter().enumerate() {
        by_uid.entry(*uid).or_default().push_back(index);
    }
    let mut turns: BinaryHeap<Reverse<(usize, u32)>> =
        by_uid.keys().map(|&uid| Reverse((0, uid))).collect();
    let mut keep = vec![false; jvms.len()];
    let mut total = Cost::default();
    while let Some(Reverse((kept_bytes, uid))) = turns.pop() {
        let Some(index) = by_uid.get_mut(&uid).and_then(|q| q.pop_front()) else {
            continue;
        };
        let cost = jvms[index].1;
        let mut kept_bytes = kept_bytes;
        if total.plus(cost).within(budget) {
            keep[index] = true;
            total = total.plus(cost);
            kept_bytes += cost.bytes;
        }
        turns.push(Reverse((kept_bytes, uid)));
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(bytes: usize) -> Cost {
        Cost { bytes, series: 1 }
    }

    #[test]
    fn one_users_many_large_jvms_cannot_crowd_out_another_users() {
        let mut jvms: Vec<(u32, Cost)> = (0..400).map(|_| (65534, cost(1_000))).collect();
        jvms.push((1000, cost(300)));
        jvms.push((1000, cost(300)));
        let budget = Cost {
            bytes: 10_000,
            series: 100,
        };
        let keep = fair_share(&jvms, budget);
        assert!(keep[400] && keep[401], "the other user's JVMs are kept");
        let kept: usize = jvms
            .iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|((_, c), _)| c.bytes)
            .sum();
        assert!(kept <= budget.bytes, "{kept}");
        assert_eq!(keep.iter().filter(|k| **k).count(), 11);
    }

    #[test]
    fn a_jvm_too_large_alone_is_left_out_and_the_series_count_binds_too() {
        let jvms = [(1, cost(50)), (1, cost(5)), (2, cost(5)), (2, cost(5))];
        let keep = fair_share(
            &jvms,
            Cost {
                bytes: 20,
                series: 2,
            },
        );
        assert_eq!(keep, [false, true, true, false]);
    }

    #[test]
    fn measuring_counts_bytes_and_sample_lines() {
        use prometheus_client::metrics::gauge::Gauge;
        let mut registry = Registry::default();
        let gauge = Gauge::<i64>::default();
        gauge.set(7);
        registry.register("x", "a # in help", gauge);
        let mut text = String::new();
        text::encode(&mut text, &registry).unwrap();
        let cost = measure(&registry);
        assert_eq!(cost.bytes, text.len());
        assert_eq!(cost.series, 1, "{text}");
    }
}
