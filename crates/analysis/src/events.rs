//! One row per GC pause and per safepoint the analysis counted, as CSV or JSON lines, for
//! spreadsheets and notebooks (`pauselab analyze --events FILE.csv|FILE.jsonl`).
//!
//! The rows come from the analysis's sink ([`PauseSink`]), so they are exactly the pauses
//! and safepoints the report counts. They are held until the analysis ends: the collector,
//! which series of safepoints the report counts, and a recording's heap (its own events,
//! joined by GC id) are known only then.

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::str::FromStr;

use crate::analyzer::{HeapSample, PauseSink, Report};
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

/// An events file: where, and in which format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventsFile {
    /// The file to write.
    pub path: PathBuf,
    /// The format its extension names.
    pub format: EventsFormat,
}

/// A file name whose extension names no events format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("name the file FILE.csv or FILE.jsonl (the format follows the extension)")]
pub struct UnknownEventsFormat;

impl FromStr for EventsFile {
    type Err = UnknownEventsFormat;

    /// `.csv` or `.jsonl`, in any case; any other name is refused.
    fn from_str(text: &str) -> Result<EventsFile, UnknownEventsFormat> {
        let path = PathBuf::from(text);
        let extension = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let format = match extension.as_deref() {
            Some("csv") => EventsFormat::Csv,
            Some("jsonl") => EventsFormat::JsonLines,
            _ => return Err(UnknownEventsFormat),
        };
        Ok(EventsFile { path, format })
    }
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

/// Collects the rows while the analysis runs: a [`PauseSink`] given to the
/// [`Analyzer`](crate::Analyzer), written once its [`Report`] is known.
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
    /// `recording`: the source is a JFR recording, whose events are numbered, not lines.
    pub fn new(recording: bool) -> EventRows {
        EventRows {
            recording,
            rows: Vec::new(),
            statistics: Vec::new(),
            heap_by_gc_id: HashMap::new(),
        }
    }

    fn row(&self, kind: &'static str, event: &PauseEvent) -> EventRow {
        let (line, index) = match (&event.source, self.recording) {
            (Some(source), false) => (Some(source.line), None),
            (Some(source), true) => (None, Some(source.line)),
            (None, _) => (None, None),
        };
        EventRow {
            kind,
            start_uptime_ms: event.start_ms,
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

    /// Writes the rows the report counts to `out`; returns how many.
    pub fn write(
        self,
        out: impl Write,
        format: EventsFormat,
        report: &Report,
    ) -> std::io::Result<u64> {
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
        let mut out = BufWriter::new(out);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Analyzer, Options};
    use pauselab_pause::record::{Failures, Stamp};
    use pauselab_pause::{PauseKind, SourceLine};

    fn event(kind: PauseKind, name: &str, file: &str, line: u64) -> PauseEvent {
        PauseEvent {
            start_ms: Some(1500.25),
            wall_start_ms: None,
            duration_ms: 12.5,
            kind,
            name: name.into(),
            cause: None,
            cpu: None,
            ttsp_ms: None,
            source: Some(SourceLine {
                file: file.into(),
                line,
            }),
        }
    }

    fn gc_pause(gc_id: Option<u64>, heap: Option<HeapChange>) -> GcPause {
        GcPause {
            gc_id,
            start: Stamp::default(),
            duration_ns: 12_500_000,
            name: "Pause Young (Normal)".into(),
            cause: None,
            cpu: None,
            heap,
            young: None,
            failures: Failures::default(),
            upgraded_to_full: false,
            collector: None,
            generations: None,
            icms_duty_cycle: None,
        }
    }

    fn report(collector: &str, safepoint_source: Option<&'static str>) -> Report {
        let mut report = Analyzer::new(Options::default()).finish();
        report.jvm.collector = Some(collector.into());
        report.safepoints.source = safepoint_source;
        report
    }

    fn written(rows: EventRows, format: EventsFormat, report: &Report) -> String {
        let mut out = Vec::new();
        rows.write(&mut out, format, report).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_extension_names_the_format_in_any_case() {
        let csv: EventsFile = "out/Pauses.CSV".parse().unwrap();
        assert_eq!(csv.format, EventsFormat::Csv);
        assert_eq!(csv.path, PathBuf::from("out/Pauses.CSV"));
        let jsonl: EventsFile = "p.jsonl".parse().unwrap();
        assert_eq!(jsonl.format, EventsFormat::JsonLines);
        for refused in ["p.json", "p", "csv"] {
            let error = refused.parse::<EventsFile>().unwrap_err();
            assert_eq!(
                error.to_string(),
                "name the file FILE.csv or FILE.jsonl (the format follows the extension)"
            );
        }
    }

    #[test]
    fn csv_has_a_header_crlf_quoted_causes_and_the_collector_in_every_row() {
        let mut rows = EventRows::new(false);
        let mut pause = event(PauseKind::Gc, "Pause Young (Normal)", "gc.log", 7);
        pause.cause = Some("G1 \"Humongous\", Allocation".into());
        let heap = HeapChange {
            before: 300,
            after: 100,
            capacity: Some(1024),
        };
        rows.gc_pause(&pause, &gc_pause(Some(4), Some(heap)));
        let mut safepoint = event(PauseKind::Safepoint, "Cleanup", "gc.log", 9);
        safepoint.ttsp_ms = Some(0.5);
        rows.safepoint(&safepoint, false);
        let text = written(rows, EventsFormat::Csv, &report("G1", None));
        let lines: Vec<&str> = text.split_inclusive("\r\n").collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[0], CSV_COLUMNS.join(",") + "\r\n");
        assert_eq!(
            lines[1],
            "gc_pause,1500.25,,12.5,Pause Young (Normal),young,\
             \"G1 \"\"Humongous\"\", Allocation\",G1,,4,300,100,1024,gc.log,7,\r\n"
        );
        assert_eq!(
            lines[2],
            "safepoint,1500.25,,12.5,Cleanup,,,G1,0.5,,,,,gc.log,9,\r\n"
        );
    }

    #[test]
    fn statistics_rows_are_written_only_when_the_report_counts_them_in_input_order() {
        let rows = || {
            let mut rows = EventRows::new(false);
            rows.safepoint(&event(PauseKind::Safepoint, "A", "gc.log.0", 20), false);
            rows.safepoint(&event(PauseKind::Safepoint, "B", "gc.log.1", 3), false);
            rows.safepoint(&event(PauseKind::Safepoint, "S", "gc.log.0", 10), true);
            rows
        };
        let names = |text: String| -> Vec<String> {
            text.lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["name"].to_string())
                .collect()
        };
        let stopped = written(rows(), EventsFormat::JsonLines, &report("CMS", None));
        assert_eq!(names(stopped), ["\"A\"", "\"B\""]);
        let statistics = report("CMS", Some("safepoint_statistics"));
        let all = written(rows(), EventsFormat::JsonLines, &statistics);
        assert_eq!(names(all), ["\"S\"", "\"A\"", "\"B\""]);
    }

    #[test]
    fn a_recordings_rows_cite_event_indexes_and_take_the_heap_by_gc_id() {
        let mut rows = EventRows::new(true);
        let mut pause = event(PauseKind::Gc, "Pause Young (Normal)", "r.jfr", 42);
        pause.start_ms = None;
        pause.wall_start_ms = Some(1_700_000_000_123.0);
        rows.gc_pause(&pause, &gc_pause(Some(9), None));
        rows.heap(&HeapSample {
            uptime_ms: None,
            wall_ms: None,
            before_bytes: 2048,
            after_bytes: 512,
            capacity_bytes: None,
            name: "Pause Young (Normal)".into(),
            gc_id: Some(9),
        });
        let text = written(rows, EventsFormat::JsonLines, &report("G1", None));
        let row: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(row["start_uptime_ms"], serde_json::Value::Null);
        assert_eq!(row["start_wall"], "2023-11-14T22:13:20.123Z");
        assert_eq!(row["source_line"], serde_json::Value::Null);
        assert_eq!(row["source_event_index"], 42);
        assert_eq!(row["heap_before_bytes"], 2048);
        assert_eq!(row["heap_after_bytes"], 512);
        assert_eq!(row["heap_capacity_bytes"], serde_json::Value::Null);
    }
}
