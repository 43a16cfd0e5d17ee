//! The `.hgrm` percentile distribution, number for number as Java HdrHistogram's
//! `outputPercentileDistribution` prints it (what `HistogramLogProcessor` writes and
//! HistogramLogAnalyzer and the percentile chart plot).
//!
//! The iteration, the mean and the standard deviation follow Java's arithmetic step by step
//! (percent levels, not quantiles; sums before the division), and numbers are formatted
//! like `java.util.Formatter` (`%.Nf` rounds the shortest decimal form half up), so the
//! text is byte-identical to Java's.

use std::io::{self, Write};

use hdrhistogram::Histogram;

/// Ticks per half distance to 100% of HistogramLogProcessor and jHiccup's `.hgrm` files.
pub const DEFAULT_TICKS_PER_HALF_DISTANCE: u32 = 5;

/// Default value unit ratio: nanosecond values shown in milliseconds.
pub const DEFAULT_UNIT_RATIO: f64 = 1e6;

/// One row of the distribution.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PercentilePoint {
    /// Highest value equivalent to the bucket reached (recorded units).
    pub value: u64,
    /// Percentile level iterated to, 0..=100.
    pub percentile: f64,
    /// Count of values at or below `value`.
    pub total_count: u64,
}

impl PercentilePoint {
    /// 1/(1-p), the x coordinate of the percentile chart; infinite at 100%.
    pub fn inverse_tail(&self) -> f64 {
        1.0 / (1.0 - self.percentile / 100.0)
    }
}

/// The percentile iteration of Java's `PercentileIterator`: levels step by
/// `100 / (ticks * 2^(halvings+1))`, a level is reported at the first bucket whose
/// cumulative percentage reaches it, and a last row at 100% follows the last bucket.
pub fn percentile_points(
    histogram: &Histogram<u64>,
    ticks_per_half_distance: u32,
) -> Vec<PercentilePoint> {
    let total = histogram.len();
    let mut points = Vec::new();
    if total == 0 {
        return points;
    }
    let ticks = i64::from(ticks_per_half_distance.max(1));
    let mut level = 0.0_f64;
    let mut reached_last = false;
    let mut running = 0_u64;
    'buckets: for bucket in histogram.iter_recorded() {
        running += bucket.count_at_value();
        let value = bucket.value_iterated_to();
        loop {
            let current = (100.0 * running as f64) / total as f64;
            if current < level {
                break;
            }
            points.push(PercentilePoint {
                value,
                percentile: level,
                total_count: running,
            });
            let halvings = ((100.0 / (100.0 - level)).ln() / 2f64.ln()) as i64;
            let reporting_ticks =
                ticks.wrapping_mul(2f64.powf(halvings.wrapping_add(1) as f64) as i64);
            level += 100.0 / reporting_ticks as f64;
            if running >= total {
                if reached_last {
                    break 'buckets;
                }
                // One more step to 100%, at this same (last) bucket.
                reached_last = true;
                level = 100.0;
            }
        }
    }
    points
}

/// Mean as Java computes it: the sum of median-equivalent values times counts, divided once.
pub fn mean(histogram: &Histogram<u64>) -> f64 {
    if histogram.is_empty() {
        return 0.0;
    }
    let total: f64 = histogram
        .iter_recorded()
        .map(|v| {
            histogram.median_equivalent(v.value_iterated_to()) as f64 * v.count_at_value() as f64
        })
        .sum();
    total / histogram.len() as f64
}

/// Standard deviation as Java computes it (population, around [`mean`]).
pub fn stddev(histogram: &Histogram<u64>) -> f64 {
    if histogram.is_empty() {
        return 0.0;
    }
    let mean = mean(histogram);
    let total: f64 = histogram
        .iter_recorded()
        .map(|v| {
            let deviation = histogram.median_equivalent(v.value_iterated_to()) as f64 - mean;
            deviation * deviation * v.count_at_value() as f64
        })
        .sum();
    (total / histogram.len() as f64).sqrt()
}

/// Java's `subBucketCount`: the power of two covering 2 * 10^digits.
pub fn sub_bucket_count(histogram: &Histogram<u64>) -> u64 {
    (2 * 10_u64.pow(u32::from(histogram.sigfig()))).next_power_of_two()
}

/// Writes the distribution exactly as `outputPercentileDistribution(out, ticks, ratio)`.
pub fn write_distribution(
    out: &mut dyn Write,
    histogram: &Histogram<u64>,
    ticks_per_half_distance: u32,
    unit_ratio: f64,
) -> io::Result<()> {
    let digits = usize::from(histogram.sigfig());
    writeln!(
        out,
        "{:>12} {:>14} {:>10} {:>14}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    )?;
    for point in percentile_points(histogram, ticks_per_half_distance) {
        let value = java_fixed(point.value as f64 / unit_ratio, digits);
        let quantile = java_fixed(point.percentile / 100.0, 12);
        if point.percentile != 100.0 {
            let inverse = java_fixed(1.0 / (1.0 - point.percentile / 100.0), 2);
            writeln!(
                out,
                "{value:>12} {quantile:>2} {:>10} {inverse:>14}",
                point.total_count
            )?;
        } else {
            writeln!(out, "{value:>12} {quantile:>2} {:>10}", point.total_count)?;
        }
    }
    writeln!(
        out,
        "#[Mean    = {:>12}, StdDeviation   = {:>12}]",
        java_fixed(mean(histogram) / unit_ratio, digits),
        java_fixed(stddev(histogram) / unit_ratio, digits)
    )?;
    writeln!(
        out,
        "#[Max     = {:>12}, Total count    = {:>12}]",
        java_fixed(histogram.max() as f64 / unit_ratio, digits),
        histogram.len()
    )?;
    writeln!(
        out,
        "#[Buckets = {:>12}, SubBuckets     = {:>12}]",
        histogram.buckets(),
        sub_bucket_count(histogram)
    )
}

/// `x` with `precision` decimals as Java's `String.format("%.Nf")`: the shortest decimal
/// form that reads back as `x`, rounded half up (so 0.125 gives "0.13", unlike Rust's "0.12").
pub fn java_fixed(x: f64, precision: usize) -> String {
    if x.is_nan() {
        return "NaN".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    let negative = x.is_sign_negative();
    let sci = format!("{:e}", x.abs()); // shortest round-trip digits, e.g. "1.2345e-3"
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let digits: Vec<u8> = mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect();
    // Value = 0.d1 d2 d3 ... * 10^(exponent + 1): `point` digits before the decimal point.
    let point = exponent + 1;
    let (mut integer, mut fraction): (Vec<u8>, Vec<u8>) = if point > 0 {
        let point = point as usize;
        let mut integer: Vec<u8> = digits.iter().copied().take(point).collect();
        integer.resize(point, 0);
        (integer, digits.iter().copied().skip(point).collect())
    } else {
        let zeros = std::iter::repeat_n(0, (-point) as usize);
        (vec![0], zeros.chain(digits.iter().copied()).collect())
    };
    let round_up = fraction.get(precision).is_some_and(|d| *d >= 5);
    fraction.resize(precision, 0);
    if round_up {
        let mut carry = true;
        for d in fraction.iter_mut().rev().chain(integer.iter_mut().rev()) {
            if !carry {
                break;
            }
            if *d == 9 {
                *d = 0;
            } else {
                *d += 1;
                carry = false;
            }
        }
        if carry {
            integer.insert(0, 1);
        }
    }
    let mut text = String::with_capacity(integer.len() + precision + 2);
    if negative {
        text.push('-');
    }
    text.extend(integer.iter().map(|d| char::from(b'0' + d)));
    if precision > 0 {
        text.push('.');
        text.extend(fraction.iter().map(|d| char::from(b'0' + d)));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_fixed_rounds_the_shortest_form_half_up() {
        assert_eq!(java_fixed(0.125, 2), "0.13");
        assert_eq!(java_fixed(0.15, 1), "0.2"); // shortest form "0.15", not 0.1499...
        assert_eq!(java_fixed(2.5, 0), "3");
        assert_eq!(java_fixed(9.995, 2), "10.00");
        assert_eq!(java_fixed(99.999, 2), "100.00");
        assert_eq!(java_fixed(0.0, 2), "0.00");
        assert_eq!(java_fixed(-1.005, 2), "-1.01");
        assert_eq!(java_fixed(1795.162111, 2), "1795.16");
        assert_eq!(java_fixed(0.000_004_5, 5), "0.00000");
        assert_eq!(java_fixed(0.000_005, 5), "0.00001");
        assert_eq!(java_fixed(123_456_789.0, 3), "123456789.000");
        assert_eq!(java_fixed(1e21, 1), "1000000000000000000000.0");
        assert_eq!(java_fixed(0.999_999_570_847_3, 12), "0.999999570847");
    }

    #[test]
    fn iteration_reaches_100_percent_once_at_the_max() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 1_000_000, 2).unwrap();
        for v in 1..=1000 {
            h.record(v).unwrap();
        }
        let points = percentile_points(&h, 5);
        let last = points.last().unwrap();
        assert_eq!(last.percentile, 100.0);
        assert_eq!(last.total_count, 1000);
        assert_eq!(last.value, h.max());
        assert_eq!(points.iter().filter(|p| p.percentile == 100.0).count(), 1);
        assert!(points.windows(2).all(|w| w[0].percentile < w[1].percentile));
        // 5 ticks per half: 0, 10, 20, 30, 40, 50, then 55, ...
        let levels: Vec<f64> = points.iter().take(7).map(|p| p.percentile).collect();
        assert_eq!(levels, vec![0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 55.0]);
    }

    #[test]
    fn empty_histogram_has_no_rows() {
        let h = Histogram::<u64>::new(2).unwrap();
        assert!(percentile_points(&h, 5).is_empty());
        assert_eq!(mean(&h), 0.0);
    }
}
