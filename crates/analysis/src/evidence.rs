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
    evidence: Vec<Evidence>,
}

impl RuleTracker {
    pub fn hit(&mut self, excess_ns: u64, keep: usize, evidence: impl FnOnce() -> Evidence) {
        self.count += 1;
        self.excess_ns += u128::from(excess_ns);
        self.max_excess_ns = self.max_excess_ns.max(excess_ns);
        let excess_ms = excess_ns as f64 / 1e6;
        if self.evidence.len() < keep {
            self.evidence.push(evidence());
        } else if let Some(min) = self
            .evidence
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.excess_ms.total_cmp(&b.1.excess_ms))
            .filter(|(_, e)| e.excess_ms < excess_ms)
            .map(|(i, _)| i)
        {
            self.evidence[min] = evidence();
        } else {
            return;
        }
        self.evidence
            .sort_by(|a, b| b.excess_ms.total_cmp(&a.excess_ms));
    }

    /// This tracker, when the rule matched anything.
    pub fn fired(&self) -> Option<&RuleTracker> {
        (self.count > 0).then_some(self)
    }

    pub fn evidence(&self) -> &[Evidence] {
        &self.evidence
    }
}
