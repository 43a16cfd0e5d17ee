//! Real logs of every collector of JDK 11, 17, 21 and 25 (fixtures/gclogs, made by
//! generate.sh with different decoration sets; generational ZGC on JDK 21): pause and
//! safepoint counts and sums must equal what the log says line by line, counted here without
//! pauselab's parser.

mod analyze_support;

use std::io::Read;

use analyze_support::{analyze_json, fixtures};

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
