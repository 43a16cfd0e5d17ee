//! A rule's finding: what matched, its evidence, the causes ranked and the fixes.

use serde::Serialize;

use crate::evidence::{Evidence, RuleTracker};
use crate::rules::causes::{rank, Candidate, Cause, JvmFlags};
use crate::timeouts::Culprit;

/// The scale shared with `doctor`'s host checks (a log finding is never `Ok`).
pub use pauselab_pause::Severity;

/// What one rule found: how many pauses matched, their excess, the worst examples, the
/// likely causes and the fixes.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// The rule's id (`--fail-on finding:ID`).
    pub rule: &'static str,
    /// How bad it is.
    pub severity: Severity,
    /// What was found, in one line.
    pub title: String,
    /// How many pauses or safepoints matched.
    pub count: u64,
    /// Sum of the matched pauses' excess over what the rule expects, ms.
    pub excess_total_ms: f64,
    /// How sure the diagnosis is, in words.
    pub confidence: &'static str,
    /// The strongest examples, worst first.
    pub evidence: Vec<Evidence>,
    /// Every candidate cause, the one the input's evidence points at most first.
    pub causes: Vec<Cause>,
    /// What to do, in the order of the causes; never an option the JVM already has.
    pub fixes: Vec<&'static str>,
    /// The threads HotSpot named as not reaching a safepoint in time (`long_ttsp`, with
    /// `-XX:+SafepointTimeout`); absent when none were named.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<Culprit>,
}

impl Finding {
    /// The finding of `rule` over what `tracker` counted; confidence, causes and fixes to
    /// be filled in.
    pub(crate) fn tracked(
        rule: &'static str,
        tracker: &RuleTracker,
        severity: Severity,
        title: String,
    ) -> Finding {
        Finding {
            rule,
            severity,
            title,
            count: tracker.count,
            excess_total_ms: tracker.excess_ns as f64 / 1e6,
            confidence: "",
            evidence: tracker.evidence().to_vec(),
            causes: Vec::new(),
            fixes: Vec::new(),
            threads: Vec::new(),
        }
    }

    /// The finding of a rule about time the OS took from a stop: critical at 10 matches
    /// or at one of 500 ms, its `candidates` ranked by the evidence and the JVM's options.
    pub(crate) fn of_stall(
        rule: &'static str,
        tracker: &RuleTracker,
        title: String,
        confidence: &'static str,
        candidates: Vec<Candidate>,
        flags: &JvmFlags,
    ) -> Finding {
        let mut f = Finding::tracked(rule, tracker, graded(tracker, 10, 500_000_000), title);
        f.confidence = confidence;
        (f.causes, f.fixes) = rank(candidates, flags);
        f
    }
}

/// Critical at `count` hits or one of `max_ns`, else a warning: most rules' scale.
pub(crate) fn graded(tracker: &RuleTracker, count: u64, max_ns: u64) -> Severity {
    if tracker.max_excess_ns >= max_ns || tracker.count >= count {
        Severity::Critical
    } else {
        Severity::Warning
    }
}

/// `50 ms`: a threshold in a title.
pub(crate) fn ms(ns: u64) -> String {
    format!("{} ms", ns / 1_000_000)
}

/// `ns` in whole milliseconds, rounded as `format!("{:.0}", ns as f64 / 1e6)` rounds them
/// (half to even), for the evidence of a pause: an integer is written in a tenth of the
/// time of a float with a precision (which was 2 % of reading a CMS log).
pub(crate) fn whole_ms(ns: u64) -> u64 {
    (ns as f64 / 1e6).round_ties_even() as u64
}

#[cfg(test)]
mod tests {
    use super::whole_ms;

    #[test]
    fn whole_milliseconds_are_written_as_a_float_without_decimals_is() {
        // Halves among them (250 us steps), and nanoseconds anywhere.
        let quarter_steps = (0..4_000u64).map(|i| i * 250_000);
        let odd = (0..4_000u64).map(|i| i * 7_919_447 + 499_999);
        for ns in quarter_steps.chain(odd) {
            assert_eq!(
                whole_ms(ns).to_string(),
                format!("{:.0}", ns as f64 / 1e6),
                "{ns} ns"
            );
        }
    }
}
