//! GC pauses for reports: the timeline's pause markers and GC logs given as report input.
//!
//! This is the report's only contact with GC logs. It reads the stop-the-world pause lines of
//! JDK 9+ unified logging (`[...][0.573s][info][gc] GC(0) Pause Young (Normal) (...) 18.763ms`),
//! which is what the lab records; the full multi-format analysis lives in pauselab-gclog.

use std::path::Path;

use hdrhistogram::Histogram;
use pauselab_pause::{PauseEvent, PauseKind, SourceLine};

use crate::summary::{IntervalPoint, LogSummary};
use crate::ReportError;

/// Interval length used to turn a pause list into a timeline, seconds.
pub const TIMELINE_INTERVAL_S: f64 = 5.0;

/// Pauses of a GC log with their offsets (s) from `start_time_s` (seconds since epoch) when
/// the log has wall-clock decorations, else from JVM start. Unreadable logs give no markers.
pub fn pauses(path: &Path, start_time_s: Option<f64>) -> Vec<(f64, PauseEvent)> {
    read_pauses(path)
        .map(|events| with_offsets(events, start_time_s))
        .unwrap_or_default()
}

fn with_offsets(events: Vec<PauseEvent>, start_time_s: Option<f64>) -> Vec<(f64, PauseEvent)> {
    events
        .into_iter()
        .map(|e| {
            let offset = match (e.wall_start_ms, start_time_s) {
                (Some(wall), Some(start)) => wall / 1000.0 - start,
                _ => e.start_ms / 1000.0,
            };
            (offset, e)
        })
        .collect()
}

/// Reads the pause lines of a unified-logging GC log.
pub fn read_pauses(path: &Path) -> Result<Vec<PauseEvent>, ReportError> {
    let bytes = std::fs::read(path).map_err(|error| ReportError::Io {
        path: path.display().to_string(),
        error,
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let mut events = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if let Some(mut event) = parse_pause_line(line) {
            event.source = Some(SourceLine {
                file: path.display().to_string(),
                line: index as u64 + 1,
            });
            events.push(event);
        }
    }
    Ok(events)
}

fn parse_pause_line(line: &str) -> Option<PauseEvent> {
    let mut rest = line;
    let mut uptime_s = None;
    let mut wall_ms = None;
    while let Some(stripped) = rest.strip_prefix('[') {
        let end = stripped.find(']')?;
        let field = stripped[..end].trim();
        if let Some(s) = field.strip_suffix('s').and_then(|s| s.parse::<f64>().ok()) {
            uptime_s.get_or_insert(s);
        } else if field.len() >= 23 && field.as_bytes()[10] == b'T' {
            wall_ms = wall_ms.or_else(|| parse_iso_ms(field));
        }
        rest = &stripped[end + 1..];
    }
    let message = rest.trim();
    let body = message.strip_prefix("GC(")?;
    let body = &body[body.find(')')? + 1..];
    let body = body.trim_start();
    if !body.starts_with("Pause") {
        return None;
    }
    let (head, last) = body.rsplit_once(' ')?;
    let duration_ms = last.strip_suffix("ms")?.parse::<f64>().ok()?;
    let uptime_s = uptime_s?;
    let name_end = head.find(" (").unwrap_or(head.len());
    let name = head[..name_end].trim().to_string();
    // "(Normal) (G1 Evacuation Pause)": the last top-level group is the cause.
    let cause = groups(&head[name_end..])
        .into_iter()
        .last()
        .map(str::to_string);
    Some(PauseEvent {
        start_ms: uptime_s * 1000.0 - duration_ms,
        wall_start_ms: wall_ms.map(|w| w - duration_ms),
        duration_ms,
        kind: PauseKind::Gc,
        name,
        cause,
        cpu: None,
        ttsp_ms: None,
        source: None,
    })
}

/// Top-level parenthesised groups that follow a space: " (a) (b(c)) 1M->2M(3M)" gives a, b(c).
fn groups(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'(' && (i == 0 || bytes[i - 1] == b' ') {
            let mut depth = 0;
            for (j, b) in bytes.iter().enumerate().skip(i) {
                match b {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            found.push(&text[i + 1..j]);
                            i = j;
                            break;
                        }
                    }
                    _ => {}
                }
            }
        }
        i += 1;
    }
    found
}

/// `2026-11-21T22:42:43.549+0000` to milliseconds since the epoch.
fn parse_iso_ms(text: &str) -> Option<f64> {
    let num = |r: std::ops::Range<usize>| text.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s, ms) = (num(11..13)?, num(14..16)?, num(17..19)?, num(20..23)?);
    let zone = text.get(23..)?;
    let sign = if zone.starts_with('-') { -1 } else { 1 };
    let offset_min = sign * (num(24..26).unwrap_or(0) * 60 + num(26..28).unwrap_or(0));
    let y_adj = if mo <= 2 { y - 1 } else { y };
    let era = y_adj.div_euclid(400);
    let yoe = y_adj - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + s - offset_min * 60;
    Some(secs as f64 * 1000.0 + ms as f64)
}

/// A GC log as a pause histogram (ns) with a 5-second timeline of the longest pause.
pub fn pause_summary(path: &Path) -> Result<(LogSummary, Vec<(f64, PauseEvent)>), ReportError> {
    let events = read_pauses(path)?;
    if events.is_empty() {
        return Err(ReportError::Input {
            source_name: path.display().to_string(),
            message:
                "no GC pause lines found (expected a JDK 9+ log written with -Xlog:gc or -Xlog:gc*)"
                    .to_string(),
        });
    }
    let pauses = with_offsets(events, None);
    let mut histogram =
        Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds");
    let mut intervals: Vec<IntervalPoint> = Vec::new();
    for (offset, e) in &pauses {
        let ns = (e.duration_ms * 1e6).round().max(1.0) as u64;
        histogram.saturating_record(ns);
        let slot = (offset.max(0.0) / TIMELINE_INTERVAL_S).floor();
        let start = slot * TIMELINE_INTERVAL_S;
        match intervals.last_mut() {
            Some(last) if last.offset_s == start => {
                last.count += 1;
                last.max = last.max.max(ns);
            }
            _ => intervals.push(IntervalPoint {
                offset_s: start,
                length_s: TIMELINE_INTERVAL_S,
                count: 1,
                max: ns,
            }),
        }
    }
    let summary = LogSummary {
        source: path.display().to_string(),
        tag: pauselab_pause::interval_log::TagFilter::Any,
        start_s: None,
        java_start_time_s: 0.0,
        intervals,
        histogram,
        tags_seen: Vec::new(),
    };
    Ok((summary, pauses))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_unified_pause_line() {
        let e = parse_pause_line("[2026-11-21T22:42:43.549+0000][0.573s][info][gc          ] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 12M->4M(256M) 18.763ms").unwrap();
        assert_eq!(e.name, "Pause Young");
        assert_eq!(e.cause.as_deref(), Some("G1 Evacuation Pause"));
        assert!((e.duration_ms - 18.763).abs() < 1e-9);
        assert!((e.start_ms - (573.0 - 18.763)).abs() < 1e-9);
        let wall = e.wall_start_ms.unwrap();
        assert!(
            (wall - (1_795_300_963_549.0 - 18.763)).abs() < 1e-3,
            "{wall}"
        );
        assert!(parse_pause_line(
            "[0.554s][info][gc,start    ] GC(0) Pause Young (Normal) (G1 Evacuation Pause)"
        )
        .is_none());
        assert!(parse_pause_line("[0.021s][info][gc,init] Version: 17").is_none());
    }
}
