//! What a rule keeps while the log streams by: how many pauses or safepoints matched, by how
//! much, and the strongest examples.

use serde::Serialize;

/// One pause or safepoint that made a rule fire.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    /// The input it is in.
    pub file: String,
    /// Its line (a text log) or ordinal (a recording's event).
    pub line: u64,
    /// Seconds since JVM start, when the log has it.
    pub uptime_s: Option<f64>,
    /// ISO-8601 UTC, when the log has a wall clock.
    pub wall: Option<String>,
    /// The pause or VM operation.
    pub what: String,
    /// The numbers that made the rule fire, in words.
    pub detail: String,
    /// How far over the rule's margin, in ms (ranks the evidence).
    pub excess_ms: f64,
}

/// Count, excess and the K strongest examples of one rule.
#[derive(Debug, Clone, Default)]
pub struct RuleTracker {
    pub count: u64,
    pub excess_ns: u128,
    pub max_excess_ns: u64,
    /// Strongest first; among equals, the first seen first.
    evidence: Vec<Evidence>,
    /// The excess each of `evidence` was ranked by, in the same order: a rule may word its
    /// evidence's excess otherwise than it ranks its hits.
    ranks: Vec<u64>,
}

impl RuleTracker {
    /// One match, `excess_ns` over the rule's margin; `evidence` is called only when the
    /// match is among the `keep` strongest so far.
    #[inline]
    pub fn hit(&mut self, excess_ns: u64, keep: usize, evidence: impl FnOnce() -> Evidence) {
        self.count += 1;
        self.excess_ns += u128::from(excess_ns);
        self.max_excess_ns = self.max_excess_ns.max(excess_ns);
        // Most hits of a long log are no stronger than the evidence kept.
        if self.ranks.len() >= keep
            && self
                .ranks
                .last()
                .is_none_or(|&weakest| weakest >= excess_ns)
        {
            return;
        }
        self.keep(excess_ns, keep, evidence);
    }

    /// Keeps the evidence of a hit that may be among the `keep` strongest.
    fn keep(&mut self, excess_ns: u64, keep: usize, evidence: impl FnOnce() -> Evidence) {
        if self.ranks.len() >= keep {
            match self.ranks.last() {
                Some(&weakest) if weakest < excess_ns => {
                    // Of several as weak, the first seen makes room.
                    let first_weakest = self.ranks.partition_point(|&r| r > weakest);
                    self.ranks.remove(first_weakest);
                    self.evidence.remove(first_weakest);
                }
                _ => return,
            }
        }
        let at = self.ranks.partition_point(|&r| r >= excess_ns);
        self.ranks.insert(at, excess_ns);
        self.evidence.insert(at, evidence());
    }

    /// This tracker, when the rule matched anything.
    pub fn fired(&self) -> Option<&RuleTracker> {
        (self.count > 0).then_some(self)
    }

    pub fn evidence(&self) -> &[Evidence] {
        &self.evidence
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labelled(what: &str) -> Evidence {
        Evidence {
            file: "gc.log".into(),
            line: 1,
            uptime_s: None,
            wall: None,
            what: what.into(),
            // Worded apart from the rank, as sys_gt_user words sys - user.
            detail: String::new(),
            excess_ms: 0.0,
        }
    }

    fn kept(tracker: &RuleTracker) -> Vec<&str> {
        tracker.evidence().iter().map(|e| e.what.as_str()).collect()
    }

    #[test]
    fn the_strongest_hits_are_kept_by_their_rank_and_the_first_of_equals_first() {
        let mut tracker = RuleTracker::default();
        let mut built = 0;
        for (what, rank) in [
            ("a", 10),
            ("b", 50),
            ("c", 30),
            ("d", 50),
            ("e", 20),
            ("f", 60),
            ("g", 30),
        ] {
            tracker.hit(rank, 3, || {
                built += 1;
                labelled(what)
            });
        }
        assert_eq!(kept(&tracker), ["f", "b", "d"]);
        assert_eq!(
            (tracker.count, tracker.excess_ns, tracker.max_excess_ns),
            (7, 250, 60)
        );
        // Evidence is written only for hits that were among the strongest when they came.
        assert_eq!(built, 5);
        // Of several as weak as the weakest kept, the first seen makes room.
        let mut ties = RuleTracker::default();
        for (what, rank) in [("x", 5), ("y", 5), ("z", 7)] {
            ties.hit(rank, 2, || labelled(what));
        }
        assert_eq!(kept(&ties), ["z", "y"]);
    }
}
