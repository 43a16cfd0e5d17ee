//! `pauselab lab` as a new user meets it: without a subcommand it only prints help, `lab
//! list` says which experiments need root, and without root `lab run` of one of those stops
//! with one line before it changes anything, while the others run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn pauselab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pauselab"))
}

/// `pauselab ARGS` as user `nobody` (root only: setpriv needs it), or None.
fn as_nobody(args: &[&str], state: &Path) -> Option<Output> {
    // SAFETY: no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: switching to user nobody needs root");
        return None;
    }
    let output = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_pauselab"))
        .args(args)
        .env("PAUSELAB_STATE_DIR", state)
        .current_dir("/")
        .output()
        .expect("setpriv (util-linux) runs");
    Some(output)
}

fn fresh_state_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lab-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn lab_alone_prints_help_and_changes_nothing() {
    let state = fresh_state_dir("help");
    let output = pauselab()
        .arg("lab")
        .env("PAUSELAB_STATE_DIR", &state)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("Usage: pauselab lab <COMMAND>"), "{stderr}");
    for command in ["list", "show", "run", "cleanup"] {
        assert!(
            stderr.contains(&format!("\n  {command} ")),
            "{command}: {stderr}"
        );
    }
    assert!(
        !state.exists(),
        "`pauselab lab` created {}",
        state.display()
    );
}

#[test]
fn list_says_which_experiments_need_root() {
    let output = pauselab().args(["lab", "list", "--json"]).output().unwrap();
    assert!(output.status.success());
    let rows: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let needs_root = |name: &str| {
        let row = rows
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("{name} not listed: {rows}"));
        assert_eq!(
            row["needs_root"].as_bool().unwrap(),
            !row["root_for"].as_array().unwrap().is_empty(),
            "{row}"
        );
        row["needs_root"].as_bool().unwrap()
    };
    // Slow device, mount namespaces, cgroups, sysfs writes...
    for name in [
        "hsperf-mmap",
        "gclog-io",
        "cpu-quota",
        "memory-pressure",
        "swap",
        "startup-pressure",
    ] {
        assert!(needs_root(name), "{name}");
    }
    // ...against JVMs on the host's own /tmp, with nothing changed on the host.
    for name in ["pretouch", "jfr-overhead", "classload-cds"] {
        assert!(!needs_root(name), "{name}");
    }
    let text = pauselab().args(["lab", "list"]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name}: {text}"))
            .to_string()
    };
    assert!(line("hsperf-mmap").contains(" root "), "{text}");
    assert!(!line("pretouch").contains(" root "), "{text}");
}

#[test]
fn without_root_an_experiment_that_needs_it_stops_before_touching_anything() {
    let state = fresh_state_dir("nonroot");
    let Some(output) = as_nobody(&["lab", "run", "hsperf-mmap", "--duration", "5s"], &state) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains("hsperf-mmap"), "{stderr}");
    assert!(stderr.contains("needs root"), "{stderr}");
    assert!(stderr.contains("slow device"), "{stderr}");
    assert!(output.stdout.is_empty());
    assert!(!state.exists(), "a refused run created {}", state.display());
    // With --no-fault the slow device is not needed, but the mount namespaces still are.
    let output = as_nobody(
        &[
            "lab",
            "run",
            "hsperf-mmap",
            "--no-fault",
            "--duration",
            "5s",
        ],
        &state,
    )
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("slow device"), "{stderr}");
    assert!(stderr.contains("mount namespace"), "{stderr}");
    assert!(!state.exists());
}

/// An experiment whose JVMs use the host's own /tmp changes nothing on the host: it runs as
/// any user, with its bundle under /tmp.
#[test]
fn without_root_an_experiment_on_the_host_tmp_runs_with_its_bundle_under_tmp() {
    // SAFETY: no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: switching to user nobody needs root");
        return;
    }
    // Everything nobody reads or writes lives in one directory under /tmp, open to it.
    let dir = tempdir_under_tmp("nonroot-run");
    let classes = dir.join("classes");
    let javac = Command::new("javac")
        .arg("-d")
        .arg(&classes)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lab/Garbage.java"))
        .status()
        .expect("javac (a JDK) is needed for the lab tests");
    assert!(javac.success());
    let experiment = dir.join("host-tmp.toml");
    std::fs::write(
        &experiment,
        r#"name = "test-host-tmp"
description = "test: two variants on the host's /tmp"
duration = "4s"
baseline = "small"

[workload]
main = "Garbage"
classpath = ["classes"]
args = ["{duration_s}"]
jvm_flags = ["-XX:+UseSerialGC"]
hiccup_agent = false
gc_log = "safepoint"

[[variant]]
name = "small"
flags = ["-Xmx64m"]
tmp = "host"

[[variant]]
name = "large"
flags = ["-Xmx128m"]
tmp = "host"
role = "subject"

[verdict]
metric = "safepoint"
margin = 3.0
floor_ms = 200.0
noise_ms = 300.0
"#,
    )
    .unwrap();
    let out = dir.join("bundle");
    let state = dir.join("state");
    chmod_recursive(&dir);
    let output = as_nobody(
        &[
            "lab",
            "run",
            experiment.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--json",
        ],
        &state,
    )
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        matches!(output.status.code(), Some(0) | Some(3)),
        "{stdout} {stderr}"
    );
    let verdict: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for variant in verdict["variants"].as_array().unwrap() {
        assert!(variant["skipped"].is_null(), "{variant}");
        assert!(
            variant["safepoints"]["count"].as_u64().unwrap() > 0,
            "{variant}"
        );
    }
    assert!(out.join("verdict.json").is_file());

    // The report reads what the lab wrote: the same verdicts, variant by variant.
    let report = pauselab()
        .args(["report", "--json", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let section = &report["sections"][0];
    assert_eq!(section["result"], verdict["result"]);
    let written = verdict["variants"].as_array().unwrap();
    let read = section["variants"].as_array().unwrap();
    assert_eq!(read.len(), written.len());
    for variant in written {
        let shown = read.iter().find(|r| r["id"] == variant["id"]).unwrap();
        assert_eq!(shown["verdict"], variant["verdict"], "{shown}");
        assert_eq!(shown["evidence"], variant["evidence"], "{shown}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempdir_under_tmp(name: &str) -> PathBuf {
    let dir = Path::new("/tmp").join(format!("pauselab-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn chmod_recursive(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            chmod_recursive(&path);
        } else {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        }
    }
}
