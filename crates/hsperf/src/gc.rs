//! The collectors' and the heap's cumulative counters (`sun.gc.*`), as `pauselab watch`
//! shows them.

use crate::format::Snapshot;

/// One collector's cumulative counters (`sun.gc.collector.N.*`).
#[derive(Debug, Clone, PartialEq)]
pub struct CollectorCounters {
    /// `G1 Young Generation`, `ZGC Pauses`, ... as the JVM names it.
    pub name: String,
    /// Collections so far.
    pub invocations: i64,
    /// Seconds spent in them.
    pub seconds: f64,
}

/// The heap's young and old generations together (metaspace is counted elsewhere).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeapCounters {
    /// Bytes used in their spaces.
    pub used: Option<u64>,
    /// Bytes committed to them.
    pub capacity: Option<u64>,
}

impl Snapshot {
    /// The named collectors, by index.
    pub fn collectors(&self) -> Vec<CollectorCounters> {
        // Indexes need not start at 0: ZGC publishes only collector 2.
        let mut indexes: Vec<u32> = self
            .counters()
            .filter_map(|c| {
                c.name
                    .strip_prefix("sun.gc.collector.")?
                    .strip_suffix(".name")?
                    .parse()
                    .ok()
            })
            .collect();
        indexes.sort_unstable();
        let mut collectors = Vec::new();
        for index in indexes {
            let prefix = format!("sun.gc.collector.{index}");
            let Some(name) = self.value_str(&format!("{prefix}.name")) else {
                continue;
            };
            collectors.push(CollectorCounters {
                name: name.into_owned(),
                invocations: self
                    .value_i64(&format!("{prefix}.invocations"))
                    .unwrap_or(0),
                seconds: self.seconds(&format!("{prefix}.time")).unwrap_or(0.0),
            });
        }
        collectors
    }

    /// Generations 0 (young) and 1 (old): what their spaces use and what they commit.
    pub fn heap(&self) -> HeapCounters {
        let mut heap = HeapCounters::default();
        for counter in self.counters() {
            let Some(rest) = counter.name.strip_prefix("sun.gc.generation.") else {
                continue;
            };
            if !(rest.starts_with("0.") || rest.starts_with("1.")) {
                continue;
            }
            let value = self.value_i64(counter.name).unwrap_or(0).max(0) as u64;
            if rest.contains(".space.") && rest.ends_with(".used") {
                *heap.used.get_or_insert(0) += value;
            } else if rest.len() == "0.capacity".len() && rest.ends_with(".capacity") {
                *heap.capacity.get_or_insert(0) += value;
            }
        }
        heap
    }
}

#[cfg(test)]
mod tests {
    use crate::test_region::{test_region, TestValue};

    use super::*;

    #[test]
    fn collectors_are_listed_by_index_from_any_first_one() {
        let snapshot = test_region(&[
            ("sun.os.hrt.frequency", TestValue::Long(1_000_000_000)),
            (
                "sun.gc.collector.3.name",
                TestValue::Str("ZGC Major Pauses"),
            ),
            ("sun.gc.collector.3.invocations", TestValue::Long(2)),
            (
                "sun.gc.collector.2.name",
                TestValue::Str("ZGC Minor Pauses"),
            ),
            ("sun.gc.collector.2.invocations", TestValue::Long(7)),
            ("sun.gc.collector.2.time", TestValue::Long(250_000_000)),
            ("sun.gc.collector.x.name", TestValue::Str("not a collector")),
        ]);
        let collectors = snapshot.collectors();
        assert_eq!(
            collectors,
            [
                CollectorCounters {
                    name: "ZGC Minor Pauses".into(),
                    invocations: 7,
                    seconds: 0.25
                },
                CollectorCounters {
                    name: "ZGC Major Pauses".into(),
                    invocations: 2,
                    seconds: 0.0
                },
            ]
        );
    }

    #[test]
    fn the_heap_is_the_young_and_old_generations_spaces() {
        let snapshot = test_region(&[
            ("sun.gc.generation.0.space.0.used", TestValue::Long(100)),
            ("sun.gc.generation.0.space.1.used", TestValue::Long(20)),
            ("sun.gc.generation.1.space.0.used", TestValue::Long(3000)),
            ("sun.gc.generation.0.capacity", TestValue::Long(1000)),
            ("sun.gc.generation.1.capacity", TestValue::Long(9000)),
            (
                "sun.gc.generation.1.space.0.capacity",
                TestValue::Long(9000),
            ),
            ("sun.gc.generation.2.space.0.used", TestValue::Long(55)),
            ("sun.gc.generation.2.capacity", TestValue::Long(555)),
        ]);
        assert_eq!(
            snapshot.heap(),
            HeapCounters {
                used: Some(3120),
                capacity: Some(10_000)
            }
        );
        assert_eq!(test_region(&[]).heap(), HeapCounters::default());
    }
}
