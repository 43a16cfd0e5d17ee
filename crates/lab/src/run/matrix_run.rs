//! Running a whole matrix plan: one ordinary run per cell and repeat, each into its own
//! bundle in the matrix directory (its journal undone before the next starts),
//! `matrix.json` rewritten after each, and the runs' answers combined as a run's JDKs'
//! are. What one run does is the [`Executor`]'s: the real one starts JVMs and writes the
//! bundle; a test's may only say what a run would have answered.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pauselab_bundle::{MatrixRun, Vulnerable, MATRIX, MATRIX_FORMAT};

use crate::experiment::Experiment;
use crate::host::sys;
use crate::run::matrix::{Plan, PlannedRun};
use crate::run::runner::{create_empty_dir, RunOptions};
use crate::LabError;

/// One run of the matrix, as its executor gives it back.
#[derive(Debug, Clone)]
pub struct Executed {
    /// The run's answer (its bundle's `result`).
    pub result: Vulnerable,
    /// The run was cut short (SIGINT, SIGTERM): the matrix stops after it.
    pub interrupted: bool,
    /// Host changes the run could not undo.
    pub cleanup_failures: Vec<String>,
}

/// Runs one run of a matrix into the bundle `options.out`.
pub trait Executor {
    /// Runs `experiment` (the cell's, `text` its TOML) as `options` say; stops early when
    /// `stop` is set, or fails with [`LabError::Interrupted`] before it changed anything.
    fn execute(
        &mut self,
        experiment: Experiment,
        text: &str,
        options: RunOptions,
        stop: &Arc<AtomicBool>,
    ) -> Result<Executed, LabError>;
}

/// Hears how the matrix goes (the CLI prints it).
pub trait MatrixObserver {
    /// The matrix directory is made; the first run is next.
    fn started(&mut self);
    /// Run `number` (from 1) of `total`, bundle `name`, is next; about `remaining` is left.
    fn run_starting(&mut self, number: usize, total: usize, name: &str, remaining: Duration);
    /// The run into `name` has ended with `executed`.
    fn run_done(&mut self, name: &str, executed: &Executed);
}

/// What a matrix is to run.
pub struct Matrix<'a> {
    /// The experiment as written, `text` its TOML; each cell runs its `for_cell` variant.
    pub experiment: &'a Experiment,
    pub text: &'a str,
    /// How the user named it (a built-in name or a file), for messages.
    pub named: &'a str,
    pub plan: &'a Plan,
    /// The matrix directory (must not exist or be empty).
    pub dir: PathBuf,
    /// JDK homes or majors, as every run takes them.
    pub jdks: Vec<PathBuf>,
    pub no_fault: bool,
    /// Where journals and scratch areas live.
    pub state_dir: PathBuf,
}

/// What a matrix did.
#[derive(Debug, Clone)]
pub struct MatrixOutcome {
    /// `matrix.json` as last written.
    pub record: MatrixRun,
    /// Each run's answer, in the order they ran.
    pub results: Vec<Vulnerable>,
    /// The runs' answers combined; an interrupted matrix is never "not vulnerable".
    pub result: Vulnerable,
}

impl MatrixOutcome {
    /// How many runs were vulnerable.
    pub fn vulnerable_runs(&self) -> usize {
        self.results
            .iter()
            .filter(|r| **r == Vulnerable::Yes)
            .count()
    }
}

/// Runs every run of `matrix.plan` in its order through `executor`, until the end, an
/// interruption (`stop`) or a failed run (the error names it and where the runs before it
/// are; `matrix.json` says it was interrupted).
pub fn run_matrix(
    matrix: &Matrix<'_>,
    executor: &mut dyn Executor,
    stop: &Arc<AtomicBool>,
    observer: &mut dyn MatrixObserver,
) -> Result<MatrixOutcome, LabError> {
    let (plan, dir) = (matrix.plan, &matrix.dir);
    create_empty_dir(dir)?;
    observer.started();
    let default_gc = matrix.experiment.gc();
    let mut record = MatrixRun {
        format: MATRIX_FORMAT.to_string(),
        experiment: matrix.experiment.name.clone(),
        cells: (0..plan.cells.len())
            .map(|cell| {
                let mut entry = plan.cell_entry(PlannedRun { cell, repeat: 0 }, default_gc);
                entry.repeat = 0;
                entry
            })
            .collect(),
        repeats: plan.repeats,
        duration_s: plan.duration.as_secs_f64(),
        expected_duration_s: plan.expected.as_secs_f64(),
        actual_duration_s: None,
        bundles: Vec::new(),
        interrupted: false,
    };
    write_matrix(dir, &record)?;
    let begin = Instant::now();
    let mut results = Vec::new();
    for (number, planned) in plan.runs.iter().enumerate() {
        if stop.load(Ordering::SeqCst) {
            record.interrupted = true;
            break;
        }
        let name = plan.bundle_name(*planned);
        let cell = &plan.cells[planned.cell];
        let remaining = plan.per_run * (plan.runs.len() - number) as u32;
        observer.run_starting(number + 1, plan.runs.len(), &name, remaining);
        let experiment = matrix
            .experiment
            .for_cell(cell)
            .map_err(|e| LabError::Experiment(format!("lab run {}: {e}", matrix.named)))?;
        let options = RunOptions {
            duration: Some(plan.duration),
            jdks: matrix.jdks.clone(),
            out: dir.join(&name),
            disk: cell.disk.clone(),
            no_fault: matrix.no_fault,
            state_dir: matrix.state_dir.clone(),
            cell: Some(plan.cell_entry(*planned, default_gc)),
        };
        let executed = match executor.execute(experiment, matrix.text, options, stop) {
            Ok(executed) => executed,
            Err(LabError::Interrupted) => {
                record.interrupted = true;
                break;
            }
            Err(e) => {
                record.interrupted = true;
                record.actual_duration_s = Some(begin.elapsed().as_secs_f64());
                write_matrix(dir, &record)?;
                return Err(LabError::MatrixRun {
                    named: matrix.named.to_string(),
                    bundle: name,
                    dir: dir.clone(),
                    source: Box::new(e),
                });
            }
        };
        observer.run_done(&name, &executed);
        results.push(executed.result);
        record.bundles.push(name);
        record.interrupted = executed.interrupted;
        record.actual_duration_s = Some(begin.elapsed().as_secs_f64());
        write_matrix(dir, &record)?;
        if executed.interrupted {
            break;
        }
    }
    record.actual_duration_s = Some(begin.elapsed().as_secs_f64());
    write_matrix(dir, &record)?;
    let result = match Vulnerable::combine(&results) {
        Vulnerable::No if record.interrupted => Vulnerable::Inconclusive,
        combined => combined,
    };
    Ok(MatrixOutcome {
        record,
        results,
        result,
    })
}

/// Writes `matrix.json` into the matrix directory `dir` (again after every run, so a
/// matrix stopped half-way still lists the bundles it made).
fn write_matrix(dir: &Path, matrix: &MatrixRun) -> Result<(), LabError> {
    sys::write_json(&dir.join(MATRIX), matrix)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{Cell, Gc};

    /// Says what each run would have answered, without a JVM (the loop is the point here;
    /// real runs are tests/lab_cli.rs's), and remembers what it was asked to run.
    struct Scripted {
        answers: Vec<Result<Executed, LabError>>,
        asked: Vec<(PathBuf, Option<Gc>, String, Duration)>,
    }

    impl Executor for Scripted {
        fn execute(
            &mut self,
            experiment: Experiment,
            _text: &str,
            options: RunOptions,
            _stop: &Arc<AtomicBool>,
        ) -> Result<Executed, LabError> {
            let cell = options.cell.expect("each run knows its cell");
            self.asked.push((
                options.out,
                experiment.gc(),
                format!("{}/{}", cell.repeat, cell.repeats),
                options.duration.expect("the plan's duration"),
            ));
            self.answers.remove(0)
        }
    }

    /// Remembers the lines the CLI would print.
    #[derive(Default)]
    struct Lines(Vec<String>);

    impl MatrixObserver for Lines {
        fn started(&mut self) {
            self.0.push("started".into());
        }
        fn run_starting(&mut self, number: usize, total: usize, name: &str, left: Duration) {
            self.0
                .push(format!("{number}/{total} {name} {}s", left.as_secs()));
        }
        fn run_done(&mut self, name: &str, executed: &Executed) {
            self.0.push(format!("{name} {}", executed.result.as_str()));
        }
    }

    fn answer(result: Vulnerable, interrupted: bool) -> Result<Executed, LabError> {
        Ok(Executed {
            result,
            interrupted,
            cleanup_failures: Vec::new(),
        })
    }

    /// G1 and Parallel, twice, interleaved; a fresh matrix directory.
    fn two_by_two(name: &str) -> (Experiment, Plan, PathBuf) {
        let (experiment, _) = Experiment::load("hsperf-mmap").unwrap();
        let cell = |gc| Cell {
            gc: Some(gc),
            filesystem: None,
            mount_options: None,
            disk: None,
        };
        let run = |cell, repeat| PlannedRun { cell, repeat };
        let plan = Plan {
            cells: vec![cell(Gc::G1), cell(Gc::Parallel)],
            repeats: 2,
            runs: vec![run(0, 1), run(1, 1), run(1, 2), run(0, 2)],
            duration: Duration::from_secs(30),
            per_run: Duration::from_secs(40),
            expected: Duration::from_secs(160),
        };
        let dir =
            std::env::temp_dir().join(format!("pauselab-matrix-run-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        (experiment, plan, dir)
    }

    fn matrix<'a>(experiment: &'a Experiment, plan: &'a Plan, dir: &Path) -> Matrix<'a> {
        Matrix {
            experiment,
            text: "",
            named: "hsperf-mmap",
            plan,
            dir: dir.to_path_buf(),
            jdks: Vec::new(),
            no_fault: true,
            state_dir: dir.join("state"),
        }
    }

    fn written(dir: &Path) -> MatrixRun {
        serde_json::from_str(&std::fs::read_to_string(dir.join(MATRIX)).unwrap()).unwrap()
    }

    #[test]
    fn every_run_of_the_plan_runs_its_cell_in_order_and_one_vulnerable_run_decides() {
        let (experiment, plan, dir) = two_by_two("all");
        let mut executor = Scripted {
            answers: vec![
                answer(Vulnerable::No, false),
                answer(Vulnerable::Yes, false),
                answer(Vulnerable::No, false),
                answer(Vulnerable::Inconclusive, false),
            ],
            asked: Vec::new(),
        };
        let mut lines = Lines::default();
        let stop = Arc::new(AtomicBool::new(false));
        let done = run_matrix(
            &matrix(&experiment, &plan, &dir),
            &mut executor,
            &stop,
            &mut lines,
        )
        .unwrap();
        let asked: Vec<String> = executor
            .asked
            .iter()
            .map(|(out, gc, repeat, duration)| {
                format!(
                    "{} {} {repeat} {}s",
                    out.strip_prefix(&dir).unwrap().display(),
                    gc.unwrap().name(),
                    duration.as_secs()
                )
            })
            .collect();
        assert_eq!(
            asked,
            [
                "G1-r1 G1 1/2 30s",
                "Parallel-r1 Parallel 1/2 30s",
                "Parallel-r2 Parallel 2/2 30s",
                "G1-r2 G1 2/2 30s"
            ]
        );
        assert_eq!(
            lines.0[..3],
            ["started", "1/4 G1-r1 160s", "G1-r1 not_vulnerable"]
        );
        assert_eq!(lines.0[7], "4/4 G1-r2 40s");
        assert_eq!(done.result, Vulnerable::Yes);
        assert_eq!(done.vulnerable_runs(), 1);
        let record = written(&dir);
        assert_eq!(record, done.record);
        assert_eq!(
            record.bundles,
            ["G1-r1", "Parallel-r1", "Parallel-r2", "G1-r2"]
        );
        assert!(!record.interrupted && record.actual_duration_s.is_some());
        assert_eq!(record.cells.len(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_interrupted_matrix_stops_after_the_run_and_cannot_say_not_vulnerable() {
        let (experiment, plan, dir) = two_by_two("interrupted");
        let mut executor = Scripted {
            answers: vec![answer(Vulnerable::No, false), answer(Vulnerable::No, true)],
            asked: Vec::new(),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let m = matrix(&experiment, &plan, &dir);
        let done = run_matrix(&m, &mut executor, &stop, &mut Lines::default()).unwrap();
        assert_eq!(executor.asked.len(), 2);
        assert_eq!(done.results, [Vulnerable::No, Vulnerable::No]);
        assert_eq!(done.result, Vulnerable::Inconclusive);
        assert!(written(&dir).interrupted);
        // Stopped before the first run: nothing ran, and no answer is no "no".
        std::fs::remove_dir_all(&dir).unwrap();
        stop.store(true, Ordering::SeqCst);
        let done = run_matrix(&m, &mut executor, &stop, &mut Lines::default()).unwrap();
        assert!(done.results.is_empty() && done.record.bundles.is_empty());
        assert_eq!(done.result, Vulnerable::Inconclusive);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_run_names_itself_and_where_the_runs_before_it_are() {
        let (experiment, plan, dir) = two_by_two("failed");
        let mut executor = Scripted {
            answers: vec![
                answer(Vulnerable::Yes, false),
                Err(LabError::Java("java: not found".into())),
            ],
            asked: Vec::new(),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let m = matrix(&experiment, &plan, &dir);
        let error = run_matrix(&m, &mut executor, &stop, &mut Lines::default()).unwrap_err();
        let source = std::error::Error::source(&error).map(|s| s.to_string());
        assert_eq!(
            format!("{error}: {}", source.unwrap()),
            format!(
                "lab run hsperf-mmap: Parallel-r1 (the cells before it are in {}): java: not found",
                dir.display()
            )
        );
        let record = written(&dir);
        assert_eq!(record.bundles, ["G1-r1"]);
        assert!(record.interrupted);
        // The directory now holds a matrix: another one is refused before anything runs.
        let again = run_matrix(&m, &mut executor, &stop, &mut Lines::default()).unwrap_err();
        assert_eq!(
            again.to_string(),
            format!(
                "{}: output directory is not empty; choose another --out",
                dir.display()
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
