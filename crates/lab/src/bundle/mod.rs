//! Layer 8, the result bundle: [`write`] writes what a run, its measurements
//! (`measure::summarise`) and its judges (`judge::judge_run`) made; [`finish`] does the
//! three in order for a finished run, and [`JvmExecutor`] runs a matrix's runs with real
//! JVMs into their bundles.

mod executor;
mod write;

pub use crate::judge::{JdkVerdict, Outcome, ReaderSummary, VariantSummary};
pub use executor::{finish, JvmExecutor};
pub use write::write;
