//! `pauselab watch` on real JVMs: under the slow-disk injection it marks the stalled
//! intervals and names writeback or I/O; on tmpfs it marks none; its text lines up under a
//! header with units.

use crate::probe_slowdev;

use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use probe_slowdev::jvm::{TestJvm, Tmp};
use serde_json::Value;

fn skip() -> bool {
    if !probe_slowdev::jvm::available() {
        eprintln!("skipped: needs JDK 17 and unshare");
        return true;
    }
    if let Some(reason) = probe_slowdev::unavailable() {
        eprintln!("skipped: {reason}");
        return true;
    }
    false
}

/// Starts writeback of the JVM's hsperf file once a second, as the kernel flusher does after
/// `dirty_expire_centisecs` (without changing that host-wide setting).
struct ForcedWriteback {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ForcedWriteback {
    fn start(pid: u32) -> ForcedWriteback {
        let path = PathBuf::from(format!("/proc/{pid}/root/tmp/hsperfdata_root/{pid}"));
        let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                // SAFETY: the fd is open for the whole loop.
                unsafe {
                    libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE)
                };
                std::thread::sleep(Duration::from_secs(1));
            }
        });
        ForcedWriteback {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for ForcedWriteback {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn watch(pid: u32, count: u32, threshold_ms: u32) -> (Option<i32>, Vec<Value>) {
    let output = Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .args([
            "watch",
            &pid.to_string(),
            "-i",
            "1000",
            "--count",
            &count.to_string(),
            "--threshold",
            &threshold_ms.to_string(),
            "--json",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        matches!(output.status.code(), Some(0) | Some(3)),
        "{stderr}"
    );
    let lines = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (output.status.code(), lines)
}

#[test]
fn slow_disk_stalls_are_marked_with_writeback_and_tmpfs_is_not() {
    if skip() {
        return;
    }
    let device = probe_slowdev::SlowDevice::start("watch", 8);
    let slow_tmp = device.mount_point().join("tmp");
    std::fs::create_dir_all(&slow_tmp).unwrap();
    let slow_jvm = TestJvm::start(Tmp::Bind(&slow_tmp), &["-Xmx64m", "-XX:+UseParallelGC"], 60);
    let tmpfs_jvm = TestJvm::start(Tmp::Tmpfs, &["-Xmx64m", "-XX:+UseParallelGC"], 60);
    let slow_writeback = ForcedWriteback::start(slow_jvm.pid);
    let tmpfs_writeback = ForcedWriteback::start(tmpfs_jvm.pid);
    let (tmpfs_pid, slow_pid) = (tmpfs_jvm.pid, slow_jvm.pid);
    let tmpfs = std::thread::spawn(move || watch(tmpfs_pid, 10, 500));
    let (slow_code, slow) = watch(slow_pid, 10, 500);
    let (tmpfs_code, tmpfs) = tmpfs.join().unwrap();
    drop((slow_writeback, tmpfs_writeback, slow_jvm, tmpfs_jvm, device));

    assert_eq!(slow.len(), 10);
    let stalled: Vec<&Value> = slow.iter().filter(|l| l["stalled"] == true).collect();
    assert!(
        !stalled.is_empty(),
        "no stalled interval on the slow disk: {slow:?}"
    );
    assert_eq!(slow_code, Some(3));
    for line in &stalled {
        assert!(line["stopped_ms"].as_f64().unwrap() >= 500.0);
        let kinds: Vec<&str> = line["causes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["kind"].as_str().unwrap())
            .collect();
        assert!(
            kinds.contains(&"writeback") || kinds.contains(&"io"),
            "{line}"
        );
    }
    assert!(
        stalled
            .iter()
            .any(|l| l["causes"][0]["kind"] == "writeback"),
        "writeback never named first: {stalled:?}"
    );
    assert_eq!(tmpfs.len(), 10);
    assert!(tmpfs.iter().all(|l| l["stalled"] == false), "{tmpfs:?}");
    assert_eq!(tmpfs_code, Some(0));
    assert!(
        tmpfs
            .iter()
            .map(|l| l["safepoints"].as_i64().unwrap())
            .sum::<i64>()
            > 0
    );
}

/// Where the units line puts the right edge of each right-aligned column: every place a
/// word ends, but the first (the left-aligned time) and the last (free text).
fn right_edges(units: &str) -> Vec<usize> {
    let bytes = units.as_bytes();
    let ends: Vec<usize> = (1..=bytes.len())
        .filter(|&e| bytes[e - 1] != b' ' && (e == bytes.len() || bytes[e] == b' '))
        .collect();
    ends[1..ends.len() - 1].to_vec()
}

/// `watch`'s text: a line of names, a line of units, and every row's cells ending exactly
/// under their headers.
fn assert_text_columns_line_up(pid: u32) {
    let output = Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .args(["watch", &pid.to_string(), "-i", "200", "--count", "3"])
        .args(["--threshold", "10000"])
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    let (names, units) = (lines[0], lines[1]);
    for (name, unit) in [
        ("time", "UTC"),
        ("stopped", "ms"),
        ("heap", "%"),
        ("dirty", "pages"),
    ] {
        assert!(names.contains(name) && units.contains(unit), "{text}");
    }
    let edges = right_edges(units);
    assert!(edges.len() >= 20, "{units}");
    for line in [names].into_iter().chain(lines[2..].iter().copied()) {
        let bytes = line.as_bytes();
        for &edge in &edges {
            assert!(
                bytes[edge - 1] != b' ' && bytes[edge] == b' ',
                "column ending at {edge} out of line:\n{text}"
            );
        }
    }
}

#[test]
fn perf_disable_shared_mem_jvm_is_watched_in_json_and_aligned_text() {
    if !probe_slowdev::jvm::available() {
        return;
    }
    let jvm = TestJvm::start(Tmp::Tmpfs, &["-Xmx64m", "-XX:+PerfDisableSharedMem"], 30);
    let (_, lines) = watch(jvm.pid, 2, 10_000);
    assert_text_columns_line_up(jvm.pid);
    drop(jvm);
    assert_eq!(lines.len(), 2);
    let safepoints: i64 = lines
        .iter()
        .map(|l| l["safepoints"].as_i64().unwrap())
        .sum();
    assert!(safepoints > 0, "{lines:?}");
    assert!(lines[1]["heap_capacity"].as_u64().unwrap() > 0);
    assert!(
        lines[1]["gc"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["count"].as_i64().unwrap())
            .sum::<i64>()
            > 0,
        "{lines:?}"
    );
}

#[test]
fn exited_or_missing_jvm_is_a_one_line_error() {
    let output = Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .args(["watch", &std::process::id().to_string(), "--count", "1"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
