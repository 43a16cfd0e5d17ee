//! `concurrent_mode_failure`: CMS's old generation filled before its concurrent cycle
//! finished, and a stop-the-world collection followed. A collection that also failed to
//! promote counts here and in `promotion_failure`.

use pauselab_pause::record::Failure;

use crate::rules::collection::{self, Collection};
use crate::rules::finding::Severity;
use crate::rules::rule::{Marks, Rule, Watch};

pub(crate) const ID: &str = "concurrent_mode_failure";
/// A collection rule looks at pauses only.
pub(crate) const WATCHES: &[Watch] = collection::WATCHES;

static RULE: Collection = Collection {
    id: ID,
    matches: |p| p.failures.has(Failure::ConcurrentMode),
    marks: Marks::CONCURRENT_MODE_FAILURE,
    detail: |ms| format!("concurrent mode failure: {ms:.1} ms pause"),
    severity: Severity::Critical,
    always_critical: true,
    what: "CMS concurrent mode failures (the old generation filled before the concurrent cycle finished; a stop-the-world collection followed)",
    confidence: "high: the log says (concurrent mode failure)",
    causes: &[
        "the concurrent cycle started too late for the promotion rate",
        "old-generation fragmentation",
    ],
    heap_full_cause: None,
    fixes: &[
        "-XX:CMSInitiatingOccupancyFraction=<lower> -XX:+UseCMSInitiatingOccupancyOnly",
        "raise the old generation (-Xmx) or move to G1",
    ],
};

pub(crate) fn start() -> Box<dyn Rule> {
    RULE.start()
}
