//! Real JVM runs for the recording tests (also used by the `pauselab analyze` tests).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub const JDK17: &str = "/usr/lib/jvm/java-17-openjdk-amd64";
pub const JDK25: &str = "/usr/lib/jvm/temurin-25-jdk-amd64";
/// Event types compared (safepoint end and synchronization are off in profile.jfc).
const SETTINGS: &str = "settings=profile,+jdk.SafepointStateSynchronization#enabled=true,+jdk.SafepointEnd#enabled=true";

pub struct Run {
    _dir: tempfile::TempDir,
    pub jfr: PathBuf,
    pub log: PathBuf,
    pub jdk: &'static str,
}

/// Runs the allocating workload for 1.5 s with a recording and a GC log.
pub fn record(jdk: &'static str, gc: &str) -> Option<Run> {
    if !Path::new(jdk).join("bin/java").exists() {
        eprintln!("skipped: no JDK at {jdk}");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let jfr = dir.path().join("rec.jfr");
    let log = dir.path().join("gc.log");
    // Both crates using this live in crates/: the workload is found from either.
    let workload = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../jfr/tests/Alloc.java"
    ));
    let out = Command::new(Path::new(jdk).join("bin/java"))
        .args([gc, "-Xmx256m", "-XX:TieredStopAtLevel=1"])
        .arg(format!(
            "-XX:StartFlightRecording:filename={},{SETTINGS}",
            jfr.display()
        ))
        .arg(format!("-Xlog:gc*,safepoint:file={}", log.display()))
        .arg(workload)
        .arg("1500")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(Run {
        _dir: dir,
        jfr,
        log,
        jdk,
    })
}
