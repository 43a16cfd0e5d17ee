use std::path::PathBuf;

/// Why a host fact could not be read. Messages name the file and what to do.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("unexpected content in {path}: {what}")]
    Parse { path: PathBuf, what: String },
    #[error("process {pid} does not exist (it may have exited)")]
    NoProcess { pid: u32 },
    #[error("{path}: {what}")]
    Probe { path: PathBuf, what: String },
}
