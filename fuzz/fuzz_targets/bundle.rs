//! Fuzzes what `pauselab report` reads from a lab bundle besides interval logs: the host
//! series (host.csv) and the manifest and verdict JSON.
//! `cargo +nightly fuzz run bundle -- -rss_limit_mb=256` (from the fuzz/ directory).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pauselab_report::bundle::{HostSeries, Manifest, Verdict};

fuzz_target!(|data: &[u8]| {
    if let Ok(series) = HostSeries::read(data, "host.csv") {
        for column in series.columns.values() {
            assert_eq!(column.len(), series.t_s.len());
        }
    }
    if let Ok(manifest) = serde_json::from_slice::<Manifest>(data) {
        let _ = manifest.experiment.measurement_columns();
    }
    let _ = serde_json::from_slice::<Verdict>(data);
});
