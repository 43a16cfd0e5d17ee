//! The diagnosis rules, one file each: what it watches for, its thresholds and the words of
//! its finding. Every rule has an absolute margin: JDK 8 and `gc+cpu` round CPU times to
//! 10 ms, so a relative rule alone fires on healthy logs (`user=0.00 sys=0.00, real=0.01`).
//!
//! `registry!` lists them: adding a rule is a file here and its line there
//! (docs/analyze.md, "Adding a rule").

pub(crate) mod causes;
mod collection;
pub(crate) mod finding;
pub(crate) mod marks;
pub(crate) mod rule;

use std::ops::Range;

use crate::rules::finding::Finding;
use crate::rules::rule::{Context, Marks, Rule, Watch};

/// Margins the rules use; the defaults are documented in docs/analyze.md and kept in each
/// rule's file.
#[derive(Debug, Clone, Copy)]
pub struct Thresholds {
    /// real - (user + sys) above which a pause was off-CPU for a significant time.
    pub off_cpu_ns: u64,
    /// sys above which "sys > user" is worth reporting.
    pub sys_ns: u64,
    /// stopped - GC above which the JVM stayed stopped after (or before) its GC.
    pub stopped_excess_ns: u64,
    /// Time to safepoint above which threads were slow to stop.
    pub ttsp_ns: u64,
    /// A non-GC safepoint at least this long is listed as evidence.
    pub non_gc_ns: u64,
    /// Share of the covered time in GC pauses above which the collector costs too much, %.
    pub gc_share_pct: f64,
    /// The same, over the worst 1-minute window (localized throughput), %.
    pub window_share_pct: f64,
    /// The share of time in pauses is judged only over a log that covers at least this
    /// long (the smallest window): a log of one pause and little else tells nothing of it.
    pub min_share_span_ns: u64,
    /// A ZGC allocation stall at least this long is listed as evidence.
    pub alloc_stall_ns: u64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            off_cpu_ns: real_gt_cpu::OFF_CPU_NS,
            sys_ns: sys_gt_user::SYS_NS,
            stopped_excess_ns: stopped_gt_gc::STOPPED_EXCESS_NS,
            ttsp_ns: long_ttsp::TTSP_NS,
            non_gc_ns: non_gc_safepoints::NON_GC_NS,
            gc_share_pct: gc_time_share::GC_SHARE_PCT,
            window_share_pct: gc_time_share::WINDOW_SHARE_PCT,
            min_share_span_ns: gc_time_share::MIN_SHARE_SPAN_NS,
            alloc_stall_ns: allocation_stalls::ALLOC_STALL_NS,
        }
    }
}

/// One rule of the registry: its id (`--fail-on finding:ID`, the JSON's `rule`), what it
/// watches and how to start watching a log with it.
pub(crate) struct Entry {
    pub id: &'static str,
    /// The observations it implements, the only ones it is shown.
    pub watches: &'static [Watch],
    pub start: fn() -> Box<dyn Rule>,
}

/// Declares each rule's file and lists it in [`REGISTRY`]: `name,` for `rules/name.rs`,
/// which holds `pub(crate) const ID`, `pub(crate) const WATCHES: &[Watch]` and
/// `pub(crate) fn start() -> Box<dyn Rule>`.
macro_rules! registry {
    ($($rule:ident,)*) => {
        $(pub(crate) mod $rule;)*

        /// Every rule, in the order their findings are listed when severity and count tie.
        pub(crate) const REGISTRY: &[Entry] = &[$(Entry {
            id: $rule::ID,
            watches: $rule::WATCHES,
            start: $rule::start,
        },)*];
    };
}

registry! {
    real_gt_gc,
    real_gt_cpu,
    sys_gt_user,
    stopped_gt_gc,
    long_ttsp,
    non_gc_safepoints,
    gc_time_share,
    full_gc,
    evacuation_failure,
    concurrent_mode_failure,
    promotion_failure,
    incremental_cms,
    humongous_allocation,
    degenerated_gc,
    allocation_stalls,
    out_of_memory,
    busy_cpu,
}

// `Rules::observe_marks` keeps the rules it showed a pause to in one word.
const _: () = assert!(REGISTRY.len() <= 64);

/// Rule ids, as used by `--fail-on finding:RULE` and in the JSON.
pub const RULES: [&str; REGISTRY.len()] = {
    let mut ids = [""; REGISTRY.len()];
    let mut i = 0;
    while i < ids.len() {
        ids[i] = REGISTRY[i].id;
        i += 1;
    }
    ids
};

/// Every rule of the registry watching one analysis.
pub(crate) struct Rules {
    /// Those that watch every pause first, then those that watch pauses off CPU, then those
    /// that watch marked pauses, so that a pause is shown to one run of each; in the
    /// registry's order otherwise.
    rules: Vec<(&'static str, Box<dyn Rule>)>,
    /// Indices into `rules`, in the registry's order.
    in_registry_order: Vec<usize>,
    /// Per [`Watch`], the runs of `rules` that watch it.
    watching: [Vec<Range<usize>>; Watch::COUNT],
    /// Per mark (a bit of [`Marks`]), the rules watching marked or off-CPU pauses or
    /// safepoints that may count a pause or a stop bearing it ([`Rule::counts`]), as places
    /// in `rules`. A pause's marks and a stop's are apart.
    by_mark: [Vec<usize>; Marks::BITS],
}

impl Default for Rules {
    fn default() -> Self {
        let mut order: Vec<usize> = (0..REGISTRY.len()).collect();
        order.sort_by_key(|&i| {
            let watches = |watch| REGISTRY[i].watches.contains(&watch);
            (
                !watches(Watch::Pause),
                !watches(Watch::OffCpuPause),
                !watches(Watch::MarkedPause),
            )
        });
        let mut watching: [Vec<Range<usize>>; Watch::COUNT] = Default::default();
        for (at, &i) in order.iter().enumerate() {
            for &watch in REGISTRY[i].watches {
                let runs = &mut watching[watch as usize];
                match runs.last_mut() {
                    Some(run) if run.end == at => run.end += 1,
                    _ => runs.push(at..at + 1),
                }
            }
        }
        let mut in_registry_order = vec![0; order.len()];
        for (at, &i) in order.iter().enumerate() {
            in_registry_order[i] = at;
        }
        let rules: Vec<(&'static str, Box<dyn Rule>)> = order
            .iter()
            .map(|&i| (REGISTRY[i].id, (REGISTRY[i].start)()))
            .collect();
        let mut by_mark: [Vec<usize>; Marks::BITS] = Default::default();
        for (at, (_, rule)) in rules.iter().enumerate() {
            let watches = |watch| REGISTRY[order[at]].watches.contains(&watch);
            if watches(Watch::MarkedPause)
                || watches(Watch::OffCpuPause)
                || watches(Watch::Safepoint)
            {
                for (bit, rules) in by_mark.iter_mut().enumerate() {
                    if rule.counts().has_bit(bit) {
                        rules.push(at);
                    }
                }
            }
        }
        Rules {
            by_mark,
            rules,
            in_registry_order,
            watching,
        }
    }
}

impl Rules {
    /// Whether any rule watches `what`.
    pub fn watched(&self, what: Watch) -> bool {
        !self.watching[what as usize].is_empty()
    }

    /// Shows the same thing to every rule that watches `what`.
    pub fn observe(&mut self, what: Watch, mut see: impl FnMut(&mut dyn Rule)) {
        for run in &self.watching[what as usize] {
            for (_, rule) in &mut self.rules[run.clone()] {
                see(rule.as_mut());
            }
        }
    }

    /// Shows a pause or a stop bearing `marks` once to each rule watching marked or off-CPU
    /// pauses, or safepoints, that may count it (see [`Rule::counts`]): the others would look
    /// at it and pass. Found from its marks, one or two, not by asking each rule.
    #[inline]
    pub fn observe_marks(&mut self, marks: Marks, mut see: impl FnMut(&mut dyn Rule)) {
        let mut shown = 0u64;
        for bit in marks.bits() {
            for &at in &self.by_mark[bit] {
                if shown & (1 << at) == 0 {
                    shown |= 1 << at;
                    see(self.rules[at].1.as_mut());
                }
            }
        }
    }

    /// The findings, most severe first, then the most frequent; equal ones in the
    /// registry's order. Fills in `ctx.matched`.
    pub fn findings(&self, ctx: &mut Context<'_>) -> Vec<Finding> {
        let in_order = || self.in_registry_order.iter().map(|&at| &self.rules[at]);
        ctx.matched = in_order().map(|(id, r)| (*id, r.matched(ctx))).collect();
        let mut out: Vec<Finding> = in_order().filter_map(|(_, r)| r.finding(ctx)).collect();
        out.sort_by(|a, b| b.severity.cmp(&a.severity).then(b.count.cmp(&a.count)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::RuleTracker;
    use crate::rules::causes::JvmFlags;
    use crate::rules::rule::Series;

    /// docs/analyze.md, whose tables document every rule.
    const DOCS: &str = include_str!("../../../../docs/analyze.md");

    #[test]
    fn each_observation_reaches_exactly_the_rules_that_watch_it() {
        let rules = Rules::default();
        for watch in [
            Watch::PauseEnded,
            Watch::Pause,
            Watch::MarkedPause,
            Watch::OffCpuPause,
            Watch::Safepoint,
            Watch::Stall,
            Watch::OutOfMemory,
            Watch::CpuLoad,
        ] {
            let mut shown: Vec<&str> = rules.watching[watch as usize]
                .iter()
                .flat_map(|run| rules.rules[run.clone()].iter().map(|(id, _)| *id))
                .collect();
            let mut watching: Vec<&str> = REGISTRY
                .iter()
                .filter(|e| e.watches.contains(&watch))
                .map(|e| e.id)
                .collect();
            shown.sort_unstable();
            watching.sort_unstable();
            assert_eq!(shown, watching, "{watch:?}");
        }
        for watch in [Watch::MarkedPause, Watch::OffCpuPause] {
            assert_eq!(rules.watching[watch as usize].len(), 1);
        }
        let in_order: Vec<&str> = rules
            .in_registry_order
            .iter()
            .map(|&at| rules.rules[at].0)
            .collect();
        assert_eq!(in_order, RULES);
    }

    proptest::proptest! {
        /// A pause bearing some marks is shown once to each rule watching marked or off-CPU
        /// pauses that counts one of them, and to no other rule.
        #[test]
        fn a_pause_reaches_the_rules_that_count_its_marks(marks in proptest::prelude::any::<u16>()) {
            let mut rules = Rules::default();
            let marks = Marks(marks);
            let mut shown: Vec<*const ()> = Vec::new();
            rules.observe_marks(marks, |rule| shown.push(rule as *mut dyn Rule as *const ()));
            let mut expected: Vec<*const ()> = Vec::new();
            for (at, (_, rule)) in rules.rules.iter_mut().enumerate() {
                let entry = &REGISTRY[rules.in_registry_order.iter().position(|&r| r == at).unwrap()];
                let watches = |w| entry.watches.contains(&w);
                if (watches(Watch::MarkedPause)
                    || watches(Watch::OffCpuPause)
                    || watches(Watch::Safepoint))
                    && rule.counts().intersects(marks)
                {
                    expected.push(rule.as_mut() as *mut dyn Rule as *const ());
                }
            }
            shown.sort_unstable();
            expected.sort_unstable();
            proptest::prop_assert_eq!(shown, expected);
        }
    }

    #[test]
    fn every_rule_has_a_unique_documented_id_and_starts_with_nothing_found() {
        assert_eq!(RULES.len(), REGISTRY.len());
        for (i, entry) in REGISTRY.iter().enumerate() {
            assert!(
                !RULES[..i].contains(&entry.id),
                "rule id {} is in the registry twice",
                entry.id
            );
            assert!(
                DOCS.contains(&format!("| `{}` |", entry.id)),
                "rule {} has no row in docs/analyze.md's tables of rules",
                entry.id
            );
            assert!(
                entry
                    .id
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'_'),
                "rule id {} is not snake_case (--fail-on finding:ID)",
                entry.id
            );
        }
        let mut rules = Rules::default();
        let empty = RuleTracker::default();
        let mut ctx = Context {
            thresholds: Thresholds::default(),
            flags: &JvmFlags::default(),
            pause_count: 0,
            pause_total_ns: 0,
            covered_ns: 0,
            series: Series::Lines,
            safepoint_count: 0,
            non_gc_total_ns: 0,
            non_gc_count: 0,
            top_non_gc_operations: Vec::new(),
            full_gc_causes: Vec::new(),
            worst_windows: &[],
            allocation_stalls: (0, 0.0, 0.0),
            generational_zgc: false,
            jdk_feature: None,
            safepoint_timeouts: &[],
            unmatched_timeouts: &empty,
            matched: Vec::new(),
        };
        rules.observe(Watch::Pause, |_| {});
        assert!(rules.findings(&mut ctx).is_empty());
        assert_eq!(ctx.matched.len(), REGISTRY.len());
    }
}
