//! Why a measurement could not be read or its log written; the summary keeps the message
//! among the variant's `errors`.

use std::path::PathBuf;

use pauselab_pause::interval_log::IntervalLogError;

#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// A file the measurement writes (the safepoint interval log).
    #[error("{}: {source}", path.display())]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    IntervalLog(#[from] IntervalLogError),
    /// The variant's GC log, read as `pauselab analyze` reads it.
    #[error("{0}")]
    GcLog(#[from] pauselab_gclog::Error),
}
