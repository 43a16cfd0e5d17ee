//! `incremental_cms`: CMS runs in incremental mode (`-XX:+CMSIncrementalMode`, `-Xincgc`).
//! The mode cuts CMS's concurrent work into slices between young collections, so an old
//! generation's collection takes longer and a concurrent mode failure, a full stop of the
//! application, comes sooner. It was meant for machines of one or two CPUs, is deprecated in
//! JDK 8 and gone in JDK 9 (JEP 214). With `-XX:+PrintGCDetails` each collection prints the
//! duty cycle it set (`icms_dc=`), which tells the mode from plain CMS; else the options do.

use pauselab_pause::record::GcPause;

use crate::evidence::RuleTracker;
use crate::rules::causes::{rank, Candidate};
use crate::rules::finding::{Finding, Severity};
use crate::rules::rule::{Context, Marks, Rule, Seen, Watch};
use crate::rules::{concurrent_mode_failure, promotion_failure};

pub(crate) const ID: &str = "incremental_cms";
pub(crate) const WATCHES: &[Watch] = &[Watch::MarkedPause];

/// The options that turn the mode on.
const OPTIONS: [&str; 2] = ["-XX:+CMSIncrementalMode", "-Xincgc"];

#[derive(Default)]
struct IncrementalCms {
    /// The collections that printed a duty cycle, the highest cycles as evidence.
    tracker: RuleTracker,
    /// The lowest and highest duty cycle printed, %.
    range: Option<(u8, u8)>,
}

pub(crate) fn start() -> Box<dyn Rule> {
    Box::<IncrementalCms>::default()
}

impl Rule for IncrementalCms {
    fn counts(&self) -> Marks {
        Marks::DUTY_CYCLE
    }

    fn pause(&mut self, seen: &Seen<'_, GcPause>) {
        let Some(cycle) = seen.item.icms_duty_cycle else {
            return;
        };
        self.range = Some(match self.range {
            Some((low, high)) => (low.min(cycle), high.max(cycle)),
            None => (cycle, cycle),
        });
        // A cycle of 100 % means the concurrent work ran all the time it was allowed: the
        // mode held nothing back, and the highest cycles show when CMS fell behind.
        self.tracker.hit(u64::from(cycle), seen.keep, || {
            seen.evidence(
                seen.item.described(),
                format!("icms_dc={cycle}: CMS may work {cycle} % of the time between young collections"),
                0,
            )
        });
    }

    fn matched(&self, _ctx: &Context<'_>) -> u64 {
        self.tracker.count
    }

    fn finding(&self, ctx: &Context<'_>) -> Option<Finding> {
        let option = OPTIONS.into_iter().find(|o| ctx.flags.has(o));
        let title = match (self.range, option) {
            (Some((low, high)), _) => format!(
                "CMS runs in incremental mode (deprecated in JDK 8, removed in JDK 9): {} collections printed a duty cycle (icms_dc) of {low} to {high} %",
                self.tracker.count
            ),
            (None, Some(option)) => format!(
                "CMS runs in incremental mode (deprecated in JDK 8, removed in JDK 9): the JVM runs with {option}"
            ),
            (None, None) => return None,
        };
        let failures =
            ctx.matched(concurrent_mode_failure::ID) + ctx.matched(promotion_failure::ID);
        let severity = if failures > 0 {
            Severity::Warning
        } else {
            Severity::Info
        };
        let mut f = Finding::tracked(ID, &self.tracker, severity, title);
        f.excess_total_ms = 0.0;
        f.confidence = if self.range.is_some() {
            "high: the collections print the duty cycle only in incremental mode"
        } else {
            "high: the JVM's options name the mode"
        };
        let weight = u32::try_from(failures).unwrap_or(u32::MAX);
        (f.causes, f.fixes) = rank(
            vec![Candidate::new("the incremental mode runs CMS's concurrent work in slices between young collections (the duty cycle), so an old generation's collection takes longer and a concurrent mode failure comes sooner")
                .fix("drop -XX:+CMSIncrementalMode (and -Xincgc, -XX:+CMSIncrementalPacing): the mode was meant for one or two CPUs, and JDK 9 refuses it")
                .weigh_if(failures > 0, weight, || {
                    format!("{failures} concurrent mode or promotion failures")
                })],
            ctx.flags,
        );
        f.fixes.push("start CMS's cycles in time without it (-XX:CMSInitiatingOccupancyFraction=<N> -XX:+UseCMSInitiatingOccupancyOnly), or move to G1");
        Some(f)
    }
}
