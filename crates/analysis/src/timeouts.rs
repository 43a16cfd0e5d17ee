//! Safepoint timeout reports (`-XX:+SafepointTimeout`): the threads that held a safepoint
//! up, joined to the safepoint line that follows the report in the same file (HotSpot
//! prints the report while it waits, the safepoint's line when it ends). Memory is bounded:
//! at most [`MAX_THREADS_PER_REPORT`] threads per report and [`MAX_CULPRITS`] names in all.

use pauselab_pause::civil::format_epoch_ms;
use pauselab_pause::record::{Stamp, TimeoutLine};
use serde::Serialize;

use crate::evidence::{Evidence, RuleTracker};

const MAX_THREADS_PER_REPORT: usize = 32;
const MAX_CULPRITS: usize = 100;

/// A thread HotSpot named as not having reached a safepoint in time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Culprit {
    /// The thread's name.
    pub thread: String,
    /// `java.lang.Thread.State` when printed, else the OS-level state of the thread line.
    pub state: Option<String>,
    /// How many timeout reports named it.
    pub timeouts: u64,
}

/// The safepoint timeout reports of the analysed inputs.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TimeoutSection {
    /// Reports read (one per safepoint that took longer than `-XX:SafepointTimeoutDelay`).
    pub count: u64,
    /// Reports followed by their safepoint's line in the same file (time to safepoint known).
    pub matched: u64,
    /// The threads named, most often first.
    pub threads: Vec<Culprit>,
}

/// One report being read or waiting for its safepoint line.
struct Report {
    threads: Vec<(String, Option<String>)>,
    left_out: usize,
    file: String,
    line: u64,
    stamp: Stamp,
}

impl Report {
    /// `worker-1 (RUNNABLE), worker-2 (RUNNABLE)`.
    fn describe(&self) -> String {
        let mut names: Vec<String> = self
            .threads
            .iter()
            .map(|(name, state)| match state {
                Some(s) => format!("{name} ({s})"),
                None => name.clone(),
            })
            .collect();
        if self.left_out > 0 {
            names.push(format!("{} more", self.left_out));
        }
        if names.is_empty() {
            "no thread listed".to_string()
        } else {
            names.join(", ")
        }
    }
}

#[derive(Default)]
pub(crate) struct Timeouts {
    open: Option<Report>,
    /// The previous record was a thread of the open report: a Java state line is its.
    after_thread: bool,
    /// Read completely, waiting for the safepoint line that follows it.
    closed: Option<Report>,
    section: TimeoutSection,
    /// Reports no safepoint line followed: they count as long time to safepoint when the
    /// inputs have no safepoint lines at all (a stdout capture).
    unmatched: RuleTracker,
}

impl Timeouts {
    /// A line of a report.
    pub(crate) fn line(
        &mut self,
        line: TimeoutLine,
        stamp: Stamp,
        file: &str,
        number: u64,
        keep: usize,
    ) {
        let after_thread = std::mem::take(&mut self.after_thread);
        match line {
            TimeoutLine::Start => {
                self.close(keep);
                self.abandon(keep);
                self.open = Some(Report {
                    threads: Vec::new(),
                    left_out: 0,
                    file: file.to_string(),
                    line: number,
                    stamp,
                });
            }
            TimeoutLine::Thread { name, os_state } => {
                if let Some(report) = &mut self.open {
                    if report.threads.len() < MAX_THREADS_PER_REPORT {
                        report.threads.push((name, os_state));
                        self.after_thread = true;
                    } else {
                        report.left_out += 1;
                    }
                }
            }
            TimeoutLine::JavaState(state) => {
                if let (true, Some(report)) = (after_thread, &mut self.open) {
                    if let Some(last) = report.threads.last_mut() {
                        last.1 = Some(state);
                    }
                }
            }
            TimeoutLine::End => self.close(keep),
        }
    }

    /// Any other record: a Java state line after it is not a report's.
    pub(crate) fn other_record(&mut self) {
        self.after_thread = false;
    }

    /// The threads that held up the safepoint whose line this is, when a report came just
    /// before it.
    #[inline]
    pub(crate) fn take_for_safepoint(&mut self, keep: usize) -> Option<String> {
        // Asked at every safepoint line; most follow no report.
        if self.open.is_none() && self.closed.is_none() {
            return None;
        }
        self.take_for_safepoint_any(keep)
    }

    /// [`Timeouts::take_for_safepoint`], with or without a report read.
    fn take_for_safepoint_any(&mut self, keep: usize) -> Option<String> {
        self.close(keep);
        let report = self.closed.take()?;
        self.section.matched += 1;
        Some(report.describe())
    }

    /// The input ends: a report not followed by its safepoint line stays unmatched.
    pub(crate) fn end_file(&mut self, keep: usize) {
        self.close(keep);
        self.abandon(keep);
        self.after_thread = false;
    }

    /// Ends the report being read (at its last line, or cut off): its threads are counted.
    fn close(&mut self, keep: usize) {
        let Some(report) = self.open.take() else {
            return;
        };
        self.abandon(keep);
        self.section.count += 1;
        for (name, state) in &report.threads {
            let threads = &mut self.section.threads;
            if let Some(c) = threads.iter_mut().find(|c| &c.thread == name) {
                c.timeouts += 1;
                if state.is_some() {
                    c.state.clone_from(state);
                }
            } else if threads.len() < MAX_CULPRITS {
                threads.push(Culprit {
                    thread: name.clone(),
                    state: state.clone(),
                    timeouts: 1,
                });
            }
        }
        self.closed = Some(report);
    }

    /// The closed report gets no safepoint line.
    fn abandon(&mut self, keep: usize) {
        let Some(report) = self.closed.take() else {
            return;
        };
        self.unmatched.hit(0, keep, || Evidence {
            file: report.file.clone(),
            line: report.line,
            uptime_s: report.stamp.uptime_ns.map(|u| u as f64 / 1e9),
            wall: report.stamp.wall_ms.map(format_epoch_ms),
            what: "SafepointTimeout".to_string(),
            detail: format!(
                "not at the safepoint after -XX:SafepointTimeoutDelay: {}",
                report.describe()
            ),
            excess_ms: 0.0,
        });
    }

    /// The section, and the reports no safepoint line followed as rule hits.
    pub(crate) fn finish(mut self, keep: usize) -> (TimeoutSection, RuleTracker) {
        self.end_file(keep);
        self.section
            .threads
            .sort_by(|a, b| b.timeouts.cmp(&a.timeouts).then(a.thread.cmp(&b.thread)));
        (self.section, self.unmatched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn line() -> impl Strategy<Value = Option<TimeoutLine>> {
        prop_oneof![
            Just(None),
            Just(Some(TimeoutLine::Start)),
            Just(Some(TimeoutLine::End)),
            prop::sample::select(vec!["main", "worker-1"]).prop_map(|name| {
                Some(TimeoutLine::Thread {
                    name: name.to_string(),
                    os_state: None,
                })
            }),
            Just(Some(TimeoutLine::JavaState("RUNNABLE".to_string()))),
        ]
    }

    proptest! {
        /// A safepoint line after no report takes the short way: any sequence of report
        /// lines and safepoint lines (`None`) gives what the general way gives.
        #[test]
        fn safepoints_without_a_report_take_nothing_as_the_general_way_does(
            lines in prop::collection::vec(line(), 0..30),
        ) {
            let (mut fast, mut general) = (Timeouts::default(), Timeouts::default());
            for (number, line) in lines.into_iter().enumerate() {
                match line {
                    Some(line) => {
                        fast.line(line.clone(), Stamp::default(), "gc.log", number as u64, 5);
                        general.line(line, Stamp::default(), "gc.log", number as u64, 5);
                    }
                    None => prop_assert_eq!(
                        fast.take_for_safepoint(5),
                        general.take_for_safepoint_any(5)
                    ),
                }
            }
            let (fast, general) = (fast.finish(5), general.finish(5));
            prop_assert_eq!(
                serde_json::to_string(&fast.0).unwrap(),
                serde_json::to_string(&general.0).unwrap()
            );
            prop_assert_eq!(fast.1.count, general.1.count);
        }
    }
}
