//! `full_gc`: full collections (unified `Pause Full`, JDK 8 `Full GC`, a young collection
//! upgraded to a full one). Their causes, as the log gives them, rank the causes and
//! choose the fixes.

use pauselab_pause::record::{GcPause, HeapChange};
use pauselab_pause::PauseType;

use crate::evidence::RuleTracker;
use crate::rules::causes::{rank, Candidate};
use crate::rules::finding::{Finding, Severity};
use crate::rules::rule::{Context, Marks, Rule, Seen, Watch};
use crate::terminal::dur;

pub(crate) const ID: &str = "full_gc";
pub(crate) const WATCHES: &[Watch] = &[Watch::MarkedPause];
/// What `full_gc_causes` calls the cause of a full collection the log gives none for.
pub(crate) const NO_CAUSE: &str = "cause not in log";
/// Full collections are critical once one takes this long, or once they add up to it and
/// are many or most of the pause time (five `System.gc()` of 3 ms are not).
const CRITICAL_MS: f64 = 1000.0;

/// A generation counts as filled when at least this share of it was in use.
const FILLED_PCT: u64 = 90;

#[derive(Default)]
struct FullGc {
    tracker: RuleTracker,
    /// What the full collections' generations show (JDK 6-8 logs print them).
    filled: Filled,
}

/// How many full collections found a generation filled, as their lines show.
#[derive(Default)]
struct Filled {
    /// The old generation (or the whole heap, when no generation is printed) was at least
    /// [`FILLED_PCT`] % full before the collection...
    old_before: u64,
    /// ... and still was after it: the live data no longer fits.
    old_after: u64,
    /// Whether those were read from the old generation, from the whole heap, or both.
    old_from_generation: bool,
    old_from_heap: bool,
    /// The permanent generation (JDK 7 and earlier) was at least [`FILLED_PCT`] % full.
    perm_before: u64,
    /// Some collection printed a permanent generation.
    perm_printed: bool,
    /// Some collection printed `[Metaspace:` (JDK 8).
    metaspace_printed: bool,
}

fn is_filled(occupancy: u64, capacity: Option<u64>) -> bool {
    capacity.is_some_and(|c| c > 0 && occupancy.saturating_mul(100) >= c.saturating_mul(FILLED_PCT))
}

impl Filled {
    fn add(&mut self, p: &GcPause) {
        let generations = p.generations.as_deref();
        let old_generation = generations.and_then(|g| g.old.as_ref());
        let old: Option<&HeapChange> = old_generation.or(p.heap.as_ref());
        if let Some(old) = old.filter(|o| is_filled(o.before, o.capacity)) {
            self.old_before += 1;
            self.old_from_generation |= old_generation.is_some();
            self.old_from_heap |= old_generation.is_none();
            self.old_after += u64::from(is_filled(old.after, old.capacity));
        }
        if let Some(g) = generations {
            if let Some(perm) = g.perm {
                self.perm_printed = true;
                self.perm_before += u64::from(is_filled(perm.before, perm.capacity));
            }
            self.metaspace_printed |= g.metaspace;
        }
    }
}

pub(crate) fn start() -> Box<dyn Rule> {
    Box::<FullGc>::default()
}

/// Unified `Pause Full`, JDK 8 `Full GC` (Shenandoah's and G1's fallbacks included).
pub(crate) fn is_full_collection(name: &str) -> bool {
    PauseType::is_full(name)
}

/// Why a collection not named full was one: the failure that made the JVM collect the old
/// generation, or the full collection nested in it.
pub(crate) fn upgrade_reason(p: &GcPause) -> Option<&'static str> {
    if !p.upgraded_to_full {
        None
    } else if p.failures.concurrent_mode {
        Some("concurrent mode failure")
    } else if p.failures.promotion {
        Some("promotion failed")
    } else {
        Some("a full collection ran inside it")
    }
}

impl Rule for FullGc {
    fn counts(&self) -> Marks {
        Marks::FULL
    }

    fn pause(&mut self, seen: &Seen<'_, GcPause>) {
        let p = seen.item;
        if !is_full_collection(&p.name) && !p.upgraded_to_full {
            return;
        }
        self.filled.add(p);
        self.tracker.hit(p.duration_ns, seen.keep, || {
            let upgraded = match upgrade_reason(p) {
                Some(why) => format!(" ({} upgraded to a full one: {why})", p.name),
                None => String::new(),
            };
            let detail = format!(
                "full collection, {:.1} ms{upgraded}",
                p.duration_ns as f64 / 1e6
            );
            seen.evidence(p.described(), detail, p.duration_ns)
        });
    }

    fn matched(&self, _ctx: &Context<'_>) -> u64 {
        self.tracker.count
    }

    fn finding(&self, ctx: &Context<'_>) -> Option<Finding> {
        let r = self.tracker.fired()?;
        let full_ms = r.excess_ns as f64 / 1e6;
        let causes = ctx
            .full_gc_causes
            .iter()
            .map(|(c, n, ms)| format!("{c} x{n} ({})", dur(*ms)))
            .collect::<Vec<_>>()
            .join(", ");
        let pause_ms = ctx.pause_total_ns as f64 / 1e6;
        let full_share = if pause_ms > 0.0 {
            full_ms * 100.0 / pause_ms
        } else {
            0.0
        };
        // Many or most of the pause time, once they add up to a second; or one that long.
        let weighty = full_ms >= CRITICAL_MS && (r.count >= 10 || full_share >= 50.0);
        let severity = if weighty || r.max_excess_ns as f64 / 1e6 >= CRITICAL_MS {
            Severity::Critical
        } else {
            Severity::Warning
        };
        let title = format!(
            "{} full collections, {}: {full_share:.1}% of the pause time; causes: {causes}",
            r.count,
            dur(full_ms)
        );
        let mut f = Finding::tracked(ID, r, severity, title);
        let unknown = ctx
            .full_gc_causes
            .iter()
            .filter(|(c, _, _)| c == NO_CAUSE)
            .map(|(_, n, _)| n)
            .sum::<u64>();
        f.confidence = if unknown == 0 {
            "high: the log names each full collection and its cause"
        } else if unknown == r.count {
            "high that they were full collections; the log gives no cause on their lines (JDK 7 and earlier print none; Shenandoah prints its `Trigger:` on a line of its own)"
        } else {
            "high that they were full collections; the log gives the cause of some only"
        };
        f.causes = rank(ranked_causes(ctx, &self.filled, unknown == r.count), ctx.flags).0;
        f.fixes = fixes(ctx, &self.filled);
        Some(f)
    }
}

/// Each cause weighed by how many full collections the log gives a cause of its kind for,
/// or shows the generation it names filled in. `no_cause_given`: the log names the cause
/// of none (JDK 7 and earlier).
fn ranked_causes(ctx: &Context<'_>, filled: &Filled, no_cause_given: bool) -> Vec<Candidate> {
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
    // A generation seen filled weighs as much as a cause the log names.
    let seen_filled = |c: Candidate, causes: &[&str], n: u64, what: String| {
        let (named, by_cause, evidence) = counted(causes);
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        match (named, n > 0) {
            (true, true) => c.weigh(by_cause.saturating_add(n), format!("{evidence}; {what}")),
            (true, false) => c.weigh(by_cause, evidence),
            (false, true) => c.weigh(n, what),
            (false, false) => c,
        }
    };
    let old_filled = {
        let after = match filled.old_after {
            0 => String::new(),
            n if n == filled.old_before => ", and still after each".to_string(),
            n => format!(", and still after {n}"),
        };
        let what = match (filled.old_from_generation, filled.old_from_heap) {
            (true, false) => "the old generation",
            (false, true) => "the heap",
            _ => "the old generation (the heap, where the log prints no generation)",
        };
        format!(
            "{what} was at least {FILLED_PCT}% full before {} of them{after}",
            filled.old_before
        )
    };
    // Class metadata lives in the permanent generation up to JDK 7, in metaspace after.
    let class_metadata = if filled.perm_printed {
        seen_filled(
            Candidate::new("the permanent generation filled up (class metadata: many or leaked classes; JDK 7 and earlier)"),
            &["Perm"],
            filled.perm_before,
            format!(
                "the permanent generation was at least {FILLED_PCT}% full before {} of them",
                filled.perm_before
            ),
        )
    } else if no_cause_given && !filled.metaspace_printed {
        weighed(
            Candidate::new("class metadata filled up: the permanent generation (JDK 7 and earlier) or metaspace's high-water mark (JDK 8 and later)"),
            &["Perm", "Metadata GC Threshold"],
        )
    } else {
        weighed(
            Candidate::new("metaspace reached its high-water mark (Metadata GC Threshold)"),
            &["Metadata GC Threshold"],
        )
    };
    vec![
        seen_filled(
            Candidate::new("the old generation filled up: live data or promotion outgrew the heap"),
            &["Allocation Failure", "Ergonomics", "Evacuation", "promotion failed", "concurrent mode failure", "a full collection ran inside it", "Humongous"],
            filled.old_before,
            old_filled,
        ),
        weighed(
            Candidate::new("explicit System.gc() calls (RMI's distributed GC, NIO direct buffers, application code)"),
            // JDK 6 and 7 name it `System`; CMS's `concurrent mode interrupted` is a
            // collection someone asked for while CMS ran.
            &["System", "concurrent mode interrupted"],
        ),
        class_metadata,
        weighed(
            Candidate::new("a heap dump or heap inspection (jmap, jcmd GC.heap_dump, GC.class_histogram)"),
            &["Heap Inspection", "Heap Dump"],
        ),
    ]
}

/// The fixes of the causes the log gives, and of the generations it shows filled.
fn fixes(ctx: &Context<'_>, filled: &Filled) -> Vec<&'static str> {
    let has = |c: &str| ctx.full_gc_causes.iter().any(|(x, _, _)| x.contains(c));
    let mut fixes = Vec::new();
    if has("System") || has("concurrent mode interrupted") {
        fixes.push("System.gc(): -XX:+DisableExplicitGC, or -XX:+ExplicitGCInvokesConcurrent on G1 and CMS");
    }
    if has("Metadata GC Threshold") {
        fixes.push("Metadata GC Threshold: raise -XX:MetaspaceSize to the metaspace the application settles at");
    }
    const PERM_FIX: &str = "the permanent generation filled: raise -XX:MaxPermSize (and -XX:PermSize with it), or find the class loader that leaks (jmap -permstat)";
    let perm = filled.perm_before > 0 || has("Perm");
    // First when more collections found it full than found the old generation full.
    let perm_first = perm && filled.perm_before > filled.old_before;
    if perm_first {
        fixes.push(PERM_FIX);
    }
    if has("Humongous") {
        fixes.push("G1 Humongous Allocation: raise -XX:G1HeapRegionSize so the large arrays are not humongous");
    }
    if has("Ergonomics") || has("Allocation Failure") || has("Evacuation") || filled.old_before > 0 {
        fixes.push("the heap is too small for the live set: raise -Xmx, or find what holds memory (jcmd GC.class_histogram, a heap dump)");
    }
    if perm && !perm_first {
        fixes.push(PERM_FIX);
    }
    if has("Heap Inspection") || has("Heap Dump") {
        fixes.push("Heap Inspection / Heap Dump: someone runs jmap -histo or heap dumps on this JVM");
    }
    if fixes.is_empty() {
        fixes.push("raise -Xmx or lower the live set; the heap's lines show which generation filled (-Xlog:gc+heap=debug on JDK 9+, -XX:+PrintGCDetails before)");
    }
    fixes
}
