//! `pauselab jvms`'s table: a row per JVM, and below it why a JVM's counters could not be
//! read.

use pauselab_hsperf::{JvmDetails, JvmProcess, PerfData};
use pauselab_pause::input::escape_control;
use pauselab_pause::Collector;
use serde::Serialize;

use super::table::Table;

/// One JVM with what could be read from its counters.
#[derive(Serialize)]
pub struct ListedJvm {
    /// The process: pid, user, main class, uptime.
    #[serde(flatten)]
    pub process: JvmProcess,
    /// True if the counters are shared in a file (visible to jps/jstat/jcmd).
    pub shared: bool,
    /// Where pauselab read the counters from: "file", "memory", or null.
    pub source: Option<&'static str>,
    /// Why the counters could not be read, if so.
    pub error: Option<String>,
    /// What its counters say (Java version, collector, command), where they could be read.
    #[serde(flatten)]
    pub details: JvmDetails,
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

fn perf_column(l: &ListedJvm) -> String {
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
fn problem(l: &ListedJvm) -> Option<String> {
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

/// The table, then one line per JVM whose counters could not be read.
pub fn render_jvms(listed: &[ListedJvm]) -> String {
    let mut out = String::new();
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
    out.push_str(&table.header());
    out.push('\n');
    for row in &rows {
        out.push_str(&table.row(row));
        out.push('\n');
    }
    // Errors are as long as they need to be: below the table, so its columns stay narrow.
    let errors: Vec<String> = listed.iter().filter_map(problem).collect();
    if !errors.is_empty() {
        out.push('\n');
        for error in errors {
            out.push_str(&escape_control(&error));
            out.push('\n');
        }
    }
    out
}
