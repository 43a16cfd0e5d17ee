//! Recordings into records: every chunk of every part of a recording read in order, its
//! events joined into [`Item`]s by the [`Assembler`], each item fed to a [`RecordSink`] (the
//! analysis) as the [`Record`] a GC log line of the same event would give.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use pauselab_pause::input::escape_control;
use pauselab_pause::record::{
    Cpu, CpuLoad, GcCycle, GcPause, HeapChange, Safepoint, Stall, StallKind,
};
use pauselab_pause::{Record, RecordSink, Stamp};
use serde::Serialize;

use crate::assemble::{Assembler, Extras, Item};
use crate::event::{Event, EventData};
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
/// archive of chunk files is one recording), and returns what each adds. Chunks are read
/// on as many threads as the machine has cores.
pub fn read_recordings(
    paths: &[String],
    sink: &mut impl RecordSink,
) -> Result<Vec<RecordingExtras>, Error> {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    read_recordings_with(paths, sink, threads)
}

/// [`read_recordings`] with chunks read on at most `threads` threads (at least one). What
/// `sink` is fed is the same whatever the number.
pub fn read_recordings_with(
    paths: &[String],
    sink: &mut impl RecordSink,
    threads: usize,
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
                        None,
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
            let mut failed = None;
            let mut cut_off = false;
            rec.each_chunk(threads, |number, chunk| {
                let chunk = match chunk {
                    Ok(chunk) => chunk,
                    // A recording cut off while the JVM wrote it (or a repository's chunk
                    // still being written): the complete chunks before it stand.
                    Err(Error::Malformed {
                        file,
                        chunk,
                        problem: Malformed::Truncated | Malformed::Header,
                        ..
                    }) if chunks_before + chunk > 1 && last_part => {
                        // The warning names the input; the part only when it is another
                        // file (a repository's chunk file, a zip's member).
                        let part = if *file == *name {
                            String::new()
                        } else {
                            format!("{file}: ")
                        };
                        sink.warn(
                            name,
                            None,
                            format!("{part}chunk {chunk} is cut off (the JVM was still writing it, or the file was truncated): analysed the {} complete chunk(s) before it", chunks_before + chunk - 1),
                        );
                        cut_off = true;
                        return ControlFlow::Break(());
                    }
                    Err(e) => {
                        failed = Some(e);
                        return ControlFlow::Break(());
                    }
                };
                if !chunk.limits_hit.is_empty() {
                    sink.warn(
                        name,
                        None,
                        format!(
                            "chunk {}: over the size limit of its {}: some names may be missing",
                            chunks_before + number,
                            chunk.limits_hit.join(" and ")
                        ),
                    );
                }
                feed.origin_ns.get_or_insert(chunk.start_epoch_ns);
                feed.names.collections(&chunk.events);
                for item in assembler.chunk(chunk) {
                    feed.item(sink, item);
                }
                feed.names.chunk_fed();
                ControlFlow::Continue(())
            });
            if let Some(e) = failed {
                return Err(e);
            }
            if cut_off {
                break 'parts;
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

/// The thread of a recorded allocation stall whose event names none (a thread the
/// recording's pools do not hold).
const STALL_THREAD: &str = "thread not recorded";

/// Turns items into records, with uptimes from the JVM start (or the recording's start
/// when the recording does not say when the JVM started).
#[derive(Default)]
struct Feed {
    origin_ns: Option<i64>,
    ordinal: u64,
    /// The safepoint the pauses fed since the last safepoint ran in (`Some(None)`: in none
    /// recorded): they wait for it together, and any others are closed first.
    open_pauses_in: Option<Option<u64>>,
    names: LogNames,
}

/// Collections known by GC id kept from one chunk for the next, the oldest forgotten: a
/// pause is fed in the chunk of its collection's `jdk.GarbageCollection` event, or the
/// next. All of a chunk's are kept while its pauses are fed (a JDK 11 recording may hold
/// thousands of collections in one chunk).
const MAX_COLLECTIONS_NAMED: usize = 1024;

/// Forgets the oldest collections of `by_gc_id` beyond [`MAX_COLLECTIONS_NAMED`].
fn forget_oldest<V>(by_gc_id: &mut BTreeMap<u64, V>) {
    while by_gc_id.len() > MAX_COLLECTIONS_NAMED {
        by_gc_id.pop_first();
    }
}

/// The kind of a G1 young collection, which G1's log adds to its pause's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum G1Young {
    Normal,
    ConcurrentStart,
    PrepareMixed,
    Mixed,
}

impl G1Young {
    /// From `jdk.G1GarbageCollection`'s `type`. JDK 17 and later record the log's kinds
    /// (`Normal`, `Concurrent Start`, `Prepare Mixed`, `Mixed`). JDK 11 records `Initial
    /// Mark` where its log says `Concurrent Start`, `During Mark` for a young collection
    /// during marking or the remembered sets' rebuild, which its log calls `Normal`, and
    /// no `Prepare Mixed`: that collection is `Normal` there, and
    /// [`LogNames::collections`] tells it by the `Mixed` one after it.
    fn from_jfr(kind: &str) -> Option<G1Young> {
        Some(match kind {
            "Normal" | "During Mark" => G1Young::Normal,
            "Concurrent Start" | "Initial Mark" => G1Young::ConcurrentStart,
            "Prepare Mixed" => G1Young::PrepareMixed,
            "Mixed" => G1Young::Mixed,
            _ => return None,
        })
    }

    /// The log's name of the collection's pause.
    fn pause_name(self) -> &'static str {
        match self {
            G1Young::Normal => "Pause Young (Normal)",
            G1Young::ConcurrentStart => "Pause Young (Concurrent Start)",
            G1Young::PrepareMixed => "Pause Young (Prepare Mixed)",
            G1Young::Mixed => "Pause Young (Mixed)",
        }
    }
}

/// Names a recorded pause as the GC log of the same JVM names it (`Pause Young` where the
/// recording says `G1New`), from the pause's own name and its collection's
/// (`jdk.GarbageCollection`, `jdk.G1GarbageCollection`).
#[derive(Default)]
struct LogNames {
    /// Collector name of each recent collection, by GC id (`ZGC Minor`, `ZGC Major`).
    collections: BTreeMap<u64, String>,
    /// Kind of each recent G1 young collection, by GC id.
    g1_young: BTreeMap<u64, G1Young>,
    /// The last G1 young collection noted: a `Normal` one right before a `Mixed` one is
    /// the log's `Prepare Mixed` (G1 enters its mixed phase through that collection only).
    last_g1_young: Option<(u64, G1Young)>,
    /// Generational ZGC's major collection being fed, and how many of its pauses came
    /// since its `Pause Mark Start (Major)` (`None` before it): its young generation's
    /// mark end and relocate start come first (`Y: `), then the old generation's (`O: `).
    major: Option<(u64, Option<u8>)>,
}

impl LogNames {
    /// Notes the collections of a chunk, before its pauses are fed. A `Prepare Mixed`
    /// collection is told by the next one, so it is named right when that one is in the
    /// same chunk; the last of a chunk followed by a `Mixed` one in the next chunk has
    /// been fed as `Normal`.
    fn collections(&mut self, events: &[Event]) {
        for ev in events {
            match &ev.data {
                EventData::GarbageCollection {
                    gc_id,
                    name: Some(name),
                    ..
                } => {
                    self.collections.insert(*gc_id, name.clone());
                }
                EventData::G1GarbageCollection {
                    gc_id,
                    young_kind: Some(kind),
                } => {
                    let Some(kind) = G1Young::from_jfr(kind) else {
                        continue;
                    };
                    if let (G1Young::Mixed, Some((before, G1Young::Normal))) =
                        (kind, self.last_g1_young)
                    {
                        self.g1_young.insert(before, G1Young::PrepareMixed);
                    }
                    self.last_g1_young = Some((*gc_id, kind));
                    self.g1_young.insert(*gc_id, kind);
                }
                _ => {}
            }
        }
    }

    /// After a chunk's pauses were fed: what the next chunk may still ask.
    fn chunk_fed(&mut self) {
        forget_oldest(&mut self.collections);
        forget_oldest(&mut self.g1_young);
    }

    /// The log's name of a pause the recording names `name` in collection `gc_id`.
    fn of(&mut self, gc_id: u64, name: String) -> String {
        // The one pause of a young or full collection, which JFR calls `GC Pause` (the
        // assembler then names it after its collection). G1 logs the kind of a young
        // collection too (`Pause Young (Normal)`, `(Concurrent Start)`, `(Mixed)`).
        if let ("G1New", Some(kind)) = (name.as_str(), self.g1_young.get(&gc_id)) {
            return kind.pause_name().to_string();
        }
        let whole = match name.as_str() {
            "G1New" | "ParallelScavenge" | "DefNew" | "ParNew" => Some("Pause Young"),
            "G1Full" | "ParallelOld" | "SerialOld" | "PSMarkSweep" => Some("Pause Full"),
            _ => None,
        };
        if let Some(whole) = whole {
            return whole.to_string();
        }
        // Generational ZGC prefixes the generation: `y: ` in a minor collection, `Y: ` and
        // `O: ` in a major one.
        let generation = match self.collections.get(&gc_id).map(String::as_str) {
            Some("ZGC Minor") => "y",
            Some("ZGC Major") => self.major_generation(gc_id, &name),
            _ => return name,
        };
        format!("{generation}: {name}")
    }

    /// `Y` or `O` for a pause of major collection `gc_id`: after `Pause Mark Start
    /// (Major)`, the young generation's mark end and relocate start, then the old's.
    fn major_generation(&mut self, gc_id: u64, name: &str) -> &'static str {
        let since_start = match self.major {
            _ if name == "Pause Mark Start (Major)" => Some(0),
            Some((id, Some(n))) if id == gc_id => Some(n.saturating_add(1)),
            _ => None,
        };
        self.major = Some((gc_id, since_start));
        if since_start.is_some_and(|n| n >= 3) {
            "O"
        } else {
            "Y"
        }
    }
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
                // Parallel's young collection and the full one after it share one stop.
                let same_stop = self.open_pauses_in == Some(p.in_safepoint);
                if self.open_pauses_in.is_some() && (!same_stop || p.in_safepoint.is_none()) {
                    sink.close_pauses();
                }
                self.open_pauses_in = Some(p.in_safepoint);
                let name = self.names.of(p.gc_id, p.name);
                let mut failures = p.failures;
                // CMS's concurrent mode failure is the full collection's; G1 records its
                // marking aborted by a full collection under the same event and the
                // cycle's GC id, which is no CMS failure.
                failures.concurrent_mode &= pauselab_pause::PauseType::is_full(&name);
                let pause = GcPause {
                    gc_id: Some(p.gc_id),
                    start: Stamp::default(),
                    duration_ns: p.duration_ns,
                    name: name.into(),
                    cause: p.cause.map(Into::into),
                    cpu: p.cpu_ns.map(|(user_ns, sys_ns, real_ns)| Cpu {
                        user_ns,
                        sys_ns,
                        real_ns,
                    }),
                    // The heap comes from jdk.GCHeapSummary (Item::Heap).
                    heap: None,
                    young: None,
                    failures,
                    upgraded_to_full: false,
                    // jdk.GCConfiguration names the collector.
                    collector: None,
                    generations: None,
                    icms_duty_cycle: None,
                };
                sink.record(self.stamp(end), Record::Pause(pause), n);
            }
            Item::Safepoint(s) => {
                let end = s.end_epoch_ns();
                if self
                    .open_pauses_in
                    .take()
                    .is_some_and(|open| open != Some(s.id))
                {
                    sink.close_pauses();
                }
                let sp = Safepoint {
                    start: Stamp::default(),
                    total_ns: s.total_ns,
                    ttsp_ns: s.ttsp_ns,
                    operation: s.operation.map(Into::into),
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
                thread,
            } => {
                let stall = Stall {
                    kind: StallKind::Allocation,
                    thread: thread.unwrap_or_else(|| STALL_THREAD.to_string()),
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
        // The whole build, as the same JVM's unified log states it (`Version: 21.0.8+9-LTS`).
        .and_then(|(_, rest)| rest.split([')', ' ']).next())
        .filter(|v| v.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .unwrap_or(jvm_version)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::path::Path;
    use std::process::Command;

    /// Allocates for a second, keeping some, with a `System.gc()` now and then: young and
    /// full collections (minor and major ones on generational ZGC).
    const WORKLOAD: &str = "public class Alloc { public static void main(String[] a) {
        long end = System.nanoTime() + 1_000_000_000L; long n = 0;
        java.util.List<byte[]> keep = new java.util.ArrayList<>();
        while (System.nanoTime() < end) { byte[] b = new byte[4096];
            if (++n % 50 == 0) keep.add(b); if (keep.size() > 20000) keep.clear();
            if (n % 100000 == 0) System.gc(); } } }";

    /// The pause names a recording feeds, by GC id.
    #[derive(Default)]
    struct PauseNames(BTreeMap<u64, BTreeSet<String>>);

    impl RecordSink for PauseNames {
        fn begin_input(&mut self, _: &str) {}
        fn record(&mut self, _: Stamp, record: Record, _: u64) {
            if let Record::Pause(GcPause {
                gc_id: Some(id),
                name,
                ..
            }) = record
            {
                self.0.entry(id).or_default().insert(name.into_owned());
            }
        }
        fn jvm_flags(&mut self, _: &str) {}
        fn close_pauses(&mut self) {}
        fn warn(&mut self, _: &str, _: Option<u64>, _: String) {}
        fn end_input(&mut self, _: u64) {}
    }

    /// The pause names of a unified GC log's lines `GC(7) Pause Young (Normal) (G1
    /// Evacuation Pause) 24M->3M(256M) 3.2ms` for the given GC ids, as the log's analysis
    /// names them (the cause after the name dropped).
    fn log_names(log: &str, gc_ids: &BTreeSet<u64>) -> BTreeSet<String> {
        let mut names = BTreeSet::new();
        for line in log.lines().filter(|l| l.ends_with("ms")) {
            let Some((_, rest)) = line.split_once("] GC(") else {
                continue;
            };
            let Some((id, rest)) = rest.split_once(") ") else {
                continue;
            };
            let Ok(id) = id.parse::<u64>() else { continue };
            let Some((mut name, _duration)) = rest.rsplit_once(' ') else {
                continue;
            };
            let bare = name
                .get(3..)
                .filter(|_| name.as_bytes().get(1) == Some(&b':'));
            if !bare.unwrap_or(name).starts_with("Pause ") || !gc_ids.contains(&id) {
                continue;
            }
            if let Some((before_heap, heap)) = name.rsplit_once(' ') {
                if heap.contains("->") {
                    name = before_heap
                        .rsplit_once(" (")
                        .map_or(before_heap, |(n, _)| n);
                }
            }
            names.insert(name.to_string());
        }
        names
    }

    /// Records the workload on `jdk` with `collector` (options separated by spaces), with a
    /// GC log: the pause names of the recording and of the log.
    fn recorded_and_logged(
        classes: &Path,
        jdk: &str,
        collector: &str,
    ) -> (BTreeSet<String>, BTreeSet<String>) {
        let dir = tempfile::tempdir().unwrap();
        let (jfr, log) = (dir.path().join("rec.jfr"), dir.path().join("gc.log"));
        let status = Command::new(Path::new(jdk).join("bin/java"))
            .args(["-Xmx256m", "-XX:TieredStopAtLevel=1"])
            .args(collector.split(' '))
            .arg(format!(
                "-XX:StartFlightRecording:filename={},settings=profile",
                jfr.display()
            ))
            .arg(format!("-Xlog:gc*:file={}", log.display()))
            .arg("-cp")
            .arg(classes)
            .arg("Alloc")
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "{jdk} {collector}");
        let mut sink = PauseNames::default();
        read_recordings(&[jfr.display().to_string()], &mut sink).unwrap();
        let gc_ids = sink.0.keys().copied().collect();
        let recorded = sink.0.into_values().flatten().collect();
        let logged = log_names(&std::fs::read_to_string(&log).unwrap(), &gc_ids);
        (recorded, logged)
    }

    /// A recording's pauses carry the names the GC log of the same JVM gives them, for
    /// every collector of JDK 17 and 25; G1 with `System.gc()` starting a concurrent cycle
    /// has every kind of young collection (`Concurrent Start`, `Prepare Mixed`, `Mixed`).
    #[test]
    fn recorded_pauses_are_named_as_the_gc_log_names_them() {
        const JDK17: &str = "/usr/lib/jvm/java-17-openjdk-amd64";
        const JDK25: &str = "/usr/lib/jvm/temurin-25-jdk-amd64";
        let runs = [
            (JDK17, "-XX:+UseG1GC"),
            (JDK17, "-XX:+UseParallelGC"),
            (JDK17, "-XX:+UseSerialGC"),
            (JDK17, "-XX:+UseZGC"),
            (JDK25, "-XX:+UseG1GC"),
            (JDK25, "-XX:+UseParallelGC"),
            (JDK25, "-XX:+UseSerialGC"),
            (JDK25, "-XX:+UseZGC"),
            (JDK17, "-XX:+UseG1GC -XX:+ExplicitGCInvokesConcurrent"),
            (JDK25, "-XX:+UseG1GC -XX:+ExplicitGCInvokesConcurrent"),
        ];
        let runs: Vec<_> = runs
            .into_iter()
            .filter(|(jdk, _)| Path::new(jdk).join("bin/java").exists())
            .collect();
        let Some((javac_jdk, _)) = runs.first() else {
            return;
        };
        let classes = tempfile::tempdir().unwrap();
        let source = classes.path().join("Alloc.java");
        std::fs::write(&source, WORKLOAD).unwrap();
        let javac = Command::new(Path::new(javac_jdk).join("bin/javac"))
            .args(["--release", "17", "-d"])
            .args([classes.path(), &source])
            .status()
            .unwrap();
        assert!(javac.success());
        // Two at a time: each JVM is short, and most of a second is its start.
        for pair in runs.chunks(2) {
            let names: Vec<_> = std::thread::scope(|s| {
                let threads: Vec<_> = pair
                    .iter()
                    .map(|(jdk, gc)| s.spawn(|| recorded_and_logged(classes.path(), jdk, gc)))
                    .collect();
                threads.into_iter().map(|t| t.join().unwrap()).collect()
            });
            for ((jdk, gc), (recorded, logged)) in pair.iter().zip(names) {
                assert!(recorded.len() >= 2, "{jdk} {gc}: {recorded:?}");
                assert_eq!(recorded, logged, "{jdk} {gc}");
            }
        }
    }

    /// JDK 11's kinds (no JDK 11 runs here): `Initial Mark` and `During Mark` read as its
    /// log names them, and the `Normal` collection right before a `Mixed` one is the
    /// log's `Prepare Mixed`.
    #[test]
    fn jdk11_young_kinds_are_named_as_its_log_names_them() {
        let g1 = |gc_id, kind: &str| Event {
            start_epoch_ns: gc_id as i64,
            duration_ns: 1,
            data: EventData::G1GarbageCollection {
                gc_id,
                young_kind: Some(kind.to_string()),
            },
        };
        let kinds = [
            "Normal",
            "Initial Mark",
            "During Mark",
            "Normal",
            "Mixed",
            "Mixed",
        ];
        let events: Vec<_> = (1..).zip(kinds).map(|(id, k)| g1(id, k)).collect();
        let mut names = LogNames::default();
        names.collections(&events);
        let named: Vec<_> = (1..=6)
            .map(|id| names.of(id, "G1New".to_string()))
            .collect();
        assert_eq!(
            named,
            [
                "Pause Young (Normal)",
                "Pause Young (Concurrent Start)",
                "Pause Young (Normal)",
                "Pause Young (Prepare Mixed)",
                "Pause Young (Mixed)",
                "Pause Young (Mixed)",
            ]
        );
    }

    /// JDK 11 writes a recording in one chunk by default: thousands of collections, all
    /// noted before their pauses are fed. Each keeps its kind until the chunk is fed.
    #[test]
    fn every_collection_of_a_chunk_is_named_however_many_it_holds() {
        let kinds = ["Normal", "Initial Mark", "During Mark", "Mixed"];
        let events: Vec<_> = (1..=3000u64)
            .map(|gc_id| Event {
                start_epoch_ns: gc_id as i64,
                duration_ns: 1,
                data: EventData::G1GarbageCollection {
                    gc_id,
                    young_kind: Some(kinds[(gc_id % 4) as usize].to_string()),
                },
            })
            .collect();
        let mut names = LogNames::default();
        names.collections(&events);
        assert_eq!(
            names.of(1, "G1New".to_string()),
            "Pause Young (Concurrent Start)"
        );
        assert_eq!(names.of(3, "G1New".to_string()), "Pause Young (Mixed)");
        assert_eq!(names.of(2999, "G1New".to_string()), "Pause Young (Mixed)");
        // Once the chunk is fed, the next chunk may still ask for the latest ones.
        names.chunk_fed();
        assert_eq!(names.of(2999, "G1New".to_string()), "Pause Young (Mixed)");
        assert_eq!(names.of(1, "G1New".to_string()), "Pause Young");
    }

    #[test]
    fn versions_read_like_gc_logs_state_them() {
        assert_eq!(
            jdk_version("OpenJDK 64-Bit Server VM (17.0.9+9-Debian-1deb12u1) for linux-amd64 JRE"),
            "17.0.9+9-Debian-1deb12u1"
        );
        assert_eq!(
            jdk_version("OpenJDK 64-Bit Server VM (25+36-LTS) for linux-amd64 JRE (25+36-LTS)"),
            "25+36-LTS"
        );
        assert_eq!(jdk_version("something else"), "something else");
    }
}
