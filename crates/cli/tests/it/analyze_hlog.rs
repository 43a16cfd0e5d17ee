//! `--hlog` output read back by Java's HistogramLogProcessor (HdrHistogram 2.2.2 from Maven
//! Central): its percentiles must be the ones pauselab reports for the same pauses.

use crate::analyze_support;
use crate::java_tools;

use std::path::Path;
use std::process::Command;

use analyze_support::{bin, fixtures, shared_gclogs};
use java_tools::hdrhistogram_jar;

/// Runs HistogramLogProcessor on `hlog` and returns the rows of its percentile
/// distribution (value in ms, percentile) and its total count.
fn java_distribution(hlog: &Path) -> (Vec<(f64, f64)>, u64) {
    let out_base = hlog.with_extension("java");
    let out = Command::new("java")
        .arg("-cp")
        .arg(hdrhistogram_jar())
        .arg("org.HdrHistogram.HistogramLogProcessor")
        .args([
            "-i",
            hlog.to_str().unwrap(),
            "-tag",
            "gc",
            "-o",
            out_base.to_str().unwrap(),
        ])
        .output()
        .expect("java is needed for this test");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(format!("{}.hgrm", out_base.display())).unwrap();
    let mut rows = Vec::new();
    let mut total = 0;
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() >= 3 && !line.starts_with('#') {
            if let (Ok(v), Ok(p)) = (f[0].parse::<f64>(), f[1].parse::<f64>()) {
                rows.push((v, p));
            }
        }
        if let Some(rest) = line.strip_prefix("#[Max") {
            total = rest
                .rsplit('=')
                .next()
                .unwrap()
                .trim()
                .trim_end_matches(']')
                .parse()
                .unwrap();
        }
    }
    (rows, total)
}

fn analyze_with_hlog(log: &Path, mode: &str, hlog: &Path) -> serde_json::Value {
    let out = Command::new(bin())
        .args(["analyze", "--json", "--hlog-mode", mode, "--hlog"])
        .arg(hlog)
        .arg(log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Java prints 3 decimals of ms and reports a bucket's highest equivalent value; pauselab
/// reports the exact maximum: both within the histogram's 3 significant digits.
fn tolerance(ms: f64) -> f64 {
    (ms * 0.001).max(0.0015)
}

/// The value Java reports at the first row at or above `p`, and the one before it.
fn bracket(rows: &[(f64, f64)], p: f64) -> (f64, f64) {
    let i = rows.iter().position(|r| r.1 >= p).unwrap();
    (rows[i.saturating_sub(1)].0, rows[i].0)
}

#[test]
fn pauses_mode_percentiles_match_java_histogram_log_processor() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("analyze-hlog-pauses");
    std::fs::create_dir_all(&dir).unwrap();
    for log in [
        shared_gclogs().join("parallelgc.log.gz"),
        fixtures().join("g1-jdk17.log.gz"),
    ] {
        let hlog = dir.join(format!(
            "{}.hlog",
            log.file_name().unwrap().to_str().unwrap()
        ));
        let json = analyze_with_hlog(&log, "pauses", &hlog);
        let (rows, total) = java_distribution(&hlog);
        let p = &json["pauses"];
        assert_eq!(total, p["count"].as_u64().unwrap(), "{}", log.display());
        // Java prints 3 decimals of ms; rows at exactly 50% and 90% exist in its table.
        for (key, level) in [("p50_ms", 0.5), ("p90_ms", 0.9)] {
            let ours = p[key].as_f64().unwrap();
            let row = rows.iter().find(|r| r.1 == level).unwrap();
            assert!(
                (row.0 - ours).abs() <= tolerance(ours),
                "{key}: java {} ours {ours}",
                row.0
            );
        }
        for (key, level) in [("p99_ms", 0.99), ("p99_9_ms", 0.999)] {
            let ours = p[key].as_f64().unwrap();
            let (lo, hi) = bracket(&rows, level);
            let tol = tolerance(ours);
            assert!(
                lo - tol <= ours && ours <= hi + tol,
                "{key}: {ours} not in java's [{lo}, {hi}]"
            );
        }
        let java_max = rows.last().unwrap().0;
        let ours_max = p["max_ms"].as_f64().unwrap();
        assert!(
            (java_max - ours_max).abs() / ours_max < 0.001,
            "max: java {java_max} ours {ours_max}"
        );
    }
}

#[test]
fn hiccup_mode_counts_one_value_per_millisecond_tick() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("analyze-hlog-hiccup");
    std::fs::create_dir_all(&dir).unwrap();
    let log = fixtures().join("g1-jdk17.log.gz");
    let hlog = dir.join("g1.hlog");
    let json = analyze_with_hlog(&log, "hiccup", &hlog);
    let (rows, total) = java_distribution(&hlog);
    // Ticks from the first pause's start to the last pause's end, one value each (a pause
    // of p ms contributes its p corrected values); rounding costs at most one per pause.
    let worst = json["worst"].as_array().unwrap();
    assert!(!worst.is_empty());
    let text = String::from_utf8(
        Command::new("sh")
            .arg("-c")
            .arg(format!(
                "zcat {} | grep -E 'GC\\([0-9]+\\) Pause .*ms$'",
                log.display()
            ))
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    // Independent of the parser: uptime "[0.058s]" is the pause's end, the last field its length.
    let pauses: Vec<(f64, f64)> = text
        .lines()
        .map(|l| {
            let up = l
                .split("][")
                .nth(1)
                .unwrap()
                .trim_end_matches('s')
                .parse::<f64>()
                .unwrap()
                * 1000.0;
            let d = l
                .rsplit(' ')
                .next()
                .unwrap()
                .trim_end_matches("ms")
                .parse::<f64>()
                .unwrap();
            (up - d, d)
        })
        .collect();
    let span_ms = pauses.last().unwrap().0 + pauses.last().unwrap().1 - pauses[0].0;
    let n = pauses.len() as f64;
    assert!(
        (total as f64 - span_ms).abs() <= n + 2.0,
        "count {total}, span {span_ms} ms, {n} pauses"
    );
    assert_eq!(
        rows.iter().find(|r| r.1 == 0.5).unwrap().0,
        0.0,
        "most ticks are zeros"
    );
    let ours_max = json["pauses"]["max_ms"].as_f64().unwrap();
    assert!((rows.last().unwrap().0 - ours_max).abs() / ours_max < 0.001);
}

/// `--hlog FILE` is never written through a link under that name: refused in one line
/// naming it, and the file it points to is left as it was.
#[test]
fn the_hlog_file_is_not_written_through_a_link() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("analyze-hlog-link");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let kept = dir.join("kept");
    std::fs::write(&kept, "keep\n").unwrap();
    let link = dir.join("pauses.hlog");
    std::os::unix::fs::symlink(&kept, &link).unwrap();
    let out = Command::new(bin())
        .args(["analyze", "--hlog"])
        .arg(&link)
        .arg(fixtures().join("g1-jdk17.log.gz"))
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "{}: cannot create the --hlog file: is a symbolic link",
            link.display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "keep\n");
}
