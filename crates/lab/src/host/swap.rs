//! A swap area for the run: a file on the lab's device (the slow device when the experiment
//! injects one, the `--disk` directory, or the run's scratch area), prepared with `mkswap`
//! and turned on with `swapon`. Both the file and the swap area are journaled before they
//! exist, so the run's end, Ctrl-C, SIGTERM and `pauselab lab cleanup` after SIGKILL turn it
//! off (`swapoff`) and remove the file.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::host::journal::{Change, Journal};
use crate::host::sys;
use crate::LabError;

/// A swap area this run turned on.
#[derive(Debug, Clone)]
pub struct SwapFile {
    pub path: PathBuf,
    pub bytes: u64,
}

/// Creates `<dir>/pauselab.swap` of `bytes` and turns it on. Needs root.
pub fn create_swap_file(
    journal: &mut Journal,
    dir: &Path,
    bytes: u64,
) -> Result<SwapFile, LabError> {
    let path = dir.join("pauselab.swap");
    let free = sys::free_bytes(dir)?;
    // The swap file must leave the filesystem usable for the logs written beside it.
    if free < bytes + (256 << 20) {
        return Err(LabError::Host(format!(
            "{}: {} MiB free, not enough for a {} MiB swap file; give a smaller [swap] size or another --disk",
            dir.display(),
            free >> 20,
            bytes >> 20
        )));
    }
    journal.record(Change::File { path: path.clone() })?;
    pauselab_pause::output::create_file(&path)
        .map_err(|e| LabError::io(&path, "create the swap file", e))?;
    // swapon refuses a swap file others can read.
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600))
        .map_err(|e| LabError::io(&path, "chmod", e))?;
    sys::allocate(&path, bytes)?;
    let path_text = path.display().to_string();
    sys::run_tool("mkswap", &[&path_text])?;
    journal.record(Change::Swap { path: path.clone() })?;
    sys::swapon(&path).map_err(|e| {
        LabError::Host(format!(
            "{e}; the filesystem of {} may not hold swap files (tmpfs, overlay, btrfs without nocow cannot): give --disk a directory on ext4 or xfs",
            dir.display()
        ))
    })?;
    Ok(SwapFile { path, bytes })
}
