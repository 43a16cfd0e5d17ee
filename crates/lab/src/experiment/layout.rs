//! The names of the files in a result bundle (docs/lab.md, "Result bundle"): the run
//! writes them, the bundle reads and summarizes them.

pub use pauselab_bundle::{
    FORMAT, FORMAT_VERSION, GC_LOG, HICCUP_LOG, HOST_SERIES, JFR_RECORDING, LATENCY_LOG, MANIFEST,
    SAFEPOINT_LOG, SUMMARY, VERDICT, WORKLOAD_OUT,
};

/// The workload argument that the path of the variant's request latency log
/// (`LATENCY_LOG` in its bundle directory) replaces.
pub const LATENCY_LOG_PLACEHOLDER: &str = "{latency_log}";
