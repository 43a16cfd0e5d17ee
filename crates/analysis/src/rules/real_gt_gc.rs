//! `real_gt_gc`: GC pauses whose CPU times' real time (`[Times: real=...]`, `gc+cpu`'s
//! `Real=`) exceeds the collection's own duration by more than the margin: the JVM stayed
//! stopped around the collection, outside the time the collector measured. JDK 6 and 7
//! start timing a collection only after writing its first words to the GC log (`29.839:
//! [GC `), while the CPU times cover the write: a write() that blocked on a busy disk shows
//! as `real=6.60` beside a collection of 0.21 s, with the young generation's stamp 6.4 s
//! after the event's.

use pauselab_pause::record::GcPause;

use crate::evidence::RuleTracker;
use crate::rules::causes::Candidate;
use crate::rules::finding::{ms, whole_ms, Finding};
use crate::rules::rule::{Context, Marks, Rule, Seen, Watch};
use crate::rules::Thresholds;
use crate::terminal::dur;

pub(crate) const ID: &str = "real_gt_gc";
pub(crate) const WATCHES: &[Watch] = &[Watch::OffCpuPause];

/// How long `pause` kept the JVM stopped outside its collection, when its real time
/// exceeds its duration by more than the margin and by half (real is rounded to 10 ms in
/// JDK 8 logs, and a collection's duration leaves out its own log lines).
pub(crate) fn stopped_outside_ns(pause: &GcPause, thresholds: &Thresholds) -> Option<u64> {
    let real = pause.cpu?.real_ns;
    let outside = real.checked_sub(pause.duration_ns)?;
    (outside > thresholds.stopped_excess_ns && real >= pause.duration_ns + pause.duration_ns / 2)
        .then_some(outside)
}

#[derive(Default)]
struct RealGtGc {
    tracker: RuleTracker,
}

pub(crate) fn start() -> Box<dyn Rule> {
    Box::<RealGtGc>::default()
}

impl Rule for RealGtGc {
    fn counts(&self) -> Marks {
        Marks::STOPPED_OUTSIDE
    }

    fn pause(&mut self, seen: &Seen<'_, GcPause>) {
        let p = seen.item;
        let Some(outside) = stopped_outside_ns(p, seen.thresholds) else {
            return;
        };
        self.tracker.hit(outside, seen.keep, || {
            let real = p.cpu.map_or(0, |cpu| cpu.real_ns);
            let detail = format!(
                "real {} ms, the collection {}: {} stopped outside it",
                whole_ms(real),
                dur(p.duration_ns as f64 / 1e6),
                dur(outside as f64 / 1e6)
            );
            seen.evidence(p.described(), detail, outside)
        });
    }

    fn matched(&self, _ctx: &Context<'_>) -> u64 {
        self.tracker.count
    }

    fn finding(&self, ctx: &Context<'_>) -> Option<Finding> {
        let r = self.tracker.fired()?;
        let title = format!(
            "{} GC pauses kept the application stopped at least {} longer than their collection (real time over the collection's duration)",
            r.count,
            ms(ctx.thresholds.stopped_excess_ns)
        );
        let confidence = "high: the CPU times' real time spans the whole stop of the collection, its duration only the collector's work; JDK 6 and 7 start timing a collection after writing its first words to the GC log";
        Some(Finding::of_stall(ID, r, title, confidence, causes(), ctx.flags))
    }
}

/// What stalls a stopped JVM around its collection, before the collector starts timing.
fn causes() -> Vec<Candidate> {
    vec![
        Candidate::new("a blocking write() of the GC log: the event's first words are written before the collection is timed, and a busy or slow disk held the write")
            .fix("write the GC log to tmpfs or a disk of its own; on JDK 17+ -Xlog:async")
            .option("-Xlog:async"),
        Candidate::new("hsperf counter updates at the start of the collection stalled on writeback of the memory-mapped /tmp/hsperfdata_<user>/<pid>")
            .fix("-XX:+PerfDisableSharedMem, or put hsperfdata on tmpfs")
            .option("-XX:+PerfDisableSharedMem"),
        Candidate::new("the JVM's own memory paged out (swap), touched when the collection begins")
            .fix("check swap (vm.swappiness, swapoff) and the JVM's memory cgroup limit"),
    ]
}
