//! Helpers shared by the `analyze` integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_pauselab")
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Real GC logs from the field, in the repository (fixtures/reference/gclogs).
pub fn shared_gclogs() -> PathBuf {
    repo_root().join("fixtures/reference/gclogs")
}

/// A fresh, empty directory `group/name` under the tests' temporary directory.
pub fn fresh_dir(group: &str, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One of GCViewer's sample logs (fixtures/reference/gclogs/gcviewer-samples.tar.gz).
pub fn gcviewer_sample(name: &str) -> Vec<u8> {
    let out = Command::new("tar")
        .arg("xzOf")
        .arg(shared_gclogs().join("gcviewer-samples.tar.gz"))
        .arg(format!("gcviewer-samples/logs/{name}"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{name}: {out:?}");
    out.stdout
}

pub fn fixtures() -> PathBuf {
    repo_root().join("fixtures/gclogs")
}

pub fn run(args: &[&str]) -> Output {
    Command::new(bin())
        .arg("analyze")
        .args(args)
        .output()
        .unwrap()
}

/// `pauselab analyze ARGS`, which must succeed, and its peak resident set, KiB.
pub fn run_measuring_memory(args: &[&str]) -> (Output, i64) {
    let mut command = Command::new(bin());
    command.arg("analyze").args(args);
    let (mut timed, peak) = crate::process_support::PeakRss::wrap(&command);
    let out = timed.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    (out, peak.kib())
}

/// `pauselab analyze --json FILES`, which must succeed.
pub fn analyze_json(files: &[PathBuf]) -> serde_json::Value {
    let out = Command::new(bin())
        .arg("analyze")
        .arg("--json")
        .args(files)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "analyze failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Processes that keep every core busy until dropped. They hold the host lock: a lab
/// run beside them would be judged on a busy host.
pub struct CpuHogs(Vec<std::process::Child>, std::sync::MutexGuard<'static, ()>);

impl CpuHogs {
    pub fn start() -> CpuHogs {
        let host = crate::host_lock::exclusive();
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        CpuHogs(
            (0..2 * cores)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .unwrap()
                })
                .collect(),
            host,
        )
    }
}

impl Drop for CpuHogs {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// An `analyze --events` CSV file read back with Python's csv module (strict RFC 4180
/// parsing, independent of the writer): rows per `kind`, the set of `source_file`s, and
/// whether every row has the header's number of fields.
pub struct EventsCsv {
    pub gc_pauses: u64,
    pub safepoints: u64,
    pub rows: u64,
    pub source_files: Vec<String>,
    pub rows_with_heap: u64,
    pub rows_with_line: u64,
    pub rows_with_event_index: u64,
}

pub fn read_events_csv(path: &Path) -> EventsCsv {
    let script = r#"
import csv, json, sys
with open(sys.argv[1], newline='') as f:
    rows = list(csv.reader(f, strict=True))
header, body = rows[0], rows[1:]
assert all(len(r) == len(header) for r in body), "ragged rows"
d = [dict(zip(header, r)) for r in body]
print(json.dumps({
    "gc_pause": sum(r["kind"] == "gc_pause" for r in d),
    "safepoint": sum(r["kind"] == "safepoint" for r in d),
    "rows": len(d),
    "files": sorted({r["source_file"] for r in d}),
    "heap": sum(r["heap_after_bytes"] != "" for r in d),
    "line": sum(r["source_line"] != "" for r in d),
    "index": sum(r["source_event_index"] != "" for r in d),
}))
"#;
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python3 could not read {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let n = |k: &str| v[k].as_u64().unwrap();
    EventsCsv {
        gc_pauses: n("gc_pause"),
        safepoints: n("safepoint"),
        rows: n("rows"),
        source_files: v["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_string())
            .collect(),
        rows_with_heap: n("heap"),
        rows_with_line: n("line"),
        rows_with_event_index: n("index"),
    }
}

/// `pauselab analyze --events CSV INPUT`, which must succeed, read back with
/// [`read_events_csv`].
pub fn export_events(input: &Path, csv: &Path) -> EventsCsv {
    let out = run(&["--events", csv.to_str().unwrap(), input.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    read_events_csv(csv)
}

/// The finding of `rule` in an `analyze --json` report, when it fired.
pub fn finding(json: &serde_json::Value, rule: &str) -> Option<serde_json::Value> {
    json["findings"]
        .as_array()?
        .iter()
        .find(|f| f["rule"] == rule)
        .cloned()
}
