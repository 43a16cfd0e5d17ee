//! Layer 7, judging: one judge per metric, pure functions over the variants' summaries.

pub mod jmh_score;
pub mod summary;
pub mod verdict;
