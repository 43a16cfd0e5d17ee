//! A matrix run on the terminal: a line per run as it goes (stderr), then the matrix of
//! its bundles, its conclusions and the plan's prediction against the time taken.

use std::io::{self, Write};
use std::path::Path;
use std::time::Duration;

use pauselab_lab::experiment::Experiment;
use pauselab_lab::java::Jdk;
use pauselab_lab::matrix::Plan;
use pauselab_lab::{Executed, MatrixObserver, MatrixOutcome};
use pauselab_report::matrix::Matrix;

use super::lab_plan::{human_duration, print_plan};
use super::lab_table::result_word;

/// Prints the plan once the matrix directory is made, then a line per run, on stderr.
pub struct MatrixLines<'a> {
    /// The experiment each cell runs.
    pub experiment: &'a Experiment,
    /// The matrix's cells, in the order they run.
    pub plan: &'a Plan,
    /// The JDKs each cell runs on.
    pub jdks: &'a [Jdk],
}

impl MatrixObserver for MatrixLines<'_> {
    fn started(&mut self) {
        // The plan printed where the runs' lines go; a broken stderr stops nothing.
        let _ = print_plan(
            &mut io::stderr().lock(),
            self.experiment,
            self.plan,
            self.jdks,
            false,
        );
    }

    fn run_starting(&mut self, number: usize, total: usize, name: &str, remaining: Duration) {
        pauselab_pause::eprintln_lossy!(
            "run {number}/{total}: {name} (about {} left)",
            human_duration(remaining)
        );
    }

    fn run_done(&mut self, name: &str, executed: &Executed) {
        for failure in &executed.cleanup_failures {
            pauselab_pause::eprintln_lossy!(
                "pauselab: warning: could not undo {failure}; run `pauselab lab cleanup`"
            );
        }
        pauselab_pause::eprintln_lossy!("  {name}: {}", result_word(executed.result));
    }
}

/// The matrix of the bundles made (or the JSON of it all), its conclusions, the time it
/// took against the plan's.
pub fn print_matrix(
    out: &mut dyn Write,
    dir: &Path,
    done: &MatrixOutcome,
    matrix: &Matrix,
    json: bool,
) -> anyhow::Result<()> {
    let record = &done.record;
    if json {
        let doc = serde_json::json!({
            "matrix_dir": dir,
            "result": done.result,
            "vulnerable_runs": done.vulnerable_runs(),
            "run": record,
            "matrix": matrix,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(());
    }
    let actual = record.actual_duration_s.unwrap_or(0.0);
    out.write_all(pauselab_report::text::matrix_text(matrix).as_bytes())?;
    writeln!(
        out,
        "experiment {}: {} (vulnerable in {} of {} runs); {} of {} cells consistent across repeats",
        record.experiment,
        result_word(done.result),
        done.vulnerable_runs(),
        done.results.len(),
        matrix.consistent_cells,
        matrix.cells
    )?;
    writeln!(
        out,
        "took {:.0} s, planned {:.0} s ({:+.0} %)",
        actual,
        record.expected_duration_s,
        (actual / record.expected_duration_s.max(1.0) - 1.0) * 100.0
    )?;
    writeln!(
        out,
        "matrix: {} (pauselab report --matrix {} --html matrix.html)",
        dir.display(),
        dir.display()
    )?;
    Ok(())
}
