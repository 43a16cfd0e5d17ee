//! Errors of the hsperf crate. Every message names the pid or file and says what to do.

use std::path::PathBuf;

/// Everything that can go wrong while finding, reading or attaching to a JVM.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The bytes are not (or no longer) valid hsperf data.
    #[error("{origin}: not valid hsperf data: {reason}")]
    Format { origin: String, reason: String },

    /// The process does not exist (or exited while it was being read).
    #[error("pid {pid}: no such process (it is not running, or exited while being read); list JVMs with `pauselab jvms`")]
    NoProcess { pid: u32 },

    /// The process exists but is not a HotSpot JVM: it was not touched.
    #[error("pid {pid}: not a HotSpot JVM (no libjvm.so mapped); list JVMs with `pauselab jvms`")]
    NotJvm { pid: u32 },

    /// The JVM runs with -XX:-UsePerfData: there are no counters to read.
    #[error("pid {pid}: the JVM runs with -XX:-UsePerfData, it keeps no perf counters; restart it without that flag")]
    PerfDataDisabled { pid: u32 },

    /// The JVM is still starting up and has not published its counters yet.
    #[error(
        "pid {pid}: the JVM is still starting (perf data not accessible yet); retry in a moment"
    )]
    NotReady { pid: u32 },

    /// The counters could not be read for lack of permission.
    #[error(
        "pid {pid}: permission denied reading {what}; run as the JVM's user (uid {uid}) or as root"
    )]
    Permission { pid: u32, uid: u32, what: String },

    /// No perf data file exists for this JVM (e.g. -XX:+PerfDisableSharedMem).
    #[error("pid {pid}: no perf data file (looked in {looked}); the JVM may run with -XX:+PerfDisableSharedMem: use --source memory or auto")]
    NoFile { pid: u32, looked: String },

    /// The region kept changing while it was copied.
    #[error("pid {pid}: perf data kept changing during {attempts} read attempts; retry")]
    Unstable { pid: u32, attempts: u32 },

    /// The memory route could not locate the perf data region.
    #[error("pid {pid}: cannot locate the perf data in memory: {reason}")]
    Memory { pid: u32, reason: String },

    /// Dynamic attach failed.
    #[error("pid {pid}: attach failed: {reason}")]
    Attach { pid: u32, reason: String },

    /// An I/O error on a file, with the file named.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn format(origin: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Format {
            origin: origin.into(),
            reason: reason.into(),
        }
    }
}
