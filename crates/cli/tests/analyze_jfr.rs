//! `pauselab analyze recording.jfr` on a real JDK 25 recording: the same report, `--json`,
//! `--fail-on` and `--hlog` as for GC logs, checked against the JDK's `jfr print --json`;
//! recordings mixed with GC logs, truncated and foreign files get a one-line error.

mod analyze_support;
#[path = "../../jfr/tests/support/mod.rs"]
mod jfr_support;

use std::path::Path;
use std::process::Command;

use analyze_support::{analyze_json, bin, run};
use jfr_support::{record, JDK25};

/// GC pauses and safepoints (`jdk.SafepointBegin`) in the recording per `jfr print --json`.
fn jdk_counts(jfr: &Path) -> (u64, u64) {
    let out = Command::new(Path::new(JDK25).join("bin/jfr"))
        .args([
            "print",
            "--json",
            "--events",
            "jdk.GCPhasePause,jdk.SafepointBegin",
        ])
        .arg(jfr)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let events = json["recording"]["events"].as_array().unwrap();
    let count = |t: &str| events.iter().filter(|e| e["type"] == t).count() as u64;
    (count("jdk.GCPhasePause"), count("jdk.SafepointBegin"))
}

#[test]
fn recordings_get_the_gc_log_report_and_hostile_files_a_clear_error() {
    let Some(run_) = record(JDK25, "-XX:+UseG1GC") else {
        return;
    };
    let jfr = &run_.jfr;
    let (pauses, safepoints) = jdk_counts(jfr);
    assert!(pauses > 0 && safepoints > 0);

    let json = analyze_json(std::slice::from_ref(jfr));
    assert_eq!(json["pauses"]["count"], pauses);
    assert_eq!(json["safepoints"]["count"], safepoints);
    assert_eq!(json["jvm"]["collector"], "G1");
    assert!(json["jfr"][0]["heap"]["collections"].as_u64().unwrap() > 0);
    assert!(json["jfr"][0]["cpu_load"]["samples"].as_u64().unwrap() > 0);

    let text = run(&[jfr.to_str().unwrap()]);
    assert!(text.status.success());
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("G1New"), "{text}");
    assert!(text.contains("Recording  "), "{text}");

    // --fail-on and --hlog work as for logs.
    let hlog = jfr.with_extension("hlog");
    let out = run(&[
        "--fail-on",
        "count>0",
        "--hlog",
        hlog.to_str().unwrap(),
        jfr.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3));
    let hlog_text = std::fs::read_to_string(&hlog).unwrap();
    assert!(
        hlog_text.lines().any(|l| l.starts_with("Tag=gc,")),
        "{hlog_text}"
    );

    // A recording and the GC log of the same JVM are not added up.
    let out = run(&[jfr.to_str().unwrap(), run_.log.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("analyze them separately"), "{err}");

    // Truncated in its only chunk, and a text file named .jfr: one line naming the file.
    let bytes = std::fs::read(jfr).unwrap();
    let cut = jfr.with_file_name("cut.jfr");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let foreign = jfr.with_file_name("notes.jfr");
    std::fs::write(&foreign, "not a recording\n").unwrap();
    for (file, says) in [(&cut, "cut off"), (&foreign, "not a JFR recording")] {
        let out = Command::new(bin())
            .args(["analyze", file.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains(file.to_str().unwrap()) && err.contains(says),
            "{err}"
        );
    }
}
