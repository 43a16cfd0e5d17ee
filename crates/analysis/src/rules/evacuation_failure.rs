//! `evacuation_failure`: G1 collections that could not copy their survivors anywhere
//! (to-space exhausted).

use pauselab_pause::record::Failure;

use crate::rules::collection::{self, Collection};
use crate::rules::finding::Severity;
use crate::rules::rule::{Marks, Rule, Watch};

pub(crate) const ID: &str = "evacuation_failure";
/// A collection rule looks at pauses only.
pub(crate) const WATCHES: &[Watch] = collection::WATCHES;

static RULE: Collection = Collection {
    id: ID,
    matches: |p| p.failures.has(Failure::Evacuation),
    marks: Marks::EVACUATION_FAILURE,
    detail: |ms| format!("evacuation failed: {ms:.1} ms pause"),
    severity: Severity::Warning,
    always_critical: false,
    what: "G1 collections failed to evacuate (to-space exhausted)",
    confidence: "high: the log reports the failure on the collection's line",
    causes: &[
        "no free regions to copy survivors into: the heap is too small or too full",
        "a burst of allocation or promotion, often humongous objects",
        "objects pinned by JNI critical sections (JDK 21+: Evacuation Failure: Pinned)",
    ],
    heap_full_cause: Some(0),
    fixes: &[
        "raise -Xmx, or -XX:G1ReservePercent to keep regions free for evacuation",
        "start marking earlier: lower -XX:InitiatingHeapOccupancyPercent",
        "raise -XX:G1HeapRegionSize when humongous allocations fill the heap",
    ],
};

pub(crate) fn start() -> Box<dyn Rule> {
    RULE.start()
}
