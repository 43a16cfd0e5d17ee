//! How numbers read in the terminal (the findings' titles and `analyze`'s text).

/// A duration in ms as the terminal shows it.
pub(crate) fn dur(ms: f64) -> String {
    if ms >= 10_000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else if ms >= 1000.0 {
        format!("{:.3} s", ms / 1000.0)
    } else if ms >= 10.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.3} ms")
    }
}
