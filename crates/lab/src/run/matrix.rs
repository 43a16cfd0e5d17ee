//! The plan of a matrix run: every combination of the requested collectors, filesystems,
//! mount options and disks (the cells), each repeated, in an order that interleaves the
//! repeats, with the time it should take. Planning reads the host (programs on `PATH`, the
//! kernel's filesystems, each JDK's collectors) and changes nothing: a combination this
//! host cannot run is refused here, in one line, before the first cell starts.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::experiment::{Cell, Experiment, Filesystem, Gc, MountOptions, Schedule};
use crate::jvm::java::Jdk;
use crate::LabError;

/// The dimensions asked for on the command line; an empty one keeps the experiment's own
/// choice.
#[derive(Debug, Clone, Default)]
pub struct MatrixRequest {
    pub gcs: Vec<Gc>,
    pub filesystems: Vec<Filesystem>,
    pub mount_options: Vec<MountOptions>,
    /// Directories of the user's disks, each stressed instead of the slow device.
    pub disks: Vec<PathBuf>,
    /// Runs of each cell, at least 1.
    pub repeats: u32,
    /// `--no-fault`: the stressors on the host's own disk.
    pub no_fault: bool,
    /// Whether the slow device can be made (root).
    pub can_inject: bool,
}

/// One run of the plan: a cell and its repeat (from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedRun {
    pub cell: usize,
    pub repeat: u32,
}

/// What a matrix run will do.
#[derive(Debug, Clone)]
pub struct Plan {
    pub cells: Vec<Cell>,
    pub repeats: u32,
    /// In the order they run.
    pub runs: Vec<PlannedRun>,
    /// Each cell's run time.
    pub duration: Duration,
    /// Wall time of one run (set-up, turns, tear-down).
    pub per_run: Duration,
    /// Wall time of the whole plan.
    pub expected: Duration,
}

impl Plan {
    /// The manifest's `cell` for one run of the plan. `default_gc` is the collector the
    /// experiment's own flags select, recorded when `--gc` does not change it.
    pub fn cell_entry(
        &self,
        run: PlannedRun,
        default_gc: Option<Gc>,
    ) -> pauselab_bundle::CellEntry {
        let cell = &self.cells[run.cell];
        pauselab_bundle::CellEntry {
            label: cell.label(),
            gc: cell.gc.or(default_gc).map(|gc| gc.name().to_string()),
            filesystem: cell.filesystem.map(|fs| fs.name().to_string()),
            mount_options: cell.mount_options.as_ref().map(|o| o.to_string()),
            disk: cell.disk.clone(),
            repeat: run.repeat,
            repeats: self.repeats,
        }
    }

    /// The bundle directory of one run, inside the matrix directory.
    pub fn bundle_name(&self, run: PlannedRun) -> String {
        format!("{}-r{}", self.cells[run.cell].label(), run.repeat)
    }
}

/// Wall time of one run of `experiment`: about 10 s to set the host up and tear it down
/// with the slow device (its mkfs most of it; 2 s without it) and about 20 s per
/// preparation step, then each turn of `duration` plus about 2 s to stop its JVMs.
/// Measured on 2 shared cores: runs of hsperf-mmap at 60 s took 65-69 s each with the slow
/// device, at 45 s on a plain directory 46 s. Turns whose JVMs exit on their own end
/// earlier.
pub fn expected_run_duration(
    experiment: &Experiment,
    duration: Duration,
    jdks: usize,
    slow_device: bool,
) -> Duration {
    let turns = match experiment.schedule {
        Schedule::Together => 1,
        Schedule::OneByOne => experiment.variants.len() * jdks.max(1),
    } as u32;
    let set_up = Duration::from_secs(if slow_device { 10 } else { 2 });
    let preparation = Duration::from_secs(20) * experiment.prepare.len() as u32;
    set_up + preparation + (duration + Duration::from_secs(2)) * turns
}

/// Every combination of the request, in the order the dimensions are given, repeated
/// `repeats` times: repeat 1 runs the cells in order, repeat 2 in reverse, and so on, so
/// that drift over time (a warming host, a neighbour's build) falls on every cell alike.
/// Refuses, naming the first reason, a request this host cannot run.
pub fn plan(
    experiment: &Experiment,
    request: &MatrixRequest,
    jdks: &[Jdk],
    duration: Duration,
) -> Result<Plan, LabError> {
    let refuse = |why: String| Err(LabError::Experiment(why));
    if request.repeats == 0 {
        return refuse("--repeat must be at least 1".into());
    }
    let warmup = experiment.warmup.get();
    if !warmup.is_zero() && warmup >= duration {
        return refuse(format!(
            "a {} run leaves nothing to measure after the experiment's {} warm-up: give a longer --duration or a shorter --warmup",
            pauselab_pause::units::format_duration(duration),
            experiment.warmup,
        ));
    }
    let device_options = !request.filesystems.is_empty() || !request.mount_options.is_empty();
    if device_options {
        if !request.disks.is_empty() || request.no_fault {
            return refuse(
                "--fs and --mount-options choose how the slow device is made; --disk and --no-fault run without it: use one or the other".into(),
            );
        }
        if experiment.fault.is_none() {
            return refuse(format!(
                "experiment {} has no slow device ([fault]), so --fs and --mount-options have nothing to change",
                experiment.name
            ));
        }
        if !request.can_inject {
            return refuse(
                "--fs and --mount-options need the slow device, which needs root".into(),
            );
        }
    }
    for disk in &request.disks {
        if !disk.is_dir() {
            return refuse(format!("--disk {}: not a directory", disk.display()));
        }
    }
    let injects = request.disks.is_empty()
        && !request.no_fault
        && request.can_inject
        && experiment.fault.is_some();
    if injects {
        let mut filesystems = request.filesystems.clone();
        if filesystems.is_empty() {
            if let Some(fault) = &experiment.fault {
                filesystems.push(fault.slow_device_spec().fstype);
            }
        }
        for fs in filesystems {
            check_filesystem(fs)?;
        }
    }
    for gc in &request.gcs {
        for jdk in jdks {
            check_gc(jdk, *gc)?;
        }
    }

    let optional = |n: usize| n.max(1);
    let mut cells = Vec::new();
    for g in 0..optional(request.gcs.len()) {
        for f in 0..optional(request.filesystems.len()) {
            for m in 0..optional(request.mount_options.len()) {
                for d in 0..optional(request.disks.len()) {
                    cells.push(Cell {
                        gc: request.gcs.get(g).copied(),
                        filesystem: request.filesystems.get(f).copied(),
                        mount_options: request.mount_options.get(m).cloned(),
                        disk: request.disks.get(d).cloned(),
                    });
                }
            }
        }
    }
    let mut labels: Vec<String> = cells.iter().map(Cell::label).collect();
    labels.sort();
    if let Some(pair) = labels.windows(2).find(|pair| pair[0] == pair[1]) {
        return refuse(format!(
            "two cells would both be named {}: a dimension was given twice",
            pair[0]
        ));
    }
    for cell in &cells {
        experiment.for_cell(cell)?;
    }
    let runs: Vec<PlannedRun> = (1..=request.repeats)
        .flat_map(|repeat| {
            let order: Vec<usize> = if repeat % 2 == 1 {
                (0..cells.len()).collect()
            } else {
                (0..cells.len()).rev().collect()
            };
            order
                .into_iter()
                .map(move |cell| PlannedRun { cell, repeat })
        })
        .collect();
    let per_run = expected_run_duration(experiment, duration, jdks.len(), injects);
    Ok(Plan {
        expected: per_run * runs.len() as u32,
        cells,
        repeats: request.repeats,
        runs,
        duration,
        per_run,
    })
}

/// The filesystem needs its mkfs on `PATH` and the kernel's support.
fn check_filesystem(fs: Filesystem) -> Result<(), LabError> {
    let mkfs = fs.mkfs();
    if find_program(&mkfs).is_none() {
        return Err(LabError::Experiment(format!(
            "--fs {fs}: {mkfs} is not installed (not on PATH); install it or leave {fs} out (nothing was changed)"
        )));
    }
    let known = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    if !known.split_whitespace().any(|name| name == fs.name()) {
        return Err(LabError::Experiment(format!(
            "--fs {fs}: this kernel does not list {fs} in /proc/filesystems (load its module, e.g. `modprobe {fs}`); nothing was changed"
        )));
    }
    Ok(())
}

/// The JDK must start with the collector: `java -XX:+UseXGC -version`.
fn check_gc(jdk: &Jdk, gc: Gc) -> Result<(), LabError> {
    let flag = gc.flag();
    let output = std::process::Command::new(&jdk.java)
        .args([flag.as_str(), "-version"])
        .output()
        .map_err(|e| LabError::io(&jdk.java, "run", e))?;
    if output.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&output.stderr);
    let line = said
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no message");
    Err(LabError::Experiment(format!(
        "--gc {gc}: JDK {} ({}) cannot run it: `java {flag} -version` says: {line} (nothing was changed)",
        jdk.major,
        jdk.home.display()
    )))
}

/// The first executable `name` in the directories of `PATH`.
fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_disks() -> (PathBuf, PathBuf) {
        let base = std::env::temp_dir().join(format!("pauselab-plan-{}", std::process::id()));
        let (a, b) = (base.join("a"), base.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        (a, b)
    }

    #[test]
    fn every_combination_runs_once_per_repeat_in_interleaved_order() {
        let (experiment, _) = Experiment::load("hsperf-mmap").unwrap();
        let jdks = crate::jvm::java::resolve_jdks(&[]).unwrap();
        let (a, b) = two_disks();
        let request = MatrixRequest {
            gcs: vec![Gc::G1, Gc::Parallel],
            disks: vec![a.clone(), b],
            repeats: 3,
            no_fault: true,
            ..MatrixRequest::default()
        };
        let plan = plan(&experiment, &request, &jdks, Duration::from_secs(30)).unwrap();
        let labels: Vec<String> = plan.cells.iter().map(Cell::label).collect();
        assert_eq!(labels.len(), 4);
        assert_eq!(plan.cells[0].gc, Some(Gc::G1));
        assert_eq!(plan.cells[0].disk.as_deref(), Some(a.as_path()));
        assert_eq!(plan.runs.len(), 12);
        for cell in 0..4 {
            let repeats: Vec<u32> = plan
                .runs
                .iter()
                .filter(|r| r.cell == cell)
                .map(|r| r.repeat)
                .collect();
            assert_eq!(repeats, [1, 2, 3]);
        }
        // Repeat 2 runs the cells backwards: the first cell runs first, last, first.
        let order: Vec<usize> = plan.runs.iter().map(|r| r.cell).collect();
        assert_eq!(order, [0, 1, 2, 3, 3, 2, 1, 0, 0, 1, 2, 3]);
        assert_eq!(
            plan.per_run,
            Duration::from_secs(2 + 30 + 2),
            "no slow device"
        );
        assert_eq!(plan.expected, plan.per_run * 12);
        assert_eq!(plan.bundle_name(plan.runs[4]), format!("{}-r2", labels[3]));
    }

    #[test]
    fn combinations_the_host_cannot_run_are_refused_in_one_line() {
        let (experiment, _) = Experiment::load("hsperf-mmap").unwrap();
        let jdks = crate::jvm::java::resolve_jdks(&[]).unwrap();
        let refusal = |request: MatrixRequest| {
            let error = plan(&experiment, &request, &jdks, Duration::from_secs(30))
                .unwrap_err()
                .to_string();
            assert_eq!(error.lines().count(), 1, "{error}");
            error
        };
        let with_device = MatrixRequest {
            repeats: 1,
            can_inject: true,
            ..MatrixRequest::default()
        };
        let err = refusal(MatrixRequest {
            filesystems: vec![Filesystem::Xfs],
            no_fault: true,
            ..with_device.clone()
        });
        assert!(err.contains("use one or the other"), "{err}");
        let err = refusal(MatrixRequest {
            mount_options: vec!["noatime".parse().unwrap()],
            can_inject: false,
            ..with_device.clone()
        });
        assert!(err.contains("needs root"), "{err}");
        let err = refusal(MatrixRequest {
            gcs: vec![Gc::G1, "g1".parse().unwrap()],
            ..with_device.clone()
        });
        assert!(err.contains("named G1"), "{err}");
        let err = refusal(MatrixRequest {
            disks: vec![PathBuf::from("/nonexistent/disk")],
            no_fault: true,
            ..with_device.clone()
        });
        assert_eq!(err, "--disk /nonexistent/disk: not a directory");
    }
}
