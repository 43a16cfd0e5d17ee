//! The findings' public names. The rules themselves, one file each, are in `rules`; what
//! they keep while the log streams by is in `evidence`.

pub use crate::evidence::{Evidence, RuleTracker};
pub use crate::rules::causes::{Cause, JvmFlags};
pub use crate::rules::finding::{Finding, Severity};
pub use crate::rules::{Thresholds, RULES};
