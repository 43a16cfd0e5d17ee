//! `humongous_allocation`: G1 collections started by objects of half a region or more.

use crate::rules::collection::Collection;
use crate::rules::finding::Severity;
use crate::rules::rule::Rule;

pub(crate) const ID: &str = "humongous_allocation";

static RULE: Collection = Collection {
    id: ID,
    matches: |p| p.cause.as_deref().is_some_and(names_humongous),
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

/// `cause.contains("Humongous")`, looked for where an `H` is: asked of every pause, and
/// `str::contains` builds a searcher each time.
fn names_humongous(cause: &str) -> bool {
    let bytes = cause.as_bytes();
    (0..bytes.len()).any(|at| bytes[at] == b'H' && bytes[at..].starts_with(b"Humongous"))
}

#[cfg(test)]
mod tests {
    use super::names_humongous;

    proptest::proptest! {
        #[test]
        fn a_cause_names_humongous_as_contains_finds_it(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "G1 ", "Humongous", "Humong", "H", "ous", " Allocation", "Evacuation Pause", "é",
            ]), 0..6),
        ) {
            let cause = pieces.concat();
            proptest::prop_assert_eq!(names_humongous(&cause), cause.contains("Humongous"));
        }
    }
}
