//! `promotion_failure`: young collections that found no room in the old generation for
//! their survivors (`(promotion failed)`, Parallel's `GC--`).

use pauselab_pause::record::Failure;

use crate::rules::collection::{self, Collection};
use crate::rules::finding::Severity;
use crate::rules::rule::{Marks, Rule, Watch};

pub(crate) const ID: &str = "promotion_failure";
/// A collection rule looks at pauses only.
pub(crate) const WATCHES: &[Watch] = collection::WATCHES;

static RULE: Collection = Collection {
    id: ID,
    matches: |p| p.failures.has(Failure::Promotion),
    marks: Marks::PROMOTION_FAILURE,
    detail: |ms| format!("promotion failed: {ms:.1} ms pause"),
    severity: Severity::Critical,
    always_critical: true,
    what: "young collections failed to promote into the old generation",
    confidence: "high: the log says so (`(promotion failed)`, Parallel's `GC--`)",
    causes: &[
        "the old generation had no room (or no contiguous room: fragmentation) for survivors",
    ],
    heap_full_cause: None,
    fixes: &[
        "raise the old generation, start CMS earlier, or move to G1",
        "larger survivor spaces (-XX:SurvivorRatio) so fewer objects are promoted early",
    ],
};

pub(crate) fn start() -> Box<dyn Rule> {
    RULE.start()
}
