//! `pauselab jstat`'s output: jstat's own table, byte for byte, or one JSON object per
//! sample.

use std::io::Write;
use std::time::UNIX_EPOCH;

use pauselab_hsperf::jstat::JstatFormatter;
use pauselab_hsperf::Snapshot;
use pauselab_pause::input::escape_control;

/// `--json`: one line with the JVM, the option, the time and each column's value.
pub fn write_jstat_json(
    out: &mut impl Write,
    pid: u32,
    formatter: &JstatFormatter,
    snapshot: &Snapshot,
) -> std::io::Result<()> {
    let names = formatter.column_names();
    let columns: Vec<_> = names
        .iter()
        .zip(formatter.cells(snapshot))
        .map(|(name, value)| serde_json::json!({"name": name, "value": value}))
        .collect();
    let time = snapshot
        .taken_at()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let doc = serde_json::json!({
        "pid": pid,
        "option": formatter.option(),
        "timestamp": time,
        "columns": columns,
    });
    writeln!(out, "{doc}")
}

/// One sample as jstat prints it: its row, after the header when `header` (jstat prints it
/// once, or every N samples with -h N).
pub fn write_jstat_row(
    out: &mut impl Write,
    formatter: &JstatFormatter,
    snapshot: &Snapshot,
    header: bool,
) -> std::io::Result<()> {
    let header = if header {
        format!("{}\n", formatter.header())
    } else {
        String::new()
    };
    // A row quotes counter strings (-printcompilation's method, -gccause's causes).
    let row = formatter.row(snapshot);
    writeln!(out, "{header}{}", escape_control(&row))
}
