//! Which inputs were written by the same JVM. Logs of different JVMs are never merged into
//! one analysis: their pauses, heap sizes and collectors do not add up.
//!
//! Each file's first lines are read once to learn what they say about their JVM: the JDK
//! version, the collector, the start time (wall-clock minus uptime decorations), the pid
//! decoration, and whether the file holds the JVM's start-up lines (unified logging prints
//! `Version:` once, when the JVM starts; rotated files continue without it).

use pauselab_pause::civil::format_epoch_ms;
use pauselab_pause::Collector;

use crate::input::{self, Input};
use crate::lines::LineReader;
use crate::parse::{parse_line, Format, Record};
use crate::Error;

/// How many lines of a file are read to learn its JVM.
const PROBE_LINES: u64 = 2000;
/// Start times closer than this are the same JVM (decorations are rounded, clocks step).
const START_TOLERANCE_MS: i64 = 2000;

#[derive(Debug, Clone, Default, PartialEq)]
struct Identity {
    version: Option<String>,
    collector: Option<String>,
    start_ms: Option<i64>,
    pid: Option<u64>,
    /// The file holds a unified `Version:` or `Using <collector>` line: the start of a JVM
    /// run.
    starts_jvm: bool,
}

impl Identity {
    /// Why `self` (a file) cannot belong to the JVM of `group`, if it cannot.
    fn conflict(&self, group: &Identity) -> Option<String> {
        let differ = |a: &Option<String>, b: &Option<String>, what: &str| match (a, b) {
            (Some(a), Some(b)) if a != b => Some(format!("{what} {b} vs {a}")),
            _ => None,
        };
        differ(&self.version, &group.version, "JDK")
            .or_else(|| differ(&self.collector, &group.collector, "collector"))
            .or_else(|| match (self.pid, group.pid) {
                (Some(a), Some(b)) if a != b => Some(format!("pid {b} vs {a}")),
                _ => None,
            })
            .or_else(|| match (self.start_ms, group.start_ms) {
                (Some(a), Some(b)) if (a - b).abs() > START_TOLERANCE_MS => Some(format!(
                    "JVM start {} vs {}",
                    format_epoch_ms(b),
                    format_epoch_ms(a)
                )),
                (Some(_), Some(_)) => None,
                _ if self.starts_jvm && group.starts_jvm => {
                    Some("each file starts a JVM run (its `Version:` or `Using` line)".to_string())
                }
                _ => None,
            })
    }

    fn absorb(&mut self, other: &Identity) {
        if self.version.is_none() {
            self.version.clone_from(&other.version);
        }
        if self.collector.is_none() {
            self.collector.clone_from(&other.collector);
        }
        self.start_ms = self.start_ms.or(other.start_ms);
        self.pid = self.pid.or(other.pid);
        self.starts_jvm |= other.starts_jvm;
    }
}

/// The inputs of one JVM, in reading order.
pub struct JvmInputs {
    pub inputs: Vec<Input>,
    /// Why these inputs are not an earlier group's JVM (None for the first group).
    pub separated_because: Option<String>,
}

/// Groups the inputs by the JVM that wrote them. A file joins the latest group it does not
/// contradict, so a rotated set (oldest first) stays one group.
pub fn group_by_jvm(inputs: Vec<Input>) -> Result<Vec<JvmInputs>, Error> {
    let groups = group_indices(&inputs)?;
    let mut slots: Vec<Option<Input>> = inputs.into_iter().map(Some).collect();
    Ok(groups
        .into_iter()
        .map(|(indices, separated_because)| JvmInputs {
            inputs: indices.iter().filter_map(|&i| slots[i].take()).collect(),
            separated_because,
        })
        .collect())
}

/// Refuses inputs of several JVMs, for outputs that hold one JVM's pauses.
pub fn ensure_one_jvm(inputs: &[Input]) -> Result<(), Error> {
    let groups = group_indices(inputs)?;
    if groups.len() > 1 {
        let names: Vec<String> = groups
            .iter()
            .map(|(indices, _)| {
                indices
                    .iter()
                    .map(|&i| inputs[i].name.as_str())
                    .collect::<Vec<_>>()
                    .join(" + ")
            })
            .collect();
        return Err(Error::SeveralJvms {
            count: groups.len(),
            why: groups[1].1.clone().unwrap_or_default(),
            groups: names.join("; "),
        });
    }
    Ok(())
}

type Group = (Vec<usize>, Option<String>);

fn group_indices(inputs: &[Input]) -> Result<Vec<Group>, Error> {
    let mut groups: Vec<(Identity, Group)> = Vec::new();
    for (index, input) in inputs.iter().enumerate() {
        let id = probe(input)?;
        let mut reason = None;
        let mut joined = false;
        for (group_id, (indices, _)) in groups.iter_mut().rev() {
            match id.conflict(group_id) {
                None => {
                    group_id.absorb(&id);
                    indices.push(index);
                    joined = true;
                    break;
                }
                Some(why) => {
                    reason.get_or_insert(why);
                }
            }
        }
        if !joined {
            groups.push((id, (vec![index], reason)));
        }
    }
    Ok(groups.into_iter().map(|(_, g)| g).collect())
}

/// What the first lines of a regular file say about its JVM. Anything else (standard input,
/// a pipe, process substitution, a FIFO, a device) can be read only once, by the analysis:
/// it is not probed and joins the JVM before it. A file that cannot be read is not probed
/// either: the analysis names it.
fn probe(input: &Input) -> Result<Identity, Error> {
    let mut id = Identity::default();
    let regular = input
        .path
        .as_deref()
        .and_then(|path| std::fs::metadata(path).ok())
        .is_some_and(|meta| meta.is_file());
    if !regular {
        return Ok(id);
    }
    let Ok(reader) = input::open(input) else {
        return Ok(id);
    };
    let mut lines = LineReader::new(reader);
    while let Ok(Some(line)) = lines.next_line() {
        if line.number > PROBE_LINES {
            break;
        }
        let Ok(parsed) = parse_line(line.bytes) else {
            continue;
        };
        let stamp = parsed.stamp;
        if let (Some(wall), Some(up), None) = (stamp.wall_ms, stamp.uptime_ns, id.start_ms) {
            id.start_ms = Some(wall - (up / 1_000_000) as i64);
        }
        id.pid = id.pid.or(stamp.pid);
        match parsed.record {
            Record::Version(v) => {
                id.starts_jvm |= parsed.format == Format::Unified;
                id.version.get_or_insert(v);
            }
            Record::Collector(c) => {
                // `[gc] Using Shenandoah` is also printed once, when the JVM starts: a log
                // of `-Xlog:gc` has no `Version:` line.
                id.starts_jvm |= parsed.format == Format::Unified;
                id.collector.get_or_insert(c);
            }
            Record::Flags(flags) => {
                if let Some(c) = Collector::from_flags(&flags) {
                    id.collector.get_or_insert(c.name().to_string());
                }
            }
            _ => {}
        }
        if id.version.is_some() && id.collector.is_some() && id.start_ms.is_some() {
            break;
        }
    }
    Ok(id)
}

/// The inputs by the JVM that wrote them; `one_jvm`: the caller's output holds one JVM's
/// pauses (an interval log, an events file, a recording's report), so several are refused.
pub fn jvm_groups(inputs: Vec<Input>, one_jvm: bool) -> Result<Vec<JvmInputs>, Error> {
    if !one_jvm {
        return group_by_jvm(inputs);
    }
    ensure_one_jvm(&inputs)?;
    Ok(vec![JvmInputs {
        inputs,
        separated_because: None,
    }])
}

/// What reading one JVM's inputs left to report, when inputs of `jvms` JVMs were given.
#[derive(Debug)]
pub enum JvmRead {
    /// Every input was read.
    Complete,
    /// Some inputs were read; these could not be (named after the report).
    Partly(Vec<Error>),
    /// None of this JVM's inputs could be read; the other JVMs are still reported.
    Unread(Error),
}

impl JvmRead {
    /// Sorts the result of reading one JVM's inputs ([`crate::analyze_inputs_with`]): an
    /// error is returned only when it leaves nothing to report.
    pub fn of(read: Result<(), Error>, jvms: usize) -> Result<JvmRead, Error> {
        match read {
            Ok(()) => Ok(JvmRead::Complete),
            Err(Error::InputsFailed { failed, read }) if read > 0 => Ok(JvmRead::Partly(failed)),
            Err(error) if jvms > 1 => Ok(JvmRead::Unread(error)),
            Err(error) => Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn missing(name: &str) -> Error {
        Error::NothingToAnalyze(name.into())
    }

    #[test]
    fn a_jvm_read_error_stops_only_when_nothing_is_left_to_report() {
        assert!(matches!(JvmRead::of(Ok(()), 1), Ok(JvmRead::Complete)));
        let partly = Error::InputsFailed {
            failed: vec![missing("b.log")],
            read: 1,
        };
        match JvmRead::of(Err(partly), 1) {
            Ok(JvmRead::Partly(failed)) => assert_eq!(failed.len(), 1),
            other => panic!("{other:?}"),
        }
        let none_read = || Error::InputsFailed {
            failed: vec![missing("a.log"), missing("b.log")],
            read: 0,
        };
        assert!(matches!(
            JvmRead::of(Err(none_read()), 1),
            Err(Error::InputsFailed { .. })
        ));
        assert!(matches!(
            JvmRead::of(Err(none_read()), 2),
            Ok(JvmRead::Unread(_))
        ));
        assert!(matches!(
            JvmRead::of(Err(missing("a.log")), 3),
            Ok(JvmRead::Unread(_))
        ));
    }

    #[test]
    fn conflicts() {
        let g1 = Identity {
            version: Some("17.0.9".into()),
            collector: Some("G1".into()),
            ..Identity::default()
        };
        let rotated = Identity::default();
        assert_eq!(rotated.conflict(&g1), None);
        let zgc = Identity {
            collector: Some("ZGC".into()),
            ..Identity::default()
        };
        assert!(zgc.conflict(&g1).unwrap().contains("collector"));
        let a = Identity {
            start_ms: Some(1_000_000),
            starts_jvm: true,
            ..Identity::default()
        };
        let b = Identity {
            start_ms: Some(1_000_500),
            starts_jvm: true,
            ..Identity::default()
        };
        assert_eq!(a.conflict(&b), None, "same start, within tolerance");
        let restarted = Identity {
            starts_jvm: true,
            ..Identity::default()
        };
        assert!(restarted.conflict(&restarted).is_some());
    }
}
