//! The runner's per-variant host changes against the real host: a CPU cgroup with a CFS
//! quota (throttling measured, cgroup removed), a host setting held only during one
//! variant's turn (restored, also after SIGKILL and `lab cleanup`), variants one by one,
//! the built-in gclog-io experiment on the slow device, and request latency from an
//! open-loop workload. These need root.

use crate::lab_support;

use lab_support::variant_named as variant;
use lab_support::*;
use serde_json::Value;

const SCAN_SLEEP: &str = "/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs";

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn quota_cgroup_and_host_setting_one_by_one() {
    let Some(env) = TestEnv::new() else { return };
    let Ok(before) = std::fs::read_to_string(SCAN_SLEEP) else {
        eprintln!("skipped: {SCAN_SLEEP} does not exist on this kernel");
        return;
    };
    assert_ne!(before.trim(), "10007", "the test's value is already set");
    let experiment = env.experiment_named("quota.toml");
    let output = env
        .lab(&["run", &experiment, "--out", &env.out(), "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.code().is_some(), "{stderr}");
    let verdict: Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    env.assert_clean();
    assert_eq!(std::fs::read_to_string(SCAN_SLEEP).unwrap(), before);

    let quota = variant(&verdict, "quota");
    let free = variant(&verdict, "free");
    // 0.05 CPU cannot start a JVM without being throttled.
    let periods = measurement(quota, "cgroup.periods").expect("cgroup.periods measured");
    let throttled = measurement(quota, "cgroup.throttled_periods").unwrap();
    assert!(periods > 0.0 && throttled > 0.0, "{quota}");
    assert!(measurement(quota, "cgroup.throttled_ms").unwrap() > 0.0);
    assert!(measurement(free, "cgroup.periods").is_none(), "{free}");
    // The GC log is read by pauselab-gclog into measurements.
    assert!(measurement(free, "gc.pauses").unwrap() >= 0.0, "{free}");
    // The host setting was held during the quota variant's turn only.
    let changes = quota["host_changes"].to_string();
    assert!(
        changes.contains(SCAN_SLEEP) && changes.contains("10007"),
        "{changes}"
    );
    let free_changes = free["host_changes"].to_string();
    assert!(!free_changes.contains(SCAN_SLEEP), "{free_changes}");
    assert!(
        free_changes.contains("PR_SET_THP_DISABLE"),
        "{free_changes}"
    );

    // One after the other: the second started after the first one's turn.
    let manifest = read_json(&std::path::Path::new(&env.out()).join("manifest.json"));
    let starts: Vec<f64> = manifest["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["start_time_s"].as_f64().unwrap())
        .collect();
    assert_eq!(starts.len(), 2);
    assert!(starts[1] - starts[0] >= 7.0, "{starts:?}");

    // The report shows the experiment's measurement columns, in text and HTML.
    let html = std::path::Path::new(&env.out()).join("report.html");
    let report = std::process::Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .args(["report", &env.out(), "--html"])
        .arg(&html)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(report.status.success(), "{text}");
    let header = text
        .lines()
        .find(|l| l.contains("throttled_ms"))
        .unwrap_or_else(|| panic!("no measurement table: {text}"));
    assert!(header.contains("elapsed_s"), "{header}");
    let quota_row = text
        .lines()
        .find(|l| l.starts_with("quota") && l.contains(" ms"))
        .unwrap_or_else(|| panic!("no quota row: {text}"));
    assert!(!quota_row.contains(" - "), "{quota_row}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains(r#"<table class="measurements">"#));
    assert!(page.contains(r#"title="cgroup.throttled_ms""#));
}

#[test]
fn sigkill_during_a_turn_then_cleanup_restores_the_host() {
    let Some(env) = TestEnv::new() else { return };
    let Ok(before) = std::fs::read_to_string(SCAN_SLEEP) else {
        return;
    };
    let experiment = env.experiment_named("quota.toml");
    let out = env.out();
    let mut child = start_lab_until(
        &env,
        &["run", &experiment, "--out", &out],
        Some("next-turn"),
        "pauselab-testpoint next-turn",
    );
    // The first turn's changes are undone; the journal still holds the run.
    // SAFETY: signalling our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGKILL) }, 0);
    child.wait().unwrap();
    assert!(!env.leftovers().is_empty(), "SIGKILL left nothing to clean");
    let output = env.lab(&["cleanup"]).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    env.assert_clean();
    assert_eq!(std::fs::read_to_string(SCAN_SLEEP).unwrap(), before);
}

#[test]
fn gclog_io_sync_log_stalls_and_the_analyzer_says_why() {
    let Some(env) = TestEnv::new() else { return };
    let output = env
        .lab(&[
            "run",
            "gclog-io",
            // 12 s measured after a warm-up shorter than the experiment's 20 s: the GC
            // log's writes wait for writeback from the first seconds of the stress.
            "--duration",
            "20s",
            "--warmup",
            "8s",
            "--out",
            &env.out(),
            "--json",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let verdict: Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    env.assert_clean();
    let sync = variant(&verdict, "sync-log");
    assert_eq!(sync["verdict"], "stalls", "{sync}");
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    let findings = sync["gc_findings"].to_string();
    assert!(findings.contains("stopped_gt_gc"), "{findings}");
    // The GC log written to the variant's stressed /tmp was copied into the bundle.
    let out = std::path::PathBuf::from(env.out());
    for name in ["sync-log", "async-log", "tmpfs-log"] {
        let dir = out.join("variants").join(format!(
            "{name}-{}",
            variant(&verdict, name)["jdk"].as_str().unwrap()
        ));
        let log = std::fs::read_to_string(dir.join("gc.log")).unwrap();
        assert!(log.contains("Safepoint"), "{name}: {}", dir.display());
    }
    // The GC itself is short; the safepoint around it is not.
    let sync_max = sync["safepoints"]["max_ms"].as_f64().unwrap();
    assert!(
        measurement(sync, "gc.max_pause_ms").unwrap() * 3.0 < sync_max,
        "{sync}"
    );
    for mitigation in ["async-log", "tmpfs-log"] {
        let max = variant(&verdict, mitigation)["safepoints"]["max_ms"]
            .as_f64()
            .unwrap();
        assert!(
            max * 2.0 < sync_max,
            "{mitigation}: {max} ms vs sync {sync_max} ms"
        );
    }
}

#[test]
fn open_loop_request_latency_is_read_shown_and_judged() {
    // Host /tmp, no fault: nothing on the host changes, and the verdict's margin (p99 over
    // a second against milliseconds) is far beyond what other tests' CPU use can move.
    let Some(env) = TestEnv::beside_others() else {
        return;
    };
    let experiment = env.experiment_named("openloop.toml");
    let output = env
        .lab(&["run", &experiment, "--out", &env.out()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stdout}{stderr}");
    assert!(stdout.contains("request latency (ms)"), "{stdout}");

    let verdict = read_json(&std::path::Path::new(&env.out()).join("verdict.json"));
    assert_eq!(verdict["rule"]["metric"], "latency", "{verdict}");
    let keeps_up = variant(&verdict, "keeps-up");
    let falls_behind = variant(&verdict, "falls-behind");
    assert_eq!(falls_behind["verdict"], "stalls", "{falls_behind}");
    for v in [keeps_up, falls_behind] {
        // No warm-up: every request the workload completed is in the lab's statistics,
        // counted once, whatever the interval it fell in.
        let completed = measurement(v, "workload.completed").unwrap();
        assert_eq!(v["latency"]["count"].as_f64().unwrap(), completed, "{v}");
        let log = std::path::Path::new(&env.out())
            .join("variants")
            .join(v["id"].as_str().unwrap())
            .join("latency.hlog");
        assert!(log.is_file(), "{}", log.display());
    }
    // Offered 100 requests/s, served a tenth of that: the queue and the wait grow all along.
    assert!(measurement(falls_behind, "workload.completed_fraction").unwrap() < 0.5);
    let p99 = |v: &Value| v["latency"]["p99_ms"].as_f64().unwrap();
    assert!(p99(falls_behind) > 1000.0, "{falls_behind}");
    // Only the order: how far apart they are depends on what else the host runs, and the
    // verdict above already holds the experiment's margin.
    assert!(p99(falls_behind) > p99(keeps_up), "{keeps_up}");
}
