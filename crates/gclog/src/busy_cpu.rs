//! Pauses that ran while the machine's CPU was saturated (recordings with `jdk.CPULoad`):
//! GC threads compete with everything else on the host for the cores, so a stop-the-world
//! collection takes longer than its work. A sample covers the period that ends at its
//! time stamp, so each long pause waits here for the first sample at or after its end.

use std::collections::VecDeque;

use crate::evidence::{Evidence, RuleTracker};
use crate::parse::CpuLoad;

/// Pauses at least this long are checked against the CPU load.
pub const LONG_PAUSE_NS: u64 = 20_000_000;
/// Machine load (thousandths) at or above which the CPU counts as saturated.
pub const BUSY_PER_MILLE: u32 = 900;
/// Pauses waiting for their sample at most: a GC log has no samples, so they never come.
const MAX_WAITING: usize = 256;

/// A long pause waiting for the CPU sample of its period.
struct Waiting {
    end_ns: u64,
    duration_ns: u64,
    evidence: Evidence,
}

/// Long pauses matched with the CPU samples that cover them.
#[derive(Default)]
pub struct BusyCpu {
    waiting: VecDeque<Waiting>,
    /// Long pauses a sample covered, saturated or not.
    pub long_pauses_sampled: u64,
    /// Samples seen.
    pub samples: u64,
}

impl BusyCpu {
    /// A pause ended at `end_ns` (on the analysis clock); long ones wait for their sample.
    /// `evidence` is called only for those, and gets the pause's `detail` filled later.
    pub fn pause(
        &mut self,
        end_ns: Option<u64>,
        duration_ns: u64,
        evidence: impl FnOnce() -> Evidence,
    ) {
        let Some(end_ns) = end_ns else { return };
        if duration_ns < LONG_PAUSE_NS {
            return;
        }
        if self.waiting.len() == MAX_WAITING {
            self.waiting.pop_front();
        }
        self.waiting.push_back(Waiting {
            end_ns,
            duration_ns,
            evidence: evidence(),
        });
    }

    /// A sample of the period ending at `at_ns`: judges the pauses that ended by then.
    pub fn sample(
        &mut self,
        at_ns: Option<u64>,
        load: CpuLoad,
        tracker: &mut RuleTracker,
        keep: usize,
    ) {
        let Some(at_ns) = at_ns else { return };
        self.samples += 1;
        while self.waiting.front().is_some_and(|w| w.end_ns <= at_ns) {
            let Some(w) = self.waiting.pop_front() else {
                break;
            };
            self.long_pauses_sampled += 1;
            if load.machine_per_mille < BUSY_PER_MILLE {
                continue;
            }
            let others = load.machine_per_mille.saturating_sub(load.jvm_per_mille);
            tracker.hit(w.duration_ns, keep, || Evidence {
                detail: format!(
                    "machine CPU {:.0}% busy in the second around it, {:.0}% of it other processes",
                    load.machine_per_mille as f64 / 10.0,
                    others as f64 / 10.0
                ),
                excess_ms: w.duration_ns as f64 / 1e6,
                ..w.evidence
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(what: &str) -> Evidence {
        Evidence {
            file: "rec.jfr".into(),
            line: 1,
            uptime_s: None,
            wall: None,
            what: what.into(),
            detail: String::new(),
            excess_ms: 0.0,
        }
    }

    fn load(machine: u32, jvm: u32) -> CpuLoad {
        CpuLoad {
            machine_per_mille: machine,
            jvm_per_mille: jvm,
        }
    }

    #[test]
    fn a_long_pause_is_judged_by_the_sample_of_its_period_only() {
        let ms = 1_000_000;
        let (mut busy, mut tracker) = (BusyCpu::default(), RuleTracker::default());
        // Short pauses are not checked; a long one ending after a sample waits for the next.
        busy.pause(Some(100 * ms), 5 * ms, || evidence("short"));
        busy.pause(Some(900 * ms), 40 * ms, || evidence("first"));
        busy.pause(Some(1_500 * ms), 60 * ms, || evidence("second"));
        busy.sample(Some(1_000 * ms), load(400, 100), &mut tracker, 5);
        assert_eq!((tracker.count, busy.long_pauses_sampled), (0, 1));
        busy.sample(Some(2_000 * ms), load(950, 200), &mut tracker, 5);
        assert_eq!((tracker.count, busy.long_pauses_sampled), (1, 2));
        let found = &tracker.evidence()[0];
        assert_eq!(found.what, "second");
        assert!(found.detail.contains("95% busy") && found.detail.contains("75% of it other"));
        // A GC log never has samples: the waiting pauses stay bounded.
        for i in 0..10_000 {
            busy.pause(Some(3_000 * ms + i), 30 * ms, || evidence("log"));
        }
        assert_eq!(busy.waiting.len(), MAX_WAITING);
    }
}
