//! `pauselab hlog` on real jHiccup logs: numbers against Java HdrHistogram 2.2.2, both the
//! values it reported (expected.json) and its HistogramLogProcessor run side by side.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hdrhistogram::Histogram;
use pauselab_pause::interval_log::IntervalLogWriter;

use crate::java_tools;
use java_tools::hdrhistogram_jar;

fn pauselab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .args(args)
        .output()
        .expect("run pauselab")
}

/// The published jHiccup logs in the repository (fixtures/reference/jhiccup).
fn jhiccup_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/reference/jhiccup")
}

fn expected() -> serde_json::Map<String, serde_json::Value> {
    let text = std::fs::read_to_string(jhiccup_dir().join("expected.json")).unwrap();
    serde_json::from_str::<serde_json::Value>(&text)
        .unwrap()
        .as_object()
        .unwrap()
        .clone()
}

#[test]
fn json_matches_java_values_for_every_real_log() {
    let expected = expected();
    let dir = jhiccup_dir();
    let paths: Vec<String> = expected
        .keys()
        .map(|n| dir.join(n).display().to_string())
        .collect();
    let mut args = vec!["hlog", "--json"];
    args.extend(paths.iter().map(String::as_str));
    let out = pauselab(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let files = doc["files"].as_array().unwrap();
    assert_eq!(files.len(), expected.len());
    for (file, (name, want)) in files.iter().zip(&expected) {
        assert!(file["file"].as_str().unwrap().ends_with(name.as_str()));
        assert_eq!(file["intervals"], want["intervals"], "{name}");
        for key in ["count", "p50", "p99", "p99_9", "p99_99", "max"] {
            assert_eq!(file["stats"][key], want[key], "{name} {key}");
        }
    }
}

#[test]
fn table_lists_one_row_per_log_in_ms() {
    let dir = jhiccup_dir();
    let worst = dir.join("java8x4-async-off_c4_2.jHiccup");
    let good = dir.join("java8x4-no-perf_c4_2.jHiccup");
    let out = pauselab(&["hlog", worst.to_str().unwrap(), good.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("file") && lines[0].contains("p99.99"));
    // max 4177526783 ns and 28180479 ns (expected.json), shown in ms.
    assert!(
        lines[1].contains("java8x4-async-off_c4_2.jHiccup") && lines[1].ends_with("4177.527"),
        "{text}"
    );
    assert!(lines[2].ends_with("28.180"), "{text}");
    assert_eq!(lines[3], "(values in ms)");
}

fn java_log_processor(args: &[&str]) -> String {
    let out = Command::new("java")
        .arg("-cp")
        .arg(hdrhistogram_jar())
        .arg("org.HdrHistogram.HistogramLogProcessor")
        .args(args)
        .env("TZ", "UTC")
        .output()
        .expect("java is needed for this test");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn ours(args: &[&str]) -> String {
    let out = pauselab(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A tagged log written by pauselab's writer: two tags interleaved, absolute start time.
fn write_tagged_log(path: &Path) {
    let mut text = Vec::new();
    for (tag, scale) in [("gc", 3_u64), ("safepoint", 1)] {
        let mut out = Vec::new();
        let mut writer = IntervalLogWriter::new(&mut out, 1_700_000_000.25, Some(tag)).unwrap();
        for i in 0..40_u64 {
            let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
            for v in 0..500 {
                h.record(15_000 + (v * v * 37 + i * 1_000_003) * scale)
                    .unwrap();
            }
            if i == 17 {
                h.record(2_345_678_901).unwrap(); // one 2.3 s stall
            }
            writer.write_interval(i as f64, 1.0, &h).unwrap();
        }
        writer.finish().unwrap();
        text.push(String::from_utf8(out).unwrap());
    }
    // Interleave the data lines of both tags under one header.
    let (a, b) = (
        text[0].lines().collect::<Vec<_>>(),
        text[1].lines().collect::<Vec<_>>(),
    );
    let header = a.iter().take_while(|l| !l.starts_with("Tag=")).count();
    let mut merged: Vec<&str> = a[..header].to_vec();
    for (x, y) in a[header..].iter().zip(&b[header..]) {
        merged.push(x);
        merged.push(y);
    }
    std::fs::write(path, merged.join("\n") + "\n").unwrap();
}

#[test]
fn hgrm_is_byte_identical_to_java_histogram_log_processor() {
    let dir = jhiccup_dir();
    for name in expected().keys() {
        let file = dir.join(name);
        let file = file.to_str().unwrap();
        let java = java_log_processor(&["-i", file]);
        assert!(java.contains("#[Max     ="), "{java}");
        assert_eq!(ours(&["hlog", "--hgrm", file]), java, "{name}");
    }
    // Time ranges (relative to StartTime / the first interval).
    for name in [
        "java8x4-async-off_c4_2.jHiccup",
        "java8x4_jh-async-on_c4_2.hlog",
    ] {
        let file = dir.join(name);
        let file = file.to_str().unwrap();
        let java = java_log_processor(&["-i", file, "-start", "3600", "-end", "7200.5"]);
        assert_eq!(
            ours(&["hlog", "--hgrm", file, "--start", "3600", "--end", "7200.5"]),
            java,
            "{name}"
        );
    }
    // Our own writer's tagged output, read by Java and by us, tag by tag.
    let log = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hlog-tagged.hlog");
    write_tagged_log(&log);
    let log = log.to_str().unwrap();
    for tag in ["gc", "safepoint"] {
        let java = java_log_processor(&["-i", log, "-tag", tag, "-start", "5", "-end", "30"]);
        assert!(java.contains("Total count    =        13001"), "{java}");
        assert_eq!(
            ours(&["hlog", "--hgrm", log, "--tag", tag, "--start", "5", "--end", "30"]),
            java,
            "{tag}"
        );
    }
}

#[test]
fn bad_input_is_one_clear_line_and_exit_1() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
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
    check(
        &["hlog", "/nonexistent/x.hlog"],
        "/nonexistent/x.hlog: No such file",
    );

    let garbage = tmp.join("hlog-garbage.hlog");
    std::fs::write(
        &garbage,
        "#[Histogram log format version 1.3]\nthis is not a log\n",
    )
    .unwrap();
    check(
        &["hlog", garbage.to_str().unwrap()],
        "hlog-garbage.hlog:2: expected the interval start",
    );

    let real = std::fs::read_to_string(jhiccup_dir().join("java8x4-no-perf_c4_2.jHiccup")).unwrap();
    let truncated = tmp.join("hlog-truncated.hlog");
    std::fs::write(&truncated, &real[..real.len() / 2]).unwrap();
    check(&["hlog", truncated.to_str().unwrap()], "cut short");

    let tagged = tmp.join("hlog-tagged-only.hlog");
    write_tagged_log(&tagged);
    check(
        &["hlog", tagged.to_str().unwrap()],
        "the log has: gc, safepoint (choose one with --tag)",
    );
    check(
        &["hlog", tagged.to_str().unwrap(), "--tag", "nope"],
        "no tag nope intervals",
    );
    check(
        &[
            "hlog",
            tagged.to_str().unwrap(),
            "--tag",
            "gc",
            "--start",
            "500",
        ],
        "check --start/--end",
    );

    let empty = tmp.join("hlog-empty.hlog");
    std::fs::write(&empty, "").unwrap();
    check(&["hlog", empty.to_str().unwrap()], "no interval histograms");
}

#[test]
fn stdin_and_gzip_give_the_same_numbers_as_the_file() {
    use std::io::Write;
    use std::process::Stdio;
    let (name, _) = expected().into_iter().next().unwrap();
    let path = jhiccup_dir().join(&name);
    let file_json = pauselab(&["hlog", "--json", path.to_str().unwrap()]);
    assert!(file_json.status.success());
    let numbers = |out: &[u8]| -> serde_json::Value {
        let mut v: serde_json::Value = serde_json::from_slice(out).unwrap();
        let file = &mut v["files"][0];
        file.as_object_mut().unwrap().remove("file");
        file.clone()
    };
    let want = numbers(&file_json.stdout);

    let mut child = Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .args(["hlog", "--json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&bytes).unwrap());
    let from_stdin = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(from_stdin.status.success());
    assert_eq!(numbers(&from_stdin.stdout), want);

    let gz = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("stdin-test.hlog.gz");
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("gzip -c '{}' > '{}'", path.display(), gz.display()))
        .status()
        .unwrap();
    assert!(status.success());
    let from_gz = pauselab(&["hlog", "--json", gz.to_str().unwrap()]);
    assert!(from_gz.status.success());
    assert_eq!(numbers(&from_gz.stdout), want);
}
