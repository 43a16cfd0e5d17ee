//! A slow block device that requires stable pages, for tests that need real writeback
//! stalls: the lab's own fault injection (`pauselab_lab::fault`, docs/lab.md), journaled in
//! a state directory of the test's own, and the recipe's `dd` loop keeping a backlog (each
//! pass truncates and rewrites the file, so the backlog is never throttled by the writer
//! waiting on its own pages).
//!
//! Everything it changes is undone when it is dropped, also when the test fails; a test
//! process that was killed leaves a journal behind that the next `SlowDevice::start`
//! replays (the lab's `cleanup`).

#![allow(dead_code)] // each test binary uses a different part

pub mod jvm;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use pauselab_lab::fault::{self, SlowDeviceSpec};
use pauselab_lab::journal::{self, Journal};

/// Write bandwidth of the slow device: 4 MB/s.
pub const BYTES_PER_SECOND: u64 = 4 * 1024 * 1024;

/// Why this host cannot build the slow device, if it cannot.
pub fn unavailable() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("needs root (loop devices, mounts, blkio throttle)".into());
    }
    if let Err(missing) = fault::WriteThrottle::for_this_host() {
        return Some(missing.to_string());
    }
    for tool in ["losetup", "mkfs.ext4", "mount", "umount"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            return Some(format!("needs `{tool}`"));
        }
    }
    None
}

pub struct SlowDevice {
    mount: PathBuf,
    load: Option<Child>,
    // Undoes the device when dropped, after `Drop` has stopped the load.
    _journal: Journal,
    // Released last: no other host-changing test runs while the device exists.
    _host: std::sync::MutexGuard<'static, ()>,
}

/// Journals of every slow test device live here, so a killed test's are found again.
fn state_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("slowdev-state")
}

impl SlowDevice {
    /// Builds the device and starts a backlog of `chunk_mib` MiB writes with fdatasync
    /// (a stalled store waits about chunk / 4 MB/s). Panics with the reason on failure,
    /// after undoing what was already set up.
    pub fn start(name: &str, chunk_mib: u32) -> SlowDevice {
        let host = crate::host_lock::exclusive();
        let state = state_dir();
        let _ = journal::cleanup_stale(&state);
        let run_id = format!("slowdev-{name}-{}", std::process::id());
        let mut journal = Journal::create(&state, &run_id, &format!("test slow device {name}"))
            .unwrap_or_else(|e| panic!("cannot build the slow device: {e}"));
        let scratch = state.join("scratch").join(&run_id);
        std::fs::create_dir_all(scratch.parent().unwrap()).unwrap();
        fault::create_dir(&mut journal, &scratch)
            .unwrap_or_else(|e| panic!("cannot build the slow device: {e}"));
        let spec = SlowDeviceSpec {
            size_bytes: 1 << 30,
            write_bps: BYTES_PER_SECOND,
            stable_writes: true,
            fstype: pauselab_lab::experiment::Filesystem::Ext4,
            mount_options: None,
        };
        let device = fault::setup_slow_device(&mut journal, &scratch, &spec)
            .unwrap_or_else(|e| panic!("cannot build the slow device: {e}"));
        let script = format!(
            "while :; do dd if=/dev/zero of={}/load bs=1M count={chunk_mib} conv=fdatasync 2>/dev/null; done",
            device.mount_point.display()
        );
        let mut command = Command::new("sh");
        command
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .process_group(0);
        // SAFETY: prctl is async-signal-safe; the load dies with the test thread.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let load = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start the write backlog: {e}"));
        SlowDevice {
            mount: device.mount_point,
            load: Some(load),
            _journal: journal,
            _host: host,
        }
    }

    pub fn mount_point(&self) -> &Path {
        &self.mount
    }
}

impl Drop for SlowDevice {
    fn drop(&mut self) {
        if let Some(mut load) = self.load.take() {
            // The whole process group: the shell loop and its current dd.
            // SAFETY: kill on the group we created.
            unsafe { libc::kill(-(load.id() as i32), libc::SIGKILL) };
            let _ = load.wait();
        }
    }
}
