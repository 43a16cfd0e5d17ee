//! JDK 6-8 logs where two JVM threads wrote at once (stamps doubled, run together or split
//! over two lines), JDK 7 G1 pauses without a cause and a CMS remark holding a young
//! collection without -XX:+PrintGCDetails, read end to end: every pause is counted with
//! its duration, name and cause, and what cannot be read is counted as unparsed.

use crate::support;

use pauselab_analysis::Report;
use support::analyze_text as analyze;

/// (name, count, total ms rounded to 0.1 ms) per pause name, most frequent first.
fn by_name(report: &Report) -> Vec<(String, u64, f64)> {
    report
        .pauses
        .by_name
        .iter()
        .map(|n| (n.name.clone(), n.count, (n.total_ms * 10.0).round() / 10.0))
        .collect()
}

const G1_LOG: &str = "\
CommandLine flags: -XX:+PrintGCDateStamps -XX:+PrintGCDetails -XX:+PrintGCTimeStamps -XX:+UseG1GC
2021-03-04T10:20:30.400+0100: 2021-03-04T10:20:30.400+0100: 512.250: 512.250: [Full GC (Metadata GC Threshold) [GC concurrent-root-region-scan-start]
2021-03-04T10:20:30.401+0100: 512.251: [GC concurrent-root-region-scan-end, 0.0004000 secs]
2021-03-04T10:20:30.401+0100: 512.251: [GC concurrent-mark-start]
 600M->590M(4096M), 2.1500000 secs]
   [Eden: 0.0B(300.0M)->0.0B(300.0M) Survivors: 2048.0K->0.0B Heap: 600.5M(4096.0M)->590.1M(4096.0M)], [Metaspace: 200000K->200000K(1200000K)]
 [Times: user=4.10 sys=0.00, real=2.15 secs]
2021-03-04T10:20:35.000+0100: 516.850: [GC pause (young), 0.0200000 secs]
 [Times: user=0.04 sys=0.00, real=0.02 secs]
2021-03-04T10:20:36.000+0100: 2021-03-04T10:20:36.000+0100: 517.850: 517.850[GC concurrent-root-region-scan-start]
: [Full GC (Metadata GC Threshold) 2021-03-04T10:20:36.001+0100: 517.851: [GC concurrent-root-region-scan-end, 0.0004000 secs]
2021-03-04T10:20:36.001+0100: 517.851: [GC concurrent-mark-start]
 590M->580M(4096M), 3.2500000 secs]
 [Times: user=6.10 sys=0.00, real=3.25 secs]
2021-03-04T10:20:40.000+0100: 521.850: [GC pause (mixed), 0.0300000 secs]
 [Times: user=0.06 sys=0.00, real=0.03 secs]
2021-03-04T10:20:41.000+0100: 2021-03-04T10:20:41.000+0100: 522.850522.850: : [Full GC (Metadata GC Threshold) [GC concurrent-root-region-scan-start]
 580M->570M(4096M), 1.2500000 secs]
2021-03-04T10:20:43.000+0100: 524.850: [GC pause (young) (initial-mark), 0.0400000 secs]
 [Times: user=0.08 sys=0.00, real=0.04 secs]
 560M->550M(4096M), 1.0000000 secs]
";

#[test]
fn interleaved_stamps_lose_no_full_gc_and_jdk7_g1_kinds_stay_apart() {
    let report = analyze(G1_LOG);
    assert_eq!(
        by_name(&report),
        [
            ("Full GC".to_string(), 3, 6650.0),
            ("GC pause (mixed)".to_string(), 1, 30.0),
            ("GC pause (young)".to_string(), 1, 20.0),
            ("GC pause (young) (initial-mark)".to_string(), 1, 40.0),
        ]
    );
    let causes: Vec<(&str, u64)> = report
        .pauses
        .full_gc_causes
        .iter()
        .map(|c| (c.name.as_str(), c.count))
        .collect();
    assert_eq!(causes, [("Metadata GC Threshold", 3)]);
    // The last line is the tail of an event whose opening is not in the log.
    assert_eq!(report.unparsed_lines, 1, "{:?}", report.first_unparsed);
    assert_eq!(report.first_unparsed.as_ref().unwrap().line, 21);
}

const CMS_LOG: &str = "\
CommandLine flags: -XX:+CMSScavengeBeforeRemark -XX:+PrintGC -XX:+PrintGCDateStamps -XX:+PrintGCTimeStamps -XX:+PrintHeapAtGC -XX:+UseConcMarkSweepGC -XX:+UseParNewGC
2021-03-04T10:20:30.000+0100: 40.800: [GC (CMS Initial Mark)  700000K(8000000K), 0.0150000 secs]
2021-03-04T10:20:30.400+0100: 41.200: [GC (CMS Final Remark) {Heap before GC invocations=9 (full 3):
 par new generation   total 2000000K, used 400000K [0x0000000600000000, 0x0000000680000000, 0x0000000680000000)
 concurrent mark-sweep generation total 6000000K, used 500000K [0x0000000680000000, 0x00000007c0000000, 0x00000007c0000000)
2021-03-04T10:20:30.401+0100: 41.201: [GC (CMS Final Remark)  900000K->700000K(8000000K), 0.1000000 secs]
Heap after GC invocations=10 (full 3):
 par new generation   total 2000000K, used 150000K [0x0000000600000000, 0x0000000680000000, 0x0000000680000000)
 concurrent mark-sweep generation total 6000000K, used 500000K [0x0000000680000000, 0x00000007c0000000, 0x00000007c0000000)
}
 700000K(8000000K), 0.2100000 secs]
";

#[test]
fn cms_remark_without_details_is_one_pause_with_the_remark_duration() {
    let report = analyze(CMS_LOG);
    assert_eq!(
        by_name(&report),
        [
            ("CMS Final Remark".to_string(), 1, 210.0),
            ("CMS Initial Mark".to_string(), 1, 15.0),
        ]
    );
    assert_eq!(report.unparsed_lines, 0);
}

#[test]
fn a_stopped_time_line_with_a_date_stamp_glued_in_front_is_a_safepoint() {
    // JDK 8 G1 with -XX:+PrintGCApplicationStoppedTime: another thread's date stamp lands
    // before the stopped-time text with no `: ` after it.
    let report = analyze(
        "\
CommandLine flags: -XX:+PrintGCApplicationStoppedTime -XX:+PrintGCDateStamps -XX:+PrintGCDetails -XX:+UseG1GC
2023-07-25T13:18:04.730+0000: 985162.173: [GC pause (G1 Evacuation Pause) (young), 0.1650000 secs]
 [Times: user=0.30 sys=0.01, real=0.17 secs]
2023-07-25T13:18:04.900+0000: 985162.343: 2023-07-25T13:18:04.900+0000Total time for which application threads were stopped: 0.1701451 seconds, Stopping threads took: 0.0001789 seconds
2023-07-25T13:18:05.900+0000: 985163.343: Total time for which application threads were stopped: 0.0001451 seconds, Stopping threads took: 0.0000789 seconds
",
    );
    assert_eq!(report.unparsed_lines, 0, "{:?}", report.first_unparsed);
    assert_eq!(report.safepoints.summary.count, 2);
    assert!((report.safepoints.summary.max_ms - 170.1451).abs() < 1e-9);
    assert_eq!(report.worst[0].stopped_ms, Some(170.1451));
}
