//! Which pauses and stops the rules that count only some of them are shown (see
//! [`Watch::MarkedPause`](crate::rules::rule::Watch::MarkedPause),
//! [`Watch::OffCpuPause`](crate::rules::rule::Watch::OffCpuPause) and
//! [`Watch::Safepoint`](crate::rules::rule::Watch::Safepoint)): told once per pause or stop
//! by the analysis, from what the rules themselves match on. Below the rules it asks about,
//! which know nothing of it.

use pauselab_pause::record::GcPause;

use crate::rules::full_gc::is_full_collection;
use crate::rules::real_gt_gc::stopped_outside_ns;
use crate::rules::rule::{Marks, Series, Stop};
use crate::rules::Thresholds;
use crate::rules::{allocation_stalls, humongous_allocation};
use crate::totals::NameMarks;

/// Whether `pause` may be one that a rule watching [`Watch::MarkedPause`](crate::rules::rule::Watch::MarkedPause) counts: a full
/// collection or one marked by its name (`named`, see [`NameMarks::of`]), upgraded to a
/// full one, a failure, CMS's incremental duty cycle, ZGC's cycle for stalled threads or a
/// G1 humongous allocation. Each of those rules matches a part of these: which, tells
/// [`marks_of`], asked only when this says yes (most pauses bear no mark).
#[inline]
pub(crate) fn is_marked(pause: &GcPause, named: NameMarks) -> bool {
    let f = &pause.failures;
    named.marked
        || pause.upgraded_to_full
        || f.evacuation
        || f.concurrent_mode
        || f.promotion
        || pause.icms_duty_cycle.is_some()
        || pause.cause.as_deref().is_some_and(|cause| {
            cause == allocation_stalls::STALL_CAUSE || humongous_allocation::names_humongous(cause)
        })
}

/// The marks of a pause that [`is_marked`] tells apart, one for each thing it looked at.
pub(crate) fn marks_of(pause: &GcPause, named: NameMarks) -> Marks {
    let f = &pause.failures;
    let by_cause = match pause.cause.as_deref() {
        Some(cause) => {
            Marks::STALL_CAUSE.when(cause == allocation_stalls::STALL_CAUSE)
                | Marks::HUMONGOUS_CAUSE.when(humongous_allocation::names_humongous(cause))
        }
        None => Marks::NONE,
    };
    Marks::FULL.when(named.full || pause.upgraded_to_full)
        // A name marked and not full is Shenandoah's degenerated cycle (see `NameMarks::of`).
        | Marks::DEGENERATED.when(named.marked && !named.full)
        | Marks::EVACUATION_FAILURE.when(f.evacuation)
        | Marks::CONCURRENT_MODE_FAILURE.when(f.concurrent_mode)
        | Marks::PROMOTION_FAILURE.when(f.promotion)
        | Marks::DUTY_CYCLE.when(pause.icms_duty_cycle.is_some())
        | by_cause
}

impl NameMarks {
    /// What `name` says of a pause.
    pub(crate) fn of(name: &str) -> Self {
        let full = is_full_collection(name);
        NameMarks {
            full,
            marked: full || name.starts_with("Pause Degenerated"),
        }
    }
}

/// What may make a rule watching [`Watch::OffCpuPause`](crate::rules::rule::Watch::OffCpuPause)
/// count `pause`, one mark each: real time beyond user + sys and the off-CPU margin, sys
/// above user and its margin, real time beyond the collection's duration (see
/// [`stopped_outside_ns`]). None for most pauses.
#[inline]
pub(crate) fn cpu_marks(pause: &GcPause, thresholds: &Thresholds) -> Marks {
    match pause.cpu {
        Some(cpu) => {
            Marks::OFF_CPU.when(cpu.real_ns > cpu.user_ns + cpu.sys_ns + thresholds.off_cpu_ns)
                | Marks::SYS_OVER_USER
                    .when(cpu.sys_ns > cpu.user_ns && cpu.sys_ns >= thresholds.sys_ns)
                | Marks::STOPPED_OUTSIDE.when(stopped_outside_ns(pause, thresholds).is_some())
        }
        None => Marks::NONE,
    }
}

/// What may make a rule watching [`Watch::Safepoint`](crate::rules::rule::Watch::Safepoint)
/// count `stop`, one mark each: it collected no garbage, GC pauses ran in it (safepoint
/// lines only: the statistics table does not say which), its threads were slow to reach
/// it. None for a quick GC stop of the statistics table or one whose pauses were lost.
#[inline]
pub(crate) fn stop_marks(stop: &Stop<'_>, thresholds: &Thresholds) -> Marks {
    Marks::NOT_GC.when(!stop.is_gc)
        | Marks::GC_IN_STOP.when(stop.series == Series::Lines && !stop.pauses.is_empty())
        | Marks::SLOW_TO_STOP.when(
            stop.safepoint
                .ttsp_ns
                .is_some_and(|t| t > thresholds.ttsp_ns),
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::RuleTracker;
    use crate::rules::causes::JvmFlags;
    use crate::rules::rule::{Context, Rule, Seen, Series, Watch};
    use crate::rules::{Thresholds, REGISTRY};
    use crate::waiting::{PauseRecord, Pending, StopPauses};
    use pauselab_pause::record::{Cpu, Failures, HeapChange};
    use pauselab_pause::record::{Format, Parsed, Record, Safepoint, Stamp};
    use proptest::prelude::*;

    fn pause_strategy() -> impl Strategy<Value = GcPause> {
        let names = prop::sample::select(vec![
            "GC",
            "Full GC",
            "ParNew",
            "Pause Young",
            "Pause Young (Concurrent Start)",
            "Pause Remark",
            "Pause Full",
            "Pause Degenerated GC (Mark)",
            "Pause Mark Start",
            "y: Pause Mark Start (Major)",
            "CMS Initial Mark",
        ]);
        let causes = prop::option::of(prop::sample::select(vec![
            "Allocation Failure",
            "Allocation Stall",
            "G1 Humongous Allocation",
            "G1 Evacuation Pause",
            "Ergonomics",
            "System.gc()",
        ]));
        (
            names,
            causes,
            any::<[bool; 4]>(),
            prop::option::of(0u8..100),
            1u64..500_000_000,
            prop::option::of((0u64..1000, 1u64..1000)),
            prop::option::of((0u64..400, 0u64..400, 0u64..800)),
        )
            .prop_map(
                |(name, cause, flags, icms, duration_ns, heap, cpu)| GcPause {
                    duration_ns,
                    cpu: cpu.map(|(user, sys, real)| Cpu {
                        user_ns: user * 1_000_000,
                        sys_ns: sys * 1_000_000,
                        real_ns: real * 1_000_000,
                    }),
                    name: name.to_string().into(),
                    cause: cause.map(|c| c.to_string().into()),
                    failures: Failures {
                        evacuation: flags[0],
                        concurrent_mode: flags[1],
                        promotion: flags[2],
                    },
                    upgraded_to_full: flags[3],
                    icms_duty_cycle: icms,
                    heap: heap.map(|(before, capacity)| HeapChange {
                        before,
                        after: before / 2,
                        capacity: Some(capacity),
                    }),
                    ..GcPause::default()
                },
            )
    }

    proptest! {
        /// `is_marked`, asked of every pause, says yes exactly when `marks_of` finds a mark.
        #[test]
        fn a_pause_is_marked_when_it_bears_a_mark(pause in pause_strategy()) {
            let named = NameMarks::of(&pause.name);
            prop_assert_eq!(is_marked(&pause, named), !marks_of(&pause, named).is_empty());
        }

        /// The pauses a rule watching marked or off-CPU pauses is shown (those bearing a
        /// mark it names) are all it counts: shown every other pause, it matches and finds
        /// nothing.
        #[test]
        fn rules_watching_some_pauses_ignore_the_others(
            pauses in prop::collection::vec(pause_strategy(), 1..40),
        ) {
            let thresholds = Thresholds::default();
            // As the analysis shows them: a pause to a rule that may count one of its marks.
            let shown = |rule: &dyn Rule, p: &GcPause| {
                let named = NameMarks::of(&p.name);
                let marked = if is_marked(p, named) {
                    marks_of(p, named)
                } else {
                    Marks::NONE
                };
                rule.counts().intersects(cpu_marks(p, &thresholds) | marked)
            };
            let flags = JvmFlags::default();
            let empty = RuleTracker::default();
            let ctx = Context {
                thresholds,
                flags: &flags,
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
                matched: REGISTRY.iter().map(|e| (e.id, 0)).collect(),
            };
            for entry in REGISTRY.iter().filter(|e| {
                e.watches.contains(&Watch::MarkedPause) || e.watches.contains(&Watch::OffCpuPause)
            }) {
                let mut rule = (entry.start)();
                let unseen: Vec<&GcPause> =
                    pauses.iter().filter(|p| !shown(rule.as_ref(), p)).collect();
                for pause in unseen {
                    rule.pause(&Seen {
                        item: pause,
                        start: Stamp::default(),
                        file: "gc.log",
                        line: 1,
                        keep: 5,
                        thresholds: &thresholds,
                    });
                }
                prop_assert_eq!(rule.matched(&ctx), 0, "{}", entry.id);
                prop_assert!(rule.finding(&ctx).is_none(), "{}", entry.id);
            }
        }

        /// A rule watching safepoints ends with the same finding whether it was shown every
        /// stop or only those bearing a mark it counts.
        #[test]
        fn rules_watching_safepoints_ignore_the_stops_without_their_marks(
            stops in prop::collection::vec(
                (
                    1u64..200_000_000,
                    prop::option::of(0u64..100_000_000),
                    any::<[bool; 3]>(),
                    prop::option::of(1u64..100_000_000),
                ),
                1..40,
            ),
        ) {
            let thresholds = Thresholds::default();
            let waiting: Vec<Vec<Pending>> = stops
                .iter()
                .map(|&(_, _, _, gc)| {
                    gc.map(|duration_ns| {
                        let parsed = Box::new(Parsed {
                            format: Format::Jdk8,
                            stamp: Stamp::default(),
                            record: Record::Pause(GcPause {
                                duration_ns,
                                name: "GC".into(),
                                ..GcPause::default()
                            }),
                        });
                        Pending {
                            pause: PauseRecord::of(parsed).ok().unwrap(),
                            file: 0,
                            line: 1,
                            ttsp_ns: None,
                            stopped_ns: None,
                        }
                    })
                    .into_iter()
                    .collect()
                })
                .collect();
            let safepoints: Vec<Safepoint> = stops
                .iter()
                .map(|&(total_ns, ttsp_ns, _, _)| Safepoint {
                    start: Stamp::default(),
                    total_ns,
                    ttsp_ns,
                    operation: None,
                })
                .collect();
            let seen: Vec<Stop<'_>> = stops
                .iter()
                .enumerate()
                .map(|(i, &(_, _, [is_gc, statistics, timed_out], _))| Stop {
                    safepoint: &safepoints[i],
                    operation: if is_gc { "GC" } else { "(not a GC)" },
                    is_gc,
                    series: if statistics { Series::Statistics } else { Series::Lines },
                    held_up_by: timed_out.then_some("VM Thread"),
                    pauses: StopPauses::of(&waiting[i]),
                })
                .collect();
            let flags = JvmFlags::default();
            let empty = RuleTracker::default();
            let ctx = Context {
                thresholds,
                flags: &flags,
                pause_count: 10,
                pause_total_ns: 1_000_000_000,
                covered_ns: 60_000_000_000,
                series: Series::Lines,
                safepoint_count: stops.len() as u64,
                non_gc_total_ns: 1_000_000_000,
                non_gc_count: 3,
                top_non_gc_operations: Vec::new(),
                full_gc_causes: Vec::new(),
                worst_windows: &[],
                allocation_stalls: (0, 0.0, 0.0),
                generational_zgc: false,
                jdk_feature: None,
                safepoint_timeouts: &[],
                unmatched_timeouts: &empty,
                matched: REGISTRY.iter().map(|e| (e.id, 0)).collect(),
            };
            for entry in REGISTRY.iter().filter(|e| e.watches.contains(&Watch::Safepoint)) {
                let mut every = (entry.start)();
                let mut marked = (entry.start)();
                for stop in &seen {
                    let shown = Seen {
                        item: stop,
                        start: Stamp::default(),
                        file: "gc.log",
                        line: 1,
                        keep: 5,
                        thresholds: &thresholds,
                    };
                    every.safepoint(&shown);
                    if marked.counts().intersects(stop_marks(stop, &thresholds)) {
                        marked.safepoint(&shown);
                    }
                }
                prop_assert_eq!(every.matched(&ctx), marked.matched(&ctx), "{}", entry.id);
                prop_assert_eq!(
                    format!("{:?}", every.finding(&ctx)),
                    format!("{:?}", marked.finding(&ctx)),
                    "{}",
                    entry.id
                );
            }
        }
    }
}
