//! Fuzzes the GC/safepoint log line parser and the analyzer over whole inputs:
//! `cargo +nightly fuzz run gclog_parse` (from the fuzz/ directory).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pauselab_gclog::{analysis::Analyzer, parse::parse_line, Options};

fuzz_target!(|data: &[u8]| {
    let mut analyzer = Analyzer::new(Options::default());
    analyzer.begin_file("fuzz");
    for (i, line) in data.split(|&b| b == b'\n').enumerate() {
        let _ = parse_line(line);
        analyzer.line(line, i as u64 + 1, false, false);
    }
    analyzer.end_file(data.len() as u64);
    let report = analyzer.finish();
    let _ = pauselab_gclog::render::render_text(&report);
});
