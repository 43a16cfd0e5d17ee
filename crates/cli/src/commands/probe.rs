//! `pauselab probe mmap`: measure the latency of stores into mapped files, per filesystem.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use pauselab_host::probe::{
    default_targets, run_mmap_probe, ProbeConfig, ProbeResult, ProbeTarget, StorePattern,
};
use pauselab_pause::input::escape_control;
use pauselab_pause::units::{DurationSyntax, TimeUnit};
use serde::Serialize;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    probe: Probe,
}

#[derive(clap::Subcommand)]
enum Probe {
    /// Latency of 8-byte stores into a small MAP_SHARED file per directory (the hsperf
    /// mmap stall), with tmpfs and anonymous memory as controls
    Mmap(MmapArgs),
}

#[derive(clap::Args)]
pub struct MmapArgs {
    /// Directories to probe (one file each). Default: the hsperf directory's filesystem,
    /// /dev/shm and anonymous memory
    pub paths: Vec<PathBuf>,
    /// How long to run: 10s, 500ms, 2m; a bare number is seconds
    #[arg(long, default_value = "10s", value_name = "DURATION",
          value_parser = |text: &str| PROBE_DURATION.parse(text))]
    pub duration: Duration,
    /// Time between two stores into the same file: 1ms, 500us; a bare number is milliseconds
    #[arg(long, default_value = "1", value_name = "DURATION",
          value_parser = |text: &str| PROBE_MILLIS.parse(text))]
    pub interval: Duration,
    /// Stores at least this slow are listed with their time: 10ms, 1s; a bare number is
    /// milliseconds
    #[arg(long, default_value = "10", value_name = "DURATION",
          value_parser = |text: &str| PROBE_MILLIS.parse(text))]
    pub stall_threshold: Duration,
    /// Start writeback of each probe file this often, as the kernel's flusher would: 1s,
    /// 500ms; a bare number is milliseconds; 0 leaves writeback to the kernel (which may not
    /// write for 30 s)
    #[arg(long, default_value = "1000", value_name = "DURATION",
          value_parser = |text: &str| DurationSyntax::new(TimeUnit::Milliseconds).parse(text))]
    pub writeback_every: Duration,
    /// Which pages each tick stores into: rotate (one store, the next page each tick),
    /// spread:N (one store into each of N pages, as a GC writes counters laid out over N
    /// pages), packed:N (N stores into one page, the same counters packed together)
    #[arg(long, default_value = "rotate", value_name = "PATTERN")]
    pub pattern: StorePattern,
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.probe {
        Probe::Mmap(args) => run_mmap(args),
    }
}

/// `probe --duration` and `doctor --probe-duration`: more than 0; a bare number is seconds.
pub const PROBE_DURATION: DurationSyntax =
    DurationSyntax::new(TimeUnit::Seconds).at_least(Duration::from_nanos(1));

/// `--interval` and `--stall-threshold`: more than 0; a bare number is milliseconds.
const PROBE_MILLIS: DurationSyntax =
    DurationSyntax::new(TimeUnit::Milliseconds).at_least(Duration::from_nanos(1));

/// Milliseconds as the JSON report has always written them.
fn as_millis_f64(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e6
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn request_stop(_signal: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// A flag set by Ctrl-C (SIGINT), SIGTERM or SIGHUP, so long-running commands stop cleanly
/// and undo what they created.
pub fn stop_on_signals() -> &'static AtomicBool {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores into an atomic, which is async-signal-safe.
        unsafe { libc::signal(signal, request_stop as *const () as libc::sighandler_t) };
    }
    &STOP
}

#[derive(Serialize)]
struct ProbeReport<'a> {
    interval_ms: f64,
    duration_s: f64,
    stall_threshold_ms: f64,
    /// `null` when writeback was left to the kernel.
    writeback_every_ms: Option<u64>,
    /// What one tick stores, in words (`one store into each of 3 pages`).
    pattern: String,
    interrupted: bool,
    targets: &'a [ProbeResult],
}

fn run_mmap(args: MmapArgs) -> anyhow::Result<ExitCode> {
    let targets = if args.paths.is_empty() {
        default_targets()
    } else {
        args.paths
            .iter()
            .cloned()
            .map(ProbeTarget::Directory)
            .collect()
    };
    let config = ProbeConfig {
        duration: args.duration,
        interval: args.interval,
        stall_threshold: args.stall_threshold,
        force_writeback: (!args.writeback_every.is_zero()).then_some(args.writeback_every),
        pattern: args.pattern,
        ..ProbeConfig::default()
    };
    let stop = stop_on_signals();
    let results = run_mmap_probe(&targets, &config, stop).context("mmap probe")?;
    let report = ProbeReport {
        interval_ms: as_millis_f64(args.interval),
        duration_s: args.duration.as_secs_f64(),
        stall_threshold_ms: as_millis_f64(args.stall_threshold),
        writeback_every_ms: config.force_writeback.map(|d| d.as_millis() as u64),
        pattern: describe_pattern(args.pattern),
        interrupted: stop.load(Ordering::SeqCst),
        targets: &results,
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        write!(out, "{}", render_table(&report))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What one tick of `pattern` stores, for the table's first line and the JSON.
fn describe_pattern(pattern: StorePattern) -> String {
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

fn render_table(report: &ProbeReport) -> String {
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
