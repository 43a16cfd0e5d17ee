//! `analyze --events FILE.csv|FILE.jsonl`: one row per GC pause and per safepoint the
//! analysis counted, for spreadsheets and notebooks.
//!
//! The rows come from the analysis's sink ([`PauseSink`]), so they are exactly the pauses
//! and safepoints the report counts. They are held until the analysis ends: the collector,
//! which series of safepoints the report counts, and a recording's heap (its own events,
//! joined by GC id) are known only then.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::Context as _;
use pauselab_analysis::{HeapSample, PauseSink, Report};
use pauselab_pause::civil::format_epoch_ms;
use pauselab_pause::record::{GcPause, HeapChange};
use pauselab_pause::{PauseEvent, PauseType};
use serde::Serialize;

/// The file format, chosen by the file name's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventsFormat {
    /// RFC 4180 comma-separated values with a header row.
    Csv,
    /// One JSON object per line.
    JsonLines,
}

/// `--events FILE`: where, and in which format.
#[derive(Clone, Debug)]
pub struct EventsFile {
    pub path: PathBuf,
    pub format: EventsFormat,
}

/// clap's parser for `--events`: a usage error (exit 2) for any other extension.
pub fn parse_events_file(text: &str) -> Result<EventsFile, String> {
    let path = PathBuf::from(text);
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let format = match extension.as_deref() {
        Some("csv") => EventsFormat::Csv,
        Some("jsonl") => EventsFormat::JsonLines,
        _ => {
            return Err(
                "name the file FILE.csv or FILE.jsonl (the format follows the extension)".into(),
            )
        }
    };
    Ok(EventsFile { path, format })
}

/// One exported pause or safepoint.
#[derive(Serialize)]
struct EventRow {
    /// `gc_pause` or `safepoint`.
    kind: &'static str,
    /// Milliseconds since JVM start, when the source has it.
    start_uptime_ms: Option<f64>,
    /// UTC, when the source has a wall clock.
    start_wall: Option<String>,
    duration_ms: f64,
    /// The pause's name or the safepoint's VM operation, as the source gives it.
    name: String,
    /// `young`, `full`, `remark`, ... for a GC pause.
    pause_type: Option<&'static str>,
    cause: Option<String>,
    /// The JVM's collector (`G1`, `ZGC`, ...), the same in every row.
    collector: Option<String>,
    ttsp_ms: Option<f64>,
    gc_id: Option<u64>,
    heap_before_bytes: Option<u64>,
    heap_after_bytes: Option<u64>,
    heap_capacity_bytes: Option<u64>,
    source_file: Option<String>,
    /// 1-based line of a log.
    source_line: Option<u64>,
    /// For a JFR recording: the event's ordinal among the events the analysis reads from
    /// it (what findings' evidence cites), not a line.
    source_event_index: Option<u64>,
}

/// The CSV header: [`EventRow`]'s fields, in order (written even when there is no row).
const CSV_COLUMNS: [&str; 16] = [
    "kind",
    "start_uptime_ms",
    "start_wall",
    "duration_ms",
    "name",
    "pause_type",
    "cause",
    "collector",
    "ttsp_ms",
    "gc_id",
    "heap_before_bytes",
    "heap_after_bytes",
    "heap_capacity_bytes",
    "source_file",
    "source_line",
    "source_event_index",
];

impl EventRow {
    fn set_heap(&mut self, heap: Option<HeapChange>) {
        if let Some(heap) = heap {
            self.heap_before_bytes = Some(heap.before);
            self.heap_after_bytes = Some(heap.after);
            self.heap_capacity_bytes = heap.capacity;
        }
    }
}

/// Collects the rows while the analysis runs.
pub struct EventRows {
    /// The source numbers JFR events, not lines.
    recording: bool,
    rows: Vec<EventRow>,
    /// JDK 8 safepoint statistics rows: exported only when the report counts them (a log
    /// without stopped-time lines).
    statistics: Vec<EventRow>,
    /// Heap around each numbered collection: a recording's pauses get theirs from it.
    heap_by_gc_id: HashMap<u64, HeapChange>,
}

impl EventRows {
    pub fn new(recording: bool) -> EventRows {
        EventRows {
            recording,
            rows: Vec::new(),
            statistics: Vec::new(),
            heap_by_gc_id: HashMap::new(),
        }
    }

    fn row(&self, kind: &'static str, event: &PauseEvent) -> EventRow {
        // An event without uptime has start_ms 0 and its wall clock.
        let uptime =
            (event.start_ms > 0.0 || event.wall_start_ms.is_none()).then_some(event.start_ms);
        let (line, index) = match (&event.source, self.recording) {
            (Some(source), false) => (Some(source.line), None),
            (Some(source), true) => (None, Some(source.line)),
            (None, _) => (None, None),
        };
        EventRow {
            kind,
            start_uptime_ms: uptime,
            start_wall: event.wall_start_ms.map(|w| format_epoch_ms(w as i64)),
            duration_ms: event.duration_ms,
            name: event.name.clone(),
            pause_type: None,
            cause: event.cause.clone(),
            collector: None,
            ttsp_ms: event.ttsp_ms,
            gc_id: None,
            heap_before_bytes: None,
            heap_after_bytes: None,
            heap_capacity_bytes: None,
            source_file: event.source.as_ref().map(|s| s.file.clone()),
            source_line: line,
            source_event_index: index,
        }
    }

    /// Writes the rows the report counts to `file`; returns how many.
    pub fn write(self, file: File, format: EventsFormat, report: &Report) -> std::io::Result<u64> {
        let EventRows {
            mut rows,
            statistics,
            heap_by_gc_id,
            ..
        } = self;
        if report.safepoints.source == Some("safepoint_statistics") {
            rows.extend(statistics);
            // In input order: files as analysed, then lines (the statistics came apart).
            let mut files: Vec<Option<String>> = Vec::new();
            for row in &rows {
                if !files.contains(&row.source_file) {
                    files.push(row.source_file.clone());
                }
            }
            rows.sort_by_key(|row| {
                let file = files.iter().position(|f| *f == row.source_file);
                (file, row.source_line.or(row.source_event_index))
            });
        }
        for row in &mut rows {
            row.collector = report.jvm.collector.clone();
            if row.heap_after_bytes.is_none() {
                row.set_heap(row.gc_id.and_then(|id| heap_by_gc_id.get(&id)).copied());
            }
        }
        let mut out = BufWriter::new(file);
        match format {
            EventsFormat::Csv => {
                // RFC 4180: CRLF line ends, a field quoted when it holds a comma, a quote or
                // a line break, quotes doubled.
                let mut csv = csv::WriterBuilder::new()
                    .has_headers(false)
                    .terminator(csv::Terminator::CRLF)
                    .quote_style(csv::QuoteStyle::Necessary)
                    .from_writer(&mut out);
                csv.write_record(CSV_COLUMNS)?;
                for row in &rows {
                    csv.serialize(row).map_err(std::io::Error::other)?;
                }
                csv.flush()?;
            }
            EventsFormat::JsonLines => {
                for row in &rows {
                    serde_json::to_writer(&mut out, row)?;
                    out.write_all(b"\n")?;
                }
            }
        }
        out.flush()?;
        Ok(rows.len() as u64)
    }
}

impl PauseSink for EventRows {
    fn pause(&mut self, event: &PauseEvent) {
        let row = self.row("gc_pause", event);
        self.rows.push(row);
    }

    fn gc_pause(&mut self, event: &PauseEvent, pause: &GcPause) {
        let mut row = self.row("gc_pause", event);
        row.pause_type = Some(PauseType::of(&pause.name).as_str());
        row.gc_id = pause.gc_id;
        row.set_heap(pause.heap);
        self.rows.push(row);
    }

    fn heap(&mut self, sample: &HeapSample) {
        if let Some(id) = sample.gc_id {
            self.heap_by_gc_id.insert(
                id,
                HeapChange {
                    before: sample.before_bytes,
                    after: sample.after_bytes,
                    capacity: sample.capacity_bytes,
                },
            );
        }
    }

    fn safepoint(&mut self, event: &PauseEvent, statistics: bool) {
        let row = self.row("safepoint", event);
        if statistics {
            self.statistics.push(row);
        } else {
            self.rows.push(row);
        }
    }
}

/// Creates the `--events` file before the analysis, so that a path that cannot be written
/// fails at once, not after reading gigabytes.
pub fn create(events: &EventsFile) -> anyhow::Result<File> {
    pauselab_pause::output::create_file(&events.path)
        .with_context(|| format!("{}: cannot create the --events file", events.path.display()))
}
