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
    /// The counts of an HdrHistogram of 3 significant digits from 1 ns, by its own index
    /// ([`hdr_index`]): counting one costs a few instructions, where `Histogram::record`
    /// costs some seventy. The histogram is built from them when asked for. In rows of
    /// [`ROW`] indices, one power of two each (the first two rows: the values below 2,048),
    /// each made when a value first falls in it: pauses span a few powers of two, and the
    /// rows below and between them are never made or zeroed.
    rows: Vec<Option<Box<[u64; ROW]>>>,
}

/// The indices of one row of [`DurationStats`]'s counts.
const ROW: usize = 1 << HALF_BUCKET_BITS;

/// How many counts an HdrHistogram of 3 significant digits keeps per power of two, less
/// the first (2,000 needs 2^11 = 2,048 sub-buckets, the upper half of each used above the first).
const HALF_BUCKET_BITS: u32 = 10;

/// The index of `ns` in the counts of `Histogram::new(3)` (lowest value 1, unit 1 ns),
/// as HdrHistogram computes it: bucket `53 - leading_zeros(ns | 2047)`, the value's top 11
/// bits within it.
#[inline]
fn hdr_index(ns: u64) -> usize {
    let bucket = 53 - (ns | 2047).leading_zeros();
    ((bucket << HALF_BUCKET_BITS) as usize) + (ns >> bucket) as usize
}

/// The highest value counted with `lowest`, the lowest value of its index, as
/// `Histogram::highest_equivalent` gives it.
fn hdr_highest_value(lowest: u64) -> u64 {
    let bucket = 53 - (lowest | 2047).leading_zeros();
    lowest.saturating_add(1 << bucket) - 1
}

/// The lowest value counted at `index` (see [`hdr_index`]).
fn hdr_lowest_value(index: usize) -> u64 {
    let half = 1usize << HALF_BUCKET_BITS;
    if index < 2 * half {
        return index as u64;
    }
    let bucket = (index >> HALF_BUCKET_BITS) - 1;
    (((index & (half - 1)) + half) as u64) << bucket
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
        DurationStats {
            count: 0,
            total_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            at_least_100ms: 0,
            at_least_1s: 0,
            rows: Vec::new(),
        }
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.count += 1;
        self.total_ns += u128::from(ns);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        self.at_least_100ms += u64::from(ns >= NS_PER_100MS);
        self.at_least_1s += u64::from(ns >= NS_PER_S);
        // The histogram counts 0 as 1, its lowest value.
        let index = hdr_index(ns.max(1));
        match self.rows.get_mut(index / ROW) {
            Some(Some(row)) => row[index % ROW] += 1,
            _ => self.count_in_new_row(index),
        }
    }

    /// Counts a value at `index`, in a row not made yet: made now, of zeroed memory.
    #[cold]
    #[inline(never)]
    fn count_in_new_row(&mut self, index: usize) {
        let at = index / ROW;
        if self.rows.len() <= at {
            self.rows.resize(at + 1, None);
        }
        let row = self.rows[at].get_or_insert_with(|| {
            // Allocated zeroed, not built on the stack and moved.
            vec![0; ROW]
                .into_boxed_slice()
                .try_into()
                .expect("a row of ROW counts")
        });
        row[index % ROW] += 1;
    }

    /// Every index of the rows made and its count, in order: those of the rows not made
    /// are 0.
    fn counts(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.rows.iter().enumerate().flat_map(|(at, row)| {
            row.iter().flat_map(move |row| {
                row.iter()
                    .enumerate()
                    .map(move |(i, &count)| (at * ROW + i, count))
            })
        })
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
        self.percentiles_ns([percentile])[0]
    }

    /// The values at `percentiles` (ascending), in one pass over the counts: each what
    /// `Histogram::value_at_percentile` gives, no more than the exact maximum, which is
    /// the value at 100; 0 when empty.
    fn percentiles_ns<const N: usize>(&self, percentiles: [f64; N]) -> [u64; N] {
        let mut values = [0; N];
        if self.count == 0 {
            return values;
        }
        // The values counted up to index `at` (included), the first where they reached the
        // last percentile's share: an ascending one is reached there or further on.
        let (mut counted, mut at) = (0u64, None);
        // Skipping the rows not made changes nothing: an index of no count is never the
        // one where the counted values reach a share.
        let mut counts = self.counts();
        for (value, &percentile) in values.iter_mut().zip(&percentiles) {
            if percentile >= 100.0 {
                *value = self.max_ns;
                continue;
            }
            let quantile = (percentile / 100.0).min(1.0);
            let wanted = ((quantile * self.count as f64).ceil() as u64).max(1);
            while counted < wanted {
                let Some((index, count)) = counts.next() else {
                    break;
                };
                counted += count;
                at = Some(index);
            }
            *value = match at.filter(|_| counted >= wanted) {
                None => 0,
                Some(index) if quantile == 0.0 => hdr_lowest_value(index),
                Some(index) => hdr_highest_value(hdr_lowest_value(index)),
            }
            .min(self.max_ns);
        }
        values
    }

    /// The values recorded as an auto-resizing HdrHistogram of 3 significant digits (each
    /// at the lowest value of its bucket, which the histogram does not tell apart).
    pub fn histogram(&self) -> Histogram<u64> {
        let mut histogram = Histogram::new(3).expect("3 significant digits is a valid precision");
        // The largest value first: the histogram grows once, to where the values would have
        // grown it. Auto-resizing histogram: recording cannot fail for any u64.
        let counted: Vec<(usize, u64)> = self.counts().filter(|&(_, count)| count > 0).collect();
        if let Some((&(last, count), before)) = counted.split_last() {
            let _ = histogram.record_n(hdr_lowest_value(last), count);
            for &(index, count) in before {
                let _ = histogram.record_n(hdr_lowest_value(index), count);
            }
        }
        histogram
    }

    pub fn summary(&self) -> Summary {
        if self.count == 0 {
            return Summary::default();
        }
        let ms = |ns: u64| ns as f64 / 1e6;
        let [p50, p90, p99, p99_9, p99_99] = self.percentiles_ns([50.0, 90.0, 99.0, 99.9, 99.99]);
        Summary {
            count: self.count,
            total_ms: self.total_ns as f64 / 1e6,
            mean_ms: self.total_ns as f64 / 1e6 / self.count as f64,
            min_ms: ms(self.min_ns),
            p50_ms: ms(p50),
            p90_ms: ms(p90),
            p99_ms: ms(p99),
            p99_9_ms: ms(p99_9),
            p99_99_ms: ms(p99_99),
            max_ms: ms(self.max_ns),
            at_least_100ms: self.at_least_100ms,
            at_least_1s: self.at_least_1s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What `DurationStats` kept before it counted by index: every value recorded into the
    /// histogram.
    fn recorded(values: &[u64]) -> Histogram<u64> {
        let mut histogram = Histogram::new(3).unwrap();
        for &ns in values {
            histogram.record(ns.max(1)).unwrap();
        }
        histogram
    }

    /// Nanoseconds from 0 to hours, each power of two as likely as the next.
    fn any_ns() -> impl Strategy<Value = u64> {
        (0u32..44, any::<u64>()).prop_map(|(bits, n)| n & ((1u64 << bits) - 1))
    }

    proptest! {
        #[test]
        fn counting_by_index_gives_the_histogram_of_the_values(
            values in prop::collection::vec(any_ns(), 0..200),
        ) {
            let mut stats = DurationStats::new();
            for &ns in &values {
                stats.record(ns);
            }
            let direct = recorded(&values);
            let built = stats.histogram();
            prop_assert!(built == direct);
            prop_assert_eq!(built.len(), direct.len());
            for percentile in [0.0, 1.0, 50.0, 90.0, 99.0, 99.9, 99.99] {
                prop_assert_eq!(
                    built.value_at_percentile(percentile),
                    direct.value_at_percentile(percentile)
                );
            }
        }

        #[test]
        fn percentiles_from_the_counts_are_the_histograms(
            values in prop::collection::vec(any_ns(), 1..200),
            mut percentiles in prop::collection::vec(0.0..100.0f64, 1..6),
        ) {
            let mut stats = DurationStats::new();
            for &ns in &values {
                stats.record(ns);
            }
            let direct = recorded(&values);
            let max = *values.iter().max().unwrap();
            let at = |p: f64| direct.value_at_percentile(p).min(max);
            percentiles.sort_by(f64::total_cmp);
            percentiles.push(100.0);
            for &p in &percentiles {
                prop_assert_eq!(stats.percentile_ns(p), if p >= 100.0 { max } else { at(p) });
            }
            let mut ascending = [percentiles[0], 50.0, 90.0, 99.0, 99.9, 99.99];
            ascending.sort_by(f64::total_cmp);
            prop_assert_eq!(stats.percentiles_ns(ascending), ascending.map(at));
            let summary = stats.summary();
            prop_assert_eq!(
                [summary.p50_ms, summary.p90_ms, summary.p99_ms, summary.p99_9_ms, summary.p99_99_ms],
                [50.0, 90.0, 99.0, 99.9, 99.99].map(|p| at(p) as f64 / 1e6)
            );
        }

        #[test]
        fn the_index_is_hdrhistograms(ns in any_ns()) {
            let ns = ns.max(1);
            let histogram = recorded(&[ns]);
            let lowest = hdr_lowest_value(hdr_index(ns));
            prop_assert_eq!(lowest, histogram.lowest_equivalent(ns));
        }
    }

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
