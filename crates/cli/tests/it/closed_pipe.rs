//! Every command that prints ends quietly when its reader has gone (`pauselab ... | head`):
//! status 141 like `cat` and `grep`, nothing on stderr, no panic.

use crate::probe_slowdev;

use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The write end of a pipe whose read end is already closed.
fn closed_pipe() -> Stdio {
    let mut ends = [0; 2];
    // SAFETY: a two-descriptor array; close-on-exec so no other test's child inherits them.
    assert_eq!(
        unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) },
        0
    );
    // SAFETY: the read end is ours and closed once.
    unsafe { libc::close(ends[0]) };
    // SAFETY: the write end is a fresh descriptor owned by the returned Stdio.
    Stdio::from(unsafe { OwnedFd::from_raw_fd(ends[1]) })
}

fn assert_quiet_exit(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(closed_pipe())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert_eq!(out.status.code(), Some(141), "{args:?}: {stderr}");
    assert_eq!(stderr, "", "{args:?}");
}

#[test]
fn every_printing_command_exits_141_on_a_closed_pipe() {
    let root = repo_root();
    let gc_log = root.join("fixtures/gclogs/demo-g1-jdk17.log");
    let bundle = root.join("fixtures/bundles/lab-kernel6.1");
    let hlog = bundle.join("variants/default-jdk17/hiccups.hlog");
    let probe_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("closed-pipe-probe");
    std::fs::create_dir_all(&probe_dir).unwrap();
    let (gc_log, bundle, hlog, probe_dir) = (
        gc_log.to_str().unwrap(),
        bundle.to_str().unwrap(),
        hlog.to_str().unwrap(),
        probe_dir.to_str().unwrap(),
    );
    let commands: &[&[&str]] = &[
        &["analyze", gc_log],
        &["analyze", "--json", gc_log],
        &["hlog", hlog],
        &["hlog", "--json", hlog],
        &["hlog", "--hgrm", hlog],
        &["report", bundle],
        &["report", "--json", bundle],
        &["doctor"],
        &["doctor", "--json"],
        &["jvms"],
        &["jvms", "--json"],
        &["lab", "list"],
        &["lab", "list", "--json"],
        &["lab", "show", "hsperf-mmap"],
        &["probe", "mmap", "--duration", "200ms", probe_dir],
        &["probe", "mmap", "--json", "--duration", "200ms", probe_dir],
        &["--help"],
    ];
    for args in commands {
        assert_quiet_exit(args);
    }
}

/// The commands that read a running JVM (watch and jstat print their header first, so they
/// meet the closed pipe before the first interval ends), and the exporter's one-shot scrape.
#[test]
fn jvm_commands_exit_141_on_a_closed_pipe() {
    use probe_slowdev::jvm::{available, TestJvm, Tmp};
    if !available() {
        eprintln!("skipped: needs JDK 17 and unshare");
        return;
    }
    let jvm = TestJvm::start(Tmp::Tmpfs, &[], 30);
    let pid = jvm.pid.to_string();
    let pid = pid.as_str();
    let commands: &[&[&str]] = &[
        &["watch", pid, "--interval", "100", "--count", "2"],
        &["watch", pid, "--json", "--interval", "100", "--count", "2"],
        &["jstat", "-gcutil", pid],
        &["jstat", "-gcutil", pid, "100", "3"],
        &["jstat", "-gc", "--json", pid],
        &["perf", pid],
        &["perf", pid, "--json"],
        &["export", "--once"],
    ];
    for args in commands {
        assert_quiet_exit(args);
    }
}
