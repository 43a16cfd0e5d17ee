//! Percentile summaries over durations: exact count, sum and max, percentiles from an
//! HdrHistogram (3 significant digits, nanosecond values, so any pause from 1 us to hours).

use hdrhistogram::Histogram;
use serde::Serialize;

/// Accumulates durations in nanoseconds.
#[derive(Clone)]
pub struct DurationStats {
    count: u64,
    total_ns: u128,
    min_ns: u64,
    max_ns: u64,
    histogram: Histogram<u64>,
}

impl Default for DurationStats {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for DurationStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurationStats")
            .field("count", &self.count)
            .field("total_ns", &self.total_ns)
            .field("max_ns", &self.max_ns)
            .finish()
    }
}

/// What a reader of a pause report wants at a glance; every value in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct Summary {
    pub count: u64,
    pub total_ms: f64,
    pub mean_ms: f64,
    pub min_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p99_9_ms: f64,
    pub max_ms: f64,
}

impl DurationStats {
    pub fn new() -> Self {
        let mut histogram = Histogram::new(3).expect("3 significant digits is a valid precision");
        histogram.auto(true);
        DurationStats {
            count: 0,
            total_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            histogram,
        }
    }

    pub fn record(&mut self, ns: u64) {
        self.count += 1;
        self.total_ns += u128::from(ns);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        // Auto-resizing histogram: recording cannot fail for any u64.
        let _ = self.histogram.record(ns.max(1));
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn total_ns(&self) -> u128 {
        self.total_ns
    }

    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    /// The value at `percentile` (0-100), in ns; 0 when empty. The exact maximum at 100.
    pub fn percentile_ns(&self, percentile: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        if percentile >= 100.0 {
            return self.max_ns;
        }
        self.histogram
            .value_at_percentile(percentile)
            .min(self.max_ns)
    }

    pub fn histogram(&self) -> &Histogram<u64> {
        &self.histogram
    }

    pub fn summary(&self) -> Summary {
        if self.count == 0 {
            return Summary::default();
        }
        let ms = |ns: u64| ns as f64 / 1e6;
        Summary {
            count: self.count,
            total_ms: self.total_ns as f64 / 1e6,
            mean_ms: self.total_ns as f64 / 1e6 / self.count as f64,
            min_ms: ms(self.min_ns),
            p50_ms: ms(self.percentile_ns(50.0)),
            p90_ms: ms(self.percentile_ns(90.0)),
            p99_ms: ms(self.percentile_ns(99.0)),
            p99_9_ms: ms(self.percentile_ns(99.9)),
            max_ms: ms(self.max_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_count_sum_and_max_percentiles_within_precision() {
        let mut s = DurationStats::new();
        for ms in 1..=1000u64 {
            s.record(ms * 1_000_000);
        }
        let sum = s.summary();
        assert_eq!(sum.count, 1000);
        assert_eq!(sum.total_ms, 500_500.0);
        assert_eq!(sum.max_ms, 1000.0);
        assert_eq!(sum.min_ms, 1.0);
        for (p, expect) in [
            (sum.p50_ms, 500.0),
            (sum.p90_ms, 900.0),
            (sum.p99_ms, 990.0),
        ] {
            assert!((p - expect).abs() / expect < 0.001, "{p} vs {expect}");
        }
    }

    #[test]
    fn empty_is_all_zero() {
        assert_eq!(DurationStats::new().summary(), Summary::default());
    }
}
