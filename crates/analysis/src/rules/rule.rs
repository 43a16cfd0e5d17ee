//! What a rule is: it watches the log go by (pauses, safepoints, stalls, CPU samples) and, at
//! the end, words its finding with its evidence, ranked causes and fixes.

use pauselab_pause::civil::format_epoch_ms;
use pauselab_pause::record::{CpuLoad, GcPause, OutOfMemory, Safepoint, Stall, Stamp};

use crate::evidence::{Evidence, RuleTracker};
use crate::health::WindowShare;
use crate::rules::causes::JvmFlags;
use crate::rules::finding::Finding;
use crate::rules::Thresholds;
use crate::timeouts::Culprit;
use crate::waiting::StopPauses;

/// One of [`Rule`]'s observations. A rule lists those it implements in its file's
/// `WATCHES`, and the analysis shows it only those: most rules ignore most of what the log
/// holds, and calling every rule for every pause costs more than their own work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Watch {
    /// [`Rule::pause_ended`].
    PauseEnded,
    /// [`Rule::pause`], for every pause.
    Pause,
    /// [`Rule::pause`], for the pauses [`is_marked`](crate::rules::marks::is_marked) tells apart: a rule that counts only
    /// some collections (full ones, failed ones, those of a cause) is not called for the
    /// ordinary pauses that make most of a log.
    MarkedPause,
    /// [`Rule::pause`], for the pauses whose CPU times [`cpu_marks`](crate::rules::marks::cpu_marks) tells apart.
    OffCpuPause,
    /// [`Rule::safepoint`], for the stops that bear a mark the rule counts (see
    /// [`stop_marks`](crate::rules::marks::stop_marks)): most stops are an ordinary GC's,
    /// quick to reach, which no rule of safepoints counts.
    Safepoint,
    /// [`Rule::stall`].
    Stall,
    /// [`Rule::out_of_memory`].
    OutOfMemory,
    /// [`Rule::cpu_load`].
    CpuLoad,
}

impl Watch {
    /// How many kinds of observation there are.
    pub const COUNT: usize = 8;
}

/// What sets a pause apart for the rules that count only some pauses, one bit per thing a
/// rule matches on. Each such rule names the marks it may count
/// ([`Rule::counts`]) and is shown only the pauses that
/// bear one of them: a full collection is shown to `full_gc`, not to the five rules of
/// failures and causes besides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Marks(pub(crate) u16);

impl Marks {
    pub(crate) const NONE: Marks = Marks(0);
    /// A full collection's name, or a collection upgraded to a full one.
    pub(crate) const FULL: Marks = Marks(1);
    /// Shenandoah's `Pause Degenerated GC`.
    pub(crate) const DEGENERATED: Marks = Marks(1 << 1);
    pub(crate) const EVACUATION_FAILURE: Marks = Marks(1 << 2);
    pub(crate) const CONCURRENT_MODE_FAILURE: Marks = Marks(1 << 3);
    pub(crate) const PROMOTION_FAILURE: Marks = Marks(1 << 4);
    /// CMS's incremental duty cycle.
    pub(crate) const DUTY_CYCLE: Marks = Marks(1 << 5);
    /// ZGC's cause for threads stalled waiting for memory.
    pub(crate) const STALL_CAUSE: Marks = Marks(1 << 6);
    /// A cause naming G1's humongous allocations.
    pub(crate) const HUMONGOUS_CAUSE: Marks = Marks(1 << 7);
    /// Real time beyond user + sys and the off-CPU margin.
    pub(crate) const OFF_CPU: Marks = Marks(1 << 8);
    /// sys above user and its margin.
    pub(crate) const SYS_OVER_USER: Marks = Marks(1 << 9);
    /// Real time beyond the collection's duration (see [`stopped_outside_ns`](crate::rules::real_gt_gc::stopped_outside_ns)).
    pub(crate) const STOPPED_OUTSIDE: Marks = Marks(1 << 10);
    /// A stop that collected no garbage.
    pub(crate) const NOT_GC: Marks = Marks(1 << 11);
    /// A safepoint line's stop that GC pauses ran in.
    pub(crate) const GC_IN_STOP: Marks = Marks(1 << 12);
    /// A stop whose threads took longer than the threshold to reach it.
    pub(crate) const SLOW_TO_STOP: Marks = Marks(1 << 13);
    /// Every mark: what a rule that names none may count.
    pub(crate) const ALL: Marks = Marks(u16::MAX);
    /// How many marks there may be.
    pub(crate) const BITS: usize = 16;

    #[cfg(test)]
    pub(crate) fn intersects(self, other: Marks) -> bool {
        self.0 & other.0 != 0
    }

    #[inline]
    pub(crate) fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub(crate) fn has_bit(self, bit: usize) -> bool {
        self.0 & (1 << bit) != 0
    }

    /// The marks borne, as bit numbers, lowest first.
    #[inline]
    pub(crate) fn bits(self) -> impl Iterator<Item = usize> {
        let mut left = self.0;
        std::iter::from_fn(move || {
            (left != 0).then(|| {
                let bit = left.trailing_zeros() as usize;
                left &= left - 1;
                bit
            })
        })
    }

    #[inline]
    pub(crate) fn when(self, yes: bool) -> Marks {
        Marks(if yes { self.0 } else { 0 })
    }
}

impl std::ops::BitOr for Marks {
    type Output = Marks;

    #[inline]
    fn bitor(self, other: Marks) -> Marks {
        Marks(self.0 | other.0)
    }
}

/// One diagnosis rule. Every observation has a default that ignores it: a rule implements
/// what it looks at, lists it in its file's `WATCHES` (see [`Watch`]), and implements
/// [`Rule::finding`].
pub(crate) trait Rule {
    /// A GC pause of a recording as soon as it is counted, before its CPU times and
    /// safepoint are known, for the CPU samples that come after it; `end_ns`: when it ended
    /// on the analysis clock (uptime, else wall clock). Text logs have no CPU samples, and
    /// their pauses are not shown here.
    fn pause_ended(&mut self, _pause: &Seen<'_, GcPause>, _end_ns: Option<u64>) {}
    /// A GC pause with its CPU times and safepoint, in log order: every pause for a rule
    /// watching [`Watch::Pause`], the marked ones for a rule watching [`Watch::MarkedPause`],
    /// those that stand out by their CPU times for one watching [`Watch::OffCpuPause`].
    fn pause(&mut self, _pause: &Seen<'_, GcPause>) {}
    /// For a rule watching [`Watch::MarkedPause`] or [`Watch::OffCpuPause`], the marks of the
    /// pauses it may count: it is shown only those that bear one of them (see
    /// [`marks_of`](crate::rules::marks::marks_of) and
    /// [`cpu_marks`](crate::rules::marks::cpu_marks)); for one watching
    /// [`Watch::Safepoint`], those of the stops (see
    /// [`stop_marks`](crate::rules::marks::stop_marks)).
    fn counts(&self) -> Marks {
        Marks::ALL
    }
    /// A safepoint, of either series (see [`Series`]), that bears a mark the rule counts.
    fn safepoint(&mut self, _stop: &Seen<'_, Stop<'_>>) {}
    /// A ZGC allocation or relocation stall.
    fn stall(&mut self, _stall: &Seen<'_, Stall>) {}
    /// An `OutOfMemoryError` the log shows.
    fn out_of_memory(&mut self, _error: &Seen<'_, OutOfMemory>) {}
    /// A CPU load sample of the period that ends at `at_ns` (JFR `jdk.CPULoad`).
    /// `keep`: how many examples each finding keeps.
    fn cpu_load(&mut self, _at_ns: Option<u64>, _load: CpuLoad, _keep: usize) {}
    /// How many pauses or safepoints matched, as the finding counts them (other rules weigh
    /// their causes by it).
    fn matched(&self, _ctx: &Context<'_>) -> u64 {
        0
    }
    /// The finding, when the rule fired.
    fn finding(&self, ctx: &Context<'_>) -> Option<Finding>;
}

/// Something of the log a rule sees: the item, where it is, and the rules' settings.
pub(crate) struct Seen<'a, T> {
    pub item: &'a T,
    /// When it began.
    pub start: Stamp,
    pub file: &'a str,
    pub line: u64,
    /// How many examples each finding keeps.
    pub keep: usize,
    pub thresholds: &'a Thresholds,
}

impl<T> Seen<'_, T> {
    /// Evidence located at this item.
    pub fn evidence(&self, what: String, detail: String, excess_ns: u64) -> Evidence {
        self.at(what).evidence(detail, excess_ns)
    }

    /// Where this item is, kept to make its evidence later.
    pub fn at(&self, what: String) -> SeenAt {
        SeenAt {
            file: self.file.to_string(),
            line: self.line,
            start: self.start,
            what,
        }
    }
}

/// Where an item was seen, for a rule that keeps items before it knows whether they are
/// evidence: the wall clock's text, most of an evidence's cost, is written only for those
/// that are.
pub(crate) struct SeenAt {
    pub file: String,
    pub line: u64,
    pub start: Stamp,
    pub what: String,
}

impl SeenAt {
    pub fn evidence(self, detail: String, excess_ns: u64) -> Evidence {
        Evidence {
            file: self.file,
            line: self.line,
            uptime_s: self.start.uptime_ns.map(|u| u as f64 / 1e9),
            wall: self.start.wall_ms.map(format_epoch_ms),
            what: self.what,
            detail,
            excess_ms: excess_ns as f64 / 1e6,
        }
    }
}

/// Which lines a safepoint came from. Stopped-time / `Safepoint "..."` lines and the JDK 8
/// safepoint statistics table describe the same stops: the report counts one series
/// (`safepoints.source`), so a safepoint rule keeps each apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Series {
    Lines = 0,
    Statistics = 1,
}

/// One value per [`Series`].
#[derive(Debug, Clone, Default)]
pub(crate) struct PerSeries<T>([T; 2]);

impl<T> PerSeries<T> {
    pub fn get(&self, series: Series) -> &T {
        &self.0[series as usize]
    }

    pub fn get_mut(&mut self, series: Series) -> &mut T {
        &mut self.0[series as usize]
    }
}

/// A safepoint as the rules see it.
pub(crate) struct Stop<'a> {
    pub safepoint: &'a Safepoint,
    /// Its VM operation, or `GC` / `(not a GC)` when the line does not name it.
    pub operation: &'a str,
    pub is_gc: bool,
    pub series: Series,
    /// The threads a safepoint timeout report named for it.
    pub held_up_by: Option<&'a str>,
    /// The GC pauses that ran in it (safepoint lines only).
    pub pauses: StopPauses<'a>,
}

/// What the findings are worded and ranked with, besides each rule's own state.
pub(crate) struct Context<'a> {
    pub thresholds: Thresholds,
    /// The JVM's own options, when the input states them.
    pub flags: &'a JvmFlags,
    pub pause_count: u64,
    /// Sum of all GC pauses.
    pub pause_total_ns: u128,
    pub covered_ns: u64,
    /// The safepoint series the report counts.
    pub series: Series,
    pub safepoint_count: u64,
    pub non_gc_total_ns: u128,
    pub non_gc_count: u64,
    pub top_non_gc_operations: Vec<(String, u64, f64)>,
    /// Full collections by cause: (cause, count, total ms), most frequent first.
    pub full_gc_causes: Vec<(String, u64, f64)>,
    /// The worst 1-minute and 10-minute windows of pause time, when the log is that long.
    pub worst_windows: &'a [WindowShare],
    /// Allocation stalls: count, total ms, max ms.
    pub allocation_stalls: (u64, f64, f64),
    /// The JVM runs generational ZGC: its pauses are named per generation (`y: `, `Y: `,
    /// `O: `), or it was started with `-XX:+ZGenerational`.
    pub generational_zgc: bool,
    /// The JDK's feature release (`17` of `17.0.15+6`, `8` of `1.8.0_372` or of a JDK 6-8
    /// log format), when the input tells.
    pub jdk_feature: Option<u32>,
    /// Threads named by safepoint timeout reports, most often first.
    pub safepoint_timeouts: &'a [Culprit],
    /// Timeout reports no safepoint line followed, as hits of a long time to safepoint.
    pub unmatched_timeouts: &'a RuleTracker,
    /// Each rule's [`Rule::matched`], by id.
    pub matched: Vec<(&'static str, u64)>,
}

impl Context<'_> {
    /// How many pauses or safepoints the rule `id` matched.
    pub fn matched(&self, id: &str) -> u64 {
        let found = self.matched.iter().find(|(rule, _)| *rule == id);
        debug_assert!(found.is_some(), "no rule {id} in the registry");
        found.map_or(0, |(_, n)| *n)
    }
}
