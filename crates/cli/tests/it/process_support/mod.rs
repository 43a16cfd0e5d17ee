//! Running programs from tests: their output on success, a clear failure otherwise, and
//! children that do not outlive a failed test.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::OnceLock;

/// A child process killed when dropped, also when the test fails.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `command` to its end and returns its standard output; fails the test with its
/// status and both outputs when it does not succeed.
pub fn stdout_of(command: &mut Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The version of this build's `pauselab`, as `--version` prints it and artifacts name it.
pub fn pauselab_version() -> String {
    let version = stdout_of(Command::new(env!("CARGO_BIN_EXE_pauselab")).arg("--version"));
    version
        .trim()
        .strip_prefix("pauselab ")
        .unwrap()
        .to_string()
}

// Hostile processes: pauselab runs as root and reads what other users control.

pub const NOBODY: &str = "65534";

/// Runs `cmd` as uid/gid 65534 (nobody) with no supplementary groups.
pub fn as_nobody(program: &str) -> Command {
    let mut cmd = Command::new("setpriv");
    cmd.args([
        &format!("--reuid={NOBODY}"),
        &format!("--regid={NOBODY}"),
        "--clear-groups",
        program,
    ]);
    cmd
}

/// The programs of tests/hsperf_hostile, built once with the system C compiler: a fake
/// JVM, a faithful fake libjvm.so and one whose VMStructs layout is hostile.
pub struct FakeBuild {
    pub fake_jvm: PathBuf,
    pub faithful_libjvm: PathBuf,
    pub hostile_libjvm: PathBuf,
}

pub fn fake_build() -> &'static FakeBuild {
    static BUILD: OnceLock<FakeBuild> = OnceLock::new();
    BUILD.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hsperf_hostile");
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hsperf-hostile");
        let build = FakeBuild {
            fake_jvm: out.join("fake_jvm"),
            faithful_libjvm: out.join("faithful/libjvm.so"),
            hostile_libjvm: out.join("hostile/libjvm.so"),
        };
        let cc = |args: &[&str], output: &Path| {
            std::fs::create_dir_all(output.parent().unwrap()).unwrap();
            let status = Command::new("cc")
                .args(["-O1", "-Wall", "-o"])
                .arg(output)
                .args(args)
                .current_dir(&src)
                .status()
                .expect("cc runs");
            assert!(status.success(), "cc {args:?} failed");
        };
        cc(&["fake_jvm.c", "-ldl"], &build.fake_jvm);
        cc(
            &["-shared", "-fPIC", "fake_libjvm.c"],
            &build.faithful_libjvm,
        );
        cc(
            &[
                "-shared",
                "-fPIC",
                "-DTYPE_NAME_OFFSET=0xFFFFFFFFFFFFFFFCULL",
                "fake_libjvm.c",
            ],
            &build.hostile_libjvm,
        );
        build
    })
}

/// The peak resident set of one command, its own. A child spawned straight from the test
/// process inherits the test process's high-water mark (Linux records it at exec), which
/// any test beside it may raise (a panic's backtrace reads the binary's debug info): the
/// command runs under GNU time instead, a small process that forks it and reports its
/// rusage. Exit status, stdin, stdout and stderr are the command's.
pub struct PeakRss {
    report: tempfile::TempPath,
}

impl PeakRss {
    /// `command` (program, arguments, environment, directory) under GNU time.
    pub fn wrap(command: &Command) -> (Command, PeakRss) {
        let report = tempfile::NamedTempFile::new().unwrap().into_temp_path();
        let mut timed = Command::new("/usr/bin/time");
        timed
            .args(["-f", "%M", "-o"])
            .arg(&report)
            .arg(command.get_program())
            .args(command.get_args());
        for (key, value) in command.get_envs() {
            match value {
                Some(value) => timed.env(key, value),
                None => timed.env_remove(key),
            };
        }
        if let Some(dir) = command.get_current_dir() {
            timed.current_dir(dir);
        }
        (timed, PeakRss { report })
    }

    /// KiB, once the command has exited.
    pub fn kib(&self) -> i64 {
        let text = std::fs::read_to_string(&self.report).unwrap();
        // A command that failed gets a line saying so before the number.
        let last = text.lines().last().unwrap_or_default();
        last.trim()
            .parse()
            .unwrap_or_else(|_| panic!("GNU time reported {text:?}"))
    }
}
