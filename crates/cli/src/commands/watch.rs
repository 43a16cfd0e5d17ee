//! `pauselab watch PID`: one line per interval with the JVM's safepoints and GC beside what
//! the host did; intervals whose safepoint time crosses the threshold get a likely cause.

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use pauselab_host::watch::{BlockedSeen, CollectorSample, HostSample, Interval, JvmSample};
use pauselab_hsperf::{Reader, Snapshot, Source};
use pauselab_pause::units::{DurationSyntax, TimeUnit};
use pauselab_render::{watch_line, watch_table, write_watch_json};

use super::probe::stop_on_signals;
use super::EXIT_CONDITION;

/// `--interval`: at least 100 ms (shorter ones measure the sampling more than the JVM); a
/// bare number is milliseconds.
const INTERVAL: DurationSyntax =
    DurationSyntax::new(TimeUnit::Milliseconds).at_least(Duration::from_millis(100));

#[derive(clap::Args)]
pub struct Args {
    /// The JVM to watch (also -XX:+PerfDisableSharedMem JVMs, through their memory)
    pub pid: u32,
    /// Interval length: 1s, 500ms, 1m; a bare number is milliseconds (at least 100ms)
    #[arg(short = 'i', long = "interval", default_value = "1000", value_name = "DURATION",
          value_parser = |text: &str| INTERVAL.parse(text))]
    pub interval: Duration,
    /// Mark intervals in which the application was stopped (safepoint sync + safepoint time)
    /// for at least this long: 100ms, 1s; a bare number is milliseconds
    #[arg(long, default_value = "100", value_name = "DURATION",
          value_parser = |text: &str| DurationSyntax::new(TimeUnit::Milliseconds).parse(text))]
    pub threshold: Duration,
    /// Stop after this many intervals (default: until Ctrl-C or the JVM exits)
    #[arg(long)]
    pub count: Option<u64>,
    /// One JSON object per interval (JSON lines) instead of text
    #[arg(long)]
    pub json: bool,
}

/// How often JVM threads are checked for uninterruptible sleep within an interval.
const THREAD_SAMPLE_EVERY: Duration = Duration::from_millis(50);

/// The JVM's cumulative counters that watch shows.
fn jvm_sample(snapshot: &Snapshot) -> JvmSample {
    let heap = snapshot.heap();
    let collectors = snapshot.collectors().into_iter().map(|c| CollectorSample {
        name: c.name,
        invocations: c.invocations,
        seconds: c.seconds,
    });
    JvmSample {
        safepoints: snapshot.value_i64("sun.rt.safepoints"),
        safepoint_seconds: snapshot.seconds("sun.rt.safepointTime"),
        safepoint_sync_seconds: snapshot.seconds("sun.rt.safepointSyncTime"),
        collectors: collectors.collect(),
        heap_used: heap.used,
        heap_capacity: heap.capacity,
    }
}

fn alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let pid = args.pid;
    let mut reader = Reader::open(pid, Source::Auto).with_context(|| format!("pid {pid}"))?;
    let stop = stop_on_signals();
    let interval = args.interval;
    let mut jvm_before = jvm_sample(&reader.snapshot().with_context(|| format!("pid {pid}"))?);
    let mut host_before =
        HostSample::read(pid).with_context(|| format!("host facts for pid {pid}"))?;
    let mut previous_blocked: Option<BlockedSeen> = None;
    let mut any_stalled = false;
    let mut started = Instant::now();
    let mut out = std::io::stdout().lock();
    let collectors = jvm_before.collectors.clone();
    let table = watch_table(&collectors);
    if !args.json {
        writeln!(out, "{}", table.header())?;
    }
    let mut done = 0u64;
    while args.count.is_none_or(|count| done < count) {
        let blocked =
            BlockedSeen::sampled_until(pid, started + interval, THREAD_SAMPLE_EVERY, stop);
        if stop.load(Ordering::SeqCst) {
            break;
        }
        // A JVM that exited may leave a snapshot readable: its liveness decides.
        let snapshot = match (reader.snapshot(), alive(pid)) {
            (Ok(snapshot), true) => snapshot,
            (Err(err), true) => return Err(err).with_context(|| format!("pid {pid}")),
            (_, false) => {
                pauselab_pause::eprintln_lossy!(
                    "pauselab: pid {pid} exited after {done} intervals"
                );
                break;
            }
        };
        let jvm_after = jvm_sample(&snapshot);
        let host_after =
            HostSample::read(pid).with_context(|| format!("host facts for pid {pid}"))?;
        let now = Instant::now();
        let line = Interval::between(
            now.duration_since(started).as_secs_f64(),
            &jvm_before,
            &jvm_after,
            &host_before,
            &host_after,
            blocked.clone(),
            previous_blocked.as_ref(),
            args.threshold.as_nanos() as f64 / 1e6,
        );
        started = now;
        any_stalled |= line.stalled;
        let end_unix_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        if args.json {
            write_watch_json(&mut out, pid, end_unix_ms, &line)?;
        } else {
            write!(
                out,
                "{}",
                watch_line(&table, &collectors, end_unix_ms, &line)
            )?;
        }
        jvm_before = jvm_after;
        host_before = host_after;
        previous_blocked = Some(blocked);
        done += 1;
    }
    Ok(if any_stalled {
        ExitCode::from(EXIT_CONDITION)
    } else {
        ExitCode::SUCCESS
    })
}
