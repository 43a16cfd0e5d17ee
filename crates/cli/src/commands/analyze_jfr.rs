//! `pauselab analyze recording.jfr`: a JFR recording's GC pauses and safepoints fed to the
//! same analysis as GC logs, plus what only a recording has (allocation stalls, heap, CPU).

use std::fmt::Write as _;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use pauselab_gclog::parse::{
    Cpu, GcCycle, GcPause, HeapChange, Record, Safepoint, Stall, StallKind, Stamp,
};
use pauselab_gclog::{Analyzer, Report};
use pauselab_jfr::{Assembler, Extras, Item, Malformed, Recording};
use serde::Serialize;

/// What a recording adds to the report, per recording (`jfr` in `--json`).
#[derive(Serialize)]
pub struct RecordingExtras {
    pub file: String,
    #[serde(flatten)]
    pub extras: Extras,
}

/// The `--json` object for recordings: the GC-log report's fields plus `jfr`.
#[derive(Serialize)]
pub struct JfrReport<'r> {
    #[serde(flatten)]
    pub report: &'r Report,
    pub jfr: &'r [RecordingExtras],
}

/// The inputs when they are JFR recordings (by their `FLR` magic or a `.jfr` name), `None`
/// when none is; recordings mixed with GC logs are refused: a GC log of the same JVM would
/// count every pause twice, and of another JVM it belongs in its own report.
pub fn recordings(inputs: &[String]) -> anyhow::Result<Option<Vec<String>>> {
    let (jfr, logs): (Vec<&String>, Vec<&String>) = inputs.iter().partition(|n| is_recording(n));
    match (jfr.first(), logs.first()) {
        (None, _) => Ok(None),
        (Some(_), None) => Ok(Some(jfr.into_iter().cloned().collect())),
        (Some(rec), Some(log)) => anyhow::bail!(
            "{rec} is a JFR recording and {log} a GC log: analyze them separately (a recording and the GC log of the same JVM hold the same pauses)"
        ),
    }
}

/// A JFR recording by its `FLR` magic or a `.jfr` name (`-`, stdin, never is).
pub fn is_recording(name: &str) -> bool {
    if name == "-" {
        return false;
    }
    // Only a regular file is sniffed: reading from a pipe or a FIFO would consume its
    // first bytes (or wait for a writer) before the analysis reads it.
    let regular = std::fs::metadata(name).is_ok_and(|m| m.is_file());
    let mut magic = [0u8; 4];
    let sniffed = regular
        && File::open(name)
            .and_then(|mut f| f.read_exact(&mut magic))
            .is_ok()
        && Recording::<File>::sniff(&magic);
    sniffed || name.ends_with(".jfr")
}

/// Feeds every recording to `analyzer`, one input each.
pub fn analyze(
    paths: &[String],
    analyzer: &mut Analyzer<'_>,
) -> anyhow::Result<Vec<RecordingExtras>> {
    let mut all = Vec::new();
    for name in paths {
        let mut rec = Recording::open(Path::new(name))?;
        analyzer.begin_file(name);
        let mut feed = Feed::default();
        let mut assembler = Assembler::new();
        loop {
            let chunk = match rec.next_chunk() {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                // A recording cut off while the JVM wrote it: its complete chunks stand.
                Err(pauselab_jfr::Error::Malformed {
                    chunk,
                    problem: Malformed::Truncated,
                    ..
                }) if chunk > 1 => {
                    analyzer.warn(
                        name,
                        None,
                        format!("chunk {chunk} is cut off (the JVM was still writing the recording, or it was truncated): analysed the {} complete chunk(s) before it", chunk - 1),
                    );
                    break;
                }
                Err(e) => return Err(e.into()),
            };
            if !chunk.limits_hit.is_empty() {
                analyzer.warn(
                    name,
                    None,
                    format!(
                        "chunk {}: over the size limit of its {}: some names may be missing",
                        rec.chunks_read(),
                        chunk.limits_hit.join(" and ")
                    ),
                );
            }
            feed.origin_ns.get_or_insert(chunk.start_epoch_ns);
            for item in assembler.chunk(chunk) {
                feed.item(analyzer, item);
            }
        }
        let (rest, extras) = assembler.finish();
        for item in rest {
            feed.item(analyzer, item);
        }
        analyzer.end_file(rec.len());
        if !extras.missing_events.is_empty() {
            analyzer.warn(
                name,
                None,
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

/// Turns items into analyzer records, with uptimes from the JVM start (or the recording's
/// start when the recording does not say when the JVM started).
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

    fn item(&mut self, analyzer: &mut Analyzer<'_>, item: Item) {
        self.ordinal += 1;
        let n = self.ordinal;
        match item {
            Item::Jvm {
                version,
                start_epoch_ms,
            } => {
                if start_epoch_ms > 0 {
                    self.origin_ns = Some(start_epoch_ms.saturating_mul(1_000_000));
                }
                if let Some(v) = version {
                    analyzer.record(Stamp::default(), Record::Version(jdk_version(&v)), n);
                }
            }
            Item::Collector(c) => analyzer.record(Stamp::default(), Record::Collector(c), n),
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
                analyzer.record(self.stamp(end), Record::Pause(pause), n);
            }
            Item::Safepoint(s) => {
                let end = s.end_epoch_ns();
                if let Some((start, _)) = self.open_pause.take() {
                    if start < s.start_epoch_ns || start > end {
                        analyzer.close_pauses();
                    }
                }
                let sp = Safepoint {
                    start: Stamp::default(),
                    total_ns: s.total_ns,
                    ttsp_ns: s.ttsp_ns,
                    operation: s.operation,
                };
                analyzer.record(self.stamp(end), Record::Safepoint(sp), n);
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
                analyzer.record(self.stamp(h.at_epoch_ns), Record::Cycle(cycle), n);
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
                analyzer.record(self.stamp(end_epoch_ns), Record::Stall(stall), n);
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

/// The text report's JFR section.
pub fn render(extras: &[RecordingExtras]) -> String {
    let mut o = String::new();
    for r in extras {
        let e = &r.extras;
        let _ = writeln!(
            o,
            "Recording  {}: {} chunk(s), {} events read",
            r.file, e.chunks, e.events
        );
        match &e.allocation_stalls {
            Some(s) => {
                let pages: Vec<String> = s
                    .by_page_type
                    .iter()
                    .map(|p| format!("{} {}", p.page_type, p.count))
                    .collect();
                let _ = writeln!(
                    o,
                    "Stalls     {} ZGC allocation stalls, total {:.1} ms, p99 {:.1} ms, max {:.1} ms ({})",
                    s.summary.count,
                    s.summary.total_ms,
                    s.summary.p99_ms,
                    s.summary.max_ms,
                    pages.join(", ")
                );
            }
            None => {
                let _ = writeln!(o, "Stalls     no ZGC allocation stalls recorded");
            }
        }
        if let Some(h) = &e.heap {
            let _ = writeln!(
                o,
                "Heap       {} collections: before up to {:.0} MB, after up to {:.0} MB (mean {:.0} MB), committed up to {:.0} MB",
                h.collections, h.max_before_mb, h.max_after_mb, h.mean_after_mb, h.max_committed_mb
            );
        }
        if let Some(c) = &e.cpu_load {
            let _ = writeln!(
                o,
                "CPU load   machine mean {:.0}% (max {:.0}%), JVM user {:.0}% system {:.0}% ({} samples)",
                c.machine_total_mean_pct,
                c.machine_total_max_pct,
                c.jvm_user_mean_pct,
                c.jvm_system_mean_pct,
                c.samples
            );
        }
    }
    o
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
