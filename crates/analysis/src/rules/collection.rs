//! Rules that count the collections the log marks (a failure, a cause, a kind): one
//! [`Collection`] each, worded alike.

use pauselab_pause::record::GcPause;

use crate::evidence::RuleTracker;
use crate::rules::causes::listed;
use crate::rules::finding::{Finding, Severity};
use crate::rules::rule::{Context, Rule, Seen};

/// What one collection rule looks for and says.
pub(crate) struct Collection {
    pub id: &'static str,
    /// Whether a pause is one of these collections.
    pub matches: fn(&GcPause) -> bool,
    /// The evidence's numbers, from the pause's duration in ms.
    pub detail: fn(f64) -> String,
    /// Severity below 10 hits and 1 s.
    pub severity: Severity,
    pub always_critical: bool,
    /// Completes "N ..., X of pauses".
    pub what: &'static str,
    pub confidence: &'static str,
    pub causes: &'static [&'static str],
    pub fixes: &'static [&'static str],
}

impl Collection {
    /// A rule watching for these collections.
    pub fn start(&'static self) -> Box<dyn Rule> {
        Box::new(CollectionRule {
            spec: self,
            tracker: RuleTracker::default(),
        })
    }
}

struct CollectionRule {
    spec: &'static Collection,
    tracker: RuleTracker,
}

impl Rule for CollectionRule {
    fn pause(&mut self, seen: &Seen<'_, GcPause>) {
        let (p, spec) = (seen.item, self.spec);
        if (spec.matches)(p) {
            self.tracker.hit(p.duration_ns, seen.keep, || {
                let detail = (spec.detail)(p.duration_ns as f64 / 1e6);
                seen.evidence(p.described(), detail, p.duration_ns)
            });
        }
    }

    fn matched(&self, _ctx: &Context<'_>) -> u64 {
        self.tracker.count
    }

    fn finding(&self, _ctx: &Context<'_>) -> Option<Finding> {
        let (spec, r) = (self.spec, self.tracker.fired()?);
        let severity = if spec.always_critical || r.count >= 10 || r.max_excess_ns >= 1_000_000_000
        {
            Severity::Critical
        } else {
            spec.severity
        };
        let title = format!(
            "{} {}, {} of pauses",
            r.count,
            spec.what,
            crate::terminal::dur(r.excess_ns as f64 / 1e6)
        );
        let mut f = Finding::tracked(spec.id, r, severity, title);
        f.confidence = spec.confidence;
        f.causes = listed(spec.causes);
        f.fixes = spec.fixes.to_vec();
        Some(f)
    }
}
