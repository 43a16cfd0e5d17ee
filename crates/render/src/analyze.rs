//! `pauselab analyze`'s terminal text and `--json`: one JVM's report (with a recording's
//! section), several JVMs' reports, the warnings and the `--fail-on` conditions that hold.

use std::io::Write;

use anyhow::Context as _;
use pauselab_analysis::{render_text, Report};
use pauselab_jfr::RecordingExtras;
use pauselab_pause::input::escape_control;

use super::jfr;

/// The reports of one JVM each, and why each JVM after the first is another one.
pub struct AnalyzedJvms<'a> {
    /// One report per JVM, in the order the inputs named them.
    pub reports: &'a [Report],
    /// Per report, why its JVM is not the one before it (`None` for the first).
    pub separated_because: &'a [Option<String>],
    /// What the recordings add, when the input was JFR: each JVM's recordings in turn, in
    /// the order of the reports.
    pub jfr: Option<&'a [RecordingExtras]>,
}

/// The warnings of every report on stderr, one line each whatever the files' names and
/// text hold.
pub fn print_analysis_warnings(reports: &[Report]) {
    for w in reports.iter().flat_map(|r| &r.warnings) {
        let line = match w.line {
            Some(line) => format!("{}:{line}: {}", w.file, w.message),
            None => format!("{}: {}", w.file, w.message),
        };
        pauselab_pause::eprintln_lossy!("pauselab: warning: {}", escape_control(&line));
    }
    if reports.len() > 1 {
        pauselab_pause::eprintln_lossy!(
            "pauselab: the inputs come from {} different JVMs; each is analysed on its own",
            reports.len()
        );
    }
}

/// The reports as text or as one JSON object.
pub fn write_analysis(out: &mut impl Write, jvms: &AnalyzedJvms, json: bool) -> anyhow::Result<()> {
    match (jvms.reports, json) {
        ([one], true) => {
            match jvms.jfr {
                Some(jfr) => {
                    let both = jfr::JfrReport { report: one, jfr };
                    serde_json::to_writer_pretty(&mut *out, &both)
                }
                None => serde_json::to_writer_pretty(&mut *out, one),
            }
            .context("writing JSON")?;
            writeln!(out)?;
        }
        ([one], false) => {
            out.write_all(render_text(one).as_bytes())?;
            if let Some(jfr) = jvms.jfr {
                out.write_all(jfr::render(jfr).as_bytes())?;
            }
        }
        (several, true) => {
            let mut at = 0;
            let reports = several
                .iter()
                .map(|report| match jvms.jfr {
                    Some(all) => serde_json::to_value(jfr::JfrReport {
                        report,
                        jfr: recordings_of(report, all, &mut at),
                    }),
                    None => serde_json::to_value(report),
                })
                .collect::<Result<Vec<_>, _>>()
                .context("writing JSON")?;
            let json = serde_json::json!({
                "jvm_count": several.len(),
                "separated_because": jvms.separated_because,
                "jvms": reports,
            });
            serde_json::to_writer_pretty(&mut *out, &json).context("writing JSON")?;
            writeln!(out)?;
        }
        (several, false) => {
            let mut at = 0;
            for (i, report) in several.iter().enumerate() {
                let files: Vec<&str> = report.inputs.iter().map(|f| f.file.as_str()).collect();
                let why = jvms.separated_because[i].as_deref();
                writeln!(
                    out,
                    "=== JVM {} of {}: {}{}\n",
                    i + 1,
                    several.len(),
                    files.join(", "),
                    why.map_or(String::new(), |why| format!(" (another JVM: {why})"))
                )?;
                out.write_all(render_text(report).as_bytes())?;
                if let Some(all) = jvms.jfr {
                    out.write_all(jfr::render(recordings_of(report, all, &mut at)).as_bytes())?;
                }
                writeln!(out)?;
            }
        }
    }
    Ok(())
}

/// The recordings of `report`'s JVM: those of `all` from `at` on that are its inputs
/// (each JVM's recordings follow the previous JVM's); `at` moves past them.
fn recordings_of<'a>(
    report: &Report,
    all: &'a [RecordingExtras],
    at: &mut usize,
) -> &'a [RecordingExtras] {
    let start = *at;
    while all
        .get(*at)
        .is_some_and(|r| report.inputs.iter().any(|input| input.file == r.file))
    {
        *at += 1;
    }
    &all[start..*at]
}

/// A `--fail-on` condition that holds for JVM `jvm` (0-based) of `jvms`, on stderr.
pub fn print_condition_holds(jvm: usize, jvms: usize, why: &str) {
    match jvms {
        1 => pauselab_pause::eprintln_lossy!("pauselab: --fail-on holds: {why}"),
        _ => {
            pauselab_pause::eprintln_lossy!("pauselab: --fail-on holds for JVM {}: {why}", jvm + 1)
        }
    }
}
