//! Per-JDK preparation (`[[prepare]]` in an experiment): `java` commands run on each JDK
//! under test, one after the other, before any variant starts, e.g. to create a CDS archive
//! that the variants then map. Their files go to a directory in the run's scratch area
//! (`{prepared}`), removed with the scratch area at the end; their output goes to the bundle
//! (`prepare/<jdk>/<step>.out`).
//!
//! Placeholders, in step arguments and in the variants' command lines: `{prepared}` (that
//! JDK's preparation directory) and `{workloads_jar}` (pauselab-workloads.jar).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::experiment::PrepareStep;
use crate::host::journal::{Change, Journal};
use crate::jvm::java::{Jars, Jdk, PREPARED_PLACEHOLDER, WORKLOADS_JAR_PLACEHOLDER};
use crate::LabError;

/// Where the steps' output goes, below the bundle directory.
pub const PREPARE_DIR: &str = "prepare";
/// Every step's command line, exit code, time and created files, per JDK.
pub const PREPARED_JSON: &str = "prepared.json";

/// What the preparation did on one JDK.
#[derive(Debug, Clone, Serialize)]
pub struct JdkPreparation {
    pub jdk: String,
    /// `{prepared}` for this JDK.
    pub dir: PathBuf,
    pub steps: Vec<StepResult>,
    /// Why this JDK's variants cannot run, when a step failed.
    pub failure: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StepResult {
    pub name: String,
    pub command: Vec<String>,
    pub exit_code: Option<i32>,
    pub seconds: f64,
    /// Size in bytes of each file the step had to create.
    pub created: Vec<(String, u64)>,
}

/// The preparation of every JDK of a run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Prepared {
    pub jdks: Vec<JdkPreparation>,
}

impl Prepared {
    fn of(&self, jdk: &str) -> Option<&JdkPreparation> {
        self.jdks.iter().find(|p| p.jdk == jdk)
    }

    /// Why the variants of `jdk` are skipped, if its preparation failed.
    pub fn failure(&self, jdk: &str) -> Option<String> {
        self.of(jdk).and_then(|p| p.failure.clone())
    }

    /// Replaces the placeholders in a variant's command line on `jdk`.
    pub fn expand_command(&self, jdk: &str, jars: &Jars, command: &mut [String]) {
        let dir = self.of(jdk).map(|p| p.dir.as_path());
        for arg in command.iter_mut() {
            *arg = expand(arg, dir, jars);
        }
    }

    /// One line per JDK for the run's notes: each step's time, or the failure.
    pub fn notes(&self) -> Vec<String> {
        self.jdks
            .iter()
            .map(|p| {
                let steps: Vec<String> = p
                    .steps
                    .iter()
                    .map(|s| format!("{} {:.1} s", s.name, s.seconds))
                    .collect();
                match &p.failure {
                    Some(why) => format!("prepared {}: failed: {why}", p.jdk),
                    None => format!("prepared {}: {}", p.jdk, steps.join(", ")),
                }
            })
            .collect()
    }
}

fn expand(arg: &str, prepared: Option<&Path>, jars: &Jars) -> String {
    let mut text = arg.to_string();
    if let Some(dir) = prepared {
        text = text.replace(PREPARED_PLACEHOLDER, &dir.display().to_string());
    }
    if let Some(jar) = &jars.workloads {
        text = text.replace(WORKLOADS_JAR_PLACEHOLDER, &jar.display().to_string());
    }
    text
}

/// Runs every step on every JDK, in order, before the variants start. A failing step ends
/// that JDK's preparation (its variants are then skipped with the reason); Ctrl-C ends all.
#[allow(clippy::too_many_arguments)]
pub fn run(
    steps: &[PrepareStep],
    jdks: &[Jdk],
    jars: &Jars,
    scratch: &Path,
    out: &Path,
    journal: &mut Journal,
    run_id: &str,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str),
) -> Result<Prepared, LabError> {
    let mut prepared = Prepared::default();
    if steps.is_empty() {
        return Ok(prepared);
    }
    // The steps' JVMs are the run's processes too: killed by the undo if the run dies.
    journal.record(Change::Processes {
        run_id: run_id.to_string(),
    })?;
    for jdk in jdks {
        let dir = scratch.join(format!("prepared-{}", jdk.label));
        crate::host::fault::create_dir(journal, &dir)?;
        let logs = out.join(PREPARE_DIR).join(&jdk.label);
        fs::create_dir_all(&logs).map_err(|e| LabError::io(&logs, "create", e))?;
        let mut done = JdkPreparation {
            jdk: jdk.label.clone(),
            dir: dir.clone(),
            steps: Vec::new(),
            failure: None,
        };
        for step in steps {
            progress(&format!("preparing {}: {}", jdk.label, step.name));
            let log = logs.join(format!("{}.out", step.name));
            let (result, failure) = run_step(step, jdk, jars, &dir, &log, run_id, stop)?;
            done.steps.push(result);
            if let Some(why) = failure {
                done.failure = Some(format!("step {}: {why}; see {}", step.name, log.display()));
                break;
            }
        }
        prepared.jdks.push(done);
    }
    let record = out.join(PREPARE_DIR).join(PREPARED_JSON);
    let json = serde_json::to_string_pretty(&prepared).unwrap_or_default();
    pauselab_pause::output::write_file(&record, json.as_bytes())
        .map_err(|e| LabError::io(&record, "write", e))?;
    Ok(prepared)
}

fn run_step(
    step: &PrepareStep,
    jdk: &Jdk,
    jars: &Jars,
    dir: &Path,
    log: &Path,
    run_id: &str,
    stop: &AtomicBool,
) -> Result<(StepResult, Option<String>), LabError> {
    let args: Vec<String> = step
        .java
        .iter()
        .map(|a| expand(a, Some(dir), jars))
        .collect();
    let mut command_line = vec![jdk.java.display().to_string()];
    command_line.extend(args.iter().cloned());
    let output =
        pauselab_pause::output::create_file(log).map_err(|e| LabError::io(log, "create", e))?;
    let mut command = Command::new(&jdk.java);
    command
        .args(&args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(
            output
                .try_clone()
                .map_err(|e| LabError::io(log, "open", e))?,
        )
        .stderr(output);
    crate::host::isolation::isolate(&mut command, run_id, Default::default())?;
    let timeout = step.timeout.get();
    let begin = Instant::now();
    let mut child = command
        .spawn()
        .map_err(|e| LabError::Java(format!("{}: {e}", jdk.java.display())))?;
    let status = loop {
        if stop.load(Ordering::SeqCst) || begin.elapsed() > timeout {
            crate::host::sys::signal_group(&child, libc::SIGKILL);
            let _ = child.wait();
            if stop.load(Ordering::SeqCst) {
                return Err(LabError::Interrupted);
            }
            break None;
        }
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(LabError::Java(format!("{}: {e}", jdk.java.display()))),
        }
    };
    let mut result = StepResult {
        name: step.name.clone(),
        command: command_line,
        exit_code: status.and_then(|s| s.code()),
        seconds: begin.elapsed().as_secs_f64(),
        created: Vec::new(),
    };
    let failure = match status {
        None => Some(format!("took longer than {}", step.timeout)),
        Some(s) if !s.success() => Some(format!("{s}: {}", telling_line(log))),
        Some(_) => {
            let mut missing = None;
            for name in &step.creates {
                match fs::metadata(dir.join(name)) {
                    Ok(meta) => result.created.push((name.clone(), meta.len())),
                    Err(_) => {
                        missing = Some(format!("exited 0 but did not create {name}"));
                        break;
                    }
                }
            }
            missing
        }
    };
    Ok((result, failure))
}

/// The line of a step's output that says what went wrong: the first that mentions an error,
/// an exception or an unrecognised option, else the last one.
fn telling_line(path: &Path) -> String {
    let text = fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let telling = lines.iter().find(|l| {
        let lower = l.to_ascii_lowercase();
        ["error", "exception", "unrecognized"]
            .iter()
            .any(|w| lower.contains(w))
    });
    telling
        .or(lines.last())
        .map(|l| l.chars().take(200).collect())
        .unwrap_or_else(|| "no output".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step as an experiment file writes it (the timeout left at its default).
    fn step(name: &str, java: &[&str]) -> PrepareStep {
        toml::from_str(&format!("name = {name:?}\njava = {java:?}")).unwrap()
    }

    /// Steps on a real JDK: a good one creates its file, a failing one stops that JDK's
    /// preparation with the JVM's own error, and the undo removes `{prepared}`.
    #[test]
    fn steps_run_on_a_real_jdk_and_failures_name_the_step() {
        let state = std::env::temp_dir().join(format!("pauselab-prepare-{}", std::process::id()));
        let _ = fs::remove_dir_all(&state);
        let scratch = state.join("scratch");
        let out = state.join("out");
        fs::create_dir_all(&scratch).unwrap();
        let jdks = crate::jvm::java::resolve_jdks(&[PathBuf::from("17")]).unwrap();
        let jars = Jars {
            agent: None,
            workloads: None,
            benchmarks: None,
        };
        let mut journal = Journal::create(&state, "prepare-test", "test").unwrap();
        let settings = step("settings", &["-XshowSettings:properties", "-version"]);
        let mut archive = step(
            "archive",
            &["-Xshare:dump", "-XX:SharedArchiveFile={prepared}/base.jsa"],
        );
        archive.creates = vec!["base.jsa".into()];
        let mut broken = step("broken", &["-XX:+NoSuchOption", "-version"]);
        broken.creates = vec!["never.jsa".into()];
        let never = step("never-run", &["-version"]);
        let stop = AtomicBool::new(false);
        let prepared = run(
            &[settings, archive, broken, never],
            &jdks,
            &jars,
            &scratch,
            &out,
            &mut journal,
            "prepare-test",
            &stop,
            &mut |_| {},
        )
        .unwrap();
        let jdk = &prepared.jdks[0];
        assert_eq!(jdk.jdk, "jdk17");
        assert!(jdk.dir.join("base.jsa").is_file());
        assert_eq!(jdk.steps.len(), 3, "{:?}", jdk.steps);
        assert!(jdk.steps[1].created[0].1 > 1 << 20, "{:?}", jdk.steps[1]);
        let why = prepared.failure("jdk17").unwrap();
        assert!(why.starts_with("step broken:"), "{why}");
        assert!(why.contains("NoSuchOption"), "{why}");
        assert!(out.join("prepare/jdk17/archive.out").is_file());
        let record = fs::read_to_string(out.join("prepare/prepared.json")).unwrap();
        assert!(record.contains("base.jsa"), "{record}");
        let mut command = vec!["-XX:SharedArchiveFile={prepared}/base.jsa".to_string()];
        prepared.expand_command("jdk17", &jars, &mut command);
        assert_eq!(
            command[0],
            format!("-XX:SharedArchiveFile={}/base.jsa", jdk.dir.display())
        );
        assert!(journal.undo_all().is_empty());
        assert!(!jdk.dir.exists(), "the undo leaves {}", jdk.dir.display());
        fs::remove_dir_all(&state).unwrap();
    }

    #[test]
    fn placeholders_expand() {
        let jars = Jars {
            agent: None,
            workloads: Some(PathBuf::from("/j/pauselab-workloads.jar")),
            benchmarks: None,
        };
        let dir = Path::new("/s/prepared-jdk11");
        assert_eq!(
            expand("-XX:SharedArchiveFile={prepared}/app.jsa", Some(dir), &jars),
            "-XX:SharedArchiveFile=/s/prepared-jdk11/app.jsa"
        );
        assert_eq!(
            expand("{workloads_jar}:{prepared}/storm.jar", Some(dir), &jars),
            "/j/pauselab-workloads.jar:/s/prepared-jdk11/storm.jar"
        );
        assert_eq!(expand("{prepared}", None, &jars), "{prepared}");
    }
}
