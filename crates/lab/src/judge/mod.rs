//! Layer 7, judging: one judge per metric, pure functions over the variants' summaries.

mod compare;
mod jmh_score;
mod run_verdict;
mod summary;
pub mod verdict;

pub use compare::compare;
pub use jmh_score::judge_summaries;
pub use run_verdict::{judge_run, Outcome, RunFacts};
pub use summary::{JdkVerdict, ReaderSummary, VariantSummary};
