//! The one latency summary of pauselab ([`Summary`], milliseconds): of pauses counted one by
//! one ([`DurationStats`]: exact count, sum, min and max, percentiles from an HdrHistogram of
//! 3 significant digits in nanoseconds, so any pause from 1 us to hours), and of a histogram
//! of nanoseconds read or followed from an interval log ([`Summary::of_histogram`]). `analyze`,
//! JFR recordings and the lab's result bundles all show this type.
//!
//! Interval-log statistics in a log's own recorded unit, as Java's `HistogramLogProcessor`
//! prints them (`hlog`, `report`), are a different thing and stay in `pauselab-report`.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

const NS_PER_100MS: u64 = 100_000_000;
const NS_PER_S: u64 = 1_000_000_000;

/// Accumulates durations in nanoseconds.
#[derive(Clone)]
pub struct DurationStats {
    count: u64,
    total_ns: u128,
    min_ns: u64,
    max_ns: u64,
    at_least_100ms: u64,
    at_least_1s: u64,
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

/// What a reader of pauses or latencies wants at a glance; every value in milliseconds.
/// Fields a bundle written before they existed lacks read as 0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Summary {
    /// Values recorded (pauses, safepoints, hiccup samples, requests).
    pub count: u64,
    /// Their sum (exact for pauses; count x the histogram's mean for a histogram).
    pub total_ms: f64,
    pub mean_ms: f64,
    pub min_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p99_9_ms: f64,
    pub p99_99_ms: f64,
    pub max_ms: f64,
    /// Values of 100 ms or more.
    pub at_least_100ms: u64,
    /// Values of 1 s or more.
    pub at_least_1s: u64,
}

impl Summary {
    /// The summary of a histogram of nanoseconds: percentiles are the highest value
    /// equivalent to their bucket, as HdrHistogram reports them; all zero when it is empty.
    pub fn of_histogram(h: &Histogram<u64>) -> Summary {
        if h.is_empty() {
            return Summary::default();
        }
        let ms = |ns: u64| ns as f64 / 1e6;
        let at_least = |ns: u64| {
            if h.max() < ns {
                0
            } else {
                h.count_between(ns, h.max())
            }
        };
        Summary {
            count: h.len(),
            total_ms: h.mean() * h.len() as f64 / 1e6,
            mean_ms: h.mean() / 1e6,
            min_ms: ms(h.min()),
            p50_ms: ms(h.value_at_quantile(0.5)),
            p90_ms: ms(h.value_at_quantile(0.9)),
            p99_ms: ms(h.value_at_quantile(0.99)),
            p99_9_ms: ms(h.value_at_quantile(0.999)),
            p99_99_ms: ms(h.value_at_quantile(0.9999)),
            max_ms: ms(h.max()),
            at_least_100ms: at_least(NS_PER_100MS),
            at_least_1s: at_least(NS_PER_S),
        }
    }
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
            at_least_100ms: 0,
            at_least_1s: 0,
            histogram,
        }
    }

    pub fn record(&mut self, ns: u64) {
        self.count += 1;
        self.total_ns += u128::from(ns);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        self.at_least_100ms += u64::from(ns >= NS_PER_100MS);
        self.at_least_1s += u64::from(ns >= NS_PER_S);
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
            p99_99_ms: ms(self.percentile_ns(99.99)),
            max_ms: ms(self.max_ns),
            at_least_100ms: self.at_least_100ms,
            at_least_1s: self.at_least_1s,
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
        let empty = Histogram::<u64>::new(3).unwrap();
        assert_eq!(Summary::of_histogram(&empty), Summary::default());
    }

    #[test]
    fn long_values_are_counted_at_their_thresholds() {
        let mut s = DurationStats::new();
        let mut h = Histogram::<u64>::new_with_bounds(1_000, 3_600_000_000_000, 2).unwrap();
        // 99 ms is not 100 ms, 1 s is 1 s; 99 and 990 ms are outside the buckets of 100 ms
        // and 1 s at 2 significant digits (0.5 and 4.2 ms wide there).
        for ms in [1.0, 99.0, 100.0, 250.0, 990.0, 1_000.0, 5_400.0] {
            let ns = (ms * 1e6) as u64;
            s.record(ns);
            h.record(ns).unwrap();
        }
        let exact = s.summary();
        assert_eq!((exact.at_least_100ms, exact.at_least_1s), (5, 2));
        let of_histogram = Summary::of_histogram(&h);
        assert_eq!(of_histogram.count, 7);
        assert_eq!(
            (of_histogram.at_least_100ms, of_histogram.at_least_1s),
            (5, 2)
        );
        assert!((of_histogram.max_ms - 5_400.0).abs() / 5_400.0 < 0.01);
        assert!((of_histogram.total_ms - exact.total_ms).abs() / exact.total_ms < 0.01);
    }

    #[test]
    fn a_bundle_written_before_a_field_existed_reads_it_as_zero() {
        let old: Summary =
            serde_json::from_str(r#"{"count": 3, "p50_ms": 1.5, "max_ms": 9.0}"#).unwrap();
        assert_eq!(old.count, 3);
        assert_eq!(old.max_ms, 9.0);
        assert_eq!(old.at_least_1s, 0);
    }
}
