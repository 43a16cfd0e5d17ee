//! Selecting counters by exact name or glob (`*`, `?`), as `pauselab perf` and the
//! exporter take them.

use crate::format::{Counter, Snapshot};

/// A set of name patterns; empty selects everything.
#[derive(Debug, Clone, Default)]
pub struct CounterFilter {
    patterns: Vec<String>,
}

impl CounterFilter {
    pub fn new<I: IntoIterator<Item = S>, S: Into<String>>(patterns: I) -> CounterFilter {
        CounterFilter {
            patterns: patterns.into_iter().map(Into::into).collect(),
        }
    }

    /// True if `name` matches any pattern (or there are none).
    pub fn matches(&self, name: &str) -> bool {
        self.patterns.is_empty() || self.patterns.iter().any(|p| glob_match(p, name))
    }

    /// The counters of `snapshot` that match, with the prologue's six `sun.perfdata.*`
    /// counters (as `jcmd PID PerfCounter.print` lists them), sorted by name.
    pub fn select<'a>(&self, snapshot: &'a Snapshot) -> Vec<Counter<'a>> {
        let mut counters: Vec<Counter<'a>> = snapshot
            .counters()
            .chain(snapshot.prologue_counters())
            .filter(|c| self.matches(c.name))
            .collect();
        counters.sort_by(|a, b| a.name.cmp(b.name));
        counters
    }
}

/// Glob match: `*` any run of characters (dots included), `?` one character.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some(b'*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(&c) if c == b'?' || c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_region::{test_region, TestValue};

    #[test]
    fn select_sorts_the_matching_counters_with_the_prologues() {
        let snapshot = test_region(&[
            ("sun.rt.safepoints", TestValue::Long(3)),
            ("sun.gc.policy.name", TestValue::Str("G1")),
            ("java.cls.loadedClasses", TestValue::Long(900)),
        ]);
        let names = |filter: CounterFilter| -> Vec<String> {
            let selected = filter.select(&snapshot);
            selected.iter().map(|c| c.name.to_string()).collect()
        };
        assert_eq!(
            names(CounterFilter::new(["sun.*"])),
            [
                "sun.gc.policy.name",
                "sun.perfdata.majorVersion",
                "sun.perfdata.minorVersion",
                "sun.perfdata.overflow",
                "sun.perfdata.size",
                "sun.perfdata.timestamp",
                "sun.perfdata.used",
                "sun.rt.safepoints",
            ]
        );
        assert_eq!(names(CounterFilter::default()).len(), 9);
        assert!(names(CounterFilter::new(["nothing.*"])).is_empty());
    }

    #[test]
    fn globs() {
        assert!(glob_match("sun.gc.*", "sun.gc.collector.0.time"));
        assert!(glob_match("*.time", "sun.gc.collector.0.time"));
        assert!(glob_match(
            "sun.gc.collector.?.time",
            "sun.gc.collector.1.time"
        ));
        assert!(!glob_match(
            "sun.gc.collector.?.time",
            "sun.gc.collector.10.time"
        ));
        assert!(glob_match(
            "java.cls.loadedClasses",
            "java.cls.loadedClasses"
        ));
        assert!(!glob_match("java.cls", "java.cls.loadedClasses"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a*b*c", "aXXbYYc"));
        assert!(!glob_match("a*b*c", "aXXbYY"));
    }
}
