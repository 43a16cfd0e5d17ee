//! Rules that count the collections the log marks (a failure, a cause, a kind): one
//! [`Collection`] each, worded alike.

use pauselab_pause::record::GcPause;

use crate::evidence::RuleTracker;
use crate::rules::causes::listed;
use crate::rules::finding::{Finding, Severity};
use crate::rules::rule::{Context, Marks, Rule, Seen, Watch};

/// What every collection rule watches: the marked pauses (see [`is_marked`](crate::rules::marks::is_marked)).
pub(crate) const WATCHES: &[Watch] = &[Watch::MarkedPause];

/// What one collection rule looks for and says.
pub(crate) struct Collection {
    pub id: &'static str,
    /// Whether a pause is one of these collections.
    pub matches: fn(&GcPause) -> bool,
    /// The marks of the pauses `matches` may accept (see [`Rule::counts`]).
    pub marks: Marks,
    /// The evidence's numbers, from the pause's duration in ms.
    pub detail: fn(f64) -> String,
    /// Severity below 10 hits and 1 s.
    pub severity: Severity,
    pub always_critical: bool,
    /// Completes "N ..., X of pauses".
    pub what: &'static str,
    pub confidence: &'static str,
    pub causes: &'static [&'static str],
    /// The cause (an index into `causes`) that a heap at least 90 % full before the
    /// collection speaks for, ranked first when any such collection is among the matches.
    pub heap_full_cause: Option<usize>,
    pub fixes: &'static [&'static str],
}

impl Collection {
    /// A rule watching for these collections.
    pub fn start(&'static self) -> Box<dyn Rule> {
        Box::new(CollectionRule {
            spec: self,
            tracker: RuleTracker::default(),
            heap_full: 0,
        })
    }
}

struct CollectionRule {
    spec: &'static Collection,
    tracker: RuleTracker,
    /// Matched collections whose heap was at least 90 % full before them.
    heap_full: u64,
}

impl Rule for CollectionRule {
    fn pause(&mut self, seen: &Seen<'_, GcPause>) {
        let (p, spec) = (seen.item, self.spec);
        if (spec.matches)(p) {
            let full = p.heap.is_some_and(|h| {
                h.capacity
                    .is_some_and(|c| c > 0 && u128::from(h.before) * 100 >= u128::from(c) * 90)
            });
            self.heap_full += u64::from(full);
            self.tracker.hit(p.duration_ns, seen.keep, || {
                let detail = (spec.detail)(p.duration_ns as f64 / 1e6);
                seen.evidence(p.described(), detail, p.duration_ns)
            });
        }
    }

    fn counts(&self) -> Marks {
        self.spec.marks
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
        if let Some(at) = spec.heap_full_cause.filter(|_| self.heap_full > 0) {
            let mut cause = f.causes.remove(at);
            cause.evidence = Some(format!(
                "the heap was at least 90% full before {} of them",
                self.heap_full
            ));
            f.causes.insert(0, cause);
        }
        f.fixes = spec.fixes.to_vec();
        Some(f)
    }
}
