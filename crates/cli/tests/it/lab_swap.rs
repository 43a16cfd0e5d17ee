//! Swap and memory cgroups as host changes: a run with a swap file, a memory cgroup whose
//! filler pushes the JVM into swap, and per-variant swappiness and THP mode undoes all of
//! it when it ends or gets SIGTERM, and `pauselab lab cleanup` does after SIGKILL: no swap
//! area, cgroup, process or file is left, and swappiness and THP are as they were. Root
//! only.

use crate::lab_support;

use std::path::Path;
use std::time::Duration;

use lab_support::*;

const SWAPPINESS: &str = "/proc/sys/vm/swappiness";
const THP: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// What the host looks like from the outside: active swap areas, swappiness, THP mode.
#[derive(Debug, PartialEq)]
struct HostState {
    swaps: Vec<String>,
    swappiness: String,
    thp: String,
}

impl HostState {
    fn now() -> HostState {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        HostState {
            swaps: read("/proc/swaps")
                .lines()
                .skip(1)
                .filter_map(|l| l.split_whitespace().next().map(str::to_string))
                .collect(),
            swappiness: read(SWAPPINESS).trim().to_string(),
            thp: read(THP).trim().to_string(),
        }
    }
}

fn has_memory_cgroups() -> bool {
    Path::new("/sys/fs/cgroup/memory/cgroup.procs").exists()
        || std::fs::read_to_string("/sys/fs/cgroup/cgroup.subtree_control")
            .is_ok_and(|c| c.split_whitespace().any(|c| c == "memory"))
}

/// The test environment with the swap experiment, and the host before the run; None
/// (with a message) without root or a memory controller.
fn set_up() -> Option<(TestEnv, String, HostState)> {
    let env = TestEnv::new()?;
    if !has_memory_cgroups() {
        eprintln!("skipped: no cgroup memory controller");
        return None;
    }
    let experiment = env.experiment_named("swap.toml");
    Some((env, experiment, HostState::now()))
}

/// Starts the test run, waits until its JVM is in swap, checks the host changed, and sends
/// `signal`; returns the environment and the host as it was before.
fn signal_while_swapping(signal: i32) -> Option<(TestEnv, HostState)> {
    let (env, experiment, before) = set_up()?;
    let out = env.out();
    let mut child = start_lab_until(
        &env,
        &["run", &experiment, "--out", &out],
        Some("started"),
        "pauselab-testpoint started",
    );
    // The filler starts 1 s after the JVM and pushes it into swap.
    std::thread::sleep(Duration::from_secs(3));
    let during = HostState::now();
    assert_eq!(during.swaps.len(), before.swaps.len() + 1, "{during:?}");
    assert_eq!(during.swappiness, "100");
    assert!(during.thp.contains("[never]"), "{during:?}");
    // SAFETY: signalling our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
    child.wait().unwrap();
    Some((env, before))
}

#[test]
fn sigkill_with_swap_on_then_cleanup() {
    let Some((env, before)) = signal_while_swapping(libc::SIGKILL) else {
        return;
    };
    let left = env.leftovers();
    assert!(
        left.iter().any(|l| l.starts_with("swap on")),
        "SIGKILL left no swap on: the test would prove nothing: {left:?}"
    );
    let stdout = env.cleanup();
    assert!(stdout.contains("undone: swap on"), "{stdout}");
    env.assert_clean();
    assert_eq!(HostState::now(), before);
}

#[test]
fn sigterm_with_swap_on_undoes_everything() {
    let Some((env, before)) = signal_while_swapping(libc::SIGTERM) else {
        return;
    };
    env.assert_clean();
    assert_eq!(HostState::now(), before);
}

#[test]
fn a_finished_run_swapped_and_undid_everything() {
    let Some((env, experiment, before)) = set_up() else {
        return;
    };
    let output = env
        .lab(&["run", &experiment, "--out", &env.out(), "--json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let verdict: serde_json::Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout} {}", String::from_utf8_lossy(&output.stderr)));
    let variant = variant_named(&verdict, "swapping");
    // 96 MiB of pre-touched heap and 128 MiB of filler in 160 MiB: the JVM's pages went
    // to swap, as its cgroup and the kernel both count.
    let jvm_swap = measurement(variant, "memcg.jvm_peak_swap_mib").unwrap_or(0.0);
    let pswpout = measurement(variant, "vm.pswpout").unwrap_or(0.0);
    assert!(jvm_swap > 0.0, "{variant}");
    // The host counts every page written to swap, the JVM's among them.
    assert!(pswpout * 4096.0 >= jvm_swap * 1048576.0, "{variant}");
    assert!(
        measurement(variant, "process.major_faults").is_some(),
        "{variant}"
    );
    env.assert_clean();
    assert_eq!(HostState::now(), before);
}
