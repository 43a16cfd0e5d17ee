use super::*;

fn pause(line: &str) -> (GcPause, Stamp) {
    match parse_line(line.as_bytes()) {
        Ok(Parsed {
            record: Record::Pause(p),
            stamp,
            ..
        }) => (p, stamp),
        other => panic!("not a pause: {line}\n{other:?}"),
    }
}

fn safepoint(line: &str) -> Safepoint {
    match parse_line(line.as_bytes()) {
        Ok(Parsed {
            record: Record::Safepoint(s),
            ..
        }) => s,
        other => panic!("not a safepoint: {line}\n{other:?}"),
    }
}

fn other(line: &str) {
    assert_eq!(
        parse_line(line.as_bytes()).map(|p| p.record),
        Ok(Record::Other),
        "{line}"
    );
}

const MS: u64 = 1_000_000;

#[test]
fn jdk8_serial_parnew_parallel_cms() {
    let (p, stamp) = pause("2012-10-19T18:28:46.210+0100: 2.193: [GC 2.193: [DefNew: 17024K->643K(19136K), 0.0084810 secs] 17024K->643K(260032K), 0.0085510 secs] [Times: user=0.00 sys=0.00, real=0.01 secs] ");
    assert_eq!((p.name.as_ref(), p.duration_ns), ("DefNew", 8_551_000));
    assert_eq!(stamp.uptime_ns, Some(2_193 * MS));
    assert!(stamp.wall_ms.is_some());
    assert_eq!(
        p.cpu,
        Some(Cpu {
            user_ns: 0,
            sys_ns: 0,
            real_ns: 10 * MS
        })
    );

    let (p, _) = pause("5.123: [GC (Allocation Failure) 5.123: [ParNew: 78656K->8704K(78656K), 0.0301234 secs] 100000K->40000K(253440K), 0.0302345 secs] [Times: user=0.10 sys=0.02, real=0.03 secs]");
    assert_eq!(p.name, "ParNew");
    assert_eq!(p.cause.as_deref(), Some("Allocation Failure"));
    assert_eq!(p.cpu.unwrap().sys_ns, 20 * MS);

    let (p, _) = pause("1.000: [GC (Allocation Failure) [PSYoungGen: 65536K->10720K(76288K)] 65536K->10728K(251392K), 0.0123450 secs] [Times: user=0.03 sys=0.01, real=0.01 secs]");
    assert_eq!((p.name.as_ref(), p.duration_ns), ("PSYoungGen", 12_345_000));

    let (p, _) = pause("9.0: [Full GC (Ergonomics) [PSYoungGen: 10K->0K(76288K)] [ParOldGen: 1000K->900K(175104K)] 1010K->900K(251392K), [Metaspace: 3000K->3000K(1056768K)], 0.2500000 secs] [Times: user=0.40 sys=0.00, real=0.25 secs]");
    assert_eq!(
        (p.name.as_ref(), p.cause.as_deref()),
        ("Full GC", Some("Ergonomics"))
    );
    assert_eq!(p.duration_ns, 250 * MS);

    let (p, _) = pause("12.5: [GC (CMS Initial Mark) [1 CMS-initial-mark: 120458K(240896K)] 121786K(260032K), 0.0055970 secs] [Times: user=0.01 sys=0.00, real=0.01 secs]");
    assert_eq!(p.name, "CMS Initial Mark");
    let (p, _) = pause("7.0: [GC[YG occupancy: 1370 K (19136 K)]7.0: [Rescan (non-parallel) 7.0: [grey object rescan, 0.0013400 secs]7.0: [root rescan, 0.0051750 secs], 0.0065730 secs]7.0: [weak refs processing, 0.0601980 secs] [1 CMS-remark: 120458K(240896K)] 121829K(260032K), 0.0674900 secs] [Times: user=0.07 sys=0.00, real=0.07 secs]");
    assert_eq!(
        (p.name.as_ref(), p.duration_ns),
        ("CMS Final Remark", 67_490_000)
    );

    // A full GC with a concurrent mode failure nests a concurrent phase inside the pause.
    let (p, _) = pause("20.0: [Full GC (Allocation Failure) 20.0: [CMS20.5: [CMS-concurrent-mark: 0.500/0.600 secs] [Times: user=1.00 sys=0.00, real=0.60 secs] (concurrent mode failure): 200000K->150000K(240896K), 1.2345670 secs] 210000K->150000K(260032K), [Metaspace: 3000K->3000K(1056768K)], 1.2350000 secs] [Times: user=1.20 sys=0.00, real=1.24 secs]");
    assert_eq!(p.duration_ns, 1_235 * MS);
    assert_eq!(p.cpu.unwrap().real_ns, 1_240 * MS);

    other("2012-10-19T18:28:46.210+0100: 139439.100: [CMS-concurrent-mark-start]");
    other("139439.200: [CMS-concurrent-mark: 0.100/0.100 secs] [Times: user=0.10 sys=0.00, real=0.10 secs]");
    other(" CMS: abort preclean due to time 2012-10-21T09:12:48.237+0100: 139444.219: [CMS-concurrent-abortable-preclean: 0.114/5.008 secs] [Times: user=0.12 sys=0.00, real=5.01 secs] ");
}

#[test]
fn jdk8_g1_multi_line_events() {
    let (p, _) = pause("2014-02-12T10:00:00.000+0000: 0.271: [GC pause (G1 Evacuation Pause) (young), 0.0104350 secs]");
    assert_eq!(
        (p.name.as_ref(), p.cause.as_deref()),
        ("GC pause (young)", Some("G1 Evacuation Pause"))
    );
    assert!(p.cpu.is_none());
    let (p, _) =
        pause("0.5: [GC pause (G1 Humongous Allocation) (young) (initial-mark), 0.0020000 secs]");
    assert_eq!(p.name, "GC pause (young) (initial-mark)");
    let (p, _) =
        pause("0.9: [GC pause (G1 Evacuation Pause) (mixed) 20M->10M(64M), 0.0030000 secs]");
    assert_eq!(p.name, "GC pause (mixed)");
    let (p, _) = pause("1.0: [GC remark 1.0: [Finalize Marking, 0.0001 secs] 1.0: [GC ref-proc, 0.0002 secs] 1.0: [Unloading, 0.0010 secs], 0.0034000 secs]");
    assert_eq!((p.name.as_ref(), p.duration_ns), ("GC remark", 3_400_000));
    let (p, _) = pause("1.1: [GC cleanup 10M->10M(64M), 0.0012000 secs]");
    assert_eq!(p.name, "GC cleanup");
    let (p, _) = pause("3.0: [Full GC (Allocation Failure)  100M->50M(200M), 0.3000000 secs]");
    assert_eq!((p.name.as_ref(), p.duration_ns), ("Full GC", 300 * MS));
    match parse_line(b" [Times: user=0.02 sys=0.00, real=0.01 secs] ")
        .unwrap()
        .record
    {
        Record::Cpu { gc_id: None, cpu } => assert_eq!(cpu.user_ns, 20 * MS),
        r => panic!("{r:?}"),
    }
    other("   [Parallel Time: 9.1 ms, GC Workers: 8]");
    other("0.3: [GC concurrent-root-region-scan-start]");
}

#[test]
fn jdk8_stopped_time_and_safepoint_statistics() {
    let s = safepoint("2016-01-01T00:00:00.000+0000: 5.000: Total time for which application threads were stopped: 0.0123450 seconds, Stopping threads took: 0.0001230 seconds");
    assert_eq!((s.total_ns, s.ttsp_ns), (12_345_000, Some(123_000)));
    let s = safepoint("Total time for which application threads were stopped: 0.0000450 seconds");
    assert_eq!((s.total_ns, s.ttsp_ns), (45_000, None));
    match parse_line(b"0.084: ParallelGCFailedAllocation       [      10          0              0    ]      [     0     0     2     1     5    ]  0   ").unwrap().record {
        Record::SafepointStatistics(s) => {
            assert_eq!(s.operation.as_deref(), Some("ParallelGCFailedAllocation"));
            assert_eq!((s.total_ns, s.ttsp_ns), (8 * MS, Some(2 * MS)));
        }
        r => panic!("{r:?}"),
    }
    other("         vmop                    [threads: total initially_running wait_to_block]    [time: spin block sync cleanup vmop] page_trap_count");
    other("5.000: Application time: 1.0002340 seconds");
}

#[test]
fn unified_decorations_in_any_combination() {
    let msg = "GC(7) Pause Young (Normal) (G1 Evacuation Pause) 29M->2M(256M) 2.286ms";
    for (decorations, uptime, wall) in [
        ("[0.074s][info][gc       ]", Some(74 * MS), None),
        ("[0,074s][info][gc]", Some(74 * MS), None),
        (
            "[2026-11-21T23:06:12.368+0000][0.074s][info][gc]",
            Some(74 * MS),
            Some(1_795_302_372_368),
        ),
        (
            "[2026-11-21T23:06:12.368+0000][93093710ns][10595][10598][info][gc]",
            Some(93_093_710),
            Some(1_795_302_372_368),
        ),
        (
            "[1795302372368ms][74ms][info][gc]",
            Some(74 * MS),
            Some(1_795_302_372_368),
        ),
        ("[74ms][10689][gc]", Some(74 * MS), None),
        (
            "[0.074s][1564317252090ns][myhost-1.example][gc]",
            Some(74 * MS),
            None,
        ),
        ("[1564317252090ns][74000000ns][gc]", Some(74 * MS), None),
        (
            "[2026-11-21T23:06:12.368+0000][info][gc]",
            None,
            Some(1_795_302_372_368),
        ),
        ("[gc]", None, None),
    ] {
        let (p, stamp) = pause(&format!("{decorations} {msg}"));
        assert_eq!(p.gc_id, Some(7));
        assert_eq!(p.duration_ns, 2_286_000, "{decorations}");
        assert_eq!(p.name, "Pause Young (Normal)");
        assert_eq!(p.cause.as_deref(), Some("G1 Evacuation Pause"));
        assert_eq!(stamp.uptime_ns, uptime, "{decorations}");
        assert_eq!(stamp.wall_ms, wall, "{decorations}");
    }
    let (_, stamp) =
        pause("[0.1s][4242][4243][gc] GC(1) Pause Full (System.gc()) 10M->1M(64M) 12,5ms");
    assert_eq!(stamp.pid, Some(4242));
}

#[test]
fn unified_pause_names_per_collector() {
    let cases = [
        (
            "GC(0) Pause Young (Allocation Failure) 64M->2M(245M) 2.263ms",
            "Pause Young",
            Some("Allocation Failure"),
        ),
        (
            "GC(1) Pause Full (System.gc()) 10M->1M(64M) 12.500ms",
            "Pause Full",
            Some("System.gc()"),
        ),
        (
            "GC(2) Pause Remark 20M->20M(64M) 1.000ms",
            "Pause Remark",
            None,
        ),
        (
            "GC(2) Pause Cleanup 20M->20M(64M) 0.100ms",
            "Pause Cleanup",
            None,
        ),
        (
            "GC(3) Pause Young (Concurrent Start) (G1 Humongous Allocation) 20M->20M(64M) 3.000ms",
            "Pause Young (Concurrent Start)",
            Some("G1 Humongous Allocation"),
        ),
        (
            "GC(4) Pause Young (Prepare Mixed) (G1 Evacuation Pause) 20M->20M(64M) 3.000ms",
            "Pause Young (Prepare Mixed)",
            Some("G1 Evacuation Pause"),
        ),
        ("GC(0) Pause Mark Start 0.009ms", "Pause Mark Start", None),
        (
            "GC(0) Y: Pause Mark Start (Major) 0.021ms",
            "Y: Pause Mark Start (Major)",
            None,
        ),
        (
            "GC(0) O: Pause Relocate Start 0.010ms",
            "O: Pause Relocate Start",
            None,
        ),
        (
            "GC(0) Pause Init Mark (unload classes) 0.032ms",
            "Pause Init Mark (unload classes)",
            None,
        ),
        (
            "GC(5) Pause Degenerated GC (Mark) 60M->30M(64M) 20.123ms",
            "Pause Degenerated GC (Mark)",
            None,
        ),
        (
            "GC(9) Pause Initial Mark 1M->1M(2M) 0.500ms",
            "Pause Initial Mark",
            None,
        ),
    ];
    for (msg, name, cause) in cases {
        let (p, _) = pause(&format!("[1.000s][info][gc] {msg}"));
        assert_eq!(p.name, name, "{msg}");
        assert_eq!(p.cause.as_deref(), cause, "{msg}");
    }
    // Start lines and concurrent phases are not pauses; a start line says which pause began.
    for start in [
        "[1.0s][info][gc,start] GC(3) Pause Young (Normal) (G1 Evacuation Pause)",
        "[1.0s][info][gc,start] GC(3) Pause Remark",
    ] {
        assert_eq!(
            parse_line(start.as_bytes()).map(|p| p.record),
            Ok(Record::PauseStart { gc_id: 3 }),
            "{start}"
        );
    }
    assert!(matches!(
        parse_line(b"[1.0s][info][gc] GC(3) Concurrent Mark Cycle 20.000ms").map(|p| p.record),
        Ok(Record::Cycle(GcCycle {
            duration_ns: Some(20_000_000),
            ..
        }))
    ));
    other("[1.0s][info][gc,phases] GC(3)   Evacuate Collection Set: 13.9ms");
    other("[1.0s][info][gc,stats] GC(3) Phase: Pause Mark End  0.009 / 0.009 ms");
}

#[test]
fn unified_safepoint_lines_of_every_release_by_field_name() {
    // JDK 17.0.15 (with Cleanup), earlier 17 (without), 25 (Leaving safepoint, Threads).
    let jdk17 = safepoint("[0.573s][info][safepoint] Safepoint \"G1CollectForAllocation\", Time since last: 504399439 ns, Reaching safepoint: 4155 ns, Cleanup: 113256 ns, At safepoint: 18843937 ns, Total: 18961348 ns");
    assert_eq!((jdk17.total_ns, jdk17.ttsp_ns), (18_961_348, Some(4155)));
    assert_eq!(jdk17.operation.as_deref(), Some("G1CollectForAllocation"));
    let early17 = safepoint("[0.573s][info][safepoint] Safepoint \"Cleanup\", Time since last: 1000 ns, Reaching safepoint: 2000 ns, At safepoint: 3000 ns, Total: 5000 ns");
    assert_eq!((early17.total_ns, early17.ttsp_ns), (5000, Some(2000)));
    let jdk25 = safepoint("[0.142s][info][safepoint] Safepoint \"ZMarkStartYoungAndOld\", Time since last: 50814930 ns, Reaching safepoint: 161690 ns, At safepoint: 32230 ns, Leaving safepoint: 4464125 ns, Total: 4658045 ns, Threads: 1 runnable, 10 total");
    assert_eq!((jdk25.total_ns, jdk25.ttsp_ns), (4_658_045, Some(161_690)));
    let jdk11 = safepoint("[2.5s][info][safepoint] Total time for which application threads were stopped: 0,0012345 seconds, Stopping threads took: 0,0000123 seconds");
    assert_eq!((jdk11.total_ns, jdk11.ttsp_ns), (1_234_500, Some(12_300)));
    assert_eq!(
        parse_line(b"[2.5s][info][safepoint] Entering safepoint region: RevokeBias")
            .unwrap()
            .record,
        Record::SafepointBegin("RevokeBias".into())
    );
    assert_eq!(
        parse_line(b"[2.5s][info][safepoint] Safepoint \"X\", Total: lots ns").map(|p| p.record),
        Err(Unparsed::Malformed)
    );
}

#[test]
fn unified_cpu_collector_and_version() {
    match parse_line(b"[0.058s][info][gc,cpu] GC(0) User=0.01s Sys=0,02s Real=0.03s")
        .unwrap()
        .record
    {
        Record::Cpu {
            gc_id: Some(0),
            cpu,
        } => {
            assert_eq!(
                cpu,
                Cpu {
                    user_ns: 10 * MS,
                    sys_ns: 20 * MS,
                    real_ns: 30 * MS
                }
            )
        }
        r => panic!("{r:?}"),
    }
    assert_eq!(
        parse_line(b"[0.047s][info][gc] Using The Z Garbage Collector")
            .unwrap()
            .record,
        Record::Collector("ZGC".into())
    );
    assert_eq!(
        parse_line(b"[0.021s][info][gc,init] Version: 17.0.15+6-Debian-1deb12u1 (release)")
            .unwrap()
            .record,
        Record::Version("17.0.15+6-Debian-1deb12u1".into())
    );
    other("[0.557s][info][gc,task] GC(0) Using 2 workers of 2 for evacuation");
}

#[test]
fn garbage_is_unknown_not_a_pause() {
    for line in [
        "hello world",
        "[GC",
        "[not a decoration] text",
        "12:34 something",
        "\u{1}\u{2}binary",
    ] {
        assert!(parse_line(line.as_bytes()).is_err(), "{line}");
    }
    assert_eq!(
        parse_line(b"2.0: [GC (Allocation Failure) 2.0: [ParNew").map(|p| p.record),
        Err(Unparsed::Incomplete)
    );
}

#[test]
fn jdk8_print_gc_id_prefix() {
    let (p, stamp) = pause("2022-07-26T21:00:40.750+0800: 3.117: #0: [GC (Allocation Failure) [PSYoungGen: 7077888K->222570K(8257536K)] 7077888K->222586K(9306112K), 0.5437135 secs] [Times: user=1.92 sys=0.20, real=0.55 secs] ");
    assert_eq!(p.name, "PSYoungGen");
    assert_eq!(p.duration_ns, 543_713_500);
    assert_eq!(stamp.uptime_ns, Some(3_117_000_000));
}

#[test]
fn jdk8_line_with_two_date_stamps() {
    let sp = safepoint("2015-02-25T12:47:08.028+0100: 2015-02-25T12:47:08.028+0100: 6616,888: Total time for which application threads were stopped: 0,1003470 seconds");
    assert_eq!(sp.total_ns, 100_347_000);
}

#[test]
fn jdk8_stamps_of_two_threads_written_at_once() {
    // Repeated: each thread printed its date stamp, then each its uptime.
    let (p, stamp) = pause("2021-03-04T10:20:30.400+0100: 2021-03-04T10:20:30.400+0100: 512.250: 512.250: [Full GC (Metadata GC Threshold)  600M->590M(4096M), 2.1500000 secs]");
    assert_eq!(
        (p.name.as_ref(), p.cause.as_deref(), p.duration_ns),
        ("Full GC", Some("Metadata GC Threshold"), 2_150 * MS)
    );
    assert_eq!(stamp.uptime_ns, Some(512_250 * MS));
    assert!(stamp.wall_ms.is_some());
    // Run together: both uptimes before both separators.
    let (p, stamp) = pause("2021-03-04T10:20:30.400+0100: 2021-03-04T10:20:30.400+0100: 4321.5004321.500: : [Full GC (Metadata GC Threshold)  900M->899M(2048M), 1.2000000 secs]");
    assert_eq!((p.name.as_ref(), p.duration_ns), ("Full GC", 1_200 * MS));
    assert_eq!(stamp.uptime_ns, Some(4_321_500 * MS));
    // Date stamps run together, decimal comma.
    let (p, stamp) = pause("2021-03-04T10:20:30,400+01002021-03-04T10:20:30,401+0100: 7,125: [Full GC (System.gc())  90M->80M(2048M), 0,5000000 secs]");
    assert_eq!(p.duration_ns, 500 * MS);
    let single = pause("2021-03-04T10:20:30.401+0100: 7.125: [Full GC (System.gc())  90M->80M(2048M), 0.5000000 secs]").1;
    assert_eq!(stamp.wall_ms, single.wall_ms);
}

#[test]
fn jdk8_stopped_time_with_another_threads_date_stamp_glued_in_front() {
    // JDK 8 G1 with -XX:+PrintGCApplicationStoppedTime: the other thread's date stamp has
    // no `: ` after it.
    let line = "2023-07-25T13:18:04.900+0000: 985162.343: 2023-07-25T13:18:04.900+0000Total time for which application threads were stopped: 0.1701451 seconds, Stopping threads took: 0.0001789 seconds";
    let sp = safepoint(line);
    assert_eq!((sp.total_ns, sp.ttsp_ns), (170_145_100, Some(178_900)));
    let stamp = parse_line(line.as_bytes()).unwrap().stamp;
    assert_eq!(stamp.uptime_ns, Some(985_162_343 * MS));
    // The same glued in front of an event.
    let (p, _) = pause("2023-07-25T13:18:04.900+0000: 985162.343: 2023-07-25T13:18:04.900+0000[GC pause (G1 Evacuation Pause) (young) 600M->590M(4096M), 0.1500000 secs]");
    assert_eq!(p.duration_ns, 150 * MS);
}

#[test]
fn stamped_text_not_understood_is_unparsed_never_skipped() {
    for line in [
        // A stopped-time line whose text is mangled beyond the glued stamp.
        "2023-07-25T13:18:04.900+0000: 985162.343: 2023-07-25T13:18Total time for which application threads were stopped: 0.1701451 seconds",
        "985162.343: something the JVM printed that is not a GC line",
    ] {
        assert_eq!(parse_line(line.as_bytes()).map(|p| p.record), Err(Unparsed::Unknown), "{line}");
    }
    // Unified: a stopped-time line after other text.
    assert_eq!(
        parse_line(b"[2.001s][info][safepoint] xyz Total time for which application threads were stopped: 0.1701451 seconds").map(|p| p.record),
        Err(Unparsed::Malformed)
    );
    // What the stitcher leaves of a line whose concurrent phase it cut out.
    other("2022-08-01T17:17:33.415+0000: 0.204: #4: ");
}

#[test]
fn jdk8_event_tail_alone_is_unparsed() {
    // The end of an event whose first line was not recognised: a pause lost, never "known".
    for line in [
        " 600M->590M(4096M), 2.1500000 secs]",
        " 512000K(7000000K), 0.2000000 secs]",
    ] {
        assert_eq!(
            parse_line(line.as_bytes()),
            Err(Unparsed::Incomplete),
            "{line}"
        );
    }
    // A G1 detail line is read (its heap), not taken for a tail.
    assert!(matches!(
        parse_line(b"   [Eden: 0.0B(300.0M)->0.0B(300.0M) Survivors: 0.0B->0.0B Heap: 600.5M(4096.0M)->590.1M(4096.0M)]")
            .map(|p| p.record),
        Ok(Record::DetailsHeap { .. })
    ));
    other(" par new generation   total 2000000K, used 400000K [0x0000000600000000, 0x0000000680000000, 0x0000000680000000)");
}

#[test]
fn jdk7_g1_kinds_without_a_cause_are_the_name() {
    for (line, name) in [
        (
            "10.5: [GC pause (young), 0.0200000 secs]",
            "GC pause (young)",
        ),
        (
            "11.5: [GC pause (mixed) 500M->300M(1024M), 0.0300000 secs]",
            "GC pause (mixed)",
        ),
        (
            "12.5: [GC pause (young) (initial-mark), 0.0400000 secs]",
            "GC pause (young) (initial-mark)",
        ),
        (
            "13.5: [GC pause (partial), 0.0500000 secs]",
            "GC pause (partial)",
        ),
    ] {
        let (p, _) = pause(line);
        assert_eq!(
            (p.name.as_ref(), p.cause.as_deref()),
            (name, None),
            "{line}"
        );
    }
    // JDK 8 gives the same names, with the cause apart.
    let (p, _) =
        pause("12.5: [GC pause (G1 Evacuation Pause) (young) (initial-mark), 0.0400000 secs]");
    assert_eq!(
        (p.name.as_ref(), p.cause.as_deref()),
        (
            "GC pause (young) (initial-mark)",
            Some("G1 Evacuation Pause")
        )
    );
}

#[test]
fn jdk8_cms_phases_named_by_their_cause_without_details() {
    let (p, _) = pause("40.100: [GC (CMS Initial Mark)  700000K(8000000K), 0.0150000 secs]");
    assert_eq!(p.name, "CMS Initial Mark");
    let (p, _) = pause("41.200: [GC (CMS Final Remark)  710000K(8000000K), 0.0900000 secs]");
    assert_eq!(
        (p.name.as_ref(), p.cause.as_deref()),
        ("CMS Final Remark", Some("CMS Final Remark"))
    );
}

#[test]
fn jdk8_shenandoah_pauses() {
    let (p, stamp) = pause(
        "2022-08-17T16:20:47.688+0800: 2.472: [Pause Init Mark (process weakrefs), 3.341 ms]",
    );
    assert_eq!(p.name, "Pause Init Mark (process weakrefs)");
    assert_eq!(p.duration_ns, 3_341_000);
    assert_eq!(stamp.uptime_ns, Some(2_472_000_000));
    let (p, _) = pause("5.0: [Pause Degenerated GC (Update Refs) 3941M->1733M(3966M), 184.489 ms]");
    assert_eq!(p.name, "Pause Degenerated GC (Update Refs)");
    assert_eq!(p.duration_ns, 184_489_000);
    other("2022-08-17T16:20:47.685+0800: 2.469: [Pause Init Mark (process weakrefs), start]");
    other(
        "2022-08-17T16:20:48.555+0800: 3.338: [Concurrent marking (process weakrefs), 866.393 ms]",
    );
}

#[test]
fn jdk8_printouts_outside_events_are_known() {
    other("Desired survivor size 3670016 bytes, new threshold 4 (max 15)");
    other("- age   1:    1159392 bytes,    1159392 total");
    other("No shared spaces configured.");
    other("2016-04-14 22:37:22 GC log file created logs/garbageCollection.log.1");
    other("2012-04-18T14:23:59.962+0200: 0.274: [ASCMS-concurrent-mark-start]");
}

#[test]
fn generational_zgc_minor_pauses_stalls_and_cycles() {
    let (p, _) = pause("[0.254s][info][gc,phases   ] GC(5) y: Pause Mark Start 0.009ms");
    assert_eq!(
        (p.name.as_ref(), p.duration_ns),
        ("y: Pause Mark Start", 9_000)
    );
    let (p, _) = pause("[0.4s][info][gc,phases] GC(0) Y: Pause Mark Start (Major) 0.031ms");
    assert_eq!(p.name, "Y: Pause Mark Start (Major)");
    match parse_line(
        b"[0.468s][info][gc          ] Allocation Stall (pool-1 (x) thread-2) 16.457ms",
    )
    .map(|p| p.record)
    {
        Ok(Record::Stall(s)) => {
            assert_eq!(s.kind, StallKind::Allocation);
            assert_eq!(s.thread, "pool-1 (x) thread-2");
            assert_eq!(s.duration_ns, 16_457_000);
        }
        other => panic!("{other:?}"),
    }
    match parse_line(b"[0.261s][info][gc          ] GC(5) Minor Collection (Allocation Stall) 58M(91%)->64M(100%) 0.008s")
        .map(|p| p.record)
    {
        Ok(Record::Cycle(c)) => {
            assert_eq!(c.cause.as_deref(), Some("Allocation Stall"));
            assert_eq!(c.duration_ns, Some(8_000_000));
            assert_eq!(c.heap.unwrap().after, 64 << 20);
        }
        other => panic!("{other:?}"),
    }
    // The line that opens the cycle carries no numbers.
    other("[0.254s][info][gc          ] GC(5) Minor Collection (Allocation Stall)");
    assert!(parse_line(b"[0.1s][info][gc] Allocation Stall (main) soon").is_err());
}

#[test]
fn a_promotion_failure_then_a_concurrent_mode_failure_reports_both_and_a_full_collection() {
    let (p, _) = pause("5000.100: [GC 5000.101: [ParNew (promotion failed): 400000K->400000K(400000K), 2.1000000 secs]5002.201: [CMS (concurrent mode failure): 900000K->850000K(1000000K), 30.5000000 secs] 1300000K->850000K(1400000K), [CMS Perm : 40000K->40000K(80000K)], 32.6000000 secs] [Times: user=35.00 sys=0.10, real=32.60 secs]");
    // Named after its young generation, as the collections that promoted are.
    assert_eq!(p.name, "ParNew");
    assert!(p.failures.has(Failure::Promotion));
    assert!(p.failures.has(Failure::ConcurrentMode));
    assert!(p.upgraded_to_full);
    // A concurrent mode failure alone (the young collection promoted) is a full one too.
    let (p, _) = pause("70.0: [GC (Allocation Failure) 70.0: [ParNew: 9000K->900K(9000K), 0.0100000 secs]70.01: [CMS (concurrent mode failure): 50000K->40000K(60000K), 0.9000000 secs] 59000K->40900K(69000K), [Metaspace: 3000K->3000K(1056768K)], 0.9100000 secs] [Times: user=0.90 sys=0.00, real=0.91 secs]");
    assert!(p.failures.has(Failure::ConcurrentMode) && !p.failures.has(Failure::Promotion));
    assert!(p.upgraded_to_full);
    // A concurrent phase printed after the failure is not an old-generation collection.
    let (p, _) = pause("9.0: [GC 9.0: [ParNew (promotion failed): 900K->900K(900K), 0.0100000 secs] 5000K->5000K(9000K), 0.0110000 secs]");
    assert!(p.failures.has(Failure::Promotion) && !p.upgraded_to_full);
    // The Full GC of a concurrent mode failure is full by its name.
    let (p, _) = pause("20.0: [Full GC (Allocation Failure) 20.0: [CMS (concurrent mode failure): 200000K->150000K(240896K), 1.2345670 secs] 210000K->150000K(260032K), [Metaspace: 3000K->3000K(1056768K)], 1.2350000 secs]");
    assert!(!p.upgraded_to_full);
}

#[test]
fn g1_evacuation_failure_is_a_failure_not_a_name() {
    let (p, _) = pause("[2.0s][info][gc] GC(7) Pause Young (Normal) (G1 Evacuation Pause) (Evacuation Failure: Allocation) 60M->62M(64M) 12.5ms");
    assert_eq!(p.name, "Pause Young (Normal)");
    assert_eq!(p.cause.as_deref(), Some("G1 Evacuation Pause"));
    assert!(p.failures.has(Failure::Evacuation));
    assert_eq!(p.heap.unwrap().before, 60 << 20);
    assert_eq!(
        parse_line(b"[11.846s][info ][gc            ] GC(326) To-space exhausted")
            .map(|p| p.record),
        Ok(Record::ToSpaceExhausted { gc_id: 326 })
    );
    let (p, _) = pause("2.0: [GC (Allocation Failure) 2.0: [ParNew (promotion failed): 100K->110K(200K), 0.1 secs]2.1: [CMS: 500K->400K(1000K), 0.5 secs] 600K->400K(1200K), [Metaspace: 1K->1K(2K)], 0.6 secs] [Times: user=0.50 sys=0.00, real=0.60 secs]");
    assert!(p.failures.has(Failure::Promotion));
    assert!(
        p.upgraded_to_full,
        "the CMS collection after the failed promotion is a full one"
    );
    assert_eq!(p.heap.unwrap().after, 400 << 10);
    let (p, _) = pause("429.344: [GC-- [PSYoungGen: 876977K->876977K(876992K)] 2335451K->2412975K(2412992K), 0.7651430 secs]");
    assert!(p.failures.has(Failure::Promotion));
    assert!(
        !p.upgraded_to_full,
        "Parallel's full collection is an event of its own"
    );
    assert_eq!(p.young.unwrap().before, 876977 << 10);
}

#[test]
fn safepoint_timeout_report_lines() {
    let record = |line: &str| parse_line(line.as_bytes()).map(|p| p.record);
    let timeout = |line: &str| match record(line) {
        Ok(Record::SafepointTimeout(t)) => t,
        other => panic!("{line}: {other:?}"),
    };
    // JDK 17+ (safepoint tag, warning level), JDK 8/11 (stdout, undecorated).
    for start in [
        "[0.579s][warning][safepoint   ] # SafepointSynchronize::begin: Timeout detected:",
        "# SafepointSynchronize::begin: Timeout detected:",
    ] {
        assert_eq!(timeout(start), TimeoutLine::Start);
    }
    assert_eq!(
        timeout("# SafepointSynchronize::begin: (End of list)"),
        TimeoutLine::End
    );
    assert_eq!(
        record("# SafepointSynchronize::begin: Timed out while spinning to reach a safepoint."),
        Ok(Record::Other)
    );
    // JDK 21+ prints the native thread id after the Java one; names may hold quotes.
    let t = timeout("[0.489s][warning][safepoint] # \"busy \"loop\" worker\" #18 [8327] daemon prio=5 os_prio=0 cpu=244.49ms elapsed=0.30s tid=0x00007fbff0115120 nid=8327 runnable  [0x0000000000000000]");
    assert_eq!(
        t,
        TimeoutLine::Thread {
            name: "busy \"loop\" worker".into(),
            os_state: Some("runnable".into())
        }
    );
    let t = timeout("# \"RpcServer.listener,port=24600\" #32 daemon prio=5 os_prio=0 tid=0x00007f4c14b22840 nid=0xa621 runnable [0x0000000000000000]");
    assert!(
        matches!(t, TimeoutLine::Thread { name, .. } if name == "RpcServer.listener,port=24600")
    );
    for state in [
        "   java.lang.Thread.State: RUNNABLE",
        "[0.579s][warning][safepoint]    java.lang.Thread.State: RUNNABLE",
    ] {
        assert_eq!(timeout(state), TimeoutLine::JavaState("RUNNABLE".into()));
    }
    // A quoted line without the thread fields is not a thread of the report.
    assert!(record("# \"not a thread\" said someone").is_err());
}

mod quick_decorations {
    use super::*;
    use proptest::prelude::*;

    /// Pieces a decoration is made of, the usual ones and every near miss of them.
    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("[".to_string()),
            Just("]".to_string()),
            Just(" ".to_string()),
            Just("s".to_string()),
            Just("ms".to_string()),
            Just("ns".to_string()),
            Just(".".to_string()),
            Just(",".to_string()),
            Just("-".to_string()),
            Just("info".to_string()),
            Just("gc,phases".to_string()),
            Just("2026-11-21T22:42:43.549+0000".to_string()),
            Just("GC(".to_string()),
            Just(")".to_string()),
            "[0-9]{1,25}",
            "[a-z#\t]{1,3}",
            "[ -~]{1,4}",
        ]
    }

    /// One decoration's text: the usual ones, numbers of every kind, or pieces.
    fn decoration() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("info".to_string()),
            Just("debug".to_string()),
            Just("gc,phases".to_string()),
            Just("gc,heap,exit".to_string()),
            "[0-9]{1,5}\\.[0-9]{3}s",
            "[0-9]{1,13}(ms|ns)?",
            Just("2026-11-21T22:42:43.549+0000".to_string()),
            proptest::collection::vec(piece(), 1..3).prop_map(|p| p.concat()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        /// The one-pass reading of the usual decorations gives what reading each one
        /// apart gives, for any line, valid or not.
        #[test]
        fn quick_and_apart_agree(pieces in proptest::collection::vec(piece(), 1..12)) {
            let line = format!("[{}", pieces.concat());
            let line = line.as_bytes();
            let mut parser = LineParser::default();
            prop_assert_eq!(
                parse_decorations_by::<true>(line, &mut parser),
                parse_decorations_by::<false>(line, &mut LineParser::default()),
                "{}", String::from_utf8_lossy(line)
            );
        }

        /// Lines that share what follows their first decoration, read one after the other
        /// (the quick way remembers those decorations from line to line), give what
        /// reading each decoration apart gives.
        #[test]
        fn lines_sharing_their_later_decorations_agree(
            tails in proptest::collection::vec(
                (proptest::collection::vec((decoration(), " {0,3}"), 0..4), "[ \\]]?"),
                1..4,
            ),
            lines in proptest::collection::vec((decoration(), 0..4usize, "[ -~]{0,8}"), 1..24),
        ) {
            let tails: Vec<String> = tails
                .iter()
                .map(|(decorations, end)| {
                    let joined: String =
                        decorations.iter().map(|(d, pad)| format!("[{d}{pad}]")).collect();
                    format!("{joined}{end}")
                })
                .collect();
            // One parser for all the lines, as a log's are read.
            let mut parser = LineParser::default();
            for (first, tail, message) in lines {
                let tail = tails.get(tail).map_or("", String::as_str);
                let line = format!("[{first}]{tail}{message}");
                let line = line.as_bytes();
                prop_assert_eq!(
                    parse_decorations_by::<true>(line, &mut parser),
                    parse_decorations_by::<false>(line, &mut LineParser::default()),
                    "{}", String::from_utf8_lossy(line)
                );
            }
        }

        /// A GC id read in one pass is the one read the slow way.
        #[test]
        fn gc_ids_read_in_one_pass_are_the_slow_ones(id in "[0-9]{1,22}|[0-9.]{1,4}", tail in "[) a-z]{0,3}") {
            let rest = format!("{id}{tail}");
            if let Some((gc_id, close)) = gc_id_digits(rest.as_bytes()) {
                prop_assert_eq!(memchr::memchr(b')', rest.as_bytes()), Some(close));
                prop_assert_eq!(decimal_scaled(&rest.as_bytes()[..close], 0), Some(gc_id));
            }
        }
    }

    #[test]
    fn usual_decorations_are_read_in_one_pass() {
        let mut found = Decorations::default();
        let line = b"[10.935s][debug][gc,phases    ] GC(41)";
        assert_eq!(quick_decoration(line, 1, &mut found), Some(8));
        assert_eq!(found.uptime_secs, Some(10_935_000_000));
        assert_eq!(quick_decoration(line, 10, &mut found), Some(15));
        assert_eq!(quick_decoration(line, 17, &mut found), Some(30));
        // Left to the slow way: milliseconds, bare numbers, dates, words with spaces.
        for other in [
            "[12ms]",
            "[1234]",
            "[2026-11-21T22:42:43.549+0000]",
            "[gc phases]",
        ] {
            assert_eq!(
                quick_decoration(other.as_bytes(), 1, &mut found),
                None,
                "{other}"
            );
        }
    }
}

proptest::proptest! {
    /// The fields of a `[Times: ...]` read in HotSpot's order read as searched for, in any
    /// order, with numbers of any form and other text around them.
    #[test]
    fn times_in_order_read_as_searched_for(
        // HotSpot's order most of the time, others now and then.
        prefix in proptest::sample::select(vec!["", "", "", "x", " ", "sys=1 "]),
        numbers in [(); 3].map(|()| proptest::sample::select(vec![
            "0.45", "0,02", "12", "", "1.", ",", "0.02,", "3.5x", "0.10",
        ])),
        sys in proptest::sample::select(vec![" sys=", " sys=", " sys=", "sys=", " sys= ", " user="]),
        real in proptest::sample::select(vec![" real=", " real=", " real=", ", real=", " real", " sys="]),
        tail in proptest::sample::select(vec![" secs]", "", "x", " real=9"]),
    ) {
        let [user_time, sys_time, real_time] = numbers;
        let text = format!("{prefix}user={user_time}{sys}{sys_time}{real}{real_time}{tail}");
        proptest::prop_assert_eq!(
            parse_jdk8_times(text.as_bytes()),
            jdk8_times_searched(text.as_bytes()),
            "{}", text
        );
    }
}

#[test]
fn cms_phases_are_found_wherever_they_are() {
    assert_eq!(
        cms_phases(b"GC (CMS Initial Mark) [1 CMS-initial-mark: 10K(20K)]"),
        (true, false)
    );
    assert_eq!(
        cms_phases(b"GC (CMS Final Remark) [1 CMS-remark: 10K(20K)] 2020-09-13T12:26:37"),
        (false, true)
    );
    assert_eq!(cms_phases(b"CMS-remark CMS-initial-mark"), (true, true));
    assert_eq!(
        cms_phases(b"-remark MS-initial-mark CMS- CMS-remar"),
        (false, false)
    );
}

/// The one-pass readings of the parts of JDK 8 lines, against the general readings.
mod one_pass {
    use super::*;
    use proptest::prelude::*;

    /// One of `usual` four times in five, else one of `misses`.
    fn mostly(
        usual: &[&'static str],
        misses: &[&'static str],
    ) -> impl Strategy<Value = &'static str> {
        prop_oneof![
            4 => proptest::sample::select(usual.to_vec()),
            1 => proptest::sample::select(misses.to_vec()),
        ]
    }

    /// Texts of one to `most - 1` of `pieces`.
    fn text_of(pieces: &[&'static str], most: usize) -> impl Strategy<Value = String> {
        proptest::collection::vec(proptest::sample::select(pieces.to_vec()), 1..most)
            .prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5000))]

        /// An uptime stamp reads as the general reading reads it, for stamps of every
        /// length, both separators, stamps run together and near misses of `: `.
        #[test]
        fn usual_uptime_stamps_read_as_any(text in text_of(&[
            "0", "7", "298", "027", "123456789", "1234567890", "18446744073", ".", ",", ": ",
            ":", " ", "[GC", "#12: ",
        ], 8)) {
            let usual = usual_uptime_stamp(text.as_bytes());
            prop_assert!(usual.is_none() || usual == any_uptime_stamp(text.as_bytes()), "{}", text);
        }

        /// The stamps HotSpot prints read straight through as the general loop reads them,
        /// and stamps repeated, run together, glued or near misses are left to it.
        #[test]
        fn usual_stamps_read_as_any(
            date in proptest::sample::select(vec![
                "", "2020-09-13T12:26:37.504+0000", "2016-10-12T09:53:38.901-0200",
                "2020-13-13T12:26:37.504+0000", "2020-09-13 12:26:37.504+0000",
                "2020-09-13T12:26:37,504+0000", "2020-09-13T12:26:37.504", "12345-09-13T12:26:37.504+00",
            ]),
            separators in [(); 2].map(|()| proptest::sample::select(vec![": ", ": ", ":", " ", "", ": : "])),
            uptime in proptest::sample::select(vec!["", "298.027", "0,45", "1234567890.1", "12", "1.2-"]),
            tail in text_of(&["[GC", "#12: ", "7", ": ", ":", " ", "x", "2020-09-13T12:26:37.504+0000"], 3),
        ) {
            let text = format!("{date}{}{uptime}{}{tail}", separators[0], separators[1]);
            let usual = usual_jdk8_stamps(text.as_bytes(), |date| iso_timestamp_ms(date));
            prop_assert!(usual.is_none() || usual == Some(jdk8_stamps(text.as_bytes())), "{}", text);
        }

        /// Date stamps read after one another, the last one remembered, read as each
        /// alone, repeated or not, valid or not.
        #[test]
        fn the_last_date_remembered_reads_as_any(
            dates in proptest::collection::vec(proptest::sample::select(vec![
                "2020-09-13T12:26:37.504+0000", "2020-09-13T12:26:37.505+0000", "2020-09-13T12:26:37.504-0100",
                "2020-13-13T12:26:37.504+0000", "2020-09-13 12:26:37.504+0000", "2021-09-13T12:26:37.504+0000",
                "2020-09-13T12:26:59.999+0000", "2020-09-13T12:26:60.000+0000", "2020-09-13T12:26:61.000+0000",
                "2020-09-13T12:26:3x.504+0000", "2020-09-13T12:26:37,504+0000", "2020-09-13T12:27:00.000+0000",
                "2020-09-13T12:26:37.504+0001", "2020-09-13T12:26:37.504X0000",
            ]), 1..12),
        ) {
            let mut last_date = LastDate::default();
            for date in dates {
                let date: &[u8; DATE_STAMP_LEN] = date.as_bytes().try_into().unwrap();
                prop_assert_eq!(last_date.read(date), iso_timestamp_ms(date), "{:?}", date);
            }
        }

        /// One pass over an event finds the bracket that closes it, and the CMS phases and
        /// heap inside, as the searches for each find them.
        #[test]
        fn one_pass_over_an_event_reads_as_each_search(text in text_of(&[
            "[", "]", "[GC ", "[ParNew: ", "100K->10K(200K)", "->", "-", ">", " ", ", ",
            "0.01 secs]", "CMS-initial-mark", "CMS-remark", "CMS", "MS", "C", "-remark", "[CMS: ", "[Tenured",
            "[1 CMS-remark: 10K(20K)]", "2020-09-13T12:26:37.504+0000: ", "[GC (CMS Final Remark) ",
        ], 14)) {
            let text = format!("[{text}");
            let event = memory::jdk8_event(text.as_bytes());
            prop_assert_eq!(event.as_ref().map(|e| e.close), matching_bracket(text.as_bytes()), "{}", text);
            if let Some(event) = event {
                let inner = &text.as_bytes()[1..event.close];
                prop_assert_eq!(event.cms_phases, cms_phases(inner), "{}", text);
                prop_assert_eq!(event.heap, memory::jdk8_heap(inner), "{}", text);
            }
        }

        /// The young collections read straight through read as the general reading reads
        /// them; near misses (other causes, stamps, generations, transitions, durations,
        /// failures and phases) are left to it.
        #[test]
        fn usual_young_events_read_as_any(
            cause in mostly(&["", " (Allocation Failure)", " (GCLocker Initiated GC)"], &[
                " (CMS Initial Mark)", " (CMS Final Remark)", " (young)", " ()", " (System.gc())",
                " (fx)", " (a-b)", " (Allocation Failure)--",
            ]),
            stamps in mostly(&[" 10.001: ", "2020-09-13T12:27:13.456+0000: 34.204: "], &[
                " ", "", "--", " --10.0: ", " 12K(", " 1 CMS-remark: ", "7", " 10.001: [x] ", " 10.001Z: ",
                " 1.0: #2: ", " 1.0->2.0: ", " 1.0: CMS-remark ",
            ]),
            generation in mostly(&["ParNew", "ASParNew", "DefNew"], &[
                "ParNew ", "Tenured", "CMS", "PSYoungGen", "ParNew2",
                "ASParNew2020-09-13T12:34:13.423+0000: 123.052: [ASCMS-concurrent-abortable-preclean: 0.036/0.592 secs] [Times: user=0.62 sys=0.06, real=0.59 secs] ",
                "ParNew123.052: [CMS-concurrent-mark: 0.036/0.592 secs]", "ParNew1.0: [CMS-concurrent-mark: 0.0/0.5 secs] ",
                "ParNew1.0: [CMS-concurrent-remark: 0.0/0.5 secs]", "ParNew1.0: [CMS-concurrent-fail: 0.0/0.5 secs]",
                "ParNew1.0: [CMS-concurrent-mark: 0.0/0.5 secs]x", "ParNew1.0: [CMS-concurrent-mark: 0.0/0.5 secs] [Times: x]",
                "ParNew1.0: [CMS-concurrent-mark: 0.0->0.5 secs]", "ParNew1.0: [Tenured-concurrent-mark: 0.0/0.5 secs]",
                "ParNew1.0: [CMS-concurrent-mark: 0.0/0.5 secs]  ", "ParNew1.0:[CMS-concurrent-mark: 0.0/0.5 secs]",
                "ParNew1.0: [CMS-remark: 0.0/0.5 secs]", "ParNew1.0: [CMS-initial-mark: 0.0/0.5 secs]",
            ]),
            transitions in [(); 2].map(|()| mostly(&["830688K->25255K(1310720K)", "1K->2M(3G)"], &[
                "1234567890123456K->1K(2K)", "12345678K->1K(2K)", "1.5K->1K(2K)", "1K->2K",
                "1K->2K(3K) icms_dc=5 ", "1K->2K(3K) icms_dc=100 ", "1K->2K(3K) icms_dc=101 ",
                "1K->2K(3K) icms_dc=1000 ", "1K->2K(3K) icms_dc= ", "1K->2K(3K) icms_dc=5",
                "K->1K(2K)", "1K(2K)->1K(2K)", "1K->2K(3K)x",
            ])),
            durations in [(); 2].map(|()| mostly(&["0.1302057", "0,0054252"], &[
                "12", "123456789.1234567", "1234567890.1", "0.12345678", "0.", ".5", "1.2.3", "0.1 x",
            ])),
            tail in mostly(&[
                " [Times: user=0.45 sys=0.02, real=0.12 secs]", " [Times: user=0.45 sys=0.02, real=0.12 secs] ",
            ], &[
                " [Times: user=0.45 sys=0.02, real=0.12 secs] (promotion failed)", " [Times: x", "",
                " [Times: user=0.45 sys=0.02, real=0.12 secs]]", "[Times: user=1 sys=1, real=1 secs]",
                " (concurrent mode failure) [Times: user=0.45 sys=0.02, real=0.12 secs]",
            ]),
            extra in proptest::sample::select(vec!["", "", "", "[", "]", "->", "f", "x", " "]),
            at in 0usize..200,
        ) {
            let line = format!(
                "[GC{cause}{stamps}[{generation}: {}, {} secs] {}, {} secs]{tail}",
                transitions[0], durations[0], transitions[1], durations[1],
            );
            let mut lines = vec![line.clone()];
            if !extra.is_empty() {
                let at = (0..=at.min(line.len())).rev().find(|&at| line.is_char_boundary(at)).unwrap_or(0);
                lines.push(format!("{}{extra}{}", &line[..at], &line[at..]));
            }
            for line in lines {
                let usual = usual_young_event(line.as_bytes());
                prop_assert!(
                    usual.is_none() || usual.as_ref().ok_or(()) == any_jdk8_event(line.as_bytes()).as_ref().map_err(|_| ()),
                    "{}\n{:?}\n{:?}", line, usual, any_jdk8_event(line.as_bytes())
                );
            }
        }

        /// CMS's initial marks read straight through read as the general reading reads
        /// them, and near misses are left to it.
        #[test]
        fn usual_initial_marks_read_as_any(
            cause in mostly(&["", " (CMS Initial Mark)"], &[" (CMS Final Remark)", " (Allocation Failure)", " ()"]),
            phase in mostly(&[" [1 CMS-initial-mark: ", " [1 ASCMS-initial-mark: "], &[
                "[1 CMS-initial-mark: ", " [1 CMS-remark: ", " [2 CMS-initial-mark: ", " [1 CMS-initial-mark:",
                " [CMS: ", " [1 Tenured-initial-mark: ",
            ]),
            sizes in [(); 2].map(|()| mostly(&["73765K(95616K)", "1M(2G)"], &[
                "73765K", "1.5K(2K)", "1K->2K(3K)", "K(1K)", "1K(2K) ", "1234567890123456K(1K)", "1K(2K)x",
            ])),
            duration in mostly(&["0.0001983"], &["12", "0.12345678", "1.2.3", "0.1 x"]),
            tail in mostly(&[" [Times: user=0.00 sys=0.00, real=0.00 secs]", " [Times: user=0.00 sys=0.00, real=0.00 secs] "], &[
                " [Times: user=0.00 sys=0.00, real=0.00 secs] (concurrent mode failure)", "", " [Times: x",
                "[Times: user=0.00 sys=0.00, real=0.00 secs]",
            ]),
        ) {
            let line = format!("[GC{cause}{phase}{}] {}, {duration} secs]{tail}", sizes[0], sizes[1]);
            let usual = usual_initial_mark(line.as_bytes());
            prop_assert!(
                usual.is_none() || usual.as_ref().ok_or(()) == any_jdk8_event(line.as_bytes()).as_ref().map_err(|_| ()),
                "{}\n{:?}\n{:?}", line, usual, any_jdk8_event(line.as_bytes())
            );
        }

        /// Young collections that CMS's old generation took over read straight through read
        /// as the general reading reads them; near misses of each part are left to it.
        #[test]
        fn usual_failed_young_events_read_as_any(
            cause in mostly(&["", " (Allocation Failure)"], &[" (CMS Final Remark)", " (young)", " (fx)"]),
            generation in mostly(&[
                "ParNew: 19586K->19586K(19648K)", "ASParNew: 1K->1K(2K)", "DefNew: 1K->2K(3K)",
            ], &["PSYoungGen: 1K->1K(2K)", "ParNew (promotion failed): 1K->1K(2K)", "ParNew: 1K->1K"]),
            stamps in mostly(&["2020-09-14T11:37:33.327+0000: 11.315: ", "124.024: "], &["", " ", "x: ", "-1: "]),
            old in mostly(&["CMS", "ASCMS"], &["Tenured", "CMS Perm", "CMS-concurrent", "ASCMS-", "CM"]),
            glued in mostly(&[
                "", "CMS: Large block 0x00000000f8424ec0",
                "2020-09-13T12:34:14.394+0000: 124.024: [ASCMS-concurrent-abortable-preclean: 0.034/0.477 secs] [Times: user=0.67 sys=0.02, real=0.48 secs] ",
            ], &[
                "CMS: Large block 0x", "CMS: Large block 0xfail", "CMS: Large block 0x00 promotion", "Large block 0x0",
                "1.0: [CMS-concurrent-remark: 1.0/1.0 secs]", "1.0: [CMS-concurrent-mark: 1.0/1.0 secs] (promotion failed)",
                "1.0: [CMS-concurrent-mark: 1.0/1.0 secs]]", "[Tenured: 1K->1K(2K), 0.1 secs]", " [CMS",
            ]),
            failure in mostly(&[" (concurrent mode failure): ", "  (concurrent mode failure): "], &[
                "(concurrent mode failure): ", " (concurrent mode interrupted): ", " (promotion failed): ",
                " (concurrent mode failure) (promotion failed): ", ": ",
            ]),
            transitions in [(); 2].map(|()| mostly(&["83511K->54817K(84032K)", "1M->2M(3M)"], &[
                "1K->2K", "1.5K->1K(2K)", "1K->2K(3K)x", "1K(2K)",
            ])),
            permanent in mostly(&["", ", [CMS Perm : 2472K->2471K(21248K)]", ", [Metaspace: 1K->1K(2K)]"], &[
                ", [CMS Perm : 1K->1K]", ", [Tenured: 1K->1K(2K)]", ", [CMS Perm : 1K->1K(2K)", " [CMS Perm : 1K->1K(2K)]",
            ]),
            end in mostly(&[", ", " icms_dc=100 , "], &[" icms_dc=1000 , ", " , ", ",  "]),
            durations in [(); 3].map(|()| mostly(&["0.0353489", "0,0000242"], &["12", "0.12345678", "1.2.3"])),
            tail in mostly(&[" [Times: user=0.03 sys=0.00, real=0.03 secs] "], &[
                "", " [Times: user=0.03 sys=0.00, real=0.03 secs] (promotion failed)", " [Times: x",
            ]),
            extra in proptest::sample::select(vec!["", "", "", "[", "]", "->", "f", "x", " ", "-"]),
            at in 0usize..400,
        ) {
            let line = format!(
                "[GC{cause} 11.315: [{generation}, {} secs]{stamps}[{old}{glued}{failure}{}, {} secs] {}{permanent}{end}{} secs]{tail}",
                durations[0], transitions[0], durations[1], transitions[1], durations[2],
            );
            let mut lines = vec![line.clone()];
            if !extra.is_empty() {
                let at = (0..=at.min(line.len())).rev().find(|&at| line.is_char_boundary(at)).unwrap_or(0);
                lines.push(format!("{}{extra}{}", &line[..at], &line[at..]));
            }
            for line in lines {
                let usual = usual_young_event(line.as_bytes());
                prop_assert!(
                    usual.is_none() || usual.as_ref().ok_or(()) == any_jdk8_event(line.as_bytes()).as_ref().map_err(|_| ()),
                    "{}\n{:?}\n{:?}", line, usual, any_jdk8_event(line.as_bytes())
                );
            }
        }

        /// CMS's remarks read straight through read as the general reading reads them,
        /// with or without the young collection before them, and near misses of each part
        /// are left to it.
        #[test]
        fn usual_remarks_read_as_any(
            cause in mostly(&["", " ", " (CMS Final Remark) "], &[" (CMS Initial Mark) ", " (Allocation Failure) ", "  "]),
            occupancy in mostly(&["[YG occupancy: 30716 K (59008 K)]"], &[
                "[YG occupancy: 30716 K (59008 K)", "[YG occupancy: K (59008 K)]", "[YG occupancy: 1K->2K (3 K)]",
                "[YG occupancy: 1 K (2 K)] [x]",
            ]),
            young in mostly(&[
                "", "2020-09-13T12:27:13.496+0000: 34.247: [GC2020-09-13T12:27:13.496+0000: 34.247: [ParNew: 24286K->24286K(43008K), 0.0000496 secs] 98052K->98052K(138624K), 0.0002310 secs] [Times: user=0.00 sys=0.00, real=0.00 secs] ",
                "2020-09-13T12:26:37.504+0000: 10.001: [GC (CMS Final Remark) 10.001: [ParNew: 830688K->25255K(1310720K), 0.1302057 secs] 830688K->36167K(4980736K), 0.1306264 secs] [Times: user=0.45 sys=0.02, real=0.12 secs]",
            ], &[
                "1.0: [GC 1.0: [ParNew: 1K->1K(2K), 0.1 secs] 2K->2K(3K), 0.1 secs]",
                "1.0: [GC 1.0: [ParNew (promotion failed): 1K->1K(2K), 0.1 secs] 2K->2K(3K), 0.1 secs]",
                "1.0: [GC (CMS Initial Mark) 1.0: [ParNew: 1K->1K(2K), 0.1 secs] 2K->2K(3K), 0.1 secs]",
                "1.0: [GC 1.0: [ParNew: 1K->1K(2K), 0.1 secs] 2K->2K(3K) icms_dc=5 , 0.1 secs]",
                "1.0: [GC 1.0: [ParNew: 1K->1K(2K), 0.1 secs] 2K->2K(3K), 0.1 secs] [Times: x]",
                "1.0: [GC  900K->700K(8000K), 0.1 secs]", "1.0: [Full GC 1.0: [ParNew: 1K->1K(2K), 0.1 secs] 2K->2K(3K), 0.1 secs]",
                "1K->2K(3K)",
            ]),
            phases in proptest::collection::vec(mostly(&[
                "10.131: [Rescan (parallel) , 0.0173509 secs]", "10.149: [weak refs processing, 0.0018299 secs]",
                "2020-09-13T12:26:37.504+0000: 10.151: [class unloading, 0.0084064 secs]",
                "10.159: [scrub symbol table, 0.0160760 secs]", "[scrub string table, 0.0013724 secs]",
                "35.600: [scrub symbol & string tables, 0.0002622 secs] ",
            ], &[
                "1.0: [Rescan (non-parallel) , 0.1 secs]", "1.0: [weak refs processing1.0: [SoftReference, 0 refs, 0.0000 secs], 0.1 secs]",
                "1.0: [class unloading, 0.1 secs", "1.0: [promotion failed, 0.1 secs]", "1.0: [CMS-remark, 0.1 secs]",
                "1.0: [Rescan (parallel) , 1K->2K(3K) secs]", "1.0: [x]", "[Tenured: 1K->1K(2K), 0.1 secs]",
            ]), 0..6),
            remark in mostly(&["[1 CMS-remark: 10911K(3670016K)] ", "[1 ASCMS-remark: 186553K(458752K)] "], &[
                "[1 CMS-remark: 10911K(3670016K)]", "[1 CMS-initial-mark: 1K(2K)] ", "[2 CMS-remark: 1K(2K)] ",
                "[1 CMS-remark: 1K->1K(2K)] ", "[1 CMS-remark: 1K(2K)] 1K->1K(2K) ", "[1 Tenured-remark: 1K(2K)] ",
            ]),
            heap in mostly(&["36167K(4980736K)", "217270K(517760K)"], &["1K->2K(3K)", "1.5K(2K)", "1K(2K) icms_dc=5 "]),
            duration in mostly(&["0.1787717", "0,0011261"], &["12", "0.12345678", "1.2.3"]),
            tail in mostly(&[" [Times: user=0.58 sys=0.02, real=0.17 secs]", " [Times: user=0.00 sys=0.00, real=0.00 secs] "], &[
                "", " [Times: user=0.00 sys=0.00, real=0.00 secs] (concurrent mode failure)", " [Times: x",
            ]),
            extra in proptest::sample::select(vec!["", "", "", "[", "]", "->", "f", "x", " ", "-", "CMS-remark"]),
            at in 0usize..600,
        ) {
            let line = format!("[GC{cause}{occupancy}{young}{}{remark}{heap}, {duration} secs]{tail}", phases.concat());
            let mut lines = vec![line.clone()];
            if !extra.is_empty() {
                let at = (0..=at.min(line.len())).rev().find(|&at| line.is_char_boundary(at)).unwrap_or(0);
                lines.push(format!("{}{extra}{}", &line[..at], &line[at..]));
            }
            for line in lines {
                let usual = usual_remark(line.as_bytes());
                prop_assert!(
                    usual.is_none() || usual.as_ref().ok_or(()) == any_jdk8_event(line.as_bytes()).as_ref().map_err(|_| ()),
                    "{}\n{:?}\n{:?}", line, usual, any_jdk8_event(line.as_bytes())
                );
            }
        }

        /// The line G1 opens a pause's details with, read straight through, reads as the
        /// general reading reads it; other groups, kinds and tails are left to it.
        #[test]
        fn usual_g1_pauses_read_as_any(
            groups in proptest::collection::vec(mostly(
                &[" (G1 Evacuation Pause)", " (young)", " (mixed)", " (initial-mark)", " (GCLocker Initiated GC)",
                  " (to-space exhausted)", " (to-space overflow)"],
                &[" (to-space exhausted )", " (to-space)", " (CMS Final Remark)", " ()", " (System.gc())",
                  " (partial)", " (fail)", " (a-b)", "(young)", " (young", " (Metadata GC Threshold) x"],
            ), 0..4),
            heap in mostly(&[""], &[" 24M->4000K(256M)", " 1K(2K)"]),
            blank in mostly(&["", " "], &["  ", "\t", " x", ",", " ,"]),
            references in proptest::collection::vec(mostly(&[
                " 2020-09-13T12:27:04.192+0000: 24.192: [SoftReference, 0 refs, 0.0000813 secs]",
                "2020-09-13T12:27:04.192+0000: 24.192: [WeakReference, 41 refs, 0,0000208 secs]",
                "24.192: [FinalReference, 319 refs, 0.0010788 secs]",
                "[PhantomReference, 0 refs, 6 refs, 0.0000123 secs]",
                " 1.0: [JNI Weak Reference, 0.0239112 secs]",
            ], &[
                " 1.0: [SoftReference, 0 refs, 1K->2K(3K), 0.1 secs]", " 1.0: [SoftReference, refs, 0.1 secs]",
                " 1.0: [SoftReference, 0 refs, 0.1 secs", " 1.0: [CMS: 0 refs, 0.1 secs]", " 1.0: [Tenured, 0.1 secs]",
                " 1.0: [SoftReference, 0 refs, 0.1 secs] ", " 1.0: [WeakReference, 0 refs 0.1 secs]",
                " 1.0: [JNI Weak Reference, 0.1 secs]x", " 1.0: ", " [failed, 0.1 secs]",
            ]), 0..3),
            duration in mostly(&["0.0154", "0,0000970"], &["12", "0.12345678", "1.2.3", ""]),
            tail in mostly(&["", " [Times: user=0.02 sys=0.00, real=0.01 secs]"], &[
                " ", "x", " [Times: user=0.02 sys=0.00, real=0.01 secs] (to-space exhausted)", " [Times: x",
                "]", " (promotion failed)", "[Times: user=0.02 sys=0.00, real=0.01 secs]",
            ]),
        ) {
            let line = format!("[GC pause{}{heap}{blank}{}, {duration} secs]{tail}", groups.concat(), references.concat());
            let usual = usual_g1_pause(line.as_bytes());
            prop_assert!(
                usual.is_none() || usual.as_ref().ok_or(()) == any_jdk8_event(line.as_bytes()).as_ref().map_err(|_| ()),
                "{}\n{:?}\n{:?}", line, usual, any_jdk8_event(line.as_bytes())
            );
        }

        /// Parallel's young collections read straight through read as the general reading
        /// reads them; near misses (other causes, generations, transitions, durations,
        /// failures, text after the event) are left to it.
        #[test]
        fn usual_parallel_young_events_read_as_any(
            cause in mostly(&["", " (Allocation Failure)", " (System.gc())", " (Ergonomics)"], &[
                " (CMS Initial Mark)", " (CMS Final Remark)", " (young)", " ()", " (())", " (System.gc)()",
                " (System.gc() )", " (fx)", " (a-b)", " (Allocation Failure)--", " (Allocation Failure) --",
                "--", " (GCLocker Initiated GC)", " (x(y))", "(Allocation Failure)", " (Allocation Failure) 1.0: ",
                " (promotion failed)", " (to-space overflow)",
            ]),
            references in proptest::collection::vec(mostly(&[
                "2013-10-12T23:05:32.860+0200: 0.198: [SoftReference, 0 refs, 0.0001036 secs]",
                "0.198: [WeakReference, 5 refs, 0,0000315 secs]",
                "[FinalReference, 10 refs, 0.0000389 secs]",
                "2013-10-12T23:05:32.860+0200: 0.198: [PhantomReference, 0 refs, 6 refs, 0.0000287 secs]",
                "0.198: [JNI Weak Reference, 0.0000340 secs]",
            ], &[
                "1.0: [SoftReference, 0 refs, 1K->2K(3K), 0.1 secs]", "1.0: [SoftReference, refs, 0.1 secs]",
                "1.0: [SoftReference, 0 refs, 0.1 secs", "1.0: [CMS: 0 refs, 0.1 secs]", "1.0: [Tenured, 0.1 secs]",
                " 1.0: [SoftReference, 0 refs, 0.1 secs]", "1.0: [WeakReference, 0 refs 0.1 secs]",
                "1.0: [JNI Weak Reference, 0.1 secs]x", "1.0: ", "[failed, 0.1 secs]",
            ]), 0..3),
            generation in mostly(&[" [PSYoungGen: "], &[
                "[PSYoungGen: ", " [PSYoungGen:", " [ParNew: ", " [DefNew: ", " [PSOldGen: ", " [Tenured: ",
                " [PSYoungGen: [CMS: ", " [CMS: ", " [PSYoungGenx: ",
            ]),
            transitions in [(); 2].map(|()| mostly(&["540800K->1217K(617472K)", "1K->2M(3G)"], &[
                "1234567890123456K->1K(2K)", "12345678K->1K(2K)", "1.5K->1K(2K)", "1K->2K",
                "1K->2K(3K) icms_dc=5 ", "K->1K(2K)", "1K(2K)->1K(2K)", "1K->2K(3K)x", "1K->2K(3K) ",
            ])),
            between in mostly(&["] "], &["]", "]  ", "], ", "] [ParOldGen: 1K->2K(3K)] ", "] [Tenured: 1K->2K(3K)] "]),
            duration in mostly(&["0.0082230", "0,0082230"], &[
                "12", "123456789.1234567", "1234567890.1", "0.12345678", "0.", ".5", "1.2.3", "0.1 x",
            ]),
            tail in mostly(&[
                " [Times: user=0.02 sys=0.00, real=0.01 secs]", " [Times: user=0,02 sys=0,00, real=0,01 secs] ", "",
            ], &[
                " [Times: user=0.02 sys=0.00, real=0.01 secs] (promotion failed)", " [Times: x", " ",
                " [Times: user=0.02 sys=0.00, real=0.01 secs]]", "[Times: user=1 sys=1, real=1 secs]",
                " (to-space overflow) [Times: user=0.02 sys=0.00, real=0.01 secs]",
                " [Times: user=0.02 sys=0.00, real=0.01 secs]Java HotSpot(TM) 64-Bit Server VM for windows-amd64",
            ]),
            extra in proptest::sample::select(vec!["", "", "", "[", "]", "->", "f", "x", " ", "(", ")", "-"]),
            at in 0usize..200,
        ) {
            let line = format!(
                "[GC{cause}{}{generation}{}{between}{}, {duration} secs]{tail}",
                references.concat(), transitions[0], transitions[1],
            );
            let mut lines = vec![line.clone()];
            if !extra.is_empty() {
                let at = (0..=at.min(line.len())).rev().find(|&at| line.is_char_boundary(at)).unwrap_or(0);
                lines.push(format!("{}{extra}{}", &line[..at], &line[at..]));
            }
            for line in lines {
                let usual = usual_parallel_young_event(line.as_bytes());
                prop_assert!(
                    usual.is_none() || usual.as_ref().ok_or(()) == any_jdk8_event(line.as_bytes()).as_ref().map_err(|_| ()),
                    "{}\n{:?}\n{:?}", line, usual, any_jdk8_event(line.as_bytes())
                );
            }
        }

        /// Parallel's full collections read straight through read as the general reading
        /// reads them; near misses (other causes, generations, transitions, durations,
        /// failures, text after the event) are left to it.
        #[test]
        fn usual_parallel_full_events_read_as_any(
            cause in mostly(&["", " (Ergonomics)", " (System.gc())", " (System)"], &[
                " (CMS Initial Mark)", " (young)", " ()", " (System.gc)()", " (fx)",
                " (Allocation Failure)--", "--", " (Metadata GC Threshold)", "(Ergonomics)",
                " (promotion failed)", " (concurrent mode interrupted)",
            ]),
            references in proptest::collection::vec(mostly(&[
                "2013-10-12T23:05:32.860+0200: 0.198: [SoftReference, 0 refs, 0.0001036 secs]",
                "[PhantomReference, 0 refs, 6 refs, 0.0000287 secs]",
                "0.198: [JNI Weak Reference, 0.0000340 secs]",
            ], &[
                "1.0: [SoftReference, 0 refs, 1K->2K(3K), 0.1 secs]", "--[WeakReference, 1 refs, 0.1 secs]",
                "1.0: [CMS: 0 refs, 0.1 secs]", "1.0: ", "[failed, 0.1 secs]",
            ]), 0..3),
            young in mostly(&[" [PSYoungGen: "], &[
                "[PSYoungGen: ", " [PSYoungGen:", " [ParNew: ", " [DefNew: ", " [CMS: ",
            ]),
            old in mostly(&["] [ParOldGen:", "] [PSOldGen:"], &[
                "] [ParOldGen: ", "] [Tenured:", "] [CMS:", "]  [PSOldGen:", "] [PSOldGen: [", "]",
            ]),
            other in mostly(&[" [PSPermGen:", ", [Metaspace:"], &[
                " [Metaspace:", ", [PSPermGen:", " [CMS Perm :", " [PS Perm:", ", [Metaspace: [", "",
            ]),
            transitions in [(); 4].map(|()| mostly(&["2657K->0K(19136K)", "1K->2M(3G)", " 13262K->15771K(43712K)"], &[
                "1234567890123456K->1K(2K)", "1.5K->1K(2K)", "1K->2K", "K->1K(2K)", "1K->2K(3K)x",
                " 1K->2K(3K) ", "", "1K->2K(3K)]",
            ])),
            duration in mostly(&["0.0326270", "0,0326270"], &["12", "0.", ".5", "1.2.3", "0.1 x"]),
            tail in mostly(&[
                " [Times: user=0.02 sys=0.00, real=0.01 secs]", " [Times: user=0,02 sys=0,00, real=0,01 secs] ", "",
            ], &[
                " [Times: x", " ", " (concurrent mode interrupted) [Times: user=0.02 sys=0.00, real=0.01 secs]",
            ]),
            extra in proptest::sample::select(vec!["", "", "", "[", "]", "->", "f", "x", " ", "(", ")", ","]),
            at in 0usize..200,
        ) {
            let line = format!(
                "[Full GC{cause}{}{young}{}{old}{}] {}{other}{}], {duration} secs]{tail}",
                references.concat(), transitions[0], transitions[1], transitions[2], transitions[3],
            );
            let mut lines = vec![line.clone()];
            if !extra.is_empty() {
                let at = (0..=at.min(line.len())).rev().find(|&at| line.is_char_boundary(at)).unwrap_or(0);
                lines.push(format!("{}{extra}{}", &line[..at], &line[at..]));
            }
            for line in lines {
                let usual = usual_parallel_full_event(line.as_bytes());
                prop_assert!(
                    usual.is_none() || usual.as_ref().ok_or(()) == any_jdk8_event(line.as_bytes()).as_ref().map_err(|_| ()),
                    "{}\n{:?}\n{:?}", line, usual, any_jdk8_event(line.as_bytes())
                );
            }
        }

        /// G1's cleanups, remarks and full collections read straight through read as the
        /// general reading reads them; near misses (other phases, causes, heaps, durations,
        /// failures, text after the event) are left to it.
        #[test]
        fn usual_g1_cycle_pauses_read_as_any(
            head in mostly(&["[GC cleanup ", "[Full GC ", "[Full GC (Allocation Failure)  ", "[Full GC (System.gc()) "], &[
                "[GC cleanup", "[GC cleanup  ", "[Full GC", "[Full GC (young) ", "[Full GC (CMS Final Remark) ",
                "[Full GC (Allocation Failure)", "[Full GC (Allocation Failure)   ", "[Full GC (a-b) ",
                "[Full GC (Ergonomics) [PSYoungGen: 1K->2K(3K)] ", "[GC remark ", "[Full GC 1.0: [CMS: ",
            ]),
            transition in mostly(&["1389M->1389M(2048M)", "12K->1K(1M)"], &[
                "1.5M->1M(2M)", "1M->2M", "M->1M(2M)", "1M->2M(3M)x", "1M->2M(3M) ", "1M(2M)->1M(2M)", "",
                "1M->2M(3M), [Metaspace: 1K->2K(3K)]",
            ]),
            phases in proptest::collection::vec(mostly(
                &["12.345: [GC ref-proc, 0.0002 secs]", "2020-09-13T12:27:13.456+0000: 34.204: [Finalize Marking, 0,0001 secs]",
                  "1.0: #3: [Unloading, 0.0014 secs]", "[GC ref-proc, 0.0002 secs]"],
                &["1.0: [GC ref-proc, 0.0002 secs] ", "1.0: [GC ref-procx, 0.1 secs]", "1.0: [Other, 0.1 secs]",
                  "1.0: [GC ref-proc, 1K->2K(3K), 0.1 secs]", "1.0: [GC ref-proc2020-09-13T12:27:13.456+0000: 1.0: [SoftReference, 0 refs, 0.0000 secs], 0.1 secs]",
                  "1.0: [CMS-remark, 0.1 secs]", "1.0: [Unloading, 0.1 secs", "1.0: ", " ", "1.0: [GC ref-proc, 0.1 secs]x"],
            ), 0..4),
            blank in mostly(&[" "], &["", "  ", ","]),
            duration in mostly(&["0.0009700", "2,3445510"], &["12", "0.12345678", "1.2.3", "", "0.1 x"]),
            tail in mostly(&["", " [Times: user=0.02 sys=0.00, real=0.01 secs]"], &[
                " ", "x", " [Times: user=0.02 sys=0.00, real=0.01 secs] (to-space exhausted)", " [Times: x",
                "]", " (concurrent mode interrupted)", "[Times: user=0.02 sys=0.00, real=0.01 secs]",
            ]),
            extra in proptest::sample::select(vec!["", "", "", "[", "]", "->", "f", "x", " ", "(", ")", "-", ","]),
            at in 0usize..200,
        ) {
            let line = if head == "[GC remark " {
                let phases = phases.join(" ");
                let phases = if phases.is_empty() { String::new() } else { format!("{blank}{phases}") };
                format!("[GC remark{phases}, {duration} secs]{tail}")
            } else {
                format!("{head}{transition}, {duration} secs]{tail}")
            };
            let mut lines = vec![line.clone()];
            if !extra.is_empty() {
                let at = (0..=at.min(line.len())).rev().find(|&at| line.is_char_boundary(at)).unwrap_or(0);
                lines.push(format!("{}{extra}{}", &line[..at], &line[at..]));
            }
            for line in lines {
                let usual = usual_g1_cycle_pause(line.as_bytes());
                prop_assert!(
                    usual.is_none() || usual.as_ref().ok_or(()) == any_jdk8_event(line.as_bytes()).as_ref().map_err(|_| ()),
                    "{}\n{:?}\n{:?}", line, usual, any_jdk8_event(line.as_bytes())
                );
            }
        }

        /// Times read straight through read as the general reading reads them.
        #[test]
        fn usual_times_fields_read_as_any(
            numbers in [(); 3].map(|()| mostly(&["0.45", "0,02", "152.96"], &["12.34", "123456789.12", "1234567890.12", "0.4", "0.456", "0.4x", "", ".45"])),
            separators in [(); 3].map(|()| mostly(&[""], &[",", " ", "0", "."])),
            keys in mostly(&["user= sys= real="], &["user= sys=, real=", "user=  sys= real=", "sys= user= real="]),
            tail in mostly(&[" secs]", ""], &["0 secs]", ". secs]", ", secs]", "x"]),
        ) {
            let keys: Vec<&str> = keys.split(' ').collect();
            let text = format!(
                "{}{}{} {}{}{}, {}{}{}{tail}",
                keys[0], numbers[0], separators[0], keys[1], numbers[1], separators[1],
                keys[2], numbers[2], separators[2],
            );
            let usual = usual_jdk8_times(text.as_bytes());
            prop_assert!(usual.is_none() || usual.map(|(cpu, _)| cpu) == any_jdk8_times(text.as_bytes()), "{}", text);
            if let Some((_, after)) = usual {
                prop_assert!(text.ends_with(&*String::from_utf8_lossy(after)), "{}", text);
            }
        }

        /// Times of one whole digit each, read from four loads at once, read as field by
        /// field, whatever the digits, separators and bytes around them.
        #[test]
        fn one_digit_times_read_as_field_by_field(
            numbers in [(); 3].map(|()| mostly(&["0.45", "0,02", "9.99", "0.00"], &[
                "12.34", "0.4", "0.456", "0x45", "0.4x", ".45", "0..4", "0/45", "0-45", "/.45", ":.45",
            ])),
            keys in mostly(&["user= sys= real="], &["user= sys=, real=", "user=  sys= real=", "sys= user= real=", "usex= sys= real="]),
            comma in mostly(&[","], &["", " ", ";", "."]),
            tail in mostly(&[" secs]", " secs] "], &["0 secs]", ". secs]", ", secs]", "x", "/ secs]", ": secs]", "", "  "]),
        ) {
            let keys: Vec<&str> = keys.split(' ').collect();
            let text = format!(
                "{}{} {}{}{comma} {}{}{tail}",
                keys[0], numbers[0], keys[1], numbers[1], keys[2], numbers[2],
            );
            let Some(chunk) = text.as_bytes().first_chunk::<32>() else {
                return Ok(());
            };
            let quick = one_digit_times(chunk);
            let by_field = usual_jdk8_times_by_field(text.as_bytes());
            prop_assert!(
                quick.is_none() || by_field == quick.map(|cpu| (cpu, &text.as_bytes()[29..])),
                "{} {:?} {:?}", text, quick, by_field
            );
        }

        /// An event's seconds read from one load read as the general reading reads them,
        /// whatever the digits, separators and what follows.
        #[test]
        fn quick_event_seconds_read_as_any(
            whole in mostly(&["0", "7"], &["16", "12345678", "", "x", "/", ":"]),
            separator in mostly(&[".", ","], &["/", ":", "", "-"]),
            fraction in mostly(&["1306264", "0", "45"], &["12345678", "", "x", "/", "1.5"]),
            tail in mostly(&[" secs]", " secs] [Times: user=0.45"], &[" secs", "secs]", " secs}", "", " sec]"]),
        ) {
            let text = format!("{whole}{separator}{fraction}{tail}");
            let quick = quick_event_seconds(text.as_bytes());
            prop_assert!(quick.is_none() || quick == any_event_seconds(text.as_bytes()), "{}", text);
            prop_assert_eq!(usual_event_seconds(text.as_bytes()), any_event_seconds(text.as_bytes()));
        }

        /// A number passed over in two loads ends where the loop over its runs of digits
        /// ends it.
        #[test]
        fn numbers_passed_over_at_once_end_as_run_by_run(text in text_of(&[
            "0", "45", "1302057", "12345678", "123456789", ".", ",", " secs]", "x", "/",
        ], 6)) {
            let quick = quick_after_unread_number(text.as_bytes());
            prop_assert!(
                quick.is_none() || quick == any_after_unread_number(text.as_bytes()),
                "{}", text
            );
            prop_assert_eq!(after_unread_number(text.as_bytes()), any_after_unread_number(text.as_bytes()));
        }

        /// A stopped-time line read straight through reads as the general reading reads it,
        /// with or without the time to stop, and near misses of each part.
        #[test]
        fn usual_stopped_times_read_as_any(
            total in mostly(&["0.0000670", "0,0255420"], &["12", "0.12345678", "1234567890.1", "", "0.1x"]),
            middle in mostly(&[" seconds, Stopping threads took: ", " seconds"], &[
                " seconds,  Stopping threads took: ", " seconds ", "seconds", " seconds, Stopping threads took: 1 ",
            ]),
            ttsp in mostly(&["0.0000567", ""], &["7", "0.12345678", "0.1.2", "0.1x"]),
            tail in mostly(&["", " seconds"], &[" seconds x", "x", " ", "9"]),
        ) {
            let line = format!("{total}{middle}{ttsp}{tail}");
            let usual = usual_stopped_time(line.as_bytes());
            prop_assert!(usual.is_none() || usual.ok_or(()) == any_stopped_time(line.as_bytes()).map_err(|_| ()), "{}", line);
        }

        /// A line of stopped or application time read straight through reads as the
        /// general reading reads it, and the parser reads every such line, and near misses
        /// of its stamps, text and numbers, as the general reading does.
        #[test]
        fn usual_application_time_lines_read_as_any(
            date in mostly(&["2020-09-13T12:26:50.000+0000: ", ""], &[
                "2020-09-13T12:26:50,000+0000: ", "2020-13-13T12:26:50.000+0000: ",
                "2020-09-13T12:26:50.000+0000:", "2020-09-13T12:26:50.000+0000 ",
            ]),
            uptime in mostly(&["10.000: ", "16,257: "], &["10.000:", "10.000 ", "10: ", "10.000: 11.000: ", "#3: ", ""]),
            text in mostly(&[
                "Total time for which application threads were stopped: ", "Application time: ",
            ], &[
                "Total time for which application threads were stopped:", "Application time:",
                "Total time for which application threads were ", "[GC pause (young), ", "x",
            ]),
            total in mostly(&["0.0000670", "0,0255420"], &["12", "0.12345678", "", "0.1x"]),
            ttsp in mostly(&[" seconds, Stopping threads took: 0.0000567 seconds", " seconds"], &[
                " seconds, Stopping threads took: 0.1x seconds", " seconds ", "seconds", " seconds]",
            ]),
        ) {
            let line = format!("{date}{uptime}{text}{total}{ttsp}");
            let general = parse_jdk8(line.as_bytes(), &mut LastDate::default());
            let usual = usual_application_time_line(line.as_bytes(), &mut LastDate::default());
            prop_assert!(usual.is_none() || usual.clone().ok_or(Unparsed::Unknown) == general, "{}", line);
            prop_assert_eq!(LineParser::default().parse(line.as_bytes()), general, "{}", line);
        }

        /// A `[Times: ...]` number reads as the general reading reads it, with the comma
        /// that ends a field, both separators and near misses.
        #[test]
        fn usual_times_read_as_any(text in text_of(&[
            "0", "45", "123456789", "1234567890", ".", ",", ", ", " real=", " secs]", "x",
        ], 7)) {
            let usual = usual_times_seconds(text.as_bytes());
            let (number, rest) = times_number(text.as_bytes());
            prop_assert!(usual.is_none() || usual == Some((secs_to_ns(number), rest)), "{}", text);
        }

        /// A line that starts with a blank, or with none of a digit, `#`, `.` or `,`, has no stamp:
        /// the stamps' readers give it back whole, as `parse_jdk8` assumes when it does not
        /// ask them.
        #[test]
        fn lines_starting_with_a_blank_have_no_stamp(
            first in proptest::sample::select(vec![
                " ", "\t", "H", "[", "{", "}", "x", "-", ".", ":", "T", "Z", "+", ",", "1", "#",
            ]),
            text in text_of(&[
                " ", "\t", "2016-10-12T09:53:38.901+0200", ": ", "298.027", "#12: ", "[", "517.850[GC",
                "016-10-12T09:53:38.901+0200: ", "98.027: ", "12: ", "1", "eap after GC",
            ], 6),
        ) {
            let line = format!("{first}{text}");
            for line in [line.as_bytes(), &line.as_bytes()[1..]] {
                if matches!(line.first(), Some(b'0'..=b'9' | b'#' | b'.' | b',')) {
                    continue;
                }
                let (stamp, rest) = jdk8_prefix_reading(line, |date| LastDate::default().read(date));
                prop_assert_eq!((stamp, rest), (Stamp::default(), line));
                prop_assert_eq!(glued_uptime(rest), None);
            }
        }

        /// G1's detail lines and heap printouts told without trimming read as the general
        /// reading reads them,
        /// with and without a stamp before them, among near misses of the others.
        #[test]
        fn usual_g1_details_read_as_any(
            indent in mostly(&["   ", "      ", " ", "         "], &[
                "", "\t", " \t", "       ", "        ", "               ", "                ",
                "                 ",
            ]),
            text in mostly(&[
                "[Parallel Time: 16638.4 ms, GC Workers: 18]", "[Other: 112.7 ms]",
                "[Eden: 20.0G(20.0G)->0.0B(17.5G) Survivors: 0.0B->2560.0M Heap: 21.5G(80.0G)->14.5G(80.0G)]",
                "[Times: user=152.96 sys=93.94, real=16.76 secs]",
            ], &[
                "[Times:", "[Eden:", "[Times:x", "[Eden: x", "[", "java.lang.Thread.State: RUNNABLE",
                "12.000: [GC pause (young), 0.1 secs]", ", 0.1 secs]", "[ 0.1 secs]", "x",
                "eden space 1048576K,  76% used [0x0000000640000000, 0x000000067140a1f0)",
                "par new generation   total 1310720K, used 830688K", "Metaspace       used 38929K",
                "java.lang.Thread.State: BLOCKED (on object monitor)", "j", "J", "ja", "Z secs]",
                "{", "}", "- age   1:", "#", "0x1", "x secs]", "[Times: ", "[Eden: ", "[Time",
                "[Eden:x", "[Times:\u{0}", "jj",
            ]),
            tail in mostly(&["", " "], &["   ", "]", " secs]"]),
            stamped in proptest::bool::weighted(0.2),
        ) {
            let line = format!("{indent}{text}{tail}");
            let stamp = if stamped {
                Stamp { uptime_ns: Some(1), ..Stamp::default() }
            } else {
                Stamp::default()
            };
            // The loads of the usual reading see what a byte at a time sees.
            prop_assert_eq!(
                is_usual_indented_line(line.as_bytes()),
                is_usual_indented_line_bytewise(line.as_bytes()),
                "{}", line
            );
            if let Some(record) = usual_indented_line(line.as_bytes()) {
                let any = any_indented_jdk8(line.as_bytes(), stamp, &mut LastDate::default());
                prop_assert_eq!(
                    Ok(Parsed { format: Format::Jdk8, stamp, record }),
                    any,
                    "{}", line
                );
            }
        }

        /// The failures of an event are those its text names, whether or not it holds the
        /// bytes the search is skipped without.
        #[test]
        fn failures_are_those_the_event_names(text in text_of(&[
            "[GC--", "[GC ", "concurrent mode failure", "concurrent mode ", "promotion failed",
            "promotion ", "to-space exhausted", "to-space overflow", "to-space ", "exhausted",
            "f", "x", "[ParNew: 10K->1K(20K), 0.01 secs]", " ",
        ], 6)) {
            let expected = Failures {
                concurrent_mode: text.contains("concurrent mode failure"),
                promotion: text.contains("promotion failed") || text.starts_with("[GC--"),
                evacuation: text.contains("to-space exhausted") || text.contains("to-space overflow"),
            };
            prop_assert_eq!(jdk8_failures(text.as_bytes()), expected, "{}", text);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// A line whose stamps were read (an event's first line, by the stitcher) parses as
        /// the whole line does, events of every kind and near misses after any stamps.
        #[test]
        fn a_line_parsed_after_its_stamps_read_parses_as_whole(
            stamps in text_of(&[
                "2020-09-13T12:26:37.504+0000: ", "2016-10-12T09:53:38.901-0200: ", "298.027: ",
                "0,45: ", "#12: ", "2020-13-13T12:26:37.504+0000: ", "1", ": ", " ",
            ], 5),
            event in proptest::sample::select(vec![
                "[GC (Allocation Failure) [ParNew: 830688K->25255K(1310720K), 0.1302057 secs] 830688K->36167K(4980736K), 0.1306264 secs] [Times: user=0.45 sys=0.02, real=0.12 secs]",
                "[GC (Allocation Failure) [PSYoungGen: 10K->1K(20K)] 30K->2K(90K), 0.0050000 secs] [Times: user=0.01 sys=0.00, real=0.01 secs]",
                "[Full GC (Allocation Failure) [CMS: 1K->1K(2K), 0.5 secs] 3K->1K(9K), [Metaspace: 1K->1K(2K)], 0.6 secs] [Times: user=0.5 sys=0.0, real=0.6 secs]",
                "[GC [1 CMS-initial-mark: 10911K(3670016K)] 36167K(4980736K), 0.0017 secs] [Times: user=0.00 sys=0.00, real=0.00 secs]",
                "[GC pause (G1 Evacuation Pause) (young), 0.0154 secs]",
                "[GC concurrent-mark-start]", "[CMS-concurrent-mark: 0.1/0.2 secs]", "[Times: user=0.01 sys=0.00, real=0.01 secs]",
                "[GC", "[GC (", "[Full GC", "[", "[Pause Init Mark, 1.0 ms]", "[ParNew: 1K->1K(2K), 0.1 secs]",
                "[Full GC (Ergonomics) [PSYoungGen: 10K->0K(76288K)] [ParOldGen: 1000K->900K(175104K)] 1010K->900K(251392K), [Metaspace: 3000K->3000K(1056768K)], 0.2500000 secs] [Times: user=0.40 sys=0.00, real=0.25 secs]",
                "[Full GC [PSYoungGen: 10K->0K(76288K)] [PSOldGen: 1000K->900K(175104K)] 1010K->900K(251392K) [PSPermGen: 3000K->3000K(21248K)], 0.2500000 secs]",
                "[GC [PSYoungGen: 10K->1K(20K)] 30K->2K(90K), 0.0050000 secs]",
                "[GC-- [PSYoungGen: 10K->10K(20K)] 30K->30K(90K), 0.0050000 secs]",
                "[GC (Allocation Failure) --[PSYoungGen: 10K->10K(20K)] 30K->30K(90K), 0.0050000 secs]",
                "[GC (Allocation Failure) [PSYoungGen: 10K->1K(20K)] 30K->2K(90K), 0.0050000 secs] 1.0: [GC (Allocation Failure) [PSYoungGen: 1K->1K(2K)] 3K->2K(9K), 0.1 secs]",
                "[GC (System.gc()) [PSYoungGen: 10K->1K(20K)] 30K->2K(90K), 0.0050000 secs]",
            ]),
        ) {
            let line = format!("{stamps}{event}");
            let line = line.as_bytes();
            if let Some(read) = usual_jdk8_prefix(line).filter(|read| line.get(read.rest_at) == Some(&b'[')) {
                let whole = LineParser::default().parse(line);
                prop_assert_eq!(
                    LineParser::default().parse_after_stamps(line, read),
                    whole.clone(),
                    "{}", String::from_utf8_lossy(line)
                );
                // And with Parallel's readers first, once a parser read one of its events.
                let mut after_parallel = LineParser::default();
                let parallel: &[u8] = b"1.0: [GC (Allocation Failure) [PSYoungGen: 10K->1K(20K)] 30K->2K(90K), 0.0050000 secs]";
                let first = usual_jdk8_prefix(parallel).expect("stamps");
                prop_assert!(after_parallel.parse_after_stamps(parallel, first).is_ok());
                prop_assert!(after_parallel.parallel_events);
                prop_assert_eq!(
                    after_parallel.parse_after_stamps(line, read),
                    whole,
                    "{}", String::from_utf8_lossy(line)
                );
            }
        }
    }
}

#[test]
fn the_usual_events_are_read_straight_through() {
    for line in [
        "[GC 10.001: [ASParNew: 830688K->25255K(1310720K), 0.1302057 secs] 830688K->36167K(4980736K), 0.1306264 secs] [Times: user=0.45 sys=0.02, real=0.12 secs] ",
        "[GC2020-09-13T12:27:13.456+0000: 34.204: [ParNew: 1K->2K(3K), 0.0100000 secs] 4K->5K(6K), 0.0200000 secs] [Times: user=0.45 sys=0.02, real=0.12 secs]",
        "[GC (Allocation Failure) 1.5: [DefNew: 1M->2M(3M), 0,0100000 secs] 4M->5M(6M), 0,0200000 secs] [Times: user=0.45 sys=0.02, real=0.12 secs]",
        "[GC 10.083: [ASParNew: 58973K->6498K(59008K), 0.0246583 secs] 102843K->79886K(517760K) icms_dc=18 , 0.0247513 secs] [Times: user=0.00 sys=0.06, real=0.02 secs]",
        "[GC [1 CMS-initial-mark: 73765K(95616K)] 78715K(138624K), 0.0001983 secs] [Times: user=0.00 sys=0.00, real=0.00 secs] ",
        "[GC (CMS Initial Mark) [1 CMS-initial-mark: 73765K(95616K)] 78715K(138624K), 0.0001983 secs] [Times: user=0.00 sys=0.00, real=0.00 secs]",
        // A concurrent phase glued to the generation's name.
        "[GC 123.026: [ASParNew2020-09-13T12:34:13.423+0000: 123.052: [ASCMS-concurrent-abortable-preclean: 0.036/0.592 secs] [Times: user=0.62 sys=0.06, real=0.59 secs] : 52719K->6513K(59008K), 0.0275897 secs] 392378K->379952K(517760K) icms_dc=75 , 0.0276852 secs] [Times: user=0.03 sys=0.03, real=0.03 secs] ",
        // Concurrent mode failures.
        "[GC2020-09-14T11:37:33.327+0000: 11.315: [ParNew: 19586K->19586K(19648K), 0.0000242 secs]2020-09-14T11:37:33.327+0000: 11.315: [CMS  (concurrent mode failure): 83511K->54817K(84032K), 0.0353489 secs] 103097K->54817K(103680K), [CMS Perm : 2472K->2471K(21248K)], 0.0356364 secs] [Times: user=0.03 sys=0.00, real=0.03 secs] ",
        "[GC2020-09-14T11:54:12.180+0000: 1009.878: [ParNew: 42954K->42954K(43008K), 0.0000377 secs]2020-09-14T11:54:12.180+0000: 1009.878: [CMSCMS: Large block 0x00000000f8424ec0 (concurrent mode failure): 58661K->14131K(95616K), 0.0261361 secs] 101616K->14131K(138624K), [CMS Perm : 2471K->2471K(21248K)], 0.0264843 secs] [Times: user=0.02 sys=0.00, real=0.03 secs] ",
        "[GC 124.024: [ASParNew: 58986K->58986K(59008K), 0.0000209 secs]124.024: [ASCMS2020-09-13T12:34:14.394+0000: 124.024: [ASCMS-concurrent-abortable-preclean: 0.034/0.477 secs] [Times: user=0.67 sys=0.02, real=0.48 secs]  (concurrent mode failure): 412627K->31292K(458752K), 0.0264423 secs] 471613K->31292K(517760K), [CMS Perm : 2613K->2613K(65536K)] icms_dc=100 , 0.0266062 secs] [Times: user=0.02 sys=0.00, real=0.03 secs] ",
        // G1's pauses of JDK 7 and 8, their details on the lines after them.
        "[GC pause (G1 Evacuation Pause) (young), 0.0154 secs]",
        "[GC pause (young) (initial-mark), 0.0154 secs]",
        // G1's ergonomics cut out of it (JDK 7), their blank left before the comma.
        "[GC pause (young) (initial-mark) , 0.1587570 secs]",
        "[GC pause (G1 Evacuation Pause) (young) , 0,0154000 secs]",
        "[GC pause (young) (to-space exhausted), 0.0154000 secs]",
        "[GC pause (G1 Evacuation Pause) (young) 2020-09-13T12:27:04.192+0000: 24.192: [SoftReference, 0 refs, 0.0000813 secs]2020-09-13T12:27:04.192+0000: 24.192: [WeakReference, 41 refs, 0.0000208 secs]2020-09-13T12:27:04.192+0000: 24.192: [FinalReference, 319 refs, 0.0010788 secs]2020-09-13T12:27:04.193+0000: 24.193: [PhantomReference, 0 refs, 6 refs, 0.0000123 secs]2020-09-13T12:27:04.193+0000: 24.193: [JNI Weak Reference, 0.0239112 secs], 0.1060907 secs]",
        // G1's concurrent cycle's pauses and its full collection, JDK 7 and 8.
        "[GC cleanup 1389M->1389M(2048M), 0.0009700 secs]",
        "[GC remark 2020-09-13T12:27:13.456+0000: 34.204: [GC ref-proc, 0.0000340 secs], 0.0021040 secs]",
        "[GC remark 1.0: [Finalize Marking, 0,0001000 secs] 1.0: [GC ref-proc, 0,0002000 secs] 1.0: [Unloading, 0,0014000 secs], 0,0039000 secs]",
        "[GC remark, 0.0039000 secs]",
        "[Full GC 1023M->1023M(1024M), 2.3445510 secs]",
        "[Full GC (Allocation Failure)  1023M->1023M(1024M), 2.3445510 secs] [Times: user=2.01 sys=0.00, real=2.35 secs]",
        // Parallel's young collections, with and without a cause.
        "[GC (Allocation Failure) [PSYoungGen: 540800K->1217K(617472K)] 592910K->53464K(2015744K), 0,0082230 secs] [Times: user=0,02 sys=0,00, real=0,01 secs]",
        "[GC (System.gc()) [PSYoungGen: 540800K->1217K(617472K)] 592910K->53464K(2015744K), 0.0082230 secs] [Times: user=0.02 sys=0.00, real=0.01 secs] ",
        "[GC [PSYoungGen: 8192K->1008K(9216K)] 8192K->1016K(19456K), 0.0046760 secs]",
        // With the phases of reference processing before the generation.
        "[GC (Allocation Failure)2013-10-12T23:05:32.860+0200: 0.198: [SoftReference, 0 refs, 0.0001036 secs]2013-10-12T23:05:32.860+0200: 0.198: [WeakReference, 5 refs, 0.0000315 secs]2013-10-12T23:05:32.860+0200: 0.198: [FinalReference, 10 refs, 0.0000389 secs]2013-10-12T23:05:32.860+0200: 0.198: [PhantomReference, 0 refs, 0.0000287 secs]2013-10-12T23:05:32.860+0200: 0.198: [JNI Weak Reference, 0.0000340 secs] [PSYoungGen: 16865K->2545K(19456K)] 16865K->16127K(62976K), 0.0134562 secs] [Times: user=0.02 sys=0.05, real=0.01 secs] ",
        // Remarks, with and without the young collection before them.
        "[GC[YG occupancy: 30716 K (59008 K)]35.599: [Rescan (parallel) , 0.0006399 secs]35.600: [weak refs processing, 0.0000164 secs]35.600: [class unloading, 0.0000893 secs]35.600: [scrub symbol & string tables, 0.0002622 secs] [1 ASCMS-remark: 186553K(458752K)] 217270K(517760K), 0.0011261 secs] [Times: user=0.00 sys=0.00, real=0.00 secs] ",
        "[GC[YG occupancy: 24286 K (43008 K)]2020-09-13T12:27:13.496+0000: 34.247: [GC2020-09-13T12:27:13.496+0000: 34.247: [ParNew: 24286K->24286K(43008K), 0.0000496 secs] 98052K->98052K(138624K), 0.0002310 secs] [Times: user=0.00 sys=0.00, real=0.00 secs] 2020-09-13T12:27:13.496+0000: 34.247: [Rescan (parallel) , 0.0001500 secs]2020-09-13T12:27:13.496+0000: 34.247: [weak refs processing, 0.0000060 secs]2020-09-13T12:27:13.496+0000: 34.247: [scrub string table, 0.0000370 secs][1 CMS-remark: 73765K(95616K)] 98052K(138624K), 0.0004230 secs] [Times: user=0.00 sys=0.00, real=0.00 secs] ",
        "[GC (CMS Final Remark) [YG occupancy: 830688 K (1310720 K)]2020-09-13T12:26:37.504+0000: 10.001: [GC (CMS Final Remark) 10.001: [ParNew: 830688K->25255K(1310720K), 0.1302057 secs] 830688K->36167K(4980736K), 0.1306264 secs] [Times: user=0.45 sys=0.02, real=0.12 secs]10.131: [Rescan (parallel) , 0.0173509 secs]10.149: [weak refs processing, 0.0018299 secs]10.151: [class unloading, 0.0084064 secs]10.159: [scrub symbol table, 0.0160760 secs]10.175: [scrub string table, 0.0013724 secs][1 CMS-remark: 10911K(3670016K)] 36167K(4980736K), 0.1787717 secs] [Times: user=0.58 sys=0.02, real=0.17 secs]",
    ] {
        let usual = usual_young_event(line.as_bytes())
            .or_else(|| usual_parallel_young_event(line.as_bytes()))
            .or_else(|| usual_g1_cycle_pause(line.as_bytes()))
            .or_else(|| usual_g1_pause(line.as_bytes()))
            .or_else(|| usual_initial_mark(line.as_bytes()))
            .or_else(|| usual_remark(line.as_bytes()));
        assert!(usual.is_some(), "{line}");
        assert_eq!(usual.ok_or(()), any_jdk8_event(line.as_bytes()).map_err(|_| ()), "{line}");
    }
}

#[test]
fn a_full_collections_generations_are_read_for_what_had_filled() {
    let kib = |before: u64, after: u64, capacity: u64| HeapChange {
        before: before * 1024,
        after: after * 1024,
        capacity: Some(capacity * 1024),
    };
    let read = |event: &str| full_gc_generations(event.as_bytes());
    // Parallel, JDK 5: old and permanent generations.
    let (collector, g) = read("[Full GC [PSYoungGen: 51696K->0K(2007616K)] [ParOldGen: 1306380K->1038374K(1310720K)] 1358076K->1038374K(3318336K) [PSPermGen: 39926K->39720K(262144K)], 27.0696262 secs]");
    assert_eq!(collector, Some(Collector::Parallel));
    assert_eq!(g.old, Some(kib(1306380, 1038374, 1310720)));
    assert_eq!(g.perm, Some(kib(39926, 39720, 262144)));
    assert!(!g.metaspace);
    // Serial: `[Tenured:` with its time, `[Perm :`.
    let (collector, g) = read("[Full GC 1.0: [Tenured: 8000K->7000K(8192K), 0.5 secs] 9000K->7000K(12288K), [Perm : 2047K->2047K(2048K)], 0.5 secs]");
    assert_eq!(collector, Some(Collector::Serial));
    assert_eq!(g.old, Some(kib(8000, 7000, 8192)));
    assert_eq!(g.perm, Some(kib(2047, 2047, 2048)));
    // CMS with a concurrent phase cut into its old generation's name.
    let (collector, g) = read("[Full GC 5.0: [CMS5.1: [CMS-concurrent-mark: 0.1/0.2 secs] [Times: user=0.1 sys=0.0, real=0.2 secs] (concurrent mode failure): 120000K->60000K(122880K), 1.2 secs] 130000K->60000K(131136K), [CMS Perm : 65535K->57506K(65536K)], 1.2 secs]");
    assert_eq!(collector, Some(Collector::Cms));
    assert_eq!(g.old, Some(kib(120000, 60000, 122880)));
    assert_eq!(g.perm, Some(kib(65535, 57506, 65536)));
    // JDK 8: metaspace, whose capacity is a reservation.
    let (_, g) = read("[Full GC (Ergonomics) [PSYoungGen: 10K->0K(100K)] [ParOldGen: 500K->400K(1000K)] 510K->400K(1100K), [Metaspace: 2957K->2957K(1056768K)], 0.0100000 secs]");
    assert_eq!(g.old, Some(kib(500, 400, 1000)));
    assert_eq!(g.perm, None);
    assert!(g.metaspace);
    // Without details, nothing but the heap.
    let (collector, g) = read("[Full GC 16841K->1749K(83008K), 0.0354507 secs]");
    assert_eq!((collector, g.is_empty()), (None, true));
}

#[test]
fn shenandoahs_statistics_are_told_from_other_text() {
    for line in [
        "GC STATISTICS:",
        "  \"(G)\" (gross) pauses include VM time: time to notify and block threads, do the pre-",
        "Pause Init Mark (G)            =    0.745 s (a =      516 us) (n =  1444) (lvls, us =      250,      354)",
        "    S: <total>                 =    0.603 s (a =      418 us) (n =  1444) (lvls, us =      162)",
        "Pause Init  Update Refs (G)         141 us",
        "  Scan Roots                        953 us, parallelism: 1.40x",
        "    E: String Table Roots           457 us, workers (us): 242, 215,",
        " 1444 successful concurrent GCs",
        "      0 upgraded to Full GC",
        "        4 happened at Update Refs",
        "      0 of  4436 ms (  0.0%): <total>",
        "Free: 116M, Max: 256K regular, 86528K humongous, Frag: 28% external, 1% internal; Reserve: 6656K, Max: 256K",
        "Trigger: Free (398M) is below minimum threshold (399M) ",
        ", [Metaspace: 6477K->6481K(1056768K)]",
    ] {
        assert!(shenandoah_statistics(line.as_bytes()), "{line}");
    }
    for line in [
        "Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space",
        "Pause Init Mark (G)  1096 usx",
        "Pause Init Mark (G)1096 us",
        "Pause = 1.0 x",
        "1444 concurrent GCs",
        "Scan Roots: 953 us!",
        "",
    ] {
        assert!(!shenandoah_statistics(line.as_bytes()), "{line}");
    }
}

#[test]
fn cms_is_told_by_the_occupancy_alone_its_phases_print_with_verbose_gc() {
    // A JDK 7 `-verbose:gc` CMS log (gctoolkit's test data, `862_gc.log`): young
    // collections and full ones give transitions, the initial mark and remark the
    // occupancy alone.
    let collector = |line: &str| pause(line).0.collector;
    assert_eq!(
        collector("13.088: [GC 47513K(83008K), 0.0026705 secs]"),
        Some(Collector::Cms)
    );
    let (p, _) = pause("13.088: [GC 47513K(83008K), 0.0026705 secs]");
    assert_eq!(p.name, "CMS Initial Mark or Remark");
    assert_eq!(crate::PauseType::of(&p.name), crate::PauseType::Other);
    assert_eq!(
        collector("1.855: [GC 29798M(58752M), 0.0031310 secs]"),
        Some(Collector::Cms)
    );
    for line in [
        "13.028: [GC 47849K->47309K(83008K), 0.0555738 secs]",
        "13.761: [Full GC 114121K->111154K(126912K), 0.3570296 secs]",
        "13.088: [GC 47513K(83008K) 0.0026705 secs]",
        "13.088: [GC (K), 0.0026705 secs]",
        "13.088: [GC 47513(83008K), 0.0026705 secs]",
    ] {
        assert_eq!(collector(line), None, "{line}");
    }
}

#[test]
fn a_young_collection_is_named_after_its_generation_whatever_is_printed_into_it() {
    let name = |line: &str| pause(line).0.name;
    for (line, want) in [
        ("1.0: [GC 1.0: [DefNew: 17024K->643K(19136K), 0.0084810 secs] 17024K->643K(260032K), 0.0085510 secs]", "DefNew"),
        ("1.0: [GC [PSYoungGen: 17024K->643K(19136K)] 17024K->643K(260032K), 0.0085510 secs]", "PSYoungGen"),
        ("1.0: [GC 1.0: [ParNew : 17024K->643K(19136K), 0.0084810 secs] 17024K->643K(260032K), 0.0085510 secs]", "ParNew"),
        // -XX:+PrintReferenceGC glues its stamp to the generation's name.
        ("13.396: [GC (Allocation Failure) 13.396: [ParNew2016-03-22T10:02:41.970-0100: 13.404: [SoftReference, 0 refs, 0.0000290 secs]: 272640K->19827K(306688K), 0.0169290 secs] 272640K->19827K(1014528K), 0.0171250 secs]", "ParNew"),
        // -XX:+PrintTLAB writes a thread's `[id: ...]` before it (gctoolkit's test data).
        ("50.628: [GC TLAB: gc thread: 0x00007f2f0c00d800 [id: 27957] desired_size: 1024KB slow allocs: 0 50.628: [ParNew62.880: [SoftReference, 0 refs, 0.0005810 secs]: 3672622K->419392K(3774912K), 16.9859670 secs] 3672622K->595737K(5872064K), 16.9862000 secs]", "ParNew"),
        ("1.0: [GC 1.0: [ParNew (promotion failed): 17024K->17024K(19136K), 0.0084810 secs] 17024K->643K(260032K), 0.0085510 secs]", "ParNew"),
        ("1.0: [GC 17024K->643K(260032K), 0.0085510 secs]", "GC"),
        ("1.0: [GC [id: 7] 17024K->643K(260032K), 0.0085510 secs]", "GC"),
    ] {
        assert_eq!(name(line), want, "{line}");
    }
}

#[test]
fn cms_preclean_lines_are_concurrent_phases() {
    // gctoolkit's test data: a preclean cut short, and one with -XX:+PrintReferenceGC.
    other("CMS: abort preclean due to time 2010-04-20T18:50:11.324+0100: 401.421: [CMS-concurrent-abortable-preclean: 3.945/5.020 secs] [Times: user=5.27 sys=0.09, real=5.02 secs] ");
    other("2016-03-22T10:02:54.854-0100: 26.288: [Preclean SoftReferences, 0.0000049 secs]2016-03-22T10:02:54.854-0100: 26.288: [Preclean WeakReferences, 0.0000191 secs]2016-03-22T10:02:54.855-0100: 26.289: [CMS-concurrent-preclean: 0.001/0.001 secs] [Times: user=0.00 sys=0.00, real=0.00 secs] ");
}

#[test]
fn parallels_failed_promotion_is_read_after_a_cause_too() {
    // JDK 8 with causes (gctoolkit's test data, `tipsgc.log`), and JDK 6 without.
    let (p, _) = pause("1.871: [GC (Allocation Failure) --[PSYoungGen: 107094K->107094K(114688K)] 107257K->107606K(115200K), 0.0152368 secs] [Times: user=0.02 sys=0.00, real=0.02 secs]");
    assert!(p.failures.has(Failure::Promotion));
    let (p, _) = pause("11.705: [GC-- [PSYoungGen: 107094K->107094K(114688K)] 107257K->107606K(115200K), 0.0152368 secs]");
    assert!(p.failures.has(Failure::Promotion));
    let (p, _) = pause("1.871: [GC (Allocation Failure) [PSYoungGen: 107094K->7094K(114688K)] 107257K->7606K(115200K), 0.0152368 secs]");
    assert!(!p.failures.has(Failure::Promotion));
}

#[test]
fn a_full_collection_cms_gave_way_to_is_caused_by_a_request() {
    let (p, _) = pause("77.480: [Full GC 77.480: [CMS77.616: [CMS-concurrent-mark: 0.223/0.224 secs] [Times: user=0.33 sys=0.02, real=0.23 secs] (concurrent mode interrupted): 83134K->85198K(107776K), 0.6118455 secs] 92654K->85198K(126912K), [CMS Perm : 15604K->15604K(28412K)], 0.6119507 secs]");
    assert_eq!(p.cause.as_deref(), Some("concurrent mode interrupted"));
    let old = p.generations.as_ref().and_then(|g| g.old).unwrap();
    assert_eq!(
        (old.before, old.capacity),
        (83134 * 1024, Some(107776 * 1024))
    );
    // A cause the log gives is kept.
    let (p, _) = pause("1.0: [Full GC (System) 1.0: [CMS (concurrent mode interrupted): 83134K->85198K(107776K), 0.6118455 secs] 92654K->85198K(126912K), 0.6119507 secs]");
    assert_eq!(p.cause.as_deref(), Some("System"));
    other(
        "CMS: Large Block: 0x0000000795f41420; Proximity: 0x0000000795f40e38 -> 0x0000000795f40e38",
    );
    other("CMS: Large block 0x0000000795f41420");
}

#[test]
fn the_incremental_duty_cycle_is_read_where_the_duration_begins_and_only_there() {
    let cycle = |line: &str| pause(line).0.icms_duty_cycle;
    let young = |tail: &str| {
        format!("0.922: [GC 0.922: [DefNew: 3967K->0K(4032K), 0.0554915 secs] 7623K->7623K(16320K){tail}0.0557709 secs]")
    };
    assert_eq!(cycle(&young(" icms_dc=65 , ")), Some(65));
    assert_eq!(cycle(&young(" icms_dc=0 , ")), Some(0));
    assert_eq!(cycle(&young(" icms_dc=100 , ")), Some(100));
    assert_eq!(cycle(&young(", ")), None);
    // Not a percentage, or no number: not the duty cycle.
    assert_eq!(cycle(&young(" icms_dc=101 , ")), None);
    assert_eq!(cycle(&young(" icms_dc=1000 , ")), None);
    assert_eq!(cycle(&young(" icms_dc= , ")), None);
    // A full collection after a concurrent mode failure prints it after the generations.
    let full = "27037.231: [GC 27036.837: [ParNew (promotion failed): 471872K->471872K(471872K), 0.3931530 secs]27037.231: [CMS (concurrent mode failure): 3667441K->779130K(3670016K), 6.2096720 secs] 4045730K->779130K(4141888K), [CMS Perm : 93567K->92821K(131072K)] icms_dc=100 , 6.6030840 secs] [Times: user=2.31 sys=0.23, real=6.61 secs]";
    assert_eq!(cycle(full), Some(100));
}

#[test]
fn the_names_and_causes_hotspot_prints_are_read_without_allocating() {
    let lines = [
        "1.234: [GC (Allocation Failure) [PSYoungGen: 540800K->1217K(617472K)] 540800K->1225K(2029056K), 0.0034570 secs] [Times: user=0.01 sys=0.00, real=0.00 secs] ",
        "2.345: [Full GC (Ergonomics) [PSYoungGen: 1217K->0K(617472K)] [ParOldGen: 8K->1147K(1411584K)] 1225K->1147K(2029056K), [Metaspace: 3339K->3339K(1056768K)], 0.0073010 secs] [Times: user=0.02 sys=0.00, real=0.01 secs] ",
        "3.456: [GC (Allocation Failure) 3.456: [ParNew: 830688K->25255K(1310720K), 0.1302057 secs] 830688K->25255K(4063232K), 0.1302996 secs] [Times: user=0.45 sys=0.01, real=0.13 secs] ",
        "4.567: [GC pause (G1 Evacuation Pause) (young), 0.0123450 secs]",
        "5.678: [GC pause (young) (initial-mark), 0.0123450 secs]",
        "[6.789s][info][gc] GC(7) Pause Young (Normal) (G1 Evacuation Pause) 24M->4M(256M) 3.123ms",
        "[7.890s][info][gc] GC(8) Pause Full (System.gc()) 24M->4M(256M) 13.123ms",
    ];
    for line in lines {
        let (p, _) = pause(line);
        assert!(matches!(p.name, Cow::Borrowed(_)), "{line}: {:?}", p.name);
        assert!(
            matches!(p.cause, None | Some(Cow::Borrowed(_))),
            "{line}: {:?}",
            p.cause
        );
    }
    // A cause no JDK prints is read all the same.
    let (p, _) = pause(
        "[8.901s][info][gc] GC(9) Pause Young (Normal) (A Cause Of JDK 99) 24M->4M(256M) 3.123ms",
    );
    assert_eq!(p.cause.as_deref(), Some("A Cause Of JDK 99"));
    assert_eq!(p.name, "Pause Young (Normal)");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

    /// A safepoint's fields read straight through read as found by name, whatever the
    /// fields, their order, values and what surrounds them.
    #[test]
    fn usual_safepoint_fields_read_as_any(
        fields in proptest::collection::vec(
            (
                proptest::sample::select(vec![
                    "Time since last", "Reaching safepoint", "Cleanup", "At safepoint",
                    "Leaving safepoint", "Total", "Threads", "total",
                ]),
                proptest::sample::select(vec![
                    "0", "4263", "1234567", "40832893", "123456789", "18446744073709551615",
                    "99999999999999999999", "", "12x", " 7", "1.5", "7x1",
                ]),
                proptest::sample::select(vec![" ns", " ns", " ns", "ns", " ms", ""]),
            ),
            0..8,
        ),
        usual in proptest::bool::weighted(0.7),
        separator in proptest::sample::select(vec![", ", ", ", ",", ",  "]),
        end in proptest::sample::select(vec!["", "", " ", ","]),
    ) {
        let fields: Vec<(&str, &str, &str)> = if usual {
            let value = |i: usize| fields.get(i).map_or("5", |f| f.1);
            vec![
                ("Time since last", value(0), " ns"),
                ("Reaching safepoint", value(1), " ns"),
                ("Cleanup", value(2), " ns"),
                ("At safepoint", value(3), " ns"),
                ("Total", value(4), " ns"),
            ]
        } else {
            fields
        };
        let mut text = String::new();
        for (key, value, unit) in &fields {
            text.push_str(separator);
            text.push_str(&format!("{key}: {value}{unit}"));
        }
        text.push_str(end);
        if let Some((ttsp, total)) = usual_safepoint_fields(text.as_bytes()) {
            proptest::prop_assert_eq!(
                any_safepoint_fields(text.as_bytes()),
                Ok((Some(ttsp), total)),
                "{}", text
            );
        }
    }
}
