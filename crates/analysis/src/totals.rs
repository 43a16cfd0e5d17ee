//! Count, sum and maximum of durations under one name (a pause, a VM operation, a thread,
//! a cause), as the report lists them.

use serde::Serialize;

/// Count, total and maximum of durations under one name.
#[derive(Debug, Clone, Default, Serialize)]
pub struct NameTotals {
    /// The pause, VM operation, thread or cause.
    pub name: String,
    /// How many.
    pub count: u64,
    /// Their total, ms.
    pub total_ms: f64,
    /// The longest, ms.
    pub max_ms: f64,
    /// Only for VM operations: whether it is a garbage collection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gc: Option<bool>,
}

#[derive(Default)]
pub(crate) struct Totals {
    pub(crate) count: u64,
    pub(crate) total_ns: u128,
    pub(crate) max_ns: u64,
    /// For VM operations: whether it collected garbage.
    pub(crate) gc: Option<bool>,
}

impl Totals {
    pub(crate) fn named(&self, name: &str) -> NameTotals {
        NameTotals {
            name: name.to_string(),
            count: self.count,
            total_ms: self.total_ns as f64 / 1e6,
            max_ms: self.max_ns as f64 / 1e6,
            gc: self.gc,
        }
    }

    pub(crate) fn add(&mut self, ns: u64) {
        self.count += 1;
        self.total_ns += u128::from(ns);
        self.max_ns = self.max_ns.max(ns);
    }
}
