//! The lab reads the request latency log the open-loop workload writes: the real workloads
//! jar on the default JDK for about three seconds, followed as it grows, as a run does.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pauselab_lab::java;
use pauselab_lab::IntervalLogFollower;

#[test]
fn follows_the_latency_log_the_workload_writes() {
    let jar = java::find_jar(java::WORKLOADS_JAR, "workloads").unwrap();
    let jdk = java::resolve_jdks(&[]).unwrap().remove(0);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("latency-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join(pauselab_lab::experiment::layout::LATENCY_LOG);
    let started_s = pauselab_lab::sys::unix_now_s() as f64;
    let mut workload = Command::new(&jdk.java)
        .args(["-Xmx64m", "-cp"])
        .arg(&jar)
        .args([
            "pauselab.workload.OpenLoop",
            "--rate",
            "500",
            "--size",
            "16k",
        ])
        .args(["--duration", "3s", "--interval", "200ms", "--latency-log"])
        .arg(&log)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Everything counts: a warm-up that ended before the run began.
    let mut whole = IntervalLogFollower::new(&log, started_s - 10.0);
    // Nothing counts: the warm-up outlasts the run.
    let mut none = IntervalLogFollower::new(&log, started_s + 3600.0);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut polls_with_data = 0;
    while workload.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the workload did not end");
        whole.poll(false);
        none.poll(false);
        if !whole.after_warmup().unwrap().is_empty() {
            polls_with_data += 1;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    whole.poll(true);
    none.poll(true);
    let output = workload.wait_with_output().unwrap();
    assert!(output.status.success(), "{:?}", output.status);
    // Read while it was written, not only at the end.
    assert!(polls_with_data >= 5, "{polls_with_data} polls saw data");

    // The workload's own count, from its summary line.
    let stdout = String::from_utf8(output.stdout).unwrap();
    let summary: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let completed = summary["completed"].as_u64().unwrap();
    assert!(completed > 1000, "{summary}");
    let latencies = whole.after_warmup().unwrap();
    assert_eq!(latencies.len(), completed, "{summary}");
    let max_ms = summary["latency_max_ms"].as_f64().unwrap();
    assert!(
        (whole.max_ms() - max_ms).abs() < 0.01,
        "{} vs {summary}",
        whole.max_ms()
    );
    assert_eq!(none.after_warmup().unwrap().len(), 0);
    assert_eq!(none.max_ms(), whole.max_ms());
    std::fs::remove_dir_all(&dir).unwrap();
}
