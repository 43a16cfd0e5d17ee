//! What keeps a stressor, the memory filler or the THP governor from starting, in one
//! line naming the file, directory or thread and what is missing.

use std::path::PathBuf;

use crate::host::sys::SysError;

#[derive(Debug, thiserror::Error)]
pub enum StressError {
    #[error("{}: cannot read the THP mode: {source}", path.display())]
    ThpUnreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `text` is the file's, without a selected (bracketed) mode.
    #[error("{}: no selected mode in {text:?} (expected e.g. \"always [madvise] never\")", path.display())]
    ThpNoMode { path: PathBuf, text: String },
    #[error("disk writer: {} has {} MiB free, needs {} MiB", dir.display(), free >> 20, needed >> 20)]
    DiskFull {
        dir: PathBuf,
        free: u64,
        needed: u64,
    },
    /// The thread `what` (`disk-writer`, `the memory filler`) could not be started.
    #[error("start {what}: {source}")]
    Thread {
        what: String,
        source: std::io::Error,
    },
    /// The heaps of JVMs to start together plus the margin exceed MemAvailable (bytes).
    #[error("needs {} MiB of heap plus a {} MiB margin, but MemAvailable is {} MiB", heaps >> 20, margin >> 20, available >> 20)]
    HeapsDoNotFit {
        heaps: u64,
        margin: u64,
        available: u64,
    },
    #[error(transparent)]
    Sys(#[from] SysError),
}
