//! `pauselab perf`: a JVM's perf counters as `name=value` lines, the names and values of
//! `jcmd PID PerfCounter.print` (sorted, with its six `sun.perfdata.*` counters), read from
//! the hsperfdata file or straight from the JVM's memory.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use pauselab_hsperf::{CounterFilter, RateTracker, Reader, Source};
use pauselab_render::{write_perf_cost, write_perf_json, write_perf_text};

#[derive(clap::Args)]
pub struct Args {
    /// Pid of the JVM (see `pauselab jvms`)
    #[arg(required_unless_present = "file")]
    pid: Option<u32>,
    /// Counter names or globs (`sun.gc.*`, `*.time`); all counters if none
    patterns: Vec<String>,
    /// Read a saved hsperfdata file instead of a running JVM
    #[arg(long, value_name = "PATH", conflicts_with = "pid")]
    file: Option<PathBuf>,
    /// Repeat every INTERVAL: 250ms, 1s, 2m; a bare number is milliseconds (at least 1ms)
    #[arg(short = 'i', long = "interval", value_name = "INTERVAL",
          value_parser = |text: &str| super::jstat::INTERVAL.parse(text))]
    interval: Option<Duration>,
    /// Number of samples (default 1, or unlimited with -i)
    #[arg(short = 'n', long = "count", value_name = "COUNT",
          value_parser = clap::value_parser!(u64).range(1..))]
    count: Option<u64>,
    /// Where to read from: the file if shared, else memory (auto), or force one
    #[arg(long, default_value = "auto", value_name = "auto|file|memory")]
    source: Source,
    /// One JSON object per sample (name, value, units, variability of each counter)
    #[arg(long)]
    json: bool,
    /// With -i: print each interval's change of the monotonic counters and their rate per
    /// second (ticks counters as seconds per second, with sun.os.hrt.frequency); -n then
    /// counts intervals
    #[arg(long, requires = "interval", conflicts_with_all = ["pages", "time_snapshots"])]
    rate: bool,
    /// Map which 4 KiB pages of the region the JVM writes: sample every INTERVAL (default
    /// 10ms) for --duration, then print per page its counters, how often it was written and
    /// whether in intervals holding a safepoint, and the pages per second written as laid
    /// out and if the changing counters were packed together
    #[arg(long, conflicts_with_all = ["count", "time_snapshots"])]
    pages: bool,
    /// With --pages: how long to sample: 10s, 2m; a bare number is seconds
    #[arg(long, requires = "pages", default_value = "10s", value_name = "DURATION",
          value_parser = |text: &str| super::probe::PROBE_DURATION.parse(text))]
    duration: Duration,
    /// Measure the in-process cost of N snapshots and print it (for bench/hsperf.sh)
    #[arg(long, hide = true, value_name = "N")]
    time_snapshots: Option<u32>,
}

/// Sampling interval of `--pages` when `-i` is not given.
const PAGES_INTERVAL: Duration = Duration::from_millis(10);

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut reader = match (&args.file, args.pid) {
        (Some(path), _) => Reader::open_path(path)?,
        (None, Some(pid)) => Reader::open(pid, args.source)?,
        (None, None) => anyhow::bail!("give a pid or --file"),
    };
    if let Some(n) = args.time_snapshots {
        let cost = reader.time_snapshots(n as usize)?;
        write_perf_cost(&mut std::io::stdout(), &cost, &reader)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.pages {
        let interval = args.interval.unwrap_or(PAGES_INTERVAL);
        return super::perf_pages::run(&mut reader, interval, args.duration, args.json);
    }
    let filter = CounterFilter::new(args.patterns.iter().cloned());
    let samples = args
        .count
        .unwrap_or(if args.interval.is_some() { u64::MAX } else { 1 });
    // With --rate a sample is printed once there is one before it: COUNT intervals take
    // COUNT + 1 snapshots.
    let snapshots = if args.rate {
        samples.saturating_add(1)
    } else {
        samples
    };
    let interval = args.interval.unwrap_or_default();
    let stdout = std::io::stdout();
    let mut snapshot = reader.snapshot()?;
    let mut taken = Instant::now();
    let mut next = taken;
    let mut rates = RateTracker::default();
    let mut printed = 0u64;
    for sample in 0..snapshots {
        if sample > 0 {
            next += interval;
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
            reader.snapshot_into(&mut snapshot)?;
            taken = Instant::now();
        }
        let counters = filter.select(&snapshot);
        if sample == 0 && counters.is_empty() && !args.patterns.is_empty() {
            anyhow::bail!(
                "no counter matches {}; list all names with `pauselab perf {}`",
                args.patterns.join(" "),
                args.pid.map(|p| p.to_string()).unwrap_or_default()
            );
        }
        let interval_rates = if args.rate {
            let Some(rates) = rates.next(taken, &counters, snapshot.tick_frequency()) else {
                continue;
            };
            Some(rates)
        } else {
            None
        };
        let mut out = stdout.lock();
        let written = if args.json {
            write_perf_json(
                &mut out,
                &reader,
                &snapshot,
                &counters,
                interval_rates.as_ref(),
            )
        } else {
            write_perf_text(
                &mut out,
                printed > 0,
                &counters,
                interval_rates.as_ref().map(|(_, rates)| rates.as_slice()),
            )
        };
        // A closed pipe goes up as it is: main ends quietly with status 141.
        written.and_then(|_| out.flush())?;
        printed += 1;
    }
    Ok(ExitCode::SUCCESS)
}
