//! `lab list` (the built-in experiments) and `lab cleanup` (what was undone) on the
//! terminal or as JSON.

use std::io::{self, Write};
use std::path::Path;
use std::time::Duration;

use pauselab_lab::experiment::Experiment;
use pauselab_lab::journal::CleanupReport;

use super::lab_plan::human_duration;

/// A built-in experiment as `lab list` shows it.
pub struct ListedExperiment {
    /// The experiment itself.
    pub experiment: Experiment,
    /// Wall time of a run on one JDK.
    pub expected: Duration,
    /// What it needs root for (empty: runs as anyone).
    pub root_for: Vec<&'static str>,
}

/// `lab list`: one line per built-in experiment, or their JSON.
pub fn print_experiments(
    out: &mut dyn Write,
    listed: &[ListedExperiment],
    json: bool,
) -> anyhow::Result<()> {
    if json {
        let rows: Vec<serde_json::Value> = listed
            .iter()
            .map(|l| {
                let e = &l.experiment;
                serde_json::json!({
                    "name": e.name,
                    "description": e.description,
                    "duration": e.duration,
                    "schedule": e.schedule,
                    "expected_duration_s": l.expected.as_secs(),
                    "needs_root": !l.root_for.is_empty(),
                    "root_for": l.root_for,
                    "variants": e.variants.iter().map(|v| v.name.clone()).collect::<Vec<_>>(),
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)?;
        return Ok(());
    }
    for l in listed {
        writeln!(
            out,
            "{:<16} {:>6}  {:<4}  {}",
            l.experiment.name,
            format!("~{}", human_duration(l.expected)),
            if l.root_for.is_empty() { "" } else { "root" },
            l.experiment.description
        )?;
    }
    writeln!(
        out,
        "(expected duration on one JDK; each --jdk adds as much; \"root\": runs only as root)"
    )?;
    Ok(())
}

/// What `lab cleanup` did (what it could not undo goes to stderr as warnings); whether
/// anything could not be undone.
pub fn print_cleanup(
    out: &mut dyn Write,
    reports: &[CleanupReport],
    journals: &Path,
    json: bool,
) -> io::Result<bool> {
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(reports)?)?;
    } else if reports.is_empty() {
        writeln!(
            out,
            "nothing to clean up (no journals in {})",
            journals.display()
        )?;
    }
    let mut failed = false;
    for r in reports {
        if r.running {
            if !json {
                writeln!(
                    out,
                    "{}: run {} is still running; left alone",
                    r.journal.display(),
                    r.run_id
                )?;
            }
            continue;
        }
        if !json {
            writeln!(out, "run {}: undid {} change(s)", r.run_id, r.undone.len())?;
            for u in &r.undone {
                writeln!(out, "  undone: {u}")?;
            }
        }
        for f in &r.failures {
            failed = true;
            pauselab_pause::eprintln_lossy!("pauselab: warning: {f}");
        }
    }
    Ok(failed)
}
