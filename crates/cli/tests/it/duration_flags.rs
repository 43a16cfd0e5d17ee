//! Every duration flag takes a number with a unit (ms, s, m, h) and, as before, a bare
//! number in the unit its `--help` names: both forms give the same result.

use crate::probe_slowdev;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

fn pauselab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .args(args)
        .output()
        .expect("run pauselab")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn help_names_the_unit_of_a_bare_number() {
    for (command, flag, unit) in [
        (&["perf"][..], "-i, --interval", "milliseconds"),
        (&["jstat"][..], "[INTERVAL]", "milliseconds"),
        (&["watch"][..], "-i, --interval", "milliseconds"),
        (&["watch"][..], "--threshold", "milliseconds"),
        (&["probe", "mmap"][..], "--duration", "seconds"),
        (&["probe", "mmap"][..], "--interval", "milliseconds"),
        (&["probe", "mmap"][..], "--stall-threshold", "milliseconds"),
        (&["probe", "mmap"][..], "--writeback-every", "milliseconds"),
        (&["doctor"][..], "--probe-duration", "seconds"),
        (&["jcmd"][..], "--timeout", "seconds"),
        (&["lab", "run"][..], "--duration", "seconds"),
        (&["analyze"][..], "--hlog-interval", "seconds"),
        (&["hlog"][..], "--start", "seconds"),
        (&["hlog"][..], "--end", "seconds"),
    ] {
        let o = pauselab(&[command, &["--help"]].concat());
        let help = stdout(&o);
        // The flag's paragraph: from its line to the next flag.
        let at = help
            .find(&format!("  {flag}"))
            .unwrap_or_else(|| panic!("{command:?}: no {flag}\n{help}"));
        let paragraph = &help[at..];
        let end = paragraph[3..]
            .find("\n  -")
            .map_or(paragraph.len(), |e| e + 3);
        let paragraph = paragraph[..end].split_whitespace().collect::<Vec<_>>();
        assert!(
            paragraph
                .join(" ")
                .contains(&format!("a bare number is {unit}")),
            "{command:?} {flag}: {}",
            paragraph.join(" ")
        );
    }
}

#[test]
fn hlog_start_and_end_with_units_select_the_same_intervals() {
    let log = repo().join("fixtures/reference/jhiccup/java8x4-async-off_c4_2.jHiccup");
    let log = log.to_str().unwrap();
    let bare = pauselab(&["hlog", "--json", log, "--start", "3600", "--end", "7200.5"]);
    assert!(bare.status.success(), "{}", stderr(&bare));
    let units = pauselab(&["hlog", "--json", log, "--start", "1h", "--end", "7200500ms"]);
    assert!(units.status.success(), "{}", stderr(&units));
    assert_eq!(stdout(&bare), stdout(&units));
    // And the range did select: the whole log has more.
    let whole = pauselab(&["hlog", "--json", log]);
    assert_ne!(stdout(&whole), stdout(&bare));
}

#[test]
fn analyze_hlog_interval_in_seconds_or_with_a_unit() {
    let gc_log = repo().join("fixtures/gclogs/demo-g1-jdk17.log");
    let dir = scratch("duration-flags-hlog");
    let write = |interval: &str| {
        let out = dir.join(format!("gc-{interval}.hlog"));
        let o = pauselab(&[
            "analyze",
            gc_log.to_str().unwrap(),
            "--hlog",
            out.to_str().unwrap(),
            "--hlog-interval",
            interval,
        ]);
        assert!(o.status.success(), "{interval}: {}", stderr(&o));
        std::fs::read_to_string(out).unwrap()
    };
    let bare = write("2");
    assert_eq!(write("2s"), bare);
    assert_eq!(write("2000ms"), bare);
    assert_ne!(write("1"), bare, "the interval changes the file");
    let o = pauselab(&[
        "analyze",
        "--hlog",
        "/dev/null",
        "--hlog-interval",
        "0.5ms",
        "x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("at least 1ms"), "{}", stderr(&o));
}

#[test]
fn probe_reports_the_same_settings_for_both_forms() {
    let dir = scratch("duration-flags-probe");
    let run = |args: &[&str]| -> Value {
        let o = pauselab(
            &[
                &["probe", "mmap", "--json", dir.to_str().unwrap()][..],
                args,
            ]
            .concat(),
        );
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let bare = run(&[
        "--duration",
        "0.3",
        "--interval",
        "2",
        "--stall-threshold",
        "0.5",
        "--writeback-every",
        "0",
    ]);
    let units = run(&[
        "--duration",
        "300ms",
        "--interval",
        "2ms",
        "--stall-threshold",
        "500us",
        "--writeback-every",
        "0s",
    ]);
    for (key, value) in [
        ("duration_s", 0.3),
        ("interval_ms", 2.0),
        ("stall_threshold_ms", 0.5),
    ] {
        assert_eq!(bare[key].as_f64(), Some(value), "{key}: {bare}");
        assert_eq!(units[key], bare[key], "{key}");
    }
    assert!(bare["writeback_every_ms"].is_null() && units["writeback_every_ms"].is_null());
    let every = run(&["--duration", "200ms", "--writeback-every", "1.5s"]);
    assert_eq!(every["writeback_every_ms"].as_u64(), Some(1500));
}

#[test]
fn report_sla_limits_are_milliseconds_bare_or_written() {
    let log = repo().join("fixtures/reference/jhiccup/java17x4-no-mmap_c4_1.jHiccup");
    let log = log.to_str().unwrap();
    let sla = |spec: &str| {
        let o = pauselab(&["report", "--json", "--sla", spec, log]);
        assert!(
            o.status.code() == Some(0) || o.status.code() == Some(3),
            "{}",
            stderr(&o)
        );
        (o.status.code(), stdout(&o))
    };
    let bare = sla("p99=1,max=20");
    assert_eq!(sla("p99=1ms,max=20ms"), bare);
    assert_eq!(sla("p99=1000us,max=0.02s"), bare);
    assert_ne!(sla("p99=1s,max=20s"), bare);
}

#[test]
fn lab_run_duration_is_checked_before_anything_runs() {
    for (value, needle) in [
        ("8d", "unknown unit \"d\""),
        ("169h", "at most 168h"),
        ("-1m", "negative"),
        ("", "empty duration"),
    ] {
        let o = pauselab(&["lab", "run", "hsperf-mmap", &format!("--duration={value}")]);
        assert_eq!(o.status.code(), Some(2), "{value}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{value}: {}", stderr(&o));
    }
}

#[test]
fn refused_values_are_usage_errors_that_say_why() {
    for (args, needle) in [
        (&["perf", "1", "-i", "0"][..], "at least 1ms"),
        (&["perf", "1", "-i", "0.5ms"][..], "at least 1ms"),
        (&["perf", "1", "-i", "25h"][..], "at most 24h"),
        (&["perf", "1", "-i", "5x"][..], "unknown unit \"x\""),
        (
            &["jstat", "-gcutil", "1", "1.5.2s"][..],
            "is not a duration",
        ),
        (&["watch", "1", "-i", "50ms"][..], "at least 100ms"),
        (
            &["jcmd", "--timeout", "0", "1", "VM.version"][..],
            "at least 1ms",
        ),
        (
            &["jcmd", "--timeout", "2h", "1", "VM.version"][..],
            "at most 1h",
        ),
        (&["probe", "mmap", "--interval", "0"][..], "at least 1ns"),
    ] {
        let o = pauselab(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
    }
}

/// Sampling commands wait the same between samples whether the interval is written `200`
/// (milliseconds, as jstat) or `200ms`; a bare number read as seconds would wait minutes.
#[test]
fn sampling_intervals_are_milliseconds_bare_or_written() {
    use probe_slowdev::jvm::{available, TestJvm, Tmp};
    if !available() {
        eprintln!("skipped: needs JDK 17 and unshare");
        return;
    }
    let jvm = TestJvm::start(Tmp::Tmpfs, &[], 60);
    let pid = jvm.pid.to_string();
    let pid = pid.as_str();
    for args in [
        &["jstat", "-gcutil", pid, "200", "3"][..],
        &["jstat", "-gcutil", pid, "200ms", "3"][..],
        &["jstat", "-gcutil", pid, "0.2s", "3"][..],
        &["perf", pid, "sun.os.hrt.ticks", "-i", "200", "-n", "3"][..],
        &["perf", pid, "sun.os.hrt.ticks", "-i", "200ms", "-n", "3"][..],
        &["watch", pid, "-i", "200", "--count", "2"][..],
        &["watch", pid, "-i", "0.2s", "--count", "2"][..],
    ] {
        let started = Instant::now();
        let o = Command::new("timeout")
            .arg("30")
            .arg(env!("CARGO_BIN_EXE_pauselab"))
            .args(args)
            .output()
            .unwrap();
        let took = started.elapsed();
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        // Two waits of 200 ms between three samples (watch: two intervals of 200 ms).
        assert!(
            took >= Duration::from_millis(390) && took < Duration::from_secs(20),
            "{args:?} took {took:?}"
        );
        let lines = stdout(&o).lines().count();
        assert!(lines >= 3, "{args:?}: {}", stdout(&o));
    }
}
