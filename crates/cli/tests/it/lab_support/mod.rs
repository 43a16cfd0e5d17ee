//! Shared set-up of the lab tests: a private state directory, the test experiment with a
//! tiny workload compiled here, and checks that the host is as it was.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

pub struct TestEnv {
    pub dir: PathBuf,
    /// None for a run that changes nothing on the host ([`TestEnv::beside_others`]).
    _guard: Option<MutexGuard<'static, ()>>,
}

impl TestEnv {
    /// None (with a message) when not root: the lab's host changes need root. Holds the
    /// host lock: no other host-changing test runs meanwhile.
    pub fn new() -> Option<TestEnv> {
        TestEnv::create(true)
    }

    /// For a run that changes nothing on the host (its variants on the host's /tmp, no
    /// fault, no cgroup, no host setting) and judges by a margin CPU noise cannot close:
    /// it runs beside the others, without the host lock.
    pub fn beside_others() -> Option<TestEnv> {
        TestEnv::create(false)
    }

    fn create(exclusive: bool) -> Option<TestEnv> {
        // SAFETY: no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: the lab's fault injection needs root");
            return None;
        }
        let guard = exclusive.then(crate::host_lock::exclusive);
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "lab-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(dir.join("state")).unwrap();
        let classes = dir.join("classes");
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lab/Garbage.java");
        let javac = Command::new("javac")
            .arg("-d")
            .arg(&classes)
            .arg(&source)
            .status()
            .expect("javac (a JDK) is needed for the lab tests");
        assert!(javac.success());
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lab/stall.toml"),
            dir.join("stall.toml"),
        )
        .unwrap();
        Some(TestEnv { dir, _guard: guard })
    }

    pub fn state(&self) -> PathBuf {
        self.dir.join("state")
    }

    pub fn experiment(&self) -> String {
        self.dir.join("stall.toml").display().to_string()
    }

    /// Another test experiment of tests/lab/, next to the compiled workload.
    pub fn experiment_named(&self, file: &str) -> String {
        let target = self.dir.join(file);
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/lab")
                .join(file),
            &target,
        )
        .unwrap();
        target.display().to_string()
    }

    pub fn out(&self) -> String {
        self.dir.join("out").display().to_string()
    }

    pub fn lab(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pauselab"));
        cmd.arg("lab")
            .args(args)
            .env("PAUSELAB_STATE_DIR", self.state());
        cmd
    }

    /// Everything a run of this environment left on the host.
    pub fn leftovers(&self) -> Vec<String> {
        let state = std::fs::canonicalize(self.state()).unwrap();
        let mut left = Vec::new();
        for entry in std::fs::read_dir("/sys/block").unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Ok(backing) =
                std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file"))
            {
                if backing.trim().starts_with(state.to_str().unwrap()) {
                    left.push(format!("loop device {name} on {}", backing.trim()));
                }
            }
        }
        for line in std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .lines()
        {
            let target = line.split(' ').nth(4).unwrap_or_default();
            if target.starts_with(state.to_str().unwrap()) {
                left.push(format!("mount on {target}"));
            }
        }
        let throttles =
            std::fs::read_to_string("/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device")
                .unwrap_or_default();
        // Loop devices of other users of this host may be throttled too: a rule is ours
        // when its device is detached (ours were) or backs a file in our state directory.
        for line in throttles.lines().filter(|l| l.starts_with("7:")) {
            let minor = line[2..].split_whitespace().next().unwrap_or_default();
            let backing =
                std::fs::read_to_string(format!("/sys/block/loop{minor}/loop/backing_file"));
            let ours = match backing {
                Err(_) => true,
                Ok(b) => b.trim().starts_with(state.to_str().unwrap()),
            };
            if ours {
                left.push(format!("loop device throttle {line}"));
            }
        }
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let pid = entry.file_name().to_string_lossy().into_owned();
            if !pid.chars().all(|c| c.is_ascii_digit()) {
                continue;
            }
            if let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) {
                let marker = format!("PAUSELAB_STATE_DIR={}", self.state().display());
                // The run's JVMs, and anything it forked (a cgroup filler carries the
                // environment of the lab process itself).
                let is_ours = env.split(|&b| b == 0).any(|kv| kv == marker.as_bytes());
                let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .map(|s| !s.rsplit_once(')').unwrap().1.trim_start().starts_with('Z'))
                    .unwrap_or(false);
                if is_ours && alive {
                    left.push(format!("process {pid}"));
                }
            }
        }
        for area in std::fs::read_to_string("/proc/swaps")
            .unwrap_or_default()
            .lines()
            .skip(1)
        {
            let name = area.split_whitespace().next().unwrap_or_default();
            if name.starts_with(state.to_str().unwrap()) {
                left.push(format!("swap on {name}"));
            }
        }
        let v2_root = pauselab_lab::cgroup::Hierarchies::read()
            .v2
            .map(|v2| v2.root.display().to_string())
            .unwrap_or_default();
        for root in [
            "/sys/fs/cgroup/cpu",
            "/sys/fs/cgroup/memory",
            "/sys/fs/cgroup",
            &v2_root,
        ] {
            if let Ok(entries) = std::fs::read_dir(root) {
                for e in entries.flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if name.starts_with("pauselab-test-") {
                        left.push(format!("cgroup {}", e.path().display()));
                    }
                }
            }
        }
        for sub in ["lab/journals", "lab/scratch"] {
            if let Ok(entries) = std::fs::read_dir(self.state().join(sub)) {
                for e in entries.flatten() {
                    left.push(format!("file {}", e.path().display()));
                }
            }
        }
        left
    }

    /// Runs `pauselab lab cleanup`, asserts it succeeded and returns what it printed.
    pub fn cleanup(&self) -> String {
        let output = self.lab(&["cleanup"]).output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "{stdout} {}",
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    }

    /// Nothing of the run is left. A loop device whose filesystem was still held open
    /// when it was detached goes away when its last user closes it, a moment later: that
    /// moment is waited for (up to 10 s), anything else left would still be there.
    pub fn assert_clean(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut left = self.leftovers();
        while !left.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(200));
            left = self.leftovers();
        }
        assert!(left.is_empty(), "left behind: {left:#?}");
    }
}

/// Starts `pauselab lab ARGS` (stopping at `testpoint`, when given) and waits until its
/// stderr has a line containing `wait_for`; stderr is drained afterwards so the run never
/// blocks on a full pipe.
pub fn start_lab_until(
    env: &TestEnv,
    args: &[&str],
    testpoint: Option<&str>,
    wait_for: &str,
) -> Child {
    let mut cmd = env.lab(args);
    if let Some(point) = testpoint {
        cmd.env("PAUSELAB_LAB_TESTPOINT", point);
    }
    let mut child = cmd
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        assert!(Instant::now() < deadline, "run never reached {wait_for:?}");
        match lines.next() {
            Some(Ok(line)) if line.contains(wait_for) => break,
            Some(Ok(_)) => continue,
            _ => panic!("run ended before {wait_for:?}: {:?}", child.wait()),
        }
    }
    std::thread::spawn(move || for _ in lines {});
    child
}

/// The value of measurement `name` in a variant's summary (summary.json or verdict.json).
pub fn measurement(variant: &serde_json::Value, name: &str) -> Option<f64> {
    variant["measurements"]
        .as_array()?
        .iter()
        .find(|m| m["name"] == name)?["value"]
        .as_f64()
}

/// The summary of variant `name` in a verdict.json.
pub fn variant_named<'a>(verdict: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    verdict["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["variant"] == name)
        .unwrap_or_else(|| panic!("no variant {name} in {verdict}"))
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        // A failed test must not leave the host changed for the next one.
        if !self.leftovers().is_empty() {
            let _ = self.lab(&["cleanup"]).output();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
