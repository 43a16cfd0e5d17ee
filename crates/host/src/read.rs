//! Small helpers to read procfs/sysfs files with errors that name the file.

use std::path::{Path, PathBuf};

use crate::{HostError, Result};

pub(crate) fn read_string(path: impl AsRef<Path>) -> Result<String> {
    let path = path.as_ref();
    std::fs::read_to_string(path).map_err(|source| HostError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// A file that may legitimately be absent (feature not present on this kernel).
pub(crate) fn read_optional(path: impl AsRef<Path>) -> Result<Option<String>> {
    let path = path.as_ref();
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(HostError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

pub(crate) fn parse_error(path: impl Into<PathBuf>, what: impl Into<String>) -> HostError {
    HostError::Parse {
        path: path.into(),
        what: what.into(),
    }
}

pub(crate) fn parse_number<T: std::str::FromStr>(path: &Path, text: &str) -> Result<T> {
    text.trim()
        .parse()
        .map_err(|_| parse_error(path, format!("expected a number, found {:?}", text.trim())))
}

/// A number from a file that may be absent.
pub(crate) fn read_optional_number<T: std::str::FromStr>(path: &Path) -> Result<Option<T>> {
    match read_optional(path)? {
        Some(text) => parse_number(path, &text).map(Some),
        None => Ok(None),
    }
}

/// Fails with [`HostError::NoProcess`] when `/proc/<pid>` is gone, so callers report an
/// exited process rather than a missing file.
pub(crate) fn require_process(pid: u32) -> Result<()> {
    if Path::new(&format!("/proc/{pid}")).exists() {
        Ok(())
    } else {
        Err(HostError::NoProcess { pid })
    }
}
