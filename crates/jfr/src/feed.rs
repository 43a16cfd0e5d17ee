//! Recordings into records: every chunk of every part of a recording read in order, its
//! events joined into [`Item`]s by the [`Assembler`], each item fed to a [`RecordSink`] (the
//! analysis) as the [`Record`] a GC log line of the same event would give.

use pauselab_pause::input::escape_control;
use pauselab_pause::record::{
    Cpu, CpuLoad, GcCycle, GcPause, HeapChange, Safepoint, Stall, StallKind,
};
use pauselab_pause::{Record, RecordSink, Stamp};
use serde::Serialize;

use crate::assemble::{Assembler, Extras, Item};
use crate::find::{max_decompressed, open_part, parts_of, Part};
use crate::{Error, Malformed};

/// What a recording adds to what its records tell (`jfr` in `analyze --json`), per
/// recording.
#[derive(Debug, Serialize)]
pub struct RecordingExtras {
    /// The recording as it was named.
    pub file: String,
    /// Its allocation stalls, heap, CPU load and memory.
    #[serde(flatten)]
    pub extras: Extras,
}

/// Feeds every recording in `paths` to `sink`, one input each (a repository directory or an
/// archive of chunk files is one recording), and returns what each adds.
pub fn read_recordings(
    paths: &[String],
    sink: &mut impl RecordSink,
) -> Result<Vec<RecordingExtras>, Error> {
    let limit = max_decompressed()?;
    let mut all = Vec::new();
    for name in paths {
        let parts = parts_of(name)?;
        let mut skipped = 0;
        sink.begin_input(name);
        let mut feed = Feed::default();
        let mut assembler = Assembler::new();
        let mut bytes = 0;
        let mut chunks_before = 0;
        'parts: for (index, part) in parts.iter().enumerate() {
            let last_part = index + 1 == parts.len();
            let mut rec = match (open_part(part, limit), part) {
                (Ok(rec), _) => rec,
                // Another program's file named like a chunk: the JVM's chunks stand.
                (Err(e @ Error::NotARecording(_)), Part::RepositoryFile(path)) => {
                    skipped += 1;
                    if skipped == parts.len() {
                        return Err(e);
                    }
                    sink.warn(
                        name,
                        format!(
                            "{}: not a JFR recording (no FLR header), skipped; the other chunk files are read",
                            escape_control(&path.display().to_string())
                        ),
                    );
                    continue;
                }
                (Err(e), _) => return Err(e),
            };
            bytes += rec.len();
            loop {
                let chunk = match rec.next_chunk() {
                    Ok(Some(chunk)) => chunk,
                    Ok(None) => break,
                    // A recording cut off while the JVM wrote it (or a repository's chunk
                    // still being written): the complete chunks before it stand.
                    Err(Error::Malformed {
                        file,
                        chunk,
                        problem: Malformed::Truncated | Malformed::Header,
                        ..
                    }) if chunks_before + chunk > 1 && last_part => {
                        sink.warn(
                            name,
                            format!("{file}: chunk {chunk} is cut off (the JVM was still writing it, or the file was truncated): analysed the {} complete chunk(s) before it", chunks_before + chunk - 1),
                        );
                        break 'parts;
                    }
                    Err(e) => return Err(e),
                };
                if !chunk.limits_hit.is_empty() {
                    sink.warn(
                        name,
                        format!(
                            "chunk {}: over the size limit of its {}: some names may be missing",
                            chunks_before + rec.chunks_read(),
                            chunk.limits_hit.join(" and ")
                        ),
                    );
                }
                feed.origin_ns.get_or_insert(chunk.start_epoch_ns);
                for item in assembler.chunk(chunk) {
                    feed.item(sink, item);
                }
            }
            chunks_before += rec.chunks_read();
        }
        let (rest, extras) = assembler.finish();
        for item in rest {
            feed.item(sink, item);
        }
        sink.end_input(bytes);
        if !extras.missing_events.is_empty() {
            sink.warn(
                name,
                format!(
                    "the recording has no {} events: record with settings=profile (or enable them, see docs/jfr.md)",
                    extras.missing_events.join(", ")
                ),
            );
        }
        all.push(RecordingExtras {
            file: name.clone(),
            extras,
        });
    }
    Ok(all)
}

/// The thread of a recorded allocation stall: the reader does not decode the event's
/// thread, so `allocation_stalls.by_thread` has this one entry for recordings.
const STALL_THREAD: &str = "thread not decoded";

/// Turns items into records, with uptimes from the JVM start (or the recording's start
/// when the recording does not say when the JVM started).
#[derive(Default)]
struct Feed {
    origin_ns: Option<i64>,
    ordinal: u64,
    /// The last pause fed, start and end: a safepoint not around it is not its safepoint.
    open_pause: Option<(i64, i64)>,
}

impl Feed {
    fn stamp(&self, epoch_ns: i64) -> Stamp {
        Stamp {
            uptime_ns: Some(epoch_ns.saturating_sub(self.origin_ns.unwrap_or(0)).max(0) as u64),
            wall_ms: Some(epoch_ns.div_euclid(1_000_000)),
            pid: None,
        }
    }

    fn item(&mut self, sink: &mut impl RecordSink, item: Item) {
        self.ordinal += 1;
        let n = self.ordinal;
        match item {
            Item::Jvm {
                version,
                arguments,
                start_epoch_ms,
            } => {
                if let Some(options) = arguments {
                    sink.jvm_flags(&options);
                }
                if start_epoch_ms > 0 {
                    self.origin_ns = Some(start_epoch_ms.saturating_mul(1_000_000));
                }
                if let Some(v) = version {
                    sink.record(Stamp::default(), Record::Version(jdk_version(&v)), n);
                }
            }
            Item::Collector(c) => sink.record(Stamp::default(), Record::Collector(c), n),
            Item::Pause(p) => {
                let end = p.start_epoch_ns.saturating_add_unsigned(p.duration_ns);
                self.open_pause = Some((p.start_epoch_ns, end));
                let pause = GcPause {
                    gc_id: Some(p.gc_id),
                    start: Stamp::default(),
                    duration_ns: p.duration_ns,
                    name: p.name,
                    cause: p.cause,
                    cpu: p.cpu_ns.map(|(user_ns, sys_ns, real_ns)| Cpu {
                        user_ns,
                        sys_ns,
                        real_ns,
                    }),
                    // The heap comes from jdk.GCHeapSummary (Item::Heap).
                    heap: None,
                    young: None,
                    failures: Default::default(),
                    upgraded_to_full: false,
                };
                sink.record(self.stamp(end), Record::Pause(pause), n);
            }
            Item::Safepoint(s) => {
                let end = s.end_epoch_ns();
                if let Some((start, _)) = self.open_pause.take() {
                    if start < s.start_epoch_ns || start > end {
                        sink.close_pauses();
                    }
                }
                let sp = Safepoint {
                    start: Stamp::default(),
                    total_ns: s.total_ns,
                    ttsp_ns: s.ttsp_ns,
                    operation: s.operation,
                };
                sink.record(self.stamp(end), Record::Safepoint(sp), n);
            }
            // Heap around a collection, for the report's heap chart and the memory section.
            Item::Heap(h) => {
                let cycle = GcCycle {
                    gc_id: h.gc_id,
                    name: format!("GC({})", h.gc_id),
                    cause: None,
                    heap: Some(HeapChange {
                        before: h.before,
                        after: h.after,
                        capacity: Some(h.committed),
                    }),
                    duration_ns: None,
                };
                sink.record(self.stamp(h.at_epoch_ns), Record::Cycle(cycle), n);
            }
            // Matched with the long pauses of its period: the `busy_cpu` finding.
            Item::CpuLoad {
                at_epoch_ns,
                machine,
                jvm,
            } => {
                let per_mille = |f: f64| (f.clamp(0.0, 1.0) * 1000.0).round() as u32;
                let load = CpuLoad {
                    machine_per_mille: per_mille(machine),
                    jvm_per_mille: per_mille(jvm),
                };
                sink.record(self.stamp(at_epoch_ns), Record::CpuLoad(load), n);
            }
            // Counted like a GC log's `Allocation Stall` line: `allocation_stalls`, its
            // finding and `--fail-on alloc_stall.*`.
            Item::AllocationStall {
                end_epoch_ns,
                duration_ns,
            } => {
                let stall = Stall {
                    kind: StallKind::Allocation,
                    thread: STALL_THREAD.to_string(),
                    duration_ns,
                };
                sink.record(self.stamp(end_epoch_ns), Record::Stall(stall), n);
            }
        }
    }
}

/// `17.0.9+9` from `OpenJDK 64-Bit Server VM (17.0.9+9-Debian-1) for linux-amd64 ...`,
/// the way GC logs state the version.
fn jdk_version(jvm_version: &str) -> String {
    jvm_version
        .split_once('(')
        .and_then(|(_, rest)| rest.split([')', '-', ' ']).next())
        .filter(|v| v.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .unwrap_or(jvm_version)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_like_gc_logs_state_them() {
        assert_eq!(
            jdk_version("OpenJDK 64-Bit Server VM (17.0.9+9-Debian-1deb12u1) for linux-amd64 JRE"),
            "17.0.9+9"
        );
        assert_eq!(
            jdk_version("OpenJDK 64-Bit Server VM (25+36-LTS) for linux-amd64 JRE (25+36-LTS)"),
            "25+36"
        );
        assert_eq!(jdk_version("something else"), "something else");
    }
}
