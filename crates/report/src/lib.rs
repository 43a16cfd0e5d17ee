//! Reports on pauses and hiccups: interval-log summaries and `.hgrm` distributions identical
//! to Java HdrHistogram's, percentile and timeline charts as SVG (and PNG), a self-contained
//! HTML report per lab bundle, and a matrix across hosts and JDKs.

pub mod bundle;
pub mod diagnosis;
pub mod each_jvm;
pub mod gc;
pub mod hgrm;
pub mod html;
pub mod inputs;
pub mod matrix;
pub mod model;
pub mod png;
pub mod summary;
pub mod svg;
pub mod table;
pub mod text;

pub use summary::{IntervalPoint, LogSummary, Stats};

use pauselab_pause::interval_log::IntervalLogError;

/// A file under the repository's `fixtures/`, for tests.
#[cfg(test)]
pub(crate) fn fixture(path: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(path)
}

/// Why a report could not be made. Display names the file.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Log(#[from] IntervalLogError),
    #[error(transparent)]
    GcLog(#[from] pauselab_gclog::Error),
    #[error("{source_name}: {message}")]
    Input {
        source_name: String,
        message: String,
    },
    /// A manifest of another format or a newer version; the message names the file.
    #[error("{0}")]
    Bundle(String),
    /// A JFR recording that could not be read; the message names the file.
    #[error("{0}")]
    Recording(String),
    /// `--matrix` over sections that make no matrix, or too large a one.
    #[error("{0}")]
    Matrix(String),
    #[error("{path}: {error}")]
    Io {
        path: String,
        #[source]
        error: std::io::Error,
    },
}
