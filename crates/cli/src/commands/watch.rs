//! `pauselab watch PID`: one line per interval with the JVM's safepoints and GC beside what
//! the host did; intervals whose safepoint time crosses the threshold get a likely cause.

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use pauselab_host::pressure::PressureDelta;
use pauselab_host::watch::{BlockedSeen, CollectorSample, HostSample, Interval, JvmSample};
use pauselab_hsperf::{Reader, Snapshot, Source};
use pauselab_pause::input::escape_control;
use pauselab_pause::units::{DurationSyntax, TimeUnit};
use serde::Serialize;

use super::probe::{format_utc_time, stop_on_signals};
use super::table::{fit_number, Align, Column, Table};
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
    // Indexes need not start at 0: ZGC publishes only collector 2.
    let mut indexes: Vec<u32> = snapshot
        .counters()
        .filter_map(|c| {
            c.name
                .strip_prefix("sun.gc.collector.")?
                .strip_suffix(".name")?
                .parse()
                .ok()
        })
        .collect();
    indexes.sort_unstable();
    for index in indexes {
        let prefix = format!("sun.gc.collector.{index}");
        let Some(name) = snapshot.value_str(&format!("{prefix}.name")) else {
            continue;
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
    let collectors = jvm_before.collectors.clone();
    let table = table(&collectors);
    if !args.json {
        writeln!(out, "{}", table.header())?;
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
            write!(out, "{}", render(&table, &collectors, end_unix_ms, &line))?;
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

/// The text table: fixed columns wide enough for realistic values (larger ones are
/// shortened with a k/M/G suffix to stay inside, see [`fit_number`]), one per collector the
/// JVM has, and the blocked threads as free text at the end.
fn table(collectors: &[CollectorSample]) -> Table {
    let mut columns = vec![
        Column::new("", "", 1, Align::Left),
        Column::new("time", "UTC", 12, Align::Left),
        Column::new("sp", "count", 5, Align::Right),
        Column::new("stopped", "ms", 8, Align::Right),
        Column::new("at sp", "ms", 8, Align::Right),
        Column::new("sync", "ms", 8, Align::Right),
    ];
    for collector in collectors {
        columns.push(Column::new(
            short_collector(&collector.name),
            "count/ms",
            GC_WIDTH,
            Align::Right,
        ));
    }
    columns.extend([
        Column::new("heap", "%", 4, Align::Right),
        Column::new("throttled", "ms", 7, Align::Right),
        Column::new("psi cpu", "ms", 7, Align::Right),
        Column::new("psi io", "ms", 7, Align::Right),
        Column::new("psi mem", "ms", 7, Align::Right),
    ]);
    for (name, _) in VMSTAT_COLUMNS {
        columns.push(Column::new(*name, "count", 6, Align::Right));
    }
    for (name, _) in VMSTAT_GAUGE_COLUMNS {
        columns.push(Column::new(*name, "pages", 7, Align::Right));
    }
    columns.push(Column::new("threads in D", "name:wchan", 0, Align::Left));
    Table::new(columns, 1)
}

/// Room for a collector's `count/ms`: 4 characters each side of the slash.
const GC_WIDTH: usize = 9;
const GC_PART: usize = 4;

/// Events counted in /proc/vmstat during the interval, as (column, vmstat name).
const VMSTAT_COLUMNS: &[(&str, &str)] = &[
    ("majflt", "pgmajfault"),
    ("swpin", "pswpin"),
    ("swpout", "pswpout"),
    ("allocst", "allocstall"),
    ("compst", "compact_stall"),
    ("thpflt", "thp_fault_alloc"),
    ("split", "thp_split"),
];

/// Pages dirty or under writeback at the end of the interval.
const VMSTAT_GAUGE_COLUMNS: &[(&str, &str)] = &[("dirty", "nr_dirty"), ("wback", "nr_writeback")];

fn render(table: &Table, collectors: &[CollectorSample], end_unix_ms: u64, i: &Interval) -> String {
    let ms = |v: Option<f64>| fit_number(v, 1, 8);
    let mut cells = vec![
        if i.stalled { "!" } else { " " }.to_string(),
        format_utc_time(end_unix_ms),
        fit_number(i.safepoints.map(|n| n as f64), 0, 5),
        ms(i.stopped_ms),
        ms(i.safepoint_ms),
        ms(i.safepoint_sync_ms),
    ];
    for collector in collectors {
        cells.push(
            match i
                .gc
                .iter()
                .find(|g| g.name == collector.name && g.count > 0)
            {
                Some(g) => format!(
                    "{}/{}",
                    fit_number(Some(g.count as f64), 0, GC_PART),
                    fit_number(Some(g.ms), 0, GC_PART)
                ),
                None => "-".to_string(),
            },
        );
    }
    let heap = match (i.heap_used, i.heap_capacity) {
        (Some(used), Some(capacity)) if capacity > 0 => Some(used as f64 * 100.0 / capacity as f64),
        _ => None,
    };
    cells.push(fit_number(heap, 0, 4));
    cells.push(fit_number(i.throttled_ms, 0, 7));
    let psi_ms = |us: fn(&PressureDelta) -> u64| {
        fit_number(i.pressure.as_ref().map(|p| us(p) as f64 / 1000.0), 0, 7)
    };
    cells.push(psi_ms(|p| p.cpu_some_us));
    cells.push(psi_ms(|p| p.io_some_us));
    cells.push(psi_ms(|p| p.memory_some_us));
    let vmstat =
        |name: &str| fit_number(Some(i.vmstat.get(name).copied().unwrap_or(0) as f64), 0, 6);
    cells.extend(VMSTAT_COLUMNS.iter().map(|(_, name)| vmstat(name)));
    cells.extend(
        VMSTAT_GAUGE_COLUMNS.iter().map(|(_, name)| {
            fit_number(Some(i.vmstat.get(*name).copied().unwrap_or(0) as f64), 0, 7)
        }),
    );
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
    cells.push(if blocked.is_empty() {
        "-".to_string()
    } else {
        blocked.join(" ")
    });
    let mut out = table.row(&cells);
    out.push('\n');
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

/// A column name for a collector: `G1 young collection pauses` -> `young gc`, `Shenandoah
/// full` -> `full gc`; the collector's own name is in the JVM's name for it, not needed in
/// every column.
fn short_collector(name: &str) -> String {
    let words: Vec<&str> = name.split_whitespace().collect();
    let kind = match words.as_slice() {
        [_, kind, ..] => kind,
        [only] => only,
        [] => "?",
    };
    // The JVM names it: escaped, and cut so that one name cannot widen the table.
    let kind: String = escape_control(kind).chars().take(10).collect();
    format!("{kind} gc")
}
