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

/// Processes that keep every core busy until dropped.
pub struct CpuHogs(Vec<std::process::Child>);

impl CpuHogs {
    pub fn start() -> CpuHogs {
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
