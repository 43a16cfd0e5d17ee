//! Real logs of every collector of JDK 11, 17, 21 and 25 (fixtures/gclogs, made by
//! generate.sh with different decoration sets; generational ZGC on JDK 21): pause and
//! safepoint counts and sums must equal what the log says line by line, counted here without
//! pauselab's parser.

use crate::analyze_support;

use std::io::Read;

use analyze_support::{analyze_json, export_events, fixtures, fresh_dir, gcviewer_sample, run};

struct Expected {
    pauses: u64,
    pause_ns: u64,
    safepoints: u64,
    safepoint_ns: u64,
    collector: Option<String>,
    /// Old-generation growth in young collections (`gc,heap` lines), when the log has them.
    promoted_bytes: Option<u64>,
}

/// `982K(175104K)` or `2741K` into bytes (these logs print K and M).
fn kib_or_mib(text: &str) -> u64 {
    let number = text.split('(').next().unwrap();
    match number.strip_suffix('K') {
        Some(k) => k.parse::<u64>().unwrap() << 10,
        None => number.strip_suffix('M').unwrap().parse::<u64>().unwrap() << 20,
    }
}

/// Plain string matching: a pause line is "GC(N) [y: |Y: |O: ]Pause ... <number>ms" at the end
/// of the line; a safepoint line has `Safepoint "` and `Total: N ns` (JDK 17+), or is
/// "Total time for which application threads were stopped: S seconds" (JDK 9-16).
fn count_by_hand(text: &str) -> Expected {
    let mut e = Expected {
        pauses: 0,
        pause_ns: 0,
        safepoints: 0,
        safepoint_ns: 0,
        collector: None,
        promoted_bytes: None,
    };
    let mut region_bytes = 0;
    // The old generation's growth in the collection being logged (its line comes first).
    let mut old_growth: Option<(String, u64)> = None;
    for line in text.lines() {
        let Some(msg) = line.rsplit("] ").next() else {
            continue;
        };
        if let Some(rest) = msg.strip_prefix("GC(") {
            let body = rest.split_once(") ").map_or("", |x| x.1);
            let body = ["y: ", "Y: ", "O: "]
                .iter()
                .find_map(|g| body.strip_prefix(g))
                .unwrap_or(body);
            let id = rest.split(')').next().unwrap().to_string();
            for generation in ["Tenured: ", "ParOldGen: ", "Old regions: "] {
                if let Some(change) = body.strip_prefix(generation) {
                    let (before, after) = change.split_once("->").unwrap();
                    let after = after.split(' ').next().unwrap();
                    let growth = if generation == "Old regions: " {
                        let regions =
                            |t: &str| t.split('(').next().unwrap().parse::<u64>().unwrap();
                        regions(after).saturating_sub(regions(before)) * region_bytes
                    } else {
                        kib_or_mib(after).saturating_sub(kib_or_mib(before))
                    };
                    old_growth = Some((id.clone(), growth));
                }
            }
            if body.starts_with("Pause Young") && !body.contains("Mixed") && body.ends_with("ms") {
                if let Some((_, growth)) = old_growth.take().filter(|(of, _)| *of == id) {
                    *e.promoted_bytes.get_or_insert(0) += growth;
                }
            }
            if body.starts_with("Pause ") {
                if let Some(ms) = body.rsplit(' ').next().and_then(|t| t.strip_suffix("ms")) {
                    if let Ok(v) = ms.parse::<f64>() {
                        e.pauses += 1;
                        e.pause_ns += (v * 1e6).round() as u64;
                    }
                }
            }
        } else if let Some(rest) =
            msg.strip_prefix("Total time for which application threads were stopped: ")
        {
            let seconds: f64 = rest.split(' ').next().unwrap().parse().unwrap();
            e.safepoints += 1;
            e.safepoint_ns += (seconds * 1e9).round() as u64;
        } else if msg.starts_with("Safepoint \"") {
            let total = msg
                .split("Total: ")
                .nth(1)
                .unwrap()
                .split(" ns")
                .next()
                .unwrap();
            e.safepoints += 1;
            e.safepoint_ns += total.parse::<u64>().unwrap();
        } else if let Some(size) = msg
            .strip_prefix("Heap region size: ")
            .or_else(|| msg.strip_prefix("Heap Region Size: "))
        {
            region_bytes = kib_or_mib(size);
        } else if let Some(c) = msg.strip_prefix("Using ") {
            if !c.contains("workers") && e.collector.is_none() {
                e.collector = Some(c.to_string());
            }
        }
    }
    e
}

#[test]
fn every_collector_of_jdk11_to_jdk25_matches_a_line_by_line_count() {
    let mut seen = Vec::new();
    for entry in std::fs::read_dir(fixtures()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if !name.ends_with(".log.gz") {
            continue;
        }
        let mut text = String::new();
        flate2_free_gunzip(&path).read_to_string(&mut text).unwrap();
        let want = count_by_hand(&text);
        assert!(
            want.pauses > 0 && want.safepoints > 0,
            "{name}: fixture without pauses"
        );
        let json = analyze_json(std::slice::from_ref(&path));
        assert_eq!(json["pauses"]["count"], want.pauses, "{name}");
        let total_ns = (json["pauses"]["total_ms"].as_f64().unwrap() * 1e6).round() as u64;
        assert_eq!(total_ns, want.pause_ns, "{name}");
        assert_eq!(json["safepoints"]["count"], want.safepoints, "{name}");
        let sp_ns = (json["safepoints"]["total_ms"].as_f64().unwrap() * 1e6).round() as u64;
        assert!(
            sp_ns.abs_diff(want.safepoint_ns) <= 1,
            "{name}: {sp_ns} vs {}",
            want.safepoint_ns
        );
        assert_eq!(
            json["unparsed_lines"], 0,
            "{name}: {}",
            json["first_unparsed"]
        );
        assert_eq!(
            json["memory"]["promoted_bytes"].as_u64(),
            want.promoted_bytes,
            "{name}: promoted bytes"
        );
        let collector = json["jvm"]["collector"].as_str().unwrap().to_string();
        let stated = want.collector.unwrap();
        assert!(
            stated.contains(&collector) || (collector == "ZGC" && stated.contains("Z Garbage")),
            "{name}: {collector} vs {stated}"
        );
        // Every GC pause sits inside a safepoint of these logs.
        let worst = json["worst"].as_array().unwrap();
        assert!(
            worst
                .iter()
                .all(|w| w["stopped_ms"].as_f64().unwrap()
                    >= w["duration_ms"].as_f64().unwrap() - 0.001),
            "{name}"
        );
        seen.push(name);
    }
    seen.sort();
    assert!(seen.contains(&"zgen-jdk21.log.gz".to_string()));
    for collector in ["serial", "parallel", "g1", "zgc", "shenandoah"] {
        for jdk in ["jdk11", "jdk17", "jdk21", "jdk25"] {
            let want = format!("{collector}-{jdk}.log.gz");
            assert!(seen.contains(&want), "missing fixture {want}");
        }
    }
}

/// A rotated log's later files, or a part of a log cut out for a ticket, lack the `Using
/// ...` line: what the rest of the log names tells the collector all the same (Serial's
/// and Parallel's pauses have the same names; their old generations' lines and their
/// safepoints' VM operations differ).
#[test]
fn a_log_without_its_using_line_still_names_its_collector() {
    let dir = fresh_dir("analyze-fixtures", "without-using");
    for collector in ["serial", "parallel", "g1", "zgc", "shenandoah"] {
        for jdk in ["jdk11", "jdk17", "jdk21", "jdk25"] {
            let name = format!("{collector}-{jdk}.log.gz");
            let path = fixtures().join(&name);
            let mut text = String::new();
            flate2_free_gunzip(&path).read_to_string(&mut text).unwrap();
            let stated = analyze_json(std::slice::from_ref(&path))["jvm"]["collector"].clone();
            assert!(stated.is_string(), "{name}");
            let rest: String = text
                .lines()
                .filter(|l| !l.contains("] Using ") && !l.contains("] Initializing The Z"))
                .map(|l| format!("{l}\n"))
                .collect();
            assert!(rest.len() < text.len(), "{name}: no Using line");
            let cut = dir.join(name.trim_end_matches(".gz"));
            std::fs::write(&cut, rest).unwrap();
            let json = analyze_json(&[cut]);
            // Logged with `gc` and `safepoint` only, JDK 21's Serial names its safepoints
            // `GenCollectForAllocation`, as CMS did: nothing tells which of the two.
            if name == "serial-jdk21.log.gz" {
                assert!(json["jvm"]["collector"].is_null(), "{name}");
            } else {
                assert_eq!(json["jvm"]["collector"], stated, "{name}");
            }
        }
    }
    // JDK 5's Parallel: a full collection, named `Full GC`, tells by its generations.
    let sample = dir.join("SampleSun1_5_0ParallelOldGC.txt");
    std::fs::write(&sample, gcviewer_sample("SampleSun1_5_0ParallelOldGC.txt")).unwrap();
    assert_eq!(analyze_json(&[sample])["jvm"]["collector"], "Parallel");
}

/// gunzip through the system tool, so the test does not share pauselab's input code.
fn flate2_free_gunzip(path: &std::path::Path) -> impl Read {
    let out = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success());
    std::io::Cursor::new(out.stdout)
}

/// Pauses and safepoints as `analyze --json` counts them.
fn counted(log: &std::path::Path) -> (u64, u64) {
    let json = analyze_json(&[log.to_path_buf()]);
    (
        json["pauses"]["count"].as_u64().unwrap(),
        json["safepoints"]["count"].as_u64().unwrap(),
    )
}

/// `analyze --events`: one row per pause and safepoint the report counts, as CSV that
/// Python's csv module reads back (a file name with a comma, a quote and a line break
/// quoted as RFC 4180 says) and as JSON lines; JDK 8 safepoint statistics only when the
/// report counts them; other extensions and links refused.
#[test]
fn events_export_has_a_row_per_counted_pause_and_safepoint() {
    let dir = fresh_dir("events", "gclog");
    let log = dir.join("gc, \"demo\"\n17.log");
    std::fs::copy(fixtures().join("demo-g1-jdk17.log"), &log).unwrap();
    let (pauses, safepoints) = counted(&log);
    assert!(pauses > 0 && safepoints > 0);
    let log_arg = log.to_str().unwrap();

    let rows = export_events(&log, &dir.join("events.csv"));
    assert_eq!((rows.gc_pauses, rows.safepoints), (pauses, safepoints));
    assert_eq!(rows.rows, pauses + safepoints);
    // The file as the report names it (control characters escaped), its comma and quotes
    // quoted for CSV.
    let named = analyze_json(std::slice::from_ref(&log))["inputs"][0]["file"].clone();
    assert_eq!(rows.source_files, vec![named.as_str().unwrap().to_string()]);
    assert!(
        rows.source_files[0].ends_with("gc, \"demo\"\\n17.log"),
        "{named}"
    );
    assert_eq!(rows.rows_with_line, rows.rows);
    assert_eq!(rows.rows_with_event_index, 0);
    assert_eq!(
        rows.rows_with_heap, pauses,
        "every G1 pause line has its heap"
    );

    let jsonl = dir.join("events.JSONL");
    let out = run(&["--events", jsonl.to_str().unwrap(), log_arg]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&jsonl).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len() as u64, pauses + safepoints);
    let young = lines.iter().find(|l| l["kind"] == "gc_pause").unwrap();
    assert_eq!(young["collector"], "G1");
    assert_eq!(young["pause_type"], "young");
    assert!(young["duration_ms"].as_f64().unwrap() > 0.0, "{young}");

    // JDK 8 -XX:+PrintSafepointStatistics rows are the safepoints only without stopped-time
    // lines; with them, the report counts the lines and the rows follow.
    let statistics = "0.084: ParallelGCFailedAllocation       [      10          0              0    ]      [     0     0     2     1     5    ]  0   \n\
        0.090: [GC (Allocation Failure) [PSYoungGen: 1024K->512K(2048K)] 1024K->600K(4096K), 0.0050000 secs] [Times: user=0.01 sys=0.00, real=0.01 secs] \n\
        0.300: RevokeBias                       [      10          0              0    ]      [     0     0     1     0     3    ]  0   \n";
    let stopped = "0.400: Total time for which application threads were stopped: 0.0123450 seconds, Stopping threads took: 0.0001230 seconds\n";
    for (name, text, want) in [
        ("statistics.log", statistics.to_string(), (1, 2)),
        ("both.log", format!("{statistics}{stopped}"), (1, 1)),
    ] {
        let log = dir.join(name);
        std::fs::write(&log, text).unwrap();
        assert_eq!(counted(&log), want, "{name}");
        let rows = export_events(&log, &dir.join(format!("{name}.csv")));
        assert_eq!((rows.gc_pauses, rows.safepoints), want, "{name}");
    }

    // Another extension: a usage error naming the accepted ones, nothing written.
    let txt = dir.join("events.txt");
    let out = run(&["--events", txt.to_str().unwrap(), log_arg]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines()
            .next()
            .unwrap()
            .contains("FILE.csv or FILE.jsonl"),
        "{err}"
    );
    assert!(!txt.exists());
    // A link is not followed: one line naming the file, the target untouched.
    let target = dir.join("target.csv");
    std::fs::write(&target, "keep\n").unwrap();
    let link = dir.join("link.csv");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = run(&["--events", link.to_str().unwrap(), log_arg]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("link.csv"), "{err}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
}
