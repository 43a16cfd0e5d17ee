//! `pauselab lab run jfr-overhead`, shortened (one fork, 1 + 3 one-second iterations per
//! set-up: about 30 s), against the real benchmarks jar on the default JDK: the table and
//! the JSON have time and bytes per operation for every set-up, and the verdict compares
//! the event against JFR off.

use std::path::PathBuf;
use std::process::Command;

const SETUPS: [&str; 3] = ["jfr-off", "event-disabled", "event-enabled"];

fn pauselab(state: &PathBuf) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pauselab"));
    cmd.env("PAUSELAB_STATE_DIR", state);
    cmd
}

/// The built-in experiment with shorter JMH iterations; fails when the built-in no longer
/// has the iterations this replaces (the test would otherwise run the long one).
fn shortened(state: &PathBuf) -> String {
    let shown = pauselab(state)
        .args(["lab", "show", "jfr-overhead"])
        .output()
        .unwrap();
    assert!(shown.status.success());
    let text = String::from_utf8(shown.stdout).unwrap();
    let long = r#""-wi", "3", "-w", "1s", "-i", "6", "-r", "2s""#;
    assert!(
        text.contains(long),
        "the built-in's iterations changed:\n{text}"
    );
    text.replace(long, r#""-wi", "1", "-w", "1s", "-i", "3", "-r", "1s""#)
}

#[test]
fn jfr_overhead_reports_time_and_bytes_per_write_for_every_setup() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lab-jfr-overhead-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let state = dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let experiment = dir.join("jfr-overhead-short.toml");
    std::fs::write(&experiment, shortened(&state)).unwrap();
    let out = dir.join("out");

    let output = pauselab(&state)
        .args(["lab", "run"])
        .arg(&experiment)
        .args(["--duration", "30s", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("{stdout}{stderr}");
    // 0 not vulnerable, 3 vulnerable, 4 inconclusive (a noisy host); 1 would be an error.
    let code = output.status.code();
    assert!(matches!(code, Some(0 | 3 | 4)), "exit {code:?}");

    // The measurements table: units in the header, a row per set-up with its time and
    // bytes per operation; then the conclusion, each set-up against JFR off with the ratio.
    assert!(
        stdout.contains("score (us/op)") && stdout.contains("score error (us/op)"),
        "{stdout}"
    );
    assert!(stdout.contains("gc.alloc.rate.norm (B/op)"), "{stdout}");
    for setup in SETUPS {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with("jdk") && l.contains(&format!(" {setup} "))),
            "no measurement row for {setup}: {stdout}"
        );
    }
    for setup in ["event-disabled", "event-enabled"] {
        let line = format!("{setup} against jfr-off: score (us/op) ");
        assert!(
            stdout.contains(&line),
            "no conclusion for {setup}: {stdout}"
        );
    }
    assert!(stdout.contains("experiment jfr-overhead: "), "{stdout}");

    // The JSON (verdict.json is what --json prints).
    let verdict: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("verdict.json")).unwrap()).unwrap();
    let variant = |setup: &str| -> &serde_json::Value {
        verdict["variants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["variant"] == setup)
            .unwrap_or_else(|| panic!("no variant {setup}"))
    };
    let measurement = |setup: &str, name: &str| -> (f64, String) {
        let variant = variant(setup);
        let m = variant["measurements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("{setup}: no {name} in {variant}"));
        (
            m["value"].as_f64().unwrap(),
            m["unit"].as_str().unwrap().to_string(),
        )
    };
    for setup in SETUPS {
        let (score, unit) = measurement(setup, "jmh.score");
        assert_eq!(unit, "us/op");
        assert!(score > 0.0);
        let (_, unit) = measurement(setup, "jmh.gc.alloc.rate.norm");
        assert_eq!(unit, "B/op");
    }
    // Allocation is exact where times are noisy: every write with the event on allocates
    // the event and its stack trace, without JFR nothing.
    let (off_bytes, _) = measurement("jfr-off", "jmh.gc.alloc.rate.norm");
    let (on_bytes, _) = measurement("event-enabled", "jmh.gc.alloc.rate.norm");
    assert!(off_bytes < 10.0, "JFR off: {off_bytes} B/op");
    assert!(on_bytes > 50.0, "event on: {on_bytes} B/op");

    // The conclusion in --json: the ratio of bytes per operation, event on against off.
    let enabled = verdict["conclusions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["variant"] == "event-enabled")
        .unwrap();
    let bytes = &enabled["measures"][1];
    assert_eq!(bytes["name"], "jmh.gc.alloc.rate.norm");
    assert_eq!(bytes["value"].as_f64(), Some(on_bytes));
    assert_eq!(bytes["against"].as_f64(), Some(off_bytes));

    // The verdict compares the event with JFR off, with the numbers.
    let evidence = variant("event-enabled")["evidence"].as_str().unwrap();
    assert!(evidence.contains("x jfr-off"), "{evidence}");
    assert!(evidence.contains("us/op"), "{evidence}");
    std::fs::remove_dir_all(&dir).unwrap();
}
