//! The result bundle of a lab run (docs/bundle-format.md), as one set of serde types: the
//! lab writes them, the report reads them. A field the oldest bundles lack carries
//! `#[serde(default)]`; every other field is required, so a bundle missing it is refused
//! with an error naming the file instead of being read as zeros.

mod files;
mod manifest;
mod matrix;
pub mod noise;
mod verdict;

pub use files::{
    check_format, FORMAT, FORMAT_VERSION, GC_LOG, HICCUP_LOG, HOST_SERIES, JFR_RECORDING,
    LATENCY_LOG, MANIFEST, MATRIX, SAFEPOINT_LOG, SUMMARY, VERDICT, WORKLOAD_OUT,
};
pub use manifest::{
    Host, HostPath, Manifest, ManifestExperiment, ManifestJdk, RunSettings, VariantEntry,
};
pub use matrix::{combine_repeats, CellEntry, CellVerdict, MatrixRun, MATRIX_FORMAT};
pub use verdict::{
    Compared, Comparison, JdkVerdict, Measurement, ReaderSummary, Role, VariantSummary,
    VariantVerdict, Verdict, Vulnerable,
};
