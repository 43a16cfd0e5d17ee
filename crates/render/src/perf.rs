//! `pauselab perf`'s output: `name=value` lines (with their change and rate under
//! `--rate`) or one JSON line per snapshot.

use std::io::Write;

use pauselab_hsperf::{Counter, CounterRate, IntervalRates, Reader, Snapshot, SnapshotCost};
use pauselab_pause::input::escape_control;
use serde::Serialize;

/// `name=value` lines; with rates, a monotonic counter's line goes on with its change and
/// rate: `sun.rt.safepoints=812 +4 4.000 /s`, `sun.rt.safepointTime=... +2000000 0.002000 s/s`.
pub fn write_perf_text(
    out: &mut impl Write,
    separate: bool,
    counters: &[Counter],
    rates: Option<&[Option<CounterRate>]>,
) -> std::io::Result<()> {
    if separate {
        writeln!(out)?;
    }
    // Names and string values are the JVM's (or whatever process wrote the file).
    for (index, c) in counters.iter().enumerate() {
        let value = c.value.to_string();
        write!(out, "{}={}", escape_control(c.name), escape_control(&value))?;
        if let Some(rate) = rates.and_then(|r| r[index]) {
            // Seconds per second need more places than events per second to show a 1 ms stop.
            let places = if rate.rate_unit == "s/s" { 6 } else { 3 };
            write!(
                out,
                " {:+} {:.places$} {}",
                rate.delta, rate.rate, rate.rate_unit
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// A counter with, under --rate, how it changed in the interval.
#[derive(Serialize)]
struct CounterLine<'a> {
    #[serde(flatten)]
    counter: &'a Counter<'a>,
    #[serde(flatten)]
    rate: Option<CounterRate>,
}

/// One JSON line: the JVM, the route, the time and the counters (with their rates).
pub fn write_perf_json(
    out: &mut impl Write,
    reader: &Reader,
    snapshot: &Snapshot,
    counters: &[Counter],
    rates: Option<&IntervalRates>,
) -> std::io::Result<()> {
    let taken_at = snapshot
        .taken_at()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let lines: Vec<CounterLine> = counters
        .iter()
        .enumerate()
        .map(|(index, counter)| CounterLine {
            counter,
            rate: rates.and_then(|(_, r)| r[index]),
        })
        .collect();
    let mut doc = serde_json::json!({
        "pid": reader.pid(),
        "route": reader.route(),
        "timestamp": taken_at,
        "counters": lines,
    });
    if let Some((elapsed, _)) = rates {
        doc["interval_seconds"] = serde_json::json!(elapsed.as_secs_f64());
    }
    serde_json::to_writer(&mut *out, &doc)?;
    writeln!(out)
}

/// `--time-snapshots`: one line with what a snapshot costs, and the route it took.
pub fn write_perf_cost(
    out: &mut impl Write,
    cost: &SnapshotCost,
    reader: &Reader,
) -> std::io::Result<()> {
    writeln!(
        out,
        "median {:.2} us, p99 {:.2} us, mean {:.2} us per snapshot ({} snapshots, {} counters, {})",
        cost.median_us,
        cost.p99_us,
        cost.mean_us,
        cost.snapshots,
        cost.counters,
        serde_json::to_string(reader.route()).unwrap_or_default()
    )
}
