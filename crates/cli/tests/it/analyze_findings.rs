//! Findings that only a rare log shows, on logs shaped as HotSpot writes them.

use crate::analyze_support;

use analyze_support::{analyze_json, finding, fresh_dir, gcviewer_sample};

/// JDK 6 and 7 time a collection from after its event's first words are written, and its
/// CPU times from before. A write of `100.000: [GC ` that a busy disk held 4.5 s leaves
/// the young generation's stamp 4.5 s after the event's, `real` 4.5 s over the duration,
/// and the GC threads' CPU time over the collection's own: the stop outside the
/// collection is `real_gt_gc`, not GC threads off-CPU. The other events' real time is
/// their duration rounded to 10 ms, which is no stop outside.
#[test]
fn a_stop_before_the_collection_began_is_real_gt_gc_not_real_gt_cpu() {
    let dir = fresh_dir("analyze-findings", "real-gt-gc");
    let log = dir.join("gc.log");
    let event = |at: f64, young_at: f64, young_s: f64, total_s: f64, real: &str| {
        format!(
            "{at:.3}: [GC {young_at:.3}: [ParNew: 503700K->15616K(516864K), {young_s:.7} secs] \
             503700K->23381K(7848704K), {total_s:.7} secs] [Times: user=2.63 sys=0.26, real={real} secs] \n"
        )
    };
    let text = [
        event(90.0, 90.0, 0.2016233, 0.2024517, "0.20"),
        event(100.0, 104.5, 0.2115259, 0.2125976, "4.72"),
        event(110.0, 110.0, 0.2455401, 0.2461144, "0.25"),
    ]
    .concat();
    std::fs::write(&log, text).unwrap();
    let json = analyze_json(&[log]);
    assert_eq!(json["pauses"]["count"], 3, "{json}");
    // The pause is what the collector measured.
    assert_eq!(json["pauses"]["max_ms"], 246.1144, "{json}");
    let findings = json["findings"].as_array().unwrap();
    let rule = |id: &str| findings.iter().find(|f| f["rule"] == id);
    let outside = rule("real_gt_gc").expect("real_gt_gc");
    assert_eq!(outside["count"], 1, "{outside}");
    assert_eq!(outside["severity"], "critical", "{outside}");
    assert_eq!(outside["evidence"][0]["uptime_s"], 100.0, "{outside}");
    assert_eq!(
        outside["evidence"][0]["detail"],
        "real 4720 ms, the collection 212.6 ms: 4.507 s stopped outside it"
    );
    assert!(rule("real_gt_cpu").is_none(), "{json}");
}

/// Serial and CMS collect the old generation inside a young collection's event when the
/// young collection sees that the old one cannot take what it would promote, without
/// printing `(promotion failed)`: `[GC 63.345: [DefNew: ...]63.345: [CMS: ...] ...]`. Each
/// is a full collection, counted by `full_gc` with the `Full GC` events (GCViewer's JDK 5
/// CMS sample, events counted here by their text).
#[test]
fn a_young_collection_that_collected_the_old_generation_is_a_full_one() {
    let dir = fresh_dir("analyze-findings", "young-upgraded");
    let name = "SampleSun1_5_0CMS_PrintGCDetails.txt";
    let text = String::from_utf8(gcviewer_sample(name)).unwrap();
    let full_events = text.lines().filter(|l| l.contains("[Full GC")).count() as u64;
    let upgraded = text
        .lines()
        .filter(|l| l.contains("[GC ") && !l.contains("[Full GC"))
        .filter(|l| l.contains("[Tenured:") || l.contains("[CMS:"))
        .count() as u64;
    assert!(full_events > 0 && upgraded > 0, "{full_events} {upgraded}");
    let log = dir.join(name);
    std::fs::write(&log, &text).unwrap();
    let json = analyze_json(&[log]);
    let full = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "full_gc")
        .expect("full_gc");
    assert_eq!(full["count"], full_events + upgraded, "{full}");
    let causes = json["pauses"]["full_gc_causes"].as_array().unwrap();
    let inside = causes
        .iter()
        .find(|c| c["name"] == "a full collection ran inside it")
        .expect("upgraded young collections");
    assert_eq!(inside["count"], upgraded, "{causes:?}");
}

/// A run of a few seconds that spent a fifth of them in 50 collections is judged; the
/// same run's first 10 collections are too few to say what share of the time pauses take.
#[test]
fn a_short_log_with_many_pauses_is_judged_for_its_time_in_pauses() {
    let dir = fresh_dir("analyze-findings", "short-share");
    let log = analyze_support::fixtures().join("serial-jdk21.log.gz");
    let json = analyze_json(std::slice::from_ref(&log));
    let covered = json["span"]["covered_s"].as_f64().unwrap();
    let share = json["pauses"]["share_pct"].as_f64().unwrap();
    assert!(covered < 60.0 && share >= 20.0, "{covered} s, {share}%");
    assert!(json["pauses"]["count"].as_u64() >= Some(20));
    let finding = |json: &serde_json::Value| {
        json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["rule"] == "gc_time_share")
            .cloned()
    };
    let judged = finding(&json).expect("gc_time_share");
    assert_eq!(judged["severity"], "critical", "{judged}");
    assert!(
        judged["title"]
            .as_str()
            .unwrap()
            .starts_with(&format!("GC pauses took {share:.1}% of the ")),
        "{judged}"
    );
    // The log's lines up to its tenth pause.
    let text = gunzipped(&log);
    let mut pauses = 0;
    let first: String = text
        .lines()
        .take_while(|l| {
            pauses += usize::from(l.contains(" Pause "));
            pauses <= 10
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let short = dir.join("first-ten.log");
    std::fs::write(&short, first).unwrap();
    let json = analyze_json(&[short]);
    assert_eq!(json["pauses"]["count"], 10);
    assert!(finding(&json).is_none(), "{json}");
}

/// `full_gc` is critical for a full collection of a second or more, or for many of them
/// adding up to a second; two of 20 ms are a warning, their time in ms. A log that gives
/// no cause says so in the confidence (GCViewer's JDK 1.3 and JDK 6 samples; the full
/// collections counted here by their text).
#[test]
fn full_collections_are_graded_by_their_time() {
    let dir = fresh_dir("analyze-findings", "full-gc-grade");
    let full_gc = |name: &str| {
        let log = dir.join(name);
        std::fs::write(&log, gcviewer_sample(name)).unwrap();
        let json = analyze_json(&[log]);
        json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["rule"] == "full_gc")
            .cloned()
            .expect("full_gc")
    };
    let short = full_gc("SampleSun1_6_0CMS.txt");
    assert_eq!(short["severity"], "warning", "{short}");
    let total = short["excess_total_ms"].as_f64().unwrap();
    assert!(total > 1.0 && total < 1000.0, "{short}");
    let title = short["title"].as_str().unwrap();
    assert!(
        title.starts_with(&format!("2 full collections, {total:.1} ms: ")),
        "{title}"
    );

    let text = String::from_utf8(gcviewer_sample("SampleSun1_3_1_19SunOS.txt")).unwrap();
    let longest_s = text
        .lines()
        .filter(|l| l.contains("[Full GC"))
        .filter_map(|l| {
            l.rsplit(", ")
                .next()?
                .strip_suffix(" secs]")?
                .parse::<f64>()
                .ok()
        })
        .fold(0.0, f64::max);
    assert!(longest_s >= 1.0, "{longest_s}");
    let long = full_gc("SampleSun1_3_1_19SunOS.txt");
    assert_eq!(long["severity"], "critical", "{long}");
    assert!(
        long["confidence"]
            .as_str()
            .unwrap()
            .contains("the log gives no cause"),
        "{long}"
    );
}

/// A program that fills a 32 MB heap until it fails, on JDK 17 and 25 with G1 and ZGC,
/// its GC log (`-Xlog:gc` on standard output) and its error in one file:
/// one `out_of_memory` finding per error the file holds (ZGC also logs `Out Of Memory
/// (main)` before the exception: still one error), and nothing left unparsed (the error's
/// stack lines are the error's).
#[test]
fn an_out_of_memory_error_in_the_log_is_a_critical_finding() {
    let dir = fresh_dir("analyze-findings", "out-of-memory");
    let program = dir.join("Hog.java");
    std::fs::write(
        &program,
        "import java.util.*;\npublic class Hog {\n  public static void main(String[] a) {\n    List<long[]> kept = new ArrayList<>();\n    while (true) kept.add(new long[16 * 1024]);\n  }\n}\n",
    )
    .unwrap();
    for jdk in [
        "/usr/lib/jvm/java-17-openjdk-amd64",
        "/usr/lib/jvm/temurin-25-jdk-amd64",
    ] {
        for collector in ["-XX:+UseG1GC", "-XX:+UseZGC"] {
            let log = dir.join(format!(
                "{}{collector}.log",
                jdk.rsplit('/').next().unwrap()
            ));
            // The log, then the error the JVM printed, in one file. (Written to one file
            // at once, the two streams' writes may interleave within a line.)
            let out = std::process::Command::new(format!("{jdk}/bin/java"))
                .args([collector, "-Xmx32m", "-Xlog:gc"])
                .arg(&program)
                .output()
                .unwrap();
            assert!(
                !out.status.success(),
                "{}: the heap did not run out",
                log.display()
            );
            std::fs::write(&log, [out.stdout, out.stderr].concat()).unwrap();
            let text = std::fs::read_to_string(&log).unwrap();
            let thrown = text
                .lines()
                .filter(|l| l.contains("java.lang.OutOfMemoryError: Java heap space"))
                .count() as u64;
            assert_eq!(thrown, 1, "{text}");
            let json = analyze_json(std::slice::from_ref(&log));
            let oom = json["findings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["rule"] == "out_of_memory")
                .unwrap_or_else(|| panic!("{}: no out_of_memory: {json}", log.display()));
            assert_eq!(oom["count"], thrown, "{oom}");
            assert_eq!(oom["severity"], "critical");
            assert!(
                oom["evidence"][0]["detail"]
                    .as_str()
                    .unwrap()
                    .starts_with("Java heap space in thread main"),
                "{oom}"
            );
            assert_eq!(json["unparsed_lines"], 0, "{}", json["first_unparsed"]);
        }
    }
}

/// `(before, capacity)` in KiB of the first `[NAME: 123K->45K(678K)` in `line`.
fn generation(line: &str, name: &str) -> Option<(u64, u64)> {
    let rest = &line[line.find(&format!("[{name}:"))? + name.len() + 2..];
    let kib = |s: &str| s.trim().trim_end_matches('K').parse::<u64>().ok();
    let (before, rest) = rest.split_once("->")?;
    let capacity = rest.split_once('(')?.1.split_once(')')?.0;
    Some((kib(before)?, kib(capacity)?))
}

/// JDK 7 and earlier print no cause for a full collection, but print its generations: a
/// CMS log whose full collections each found the permanent generation full (GCViewer's JDK
/// 5 sample, 149 `Full GC` with `[CMS Perm : 65487K->54547K(65536K)]`) names the permanent
/// generation first, not the old one, nor metaspace, which JDK 5 did not have; a Parallel
/// one whose old generation was full names the old generation. Counted here by the text.
#[test]
fn a_full_collection_without_a_cause_is_ranked_by_the_generation_it_found_full() {
    let filled = |(before, capacity): (u64, u64)| before * 100 >= capacity * 90;
    let cases = [
        (
            "SampleSun1_5_0ConcurrentModeFailure.txt",
            "CMS Perm ",
            "the permanent generation",
        ),
        (
            "SampleSun1_5_0ParallelOldGC.txt",
            "ParOldGen",
            "the old generation",
        ),
    ];
    for (name, generation_name, first) in cases {
        let text = String::from_utf8(gcviewer_sample(name)).unwrap();
        let full: Vec<&str> = text.lines().filter(|l| l.contains("[Full GC")).collect();
        let found_full = full
            .iter()
            .filter(|l| generation(l, generation_name).is_some_and(filled))
            .count();
        assert!(found_full > 0, "{name}: no full collection found it full");
        let dir = fresh_dir("analyze-findings", "filled-generation");
        let log = dir.join(name);
        std::fs::write(&log, &text).unwrap();
        let json = analyze_json(&[log]);
        let finding = finding(&json, "full_gc")
            .unwrap_or_else(|| panic!("{name}: no full_gc finding: {json}"));
        assert_eq!(finding["count"], full.len(), "{name}: {finding}");
        let top = &finding["causes"][0];
        assert!(
            top["cause"].as_str().unwrap().starts_with(first),
            "{name}: {finding}"
        );
        assert_eq!(
            top["evidence"],
            format!("{first} was at least 90% full before {found_full} of them"),
            "{name}"
        );
        let causes = finding["causes"].to_string();
        assert!(!causes.contains("etaspace"), "{name}: {causes}");
    }
}

/// Parallel Scavenge runs a full collection in the same stop as the young collection that
/// found the old generation full: both events come before the one stopped-time line
/// (JDK 8, `-XX:+PrintGCApplicationStoppedTime`). The stop outside the collector is what
/// is left after both; each pause gives the stop it ran in.
#[test]
fn a_stop_with_a_young_and_a_full_collection_is_judged_by_both() {
    let dir = fresh_dir("analyze-findings", "young-then-full");
    // Shaped as a JDK 8 Parallel log with causes and tenuring distribution prints them.
    let stop = |at: f64, young_s: f64, full_s: f64, stopped_s: f64| {
        format!(
            "{at:.3}: [GC (Allocation Failure) \n\
             Desired survivor size 11010048 bytes, new threshold 7 (max 15)\n\
             [PSYoungGen: 131072K->10752K(141824K)] 246157K->260737K(413696K), {young_s:.7} secs] [Times: user=0.06 sys=0.03, real=0.07 secs] \n\
             {:.3}: [Full GC (Ergonomics) [PSYoungGen: 10752K->0K(141824K)] [ParOldGen: 249985K->194938K(441856K)] 260737K->194938K(583680K), [Metaspace: 4211K->4211K(1056768K)], {full_s:.7} secs] [Times: user=0.29 sys=0.00, real=0.04 secs] \n\
             {:.3}: Total time for which application threads were stopped: {stopped_s:.7} seconds\n",
            at + young_s,
            at + stopped_s,
        )
    };
    let judged = |text: String| {
        let log = dir.join("gc.log");
        std::fs::write(&log, text).unwrap();
        analyze_json(&[log])
    };
    // Each stop: 63.5 ms young, 41.3 ms full, 105.0 ms stopped.
    let text: String = (0..3)
        .map(|i| stop(1.0 + f64::from(i), 0.0635228, 0.0413279, 0.1050465))
        .collect();
    let json = judged(text.clone());
    assert_eq!(json["pauses"]["count"], 6, "{json}");
    let rules: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert!(!rules.contains(&"stopped_gt_gc"), "{rules:?}");
    for worst in json["worst"].as_array().unwrap() {
        assert_eq!(worst["stopped_ms"], 105.0465, "{worst}");
    }
    // The same stops held 600 ms longer: that time, and no more, is outside.
    let text: String = (0..3)
        .map(|i| stop(1.0 + f64::from(i), 0.0635228, 0.0413279, 0.7050465))
        .collect();
    let json = judged(text);
    let outside = finding(&json, "stopped_gt_gc").unwrap_or_else(|| panic!("{json}"));
    assert_eq!(outside["count"], 3, "{outside}");
    let excess = outside["excess_total_ms"].as_f64().unwrap();
    assert!((excess - 3.0 * 600.1958).abs() < 0.01, "{outside}");
}

/// JDK 6 and 7 name an explicit collection `System`, JDK 8 `System.gc()`; CMS gives way
/// to one it was asked for while it ran with `(concurrent mode interrupted)` and no other
/// cause. Either ranks System.gc() first, with its fix.
#[test]
fn explicit_full_collections_of_jdk_6_and_7_rank_system_gc_first() {
    let dir = fresh_dir("analyze-findings", "system-gc");
    let lines = [
        "104401.329: [Full GC (System) [PSYoungGen: 0K->0K(524224K)] [PSOldGen: 4928117K->4928117K(20447232K)] 4928117K->4928117K(20971456K) [PSPermGen: 60000K->60000K(262144K)], 1.7623490 secs] [Times: user=1.70 sys=0.01, real=1.76 secs]\n",
        "105598.383: [Full GC (System) [PSYoungGen: 0K->0K(524224K)] [PSOldGen: 4928830K->2451709K(20447232K)] 4928830K->2451709K(20971456K) [PSPermGen: 60000K->60000K(262144K)], 2.6828330 secs] [Times: user=2.60 sys=0.02, real=2.68 secs]\n",
    ];
    let interrupted = "77.480: [Full GC 77.480: [CMS77.616: [CMS-concurrent-mark: 0.223/0.224 secs] [Times: user=0.33 sys=0.02, real=0.23 secs] \n (concurrent mode interrupted): 83134K->85198K(107776K), 0.6118455 secs] 92654K->85198K(126912K), [CMS Perm : 15604K->15604K(28412K)], 0.6119507 secs] [Times: user=0.61 sys=0.00, real=0.61 secs] \n";
    for (name, text) in [
        ("system.log", lines.concat()),
        ("interrupted.log", interrupted.repeat(2)),
    ] {
        let log = dir.join(name);
        std::fs::write(&log, text).unwrap();
        let json = analyze_json(&[log]);
        let finding = finding(&json, "full_gc").unwrap_or_else(|| panic!("{name}: {json}"));
        assert_eq!(finding["count"], 2, "{name}: {finding}");
        let top = finding["causes"][0]["cause"].as_str().unwrap();
        assert!(top.starts_with("explicit System.gc()"), "{name}: {finding}");
        assert!(
            finding["fixes"][0]
                .as_str()
                .unwrap()
                .contains("DisableExplicitGC"),
            "{name}: {finding}"
        );
    }
}

/// `non_gc_safepoints` counts every stop that was not a collection, short ones too, and its
/// count and time are those of the safepoint section, whatever evidence it lists.
#[test]
fn the_non_gc_safepoint_finding_gives_the_safepoint_sections_numbers() {
    let dir = fresh_dir("analyze-findings", "non-gc");
    for name in [
        "SampleSun1_7_0G1-ApplicationStopped.txt",
        "SampleSun1_7_0CMS_PrintTenuringDistributionPromotionFailure.txt",
        "SampleSun1_7_0_02PrintApplicationTimeTenuringDistribution.txt",
    ] {
        let log = dir.join(name);
        std::fs::write(&log, gcviewer_sample(name)).unwrap();
        let json = analyze_json(&[log]);
        let f = finding(&json, "non_gc_safepoints").unwrap_or_else(|| panic!("{name}: {json}"));
        let section = &json["safepoints"];
        assert!(section["non_gc_count"].as_u64().unwrap() > 0, "{name}");
        assert_eq!(f["count"], section["non_gc_count"], "{name}: {f}");
        assert_eq!(
            f["excess_total_ms"], section["non_gc_total_ms"],
            "{name}: {f}"
        );
    }
}

/// CMS's incremental mode (`-XX:+CMSIncrementalMode`) prints its duty cycle in each
/// collection (`... 7623K->7623K(16320K) icms_dc=65 , 0.0557709 secs]`): GCViewer's two
/// samples of it, counted and ranged here by their text. A CMS log without it has no
/// finding, and its options alone name the mode.
#[test]
fn incremental_cms_is_told_by_its_duty_cycle_or_its_options() {
    let cycles_in = |text: &str| -> Vec<u8> {
        text.match_indices("icms_dc=")
            .map(|(at, word)| {
                let digits: String = text[at + word.len()..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                digits.parse().unwrap()
            })
            .collect()
    };
    let dir = fresh_dir("analyze-findings", "incremental-cms");
    for (name, severity) in [
        ("SampleSun1_5_0CMS_IncrementalPacing.txt", "info"),
        // A concurrent mode failure: the mode makes them come sooner.
        ("SampleSun1_6_0CMSAdaptiveSizePolicy.txt", "warning"),
    ] {
        let text = String::from_utf8(gcviewer_sample(name)).unwrap();
        let cycles = cycles_in(&text);
        let (low, high) = (cycles.iter().min().unwrap(), cycles.iter().max().unwrap());
        let log = dir.join(name);
        std::fs::write(&log, &text).unwrap();
        let json = analyze_json(&[log]);
        let f = finding(&json, "incremental_cms").unwrap_or_else(|| panic!("{name}: {json}"));
        assert_eq!(f["count"], cycles.len(), "{name}: {f}");
        assert_eq!(f["severity"], severity, "{name}: {f}");
        let title = f["title"].as_str().unwrap();
        assert!(
            title.ends_with(&format!("of {low} to {high} %")),
            "{name}: {title}"
        );
        assert_eq!(
            f["evidence"][0]["detail"]
                .as_str()
                .unwrap()
                .split(':')
                .next(),
            Some(format!("icms_dc={high}").as_str()),
            "{name}: {f}"
        );
        assert_eq!(json["jvm"]["collector"], "CMS", "{name}: {json}");
    }
    let plain = String::from_utf8(gcviewer_sample("SampleSun1_8_0CmsPrintGcId.txt")).unwrap();
    assert!(cycles_in(&plain).is_empty());
    let log = dir.join("plain.log");
    std::fs::write(&log, &plain).unwrap();
    assert_eq!(finding(&analyze_json(&[log]), "incremental_cms"), None);
    let flagged = plain.replacen(
        "CommandLine flags: ",
        "CommandLine flags: -XX:+CMSIncrementalMode ",
        1,
    );
    let log = dir.join("flagged.log");
    std::fs::write(&log, &flagged).unwrap();
    let f = finding(&analyze_json(&[log]), "incremental_cms").expect("named by the options");
    assert_eq!(f["count"], 0, "{f}");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .ends_with("the JVM runs with -XX:+CMSIncrementalMode"),
        "{f}"
    );
}

/// The stops of a thread-dumping JVM: `non_gc_safepoints` ranks the causes by the share of
/// the stops' time their operations took (769 thread dumps above one bias revocation of
/// 0.1 ms), is a warning when the stops take 1 % of the time or more (counted here from the
/// log's `Total:` and uptimes), and does not ask for operation names the log gives.
/// `long_ttsp` of a JVM slowed by a long array copy does not blame options it lacks.
#[test]
fn stop_causes_are_ranked_by_the_time_they_took() {
    let stops = analyze_support::repo_root().join("fixtures/gclogs/stops");
    let text = |name: &str| gunzipped(&stops.join(name));
    // JDK 17: `Safepoint "ThreadDump", ... Total: 80142 ns`, uptimes `[4.028s]`.
    let log = text("thread-dumps-g1-jdk17.log.gz");
    let uptime = |l: &str| -> Option<f64> { l.strip_prefix('[')?.split("s]").next()?.parse().ok() };
    let span = log
        .lines()
        .filter_map(uptime)
        .fold((f64::MAX, 0f64), |(a, b), u| (a.min(u), b.max(u)));
    let dumps_ns: u64 = log
        .lines()
        .filter(|l| l.contains("Safepoint \"ThreadDump\""))
        .filter_map(|l| {
            l.split("Total: ")
                .nth(1)?
                .split(' ')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum();
    let share = dumps_ns as f64 / 1e9 / (span.1 - span.0);
    assert!(
        share >= 0.01,
        "the thread dumps took {share:.4} of the time"
    );
    let json = analyze_json(&[stops.join("thread-dumps-g1-jdk17.log.gz")]);
    let f = finding(&json, "non_gc_safepoints").expect("non_gc_safepoints");
    assert_eq!(f["severity"], "warning", "{f}");
    assert!(
        f["causes"][0]["cause"]
            .as_str()
            .unwrap()
            .starts_with("thread dumps"),
        "{f}"
    );
    assert!(
        !f["fixes"].to_string().contains("names each operation"),
        "{f}"
    );
    // JDK 17 (the log's `Version:`) has biased locking off: not a cause here.
    assert_eq!(
        json["jvm"]["version"].as_str().map(|v| &v[..3]),
        Some("17.")
    );
    assert!(!f["causes"].to_string().contains("biased-lock"), "{f}");

    // JDK 11: `Entering safepoint region: RevokeBias` once, `ThreadDump` 769 times.
    let log = text("thread-dumps-parallel-jdk11.log.gz");
    let entering = |op: &str| {
        log.lines()
            .filter(|l| l.ends_with(&format!("safepoint region: {op}")))
            .count()
    };
    assert!(entering("RevokeBias") >= 1 && entering("ThreadDump") > 100);
    let json = analyze_json(&[stops.join("thread-dumps-parallel-jdk11.log.gz")]);
    let f = finding(&json, "non_gc_safepoints").expect("non_gc_safepoints");
    assert!(
        f["causes"][0]["cause"]
            .as_str()
            .unwrap()
            .starts_with("thread dumps"),
        "{f}"
    );

    // JDK 11 runs it, and revoked a bias once.
    let second = f["causes"][1]["cause"].as_str().unwrap();
    assert!(second.starts_with("biased-lock"), "{f}");

    // JDK 25's ZGC: its one stop that was not a pause cleaned up after class unloading.
    let zgc = analyze_support::fixtures().join("zgc-jdk25.log.gz");
    let cleanups = gunzipped(&zgc)
        .matches("Safepoint \"CleanClassLoaderDataMetaspaces\"")
        .count();
    assert!(cleanups > 0);
    let (cause, evidence) = first_stop_cause(&zgc);
    assert!(
        cause.contains("(CleanClassLoaderDataMetaspaces)"),
        "{cause}"
    );
    assert!(evidence.contains(&format!("x{cleanups} ")), "{evidence}");

    // JDK 11's Shenandoah runs with thread-local handshakes off: each marking cycle's
    // handshake stops every thread (`Entering safepoint region: HandshakeFallback`).
    let shenandoah = analyze_support::fixtures().join("shenandoah-jdk11.log.gz");
    let fallbacks = gunzipped(&shenandoah)
        .lines()
        .filter(|l| l.ends_with("safepoint region: HandshakeFallback"))
        .count();
    assert!(fallbacks > 0);
    let (cause, evidence) = first_stop_cause(&shenandoah);
    assert!(cause.starts_with("handshakes run as stops"), "{cause}");
    assert!(
        evidence.contains(&format!("HandshakeFallback x{fallbacks} ")),
        "{evidence}"
    );

    let json = analyze_json(&[stops.join("array-copy-g1-jdk17.log.gz")]);
    let f = finding(&json, "long_ttsp").expect("long_ttsp");
    assert!(
        !f.to_string().contains("take the safepoint poll out"),
        "{f}"
    );
}

/// The first cause `non_gc_safepoints` gives for the log at `path`, and its evidence.
fn first_stop_cause(path: &std::path::Path) -> (String, String) {
    let f = finding(&analyze_json(&[path.to_path_buf()]), "non_gc_safepoints")
        .expect("non_gc_safepoints");
    let text = |key: &str| f["causes"][0][key].as_str().unwrap_or_default().to_string();
    (text("cause"), text("evidence"))
}

/// G1 failing to evacuate with its heap nearly full: the log's own transitions
/// (`496M->498M(512M)`) rank "the heap is too small or too full" first, with the count of
/// failed collections that found the heap 90 % full or more.
#[test]
fn evacuation_failures_with_a_full_heap_say_so() {
    let log = analyze_support::repo_root()
        .join("fixtures/gclogs/stops/evacuation-failures-g1-jdk21.log.gz");
    let text = gunzipped(&log);
    // `... (Evacuation Failure) 496M->498M(512M) 5.083ms`
    let failed: Vec<(u64, u64)> = text
        .lines()
        .filter(|l| l.contains("(Evacuation Failure"))
        .filter_map(|l| {
            let transition = l.rsplit(' ').nth(1)?;
            let (before, rest) = transition.split_once("M->")?;
            let capacity = rest.split_once("M(")?.1.strip_suffix("M)")?;
            Some((before.parse().ok()?, capacity.parse().ok()?))
        })
        .collect();
    let full = failed.iter().filter(|(b, c)| b * 100 >= c * 90).count();
    assert!(full > 0, "no failure with a full heap in {failed:?}");
    let json = analyze_json(&[log]);
    let f = finding(&json, "evacuation_failure").expect("evacuation_failure");
    assert_eq!(f["count"], failed.len(), "{f}");
    assert!(
        f["causes"][0]["cause"]
            .as_str()
            .unwrap()
            .contains("too small or too full"),
        "{f}"
    );
    assert_eq!(
        f["causes"][0]["evidence"],
        format!("the heap was at least 90% full before {full} of them"),
        "{f}"
    );
}

/// The text of a gzipped log, as `gzip -dc` gives it.
fn gunzipped(path: &std::path::Path) -> String {
    let out = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success(), "gzip -dc {}", path.display());
    String::from_utf8(out.stdout).unwrap()
}
