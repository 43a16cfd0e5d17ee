//! Layer 7, judging: one judge per metric, pure functions over the variants' summaries.

mod compare;
mod jmh_score;
mod summary;
pub mod verdict;

pub use compare::compare;
pub use jmh_score::judge_summaries;
pub use summary::{JdkVerdict, ReaderSummary, VariantSummary};
