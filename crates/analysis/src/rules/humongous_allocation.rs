//! `humongous_allocation`: G1 collections started by objects of half a region or more.

use crate::rules::collection::{self, Collection};
use crate::rules::finding::Severity;
use crate::rules::rule::{Marks, Rule, Watch};

pub(crate) const ID: &str = "humongous_allocation";
/// A collection rule looks at pauses only.
pub(crate) const WATCHES: &[Watch] = collection::WATCHES;

static RULE: Collection = Collection {
    id: ID,
    // A recording gives the concurrent cycle's remark and cleanup the cause of the young
    // collection that started it (one GC id): only that collection counts, as in a log.
    matches: |p| {
        p.cause.as_deref().is_some_and(names_humongous)
            && !matches!(
                pauselab_pause::PauseType::of(&p.name),
                pauselab_pause::PauseType::Remark | pauselab_pause::PauseType::Cleanup
            )
    },
    marks: Marks::HUMONGOUS_CAUSE,
    detail: |ms| format!("{ms:.1} ms pause"),
    severity: Severity::Info,
    always_critical: false,
    what: "G1 collections were started by humongous allocations (objects of half a region or more)",
    confidence: "high: the collection's cause is G1 Humongous Allocation",
    causes: &[
        "large arrays (buffers, big collections) each take whole regions outside the young generation",
    ],
    heap_full_cause: None,
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
pub(crate) fn names_humongous(cause: &str) -> bool {
    let bytes = cause.as_bytes();
    (0..bytes.len()).any(|at| bytes[at] == b'H' && bytes[at..].starts_with(b"Humongous"))
}

#[cfg(test)]
mod tests {
    use super::{names_humongous, RULE};
    use pauselab_pause::record::GcPause;

    #[test]
    fn the_collection_counts_not_the_cycles_pauses_that_share_its_cause() {
        let pause = |name: &str| GcPause {
            gc_id: Some(7),
            duration_ns: 1_000_000,
            name: name.to_string().into(),
            cause: Some("G1 Humongous Allocation".into()),
            ..GcPause::default()
        };
        assert!((RULE.matches)(&pause("Pause Young (Concurrent Start)")));
        assert!(!(RULE.matches)(&pause("Pause Remark")));
        assert!(!(RULE.matches)(&pause("Pause Cleanup")));
    }

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
