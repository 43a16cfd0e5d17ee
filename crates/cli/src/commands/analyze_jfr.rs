//! `pauselab analyze recording.jfr`: a JFR recording's GC pauses and safepoints fed to the
//! same analysis as GC logs, plus what only a recording has (allocation stalls, heap, CPU).

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use pauselab_gclog::{input, Analyzer, Report};
use pauselab_jfr::{Assembler, Extras, Item, Malformed, Recording, Spooled};
use pauselab_pause::input::escape_control;
use pauselab_pause::record::{
    Cpu, CpuLoad, GcCycle, GcPause, HeapChange, Record, Safepoint, Stall, StallKind, Stamp,
};
use pauselab_pause::units::ByteSize;
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

/// A JFR recording: a file by its `FLR` magic or a `.jfr` name, a compressed one
/// (`.jfr.gz`, `.jfr.zip`, a zip of `.jfr` files), or a JFR repository directory (the
/// chunk files a running JVM writes under `-XX:FlightRecorderOptions:repository=`, or
/// `/tmp/<date>_<pid>`). `-`, stdin, never is.
pub fn is_recording(name: &str) -> bool {
    if name == "-" {
        return false;
    }
    let path = Path::new(name);
    if path.is_dir() {
        // A repository of one JVM holds chunk files; the repository root, one directory
        // of them per JVM (refused with a message naming how many).
        return has_chunks(path)
            || std::fs::read_dir(path)
                .is_ok_and(|entries| entries.flatten().any(|e| has_chunks(&e.path())));
    }
    if name.ends_with(".jfr") || name.ends_with(".jfr.gz") || name.ends_with(".jfr.zip") {
        return true;
    }
    // Only a regular file is sniffed: reading from a pipe or a FIFO would consume its
    // first bytes (or wait for a writer) before the analysis reads it.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut magic = [0u8; 4];
    let head = File::open(path).and_then(|mut f| f.read_exact(&mut magic));
    if head.is_err() {
        return false;
    }
    if Recording::<File>::sniff(&magic) {
        return true;
    }
    // A gzip or zip file is a recording when what it holds starts like one.
    let packed = magic.starts_with(&[0x1f, 0x8b]) || magic == *b"PK\x03\x04";
    packed
        && input::expand(&[name.to_string()]).is_ok_and(|inputs| {
            inputs.iter().any(|one| {
                let mut head = [0u8; 4];
                input::open(one).is_ok_and(|mut r| r.read_exact(&mut head).is_ok())
                    && Recording::<File>::sniff(&head)
            })
        })
}

/// The most chunk files a repository directory may hold (a JVM rotates chunks at 12 MB or
/// every few minutes: days of recording).
const MAX_REPOSITORY_CHUNKS: usize = 100_000;

/// The most a compressed recording may decompress to, by default: the copy lands in
/// `$TMPDIR` (RAM where that is a tmpfs); a recording this large is better given as a file.
const DEFAULT_MAX_DECOMPRESSED: ByteSize = ByteSize(4 << 30);

/// The environment variable that sets another limit (docs/jfr.md), in the size syntax of
/// docs/units.md.
const MAX_DECOMPRESSED_ENV: &str = "PAUSELAB_MAX_DECOMPRESSED";

/// The most a compressed recording may decompress to: `$PAUSELAB_MAX_DECOMPRESSED`, else
/// [`DEFAULT_MAX_DECOMPRESSED`].
fn max_decompressed() -> anyhow::Result<ByteSize> {
    match std::env::var(MAX_DECOMPRESSED_ENV) {
        Ok(text) => {
            ByteSize::parse(&text).map_err(|e| anyhow::anyhow!("{MAX_DECOMPRESSED_ENV}: {e}"))
        }
        Err(std::env::VarError::NotPresent) => Ok(DEFAULT_MAX_DECOMPRESSED),
        Err(std::env::VarError::NotUnicode(_)) => {
            anyhow::bail!("{MAX_DECOMPRESSED_ENV}: not a size (see docs/units.md)")
        }
    }
}

/// Where one recording's chunks are: a file, or the members of an archive or a repository
/// directory, in the order they were written.
enum Part {
    /// A recording file, read in place.
    File(PathBuf),
    /// A chunk file of a repository directory, read in place; one that is no recording
    /// (another program's `*.jfr`) is skipped with a warning, as the JVM never wrote it.
    RepositoryFile(PathBuf),
    /// A recording inside gzip or zip, copied once into an unnamed temporary file: the
    /// reader seeks between a chunk's parts, which a decompressor cannot.
    Packed(input::Input),
}

/// The parts of the recording named `name`.
fn parts_of(name: &str) -> anyhow::Result<Vec<Part>> {
    let path = Path::new(name);
    if path.is_dir() {
        return repository_chunks(path);
    }
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        // A FIFO or a device: opening it could wait for a writer, and the reader seeks.
        anyhow::bail!("{name}: not a regular file; a recording is read with seeks, so save it to a file first");
    }
    let mut magic = [0u8; 4];
    let plain = File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|_| Recording::<File>::sniff(&magic));
    if plain || !path.exists() {
        // A missing file is reported by the reader, naming it.
        return Ok(vec![Part::File(path.to_path_buf())]);
    }
    Ok(input::expand(&[name.to_string()])?
        .into_iter()
        .map(Part::Packed)
        .collect())
}

/// The chunk files of a JFR repository directory, oldest first (their names are the times
/// they were started, `2026_11_26_10_18_59.jfr`).
fn repository_chunks(dir: &Path) -> anyhow::Result<Vec<Part>> {
    let read = |e: std::io::Error| anyhow::anyhow!("{}: {e}", dir.display());
    let mut chunks = Vec::new();
    let mut jvm_dirs = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read)? {
        let entry = entry.map_err(read)?;
        let path = entry.path();
        if path.is_dir() {
            if has_chunks(&path) {
                jvm_dirs.push(path);
            }
        } else if is_chunk_file(&path) {
            chunks.push(path);
        }
        if chunks.len() > MAX_REPOSITORY_CHUNKS {
            anyhow::bail!(
                "{}: more than {MAX_REPOSITORY_CHUNKS} chunk files; name the ones to analyze",
                dir.display()
            );
        }
    }
    if chunks.is_empty() {
        // The repository root: one directory per JVM.
        match jvm_dirs.len() {
            0 => anyhow::bail!(
                "{}: a directory without .jfr files: give a recording, or the repository directory of one JVM",
                dir.display()
            ),
            1 => return repository_chunks(&jvm_dirs[0]),
            n => anyhow::bail!(
                "{}: holds the JFR repositories of {n} JVMs, one directory each: name the one to analyze",
                dir.display()
            ),
        }
    }
    chunks.sort();
    Ok(chunks.into_iter().map(Part::RepositoryFile).collect())
}

/// Whether `dir` is a directory holding `.jfr` files.
fn has_chunks(dir: &Path) -> bool {
    dir.is_dir()
        && std::fs::read_dir(dir)
            .is_ok_and(|entries| entries.flatten().any(|e| is_chunk_file(&e.path())))
}

/// A regular file named `*.jfr` (a FIFO or a device of that name is left alone: opening it
/// could wait for a writer).
fn is_chunk_file(path: &Path) -> bool {
    path.extension().is_some_and(|x| x == "jfr")
        && std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// Reads one part: a file in place, a packed one through a temporary copy of at most
/// `limit` bytes, made chunk by chunk ([`pauselab_jfr::spool`]: the first 68 bytes that
/// are not a chunk header end the copy).
fn open_part(part: &Part, limit: ByteSize) -> anyhow::Result<Recording<BufReader<File>>> {
    match part {
        Part::File(path) | Part::RepositoryFile(path) => Ok(Recording::open(path)?),
        Part::Packed(one) => {
            let reader = input::open(one)?;
            let mut copy = tempfile::tempfile()
                .context("a temporary file for the decompressed recording (set TMPDIR to a directory with room)")?;
            let spooled = pauselab_jfr::spool(reader, &mut copy, limit.bytes())
                .with_context(|| format!("{}: decompressing the recording", one.name))?;
            if spooled == Spooled::OverLimit {
                anyhow::bail!(
                    "{}: decompresses to more than {limit}, the limit for a compressed recording ({MAX_DECOMPRESSED_ENV}); decompress it to a file and give that, or raise the limit",
                    one.name
                );
            }
            Ok(Recording::new(
                BufReader::with_capacity(256 << 10, copy),
                one.name.clone(),
            )?)
        }
    }
}

/// Feeds every recording to `analyzer`, one input each (a repository directory or an
/// archive of chunk files is one recording).
pub fn analyze(
    paths: &[String],
    analyzer: &mut Analyzer<'_>,
) -> anyhow::Result<Vec<RecordingExtras>> {
    let limit = max_decompressed()?;
    let mut all = Vec::new();
    for name in paths {
        let parts = parts_of(name)?;
        let mut skipped = 0;
        analyzer.begin_file(name);
        let mut feed = Feed::default();
        let mut assembler = Assembler::new();
        let mut bytes = 0;
        let mut chunks_before = 0;
        'parts: for (index, part) in parts.iter().enumerate() {
            let last_part = index + 1 == parts.len();
            let mut rec = match (open_part(part, limit), part) {
                (Ok(rec), _) => rec,
                // Another program's file named like a chunk: the JVM's chunks stand.
                (Err(e), Part::RepositoryFile(path))
                    if matches!(
                        e.downcast_ref::<pauselab_jfr::Error>(),
                        Some(pauselab_jfr::Error::NotARecording(_))
                    ) =>
                {
                    skipped += 1;
                    if skipped == parts.len() {
                        return Err(e);
                    }
                    analyzer.warn(
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
            loop {
                let chunk = match rec.next_chunk() {
                    Ok(Some(chunk)) => chunk,
                    Ok(None) => break,
                    // A recording cut off while the JVM wrote it (or a repository's chunk
                    // still being written): the complete chunks before it stand.
                    Err(pauselab_jfr::Error::Malformed {
                        file,
                        chunk,
                        problem: Malformed::Truncated | Malformed::Header,
                        ..
                    }) if chunks_before + chunk > 1 && last_part => {
                        analyzer.warn(
                            name,
                            None,
                            format!("{file}: chunk {chunk} is cut off (the JVM was still writing it, or the file was truncated): analysed the {} complete chunk(s) before it", chunks_before + chunk - 1),
                        );
                        break 'parts;
                    }
                    Err(e) => return Err(e.into()),
                };
                if !chunk.limits_hit.is_empty() {
                    analyzer.warn(
                        name,
                        None,
                        format!(
                            "chunk {}: over the size limit of its {}: some names may be missing",
                            chunks_before + rec.chunks_read(),
                            chunk.limits_hit.join(" and ")
                        ),
                    );
                }
                feed.origin_ns.get_or_insert(chunk.start_epoch_ns);
                for item in assembler.chunk(chunk) {
                    feed.item(analyzer, item);
                }
            }
            chunks_before += rec.chunks_read();
        }
        let (rest, extras) = assembler.finish();
        for item in rest {
            feed.item(analyzer, item);
        }
        analyzer.end_file(bytes);
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
                arguments,
                start_epoch_ms,
            } => {
                if let Some(options) = arguments {
                    analyzer.jvm_flags(&options);
                }
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
                analyzer.record(self.stamp(at_epoch_ns), Record::CpuLoad(load), n);
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
        if let Some(m) = &e.physical_memory {
            let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
            let _ = writeln!(
                o,
                "Memory     physical {:.1} GiB, at most {:.1} GiB in use (least free {:.1} GiB; {} samples)",
                gib(m.total_bytes),
                gib(m.max_used_bytes),
                gib(m.min_free_bytes),
                m.samples
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
