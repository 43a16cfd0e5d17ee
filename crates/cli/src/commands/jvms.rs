//! `pauselab jvms`: every HotSpot JVM on this host (found by its libjvm.so mapping, so also
//! those with -XX:+PerfDisableSharedMem and those in containers), with where its counters
//! can be read from.

use std::io::Write;
use std::process::ExitCode;

use pauselab_hsperf::{discover_jvms, JvmDetails, JvmProcess, PerfData, Route, Source};
use pauselab_pause::input::escape_control;
use pauselab_pause::Collector;
use serde::Serialize;

use super::table::Table;

#[derive(clap::Args)]
pub struct Args {
    /// A JSON array, one object per JVM
    #[arg(long)]
    json: bool,
}

/// One JVM with what could be read from its counters.
#[derive(Serialize)]
struct Listed {
    #[serde(flatten)]
    process: JvmProcess,
    /// True if the counters are shared in a file (visible to jps/jstat/jcmd).
    shared: bool,
    /// Where pauselab read the counters from: "file", "memory", or null.
    source: Option<&'static str>,
    /// Why the counters could not be read, if so.
    error: Option<String>,
    #[serde(flatten)]
    details: JvmDetails,
}

fn describe(process: JvmProcess) -> Listed {
    let (source, details, error) = match pauselab_hsperf::Reader::open(process.pid, Source::Auto)
        .and_then(|mut r| Ok((r.route().clone(), r.snapshot()?)))
    {
        Ok((route, snapshot)) => (
            Some(match route {
                Route::File { .. } => "file",
                Route::Memory { .. } => "memory",
            }),
            JvmDetails::from_snapshot(&snapshot),
            None,
        ),
        Err(e) => (None, JvmDetails::default(), Some(e.to_string())),
    };
    Listed {
        shared: process.shares_perf_data(),
        process,
        source,
        error,
        details,
    }
}

fn uptime(seconds: Option<f64>) -> String {
    let Some(s) = seconds else {
        return "-".into();
    };
    let s = s as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        3600..=86_399 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d{:02}h", s / 86_400, s % 86_400 / 3600),
    }
}

fn perf_column(l: &Listed) -> String {
    match (&l.process.perf_data, l.source, &l.error) {
        (PerfData::File { .. }, Some(src), _) => format!("shared, read from {src}"),
        (PerfData::MemoryOnly, Some(src), _) => format!("not shared, read from {src}"),
        (PerfData::Disabled, _, _) => "none (-XX:-UsePerfData)".into(),
        (_, _, Some(_)) => "unreadable (error below)".into(),
        (PerfData::Unknown { .. }, _, _) => "unknown (reason below)".into(),
        _ => "-".into(),
    }
}

/// Why a JVM's counters could not be read, or where they are is unknown: one line, below
/// the table.
fn problem(l: &Listed) -> Option<String> {
    let pid = l.process.pid;
    match (&l.error, &l.process.perf_data) {
        // Without perf data there is nothing to read: the row says so.
        (_, PerfData::Disabled) => None,
        (Some(error), _) => Some(format!("pid {pid}: counters unreadable: {error}")),
        (None, PerfData::Unknown { reason }) => {
            Some(format!("pid {pid}: perf data place unknown: {reason}"))
        }
        _ => None,
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let listed: Vec<Listed> = discover_jvms().into_iter().map(describe).collect();
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&listed)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = listed
        .iter()
        .map(|l| {
            let p = &l.process;
            let main = l
                .details
                .command
                .as_deref()
                .and_then(|c| c.split_whitespace().next())
                .map(str::to_string)
                .or_else(|| p.main_class.clone())
                .unwrap_or_else(|| "-".into());
            let pid = if p.ns_pid != p.pid {
                format!("{} ({})", p.pid, p.ns_pid)
            } else {
                p.pid.to_string()
            };
            [
                pid,
                p.user.clone().unwrap_or_else(|| p.uid.to_string()),
                l.details.java_version.clone().unwrap_or_else(|| "-".into()),
                l.details.gc.map_or("-", Collector::name).to_string(),
                uptime(p.uptime_seconds),
                main,
                perf_column(l),
            ]
            // Command lines and user names come from other processes: one line each.
            .map(|cell| escape_control(&cell).into_owned())
            .to_vec()
        })
        .collect();
    let table = Table::fitted(
        &["PID", "USER", "JDK", "GC", "UPTIME", "MAIN", "PERF DATA"],
        &rows,
        2,
    );
    writeln!(out, "{}", table.header())?;
    for row in &rows {
        writeln!(out, "{}", table.row(row))?;
    }
    // Errors are as long as they need to be: below the table, so its columns stay narrow.
    let errors: Vec<String> = listed.iter().filter_map(problem).collect();
    if !errors.is_empty() {
        writeln!(out)?;
        for error in errors {
            writeln!(out, "{}", escape_control(&error))?;
        }
    }
    if rows.is_empty() {
        eprintln!("no HotSpot JVM found (processes of other users are only visible to root)");
    }
    Ok(ExitCode::SUCCESS)
}
