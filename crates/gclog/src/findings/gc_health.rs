//! Findings about the collector itself: too much time in pauses, full collections and their
//! causes, failed evacuations and promotions, humongous allocations, Shenandoah's
//! degenerated cycles, ZGC's allocation stalls.

use super::causes::{listed, rank, Candidate};
use super::{Context, Finding, Rules, Severity};

fn pct(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part * 100.0 / whole
    } else {
        0.0
    }
}

/// A rule that counts collections the log marks (a failure, a cause, a kind).
struct CollectionRule {
    rule: &'static str,
    tracker: fn(&Rules) -> &super::RuleTracker,
    /// Severity below 10 hits and 1 s.
    severity: Severity,
    always_critical: bool,
    /// Completes "N ..., X s of pauses".
    what: &'static str,
    confidence: &'static str,
    causes: &'static [&'static str],
    fixes: &'static [&'static str],
}

const COLLECTION_RULES: [CollectionRule; 5] = [
    CollectionRule {
        rule: "evacuation_failure",
        tracker: |r| &r.evacuation_failure,
        severity: Severity::Warning,
        always_critical: false,
        what: "G1 collections failed to evacuate (to-space exhausted)",
        confidence: "high: the log reports the failure on the collection's line",
        causes: &[
            "no free regions to copy survivors into: the heap is too small or too full",
            "a burst of allocation or promotion, often humongous objects",
            "objects pinned by JNI critical sections (JDK 21+: Evacuation Failure: Pinned)",
        ],
        fixes: &[
            "raise -Xmx, or -XX:G1ReservePercent to keep regions free for evacuation",
            "start marking earlier: lower -XX:InitiatingHeapOccupancyPercent",
            "raise -XX:G1HeapRegionSize when humongous allocations fill the heap",
        ],
    },
    CollectionRule {
        rule: "concurrent_mode_failure",
        tracker: |r| &r.concurrent_mode_failure,
        severity: Severity::Critical,
        always_critical: true,
        what: "CMS concurrent mode failures (the old generation filled before the concurrent cycle finished; a stop-the-world collection followed)",
        confidence: "high: the log says (concurrent mode failure)",
        causes: &[
            "the concurrent cycle started too late for the promotion rate",
            "old-generation fragmentation",
        ],
        fixes: &[
            "-XX:CMSInitiatingOccupancyFraction=<lower> -XX:+UseCMSInitiatingOccupancyOnly",
            "raise the old generation (-Xmx) or move to G1",
        ],
    },
    CollectionRule {
        rule: "promotion_failure",
        tracker: |r| &r.promotion_failure,
        severity: Severity::Critical,
        always_critical: true,
        what: "young collections failed to promote into the old generation",
        confidence: "high: the log says (promotion failed)",
        causes: &[
            "the old generation had no room (or no contiguous room: fragmentation) for survivors",
        ],
        fixes: &[
            "raise the old generation, start CMS earlier, or move to G1",
            "larger survivor spaces (-XX:SurvivorRatio) so fewer objects are promoted early",
        ],
    },
    CollectionRule {
        rule: "humongous_allocation",
        tracker: |r| &r.humongous_allocation,
        severity: Severity::Info,
        always_critical: false,
        what: "G1 collections were started by humongous allocations (objects of half a region or more)",
        confidence: "high: the collection's cause is G1 Humongous Allocation",
        causes: &[
            "large arrays (buffers, big collections) each take whole regions outside the young generation",
        ],
        fixes: &[
            "raise -XX:G1HeapRegionSize (a power of two, up to 32m; 512m on JDK 18+) above twice the array size",
            "reuse or chunk the large buffers",
        ],
    },
    CollectionRule {
        rule: "degenerated_gc",
        tracker: |r| &r.degenerated_gc,
        severity: Severity::Warning,
        always_critical: false,
        what: "Shenandoah cycles degenerated into stop-the-world collections",
        confidence: "high: the log names each Pause Degenerated GC",
        causes: &[
            "the application allocated faster than the concurrent cycle could free memory",
        ],
        fixes: &[
            "raise -Xmx so the concurrent cycle has headroom",
            "start cycles earlier: -XX:ShenandoahMinFreeThreshold, or -XX:ShenandoahGCHeuristics=compact",
            "more concurrent GC threads (-XX:ConcGCThreads) when the cycle is CPU-bound",
        ],
    },
];

impl Rules {
    pub(super) fn gc_health(&self, ctx: &Context, out: &mut Vec<Finding>) {
        let t = ctx.thresholds;
        let pause_ms = ctx.pause_total_ns as f64 / 1e6;
        // Pauses that overlap in the log (two JVMs in one file) could add up to more.
        let share = pct(ctx.pause_total_ns as f64, ctx.covered_ns as f64).min(100.0);
        let worst_minute = ctx.worst_windows.iter().find(|w| w.window_s == 60);
        let window_hit = worst_minute.filter(|w| w.share_pct >= t.window_share_pct);
        let long_enough = ctx.covered_ns >= t.min_share_span_ns.max(1);
        if long_enough && (share >= t.gc_share_pct || window_hit.is_some()) {
            let windows = ctx
                .worst_windows
                .iter()
                .map(|w| {
                    format!(
                        "worst {} min {:.1}% ({:.1} s of pauses from {:.0} s)",
                        w.window_s / 60,
                        w.share_pct,
                        w.pause_ms / 1000.0,
                        w.start_s
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            out.push(Finding {
                rule: "gc_time_share",
                severity: if share >= 2.0 * t.gc_share_pct
                    || worst_minute.is_some_and(|w| w.share_pct >= 2.0 * t.window_share_pct)
                {
                    Severity::Critical
                } else {
                    Severity::Warning
                },
                title: format!(
                    "GC pauses took {share:.1}% of the {:.0} s the log covers ({:.1} s){}{windows}",
                    ctx.covered_ns as f64 / 1e9,
                    pause_ms / 1000.0,
                    if windows.is_empty() { "" } else { "; " }
                ),
                count: ctx.pause_count,
                excess_total_ms: pause_ms,
                confidence: "high: the sum of the pause lines over the time the log covers",
                evidence: Vec::new(),
                causes: rank(
                    vec![
                        Candidate::new("the heap is too small for the live data and the allocation rate: collections run back to back"),
                        Candidate::new("a burst of allocation (a batch job, a cache reload) in the worst window"),
                        Candidate::new("full collections (see full_gc) or failed evacuations").weigh_if(
                            self.full_gc.count + self.evacuation_failure.count > 0,
                            1,
                            || format!(
                                "{} full collections, {} failed evacuations in the log",
                                self.full_gc.count, self.evacuation_failure.count
                            ),
                        ),
                    ],
                    &ctx.flags,
                )
                .0,
                fixes: vec![
                    "raise -Xmx (and -Xms with it), or lower the live set",
                    "find the allocation hot spots (async-profiler -e alloc, JFR ObjectAllocationSample)",
                    "consider a concurrent collector (G1 tuned, ZGC, Shenandoah) for large heaps",
                ],
                threads: Vec::new(),
            });
        }

        let r = &self.full_gc;
        if r.count > 0 {
            let full_ms = r.excess_ns as f64 / 1e6;
            let causes = ctx
                .full_gc_causes
                .iter()
                .map(|(c, n, ms)| format!("{c} x{n} ({:.1} s)", ms / 1000.0))
                .collect::<Vec<_>>()
                .join(", ");
            let full_share = pct(full_ms, pause_ms);
            let mut f = r.finding(
                "full_gc",
                if r.count >= 10 || full_share >= 50.0 {
                    Severity::Critical
                } else {
                    Severity::Warning
                },
                format!(
                    "{} full collections, {:.1} s: {full_share:.1}% of the pause time; causes: {causes}",
                    r.count,
                    full_ms / 1000.0
                ),
            );
            f.confidence = "high: the log names each full collection and its cause";
            let has = |c: &str| ctx.full_gc_causes.iter().any(|(x, _, _)| x.contains(c));
            let counted = |names: &[&str]| -> (bool, u32, String) {
                let hits: Vec<&(String, u64, f64)> = ctx
                    .full_gc_causes
                    .iter()
                    .filter(|(c, _, _)| names.iter().any(|n| c.contains(n)))
                    .collect();
                let n: u64 = hits.iter().map(|(_, n, _)| n).sum();
                let named = hits
                    .iter()
                    .map(|(c, n, _)| format!("{c} x{n}"))
                    .collect::<Vec<_>>();
                (
                    n > 0,
                    u32::try_from(n).unwrap_or(u32::MAX),
                    format!("the log gives the cause {}", named.join(", ")),
                )
            };
            let weighed = |c: Candidate, names: &[&str]| {
                let (holds, n, evidence) = counted(names);
                c.weigh_if(holds, n, || evidence)
            };
            f.causes = rank(
                vec![
                    weighed(
                        Candidate::new("the old generation filled up: live data or promotion outgrew the heap"),
                        &["Allocation Failure", "Ergonomics", "Evacuation", "promotion failed", "concurrent mode failure", "a full collection ran inside it", "Humongous"],
                    ),
                    weighed(
                        Candidate::new("explicit System.gc() calls (RMI's distributed GC, NIO direct buffers, application code)"),
                        &["System.gc()"],
                    ),
                    weighed(
                        Candidate::new("metaspace reached its high-water mark (Metadata GC Threshold)"),
                        &["Metadata GC Threshold"],
                    ),
                    weighed(
                        Candidate::new("a heap dump or heap inspection (jmap, jcmd GC.heap_dump, GC.class_histogram)"),
                        &["Heap Inspection", "Heap Dump"],
                    ),
                ],
                &ctx.flags,
            )
            .0;
            let mut fixes = Vec::new();
            if has("System.gc()") {
                fixes.push("System.gc(): -XX:+DisableExplicitGC, or -XX:+ExplicitGCInvokesConcurrent on G1 and CMS");
            }
            if has("Metadata GC Threshold") {
                fixes.push("Metadata GC Threshold: raise -XX:MetaspaceSize to the metaspace the application settles at");
            }
            if has("Humongous") {
                fixes.push("G1 Humongous Allocation: raise -XX:G1HeapRegionSize so the large arrays are not humongous");
            }
            if has("Ergonomics") || has("Allocation Failure") || has("Evacuation") {
                fixes.push("the heap is too small for the live set: raise -Xmx, or find what holds memory (jcmd GC.class_histogram, a heap dump)");
            }
            if has("Heap Inspection") || has("Heap Dump") {
                fixes.push("Heap Inspection / Heap Dump: someone runs jmap -histo or heap dumps on this JVM");
            }
            if fixes.is_empty() {
                fixes.push("raise -Xmx or lower the live set; -Xlog:gc+heap=debug shows which generation filled");
            }
            f.fixes = fixes;
            out.push(f);
        }

        for rule in &COLLECTION_RULES {
            let r = (rule.tracker)(self);
            if r.count == 0 {
                continue;
            }
            let severity =
                if rule.always_critical || r.count >= 10 || r.max_excess_ns >= 1_000_000_000 {
                    Severity::Critical
                } else {
                    rule.severity
                };
            let mut f = r.finding(
                rule.rule,
                severity,
                format!(
                    "{} {}, {:.1} s of pauses",
                    r.count,
                    rule.what,
                    r.excess_ns as f64 / 1e9
                ),
            );
            f.confidence = rule.confidence;
            f.causes = listed(rule.causes);
            f.fixes = rule.fixes.to_vec();
            out.push(f);
        }

        let r = &self.allocation_stalls;
        let (count, total_ms, max_ms) = ctx.allocation_stalls;
        if count > 0 {
            let mut f = r.finding(
                "allocation_stalls",
                if max_ms >= 100.0 || count >= 100 {
                    Severity::Critical
                } else {
                    Severity::Warning
                },
                format!(
                    "{count} ZGC allocation stalls, {:.1} s in total, longest {max_ms:.1} ms: threads waited for memory (not in the pause statistics)",
                    total_ms / 1000.0
                ),
            );
            f.count = count;
            f.excess_total_ms = total_ms;
            f.confidence = "high: ZGC logs every stalled allocation with its thread and duration";
            f.causes = listed(&[
                "the heap is too small for the allocation rate: collections could not free memory in time",
                "too few concurrent GC threads for the allocation rate",
            ]);
            f.fixes = vec![
                "raise -Xmx (ZGC needs headroom: it collects while the application allocates)",
                "-XX:ConcGCThreads higher; on JDK 21-22 use generational ZGC (-XX:+ZGenerational)",
                "lower the allocation rate (async-profiler -e alloc)",
            ];
            out.push(f);
        }
    }
}
