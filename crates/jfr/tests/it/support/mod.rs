//! Real JVM runs for the recording tests (also used by the `pauselab analyze` and `report`
//! tests).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub const JDK17: &str = "/usr/lib/jvm/java-17-openjdk-amd64";
pub const JDK25: &str = "/usr/lib/jvm/temurin-25-jdk-amd64";
/// Event types compared (safepoint end and synchronization are off in profile.jfc). JDK 11
/// has no `+event#setting` syntax: its recordings use profile.jfc alone.
const SETTINGS: &str = "settings=profile,+jdk.SafepointStateSynchronization#enabled=true,+jdk.SafepointEnd#enabled=true";

pub struct Run {
    _dir: tempfile::TempDir,
    pub jfr: PathBuf,
    pub log: PathBuf,
    pub jdk: PathBuf,
}

/// JDK `major` as `make jdks` installs it (`$PAUSELAB_JDK_CACHE`, default
/// `~/.cache/pauselab/jdks/<major>`), `None` (with a message) when it is not there.
pub fn cached_jdk(major: u32) -> Option<PathBuf> {
    let cache = std::env::var_os("PAUSELAB_JDK_CACHE").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/pauselab/jdks"),
        PathBuf::from,
    );
    let home = cache.join(major.to_string());
    if home.join("bin/java").exists() && home.join("bin/jfr").exists() {
        Some(home)
    } else {
        eprintln!(
            "skipped: no JDK {major} at {} (make jdks fetches 11 and 21)",
            home.display()
        );
        None
    }
}

/// The workload's class directory, compiled once per test process for JDK 11 by JDK 17's
/// javac (the runtimes `make jdks` installs have no compiler).
fn workload_classes() -> &'static Path {
    static CLASSES: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    CLASSES.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("jfr-workload");
        // Both crates using this live in crates/: the workload is found from either.
        let workload = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../jfr/tests/Alloc.java"
        ));
        let javac = Command::new(Path::new(JDK17).join("bin/javac"))
            .args(["--release", "11", "-d"])
            .arg(&dir)
            .arg(workload)
            .status()
            .unwrap();
        assert!(javac.success());
        dir
    })
}

/// Runs the allocating workload for 1.5 s with a recording and a GC log.
pub fn record(jdk: impl AsRef<Path>, gc: &str) -> Option<Run> {
    record_with(jdk.as_ref(), &[gc])
}

/// The same with more JVM flags (after the defaults: `-Xmx32m` overrides the heap).
pub fn record_with(jdk: &Path, flags: &[&str]) -> Option<Run> {
    record_for(jdk, flags, 1500)
}

/// The same, with the workload running `millis` milliseconds.
pub fn record_for(jdk: &Path, flags: &[&str], millis: u32) -> Option<Run> {
    record_keeping(jdk, flags, millis, None)
}

/// The same, with the workload keeping at most `kept` objects (about 5 KB each) when given:
/// its default keeps up to 100 MB, which a heap under 128 MB survives only if the run
/// ends before the objects add up.
pub fn record_keeping(jdk: &Path, flags: &[&str], millis: u32, kept: Option<u32>) -> Option<Run> {
    let jdk11 =
        std::fs::read_to_string(jdk.join("release")).is_ok_and(|r| r.contains("JAVA_VERSION=\"11"));
    let settings = if jdk11 { "settings=profile" } else { SETTINGS };
    record_settings(jdk, flags, millis, kept, settings)
}

/// The workload with the recording settings the JDK uses when none are given
/// (`default.jfc`: safepoints and VM operations kept only from 10 ms on).
pub fn record_default(jdk: &Path, flags: &[&str], millis: u32) -> Option<Run> {
    record_settings(jdk, flags, millis, None, "settings=default")
}

fn record_settings(
    jdk: &Path,
    flags: &[&str],
    millis: u32,
    kept: Option<u32>,
    settings: &str,
) -> Option<Run> {
    if !jdk.join("bin/java").exists() {
        eprintln!("skipped: no JDK at {}", jdk.display());
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let jfr = dir.path().join("rec.jfr");
    let log = dir.path().join("gc.log");
    succeeded(
        Command::new(jdk.join("bin/java"))
            .args(["-Xmx256m", "-XX:TieredStopAtLevel=1"])
            .args(flags)
            .arg(format!(
                "-XX:StartFlightRecording:filename={},{settings}",
                jfr.display()
            ))
            .arg(format!("-Xlog:gc*,safepoint:file={}", log.display()))
            .arg("-cp")
            .arg(workload_classes())
            .arg("Alloc")
            .arg(millis.to_string())
            .args(kept.map(|k| k.to_string())),
    );
    Some(Run {
        _dir: dir,
        jfr,
        log,
        jdk: jdk.to_path_buf(),
    })
}

/// Runs the workload with a recording kept only in `repository` (the chunk files a
/// running JVM writes, kept at exit with `preserve-repository`, JDK 21+); a second
/// recording started after a second makes the JVM begin a new chunk, so there are
/// several. The JVM's own directory under `repository`; `None` without the JDK.
pub fn record_repository(jdk: &Path, repository: &Path) -> Option<PathBuf> {
    if !jdk.join("bin/java").exists() {
        eprintln!("skipped: no JDK at {}", jdk.display());
        return None;
    }
    succeeded(
        Command::new(jdk.join("bin/java"))
            .args(["-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseG1GC"])
            .arg(format!(
                "-XX:FlightRecorderOptions:repository={},preserve-repository=true",
                repository.display()
            ))
            .arg(format!("-XX:StartFlightRecording:{SETTINGS}"))
            .arg("-XX:StartFlightRecording:name=second,delay=1s,settings=default")
            .arg("-cp")
            .arg(workload_classes())
            .args(["Alloc", "2500"]),
    );
    let mut jvm_dirs: Vec<PathBuf> = std::fs::read_dir(repository)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(jvm_dirs.len(), 1, "{jvm_dirs:?}");
    jvm_dirs.pop()
}

/// The events of `types` in a recording, as the JDK's own `jfr print --json` gives them.
pub fn jfr_print(jdk: &Path, jfr: &Path, types: &[&str]) -> Vec<serde_json::Value> {
    let out = succeeded(
        Command::new(jdk.join("bin/jfr"))
            .args(["print", "--json", "--events", &types.join(",")])
            .arg(jfr),
    );
    let mut json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    match json["recording"]["events"].take() {
        serde_json::Value::Array(events) => events,
        other => panic!("jfr print --json: no events array: {other}"),
    }
}

/// Runs `command`, which must succeed.
fn succeeded(command: &mut Command) -> std::process::Output {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// ISO-8601 duration as `jfr print --json` writes it (`PT0.00042383S`, `PT1M2.5S`), in ns.
pub fn iso_ns(s: &str) -> u64 {
    let body = s.strip_prefix("PT").expect("ISO duration");
    let (mut total, mut num) = (0f64, String::new());
    for ch in body.chars() {
        match ch {
            'H' | 'M' | 'S' => {
                let v: f64 = num.parse().unwrap();
                total += v * match ch {
                    'H' => 3600.0,
                    'M' => 60.0,
                    _ => 1.0,
                };
                num.clear();
            }
            _ => num.push(ch),
        }
    }
    (total * 1e9).round() as u64
}

/// RFC 3339 instant with nanoseconds (`2026-11-23T16:19:59.409359211Z`) as ns of the day
/// (enough to order and subtract events of a short recording).
pub fn instant_ns(s: &str) -> i64 {
    let t = &s[s.find('T').unwrap() + 1..s.len() - 1];
    let mut parts = t.split(':');
    let h: i64 = parts.next().unwrap().parse().unwrap();
    let m: i64 = parts.next().unwrap().parse().unwrap();
    let sec: f64 = parts.next().unwrap().parse().unwrap();
    (h * 3600 + m * 60) * 1_000_000_000 + (sec * 1e9).round() as i64
}
