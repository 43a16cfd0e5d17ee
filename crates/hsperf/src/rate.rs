//! How monotonic counters changed between two samples: the delta in the counter's unit and
//! the change per second, ticks converted to seconds with `sun.os.hrt.frequency`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::format::{Counter, Units, Value, Variability};

/// How one monotonic counter changed between two samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CounterRate {
    /// The change, in the counter's own unit (ticks, bytes, events).
    pub delta: i64,
    /// The change per second of the time between the samples; for a ticks counter, the
    /// seconds it counted per second (a safepoint time of 0.25 s/s: stopped a quarter of
    /// the time).
    pub rate: f64,
    /// `s/s` (ticks), `B/s` (bytes) or `/s` (anything else).
    pub rate_unit: &'static str,
}

impl CounterRate {
    /// The change of `counter` since it was `previous`, `elapsed` earlier; `None` for a
    /// counter that is not a monotonic number, no elapsed time, or a ticks counter without
    /// a tick frequency.
    pub fn since(
        counter: &Counter,
        previous: i64,
        elapsed: Duration,
        tick_frequency: Option<i64>,
    ) -> Option<CounterRate> {
        let Value::Long(now) = counter.value else {
            return None;
        };
        let seconds = elapsed.as_secs_f64();
        if counter.variability != Variability::Monotonic || seconds <= 0.0 {
            return None;
        }
        let delta = now.wrapping_sub(previous);
        let (amount, rate_unit) = match counter.units {
            Units::Ticks => (
                delta as f64 / tick_frequency.filter(|&f| f > 0)? as f64,
                "s/s",
            ),
            Units::Bytes => (delta as f64, "B/s"),
            _ => (delta as f64, "/s"),
        };
        Some(CounterRate {
            delta,
            rate: amount / seconds,
            rate_unit,
        })
    }
}

/// The long counters' values at the previous sample, for the rates of the next one.
#[derive(Debug, Default)]
pub struct RateTracker {
    previous: Option<(Instant, HashMap<String, i64>)>,
}

/// The rates of one sample: the time since the previous one and each counter's rate, in the
/// sample's order (`None` for a counter that has none, or was not in the previous sample).
pub type IntervalRates = (Duration, Vec<Option<CounterRate>>);

impl RateTracker {
    /// Keeps `counters`, taken at `taken`, for the next sample; returns their rates since
    /// the previous sample (`None` for the first).
    pub fn next(
        &mut self,
        taken: Instant,
        counters: &[Counter],
        tick_frequency: Option<i64>,
    ) -> Option<IntervalRates> {
        let values: HashMap<String, i64> = counters
            .iter()
            .filter_map(|c| match c.value {
                Value::Long(v) => Some((c.name.to_string(), v)),
                _ => None,
            })
            .collect();
        let (before, before_values) = self.previous.replace((taken, values))?;
        let elapsed = taken.duration_since(before);
        let rates = counters
            .iter()
            .map(|c| {
                let was = *before_values.get(c.name)?;
                CounterRate::since(c, was, elapsed, tick_frequency)
            })
            .collect();
        Some((elapsed, rates))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counter(value: i64, units: Units, variability: Variability) -> Counter<'static> {
        Counter {
            name: "c",
            value: Value::Long(value),
            units,
            variability,
        }
    }

    #[test]
    fn ticks_become_seconds_per_second() {
        let safepoint_time = counter(3_500_000_000, Units::Ticks, Variability::Monotonic);
        let rate = CounterRate::since(
            &safepoint_time,
            1_500_000_000,
            Duration::from_secs(4),
            Some(1_000_000_000),
        )
        .unwrap();
        assert_eq!(rate.delta, 2_000_000_000);
        assert_eq!(rate.rate, 0.5);
        assert_eq!(rate.rate_unit, "s/s");
        assert_eq!(
            CounterRate::since(&safepoint_time, 0, Duration::from_secs(1), None),
            None
        );
    }

    #[test]
    fn events_and_bytes_per_second_and_nothing_for_other_counters() {
        let events = counter(30, Units::Events, Variability::Monotonic);
        let rate = CounterRate::since(&events, 10, Duration::from_millis(500), None).unwrap();
        assert_eq!((rate.delta, rate.rate, rate.rate_unit), (20, 40.0, "/s"));
        let bytes = counter(4096, Units::Bytes, Variability::Monotonic);
        let rate = CounterRate::since(&bytes, 0, Duration::from_secs(2), None).unwrap();
        assert_eq!((rate.rate, rate.rate_unit), (2048.0, "B/s"));
        let used = counter(4096, Units::Bytes, Variability::Variable);
        assert_eq!(
            CounterRate::since(&used, 0, Duration::from_secs(1), None),
            None
        );
        assert_eq!(CounterRate::since(&events, 0, Duration::ZERO, None), None);
    }

    #[test]
    fn a_tracker_gives_rates_from_the_second_sample_on_for_counters_seen_before() {
        let start = Instant::now();
        let mut tracker = RateTracker::default();
        let first = [counter(10, Units::Events, Variability::Monotonic)];
        assert_eq!(tracker.next(start, &first, None), None);
        let mut added = counter(7, Units::Events, Variability::Monotonic);
        added.name = "new";
        let second = [counter(40, Units::Events, Variability::Monotonic), added];
        let (elapsed, rates) = tracker
            .next(start + Duration::from_secs(2), &second, None)
            .unwrap();
        assert_eq!(elapsed, Duration::from_secs(2));
        assert_eq!(rates.len(), 2);
        assert_eq!(rates[0].map(|r| (r.delta, r.rate)), Some((30, 15.0)));
        assert_eq!(rates[1], None, "not in the previous sample");
        let third = [counter(41, Units::Events, Variability::Monotonic)];
        let (elapsed, rates) = tracker
            .next(start + Duration::from_secs(3), &third, None)
            .unwrap();
        assert_eq!(elapsed, Duration::from_secs(1));
        assert_eq!(rates[0].map(|r| r.delta), Some(1));
    }
}
