//! Fuzzes the JFR chunk reader and the pause/safepoint assembly over whole files:
//! `cargo +nightly fuzz run jfr_parse` (from the fuzz/ directory). Seed the corpus with a
//! real recording (`-XX:StartFlightRecording:filename=seed.jfr`) to get past the header,
//! and give libFuzzer room for a corpus of ~1 MB inputs: `-- -rss_limit_mb=4096`.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use pauselab_jfr::{Assembler, Recording};

fuzz_target!(|data: &[u8]| {
    let Ok(mut rec) = Recording::new(Cursor::new(data), "fuzz.jfr".to_string()) else {
        return;
    };
    let mut assembler = Assembler::new();
    while let Ok(Some(chunk)) = rec.next_chunk() {
        let _ = assembler.chunk(chunk);
    }
    let _ = assembler.finish();
});
