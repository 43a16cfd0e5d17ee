//! `busy_cpu`: pauses that ran while the machine's CPU was saturated. Only a JFR recording
//! says how busy the CPU was (`jdk.CPULoad`), so GC logs never raise it: GC threads compete
//! with everything else on the host for the cores, so a stop-the-world collection takes
//! longer than its work. A sample covers the period that ends at its time stamp, so each
//! long pause waits here for the first sample at or after its end.

use std::collections::VecDeque;

use pauselab_pause::record::{CpuLoad, GcPause};

use crate::evidence::RuleTracker;
use crate::rules::causes::listed;
use crate::rules::finding::{graded, Finding};
use crate::rules::rule::{Context, Rule, Seen, SeenAt, Watch};

pub(crate) const ID: &str = "busy_cpu";
pub(crate) const WATCHES: &[Watch] = &[Watch::PauseEnded, Watch::CpuLoad];

/// Pauses at least this long are checked against the CPU load.
const LONG_PAUSE_NS: u64 = 20_000_000;
/// Machine load (thousandths) at or above which the CPU counts as saturated.
const BUSY_PER_MILLE: u32 = 900;
/// Pauses waiting for their sample at most: a recording without `jdk.CPULoad` has pauses
/// but no samples.
const MAX_WAITING: usize = 256;

/// A long pause waiting for the CPU sample of its period.
struct Waiting {
    end_ns: u64,
    duration_ns: u64,
    at: SeenAt,
}

/// Long pauses matched with the CPU samples that cover them.
#[derive(Default)]
struct BusyCpu {
    waiting: VecDeque<Waiting>,
    /// Long pauses a sample covered, saturated or not.
    long_pauses_sampled: u64,
    tracker: RuleTracker,
}

pub(crate) fn start() -> Box<dyn Rule> {
    Box::<BusyCpu>::default()
}

impl Rule for BusyCpu {
    fn pause_ended(&mut self, seen: &Seen<'_, GcPause>, end_ns: Option<u64>) {
        self.pause(end_ns, seen.item.duration_ns, || seen.at(seen.item.described()));
    }

    fn cpu_load(&mut self, at_ns: Option<u64>, load: CpuLoad, keep: usize) {
        self.sample(at_ns, load, keep);
    }

    fn matched(&self, _ctx: &Context<'_>) -> u64 {
        self.tracker.count
    }

    fn finding(&self, _ctx: &Context<'_>) -> Option<Finding> {
        let r = self.tracker.fired()?;
        let title = format!(
            "{} of {} pauses of {} ms or more ran while the machine's CPU was {}% busy or more",
            r.count,
            self.long_pauses_sampled,
            LONG_PAUSE_NS / 1_000_000,
            BUSY_PER_MILLE / 10
        );
        let mut f = Finding::tracked(ID, r, graded(r, 10, 500_000_000), title);
        f.confidence = "medium: the recording samples the CPU once a period (1 s by default), so a saturated second holds the pause but may not be saturated all through it";
        let mut causes = listed(&[
            "other processes on the host (or in the container's CPU set) use the cores the GC threads need",
            "more GC threads than the JVM's share of the CPUs (ParallelGCThreads, ConcGCThreads), competing with the application's own threads",
            "a CPU quota (cgroup cpu.max or cpu.cfs_quota_us) smaller than the cores the JVM sees",
        ]);
        causes[0].evidence = Some(format!(
            "CPU load samples: the machine was {}% busy or more during {} long pauses (the evidence gives how much was other processes)",
            BUSY_PER_MILLE / 10,
            r.count
        ));
        f.causes = causes;
        f.fixes = vec![
            "find what else runs during the pauses (pidstat 1, top) and move it away, or give the JVM CPUs of its own (cpuset, taskset)",
            "size ParallelGCThreads and ConcGCThreads to the CPUs the JVM really gets (-XX:ActiveProcessorCount in containers)",
            "raise the CPU quota or check its throttling (pauselab lab run cpu-quota reproduces it)",
        ];
        Some(f)
    }
}

impl BusyCpu {
    /// A pause ended at `end_ns` (on the analysis clock); long ones wait for their sample.
    /// `at` is called only for those; their evidence is written when a saturated sample
    /// covers them.
    fn pause(&mut self, end_ns: Option<u64>, duration_ns: u64, at: impl FnOnce() -> SeenAt) {
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
            at: at(),
        });
    }

    /// A sample of the period ending at `at_ns`: judges the pauses that ended by then.
    fn sample(&mut self, at_ns: Option<u64>, load: CpuLoad, keep: usize) {
        let Some(at_ns) = at_ns else { return };
        while self.waiting.front().is_some_and(|w| w.end_ns <= at_ns) {
            let Some(w) = self.waiting.pop_front() else {
                break;
            };
            self.long_pauses_sampled += 1;
            if load.machine_per_mille < BUSY_PER_MILLE {
                continue;
            }
            let others = load.machine_per_mille.saturating_sub(load.jvm_per_mille);
            self.tracker.hit(w.duration_ns, keep, || {
                let detail = format!(
                    "machine CPU {:.0}% busy in the second around it, {:.0}% of it other processes",
                    load.machine_per_mille as f64 / 10.0,
                    others as f64 / 10.0
                );
                w.at.evidence(detail, w.duration_ns)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use pauselab_pause::record::Stamp;

    use super::*;

    fn at(what: &str) -> SeenAt {
        SeenAt {
            file: "rec.jfr".into(),
            line: 1,
            start: Stamp::default(),
            what: what.into(),
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
        let mut busy = BusyCpu::default();
        // Short pauses are not checked; a long one ending after a sample waits for the next.
        busy.pause(Some(100 * ms), 5 * ms, || at("short"));
        busy.pause(Some(900 * ms), 40 * ms, || at("first"));
        busy.pause(Some(1_500 * ms), 60 * ms, || at("second"));
        busy.sample(Some(1_000 * ms), load(400, 100), 5);
        assert_eq!((busy.tracker.count, busy.long_pauses_sampled), (0, 1));
        busy.sample(Some(2_000 * ms), load(950, 200), 5);
        assert_eq!((busy.tracker.count, busy.long_pauses_sampled), (1, 2));
        let found = &busy.tracker.evidence()[0];
        assert_eq!(found.what, "second");
        assert!(found.detail.contains("95% busy") && found.detail.contains("75% of it other"));
        // Without samples the waiting pauses stay bounded.
        for i in 0..10_000 {
            busy.pause(Some(3_000 * ms + i), 30 * ms, || at("log"));
        }
        assert_eq!(busy.waiting.len(), MAX_WAITING);
    }
}
