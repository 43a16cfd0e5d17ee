//! hsperfdata parser on arbitrary bytes: an error or a readable snapshot, never a panic.
//! Run: `cargo +nightly fuzz run hsperf_parse` in fuzz/.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pauselab_hsperf::Snapshot;

fuzz_target!(|data: &[u8]| {
    if let Ok(snapshot) = Snapshot::parse(data.to_vec(), data.len(), "fuzz") {
        for counter in snapshot.counters() {
            let _ = counter.value.to_string();
        }
        let _ = snapshot.seconds("sun.gc.collector.0.time");
        for option in pauselab_hsperf::jstat::JstatOption::ALL {
            let _ = pauselab_hsperf::jstat::JstatFormatter::new(option, true).row(&snapshot);
        }
    }
});
