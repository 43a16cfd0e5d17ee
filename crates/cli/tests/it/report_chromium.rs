//! The HTML report in a real browser: headless Chromium (Debian's `chromium`, installed by
//! `make test` through TEST_PACKAGES) loads it without console messages, its DOM holds the
//! findings, the worst pauses, the charts and tables, nothing scrolls sideways at 1280 px, and
//! screenshots at desktop and phone widths are kept as test artefacts in
//! target/report-artifacts/.

use std::path::{Path, PathBuf};
use std::process::Command;

fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .join("report-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn chromium() -> String {
    let name = std::env::var("PAUSELAB_CHROMIUM").unwrap_or_else(|_| "chromium".to_string());
    let found = Command::new(&name).arg("--version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "{name} not found: install Debian's chromium (scripts/setup.sh chromium, as make test does)"
    );
    name
}

struct Browser {
    stdout: String,
    console: Vec<String>,
}

/// Runs headless Chromium on `page` with a fresh profile; returns stdout and the page's
/// console messages (logged to stderr as `...:CONSOLE...` lines).
fn browse(page: &Path, profile: &str, extra: &[&str]) -> Browser {
    let profile_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(profile);
    let _ = std::fs::remove_dir_all(&profile_dir);
    let out = Command::new("timeout")
        .arg("120")
        .arg(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile_dir.display()))
        .args(extra)
        .arg(format!("file://{}", page.canonicalize().unwrap().display()))
        .output()
        .expect("run chromium");
    let _ = std::fs::remove_dir_all(&profile_dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed: {stderr}");
    Browser {
        stdout: String::from_utf8_lossy(&out.stdout).to_string(),
        console: stderr
            .lines()
            .filter(|l| l.contains(":CONSOLE"))
            .map(str::to_string)
            .collect(),
    }
}

/// A copy of the page at `path` with `script` run on load (the report itself has none):
/// the page measures itself and writes the result into its title.
fn with_script(html: &str, path: &Path, script: &str) -> PathBuf {
    std::fs::write(
        path,
        html.replacen("</head>", &format!("<script>{script}</script></head>"), 1),
    )
    .unwrap();
    path.to_path_buf()
}

#[test]
fn report_loads_in_chromium_without_console_messages() {
    let dir = artifacts();
    let page = dir.join("report.html");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let bundles = fixtures.join("bundles");
    // A GC log with findings (a swapped heap), beside two bundles.
    let gc_log = fixtures.join("gclogs/parallel-swapped-jdk17.log");
    let out = Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .args(["report", "--matrix"])
        .arg(bundles.join("c4-kernel3.2"))
        .arg(bundles.join("lab-kernel6.1"))
        .arg(&gc_log)
        .args(["--sla", "p99.9=20ms,max=200ms", "--html"])
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The detector works: a page that logs to the console is caught.
    let noisy = dir.join("console-check.html");
    std::fs::write(
        &noisy,
        "<!DOCTYPE html><script>console.error('console-check')</script>",
    )
    .unwrap();
    let control = browse(&noisy, "chromium-control", &["--dump-dom"]);
    assert!(
        control.console.iter().any(|l| l.contains("console-check")),
        "{:?}",
        control.console
    );

    // The report has no script: a copy with one measures the laid-out page at 1280 px and
    // writes into the title how wide it is and which tables are wider than their box.
    let html = std::fs::read_to_string(&page).unwrap();
    let measured = with_script(
        &html,
        &dir.join("report-measured.html"),
        r#"addEventListener("load", () => { document.title = "width " + document.documentElement.scrollWidth + " of " + innerWidth + "; wider than their box: [" + [...document.querySelectorAll(".scroll")].filter(e => e.scrollWidth > e.clientWidth).map(e => e.closest("section").id).join(" ") + "]"; })"#,
    );
    let dom = browse(
        &measured,
        "chromium-dom",
        &["--dump-dom", "--window-size=1280,2000"],
    );
    assert!(
        dom.console.is_empty(),
        "console messages: {:?}",
        dom.console
    );
    assert!(dom.stdout.contains(r#"<table class="matrix">"#));
    let title = dom.stdout.split("<title>").nth(1).unwrap();
    let title = &title[..title.find("</title>").unwrap()];
    let (width, rest) = title
        .strip_prefix("width ")
        .and_then(|t| t.split_once(" of "))
        .unwrap_or_else(|| panic!("the page did not measure itself: {title}"));
    let (viewport, wider) = rest.split_once("; ").unwrap();
    assert!(
        width.parse::<u32>().unwrap() <= viewport.parse::<u32>().unwrap(),
        "the page scrolls sideways at 1280 px: {title}"
    );
    assert_eq!(wider, "wider than their box: []", "{title}");

    // The GC log's findings, every one of `analyze --json`, and its worst pauses.
    let analysis = Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .args(["analyze", "--json"])
        .arg(&gc_log)
        .output()
        .unwrap();
    let analysis: serde_json::Value = serde_json::from_slice(&analysis.stdout).unwrap();
    let findings = analysis["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    assert_eq!(
        dom.stdout.matches(r#"<article class="finding "#).count(),
        findings.len()
    );
    for f in findings {
        let rule = f["rule"].as_str().unwrap();
        assert!(
            dom.stdout.contains(&format!(r#"data-rule="{rule}""#)),
            "{rule}"
        );
    }
    // The GC log's, and that of the lab bundle's variant with a GC log (folded).
    assert_eq!(dom.stdout.matches(r#"<table class="worst">"#).count(), 2);
    // The charts: percentiles and timelines of each section, the GC log's heap and pauses.
    assert_eq!(
        dom.stdout
            .matches(r#"<figure class="percentiles">"#)
            .count(),
        3
    );
    assert!(dom.stdout.matches(r#"<figure class="timeline""#).count() >= 3);
    assert_eq!(dom.stdout.matches(r#"<figure class="gc">"#).count(), 2);
    assert_eq!(
        dom.stdout.matches("<svg").count(),
        html.matches("<svg").count(),
        "every chart survives parsing"
    );
    assert!(dom.stdout.matches("<svg").count() >= 10);

    for (name, size) in [
        ("report-wide.png", "1400,2400"),
        ("report-phone.png", "390,2400"),
    ] {
        let shot = dir.join(name);
        let _ = std::fs::remove_file(&shot);
        let run = browse(
            &page,
            "chromium-shot",
            &[
                &format!("--window-size={size}"),
                &format!("--screenshot={}", shot.display()),
            ],
        );
        assert!(run.console.is_empty(), "{:?}", run.console);
        let png = std::fs::read(&shot).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
        assert_eq!(
            width,
            size.split(',').next().unwrap().parse::<u32>().unwrap()
        );
        assert!(
            png.len() > 50_000,
            "{name} looks blank ({} bytes)",
            png.len()
        );
    }
}

/// Copies the directory `from` (files and directories only) to `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn a_noisy_bundles_host_noise_is_drawn_under_its_timelines() {
    let dir = artifacts();
    let bundles = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/bundles");
    // The quiet bundle with the host series of a real run on a busy host, and that run's
    // noisy lines.
    let bundle = dir.join("noisy-bundle");
    let _ = std::fs::remove_dir_all(&bundle);
    copy_dir(&bundles.join("lab-kernel6.1"), &bundle);
    std::fs::copy(bundles.join("host-busy.csv"), bundle.join("host.csv")).unwrap();
    let noisy = [
        "before the run: CPU pressure 98 % (some avg10, limit 20 %)",
        "during the run: other processes used 25 % of the CPUs or more in 65 of 65 s (t = 1-66 s, peak 100 %); busiest: rustc 40 % (9 processes), java 6 % (5 processes)",
    ];
    let mut verdict: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bundle.join("verdict.json")).unwrap()).unwrap();
    verdict["noisy"] = serde_json::json!(noisy);
    std::fs::write(bundle.join("verdict.json"), verdict.to_string()).unwrap();
    let page = dir.join("noisy.html");
    let out = Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .arg("report")
        .arg(&bundle)
        .arg("--html")
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Laid out at 1280 px (one chart column), the noise chart is drawn in the same box as
    // each timeline above it, so a second of the run is at one x in all of them.
    let html = std::fs::read_to_string(&page).unwrap();
    let measured = with_script(
        &html,
        &dir.join("noisy-measured.html"),
        r#"addEventListener("load", () => { const box = e => { const r = e.querySelector("svg").getBoundingClientRect(); return r.left + "-" + r.right; }; document.title = "noise " + [...document.querySelectorAll("figure.noise")].map(box).join(" ") + "; timelines " + [...new Set([...document.querySelectorAll("figure.timeline")].map(box))].join(" "); })"#,
    );
    let dom = browse(
        &measured,
        "chromium-noise",
        &["--dump-dom", "--window-size=1280,2000"],
    );
    assert!(dom.console.is_empty(), "{:?}", dom.console);
    let title = dom.stdout.split("<title>").nth(1).unwrap();
    let title = &title[..title.find("</title>").unwrap()];
    let (noise, timelines) = title
        .strip_prefix("noise ")
        .and_then(|t| t.split_once("; timelines "))
        .unwrap_or_else(|| panic!("the page did not measure itself: {title}"));
    assert!(!noise.is_empty() && !noise.contains(' '), "{title}");
    assert_eq!(noise, timelines, "{title}");
    // The chart survives parsing with its four signals and three thresholds, and the
    // verdict's noisy lines are under it.
    let figure = dom
        .stdout
        .split(r#"<figure class="noise">"#)
        .nth(1)
        .unwrap();
    let figure = &figure[..figure.find("</figure>").unwrap()];
    assert_eq!(figure.matches("<polyline").count(), 4, "{figure}");
    assert_eq!(figure.matches(r#"<line class="level""#).count(), 3);
    let caption = figure.split("<figcaption").nth(1).unwrap();
    for line in noisy {
        let line = line.replace('&', "&amp;");
        assert!(caption.contains(&line), "{line} missing from {caption}");
    }
    assert_eq!(
        dom.stdout.matches("<svg").count(),
        html.matches("<svg").count()
    );

    let shot = dir.join("noisy-wide.png");
    let _ = std::fs::remove_file(&shot);
    let run = browse(
        &page,
        "chromium-noise-shot",
        &[
            "--window-size=1280,3200",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    assert!(run.console.is_empty(), "{:?}", run.console);
    assert!(std::fs::metadata(&shot).unwrap().len() > 50_000);
}
