//! `pauselab probe mmap`: measure the latency of stores into mapped files, per filesystem.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use pauselab_host::probe::{
    default_targets, run_mmap_probe, ProbeConfig, ProbeTarget, StorePattern,
};
use pauselab_pause::units::{DurationSyntax, TimeUnit};
use pauselab_render::{describe_pattern, render_probe, ProbeReport};

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
        write!(out, "{}", render_probe(&report))?;
    }
    Ok(ExitCode::SUCCESS)
}
