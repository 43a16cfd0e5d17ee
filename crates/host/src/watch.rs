//! One JVM over time: what its safepoints and GC did in each interval, what the host did
//! meanwhile, and the likely cause of the intervals that stalled.
//!
//! The caller supplies [`JvmSample`]s (from the JVM's perf counters); this module samples
//! the host ([`HostSample`]), turns two samples into an [`Interval`] and attributes causes.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::cgroup::cpu_limits;
use crate::pressure::{host_pressure, HostPressure, PressureDelta};
use crate::threads::{blocked_threads, BlockedThread};
use crate::vmstat::{VmStat, STALL_EVENTS, STALL_GAUGES};
use crate::Result;

/// One collector's cumulative counters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CollectorSample {
    pub name: String,
    pub invocations: i64,
    pub seconds: f64,
}

/// The JVM's cumulative counters at one moment (`None` where the JVM has no such counter).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct JvmSample {
    pub safepoints: Option<i64>,
    pub safepoint_seconds: Option<f64>,
    pub safepoint_sync_seconds: Option<f64>,
    pub collectors: Vec<CollectorSample>,
    pub heap_used: Option<u64>,
    pub heap_capacity: Option<u64>,
}

/// Host counters at one moment.
#[derive(Debug, Clone, Serialize)]
pub struct HostSample {
    pub pressure: Option<HostPressure>,
    pub vmstat: VmStat,
    /// CFS throttling of the JVM's cgroup (cumulative).
    pub nr_throttled: Option<u64>,
    pub throttled_us: Option<u64>,
}

impl HostSample {
    pub fn read(pid: u32) -> Result<HostSample> {
        let limits = cpu_limits(pid).ok();
        Ok(HostSample {
            pressure: host_pressure()?,
            vmstat: VmStat::read()?,
            nr_throttled: limits.as_ref().and_then(|l| l.nr_throttled),
            throttled_us: limits.as_ref().and_then(|l| l.throttled_us),
        })
    }
}

/// Threads seen in uninterruptible sleep during an interval, counted per (name, wchan).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BlockedSeen {
    /// How often the sampler looked.
    pub samples: u32,
    pub threads: Vec<BlockedObservation>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlockedObservation {
    pub name: String,
    pub wchan: Option<String>,
    /// Innermost kernel frames of the first sighting.
    pub stack: Vec<String>,
    /// Samples that saw it blocked.
    pub seen: u32,
}

impl BlockedSeen {
    /// Samples the JVM's threads once.
    pub fn sample(&mut self, pid: u32) -> Result<()> {
        let blocked = blocked_threads(pid)?;
        self.samples += 1;
        for thread in blocked {
            self.add(thread);
        }
        Ok(())
    }

    /// Samples the JVM's threads every `every` until `deadline`, or until `stop` is set or
    /// the process can no longer be read (it exited: the caller notices).
    pub fn sampled_until(pid: u32, deadline: Instant, every: Duration, stop: &AtomicBool) -> Self {
        let mut seen = BlockedSeen::default();
        while Instant::now() < deadline && !stop.load(Ordering::SeqCst) {
            if seen.sample(pid).is_err() {
                break;
            }
            std::thread::sleep(every.min(deadline.saturating_duration_since(Instant::now())));
        }
        seen
    }

    fn add(&mut self, thread: BlockedThread) {
        match self
            .threads
            .iter_mut()
            .find(|o| o.name == thread.name && o.wchan == thread.wchan)
        {
            Some(o) => o.seen += 1,
            None => self.threads.push(BlockedObservation {
                name: thread.name,
                wchan: thread.wchan,
                stack: thread.stack,
                seen: 1,
            }),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CollectorDelta {
    pub name: String,
    pub count: i64,
    pub ms: f64,
}

/// What happened between two samples.
#[derive(Debug, Clone, Serialize)]
pub struct Interval {
    pub seconds: f64,
    pub safepoints: Option<i64>,
    pub safepoint_ms: Option<f64>,
    pub safepoint_sync_ms: Option<f64>,
    /// Time the application was stopped: reaching the safepoints (sync) plus time at them.
    /// HotSpot counts the two apart; a thread stuck in the kernel shows up in sync time.
    pub stopped_ms: Option<f64>,
    pub gc: Vec<CollectorDelta>,
    pub heap_used: Option<u64>,
    pub heap_capacity: Option<u64>,
    /// Stall time (`some`) per resource in this interval, microseconds.
    pub pressure: Option<PressureDelta>,
    /// Increases of [`STALL_EVENTS`] and current values of [`STALL_GAUGES`].
    pub vmstat: BTreeMap<String, u64>,
    pub throttled_periods: Option<u64>,
    pub throttled_ms: Option<f64>,
    pub blocked: BlockedSeen,
    /// Stopped time reached the threshold.
    pub stalled: bool,
    /// Likely causes, most specific first; empty when not stalled.
    pub causes: Vec<Cause>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cause {
    /// `writeback`, `io`, `swap`, `reclaim`, `compaction`, `thp`, `cpu-quota`, `cpu`,
    /// `time-to-safepoint`, `gc`, `unknown`.
    pub kind: &'static str,
    pub detail: String,
}

fn delta_f(now: Option<f64>, then: Option<f64>) -> Option<f64> {
    Some((now? - then?).max(0.0))
}

/// Milliseconds rounded to microseconds: counters are ticks, more digits are float noise.
fn round_ms(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

impl Interval {
    /// The interval between `before` and `after`; `blocked` holds what the thread sampler
    /// saw in it and `previous_blocked` what it saw in the interval before (a stall's
    /// counters only move when it ends, perhaps after the interval it started in).
    #[allow(clippy::too_many_arguments)]
    pub fn between(
        seconds: f64,
        jvm_before: &JvmSample,
        jvm_after: &JvmSample,
        host_before: &HostSample,
        host_after: &HostSample,
        blocked: BlockedSeen,
        previous_blocked: Option<&BlockedSeen>,
        threshold_ms: f64,
    ) -> Interval {
        let gc = jvm_after
            .collectors
            .iter()
            .map(|after| {
                let before = jvm_before.collectors.iter().find(|c| c.name == after.name);
                CollectorDelta {
                    name: after.name.clone(),
                    count: after.invocations - before.map_or(0, |b| b.invocations),
                    ms: round_ms(
                        (after.seconds - before.map_or(0.0, |b| b.seconds)).max(0.0) * 1000.0,
                    ),
                }
            })
            .collect();
        let mut vmstat = BTreeMap::new();
        for name in STALL_EVENTS {
            vmstat.insert(
                name.to_string(),
                host_after.vmstat.delta(&host_before.vmstat, name),
            );
        }
        for name in STALL_GAUGES {
            vmstat.insert(name.to_string(), host_after.vmstat.get(name));
        }
        let safepoint_ms = delta_f(jvm_after.safepoint_seconds, jvm_before.safepoint_seconds)
            .map(|s| round_ms(s * 1000.0));
        let sync_ms = delta_f(
            jvm_after.safepoint_sync_seconds,
            jvm_before.safepoint_sync_seconds,
        )
        .map(|s| round_ms(s * 1000.0));
        let stopped_ms = safepoint_ms.map(|at| round_ms(at + sync_ms.unwrap_or(0.0)));
        let mut interval = Interval {
            seconds,
            safepoints: jvm_after
                .safepoints
                .zip(jvm_before.safepoints)
                .map(|(a, b)| (a - b).max(0)),
            safepoint_ms,
            safepoint_sync_ms: sync_ms,
            stopped_ms,
            gc,
            heap_used: jvm_after.heap_used,
            heap_capacity: jvm_after.heap_capacity,
            pressure: host_after
                .pressure
                .zip(host_before.pressure)
                .map(|(a, b)| a.stalled_us_since(&b)),
            vmstat,
            throttled_periods: host_after
                .nr_throttled
                .zip(host_before.nr_throttled)
                .map(|(a, b)| a.saturating_sub(b)),
            throttled_ms: host_after
                .throttled_us
                .zip(host_before.throttled_us)
                .map(|(a, b)| a.saturating_sub(b) as f64 / 1000.0),
            blocked,
            stalled: stopped_ms.is_some_and(|ms| ms >= threshold_ms),
            causes: Vec::new(),
        };
        if interval.stalled {
            interval.causes = interval.likely_causes(previous_blocked);
        }
        interval
    }

    fn likely_causes(&self, previous_blocked: Option<&BlockedSeen>) -> Vec<Cause> {
        let mut causes = Vec::new();
        let interval_us = (self.seconds * 1e6).max(1.0);
        let observations: Vec<&BlockedObservation> = self
            .blocked
            .threads
            .iter()
            .chain(previous_blocked.into_iter().flat_map(|b| b.threads.iter()))
            .collect();
        let describe = |o: &BlockedObservation| {
            let place = o
                .wchan
                .clone()
                .or_else(|| o.stack.first().cloned())
                .unwrap_or_else(|| "?".to_string());
            format!("{} in {place}", o.name)
        };
        let writeback: Vec<String> = observations
            .iter()
            .filter(|o| mentions(o, WRITEBACK_WAITS))
            .map(|o| describe(o))
            .collect();
        if !writeback.is_empty() {
            causes.push(Cause {
                kind: "writeback",
                detail: format!(
                    "JVM threads waited for pages under writeback (stable pages): {}",
                    dedup(writeback).join(", ")
                ),
            });
        }
        let io_waits: Vec<String> = observations
            .iter()
            .filter(|o| !mentions(o, WRITEBACK_WAITS))
            .map(|o| describe(o))
            .collect();
        let io_pressure = self.pressure.map_or(0, |p| p.io_some_us);
        if !io_waits.is_empty() || io_pressure as f64 > interval_us * 0.1 {
            let mut detail = format!("I/O pressure {:.0} ms", io_pressure as f64 / 1000.0);
            if !io_waits.is_empty() {
                detail.push_str(&format!(
                    "; JVM threads in uninterruptible sleep: {}",
                    dedup(io_waits).join(", ")
                ));
            }
            let writing_back = self.vmstat.get("nr_writeback").copied().unwrap_or(0);
            if writing_back > 0 {
                detail.push_str(&format!("; {writing_back} pages under writeback"));
            }
            causes.push(Cause { kind: "io", detail });
        }
        let event = |name: &str| self.vmstat.get(name).copied().unwrap_or(0);
        if event("pswpin") + event("pswpout") > 0 {
            causes.push(Cause {
                kind: "swap",
                detail: format!(
                    "swap-in {} / swap-out {} pages, {} major faults",
                    event("pswpin"),
                    event("pswpout"),
                    event("pgmajfault")
                ),
            });
        } else if event("pgmajfault") > 100 {
            causes.push(Cause {
                kind: "major-faults",
                detail: format!("{} major page faults", event("pgmajfault")),
            });
        }
        if event("allocstall") > 0 {
            causes.push(Cause {
                kind: "reclaim",
                detail: format!("{} direct reclaim stalls", event("allocstall")),
            });
        }
        if event("compact_stall") > 0 {
            causes.push(Cause {
                kind: "compaction",
                detail: format!("{} direct compaction stalls", event("compact_stall")),
            });
        }
        if event("thp_fault_alloc") + event("thp_split") > 0 && event("compact_stall") > 0 {
            causes.push(Cause {
                kind: "thp",
                detail: format!(
                    "{} THP faults, {} splits",
                    event("thp_fault_alloc"),
                    event("thp_split")
                ),
            });
        }
        if self.throttled_periods.unwrap_or(0) > 0 {
            causes.push(Cause {
                kind: "cpu-quota",
                detail: format!(
                    "cgroup throttled in {} periods for {:.0} ms",
                    self.throttled_periods.unwrap_or(0),
                    self.throttled_ms.unwrap_or(0.0)
                ),
            });
        }
        let cpu_pressure = self.pressure.map_or(0, |p| p.cpu_some_us);
        if cpu_pressure as f64 > interval_us * 0.25 {
            causes.push(Cause {
                kind: "cpu",
                detail: format!(
                    "CPU pressure {:.0} ms: runnable threads waited for a CPU",
                    cpu_pressure as f64 / 1000.0
                ),
            });
        }
        let stopped_ms = self.stopped_ms.unwrap_or(0.0);
        if let Some(sync) = self.safepoint_sync_ms.filter(|s| *s > stopped_ms * 0.5) {
            causes.push(Cause {
                kind: "time-to-safepoint",
                detail: format!(
                    "{sync:.0} ms of {stopped_ms:.0} ms stopped went into bringing threads to the safepoint"
                ),
            });
        }
        let gc_ms: f64 = self.gc.iter().map(|g| g.ms).sum();
        if causes.is_empty() && gc_ms >= stopped_ms * 0.5 {
            causes.push(Cause {
                kind: "gc",
                detail: format!("GC work: {gc_ms:.0} ms in collections, no host signal moved"),
            });
        }
        if causes.is_empty() {
            causes.push(Cause {
                kind: "unknown",
                detail: "no host signal moved with this pause".to_string(),
            });
        }
        causes
    }
}

/// Kernel functions where a task waits for a page under writeback.
const WRITEBACK_WAITS: &[&str] = &[
    "writeback",
    "page_mkwrite",
    "wait_stable",
    "wait_for_stable",
];

fn mentions(o: &BlockedObservation, needles: &[&str]) -> bool {
    o.wchan
        .iter()
        .chain(o.stack.iter())
        .any(|frame| needles.iter().any(|n| frame.contains(n)))
}

fn dedup(mut items: Vec<String>) -> Vec<String> {
    let mut seen = Vec::new();
    items.retain(|i| {
        let new = !seen.contains(i);
        seen.push(i.clone());
        new
    });
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(text: &str) -> HostSample {
        HostSample {
            pressure: None,
            vmstat: VmStat::parse(std::path::Path::new("/proc/vmstat"), text).unwrap(),
            nr_throttled: Some(0),
            throttled_us: Some(0),
        }
    }

    fn jvm(safepoints: i64, seconds: f64, sync: f64) -> JvmSample {
        JvmSample {
            safepoints: Some(safepoints),
            safepoint_seconds: Some(seconds),
            safepoint_sync_seconds: Some(sync),
            collectors: vec![CollectorSample {
                name: "young".into(),
                invocations: safepoints,
                seconds: seconds / 2.0,
            }],
            heap_used: Some(1),
            heap_capacity: Some(2),
        }
    }

    #[test]
    fn writeback_wait_is_named_and_small_pauses_are_not_marked() {
        let mut blocked = BlockedSeen::default();
        blocked.add(BlockedThread {
            tid: 1,
            name: "VM Thread".into(),
            wchan: Some("folio_wait_bit_common".into()),
            stack: vec![
                "folio_wait_bit_common".into(),
                "folio_wait_writeback".into(),
                "block_page_mkwrite".into(),
            ],
        });
        let before = host("pgmajfault 0\nnr_writeback 0\n");
        let after = host("pgmajfault 0\nnr_writeback 10\n");
        let stalled = Interval::between(
            1.0,
            &jvm(1, 0.0, 0.0),
            &jvm(3, 0.1, 2.4),
            &before,
            &after,
            blocked,
            None,
            100.0,
        );
        assert!(stalled.stalled);
        assert_eq!(stalled.safepoints, Some(2));
        assert_eq!(stalled.causes[0].kind, "writeback", "{:?}", stalled.causes);
        assert!(stalled.causes[0].detail.contains("VM Thread"));
        assert!(stalled.causes.iter().any(|c| c.kind == "time-to-safepoint"));
        let calm = Interval::between(
            1.0,
            &jvm(1, 0.0, 0.0),
            &jvm(2, 0.01, 0.0),
            &before,
            &after,
            BlockedSeen::default(),
            None,
            100.0,
        );
        assert!(!calm.stalled && calm.causes.is_empty());
    }

    #[test]
    fn swap_and_unknown_causes() {
        let before = host("pswpin 0\npswpout 0\n");
        let after = host("pswpin 50\npswpout 0\n");
        let i = Interval::between(
            1.0,
            &jvm(1, 0.0, 0.0),
            &jvm(2, 0.5, 0.0),
            &before,
            &after,
            BlockedSeen::default(),
            None,
            100.0,
        );
        assert_eq!(i.causes[0].kind, "swap");
        let i = Interval::between(
            1.0,
            &jvm(1, 0.0, 0.0),
            &jvm(2, 0.5, 0.0),
            &before,
            &before,
            BlockedSeen::default(),
            None,
            100.0,
        );
        assert_eq!(
            i.causes.iter().map(|c| c.kind).collect::<Vec<_>>(),
            vec!["gc"]
        );
    }

    #[test]
    fn threads_are_sampled_until_the_deadline_a_stop_or_the_process_is_gone() {
        let every = Duration::from_millis(20);
        let running = AtomicBool::new(false);
        let own = std::process::id();
        let until = Instant::now() + Duration::from_millis(200);
        let seen = BlockedSeen::sampled_until(own, until, every, &running);
        assert!(Instant::now() >= until, "returned before its deadline");
        assert!(seen.samples >= 3, "{} samples in 200 ms", seen.samples);

        let later = Instant::now() + Duration::from_secs(30);
        let stopped = AtomicBool::new(true);
        let seen = BlockedSeen::sampled_until(own, later, every, &stopped);
        assert_eq!(seen.samples, 0);
        // No such process (beyond pid_max): returns at once.
        let seen = BlockedSeen::sampled_until(u32::MAX, later, every, &running);
        assert_eq!(seen.samples, 0);
        assert!(Instant::now() < later);
    }
}
