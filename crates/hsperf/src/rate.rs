//! How monotonic counters changed between two samples: the delta in the counter's unit and
//! the change per second, ticks converted to seconds with `sun.os.hrt.frequency`.

use std::time::Duration;

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
}
