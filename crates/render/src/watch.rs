//! `pauselab watch`'s text: one row per interval with the JVM's safepoints and GC beside
//! what the host did, and a line of likely causes under an interval that stalled.

use pauselab_host::pressure::PressureDelta;
use pauselab_host::watch::{CollectorSample, Interval};
use pauselab_pause::input::escape_control;
use serde::Serialize;

use super::probe::format_utc_time;
use super::table::{fit_number, Align, Column, Table};

/// The text table: fixed columns wide enough for realistic values (larger ones are
/// shortened with a k/M/G suffix to stay inside, see [`fit_number`]), one per collector the
/// JVM has, and the blocked threads as free text at the end.
pub fn watch_table(collectors: &[CollectorSample]) -> Table {
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

/// One interval as a row of `watch_table`, and when it stalled, a line with its likely causes.
pub fn watch_line(
    table: &Table,
    collectors: &[CollectorSample],
    end_unix_ms: u64,
    i: &Interval,
) -> String {
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

/// One interval as a JSON line (`--json`).
#[derive(Serialize)]
struct IntervalLine<'a> {
    pid: u32,
    /// End of the interval, milliseconds since the Unix epoch.
    end_unix_ms: u64,
    #[serde(flatten)]
    interval: &'a Interval,
}

/// `--json`: one object per interval, on its own line.
pub fn write_watch_json(
    out: &mut impl std::io::Write,
    pid: u32,
    end_unix_ms: u64,
    interval: &Interval,
) -> anyhow::Result<()> {
    let line = IntervalLine {
        pid,
        end_unix_ms,
        interval,
    };
    writeln!(out, "{}", serde_json::to_string(&line)?)?;
    Ok(())
}
