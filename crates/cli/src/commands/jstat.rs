//! `pauselab jstat`: the JDK's `jstat OPTION [-t] [-h N] PID [INTERVAL [COUNT]]` for
//! -gcutil, -gc, -gccause, -class, -compiler and -printcompilation, with byte-identical
//! output, read natively (also from JVMs with -XX:+PerfDisableSharedMem).

use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use pauselab_hsperf::jstat::{JstatFormatter, JstatOption};
use pauselab_hsperf::{Reader, Source};
use pauselab_pause::units::{DurationSyntax, TimeUnit};
use pauselab_render::{write_jstat_json, write_jstat_row};

#[derive(clap::Args)]
#[command(disable_help_flag = true)]
pub struct Args {
    /// -gcutil, -gc, -gccause, -class, -compiler or -printcompilation
    #[arg(allow_hyphen_values = true, value_name = "OPTION")]
    option: JstatOption,
    /// Print a Timestamp column (seconds since the JVM started) first
    #[arg(short = 't')]
    timestamp: bool,
    /// Repeat the header every N samples
    #[arg(short = 'h', value_name = "N")]
    header_every: Option<u64>,
    /// Pid of the JVM
    pid: u32,
    /// Sampling interval: 250ms, 1s, 2m; a bare number is milliseconds
    #[arg(value_parser = |text: &str| INTERVAL.parse(text))]
    interval: Option<Duration>,
    /// Number of samples (default: one without INTERVAL, unlimited with it)
    #[arg(value_parser = clap::value_parser!(u64).range(1..))]
    count: Option<u64>,
    /// Where to read from: the file if shared, else memory (auto), or force one
    #[arg(long, default_value = "auto", value_name = "auto|file|memory")]
    source: Source,
    /// One JSON object per sample instead of the jstat table
    #[arg(long)]
    json: bool,
    /// Print help
    #[arg(long, action = clap::ArgAction::Help)]
    help: Option<bool>,
}

/// A sampling interval, 1 ms to a day (a longer one is a typo, and would overflow the clock
/// arithmetic of the sampling loop); a bare number is milliseconds, as jstat's own.
/// `perf -i` takes the same.
pub(crate) const INTERVAL: DurationSyntax = DurationSyntax::new(TimeUnit::Milliseconds)
    .at_least(Duration::from_millis(1))
    .at_most(Duration::from_secs(86_400));

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let interval = args.interval;
    let samples = args
        .count
        .unwrap_or(if interval.is_some() { u64::MAX } else { 1 });
    let formatter = JstatFormatter::new(args.option, args.timestamp);
    let mut reader = Reader::open(args.pid, args.source)?;
    let mut snapshot = reader.snapshot()?;
    let stdout = std::io::stdout();
    let mut next = Instant::now();
    for sample in 0..samples {
        if sample > 0 {
            next += interval.unwrap_or_default();
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
            reader.snapshot_into(&mut snapshot)?;
        }
        let mut out = stdout.lock();
        let written = if args.json {
            write_jstat_json(&mut out, args.pid, &formatter, &snapshot)
        } else {
            // jstat prints the header once, or before every N-th sample with -h N.
            let header_due = match args.header_every {
                Some(n) if n > 0 => sample % n == 0,
                _ => sample == 0,
            };
            write_jstat_row(&mut out, &formatter, &snapshot, header_due)
        };
        // A closed pipe ends the command in `main`, like every other command's.
        written
            .and_then(|_| out.flush())
            .context("writing to stdout")?;
    }
    Ok(ExitCode::SUCCESS)
}
