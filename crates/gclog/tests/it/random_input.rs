//! Bounded property tests: any bytes, as single lines or as whole logs mixed with real log
//! lines, go through the parser and the analyzer without a panic, and the analyzer's counts
//! stay consistent.

use pauselab_analysis::{Analyzer, Options, Report};
use pauselab_gclog::parse::parse_line;
use pauselab_gclog::stitch::{Stitcher, MAX_PENDING};
use pauselab_gclog::LineFeed;
use pauselab_pause::RecordSink;
use proptest::prelude::*;

const REAL_LINES: [&str; 6] = [
    "[0.058s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 12M->1M(256M) 1.626ms",
    "[0.058s][info][gc,cpu] GC(0) User=0.00s Sys=0.00s Real=0.00s",
    "[0.058s][info][safepoint] Safepoint \"G1CollectForAllocation\", Time since last: 27495667 ns, Reaching safepoint: 5127 ns, Cleanup: 6776 ns, At safepoint: 1756058 ns, Total: 1767961 ns",
    "2.193: [GC 2.193: [DefNew: 17024K->643K(19136K), 0.0084810 secs] 17024K->643K(260032K), 0.0085510 secs] [Times: user=0.00 sys=0.00, real=0.01 secs]",
    "5.0: Total time for which application threads were stopped: 0.0123450 seconds, Stopping threads took: 0.0001230 seconds",
    "0.084: ParallelGCFailedAllocation       [      10          0              0    ]      [     0     0     2     1     5    ]  0",
];

/// Pieces of JDK 6-8 events spread over several lines, as the JVM prints them (one a
/// line; the library's chunk tests read them too).
const EVENT_PIECES: &str = include_str!("../data/event_pieces.txt");

fn event_pieces() -> Vec<&'static str> {
    EVENT_PIECES.lines().collect()
}

fn feed(lines: &[Vec<u8>]) -> Report {
    let mut analyzer = Analyzer::new(Options::default());
    analyzer.begin_input("random");
    let mut feed = LineFeed::new(&mut analyzer, "random");
    for (i, l) in lines.iter().enumerate() {
        let number = i as u64 + 1;
        let last = (i + 1 == lines.len()).then_some(number);
        feed.line(l, number, last, false);
    }
    feed.finish();
    analyzer.end_input(0);
    analyzer.finish()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_bytes_parse_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = parse_line(&bytes);
    }

    #[test]
    fn mutated_real_lines_parse_without_panic(
        which in 0..REAL_LINES.len(),
        cut in 0usize..300,
        flips in proptest::collection::vec((0usize..300, any::<u8>()), 0..4),
    ) {
        let mut bytes = REAL_LINES[which].as_bytes().to_vec();
        for (at, b) in flips {
            if at < bytes.len() { bytes[at] = b; }
        }
        bytes.truncate(cut.min(bytes.len()));
        let _ = parse_line(&bytes);
    }

    #[test]
    fn analyzer_counts_stay_consistent(
        picks in proptest::collection::vec(
            prop_oneof![
                (0..REAL_LINES.len()).prop_map(|i| REAL_LINES[i].as_bytes().to_vec()),
                proptest::collection::vec(any::<u8>(), 0..120),
            ],
            0..60,
        ),
    ) {
        let r = feed(&picks);
        let pauses: u64 = r.pauses.by_name.iter().map(|n| n.count).sum();
        prop_assert_eq!(pauses, r.pauses.summary.count);
        prop_assert!(r.worst.len() <= 10);
        prop_assert!(r.unparsed_lines <= picks.len() as u64);
        prop_assert!(r.pauses.summary.max_ms >= r.pauses.summary.p99_ms);
    }

    #[test]
    fn partial_events_in_any_order_keep_the_state_bounded(
        picks in proptest::collection::vec(
            prop_oneof![
                4 => proptest::sample::select(event_pieces()).prop_map(|p| p.as_bytes().to_vec()),
                1 => proptest::collection::vec(any::<u8>(), 0..2000),
                1 => (1usize..30_000).prop_map(|n| vec![b'['; n]),
            ],
            0..60,
        ),
    ) {
        let mut stitcher = Stitcher::new();
        let mut analyzer = Analyzer::new(Options::default());
        analyzer.begin_input("random");
        let mut feed = LineFeed::new(&mut analyzer, "random");
        let mut emitted = 0u64;
        for (i, line) in picks.iter().enumerate() {
            stitcher.push(line, i as u64 + 1, &mut |l, n, _| {
                emitted += 1;
                feed.line(l, n, None, false);
            });
            prop_assert!(stitcher.held_bytes() <= 2 * MAX_PENDING);
        }
        stitcher.finish(&mut |l, n, _| {
            emitted += 1;
            feed.line(l, n, None, false);
        });
        prop_assert_eq!(stitcher.held_bytes(), 0);
        feed.finish();
        analyzer.end_input(0);
        let report = analyzer.finish();
        // A pause needs a closing bracket: never more pauses than logical lines.
        prop_assert!(report.pauses.summary.count <= emitted);
        let pauses: u64 = report.pauses.by_name.iter().map(|n| n.count).sum();
        prop_assert_eq!(pauses, report.pauses.summary.count);
    }
}
