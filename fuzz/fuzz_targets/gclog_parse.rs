//! Fuzzes the GC/safepoint log line parser, the line reader (LF, CRLF, CR line ends), the
//! JDK 8 event stitcher and the analyzer over whole inputs:
//! `cargo +nightly fuzz run gclog_parse` (from the fuzz/ directory).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pauselab_analysis::{render_text, Analyzer, Options};
use pauselab_gclog::stitch::{Stitcher, MAX_PENDING};
use pauselab_gclog::{lines::LineReader, parse::parse_line, LineFeed};
use pauselab_pause::RecordSink;

fuzz_target!(|data: &[u8]| {
    let mut analyzer = Analyzer::new(Options::default());
    analyzer.begin_input("fuzz");
    let mut feed = LineFeed::new(&mut analyzer, "fuzz");
    let mut lines = LineReader::new(data);
    let mut stitcher = Stitcher::new();
    while let Ok(Some(line)) = lines.next_line() {
        let _ = parse_line(line.bytes);
        stitcher.push(line.bytes, line.number, &mut |l, n, _| feed.line(l, n, None, false));
        assert!(stitcher.held_bytes() <= 2 * MAX_PENDING);
    }
    stitcher.finish(&mut |l, n, _| feed.line(l, n, None, false));
    analyzer.end_input(data.len() as u64);
    let report = analyzer.finish();
    let _ = render_text(&report);
});
