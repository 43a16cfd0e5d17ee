//! A finding's candidate causes, ranked by the evidence the input holds for each, and the
//! fixes that follow from them, leaving out what the JVM already does.

use std::collections::HashSet;

use serde::Serialize;

/// One candidate cause of a finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cause {
    /// The cause, in words.
    pub cause: &'static str,
    /// What in the input speaks for (or against) this cause; null when nothing does and it
    /// is listed only as possible.
    pub evidence: Option<String>,
}

/// The options the JVM ran with, as its log or recording states them (`CommandLine flags:`,
/// `jvm_args:`, JFR `jdk.JVMInformation`); empty when the input does not say.
#[derive(Debug, Clone, Default)]
pub struct JvmFlags {
    options: Vec<String>,
    /// The lines added (the first 64): a file of many runs of JVMs states their lines
    /// again at each start, and each option of one would be looked for among those kept.
    lines: HashSet<String>,
}

impl JvmFlags {
    /// Adds the options of one line (later lines repeat or extend earlier ones).
    pub fn add(&mut self, options: &str) {
        if self.lines.contains(options) {
            return;
        }
        self.add_each(options);
        if self.lines.len() < 64 {
            self.lines.insert(options.to_string());
        }
    }

    /// Adds each option of `options` that is not kept yet, up to 500.
    fn add_each(&mut self, options: &str) {
        for option in options.split_whitespace() {
            if self.options.len() < 500 && !self.options.iter().any(|o| o == option) {
                self.options.push(option.to_string());
            }
        }
    }

    /// Whether the JVM has `option` (`-Xlog:async` also in its `-Xlog:async:...` forms).
    pub fn has(&self, option: &str) -> bool {
        self.options
            .iter()
            .any(|o| o == option || o.strip_prefix(option).is_some_and(|r| r.starts_with(':')))
    }

    /// Whether the input stated the JVM's options at all.
    pub fn known(&self) -> bool {
        !self.options.is_empty()
    }
}

/// A cause, the fix it calls for and how strongly the input points at it.
pub(crate) struct Candidate {
    pub cause: &'static str,
    pub fix: Option<&'static str>,
    /// The JVM option the fix sets: a JVM that has it is not told to set it again.
    pub option: Option<&'static str>,
    /// 0: nothing in the input speaks for it; higher ranks first.
    pub weight: u32,
    pub evidence: Option<String>,
}

impl Candidate {
    pub fn new(cause: &'static str) -> Self {
        Candidate {
            cause,
            fix: None,
            option: None,
            weight: 0,
            evidence: None,
        }
    }

    pub fn fix(mut self, fix: &'static str) -> Self {
        self.fix = Some(fix);
        self
    }

    /// The fix sets `option`.
    pub fn option(mut self, option: &'static str) -> Self {
        self.option = Some(option);
        self
    }

    /// Evidence for this cause, of `weight`.
    pub fn weigh(mut self, weight: u32, evidence: impl Into<String>) -> Self {
        self.weight = weight;
        self.evidence = Some(evidence.into());
        self
    }

    /// Evidence of `weight` when `holds`.
    pub fn weigh_if(self, holds: bool, weight: u32, evidence: impl FnOnce() -> String) -> Self {
        if holds {
            self.weigh(weight, evidence())
        } else {
            self
        }
    }
}

/// The causes, strongest evidence first (equal evidence keeps the listed order), and the
/// fixes in the same order, without those whose option the JVM already has: such a cause
/// says so in its evidence and ranks last.
pub(crate) fn rank(
    mut candidates: Vec<Candidate>,
    flags: &JvmFlags,
) -> (Vec<Cause>, Vec<&'static str>) {
    for c in &mut candidates {
        if let Some(option) = c.option.filter(|o| flags.has(o)) {
            c.weight = 0;
            c.fix = None;
            let already = format!("the JVM already runs with {option}");
            c.evidence = Some(match c.evidence.take() {
                Some(e) => format!("{e}; {already}"),
                None => already,
            });
        }
    }
    candidates.sort_by_key(|c| std::cmp::Reverse(c.weight));
    let mut fixes: Vec<&'static str> = Vec::new();
    for fix in candidates.iter().filter_map(|c| c.fix) {
        if !fixes.contains(&fix) {
            fixes.push(fix);
        }
    }
    let causes = candidates
        .into_iter()
        .map(|c| Cause {
            cause: c.cause,
            evidence: c.evidence,
        })
        .collect();
    (causes, fixes)
}

/// Causes the input holds no evidence for or against, in the listed order.
pub(crate) fn listed(causes: &[&'static str]) -> Vec<Cause> {
    causes
        .iter()
        .map(|&cause| Cause {
            cause,
            evidence: None,
        })
        .collect()
}

#[cfg(test)]
mod flag_tests {
    use super::JvmFlags;
    use proptest::prelude::*;

    proptest! {
        /// A line stated again adds nothing: the options kept are those of every line
        /// added one option at a time.
        #[test]
        fn a_line_stated_again_keeps_what_each_option_would(
            lines in prop::collection::vec(
                prop::sample::select(vec!["-Xmx1g -XX:+UseG1GC", "-Xmx1g", "-XX:+UseG1GC -Xmx2g", " ", ""]),
                0..12,
            ),
        ) {
            let mut flags = JvmFlags::default();
            let mut each = JvmFlags::default();
            for line in &lines {
                flags.add(line);
                each.add_each(line);
            }
            prop_assert_eq!(flags.options, each.options);
        }
    }
}
