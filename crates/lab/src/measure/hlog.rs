//! The lab's histograms of nanoseconds and writing the safepoint interval log (the
//! hiccup log is read as it grows: the `follow` module).

use std::path::Path;

use hdrhistogram::Histogram;
use pauselab_pause::interval_log::IntervalLogWriter;

use crate::measure::error::MeasureError;

/// A histogram of nanoseconds (20 us .. 1 hour, 2 significant digits, like the agent's).
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1_000, 3_600_000_000_000, 2).expect("valid histogram bounds")
}

/// Writes pauses (start in seconds since `start_epoch_s`, duration in ms) as an untagged
/// interval log of nanoseconds with one histogram per `interval_s`; intervals without
/// pauses are empty.
pub fn write_pause_log(
    path: &Path,
    start_epoch_s: f64,
    pauses: &[(f64, f64)],
    end_s: f64,
    interval_s: f64,
) -> Result<(), MeasureError> {
    let file =
        pauselab_pause::output::create_file(path).map_err(|source| MeasureError::Create {
            path: path.to_path_buf(),
            source,
        })?;
    let mut writer = IntervalLogWriter::with_options(
        std::io::BufWriter::new(file),
        start_epoch_s,
        None,
        1e6,
        &["pauselab lab: safepoint pauses from the GC log, in ns"],
    )?;
    let intervals = ((end_s / interval_s).ceil() as usize).max(1);
    for i in 0..intervals {
        let (lo, hi) = (i as f64 * interval_s, (i + 1) as f64 * interval_s);
        let mut h = new_histogram();
        for &(_, ms) in pauses.iter().filter(|(s, _)| *s >= lo && *s < hi) {
            h.saturating_record((ms * 1e6) as u64);
        }
        writer.write_interval(lo, interval_s, &h)?;
    }
    writer.finish()?;
    Ok(())
}
