//! The memory experiments against real JVMs and the real host: pre-touched heaps start
//! slower than untouched ones of the same size, a heap with no room is skipped, the THP
//! governor turns THP off and the mode is restored after the run and, after SIGKILL, by
//! `pauselab lab cleanup`. These change the host's THP mode, so they need root.

use crate::lab_support;

use std::path::Path;

use lab_support::*;
use serde_json::Value;

const THP_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

fn thp_mode() -> Option<String> {
    let text = std::fs::read_to_string(THP_ENABLED).ok()?;
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[')?.strip_suffix(']').map(str::to_string))
}

fn run_json(env: &TestEnv, experiment: &str) -> Value {
    let output = env
        .lab(&["run", experiment, "--out", &env.out(), "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.code().is_some(), "{stderr}");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"))
}

#[test]
fn pretouched_heap_starts_slower_and_a_heap_without_room_is_skipped() {
    let Some(env) = TestEnv::new() else { return };
    let experiment = env.experiment_named("pretouch-short.toml");
    let verdict = run_json(&env, &experiment);
    env.assert_clean();

    let huge = variant_named(&verdict, "huge-pretouch");
    let why = huge["skipped"].as_str().unwrap_or_default();
    assert!(why.contains("MemAvailable"), "{huge}");
    let plain = variant_named(&verdict, "2g");
    let touched = variant_named(&verdict, "2g-pretouch");
    if let Some(why) = plain["skipped"].as_str().or(touched["skipped"].as_str()) {
        // A host this short of memory cannot compare them; the skip itself is checked above.
        eprintln!("skipped: {why}");
        return;
    }
    let plain_start = measurement(plain, "workload.uptime_at_main_ms").expect("measured");
    let touched_start = measurement(touched, "workload.uptime_at_main_ms").expect("measured");
    // Faulting in 2 GiB before main takes longer than not doing it.
    assert!(
        touched_start > plain_start,
        "pre-touched {touched_start} ms, plain {plain_start} ms"
    );
    // The experiment's own conclusion: start-up against throughput, the pre-touched heap
    // against the plain one, with the ratio; the skipped heap has none.
    let conclusions = verdict["conclusions"].as_array().unwrap();
    assert_eq!(conclusions.len(), 1, "{conclusions:?}");
    let uptime = &conclusions[0]["measures"][0];
    assert_eq!(
        (conclusions[0]["variant"].as_str(), uptime["name"].as_str()),
        (Some("2g-pretouch"), Some("workload.uptime_at_main_ms"))
    );
    assert_eq!(uptime["value"].as_f64(), Some(touched_start));
    // The ratio as the bundle computed it, to the last few bits of a double.
    let ratio = uptime["ratio"].as_f64().expect("a ratio");
    let expected = touched_start / plain_start;
    assert!(
        (ratio - expected).abs() <= 1e-12 * expected,
        "ratio {ratio}, expected {expected}"
    );
    for v in [plain, touched] {
        let rate = measurement(v, "workload.alloc_mib_per_s").expect("throughput measured");
        assert!(rate > 10.0 && rate < 100_000.0, "{v}");
        // It fills up to half of the 2 GiB heap (less when the 3 s window ends first).
        let touched = measurement(v, "workload.touched_bytes").unwrap();
        assert!(touched > 0.0 && touched <= 1024.0 * 1048576.0, "{v}");
        assert!(
            measurement(v, "workload.allocated_bytes").unwrap() >= touched,
            "{v}"
        );
    }
}

#[test]
fn governor_turns_thp_off_and_the_mode_comes_back() {
    let Some(env) = TestEnv::new() else { return };
    let Some(before) = thp_mode() else {
        eprintln!("skipped: no {THP_ENABLED}");
        return;
    };
    let experiment = env.experiment_named("thp-governor.toml");
    let verdict = run_json(&env, &experiment);
    env.assert_clean();
    assert_eq!(thp_mode().as_deref(), Some(before.as_str()));

    let governed = variant_named(&verdict, "governed");
    assert_eq!(
        measurement(governed, "thp.governor_turned_off"),
        Some(1.0),
        "{governed}"
    );
    assert_eq!(
        measurement(governed, "pressure.held_mib"),
        Some(256.0),
        "{governed}"
    );
    assert!(
        measurement(governed, "thp.thp_fault_alloc").is_some(),
        "{governed}"
    );
    // One JDK, one variant: one variant directory.
    let dir = std::fs::read_dir(Path::new(&env.out()).join("variants"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let log = std::fs::read_to_string(dir.join("thp-governor.jsonl")).unwrap();
    assert!(log.contains("\"thp\":\"never\""), "{log}");
}

#[test]
fn sigkill_while_governed_then_cleanup_restores_thp() {
    let Some(env) = TestEnv::new() else { return };
    let Some(before) = thp_mode() else {
        eprintln!("skipped: no {THP_ENABLED}");
        return;
    };
    let experiment = env.experiment_named("thp-governor.toml");
    let out = env.out();
    let mut child = start_lab_until(
        &env,
        &["run", &experiment, "--duration", "60s", "--out", &out],
        Some("started"),
        "pauselab-testpoint started",
    );
    // The governor turned THP off before the JVM started.
    assert_eq!(thp_mode().as_deref(), Some("never"));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        thp_mode().as_deref(),
        Some("never"),
        "nothing restores it before cleanup"
    );
    let cleanup = env.lab(&["cleanup"]).output().unwrap();
    assert!(
        cleanup.status.success(),
        "{}",
        String::from_utf8_lossy(&cleanup.stderr)
    );
    assert_eq!(thp_mode().as_deref(), Some(before.as_str()));
    env.assert_clean();
}
