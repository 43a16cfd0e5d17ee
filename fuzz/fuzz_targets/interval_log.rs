//! Fuzzes the interval log reader over whole inputs, plain and gzip-compressed:
//! `cargo +nightly fuzz run interval_log -- -rss_limit_mb=256` (from the fuzz/ directory).
//! A payload or a line must never cost more memory than its own bytes justify.
#![no_main]

use std::io::BufReader;

use libfuzzer_sys::fuzz_target;
use pauselab_pause::input::gunzip_if_compressed;
use pauselab_pause::interval_log::{IntervalLogReader, TagFilter};

fuzz_target!(|data: &[u8]| {
    let Ok(input) = gunzip_if_compressed(data) else {
        return;
    };
    let reader = IntervalLogReader::new(BufReader::new(input), "fuzz").with_tag(TagFilter::Any);
    for interval in reader {
        if interval.is_err() {
            break;
        }
    }
});
