//! `pauselab doctor` on a real JVM whose safepoints wait for a thread in a loop without a
//! safepoint poll: it reports the long time to safepoint from the JVM's counters and
//! suggests the flags that name the thread. The mean is recomputed from `jcmd
//! PerfCounter.print`, not from pauselab's reader.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const JDK17: &str = "/usr/lib/jvm/java-17-openjdk-amd64";

struct Jvm(Child);

impl Drop for Jvm {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(dir: &Path, flags: &[&str]) -> Jvm {
    Jvm(Command::new(format!("{JDK17}/bin/java"))
        .args(flags)
        .args([
            "-XX:-UseCountedLoopSafepoints",
            "-XX:LoopStripMiningIter=0",
            "-cp",
        ])
        .arg(dir)
        .args(["HoldSafepoints", "30"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap())
}

/// `sun.rt.safepoints` and the mean of `sun.rt.safepointSyncTime` in ms, from jcmd.
fn jcmd_mean_ttsp_ms(pid: u32) -> Option<(u64, f64)> {
    let out = Command::new(format!("{JDK17}/bin/jcmd"))
        .args([&pid.to_string(), "PerfCounter.print"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let value = |name: &str| -> Option<f64> {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .and_then(|v| v.trim().parse().ok())
    };
    let count = value("sun.rt.safepoints")?;
    let sync = value("sun.rt.safepointSyncTime")?;
    let freq = value("sun.os.hrt.frequency")?;
    Some((count as u64, sync / freq * 1000.0 / count.max(1.0)))
}

fn doctor(pid: u32) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .args(["doctor", "--json", "--pid", &pid.to_string()])
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0) | Some(3)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn ttsp_finding(report: &serde_json::Value) -> serde_json::Value {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "time-to-safepoint")
        .cloned()
        .unwrap_or_else(|| panic!("no time-to-safepoint finding: {report:#}"))
}

/// Waits until the JVM has stopped at a few safepoints (its counters readable by jcmd).
fn wait_for_safepoints(pid: u32) -> (u64, f64) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some((count, mean)) = jcmd_mean_ttsp_ms(pid).filter(|(c, m)| *c >= 3 && *m > 1.0) {
            return (count, mean);
        }
        assert!(
            Instant::now() < deadline,
            "pid {pid}: no slow safepoints in 20 s"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn long_time_to_safepoint_suggests_the_flags_that_name_the_thread() {
    if !Path::new(JDK17).join("bin/java").exists() {
        eprintln!("skipped: no JDK 17 at {JDK17}");
        return;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("doctor-ttsp");
    std::fs::create_dir_all(&dir).unwrap();
    let status = Command::new(format!("{JDK17}/bin/javac"))
        .arg("-d")
        .arg(&dir)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/safepoint_hold/HoldSafepoints.java"))
        .status()
        .unwrap();
    assert!(status.success());

    let plain = start(&dir, &[]);
    let named = start(
        &dir,
        &["-XX:+SafepointTimeout", "-XX:SafepointTimeoutDelay=200"],
    );
    for jvm in [&plain, &named] {
        let pid = jvm.0.id();
        let (count, mean_ms) = wait_for_safepoints(pid);
        let finding = ttsp_finding(&doctor(pid));
        assert_eq!(finding["severity"], "warning", "{finding:#}");
        let evidence = finding["evidence"][0]["value"].as_str().unwrap();
        // The counters move on between jcmd and doctor: at least as many safepoints.
        let seen: u64 = evidence.split(' ').next().unwrap().parse().unwrap();
        assert!(
            seen >= count,
            "{evidence} (jcmd: {count}, mean {mean_ms:.1} ms)"
        );
        let fix = finding["fix"].as_str().unwrap();
        if pid == plain.0.id() {
            assert!(
                fix.contains("-XX:+SafepointTimeout -XX:SafepointTimeoutDelay="),
                "{fix}"
            );
        } else {
            assert!(
                finding["title"].as_str().unwrap().contains("delay 200 ms"),
                "{finding:#}"
            );
            assert!(fix.contains("pauselab analyze"), "{fix}");
        }
    }
}
