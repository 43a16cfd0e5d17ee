//! Fuzzes the GC/safepoint log line parser, the line reader (LF, CRLF, CR line ends), the
//! JDK 8 event stitcher and the analyzer over whole inputs:
//! `cargo +nightly fuzz run gclog_parse` (from the fuzz/ directory).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pauselab_gclog::stitch::{Stitcher, MAX_PENDING};
use pauselab_gclog::{analysis::Analyzer, lines::LineReader, parse::parse_line, Options};

fuzz_target!(|data: &[u8]| {
    let mut analyzer = Analyzer::new(Options::default());
    analyzer.begin_file("fuzz");
    let mut lines = LineReader::new(data);
    let mut stitcher = Stitcher::new();
    while let Ok(Some(line)) = lines.next_line() {
        let _ = parse_line(line.bytes);
        stitcher.push(line.bytes, line.number, &mut |l, n| {
            analyzer.line(l, n, false, false)
        });
        assert!(stitcher.held_bytes() <= 2 * MAX_PENDING);
    }
    stitcher.finish(&mut |l, n| analyzer.line(l, n, false, false));
    analyzer.end_file(data.len() as u64);
    let report = analyzer.finish();
    let _ = pauselab_gclog::render::render_text(&report);
});
