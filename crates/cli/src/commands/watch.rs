//! `pauselab watch PID`: one line per interval with the JVM's safepoints and GC beside what
//! the host did; intervals whose safepoint time crosses the threshold get a likely cause.

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use pauselab_host::watch::{BlockedSeen, CollectorSample, HostSample, Interval, JvmSample};
use pauselab_hsperf::{Reader, Snapshot, Source};
use pauselab_pause::input::escape_control;
use pauselab_pause::units::{DurationSyntax, TimeUnit};
use serde::Serialize;

use super::probe::{format_utc_time, stop_on_signals};
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

#[derive(Serialize)]
struct IntervalLine<'a> {
    pid: u32,
    /// End of the interval, milliseconds since the Unix epoch.
    end_unix_ms: u64,
    #[serde(flatten)]
    interval: &'a Interval,
}

/// The JVM's cumulative counters that watch shows.
fn jvm_sample(snapshot: &Snapshot) -> JvmSample {
    let mut collectors = Vec::new();
    for index in 0.. {
        let prefix = format!("sun.gc.collector.{index}");
        let Some(name) = snapshot.value_str(&format!("{prefix}.name")) else {
            break;
        };
        collectors.push(CollectorSample {
            name: name.into_owned(),
            invocations: snapshot
                .value_i64(&format!("{prefix}.invocations"))
                .unwrap_or(0),
            seconds: snapshot.seconds(&format!("{prefix}.time")).unwrap_or(0.0),
        });
    }
    let (mut used, mut capacity) = (None::<u64>, None::<u64>);
    for counter in snapshot.counters() {
        let Some(rest) = counter.name.strip_prefix("sun.gc.generation.") else {
            continue;
        };
        // Generations 0 (young) and 1 (old) make the heap; metaspace is counted elsewhere.
        if !(rest.starts_with("0.") || rest.starts_with("1.")) {
            continue;
        }
        let value = snapshot.value_i64(counter.name).unwrap_or(0).max(0) as u64;
        if rest.contains(".space.") && rest.ends_with(".used") {
            *used.get_or_insert(0) += value;
        } else if rest.len() == "0.capacity".len() && rest.ends_with(".capacity") {
            *capacity.get_or_insert(0) += value;
        }
    }
    JvmSample {
        safepoints: snapshot.value_i64("sun.rt.safepoints"),
        safepoint_seconds: snapshot.seconds("sun.rt.safepointTime"),
        safepoint_sync_seconds: snapshot.seconds("sun.rt.safepointSyncTime"),
        collectors,
        heap_used: used,
        heap_capacity: capacity,
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
    if !args.json {
        writeln!(out, "{}", header())?;
    }
    let mut done = 0u64;
    while args.count.is_none_or(|count| done < count) {
        let mut blocked = BlockedSeen::default();
        let deadline = started + interval;
        while Instant::now() < deadline && !stop.load(Ordering::SeqCst) {
            if blocked.sample(pid).is_err() {
                break; // exited: noticed below
            }
            std::thread::sleep(
                THREAD_SAMPLE_EVERY.min(deadline.saturating_duration_since(Instant::now())),
            );
        }
        if stop.load(Ordering::SeqCst) {
            break;
        }
        if !alive(pid) {
            eprintln!("pauselab: pid {pid} exited after {done} intervals");
            break;
        }
        let snapshot = match reader.snapshot() {
            Ok(snapshot) => snapshot,
            Err(_) if !alive(pid) => {
                eprintln!("pauselab: pid {pid} exited after {done} intervals");
                break;
            }
            Err(err) => return Err(err).with_context(|| format!("pid {pid}")),
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
            writeln!(
                out,
                "{}",
                serde_json::to_string(&IntervalLine {
                    pid,
                    end_unix_ms,
                    interval: &line
                })?
            )?;
        } else {
            write!(out, "{}", render(end_unix_ms, &line))?;
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

fn header() -> String {
    format!(
        "  {:<12} {:>4} {:>8} {:>8} {:>7}  {:<22} {:>5}  {:>14}  {:>6} {:>5} {:>6} {:>5} {:>5} {:>6} {:>5} {:>7} {:>6}  {}",
        "time (UTC)", "sp", "stopped", "at sp", "sync", "gc count/ms", "heap", "psi cpu/io/mem", "majflt", "swpin", "swpout", "alloc", "compc", "thpflt", "split", "dirty", "wback", "threads in D"
    )
}

fn render(end_unix_ms: u64, i: &Interval) -> String {
    let opt_ms = |v: Option<f64>| v.map_or("-".to_string(), |ms| format!("{ms:.1}"));
    let gc: Vec<String> =
        i.gc.iter()
            .filter(|g| g.count > 0)
            .map(|g| {
                let name = short_collector(&g.name);
                format!("{} {}/{:.0}", escape_control(&name), g.count, g.ms)
            })
            .collect();
    let heap = match (i.heap_used, i.heap_capacity) {
        (Some(used), Some(capacity)) if capacity > 0 => {
            format!("{:.0}%", used as f64 * 100.0 / capacity as f64)
        }
        _ => "-".to_string(),
    };
    let psi = i.pressure.map_or("-".to_string(), |p| {
        format!(
            "{}/{}/{}",
            p.cpu_some_us / 1000,
            p.io_some_us / 1000,
            p.memory_some_us / 1000
        )
    });
    let v = |name: &str| i.vmstat.get(name).copied().unwrap_or(0);
    let blocked: Vec<String> = i
        .blocked
        .threads
        .iter()
        .map(|t| {
            let waits = t
                .wchan
                .as_ref()
                .or(t.stack.first())
                .map_or("?", String::as_str);
            // Thread names are the watched process's own (prctl, pthread_setname_np).
            format!("{}:{}", escape_control(&t.name), escape_control(waits))
        })
        .collect();
    let mut out = format!(
        "{} {:<12} {:>4} {:>8} {:>8} {:>7}  {:<22} {:>5}  {:>14}  {:>6} {:>5} {:>6} {:>5} {:>5} {:>6} {:>5} {:>7} {:>6}  {}\n",
        if i.stalled { "!" } else { " " },
        format_utc_time(end_unix_ms),
        i.safepoints.map_or("-".to_string(), |n| n.to_string()),
        opt_ms(i.stopped_ms),
        opt_ms(i.safepoint_ms),
        opt_ms(i.safepoint_sync_ms),
        if gc.is_empty() { "-".to_string() } else { gc.join(" ") },
        heap,
        psi,
        v("pgmajfault"),
        v("pswpin"),
        v("pswpout"),
        v("allocstall"),
        v("compact_stall"),
        v("thp_fault_alloc"),
        v("thp_split"),
        v("nr_dirty"),
        v("nr_writeback"),
        if blocked.is_empty() { "-".to_string() } else { blocked.join(" ") }
    );
    if i.stalled {
        out.push_str(&format!(
            "  ^ {:.0} ms in safepoints: likely {}\n",
            i.safepoint_ms.unwrap_or(0.0),
            i.causes
                .iter()
                .map(|c| format!("{} ({})", c.kind, escape_control(&c.detail)))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    out
}

/// `G1 young collection pauses` -> `G1-young`; other names keep their first word.
fn short_collector(name: &str) -> String {
    let words: Vec<&str> = name.split_whitespace().collect();
    match words.as_slice() {
        [gc, kind, ..] if *gc == "G1" => format!("G1-{kind}"),
        [first, ..] => first.to_string(),
        [] => "?".to_string(),
    }
}
