//! `pauselab probe mmap`'s report: its JSON form, and its text (a column per target, then
//! each stall in time order); the time and latency formats `watch` shares.

use pauselab_host::probe::{ProbeResult, StorePattern};
use pauselab_pause::input::escape_control;
use serde::Serialize;

/// What `pauselab probe` measured: its table (`render_probe`) and its `--json` document.
#[derive(Serialize)]
pub struct ProbeReport<'a> {
    /// Time between two ticks, in milliseconds.
    pub interval_ms: f64,
    /// How long the probe ran, in seconds.
    pub duration_s: f64,
    /// A store slower than this counts as a stall, in milliseconds.
    pub stall_threshold_ms: f64,
    /// `null` when writeback was left to the kernel.
    pub writeback_every_ms: Option<u64>,
    /// What one tick stores, in words (`one store into each of 3 pages`).
    pub pattern: String,
    /// Stopped early by a signal (Ctrl-C, SIGTERM, SIGHUP).
    pub interrupted: bool,
    /// One result per target probed (a file in a directory, or anonymous memory).
    pub targets: &'a [ProbeResult],
}

/// What one tick of `pattern` stores, for the table's first line and the JSON.
pub fn describe_pattern(pattern: StorePattern) -> String {
    match pattern {
        StorePattern::Rotate => "one 8-byte store (the next page each time)".to_string(),
        StorePattern::Spread { pages } => format!("one 8-byte store into each of {pages} pages"),
        StorePattern::Packed { stores } => format!("{stores} 8-byte stores into one page"),
    }
}

pub fn format_ms(ns: u64) -> String {
    let ms = ns as f64 / 1e6;
    if ms >= 100.0 {
        format!("{ms:.0} ms")
    } else if ms >= 1.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{:.1} us", ns as f64 / 1e3)
    }
}

/// `HH:MM:SS.mmm` UTC of a Unix time in milliseconds.
pub fn format_utc_time(unix_ms: u64) -> String {
    let seconds_of_day = (unix_ms / 1000) % 86_400;
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        seconds_of_day / 3600,
        seconds_of_day / 60 % 60,
        seconds_of_day % 60,
        unix_ms % 1000
    )
}

/// Human summary of one probe result's filesystem: `ext4 /dev/vda, stable_writes=1`.
pub fn describe_target(result: &ProbeResult) -> String {
    match &result.filesystem {
        None if result.file.is_none() => "memory".to_string(),
        None => "unknown filesystem".to_string(),
        Some(fs) => {
            let mut text = format!("{} {}", fs.fs_type, fs.source);
            match fs.stable_writes() {
                Some(stable) => text.push_str(&format!(", stable_writes={}", u8::from(stable))),
                None if fs.is_memory_backed() => {}
                None => text.push_str(", stable_writes=?"),
            }
            text
        }
    }
}

/// The probe's table: a column per target, then each stall in time order.
pub fn render_probe(report: &ProbeReport) -> String {
    let results = report.targets;
    let mut rows: Vec<(String, Vec<String>)> = vec![
        (
            "".to_string(),
            results
                .iter()
                .map(|r| escape_control(&r.target).into_owned())
                .collect(),
        ),
        (
            "filesystem".to_string(),
            results
                .iter()
                .map(|r| escape_control(&describe_target(r)).into_owned())
                .collect(),
        ),
        (
            "stores".to_string(),
            results.iter().map(|r| r.stores.to_string()).collect(),
        ),
        (
            "p99".to_string(),
            results.iter().map(|r| format_ms(r.p99_ns)).collect(),
        ),
        (
            "p99.9".to_string(),
            results.iter().map(|r| format_ms(r.p999_ns)).collect(),
        ),
        (
            "max".to_string(),
            results.iter().map(|r| format_ms(r.max_ns)).collect(),
        ),
        (
            format!("stalls >= {} ms", report.stall_threshold_ms),
            results.iter().map(|r| r.stall_count.to_string()).collect(),
        ),
        (
            "stalled per minute".to_string(),
            results
                .iter()
                .map(|r| format_ms((r.stalled_ms_per_minute * 1e6) as u64))
                .collect(),
        ),
    ];
    if report.writeback_every_ms.is_some() {
        rows.insert(
            3,
            (
                "writebacks".to_string(),
                results.iter().map(|r| r.writebacks.to_string()).collect(),
            ),
        );
    }
    let label_width = rows.iter().map(|(label, _)| label.len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..results.len())
        .map(|i| {
            rows.iter()
                .map(|(_, cells)| cells[i].len())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = format!(
        "mmap store latency: {} every {} ms per target for {:.1} s{}{}\n\n",
        report.pattern,
        report.interval_ms,
        report.duration_s,
        match report.writeback_every_ms {
            Some(ms) => format!(", writeback started every {ms} ms"),
            None => ", writeback left to the kernel".to_string(),
        },
        if report.interrupted {
            " (interrupted)"
        } else {
            ""
        }
    );
    for (label, cells) in &rows {
        let mut line = format!("{label:<label_width$}");
        for (cell, width) in cells.iter().zip(&widths) {
            line.push_str(&format!("  {cell:>width$}"));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let mut stalls: Vec<_> = results
        .iter()
        .flat_map(|r| r.stalls.iter().map(move |s| (s, &r.target)))
        .collect();
    stalls.sort_by_key(|(s, _)| s.offset_ns);
    if !stalls.is_empty() {
        out.push_str(&format!(
            "\nstalls >= {} ms (UTC time, since start, target, store latency):\n",
            report.stall_threshold_ms
        ));
        for (stall, target) in stalls {
            out.push_str(&format!(
                "  {}  +{:>8.3} s  {}  {}\n",
                format_utc_time(stall.unix_ms),
                stall.offset_ns as f64 / 1e9,
                escape_control(target),
                format_ms(stall.latency_ns)
            ));
        }
        let kept: u64 = results.iter().map(|r| r.stalls.len() as u64).sum();
        let total: u64 = results.iter().map(|r| r.stall_count).sum();
        if total > kept {
            out.push_str(&format!("  ... {} more not listed\n", total - kept));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_time_of_day() {
        // 2021-01-01T12:34:56.789Z
        assert_eq!(format_utc_time(1_609_504_496_789), "12:34:56.789");
    }
}
