//! `pauselab report` on the committed lab-like bundles, real jHiccup logs and a real GC log:
//! the numbers in the HTML, JSON and terminal output against `pauselab hlog` on the same
//! files, the number of series, the labels, the matrix, the SLA exit code and bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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
    assert_eq!(
        html.matches(r#"<span class="badge v-stalls">stalls</span>"#)
            .count(),
        2
    );
    assert!(html.contains("<dt>kernel</dt><dd>3.2.0-4-amd64</dd>"));
    // Self-contained: no scripts, no fetched resources.
    for forbidden in ["<script", "<link", "@import", "url(", " src=", "https://"] {
        assert!(!html.contains(forbidden), "{forbidden}");
    }
}

#[test]
fn matrix_rows_are_kernels_columns_jdks_and_cells_link_to_charts() {
    let dir = out_dir("report-matrix");
    let page = dir.join("matrix.html");
    let out = pauselab(&[
        "report",
        "--matrix",
        &bundle("c4-kernel3.2"),
        &bundle("lab-kernel6.1"),
        "--html",
        page.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let matrix = &doc["matrix"];
    assert_eq!(matrix["jdks"], serde_json::json!(["8", "17"]));
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

    let html = std::fs::read_to_string(&page).unwrap();
    let table = &html[html.find(r#"<table class="matrix">"#).unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<th>JDK ").count(), 2);
    assert!(
        table.contains("vulnerable: yes")
            && table.contains("vulnerable: no")
            && table.contains("not run")
    );
    // Every cell links to a chart that exists in the page.
    let links: Vec<&str> = table
        .split(r##"href="#"##)
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap()])
        .collect();
    assert_eq!(links.len(), 3);
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
    // 1 percentile chart, 3 timelines, 2 host charts.
    assert_eq!(names.len(), 6, "{names:?}");
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
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(figures(&html, "percentiles").len(), 2);
    // GC pause markers beside the GC log's timeline.
    let timeline = figures(&html, "timeline")[0];
    assert_eq!(timeline.matches(r#"class="marker""#).count(), pause_lines);
    // Heap after GC (one series) and pauses over time, one series per pause type.
    let gc_charts = figures(&html, "gc");
    assert_eq!(gc_charts.len(), 2);
    assert!(gc_charts[0].contains("Heap after GC"));
    assert_eq!(gc_charts[0].matches(r#"class="series""#).count(), 1);
    let young = gc_text.contains(") Pause Young") as usize;
    let remark = gc_text.contains(") Pause Remark") as usize;
    assert!(young + remark > 0);
    assert!(gc_charts[1].matches(r#"class="series""#).count() >= young + remark);
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
