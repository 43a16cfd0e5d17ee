//! How pauses add up: the time a log covers includes its pauses, no share of time exceeds
//! 100 %, a pause nested in another is one stop, a CMS collection that fails twice counts
//! for both failures and as a full collection, and a log without events says so.

use pauselab_analysis::{Analyzer, Finding, Options, Report};
use pauselab_gclog::LineFeed;
use pauselab_pause::RecordSink;

fn analyze(lines: &[&str]) -> Report {
    let mut analyzer = Analyzer::new(Options::default());
    analyzer.begin_input("gc.log");
    let mut feed = LineFeed::new(&mut analyzer, "gc.log");
    for (i, line) in lines.iter().enumerate() {
        feed.line(line.as_bytes(), i as u64 + 1, None, false);
    }
    feed.finish();
    analyzer.end_input(0);
    analyzer.finish()
}

fn rules(r: &Report) -> Vec<&'static str> {
    r.findings.iter().map(|f| f.rule).collect()
}

fn finding<'a>(r: &'a Report, rule: &str) -> &'a Finding {
    r.findings
        .iter()
        .find(|f| f.rule == rule)
        .unwrap_or_else(|| panic!("no {rule} finding: {:?}", rules(r)))
}

/// The log's one full collection is a young one upgraded, named after the young one.
fn assert_one_young_collection_upgraded_to_full(r: &Report) {
    assert_eq!(r.pauses.by_name[0].name, "Pause Young");
    let full = finding(r, "full_gc");
    assert_eq!(full.count, 1);
    assert!(
        full.evidence[0].detail.contains("upgraded"),
        "{:?}",
        full.evidence
    );
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

#[test]
fn a_jdk8_event_is_covered_to_its_end_and_a_short_log_is_not_judged() {
    // Stamped at its start, 20 s long; the concurrent phase printed inside the event is
    // handed on after it, stamped before the event's end.
    let r = analyze(&[
        "5000.100: [GC 5000.101: [ParNew: 90000K->9000K(90000K), 0.0500000 secs] 300000K->220000K(900000K), 20.0000000 secs] [Times: user=1.00 sys=0.00, real=20.00 secs]",
        "5010.500: [CMS-concurrent-mark: 5.000/10.000 secs] [Times: user=9.00 sys=0.50, real=10.00 secs]",
    ]);
    assert!(close(r.span.covered_s, 20.0), "{:?}", r.span);
    assert_eq!(r.span.end_uptime_s, Some(5020.1));
    assert_eq!(r.pauses.share_pct, Some(100.0));
    assert!(r.pauses.worst_windows.is_empty());
    // 20 s of log cannot say how much of its time the JVM spends in pauses.
    assert!(!rules(&r).contains(&"gc_time_share"), "{:?}", rules(&r));
}

#[test]
fn a_unified_log_is_covered_from_the_first_pause_start() {
    // One line: written when the 2.5 ms pause ended.
    let r = analyze(&["[0.500s][info][gc] GC(0) Pause Full (Ergonomics) 3M->1M(8M) 2.500ms"]);
    assert!(close(r.span.covered_s, 0.0025), "{:?}", r.span);
    assert_eq!(r.span.start_uptime_s, Some(0.4975));
    assert_eq!(r.pauses.share_pct, Some(100.0));
    assert!(!rules(&r).contains(&"gc_time_share"));
}

#[test]
fn no_window_holds_more_pause_than_its_length() {
    // 30 s of log, then a 90 s JDK 8 pause with a concurrent line held back inside it.
    let r = analyze(&[
        "100.000: [GC 100.001: [ParNew: 9000K->900K(9000K), 0.0100000 secs] 30000K->22000K(90000K), 0.0100000 secs]",
        "130.000: [GC 130.001: [ParNew: 9000K->900K(9000K), 0.0100000 secs] 30000K->22000K(90000K), 90.0000000 secs]",
        "160.000: [CMS-concurrent-sweep: 1.000/2.000 secs] [Times: user=1.00 sys=0.00, real=2.00 secs]",
    ]);
    assert!(close(r.span.covered_s, 120.0), "{:?}", r.span);
    let minute = r.pauses.worst_windows.iter().find(|w| w.window_s == 60);
    let minute = minute.expect("the log covers a minute");
    assert_eq!(minute.share_pct, 100.0, "{minute:?}");
    assert!(close(minute.pause_ms, 60_000.0), "{minute:?}");
    let share = r.pauses.share_pct.unwrap();
    assert!(close(share, 90_010.0 * 100.0 / 120_000.0), "{share}");
    let f = finding(&r, "gc_time_share");
    assert!(
        f.title.starts_with("GC pauses took 75.0% of the 120 s"),
        "{}",
        f.title
    );
}

#[test]
fn a_full_collection_nested_in_a_young_one_is_one_stop() {
    // Serial on JDK 11-17: the young collection fails and runs a full one inside it.
    let r = analyze(&[
        "[2.100s][info][gc,start     ] GC(7) Pause Young (Allocation Failure)",
        "[2.102s][info][gc,start     ] GC(8) Pause Full (Allocation Failure)",
        "[2.104s][info][gc,heap      ] GC(8) Tenured: 5000K->2000K(6000K)",
        "[2.104s][info][gc             ] GC(8) Pause Full (Allocation Failure) 7M->2M(8M) 2.000ms",
        "[2.104s][info][gc,cpu         ] GC(8) User=0.01s Sys=0.00s Real=0.00s",
        "[2.105s][info][gc,heap        ] GC(7) Tenured: 5000K->2000K(6000K)",
        "[2.105s][info][gc             ] GC(7) Pause Young (Allocation Failure) 7M->2M(8M) 5.000ms",
        "[2.105s][info][gc,cpu         ] GC(7) User=0.01s Sys=0.00s Real=0.01s",
        "[2.105s][info][safepoint      ] Safepoint \"GenCollectForAllocation\", Time since last: 1000000 ns, Reaching safepoint: 20000 ns, Cleanup: 1000 ns, At safepoint: 5100000 ns, Total: 5121000 ns",
        "[3.000s][info][gc,start     ] GC(9) Pause Young (Allocation Failure)",
        "[3.000s][info][gc,heap      ] GC(9) Tenured: 2000K->2500K(6000K)",
        "[3.001s][info][gc             ] GC(9) Pause Young (Allocation Failure) 6M->3M(8M) 1.000ms",
    ]);
    assert_eq!(r.pauses.summary.count, 2, "{:?}", r.pauses.by_name);
    assert!(close(r.pauses.summary.total_ms, 6.0));
    assert_one_young_collection_upgraded_to_full(&r);
    assert_eq!(r.pauses.full_gc_causes[0].name, "Allocation Failure");
    // The stop's own CPU line and safepoint.
    assert_eq!(r.worst[0].event.duration_ms, 5.0);
    assert_eq!(r.worst[0].event.cpu.unwrap().real_ms, 10.0);
    assert_eq!(r.worst[0].stopped_ms, Some(5.121));
    // Promotion only from GC(9): the failed young collection promoted nothing it can tell.
    assert_eq!(r.memory.promoted_bytes, Some(500 << 10));
    // Heap samples: the nested collection's transition is inside the stop, not another one.
    assert_eq!(r.memory.heap_samples, 2);
}

#[test]
fn without_start_lines_a_full_collection_printed_before_its_young_one_is_one_stop() {
    // JDK 9-11 Serial/CMS with `-Xlog:gc` only: the full collection (higher id) first, at
    // the same stamp, a little shorter than the young collection it ran in.
    let r = analyze(&[
        "[2023-03-01T10:00:00.000+0000][info][gc] Using Concurrent Mark Sweep",
        "[2023-03-01T10:00:05.000+0000][info][gc] GC(4) Pause Young (Allocation Failure) 700M->650M(970M) 20.000ms",
        "[2023-03-01T10:00:10.200+0000][info][gc] GC(6) Pause Full (Allocation Failure) 834M->594M(970M) 141.054ms",
        "[2023-03-01T10:00:10.200+0000][info][gc] GC(5) Pause Young (Allocation Failure) 834M->594M(970M) 141.110ms",
        "[2023-03-01T10:00:15.000+0000][info][gc] GC(7) Pause Young (Allocation Failure) 700M->650M(970M) 10.000ms",
    ]);
    assert_eq!(r.pauses.summary.count, 3, "{:?}", r.pauses.by_name);
    assert!(
        close(r.pauses.summary.total_ms, 171.110),
        "{}",
        r.pauses.summary.total_ms
    );
    assert_one_young_collection_upgraded_to_full(&r);
    assert_eq!(r.memory.heap_samples, 3);

    // JDK 17: the full collection after the young one, the next id: two collections.
    let r = analyze(&[
        "[0.300s][info][gc] Using Serial",
        "[0.310s][info][gc] GC(2) Pause Young (Allocation Failure) 7M->7M(8M) 1.000ms",
        "[0.318s][info][gc] GC(3) Pause Full (Allocation Failure) 7M->2M(8M) 8.000ms",
        "[0.400s][info][gc] GC(4) Pause Young (Allocation Failure) 6M->3M(8M) 1.000ms",
    ]);
    assert_eq!(r.pauses.summary.count, 3);
    // A full collection held back, then the log ends: still counted.
    let r = analyze(&["[0.318s][info][gc] GC(3) Pause Full (System.gc()) 7M->2M(8M) 8.000ms"]);
    assert_eq!(r.pauses.summary.count, 1);
    // An earlier id that does not cover it (ended before it began) is a pause of its own.
    let r = analyze(&[
        "[0.318s][info][gc] GC(3) Pause Full (System.gc()) 7M->2M(8M) 8.000ms",
        "[0.330s][info][gc] GC(2) Pause Young (Allocation Failure) 7M->7M(8M) 9.000ms",
    ]);
    assert_eq!(r.pauses.summary.count, 2);
}

#[test]
fn a_start_line_whose_pause_never_ends_does_not_swallow_later_pauses() {
    let r = analyze(&[
        "[1.000s][info][gc,start] GC(1) Pause Young (Allocation Failure)",
        "[2.000s][info][gc,start] GC(2) Pause Young (Allocation Failure)",
        "[2.001s][info][gc      ] GC(2) Pause Young (Allocation Failure) 6M->3M(8M) 1.000ms",
        "[3.000s][info][gc,start] GC(3) Pause Young (Allocation Failure)",
        "[3.001s][info][gc      ] GC(3) Pause Young (Allocation Failure) 6M->3M(8M) 1.000ms",
    ]);
    assert_eq!(r.pauses.summary.count, 2);
    assert!(!rules(&r).contains(&"full_gc"));
    // Cut after the nested-looking pause: it still counts.
    let r = analyze(&[
        "[1.000s][info][gc,start] GC(1) Pause Young (Allocation Failure)",
        "[1.001s][info][gc,start] GC(2) Pause Full (Allocation Failure)",
        "[1.002s][info][gc      ] GC(2) Pause Full (Allocation Failure) 6M->3M(8M) 1.000ms",
    ]);
    assert_eq!(r.pauses.summary.count, 1);
    assert_eq!(finding(&r, "full_gc").count, 1);
}

#[test]
fn a_promotion_failure_with_a_concurrent_mode_failure_fires_both_and_is_a_full_collection() {
    let r = analyze(&[
        "7000.000: [GC 7000.001: [ParNew: 400000K->40000K(400000K), 0.2000000 secs] 900000K->560000K(1400000K), 0.2000000 secs] [Times: user=0.40 sys=0.00, real=0.20 secs]",
        "7100.000: [GC 7100.001: [ParNew (promotion failed): 400000K->400000K(400000K), 2.1000000 secs]7102.101: [CMS (concurrent mode failure): 900000K->850000K(1000000K), 30.5000000 secs] 1300000K->850000K(1400000K), [CMS Perm : 40000K->40000K(80000K)], 32.6000000 secs] [Times: user=35.00 sys=0.10, real=32.60 secs]",
    ]);
    assert_eq!(r.pauses.summary.count, 2);
    assert_eq!(finding(&r, "promotion_failure").count, 1);
    assert_eq!(finding(&r, "concurrent_mode_failure").count, 1);
    let full = finding(&r, "full_gc");
    assert_eq!(full.count, 1);
    assert!(
        full.title.contains("concurrent mode failure x1"),
        "{}",
        full.title
    );
    assert!(close(full.excess_total_ms, 32_600.0));
    // Only the first young collection promoted: 360000K left the young generation, 340000K
    // the heap.
    assert_eq!(r.memory.promoted_bytes, Some(20_000 << 10));
}

#[test]
fn a_tlab_line_run_into_a_young_collection_hides_not_its_promotion() {
    // `-XX:+PrintTLAB`: the first thread's line runs into the collection's first line, its
    // `[id: ...]` the event's first bracket; the generation's line comes after the totals.
    let tlab = "TLAB: gc thread: 0x00007fc6e8811000 [id: 14595] desired_size: 100KB slow allocs: 0  refill waste: 1024B alloc: 0.07570     5000KB refills: 1 waste 99.8% gc: 102216B slow: 0B fast: 0B";
    let log = [
        "1.000: [GC (Allocation Failure) 1.000: [ParNew: 1000K->100K(2000K), 0.0100000 secs] 3000K->2200K(9000K), 0.0110000 secs] [Times: user=0.02 sys=0.00, real=0.01 secs]",
        &format!("2.000: [GC (Allocation Failure){tlab}"),
        tlab,
        "TLAB totals: thrds: 2  refills: 2 max: 1 slow allocs: 0 max 0 waste: 99.9% gc: 204616B max: 102400B slow: 0B max: 0B fast: 0B max: 0B",
        "2.000: [ParNew: 1000K->100K(2000K), 0.0100000 secs] 3000K->2300K(9000K), 0.0110000 secs] [Times: user=0.02 sys=0.00, real=0.01 secs]",
    ]
    .join("\n");
    let r = crate::support::analyze_text(&log);
    assert_eq!(r.unparsed_lines, 0);
    assert_eq!(r.pauses.summary.count, 2);
    assert_eq!(r.pauses.by_name[0].name, "ParNew");
    // Each left the young generation 900K lighter; the heap 800K, then 700K.
    let promoted_kib = (900 - 800) + (900 - 700);
    assert_eq!(r.memory.promoted_bytes, Some(promoted_kib << 10));
}

#[test]
fn reference_processing_printed_before_parallels_generations_hides_neither_its_promotion() {
    // `-XX:+PrintReferenceGC` with Parallel (GCViewer's SampleSun1_7_0ParallelAdaptiveSizeReference.txt):
    // each kind of reference processed, stamped, between the cause and `[PSYoungGen:`, and
    // the adaptive size policy's lines before the generation's.
    let stamp = "2013-10-12T23:05:32.860+0200: 0.198: ";
    let references = [
        "[SoftReference, 0 refs, 0.0001036 secs]",
        "[WeakReference, 5 refs, 0.0000315 secs]",
        "[FinalReference, 10 refs, 0.0000389 secs]",
        "[PhantomReference, 0 refs, 0.0000287 secs]",
        "[JNI Weak Reference, 0.0000340 secs]",
    ];
    let first = format!(
        "2013-10-12T23:05:32.845+0200: 0.186: [GC (Allocation Failure){}AdaptiveSizePolicy::compute_survivor_space_size_and_thresh:  survived: 2606192  promoted: 13908608  overflow: trueAdaptiveSizeStart: 0.199 collection: 1 ",
        references.map(|r| format!("{stamp}{r}")).concat()
    );
    let log = [
        first.as_str(),
        "AdaptiveSizeStop: collection: 1 ",
        " [PSYoungGen: 16865K->2545K(19456K)] 16865K->16127K(62976K), 0.0134562 secs] [Times: user=0.02 sys=0.05, real=0.01 secs] ",
    ]
    .join("\n");
    let r = crate::support::analyze_text(&log);
    assert_eq!(r.unparsed_lines, 0);
    assert_eq!(r.pauses.summary.count, 1);
    assert_eq!(r.pauses.by_name[0].name, "PSYoungGen");
    // 16865K - 2545K left the young generation, 16865K - 16127K the heap: the rest was
    // promoted (the policy's own line says 13908608 bytes, its estimate before the copy).
    let promoted_kib = (16865 - 2545) - (16865 - 16127);
    assert_eq!(r.memory.promoted_bytes, Some(promoted_kib << 10));
}

#[test]
fn a_wall_clock_set_back_while_the_uptime_goes_on_is_warned_of() {
    let lines = [
        "2021-03-04T10:00:00.000+0000: 100.000: [GC (Allocation Failure) [PSYoungGen: 1000K->100K(2000K)] 5000K->4100K(9000K), 0.0100000 secs] [Times: user=0.01 sys=0.00, real=0.01 secs]",
        "2021-03-04T10:00:10.000+0000: 110.000: [GC (Allocation Failure) [PSYoungGen: 1000K->100K(2000K)] 5000K->4100K(9000K), 0.0100000 secs] [Times: user=0.01 sys=0.00, real=0.01 secs]",
        // The host's clock set back by a minute; the JVM's uptime goes on.
        "2021-03-04T09:59:20.000+0000: 120.000: [GC (Allocation Failure) [PSYoungGen: 1000K->100K(2000K)] 5000K->4100K(9000K), 0.0100000 secs] [Times: user=0.01 sys=0.00, real=0.01 secs]",
        "2021-03-04T09:59:30.000+0000: 130.000: [GC (Allocation Failure) [PSYoungGen: 1000K->100K(2000K)] 5000K->4100K(9000K), 0.0100000 secs] [Times: user=0.01 sys=0.00, real=0.01 secs]",
    ];
    let r = analyze(&lines);
    assert_eq!(r.pauses.summary.count, 4);
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    let w = &r.warnings[0];
    assert_eq!(w.line, Some(3));
    assert!(
        w.message.starts_with(
            "the wall clock goes back 1 time(s) while the uptime goes on, first from 2021-03-04T10:00:10.000Z to 2021-03-04T09:59:20.000Z (50.000 s back)"
        ),
        "{}",
        w.message
    );
    // Uptime and wall clock back together: a new JVM run, warned of as such instead.
    let mut restarted = lines[..2].to_vec();
    restarted.push(
        "2021-03-04T09:59:20.000+0000: 1.000: [GC (Allocation Failure) [PSYoungGen: 1000K->100K(2000K)] 5000K->4100K(9000K), 0.0100000 secs] [Times: user=0.01 sys=0.00, real=0.01 secs]",
    );
    let r = analyze(&restarted);
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(
        r.warnings[0].message.starts_with("time stamps go back"),
        "{:?}",
        r.warnings
    );
    // A clock that only goes forward: no warning.
    assert!(analyze(&lines[..2]).warnings.is_empty());
}

#[test]
fn events_on_one_line_whose_line_breaks_were_lost_are_each_counted() {
    // Read as a file is, its lines joined into events.
    let r = crate::support::analyze_text(
        "2.193: [GC 2.193: [DefNew: 17024K->643K(19136K), 0.0084810 secs] 17024K->643K(260032K), 0.0085510 secs] [Times: user=0.00 sys=0.00, real=0.01 secs] 3.001: [Full GC 3.001: [Tenured: 643K->600K(240896K), 0.0200000 secs] 1000K->600K(260032K), [Perm : 2000K->2000K(21248K)], 0.0200000 secs] [Times: user=0.02 sys=0.00, real=0.02 secs]\n",
    );
    assert_eq!(r.pauses.summary.count, 2);
    assert!(
        (r.pauses.summary.total_ms - 28.551).abs() < 1e-6,
        "{}",
        r.pauses.summary.total_ms
    );
    assert_eq!(r.unparsed_lines, 0);
}

#[test]
fn a_log_without_events_warns_and_does_not_read_as_healthy() {
    let r = analyze(&[
        "Java HotSpot(TM) 64-Bit Server VM (24.80-b11) for linux-amd64 JRE (1.7.0_80-b15), built on Jan 1 2015 00:00:00 by \"builder\" with gcc 4.3.0",
        "Memory: 4k page, physical 16000000k(8000000k free), swap 0k(0k free)",
        "CommandLine flags: -XX:MaxHeapSize=524288000 -XX:+PrintGCDetails -XX:+UseConcMarkSweepGC -XX:+UseParNewGC",
    ]);
    assert!(!r.has_events());
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    let w = &r.warnings[0];
    assert_eq!(w.file, "gc.log");
    assert!(
        w.message
            .starts_with("no GC events (the log holds only the JVM's header"),
        "{}",
        w.message
    );
    let text = pauselab_analysis::render_text(&r);
    assert!(text.contains("the log holds no GC event"), "{text}");
    // Decorated lines that are not events (statistics at exit).
    let r = analyze(&[
        "[2020-03-01T10:00:00.000+0000][1000ms] GC STATISTICS:",
        "[2020-03-01T10:00:00.000+0000][1000ms] Total Pauses (G) = 0.10 s (a = 1000 us) (n = 100)",
    ]);
    assert!(!r.has_events());
    assert!(
        r.warnings[0]
            .message
            .contains("2 log line(s), none of them a pause"),
        "{:?}",
        r.warnings
    );
    // A log with a pause has events and no such warning.
    let r = analyze(&[
        "[0.500s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 3M->1M(8M) 2.500ms",
    ]);
    assert!(r.has_events() && r.warnings.is_empty());
}

#[test]
fn stamps_and_durations_at_the_end_of_the_range_do_not_overflow() {
    let r = analyze(&[
        "[18446744073.000s][info][gc] GC(0) Pause Young (Normal) 1M->0M(2M) 99999999999999.000ms",
        "18446744073.000: [GC 1K->1K(2K), 99999999999.0000000 secs]",
        "[2262-04-11T23:47:16.854+0000][info][gc] GC(1) Pause Young (Normal) 1M->0M(2M) 99999999999999.000ms",
    ]);
    assert!(r.pauses.share_pct.unwrap_or(0.0) <= 100.0);
}

fn causes(r: &Report, rule: &str) -> Vec<&'static str> {
    finding(r, rule).causes.iter().map(|c| c.cause).collect()
}

#[test]
fn off_cpu_pauses_on_a_saturated_host_rank_descheduling_first_and_no_fix_the_jvm_has() {
    // JDK 17 G1 beside busy loops on every core: the GC threads were runnable, not running
    // (real several times user + sys, almost no sys), and the JVM already runs with
    // -XX:+PerfDisableSharedMem (`-Xlog:arguments`).
    let r = analyze(&[
        "[0.010s][info][arguments] jvm_args: -XX:+UseG1GC -XX:+PerfDisableSharedMem -Xmx64m",
        "[0.012s][info][gc] Using G1",
        "[1.300s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 24M->4M(64M) 180.512ms",
        "[1.300s][info][gc,cpu] GC(0) User=0.03s Sys=0.00s Real=0.18s",
        "[2.500s][info][gc] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 28M->5M(64M) 120.118ms",
        "[2.500s][info][gc,cpu] GC(1) User=0.02s Sys=0.01s Real=0.12s",
    ]);
    let f = finding(&r, "real_gt_cpu");
    assert!(
        causes(&r, "real_gt_cpu")[0].starts_with("descheduling"),
        "{:?}",
        f.causes
    );
    assert!(
        f.causes[0].evidence.as_deref().unwrap().contains("sys"),
        "{:?}",
        f.causes
    );
    assert!(f.causes.len() >= 5, "every cause is listed: {:?}", f.causes);
    assert!(
        !f.fixes.iter().any(|x| x.contains("PerfDisableSharedMem")),
        "{:?}",
        f.fixes
    );
    let hsperf = f
        .causes
        .iter()
        .find(|c| c.cause.contains("hsperf"))
        .unwrap();
    assert!(hsperf
        .evidence
        .as_deref()
        .unwrap()
        .contains("already runs with -XX:+PerfDisableSharedMem"));
    // The text shows every cause with its evidence.
    let text = pauselab_analysis::render_text(&r);
    for c in &f.causes {
        assert!(text.contains(c.cause), "{text}");
    }

    // The same pauses with sys as high as user: not the descheduling shape.
    let r = analyze(&[
        "[1.300s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 24M->4M(64M) 180.512ms",
        "[1.300s][info][gc,cpu] GC(0) User=0.05s Sys=0.06s Real=0.18s",
    ]);
    let first = &finding(&r, "real_gt_cpu").causes[0];
    assert!(!first.cause.starts_with("descheduling"), "{first:?}");
    assert!(finding(&r, "real_gt_cpu")
        .fixes
        .iter()
        .any(|x| x.contains("PerfDisableSharedMem")));
}

#[test]
fn stopped_gt_gc_leaves_out_time_to_safepoint_and_names_the_vm_operation() {
    // JDK 8 CMS: 75.7 s of the stop went to reaching the safepoint (long_ttsp), not after GC.
    let r = analyze(&[
        "2020-01-01T00:00:00.000+0000: 10.000: [GC (Allocation Failure) 10.000: [ParNew: 90000K->9000K(90000K), 0.1094000 secs] 300000K->220000K(900000K), 0.1094000 secs] [Times: user=0.20 sys=0.00, real=0.11 secs]",
        "2020-01-01T00:01:15.836+0000: 85.836: Total time for which application threads were stopped: 75.8366000 seconds, Stopping threads took: 75.7264152 seconds",
    ]);
    assert!(!rules(&r).contains(&"stopped_gt_gc"), "{:?}", rules(&r));
    assert!(rules(&r).contains(&"long_ttsp"));
    // JDK 17: a heap dump's collection, then the dump, in one stop.
    let r = analyze(&[
        "[5.000s][info][gc] GC(3) Pause Full (Heap Dump Initiated GC) 40M->10M(64M) 30.000ms",
        "[5.900s][info][safepoint] Safepoint \"HeapDumper\", Time since last: 1000000 ns, Reaching safepoint: 100000 ns, Cleanup: 1000 ns, At safepoint: 899000000 ns, Total: 899101000 ns",
    ]);
    let f = finding(&r, "stopped_gt_gc");
    assert!(
        f.evidence[0].detail.contains("HeapDumper"),
        "{:?}",
        f.evidence
    );
    assert!(f.causes[0].cause.contains("heap dump"), "{:?}", f.causes);
    assert!(f.causes[0]
        .evidence
        .as_deref()
        .unwrap()
        .contains("HeapDumper"));
}

#[test]
fn numbers_not_recorded_are_null_and_cpu_times_keep_the_logs_precision() {
    // JDK 7: stopped-time lines without `Stopping threads took`; `[Times:]` to 10 ms.
    let r = analyze(&[
        "5.123: [GC (Allocation Failure) 5.123: [ParNew: 78656K->8704K(78656K), 0.1102345 secs] 100000K->40000K(253440K), 0.1102345 secs] [Times: user=0.00 sys=0.00, real=0.11 secs]",
        "5.234: Total time for which application threads were stopped: 0.1109000 seconds",
    ]);
    assert_eq!(r.safepoints.summary.count, 1);
    assert_eq!(
        (r.safepoints.ttsp_max_ms, r.safepoints.ttsp_p99_ms),
        (None, None)
    );
    let json = serde_json::to_value(&r).unwrap();
    assert!(
        json["safepoints"]["ttsp_p99_ms"].is_null(),
        "{}",
        json["safepoints"]
    );
    assert!(json["memory"].get("allocation_rate_mib_s").is_some());
    let text = pauselab_analysis::render_text(&r);
    let safepoints = text
        .lines()
        .skip_while(|l| !l.starts_with("Safepoints"))
        .nth(1)
        .unwrap();
    assert_eq!(safepoints.matches("n/a").count(), 2, "{text}");
    let worst = text
        .lines()
        .find(|l| l.contains("ParNew (Allocation Failure)"))
        .unwrap();
    assert!(
        worst.contains(" 110 ms ") && worst.contains(" 0 ms "),
        "{worst}"
    );
    assert!(!worst.contains("110.0 ms"), "{worst}");
    // A condition on what was not recorded does not hold, and says so; others give units.
    let ttsp = &pauselab_analysis::parse_conditions("ttsp.p99<1s,p99>1ms,gc_share>0").unwrap();
    assert_eq!(
        ttsp[0].holds(&r),
        (false, "ttsp.p99 = n/a (not in the input)".to_string())
    );
    assert_eq!(ttsp[1].holds(&r).1, "p99 = 110.234 ms");
    assert!(ttsp[2].holds(&r).1.ends_with(" %"));
}

/// Collects each pause's CPU times as the analysis commits it.
#[derive(Default)]
struct CpuTimesSeen(Vec<(String, bool)>);

impl pauselab_analysis::PauseSink for CpuTimesSeen {
    fn pause(&mut self, event: &pauselab_pause::PauseEvent) {
        self.0.push((event.name.clone(), event.cpu.is_some()));
    }
}

/// A unified log's `GC(N) User=... Sys=... Real=...` line belongs to the pause just before
/// it: G1's `Pause Cleanup` has its own after its GC id's `Pause Remark` had one. Counted
/// here on G1's fixtures of JDK 11 to 25: a pause has CPU times when the next line of its
/// GC id is a `User=` line.
#[test]
fn each_pause_gets_the_cpu_line_that_follows_it() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/gclogs");
    let mut cleanups = 0;
    for name in [
        "g1-jdk11.log.gz",
        "g1-jdk17.log.gz",
        "g1-jdk21.log.gz",
        "g1-jdk25.log.gz",
    ] {
        let out = std::process::Command::new("gzip")
            .arg("-dc")
            .arg(fixtures.join(name))
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let gc_id = |line: &str| {
            let at = line.find("GC(")?;
            Some(line[at..].split(')').next()?.to_string())
        };
        // By hand: pause lines end in `ms`, with the next line of their GC id a CPU line.
        let expected: Vec<(String, bool)> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.contains(") Pause ") && l.ends_with("ms"))
            .map(|(i, l)| {
                let id = gc_id(l);
                let next = lines[i + 1..].iter().find(|n| gc_id(n) == id);
                let name = l[l.find(") Pause ").unwrap() + 2..].to_string();
                (name, next.is_some_and(|n| n.contains(" User=")))
            })
            .collect();
        cleanups += expected
            .iter()
            .filter(|(n, cpu)| n.starts_with("Pause Cleanup") && *cpu)
            .count();
        let mut seen = CpuTimesSeen::default();
        let mut analyzer = Analyzer::new(Options::default()).with_sink(&mut seen);
        analyzer.begin_input(name);
        let mut feed = LineFeed::new(&mut analyzer, name);
        for (i, line) in lines.iter().enumerate() {
            feed.line(line.as_bytes(), i as u64 + 1, None, false);
        }
        feed.finish();
        analyzer.end_input(0);
        analyzer.finish();
        let with_cpu = |v: &[(String, bool)]| v.iter().filter(|(_, cpu)| *cpu).count();
        assert_eq!(seen.0.len(), expected.len(), "{name}");
        assert_eq!(with_cpu(&seen.0), with_cpu(&expected), "{name}");
    }
    assert!(cleanups > 0, "no cleanup pause with its own CPU line");
}

/// JDK 11 to 16 coalesce VM operations: a G1 remark can run in a safepoint entered for a
/// `ThreadDump` (JDK 11.0.13, `-Xlog:gc*,safepoint`). That stop is a GC's, counted as
/// `ThreadDump + GC`, and the non-GC operations the finding lists add up to its total.
#[test]
fn an_operation_that_a_collection_joined_is_counted_apart_from_those_without_one() {
    let lines = [
        "[1.146s][info][safepoint     ] Entering safepoint region: ThreadDump",
        "[1.146s][info][gc,start      ] GC(115) Pause Remark",
        "[1.147s][info][gc            ] GC(115) Pause Remark 84M->84M(128M) 0.876ms",
        "[1.147s][info][gc,cpu        ] GC(115) User=0.00s Sys=0.00s Real=0.00s",
        "[1.147s][info][safepoint     ] Leaving safepoint region",
        "[1.147s][info][safepoint     ] Total time for which application threads were stopped: 0.0010174 seconds, Stopping threads took: 0.0000026 seconds",
        "[1.150s][info][safepoint     ] Entering safepoint region: ThreadDump",
        "[1.150s][info][safepoint     ] Leaving safepoint region",
        "[1.150s][info][safepoint     ] Total time for which application threads were stopped: 0.0003000 seconds, Stopping threads took: 0.0000020 seconds",
        "[1.160s][info][safepoint     ] Entering safepoint region: ThreadDump",
        "[1.160s][info][safepoint     ] Leaving safepoint region",
        "[1.160s][info][safepoint     ] Total time for which application threads were stopped: 0.0004000 seconds, Stopping threads took: 0.0000020 seconds",
    ];
    let r = analyze(&lines);
    let ops: Vec<(&str, u64, Option<bool>)> = r
        .safepoints
        .operations
        .iter()
        .map(|o| (o.name.as_str(), o.count, o.gc))
        .collect();
    assert!(ops.contains(&("ThreadDump + GC", 1, Some(true))), "{ops:?}");
    assert!(ops.contains(&("ThreadDump", 2, Some(false))), "{ops:?}");
    assert_eq!(r.safepoints.non_gc_count, 2);
    assert!((r.safepoints.non_gc_total_ms - 0.7).abs() < 1e-9);
    let title = &finding(&r, "non_gc_safepoints").title;
    assert!(title.contains("ThreadDump x2 (0.7 ms)"), "{title}");
}
