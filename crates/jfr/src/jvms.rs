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
    /// From the first chunk of `path`'s first part; nothing when it cannot be read (the
    /// reading of the recording itself then says why).
    fn of(path: &str) -> Identity {
        let mut identity = Identity::default();
        let Ok(limit) = max_decompressed() else {
            return identity;
        };
        let Some(first) = parts_of(path)
            .ok()
            .and_then(|parts| parts.into_iter().next())
        else {
            return identity;
        };
        let Ok(mut recording) = open_part(&first, limit) else {
            return identity;
        };
        recording.each_chunk(1, |_, chunk| {
            for event in chunk.map(|c| c.events).unwrap_or_default() {
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
        identity
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

/// The version in `jvmVersion`'s first parentheses (`OpenJDK 64-Bit Server VM (17.0.9+9)
/// for linux-amd64 JRE (17.0.9+9), built on ...`), else all of it.
fn short_version(version: &str) -> &str {
    version
        .split_once('(')
        .and_then(|(_, rest)| rest.split_once(')'))
        .map_or(version, |(inside, _)| inside)
}

/// Groups `paths` by the JVM that recorded them: a recording joins the latest group it
/// does not contradict. One recording is one group, and is not read for it.
pub fn group_recordings_by_jvm(paths: Vec<String>) -> Vec<RecordingsOfJvm> {
    if paths.len() < 2 {
        return vec![RecordingsOfJvm {
            paths,
            separated_because: None,
        }];
    }
    let mut groups: Vec<(Identity, RecordingsOfJvm)> = Vec::new();
    for path in paths {
        let identity = Identity::of(&path);
        let conflicts: Vec<Option<String>> = groups
            .iter()
            .map(|(group, _)| identity.conflict(group))
            .collect();
        match conflicts.iter().rposition(Option::is_none) {
            Some(at) => {
                let (group, recordings) = &mut groups[at];
                group.absorb(identity);
                recordings.paths.push(path);
            }
            None => {
                // Why it is not the JVM of the group before it.
                let separated_because = conflicts.last().cloned().flatten();
                groups.push((
                    identity,
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
