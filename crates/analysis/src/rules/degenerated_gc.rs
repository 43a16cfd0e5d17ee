//! `degenerated_gc`: Shenandoah cycles that fell back to a stop-the-world collection
//! (Shenandoah's full collections are `full_gc`).

use crate::rules::collection::{self, Collection};
use crate::rules::finding::Severity;
use crate::rules::rule::{Marks, Rule, Watch};

pub(crate) const ID: &str = "degenerated_gc";
/// A collection rule looks at pauses only.
pub(crate) const WATCHES: &[Watch] = collection::WATCHES;

static RULE: Collection = Collection {
    id: ID,
    matches: |p| p.name.starts_with("Pause Degenerated"),
    marks: Marks::DEGENERATED,
    detail: |ms| format!("stop-the-world {ms:.1} ms"),
    severity: Severity::Warning,
    always_critical: false,
    what: "Shenandoah cycles degenerated into stop-the-world collections",
    confidence: "high: the log names each Pause Degenerated GC",
    causes: &[
        "the application allocated faster than the concurrent cycle could free memory",
    ],
    heap_full_cause: None,
    fixes: &[
        "raise -Xmx so the concurrent cycle has headroom",
        "start cycles earlier: -XX:ShenandoahMinFreeThreshold, or -XX:ShenandoahGCHeuristics=compact",
        "more concurrent GC threads (-XX:ConcGCThreads) when the cycle is CPU-bound",
    ],
};

pub(crate) fn start() -> Box<dyn Rule> {
    RULE.start()
}
