//! Pause types of the names the parser gives real log lines of each collector.

use pauselab_gclog::parse::{parse_line, Record};
use pauselab_pause::PauseType::{self, *};

/// Names as the parser makes them from real log lines of each collector.
#[test]
fn every_collectors_pause_lines_get_their_type() {
    let cases = [
        ("[1.0s][info][gc] GC(3) Pause Young (Normal) (G1 Evacuation Pause) 24M->4M(256M) 3.1ms", Young),
        ("[1.0s][info][gc] GC(4) Pause Young (Concurrent Start) (G1 Humongous Allocation) 24M->4M(256M) 3.1ms", ConcurrentStart),
        ("[1.0s][info][gc] GC(5) Pause Young (Mixed) (G1 Evacuation Pause) 24M->4M(256M) 3.1ms", Mixed),
        ("[1.0s][info][gc] GC(6) Pause Young (Prepare Mixed) (G1 Evacuation Pause) 24M->4M(256M) 3.1ms", Young),
        ("[1.0s][info][gc] GC(7) Pause Remark 30M->30M(256M) 1.2ms", Remark),
        ("[1.0s][info][gc] GC(7) Pause Cleanup 30M->30M(256M) 0.1ms", Cleanup),
        ("[1.0s][info][gc] GC(8) Pause Full (System.gc()) 30M->3M(256M) 12.0ms", Full),
        ("[1.0s][info][gc] GC(9) Pause Young (Allocation Failure) 30M->3M(256M) 2.0ms", Young),
        ("[1.0s][info][gc] GC(2) Pause Mark Start 0.011ms", MarkStart),
        ("[1.0s][info][gc] GC(2) y: Pause Mark End 0.011ms", MarkEnd),
        ("[1.0s][info][gc] GC(2) O: Pause Relocate Start 0.011ms", RelocateStart),
        ("[1.0s][info][gc] GC(2) Pause Init Mark 0.2ms", InitMark),
        ("[1.0s][info][gc] GC(2) Pause Final Mark 0.3ms", FinalMark),
        ("[1.0s][info][gc] GC(2) Pause Degenerated GC (Mark) 30M->3M(256M) 40.0ms", Degenerated),
        ("2021-01-01T00:00:00.000+0000: 1.000: [GC pause (G1 Evacuation Pause) (young), 0.0030000 secs]", Young),
        ("2021-01-01T00:00:00.000+0000: 1.000: [GC pause (G1 Evacuation Pause) (mixed), 0.0030000 secs]", Mixed),
        ("2021-01-01T00:00:00.000+0000: 1.000: [GC pause (G1 Humongous Allocation) (young) (initial-mark), 0.0030000 secs]", ConcurrentStart),
        // JDK 6 and 7 print G1 kinds without a cause.
        ("1.000: [GC pause (young), 0.0030000 secs]", Young),
        ("1.000: [GC pause (mixed), 0.0030000 secs]", Mixed),
        ("1.000: [GC pause (partial), 0.0030000 secs]", Mixed),
        ("1.000: [GC pause (young) (initial-mark), 0.0030000 secs]", ConcurrentStart),
        // CMS phases without -XX:+PrintGCDetails.
        ("1.000: [GC (CMS Initial Mark)  3K(8K), 0.0010000 secs]", InitialMark),
        ("1.000: [GC (CMS Final Remark)  3K(8K), 0.0010000 secs]", Remark),
        ("1.000: [GC (Allocation Failure) [PSYoungGen: 1K->1K(2K)] 3K->2K(8K), 0.0010000 secs]", Young),
        ("1.000: [Full GC (Ergonomics) [PSYoungGen: 1K->0K(2K)] 3K->2K(8K), 0.0100000 secs]", Full),
    ];
    for (line, expected) in cases {
        let Ok(parsed) = parse_line(line.as_bytes()) else {
            panic!("not parsed: {line}");
        };
        let Record::Pause(pause) = parsed.record else {
            panic!("not a pause: {line}");
        };
        assert_eq!(
            PauseType::of(&pause.name),
            expected,
            "{line} -> {}",
            pause.name
        );
    }
    assert_eq!(PauseType::of("something new").as_str(), "other");
}
