//! Which recordings one JVM wrote. Recordings of different JVMs (one per pod, or a
//! service's before and after a restart) are never analysed as one: their pauses would be
//! laid on one timeline, and their shares, rates and heaps would not add up.
//!
//! A recording's first chunk tells its JVM: `jdk.JVMInformation` (the JVM's start time, to
//! the millisecond, and its version) and `jdk.GCConfiguration` (its collector). Every
//! chunk of a JVM's recordings repeats the same values.

use std::ops::ControlFlow;

use pauselab_pause::civil::format_epoch_ms;
use pauselab_pause::Collector;

use crate::find::{open_part, parts_of};
use crate::{max_decompressed, EventData};

/// The recordings of one JVM, in the order given.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordingsOfJvm {
    /// The recordings (files, repository directories, archives).
    pub paths: Vec<String>,
    /// Why these are not an earlier group's JVM (None for the first group).
    pub separated_because: Option<String>,
}

/// What a recording's first chunk says of its JVM; a value it does not say contradicts
/// nothing.
#[derive(Debug, Clone, Default, PartialEq)]
struct Identity {
    start_epoch_ms: Option<i64>,
    version: Option<String>,
    collector: Option<Collector>,
}

impl Identity {
    /// From the first chunk of `path`'s first part; `None` when it cannot be read (the
    /// reading of the recording itself then says why).
    fn of(path: &str) -> Option<Identity> {
        let mut identity = Identity::default();
        let limit = max_decompressed().ok()?;
        let first = parts_of(path).ok()?.into_iter().next()?;
        let mut recording = open_part(&first, limit).ok()?;
        let mut readable = false;
        recording.each_chunk(1, |_, chunk| {
            let Ok(chunk) = chunk else {
                return ControlFlow::Break(());
            };
            readable = true;
            for event in chunk.events {
                match event.data {
                    EventData::JvmInformation {
                        version,
                        start_epoch_ms,
                        ..
                    } if identity.start_epoch_ms.is_none() => {
                        identity.start_epoch_ms = Some(start_epoch_ms);
                        identity.version = version;
                    }
                    EventData::GcConfiguration { young, old } if identity.collector.is_none() => {
                        identity.collector =
                            Collector::from_jfr_configuration(young.as_deref(), old.as_deref());
                    }
                    _ => {}
                }
            }
            ControlFlow::Break(())
        });
        readable.then_some(identity)
    }

    /// Why a recording of `self` cannot be one of `group`'s JVM, if it cannot.
    fn conflict(&self, group: &Identity) -> Option<String> {
        if let (Some(a), Some(b)) = (&self.version, &group.version) {
            if a != b {
                return Some(format!("JDK {} vs {}", short_version(b), short_version(a)));
            }
        }
        if let (Some(a), Some(b)) = (self.collector, group.collector) {
            if a != b {
                return Some(format!("collector {b} vs {a}"));
            }
        }
        match (self.start_epoch_ms, group.start_epoch_ms) {
            // The JVM records its own start time: the same in each of its chunks.
            (Some(a), Some(b)) if a != b => Some(format!(
                "JVM start {} vs {}",
                format_epoch_ms(b),
                format_epoch_ms(a)
            )),
            _ => None,
        }
    }

    fn absorb(&mut self, other: Identity) {
        self.start_epoch_ms = self.start_epoch_ms.or(other.start_epoch_ms);
        self.version = self.version.take().or(other.version);
        self.collector = self.collector.or(other.collector);
    }
}

/// Whether a recording may join a group.
enum Fit {
    /// Nothing of it contradicts the group's JVM.
    Joins,
    /// It is another JVM, and why.
    Differs(String),
    /// The group is an unreadable recording's, which no other joins.
    Unreadable,
}

/// The version in `jvmVersion`'s first parentheses (`OpenJDK 64-Bit Server VM (17.0.9+9)
/// for linux-amd64 JRE (17.0.9+9), built on ...`), else all of it.
fn short_version(version: &str) -> &str {
    version
        .split_once('(')
        .and_then(|(_, rest)| rest.split_once(')'))
        .map_or(version, |(inside, _)| inside)
}

/// Groups `paths` by the JVM that recorded them: a recording joins the latest group it
/// does not contradict. A recording whose first chunk cannot be read is a group of its
/// own, which no other joins (its reading then fails, and the others are reported). One
/// recording is one group, and is not read for it.
pub fn group_recordings_by_jvm(paths: Vec<String>) -> Vec<RecordingsOfJvm> {
    if paths.len() < 2 {
        return vec![RecordingsOfJvm {
            paths,
            separated_because: None,
        }];
    }
    // Each group's identity; `None` for an unreadable recording's.
    let mut groups: Vec<(Option<Identity>, RecordingsOfJvm)> = Vec::new();
    for path in paths {
        let Some(identity) = Identity::of(&path) else {
            groups.push((
                None,
                RecordingsOfJvm {
                    paths: vec![path],
                    separated_because: Some("its first chunk cannot be read".to_string()),
                },
            ));
            continue;
        };
        let fits: Vec<Fit> = groups
            .iter()
            .map(|(group, _)| match group {
                Some(group) => identity.conflict(group).map_or(Fit::Joins, Fit::Differs),
                None => Fit::Unreadable,
            })
            .collect();
        match fits.iter().rposition(|fit| matches!(fit, Fit::Joins)) {
            Some(at) => {
                let (group, recordings) = &mut groups[at];
                if let Some(group) = group {
                    group.absorb(identity);
                }
                recordings.paths.push(path);
            }
            None => {
                // Why it is not the JVM of the last readable group before it (none for
                // the first group).
                let separated_because = (!fits.is_empty()).then(|| {
                    fits.into_iter()
                        .rev()
                        .find_map(|fit| match fit {
                            Fit::Differs(why) => Some(why),
                            _ => None,
                        })
                        .unwrap_or_else(|| "the recordings before cannot be read".to_string())
                });
                groups.push((
                    Some(identity),
                    RecordingsOfJvm {
                        paths: vec![path],
                        separated_because,
                    },
                ));
            }
        }
    }
    groups.into_iter().map(|(_, group)| group).collect()
}
