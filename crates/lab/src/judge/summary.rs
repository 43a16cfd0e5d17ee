//! What the judges work on and give back: the summary of each variant on each JDK
//! (`summary.json`) and the verdict of each JDK, as the bundle format defines them.

pub use pauselab_bundle::{JdkVerdict, ReaderSummary, VariantSummary};
