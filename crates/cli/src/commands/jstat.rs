//! `pauselab jstat`: the JDK's `jstat OPTION [-t] [-h N] PID [INTERVAL [COUNT]]` for
//! -gcutil, -gc, -gccause, -class, -compiler and -printcompilation, with byte-identical
//! output, read natively (also from JVMs with -XX:+PerfDisableSharedMem).

use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant, UNIX_EPOCH};

use anyhow::Context;
use pauselab_hsperf::jstat::{JstatFormatter, JstatOption};
use pauselab_hsperf::{Reader, Source};

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
    /// Sampling interval: N (milliseconds), Nms or Ns
    interval: Option<String>,
    /// Number of samples (default: one without INTERVAL, unlimited with it)
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

fn parse_interval(text: &str) -> anyhow::Result<Duration> {
    let (number, unit_ms) = if let Some(n) = text.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1000)
    } else {
        (text, 1)
    };
    let n: u64 = number
        .parse()
        .ok()
        .filter(|&n| n > 0)
        .with_context(|| format!("bad interval {text:?}: use N (milliseconds), Nms or Ns"))?;
    Ok(Duration::from_millis(n * unit_ms))
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let interval = args.interval.as_deref().map(parse_interval).transpose()?;
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
            let names = formatter.column_names();
            let columns: Vec<_> = names
                .iter()
                .zip(formatter.cells(&snapshot))
                .map(|(name, value)| serde_json::json!({"name": name, "value": value}))
                .collect();
            let time = snapshot
                .taken_at()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs_f64())
                .unwrap_or(0.0);
            let doc = serde_json::json!({
                "pid": args.pid,
                "option": formatter.option(),
                "timestamp": time,
                "columns": columns,
            });
            writeln!(out, "{doc}")
        } else {
            // jstat prints the header once, or before every N-th sample with -h N.
            let header_due = match args.header_every {
                Some(n) if n > 0 => sample % n == 0,
                _ => sample == 0,
            };
            let header = if header_due {
                format!("{}\n", formatter.header())
            } else {
                String::new()
            };
            writeln!(out, "{header}{}", formatter.row(&snapshot))
        };
        // A closed pipe ends the command in `main`, like every other command's.
        written
            .and_then(|_| out.flush())
            .context("writing to stdout")?;
    }
    Ok(ExitCode::SUCCESS)
}
