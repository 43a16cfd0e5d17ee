//! `humongous_allocation`: G1 collections started by objects of half a region or more.

use crate::rules::collection::Collection;
use crate::rules::finding::Severity;
use crate::rules::rule::Rule;

pub(crate) const ID: &str = "humongous_allocation";

static RULE: Collection = Collection {
    id: ID,
    matches: |p| p.cause.as_deref().is_some_and(|c| c.contains("Humongous")),
    detail: |ms| format!("{ms:.1} ms pause"),
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
};

pub(crate) fn start() -> Box<dyn Rule> {
    RULE.start()
}
