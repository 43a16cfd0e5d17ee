//! A real JVM made to hold a safepoint (a C2-compiled int loop without a safepoint poll)
//! with `-XX:+SafepointTimeout`: `pauselab analyze` names the looping thread beside the
//! long time to safepoint, from the GC log (JDK 17+, `safepoint` tag) and from the JVM's
//! stdout (JDK 11 prints the report there only). The reports are counted here with plain
//! string searches, not with pauselab's parser.

use crate::analyze_support;
use crate::jfr_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use analyze_support::{analyze_json, fresh_dir};

const THREAD: &str = "busy-loop-worker";

fn jdk(major: u32) -> Option<PathBuf> {
    match major {
        17 => Some(PathBuf::from(jfr_support::JDK17)),
        25 => Some(PathBuf::from(jfr_support::JDK25)),
        _ => jfr_support::cached_jdk(major),
    }
}

/// Runs HoldSafepoints (one GC) on JDK `major`; returns (GC log, stdout capture).
fn hold_safepoint(major: u32) -> Option<(PathBuf, PathBuf)> {
    let home = jdk(major)?;
    let dir = fresh_dir("safepoint-timeout", &format!("jdk{major}"));
    let status = Command::new(Path::new(jfr_support::JDK17).join("bin/javac"))
        .args(["--release", "11", "-d"])
        .arg(&dir)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/safepoint_hold/HoldSafepoints.java"))
        .status()
        .unwrap();
    assert!(status.success());
    let log = dir.join("gc.log");
    let stdout = dir.join("stdout.txt");
    let status = Command::new(home.join("bin/java"))
        .args([
            "-XX:+UnlockDiagnosticVMOptions",
            "-XX:+SafepointTimeout",
            "-XX:SafepointTimeoutDelay=100",
            "-XX:-UseCountedLoopSafepoints",
            "-XX:LoopStripMiningIter=0",
            "-XX:+UseG1GC",
        ])
        .arg(format!("-Xlog:gc*,safepoint:file={}", log.display()))
        .arg("-cp")
        .arg(&dir)
        .args(["HoldSafepoints", "0"])
        .stdout(Stdio::from(std::fs::File::create(&stdout).unwrap()))
        .status()
        .unwrap();
    assert!(status.success(), "JDK {major}: the JVM failed");
    Some((log, stdout))
}

/// Timeout reports in a file, and the thread names they list (plain string search).
fn reports(file: &Path) -> (usize, Vec<String>) {
    let text = std::fs::read_to_string(file).unwrap();
    let count = text
        .matches("SafepointSynchronize::begin: Timeout detected")
        .count();
    let names = text
        .lines()
        .filter_map(|l| l.split_once("# \"").map(|(_, rest)| rest))
        .filter_map(|rest| rest.split_once("\" #").map(|(name, _)| name.to_string()))
        .collect();
    (count, names)
}

fn long_ttsp(report: &serde_json::Value) -> &serde_json::Value {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "long_ttsp")
        .unwrap_or_else(|| panic!("no long_ttsp finding: {:#}", report["findings"]))
}

fn assert_names_the_loop(report: &serde_json::Value, reports_seen: usize) {
    let timeouts = &report["safepoints"]["timeouts"];
    assert_eq!(timeouts["count"], reports_seen, "{timeouts:#}");
    let threads = timeouts["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 1, "{timeouts:#}");
    assert_eq!(threads[0]["thread"], THREAD);
    assert_eq!(threads[0]["state"], "RUNNABLE");
    assert_eq!(threads[0]["timeouts"], reports_seen);
    assert_eq!(long_ttsp(report)["threads"], timeouts["threads"]);
}

fn check(major: u32) {
    let Some((log, stdout)) = hold_safepoint(major) else {
        return;
    };
    let (in_stdout, names) = reports(&stdout);
    let (in_log, _) = reports(&log);
    assert!(in_stdout >= 1, "JDK {major}: no timeout report on stdout");
    assert!(names.iter().all(|n| n == THREAD), "{names:?}");

    // From stdout alone: no safepoint lines there, each report is a long TTSP.
    let from_stdout = analyze_json(std::slice::from_ref(&stdout));
    assert_names_the_loop(&from_stdout, in_stdout);
    assert_eq!(long_ttsp(&from_stdout)["count"], in_stdout);

    if major == 11 {
        // JDK 11 prints the report with tty, never into the -Xlog file: give both files.
        assert_eq!(in_log, 0);
        let both = analyze_json(&[log, stdout]);
        assert_names_the_loop(&both, in_stdout);
        assert!(both["safepoints"]["ttsp_max_ms"].as_f64().unwrap() > 100.0);
        return;
    }
    // JDK 17+: warning on the safepoint tag, so in the log file as well as on stdout.
    assert_eq!(in_log, in_stdout, "JDK {major}");
    let from_log = analyze_json(&[log]);
    assert_names_the_loop(&from_log, in_log);
    // The GC's safepoint line follows its report: the evidence names the thread.
    assert!(
        from_log["safepoints"]["timeouts"]["matched"]
            .as_u64()
            .unwrap()
            >= 1
    );
    let evidence = long_ttsp(&from_log)["evidence"].as_array().unwrap();
    assert!(
        evidence.iter().any(|e| e["detail"]
            .as_str()
            .unwrap()
            .contains(&format!("held up by {THREAD} (RUNNABLE)"))),
        "{evidence:#?}"
    );
}

#[test]
fn jdk11_names_the_thread_from_stdout() {
    check(11);
}

#[test]
fn jdk17_names_the_thread() {
    check(17);
}

#[test]
fn jdk21_names_the_thread() {
    check(21);
}

#[test]
fn jdk25_names_the_thread() {
    check(25);
}
