//! Running programs from tests: their output on success, a clear failure otherwise, and
//! children that do not outlive a failed test.

#![allow(dead_code)]

use std::process::{Child, Command};

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
