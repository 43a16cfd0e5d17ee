//! `pauselab report` on the committed lab-like bundles, real jHiccup logs and a real GC log:
//! the numbers in the HTML, JSON and terminal output against `pauselab hlog` on the same
//! files, the number of series, the labels, the matrix, the SLA exit code and bad input;
//! a real JDK 17 JFR recording charted like the GC log its JVM wrote, its pauses and heap
//! samples counted with the JDK's own `jfr print --json`.

use crate::jfr_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use jfr_support::{jfr_print, record, JDK17};

fn pauselab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .args(args)
        .output()
        .expect("run pauselab")
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn bundle(name: &str) -> String {
    repo()
        .join("fixtures/bundles")
        .join(name)
        .display()
        .to_string()
}

fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// p99.9 and max (ns) of an interval log, as `pauselab hlog --json` reports them.
fn hlog_stats(file: &str) -> serde_json::Value {
    let out = pauselab(&["hlog", "--json", file]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["files"][0]["stats"].clone()
}

fn ms3(ns: &serde_json::Value) -> String {
    format!("{:.3}", ns.as_u64().unwrap() as f64 / 1e6)
}

/// The text of the `<figure class="CLASS">` elements of a page.
fn figures<'a>(html: &'a str, class: &str) -> Vec<&'a str> {
    let open = format!(r#"<figure class="{class}""#);
    html.match_indices(&open)
        .map(|(i, _)| &html[i..i + html[i..].find("</figure>").unwrap()])
        .collect()
}

#[test]
fn bundle_report_shows_each_variant_with_its_numbers() {
    let dir = out_dir("report-bundle");
    let page = dir.join("report.html");
    let c4 = bundle("c4-kernel3.2");
    let out = pauselab(&["report", &c4, "--html", page.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(&c4).join("manifest.json")).unwrap(),
    )
    .unwrap();
    let variants = manifest["variants"].as_array().unwrap();

    // One percentile line per variant, labelled 0% .. 99.9999%.
    let percentiles = figures(&html, "percentiles");
    assert_eq!(percentiles.len(), 1);
    assert_eq!(
        percentiles[0].matches(r#"class="series""#).count(),
        variants.len()
    );
    for label in ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"] {
        assert!(
            percentiles[0].contains(&format!(">{label}</text>")),
            "axis label {label}"
        );
    }
    // One timeline per variant, each with the four percentile lines; safepoints where recorded.
    let timelines = figures(&html, "timeline");
    assert_eq!(timelines.len(), variants.len());
    for t in &timelines {
        assert_eq!(t.matches(r#"class="level""#).count(), 4);
    }
    assert_eq!(figures(&html, "safepoints").len(), 1);
    assert_eq!(figures(&html, "host").len(), 2);

    // The table's numbers are those of `pauselab hlog` on the same logs.
    for v in variants {
        let id = v["id"].as_str().unwrap();
        let log = Path::new(&c4)
            .join(v["dir"].as_str().unwrap())
            .join("hiccups.hlog");
        let stats = hlog_stats(log.to_str().unwrap());
        let row_start = html
            .find(&format!(r#"<tr data-variant="{id}">"#))
            .expect(id);
        let row = &html[row_start..row_start + html[row_start..].find("</tr>").unwrap()];
        for key in ["p99", "p99_9", "p99_99", "max"] {
            assert!(
                row.contains(&format!("<td>{}</td>", ms3(&stats[key]))),
                "{id} {key}: {row}"
            );
        }
        let jdk = v["jdk"].as_str().unwrap();
        let name = v["variant"].as_str().unwrap();
        let label = format!("{name} (JDK {jdk})");
        assert!(
            percentiles[0].contains(&format!(r#"data-series="{label}""#)),
            "{label}"
        );
        // The legend shows the max like the table.
        let max_ms = stats["max"].as_u64().unwrap() as f64 / 1e6;
        assert!(
            percentiles[0].contains(&format!("{label} (max ")),
            "{label}"
        );
        assert!(max_ms > 0.0);
    }
    // Verdicts and host facts from the bundle.
    assert!(html.contains(r#"<span class="badge v-vulnerable">vulnerable</span>"#));
    let table = &html[html.find(r#"<table class="variants">"#).unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(
        table
            .matches(r#"<span class="badge v-stalls">stalls</span>"#)
            .count(),
        2
    );
    assert!(html.contains("<dt>kernel</dt><dd>3.2.0-4-amd64</dd>"));
    // Self-contained: no scripts, no fetched resources.
    for forbidden in ["<script", "<link", "@import", "url(", " src=", "https://"] {
        assert!(!html.contains(forbidden), "{forbidden}");
    }
}

/// `pauselab report --matrix INPUTS --html PAGE --json`, which must succeed: its JSON.
fn report_matrix(inputs: &[&str], page: &Path) -> serde_json::Value {
    let mut args = vec!["report", "--matrix"];
    args.extend(inputs);
    args.extend(["--html", page.to_str().unwrap(), "--json"]);
    let out = pauselab(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn matrix_rows_are_kernels_columns_jdks_and_cells_link_to_charts() {
    let dir = out_dir("report-matrix");
    let page = dir.join("matrix.html");
    let doc = report_matrix(&[&bundle("c4-kernel3.2"), &bundle("lab-kernel6.1")], &page);
    let matrix = &doc["matrix"];
    let keys: Vec<&serde_json::Value> = matrix["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["key"])
        .collect();
    assert_eq!(keys, ["8", "17"]);
    let rows = matrix["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["kernel"], "3.2.0-4-amd64");
    assert_eq!(rows[0]["cells"]["17"]["default_verdict"], "stalls");
    assert_eq!(
        rows[0]["cells"]["17"]["mitigations"],
        serde_json::json!([["perf-disable-shared-mem", "removed"]])
    );
    assert_eq!(rows[0]["cells"]["8"]["default_verdict"], "stalls");
    assert_eq!(rows[1]["kernel"], "6.1.0-26-amd64");
    assert_eq!(rows[1]["cells"]["17"]["default_verdict"], "no_stalls");
    assert!(rows[1]["cells"].get("8").is_none());
    // One bundle per cell: every cell ran once, so consistency is unknown and said so.
    assert_eq!(matrix["cells"], 3);
    assert_eq!(matrix["max_repeats"], 1);
    let conclusions = matrix["conclusions"].as_array().unwrap();
    assert!(conclusions
        .iter()
        .any(|c| c.as_str().unwrap().contains("--repeat")));
    assert!(
        conclusions.contains(&serde_json::json!(
            "The kernel changed the outcome of default (consistent cells that stalled: 3.2.0-4-amd64 2 of 2, 6.1.0-26-amd64 0 of 1)."
        )),
        "{conclusions:?}"
    );

    let html = std::fs::read_to_string(&page).unwrap();
    let table = &html[html.find(r#"<table class="matrix">"#).unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<th>JDK ").count(), 2);
    assert!(
        table.contains(">stalls<") && table.contains(">no stalls<") && table.contains("not run")
    );
    // Every variant's cell links to its charts, which exist in the page.
    let links: Vec<&str> = table
        .split(r##"href="#"##)
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap()])
        .collect();
    let filled: usize = rows
        .iter()
        .flat_map(|r| r["cells"].as_object().unwrap().values())
        .map(|c| c["variants"].as_array().unwrap().len())
        .sum();
    assert_eq!(links.len(), filled);
    for anchor in links {
        assert!(html.contains(&format!(r#"id="{anchor}""#)), "{anchor}");
    }
}

#[test]
fn sla_is_drawn_and_a_breach_exits_3() {
    let c4 = bundle("c4-kernel3.2");
    let dir = out_dir("report-sla");
    let page = dir.join("sla.html");
    let out = pauselab(&[
        "report",
        &c4,
        "--sla",
        "p99.9=20ms,max=100ms",
        "--html",
        page.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(3));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["sla_met"], false);
    let variants = doc["sections"][0]["variants"].as_array().unwrap();
    let met: Vec<bool> = variants
        .iter()
        .map(|v| v["sla"]["met"].as_bool().unwrap())
        .collect();
    // Only the two stalling default variants break it.
    assert_eq!(met, vec![false, true, true, false, true]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(
        figures(&html, "percentiles")[0]
            .matches(r#"class="sla""#)
            .count(),
        1
    );

    let lax = pauselab(&[
        "report",
        &bundle("lab-kernel6.1"),
        "--sla",
        "p99=10ms,max=1s",
    ]);
    assert_eq!(lax.status.code(), Some(0));
    let text = String::from_utf8(lax.stdout).unwrap();
    assert_eq!(
        text.matches(" met ").count() + text.matches(" met\n").count(),
        3,
        "{text}"
    );
}

#[test]
fn png_charts_are_written() {
    let dir = out_dir("report-png");
    let out = pauselab(&[
        "report",
        &bundle("lab-kernel6.1"),
        "--png",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    // 1 percentile chart, 3 timelines, the host's noise, 2 host charts.
    assert_eq!(names.len(), 7, "{names:?}");
    for name in &names {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{name}");
        let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
        assert_eq!(width, 1640, "{name}: 2x the 820-unit chart");
    }
}

#[test]
fn interval_logs_and_gc_logs_are_reported_directly() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/reference/jhiccup");
    let a = data
        .join("java8x4-async-off_c4_2.jHiccup")
        .display()
        .to_string();
    let b = data
        .join("java8x4-no-perf_c4_2.jHiccup")
        .display()
        .to_string();
    let gc = repo()
        .join("fixtures/gclogs/demo-g1-jdk17.log")
        .display()
        .to_string();
    let dir = out_dir("report-logs");
    let page = dir.join("logs.html");
    let out = pauselab(&[
        "report",
        &a,
        &b,
        &gc,
        "--json",
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sections = doc["sections"].as_array().unwrap();
    assert_eq!(sections.len(), 2);
    // The GC log: every "GC(n) Pause ... N.NNNms" line is one pause.
    let gc_text = std::fs::read_to_string(&gc).unwrap();
    let pause_lines = gc_text
        .lines()
        .filter(|l| l.contains("] GC(") && l.contains(") Pause ") && l.ends_with("ms"))
        .count();
    assert!(pause_lines > 50);
    assert_eq!(sections[0]["variants"][0]["gc_pauses"], pause_lines);
    assert_eq!(
        sections[0]["variants"][0]["hiccups"]["stats"]["count"],
        pause_lines
    );
    // The interval logs: one variant each, numbers as `pauselab hlog`.
    let logs = &sections[1]["variants"];
    assert_eq!(logs.as_array().unwrap().len(), 2);
    assert_eq!(logs[0]["hiccups"]["stats"], hlog_stats(&a));
    assert_eq!(logs[1]["hiccups"]["stats"], hlog_stats(&b));
    // Each log's 10 intervals with the highest max, highest first, with their own numbers.
    let worst = logs[0]["hiccups"]["worst_intervals"].as_array().unwrap();
    assert_eq!(worst.len(), 10);
    assert_eq!(worst[0]["line"], 2306);
    assert_eq!(worst[0]["max"], logs[0]["hiccups"]["stats"]["max"]);
    assert!(worst
        .windows(2)
        .all(|w| w[0]["max"].as_u64() >= w[1]["max"].as_u64()));
    let html = std::fs::read_to_string(&page).unwrap();
    let table = element(
        &html,
        r#"<table class="worst-intervals" data-variant="java8x4-async-off-c4-2-jhiccup">"#,
        "</table>",
    );
    assert_eq!(table.matches("<tr>").count(), 11, "{table}");
    assert!(table.contains("<th>p99 (ms)</th>"), "{table}");
    assert!(
        table.contains("<tr><td>11506.627</td><td>Wed Mar 08 18:21:50 UTC 2023</td><td>5.000</td><td>4913</td><td>4177.527</td><td>4127.195</td><td>2306</td></tr>"),
        "{table}"
    );
    assert_eq!(html.matches(r#"<table class="worst-intervals""#).count(), 2);
    assert_eq!(figures(&html, "percentiles").len(), 2);
    // GC pause markers beside the GC log's timeline.
    let timeline = figures(&html, "timeline")[0];
    assert_eq!(timeline.matches(r#"class="marker""#).count(), pause_lines);
    // Heap after GC (one series) and pauses over time, one series per pause type.
    let gc_charts = figures(&html, "gc");
    assert_eq!(gc_charts.len(), 2);
    assert!(gc_charts[0].contains("Heap before and after GC"));
    assert_eq!(gc_charts[0].matches(r#"class="dots""#).count(), 2);
    let young = gc_text.contains(") Pause Young") as usize;
    let remark = gc_text.contains(") Pause Remark") as usize;
    assert!(young + remark > 0);
    assert!(gc_charts[1].matches(r#"class="dots""#).count() >= young + remark);
}

/// `pauselab analyze --json FILE`.
fn analyze_json(file: &str) -> serde_json::Value {
    let out = pauselab(&["analyze", "--json", file]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The text of `html` from `start` to the end of the element it opens (`</tag>`).
fn element<'a>(html: &'a str, start: &str, end: &str) -> &'a str {
    let from = html
        .find(start)
        .unwrap_or_else(|| panic!("{start} missing"));
    &html[from..from + html[from..].find(end).unwrap()]
}

#[test]
fn a_gc_log_report_carries_its_diagnosis_and_honest_charts() {
    // The same log under two directories: told apart by their directory.
    let dir = out_dir("report-diagnosis");
    let log = repo().join("fixtures/gclogs/parallel-swapped-jdk17.log");
    let mut copies = Vec::new();
    for name in ["a", "b"] {
        std::fs::create_dir_all(dir.join(name)).unwrap();
        let copy = dir.join(name).join("gc.log");
        std::fs::copy(&log, &copy).unwrap();
        copies.push(copy.display().to_string());
    }
    let page = dir.join("report.html");
    let out = pauselab(&[
        "report",
        &copies[0],
        &copies[1],
        "--json",
        "--html",
        page.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let titles: Vec<&str> = doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["GC pauses: a/gc.log", "GC pauses: b/gc.log"]);

    // Every finding of `analyze --json`, with its evidence, causes and fixes, in the JSON
    // and on the page; the worst pauses with their source lines.
    let analysis = analyze_json(&copies[0]);
    let findings = analysis["findings"].as_array().unwrap();
    assert!(findings.len() >= 3, "{findings:?}");
    let variant = &doc["sections"][0]["variants"][0];
    assert_eq!(variant["findings"], analysis["findings"]);
    assert_eq!(variant["worst_pauses"], analysis["worst"]);
    let html = std::fs::read_to_string(&page).unwrap();
    let section = element(
        &html,
        r#"<section class="bundle" id="gc-a-gc-log""#,
        "</section>",
    );
    let escape = |t: &str| {
        t.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    for f in findings {
        let rule = f["rule"].as_str().unwrap();
        let article = element(section, &format!(r#"data-rule="{rule}""#), "</article>");
        assert!(
            article.contains(&escape(f["title"].as_str().unwrap())),
            "{rule}"
        );
        for e in f["evidence"].as_array().unwrap() {
            assert!(
                article.contains(&format!(">gc.log:{}</span>", e["line"])),
                "{rule}: evidence line {}",
                e["line"]
            );
            assert!(article.contains(&escape(e["detail"].as_str().unwrap())));
        }
        for key in ["causes", "fixes"] {
            let items = f[key].as_array().unwrap();
            assert!(!items.is_empty(), "{rule} {key}");
            for item in items {
                // Plain text, or a ranked cause whose text is one of its fields.
                let text = item
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| item.to_string());
                let shown = item.as_str().is_none() || article.contains(&escape(&text));
                assert!(shown, "{rule} {key}: {text}");
            }
        }
    }
    let worst = element(section, r#"<table class="worst">"#, "</table>");
    let rows: Vec<&str> = worst.split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), analysis["worst"].as_array().unwrap().len());
    for (row, w) in rows.iter().zip(analysis["worst"].as_array().unwrap()) {
        assert!(
            row.contains(&format!(">gc.log:{}</span>", w["source"]["line"])),
            "{row}"
        );
        assert!(row.contains(&escape(w["name"].as_str().unwrap())), "{row}");
    }

    // Pauses as dots, never a line between two pauses; the heap before and after each
    // collection with the capacity.
    let gc_charts = figures(section, "gc");
    let (heap, pauses) = (gc_charts[0], gc_charts[1]);
    for series in ["before GC", "after GC"] {
        assert!(
            heap.contains(&format!(r#"class="dots" data-series="{series}""#)),
            "{series}"
        );
    }
    assert!(heap.contains(r#"data-series="capacity""#));
    assert!(!pauses.contains("<polyline"));
    assert_eq!(
        // One dot per pause (the legend's are larger).
        pauses.matches(r#" r="2.5"/>"#).count(),
        analysis["pauses"]["count"].as_u64().unwrap() as usize
    );
    // Pauses from 1.1 s to 37.9 s span less than 100x: a linear axis from 0.
    assert!(!pauses.contains("log scale"));
    // The timeline draws each interval's longest pause as a bar.
    let timeline = figures(section, "timeline")[0];
    assert!(
        timeline.contains(r#"class="series bars""#)
            && !timeline.contains("<polyline class=\"series\"")
    );
}

/// The worst pauses and findings of `pauselab analyze FILE`, from its "Worst" line to the
/// blank line before "Unparsed".
fn analyze_findings_text(file: &str) -> String {
    let out = pauselab(&["analyze", file]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let from = text.find("Worst ").expect("worst pauses");
    let to = text.find("\n\nUnparsed").expect("unparsed line");
    text[from..to].to_string()
}

/// `pauselab report FILE` in the terminal.
fn report_text(file: &str) -> String {
    let out = pauselab(&["report", file]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_terminal_report_prints_the_findings_word_for_word_as_analyze() {
    for log in [
        "fixtures/gclogs/parallel-swapped-jdk17.log",
        "fixtures/reference/gclogs/defnew.log.gz",
    ] {
        let log = repo().join(log).display().to_string();
        let findings = analyze_findings_text(&log);
        assert!(findings.contains("      causes: 1. "), "{findings}");
        assert!(findings.contains("      fix:    - "), "{findings}");
        let report = report_text(&log);
        assert!(
            report.contains(&format!("(values in ms)\n\n{findings}\n")),
            "{log}: {report}"
        );
    }
}

#[test]
fn a_bundle_opens_with_its_verdict_and_findings() {
    let noisy = "other processes used 97% of the CPUs for 40 s of the run";
    let copy = edited_bundle("report-verdict", |_, v| {
        v["noisy"] = serde_json::json!([noisy]);
        v["notes"] = serde_json::json!(["the run was short"]);
        v["per_jdk"] = serde_json::json!([{"jdk": "jdk17", "vulnerable": "not_vulnerable",
            "reason": "no subject variant stalls", "baseline_max_ms": 1.6}]);
        v["variants"][0]["gc_findings"] = serde_json::json!(["real_gt_cpu"]);
    });
    let page = copy.with_extension("html");
    let out = pauselab(&[
        "report",
        copy.to_str().unwrap(),
        "--json",
        "--html",
        page.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["sections"][0]["verdict"]["noisy"][0], noisy);
    let html = std::fs::read_to_string(&page).unwrap();
    let verdict = element(&html, r#"<div class="verdict">"#, r#"<dl class="facts">"#);
    for text in [
        r#"Verdict: <span class="badge v-not_vulnerable">not vulnerable</span> <span class="badge v-inconsistent">noisy</span>"#,
        noisy,
        "JDK jdk17",
        "no subject variant stalls",
        "the run was short",
        "<strong>default-jdk17</strong>: p99.9 0.8 ms and max 1.1 ms vs baseline 0.8 ms and 1.6 ms; GC log: real_gt_cpu",
    ] {
        assert!(verdict.contains(text), "{text} missing from {verdict}");
    }
    // At the top: before the host facts and the variants' table.
    assert!(html.find(r#"<div class="verdict">"#) < html.find(r#"<table class="variants">"#));
}

#[test]
fn bad_input_is_one_clear_line_and_exit_1() {
    let tmp = out_dir("report-bad");
    let check = |args: &[&str], needle: &str| {
        let out = pauselab(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("pauselab: error: ") && err.contains(needle),
            "{err}"
        );
    };
    check(&["report", "/nonexistent/bundle"], "/nonexistent/bundle");
    check(&["report", tmp.to_str().unwrap()], "not a lab bundle");
    let broken = tmp.join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("manifest.json"), "{ \"variants\": [ ").unwrap();
    check(
        &["report", broken.to_str().unwrap()],
        "manifest.json:1: invalid JSON",
    );
    check(
        &["report", &bundle("lab-kernel6.1"), "--sla", "p99=fast"],
        "--sla",
    );
    let text = tmp.join("notes.txt");
    std::fs::write(&text, "hello\n").unwrap();
    check(
        &["report", text.to_str().unwrap()],
        "notes.txt: no GC or safepoint log lines",
    );
    check(
        &["report", "--matrix", text.to_str().unwrap()],
        "no GC or safepoint log lines",
    );
}

/// A copy of a committed bundle whose manifest.json and verdict.json are edited by `edit`.
fn edited_bundle(
    name: &str,
    edit: impl Fn(&mut serde_json::Value, &mut serde_json::Value),
) -> PathBuf {
    let dir = out_dir(name);
    let status = Command::new("cp")
        .args(["-r", &bundle("lab-kernel6.1"), dir.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success());
    let copy = dir.join("lab-kernel6.1");
    let read = |file: &str| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(copy.join(file)).unwrap()).unwrap()
    };
    let (mut manifest, mut verdict) = (read("manifest.json"), read("verdict.json"));
    edit(&mut manifest, &mut verdict);
    std::fs::write(copy.join("manifest.json"), manifest.to_string()).unwrap();
    std::fs::write(copy.join("verdict.json"), verdict.to_string()).unwrap();
    copy
}

#[test]
fn newer_bundle_formats_are_refused_and_older_ones_read() {
    let newer = edited_bundle("report-format-newer", |m, _| m["format_version"] = 2.into());
    let out = pauselab(&["report", "--json", newer.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("{}", newer.join("manifest.json").display()))
            && err.contains("bundle format version 2 is newer than this pauselab reads (1)"),
        "{err}"
    );

    // Another format is refused, naming the file.
    let other = edited_bundle("report-format-other", |m, _| m["format"] = "other".into());
    let out = pauselab(&["report", "--json", other.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("manifest.json: format \"other\" is not \"pauselab-bundle\""),
        "{err}"
    );

    // A verdict word this version does not know is refused, naming the file.
    let unknown = edited_bundle("report-format-verdict", |_, v| {
        v["variants"][0]["verdict"] = "maybe".into()
    });
    let out = pauselab(&["report", "--json", unknown.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("verdict.json") && err.contains("maybe"),
        "{err}"
    );

    // Version 0 (before the field was bumped) reads like the committed bundle.
    let older = edited_bundle("report-format-older", |m, _| m["format_version"] = 0.into());
    let out = pauselab(&["report", "--json", older.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = doc.to_string();
    assert!(
        text.contains("not_vulnerable") && text.contains("no_stalls"),
        "{text}"
    );
}

/// Statistics of verdict.json whose max is `max_ms`.
fn stats(max_ms: f64) -> serde_json::Value {
    serde_json::json!({
        "count": 100, "p50_ms": 5.0, "p99_ms": max_ms / 2.0, "p99_9_ms": max_ms,
        "p99_99_ms": max_ms, "max_ms": max_ms,
        "at_least_100ms": u64::from(max_ms >= 100.0), "at_least_1s": u64::from(max_ms >= 1000.0),
    })
}

#[test]
fn matrix_of_a_matrix_run_marks_repeats_that_disagree_and_draws_conclusions() {
    // Two cells (G1 on ext4, G1 on xfs), two repeats each: the default variant stalls in
    // both repeats on ext4, and in one of the two on xfs.
    let dir = out_dir("report-matrix-run");
    let runs = [
        ("G1-ext4-r1", "ext4", 1, "stalls", 2900.0),
        ("G1-xfs-r1", "xfs", 1, "stalls", 2800.0),
        ("G1-xfs-r2", "xfs", 2, "no_stalls", 150.0),
        ("G1-ext4-r2", "ext4", 2, "stalls", 2700.0),
    ];
    for (name, fs, repeat, verdict, max_ms) in runs {
        let copy = edited_bundle(&format!("report-matrix-run-{name}"), |m, v| {
            m["fault_injection"] = "slow-stable-pages".into();
            m["fault"] = serde_json::json!({"device": "loop7", "spec": {"write_bps": 4194304, "stable_writes": true, "fstype": fs}});
            m["cell"] = serde_json::json!({
                "label": &name[..name.len() - 3], "gc": "G1", "filesystem": fs,
                "repeat": repeat, "repeats": 2,
            });
            m["experiment"]["definition"] =
                serde_json::json!({"measurements": ["workload.max_gap_ms"]});
            for variant in v["variants"].as_array_mut().unwrap() {
                let is_default = variant["id"] == "default-jdk17";
                variant["measurements"] = serde_json::json!([
                    {"name": "workload.max_gap_ms", "value": 4000.0, "unit": "ms"},
                    {"name": "workload.mib_per_s", "value": 50.0, "unit": "MiB/s"},
                ]);
                if is_default {
                    variant["verdict"] = verdict.into();
                }
                variant["safepoints"] = stats(if is_default { max_ms } else { 120.0 });
            }
        });
        std::fs::rename(&copy, dir.join(name)).unwrap();
    }
    let matrix_json = serde_json::json!({
        "format": "pauselab-matrix", "experiment": "hsperf-mmap", "cells": [],
        "repeats": 2, "duration_s": 30.0, "expected_duration_s": 200.0,
        "bundles": runs.iter().map(|r| r.0).collect::<Vec<_>>(),
    });
    std::fs::write(dir.join("matrix.json"), matrix_json.to_string()).unwrap();
    let page = dir.join("matrix.html");
    let doc = report_matrix(&[dir.to_str().unwrap()], &page);
    assert_eq!(doc["sections"].as_array().unwrap().len(), 4);
    let matrix = &doc["matrix"];
    assert_eq!(matrix["columns"][0]["key"], "17 G1");
    let rows = matrix["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "one row per filesystem");
    let cell = |fs: &str| -> &serde_json::Value {
        let row = rows.iter().find(|r| r["filesystem"] == fs).unwrap();
        assert_eq!(row["disk"], "slow loop device, 4 MiB/s, stable pages");
        &row["cells"]["17 G1"]
    };
    let variant = |fs: &str, name: &str| -> serde_json::Value {
        cell(fs)["variants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["variant"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(cell("ext4")["repeats"], 2);
    assert_eq!(cell("ext4")["consistent"], true);
    assert_eq!(variant("ext4", "default")["verdict"], "stalls");
    assert_eq!(variant("ext4", "default")["max_pause_ms"], 2900.0);
    // Each variant's spread over its repeats: min, median and max of their longest pauses.
    assert_eq!(
        variant("ext4", "default")["spread"],
        serde_json::json!({"repeats": 2, "min_ms": 2700.0, "median_ms": 2800.0, "max_ms": 2900.0})
    );
    assert_eq!(cell("xfs")["consistent"], false);
    let xfs_default = variant("xfs", "default");
    assert_eq!(xfs_default["verdict"], "inconsistent");
    let per_repeat: Vec<(&str, f64)> = xfs_default["repeats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["verdict"].as_str().unwrap(),
                r["max_pause_ms"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(per_repeat, [("stalls", 2800.0), ("no_stalls", 150.0)]);
    // The experiment's measurement columns come with each repeat, the others do not.
    assert_eq!(
        xfs_default["repeats"][1]["measurements"],
        serde_json::json!([{"name": "workload.max_gap_ms", "value": 4000.0, "unit": "ms"}])
    );
    assert_eq!(cell("xfs")["default_verdict"], "inconsistent");
    assert_eq!(
        variant("xfs", "perf-disable-shared-mem")["verdict"],
        "no_stalls"
    );
    assert_eq!(matrix["cells"], 2);
    assert_eq!(matrix["consistent_cells"], 1);
    let conclusions: Vec<&str> = matrix["conclusions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(
        conclusions.contains(&"Never stalled in any cell: perf-disable-shared-mem."),
        "{conclusions:?}"
    );
    assert!(
        conclusions.contains(&"Repeats of default disagreed in 1 of 2 cells: filesystem xfs."),
        "{conclusions:?}"
    );
    assert!(
        conclusions.contains(&"1 of 2 cells were consistent across their repeats (up to 2 each)."),
        "{conclusions:?}"
    );

    // The same in the terminal and the HTML: per-repeat numbers of the inconsistent cell.
    let out = pauselab(&["report", "--matrix", dir.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("inconsistent: stalls 2.8 s, no stalls 150 ms")
            && text.contains("stalls (2.7 s / 2.8 s / 2.9 s)")
            && text.contains("Conclusions: "),
        "{text}"
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("repeat 2: no stalls 150 ms") && html.contains("v-inconsistent"));
    assert!(
        html.contains("2.7 s / 2.8 s / 2.9 s"),
        "the spread in the HTML too"
    );
}

#[test]
fn a_matrix_directory_listing_a_path_outside_it_is_refused() {
    let dir = out_dir("report-matrix-escape");
    let doc = serde_json::json!({
        "format": "pauselab-matrix", "experiment": "x", "cells": [], "repeats": 1,
        "duration_s": 1.0, "expected_duration_s": 1.0, "bundles": ["../elsewhere"],
    });
    std::fs::write(dir.join("matrix.json"), doc.to_string()).unwrap();
    let out = pauselab(&["report", "--matrix", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("matrix.json: bundle name \"../elsewhere\" is not a directory of the matrix"),
        "{err}"
    );
}

/// (GC pauses, collections with a heap summary before and after) per `jfr print --json`.
fn jdk_counts(jfr: &Path) -> (usize, usize) {
    let events = jfr_print(
        Path::new(JDK17),
        jfr,
        &["jdk.GCPhasePause", "jdk.GCHeapSummary"],
    );
    let pauses = events
        .iter()
        .filter(|e| e["type"] == "jdk.GCPhasePause")
        .count();
    let when = |w: &str| -> std::collections::BTreeSet<u64> {
        events
            .iter()
            .filter(|e| e["type"] == "jdk.GCHeapSummary" && e["values"]["when"] == w)
            .map(|e| e["values"]["gcId"].as_u64().unwrap())
            .collect()
    };
    let heap = when("Before GC").intersection(&when("After GC")).count();
    (pauses, heap)
}

#[test]
fn a_jfr_recording_is_charted_like_its_gc_log() {
    let Some(run) = record(JDK17, "-XX:+UseG1GC") else {
        return;
    };
    let (pauses, heap_samples) = jdk_counts(&run.jfr);
    assert!(pauses >= 3 && heap_samples >= 3, "{pauses} {heap_samples}");
    let page = run.jfr.with_extension("html");
    let out = pauselab(&[
        "report",
        "--json",
        "--html",
        page.to_str().unwrap(),
        run.jfr.to_str().unwrap(),
        run.log.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sections = doc["sections"].as_array().unwrap();
    assert_eq!(sections.len(), 2);
    assert!(sections[0]["title"].as_str().unwrap().contains("(JFR)"));
    let recording = &sections[0]["variants"][0];
    assert_eq!(recording["gc_pauses"], pauses);
    assert_eq!(recording["hiccups"]["stats"]["count"], pauses);
    // The GC log of the same JVM: as many pauses, or a few more from before the
    // recording started.
    let logged = sections[1]["variants"][0]["gc_pauses"].as_u64().unwrap();
    assert!(
        logged >= pauses as u64 && logged <= pauses as u64 + 5,
        "{logged} vs {pauses}"
    );

    // The same charts as the log's: percentiles, timeline with a marker per pause, heap
    // after GC and pauses by type.
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("(exact, from the recording)") && html.contains("(exact, from the log)"),
        "each longest pause names where it was read"
    );
    assert_eq!(figures(&html, "percentiles").len(), 2);
    let timeline = figures(&html, "timeline")[0];
    assert_eq!(timeline.matches(r#"class="marker""#).count(), pauses);
    let gc_charts = figures(&html, "gc");
    assert_eq!(gc_charts.len(), 4, "heap and pauses of each input");
    assert!(gc_charts[0].contains("Heap before and after GC"));

    // The heap series has one point per collection with both summaries (min/max per
    // bucket may fold neighbours, never add points).
    let analyze = pauselab(&["analyze", "--json", run.jfr.to_str().unwrap()]);
    let report: serde_json::Value = serde_json::from_slice(&analyze.stdout).unwrap();
    assert_eq!(report["memory"]["heap_samples"], heap_samples);

    // A recording numbers its events, not lines: its worst pauses say so on the page too.
    let section = element(
        &html,
        r#"<section class="bundle" id="gc-rec-jfr""#,
        "</section>",
    );
    let worst = element(section, r#"<table class="worst">"#, "</table>");
    assert!(worst.contains(">rec.jfr event "), "{worst}");
    assert!(!worst.contains(">rec.jfr:"), "{worst}");

    // In the terminal, the recording's worst pauses and findings as `analyze` prints them.
    let jfr = run.jfr.display().to_string();
    let (r, a) = (report_text(&jfr), analyze_findings_text(&jfr));
    assert!(r.contains(&a), "{r}\n=====\n{a}");
}

#[test]
fn a_cut_jfr_recording_is_a_one_line_error() {
    let Some(run) = record(JDK17, "-XX:+UseSerialGC") else {
        return;
    };
    let bytes = std::fs::read(&run.jfr).unwrap();
    let cut = run.jfr.with_file_name("cut.jfr");
    std::fs::write(&cut, &bytes[..bytes.len() / 3]).unwrap();
    let out = pauselab(&["report", cut.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("cut.jfr"), "{stderr}");
}

#[test]
fn swap_and_reclaim_are_drawn_when_they_moved() {
    let with_host = |name: &str, swap_in: &[u64]| {
        let copy = edited_bundle(name, |_, _| {});
        let mut csv = String::from(
            "t_s,cpu_iowait_pct,swap_in_pages_per_s,swap_out_pages_per_s,major_faults_per_s,direct_scan_pages_per_s\n0,0,,,,\n",
        );
        for (t, pages) in swap_in.iter().enumerate() {
            csv.push_str(&format!("{},0,{pages},{},{pages},0\n", t + 1, pages / 2));
        }
        std::fs::write(copy.join("host.csv"), csv).unwrap();
        let html = copy.with_extension("html");
        let out = pauselab(&[
            "report",
            copy.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read_to_string(html).unwrap()
    };
    let swapping = with_host("report-swapping", &[0, 0, 4800, 12000, 300, 0]);
    assert!(swapping.contains("Host: swap and reclaim"));
    for series in [
        "swapped in, pages/s",
        "swapped out, pages/s",
        "major faults/s",
    ] {
        assert!(swapping.contains(series), "{series}");
    }
    let quiet = with_host("report-no-swapping", &[0, 0, 0]);
    assert!(!quiet.contains("Host: swap and reclaim"));
}

/// Runs `args` as user `nobody` (uid 65534), who plants links for root's pauselab.
fn as_nobody(args: &[&str]) {
    let status = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args(args)
        .status()
        .unwrap();
    assert!(status.success(), "{args:?}");
}

/// The one line pauselab printed on stderr for a refused run, which must exit 1.
fn refused(out: Output) -> String {
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

/// Root's report never writes through a link another user planted where its charts or its
/// page go: a link named like a chart, to a root-only file, is refused naming the path.
#[test]
fn outputs_never_follow_a_link_another_user_planted() {
    use std::os::unix::fs::PermissionsExt;
    let dir = out_dir("report-planted");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let clean = dir.join("clean");
    let out = pauselab(&[
        "report",
        &bundle("lab-kernel6.1"),
        "--png",
        clean.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut charts: Vec<String> = std::fs::read_dir(&clean)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    charts.sort();
    let secret = dir.join("secret");
    std::fs::write(&secret, "root only\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let plant = |target: &Path| {
        as_nobody(&[
            "ln",
            "-s",
            secret.to_str().unwrap(),
            target.to_str().unwrap(),
        ]);
    };
    // A directory like /tmp, where anyone may create names.
    let shared = dir.join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();

    // --png DIR that the other user made, every chart name a link.
    let theirs = shared.join("charts");
    as_nobody(&["mkdir", theirs.to_str().unwrap()]);
    for name in &charts {
        plant(&theirs.join(name));
    }
    let out = pauselab(&[
        "report",
        &bundle("lab-kernel6.1"),
        "--png",
        theirs.to_str().unwrap(),
    ]);
    let err = refused(out);
    assert!(
        err.contains(&format!(
            "--png {}: cannot write charts there: belongs to uid 65534",
            theirs.display()
        )),
        "{err}"
    );
    // A directory of root's own that was open to others when the links were planted.
    let own = dir.join("own");
    std::fs::create_dir(&own).unwrap();
    std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o1777)).unwrap();
    for name in &charts {
        plant(&own.join(name));
    }
    std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = pauselab(&[
        "report",
        &bundle("lab-kernel6.1"),
        "--png",
        own.to_str().unwrap(),
    ]);
    let err = refused(out);
    assert!(
        err.contains(&format!("{}/", own.display())) && err.contains(".png: is a symbolic link"),
        "{err}"
    );
    // --html OUT: a link planted under that name in the shared directory.
    let page = shared.join("report.html");
    plant(&page);
    let out = pauselab(&[
        "report",
        &bundle("lab-kernel6.1"),
        "--html",
        page.to_str().unwrap(),
    ]);
    let err = refused(out);
    assert!(
        err.contains(&format!(
            "{}: cannot write the report: is a symbolic link",
            page.display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "root only\n");
    let mode = std::fs::metadata(&secret).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

/// A bundle given twice (two names for it, or listed twice in matrix.json) counts once in
/// a matrix: refused in one line instead of reading it again and again.
#[test]
fn a_bundle_given_twice_is_refused() {
    let dir = out_dir("report-twice");
    let same = dir.join("again");
    std::os::unix::fs::symlink(bundle("lab-kernel6.1"), &same).unwrap();
    let out = pauselab(&[
        "report",
        "--matrix",
        &bundle("lab-kernel6.1"),
        same.to_str().unwrap(),
    ]);
    let err = refused(out);
    assert!(
        err.contains(&format!("{}: the same bundle as ", same.display())),
        "{err}"
    );
}
