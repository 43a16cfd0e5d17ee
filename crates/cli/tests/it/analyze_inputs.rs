//! Inputs: rotated sets, stdin, and bad input (binary, truncated, interleaved, empty,
//! missing, directory): a clear one-line message naming the file, never a panic.

use crate::analyze_support;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use analyze_support::{analyze_json, bin, fixtures, gcviewer_sample, run};

fn tmp(name: &str) -> PathBuf {
    analyze_support::fresh_dir("analyze-inputs", name)
}

/// `dir/gc.log`: GCViewer's sample `name` repeated to at least `bytes`, and how many copies.
fn repeated_sample(dir: &std::path::Path, name: &str, bytes: usize) -> (PathBuf, usize) {
    let sample = gcviewer_sample(name);
    let copies = bytes / sample.len() + 1;
    let log = dir.join("gc.log");
    std::fs::write(&log, sample.repeat(copies)).unwrap();
    (log, copies)
}

fn fixture_text(name: &str) -> String {
    let out = Command::new("gzip")
        .arg("-dc")
        .arg(fixtures().join(name))
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

fn one_line_error(out: &std::process::Output, needle: &str) {
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("pauselab: error: ") && err.contains(needle),
        "{err}"
    );
}

#[test]
fn rotated_set_given_by_base_name_is_read_oldest_first() {
    let dir = tmp("rotated");
    let text = fixture_text("g1-jdk17.log.gz");
    let lines: Vec<&str> = text.lines().collect();
    let third = lines.len() / 3;
    // Unified logging names rotated files cyclically: the numbers do not give the order.
    for (name, part) in [
        ("gc.log.1", &lines[..third]),
        ("gc.log.0", &lines[third..2 * third]),
        ("gc.log", &lines[2 * third..]),
    ] {
        std::fs::write(dir.join(name), part.join("\n") + "\n").unwrap();
    }
    let whole = dir.join("whole.log");
    std::fs::write(&whole, &text).unwrap();
    let expected = analyze_json(&[whole]);
    let json = analyze_json(&[dir.join("gc.log")]);
    assert_eq!(json["pauses"]["count"], expected["pauses"]["count"]);
    assert_eq!(json["pauses"]["total_ms"], expected["pauses"]["total_ms"]);
    let inputs: Vec<&str> = json["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["file"].as_str().unwrap())
        .collect();
    assert!(
        inputs[0].ends_with("gc.log.1")
            && inputs[1].ends_with("gc.log.0")
            && inputs[2].ends_with("/gc.log"),
        "{inputs:?}"
    );
    // Also when the set is given file by file, and gzip-compressed members count too.
    let json = analyze_json(&[dir.join("gc.log.0"), dir.join("gc.log")]);
    assert_eq!(json["pauses"]["count"], expected["pauses"]["count"]);
}

#[test]
fn stdin_compressed_or_not() {
    for (file, gz) in [
        ("serial-jdk25.log.gz", true),
        ("serial-jdk25.log.gz", false),
    ] {
        let bytes = if gz {
            std::fs::read(fixtures().join(file)).unwrap()
        } else {
            fixture_text(file).into_bytes()
        };
        let mut child = Command::new(bin())
            .args(["analyze", "--json", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&bytes).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            json,
            analyze_json(&[fixtures().join(file)])["pauses"]
                .clone()
                .pipe(|p| {
                    let mut j = json.clone();
                    j["pauses"] = p;
                    j
                })
        );
        assert!(json["pauses"]["count"].as_u64().unwrap() > 0);
    }
}

trait Pipe: Sized {
    fn pipe<T>(self, f: impl FnOnce(Self) -> T) -> T {
        f(self)
    }
}
impl<T> Pipe for T {}

#[test]
fn missing_file_directory_empty_and_binary_are_one_line_errors() {
    let dir = tmp("bad");
    one_line_error(
        &run(&[dir.join("nope.log").to_str().unwrap()]),
        "nope.log: no such file",
    );
    one_line_error(&run(&[dir.to_str().unwrap()]), "is a directory");
    let empty = dir.join("empty.log");
    std::fs::write(&empty, b"").unwrap();
    let out = run(&[empty.to_str().unwrap()]);
    one_line_error(&out, "empty.log");
    let binary = dir.join("core.bin");
    let bytes: Vec<u8> = (0..100_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&binary, bytes).unwrap();
    one_line_error(&run(&[binary.to_str().unwrap()]), "core.bin: binary data");
    let text = dir.join("notes.txt");
    std::fs::write(&text, "shopping list\neggs\n").unwrap();
    one_line_error(
        &run(&[text.to_str().unwrap()]),
        "notes.txt: no GC or safepoint log lines; line 1",
    );
    // OpenJ9's -Xverbosegclog writes XML from its first line on.
    let openj9 = dir.join("verbosegc.xml");
    std::fs::write(
        &openj9,
        "<?xml version=\"1.0\" ?>\n\n<verbosegc xmlns=\"http://www.ibm.com/j9/verbosegc\" version=\"0.40.0\">\n",
    )
    .unwrap();
    one_line_error(
        &run(&[openj9.to_str().unwrap()]),
        "as OpenJ9 and IBM J9 write; pauselab reads HotSpot's GC logs",
    );
    // -Xlog:gc:file=gc.log:none writes lines without the time of each.
    let undecorated = dir.join("undecorated.log");
    std::fs::write(
        &undecorated,
        "Using G1\nGC(0) Pause Young (Normal) (G1 Evacuation Pause) 23M->2M(64M) 1.531ms\n",
    )
    .unwrap();
    one_line_error(
        &run(&[undecorated.to_str().unwrap()]),
        "undecorated.log: no GC or safepoint log lines; line 1 reads: Using G1 (unified logging without decorations",
    );
    // Every collector's `gc*` log of JDK 11 to 25, written with `:none`: its decorations
    // taken off the fixtures' lines.
    for entry in std::fs::read_dir(fixtures()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !name.ends_with(".log.gz") {
            continue;
        }
        let bare: String = fixture_text(&name)
            .lines()
            .map(|l| {
                let mut rest = l;
                while let Some(after) = rest
                    .strip_prefix('[')
                    .and_then(|r| Some(&r[r.find(']')? + 1..]))
                {
                    rest = after;
                }
                format!("{}\n", rest.trim_start())
            })
            .collect();
        let path = dir.join(format!("bare-{name}").trim_end_matches(".gz"));
        std::fs::write(&path, bare).unwrap();
        let out = run(&[path.to_str().unwrap()]);
        if name.contains("jdk11") {
            // JDK 9-16 write stopped-time lines as JDK 8 did: those are read, the rest is
            // named in a warning.
            assert!(out.status.success(), "{name}: {out:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains(":1: unified logging without decorations (`-Xlog:...:none`)"),
                "{name}: {err}"
            );
        } else {
            one_line_error(
                &out,
                "(unified logging without decorations, `-Xlog:...:none`",
            );
        }
    }
}

#[test]
fn truncated_last_line_is_a_warning_with_its_line_number() {
    let dir = tmp("truncated");
    let text = fixture_text("parallel-jdk17.log.gz");
    let cut_at = text.rfind("Pause Young").unwrap() + 8;
    let path = dir.join("gc.log");
    std::fs::write(&path, &text[..cut_at]).unwrap();
    let line_no = text[..cut_at].lines().count();
    let out = run(&["--json", path.to_str().unwrap()]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("gc.log:{line_no}: the last line is cut off")),
        "{err}"
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["unparsed_lines"], 1);
    assert_eq!(json["first_unparsed"]["line"], line_no);
}

/// A JDK 6 CMS event whose young collection has a concurrent phase printed into it
/// (GCViewer's `SampleSun1_6_0CMS.txt`, lines 34 and 35), as the last lines of a log
/// without its final newline: the phase cut out of the event is whole, only the event
/// runs to the end of the input, and the warning names both lines.
#[test]
fn a_concurrent_phase_cut_out_of_the_last_line_is_not_cut_off() {
    let dir = tmp("phase-in-last-line");
    let sample = String::from_utf8(gcviewer_sample("SampleSun1_6_0CMS.txt")).unwrap();
    let lines: Vec<&str> = sample.lines().take(35).collect();
    assert!(
        lines[33].contains("[ParNew1.578: [CMS-concurrent-abortable-preclean: "),
        "{}",
        lines[33]
    );
    let text = lines.join("\n");
    let (cut, whole) = (dir.join("cut.log"), dir.join("whole.log"));
    std::fs::write(&cut, text.trim_end()).unwrap();
    std::fs::write(&whole, format!("{text}\n")).unwrap();
    let out = run(&["--json", cut.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("cut off"), "{err}");
    // The warning names the last line, and the event it ends by its first.
    assert!(
        err.contains("cut.log:35: the last line has no newline (the log was still being written); the event from line 34 that it ends parsed completely and was counted"),
        "{err}"
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["unparsed_lines"], 0, "{json}");
    let with_newline = analyze_json(&[whole]);
    assert_eq!(json["pauses"], with_newline["pauses"]);
    assert!(json["pauses"]["count"].as_u64() > Some(0));
    // Each young collection is named after its generation, the one a phase was cut out
    // of (`[ParNew1.578: [CMS-concurrent-...] ... ` then `: 118008K->...`) too.
    let par_new = lines.iter().filter(|l| l.contains("[ParNew")).count() as u64;
    let names = json["pauses"]["by_name"].as_array().unwrap();
    let named = |name: &str| {
        names
            .iter()
            .find(|n| n["name"] == name)
            .map(|n| n["count"].clone())
    };
    assert_eq!(named("ParNew"), Some(par_new.into()), "{names:?}");
    assert_eq!(named("GC"), None, "{names:?}");
}

/// A JDK 8 log cut inside its first event (a remark printing the heap and free lists,
/// which a JVM takes a while to write): a GC log whose one event is not understood, not
/// a file without GC log lines.
#[test]
fn a_log_cut_inside_its_first_event_is_a_gc_log() {
    let dir = tmp("cut-in-first-event");
    let sample = String::from_utf8(gcviewer_sample(
        "SampleSun1_8_0CMS_ScavengeBR_HeapAtGC_TenuringDist_PrintFLS.txt",
    ))
    .unwrap();
    let first_event: String = sample.lines().take(12).map(|l| format!("{l}\n")).collect();
    assert!(first_event.contains("[GC [YG occupancy: "), "{first_event}");
    let cut = dir.join("gc.log");
    std::fs::write(&cut, first_event).unwrap();
    let json = analyze_json(&[cut]);
    assert_eq!(json["pauses"]["count"], 0, "{json}");
    assert_eq!(json["unparsed_lines"], 1, "{json}");
    assert_eq!(json["first_unparsed"]["line"], 1, "{json}");
}

/// A JDK 8 log written on macOS (GCViewer's `SampleSun1_8_0Parallel_Apple.txt`): its
/// header's `/proc/meminfo:` line is the header's, not a line not understood. The same log
/// with its events indented by a space (a log appended after another's last words) reads
/// the same: a stamped event line is never a detail line.
#[test]
fn a_macos_header_and_indented_events_are_read() {
    let dir = tmp("macos-indented");
    let text = String::from_utf8(gcviewer_sample("SampleSun1_8_0Parallel_Apple.txt")).unwrap();
    assert!(text.contains("\n/proc/meminfo:\n"));
    let events = text
        .lines()
        .filter(|l| l.contains(": [GC") || l.contains(": [Full GC"))
        .count();
    assert!(events > 0);
    let log = dir.join("gc.log");
    std::fs::write(&log, &text).unwrap();
    let json = analyze_json(std::slice::from_ref(&log));
    assert_eq!(json["unparsed_lines"], 0, "{}", json["first_unparsed"]);
    assert_eq!(json["pauses"]["count"], events as u64);
    let indented: String = text
        .lines()
        .map(|l| {
            if l.contains(": [GC") || l.contains(": [Full GC") {
                format!(" {l}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let log = dir.join("indented.log");
    std::fs::write(&log, indented).unwrap();
    let again = analyze_json(std::slice::from_ref(&log));
    assert_eq!(again["unparsed_lines"], 0, "{}", again["first_unparsed"]);
    assert_eq!(again["pauses"], json["pauses"]);
}

/// A log cut into files where pause lines begin them, as rotation cuts it: the pause on a
/// file's first line began in the file before, and the set covers the time the whole log
/// covers, not more.
#[test]
fn a_rotated_set_covers_the_time_of_the_whole_log() {
    let dir = tmp("rotated-cover");
    let text = fixture_text("g1-jdk17.log.gz");
    let lines: Vec<&str> = text.lines().collect();
    let cuts: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains(" Pause Young"))
        .map(|(i, _)| i)
        .step_by(10)
        .skip(1)
        .collect();
    assert!(cuts.len() >= 2, "{cuts:?}");
    let whole = dir.join("whole.log");
    std::fs::write(&whole, &text).unwrap();
    let mut parts = Vec::new();
    let mut from = 0;
    for (n, &to) in cuts.iter().chain([&lines.len()]).enumerate() {
        let part = dir.join(format!("part{n}.log"));
        let body: String = lines[from..to].iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&part, body).unwrap();
        parts.push(part);
        from = to;
    }
    let one = analyze_json(&[whole]);
    let set = analyze_json(&parts);
    assert_eq!(set["pauses"]["count"], one["pauses"]["count"]);
    assert_eq!(
        set["span"]["covered_s"], one["span"]["covered_s"],
        "{}",
        set["span"]
    );
    assert_eq!(set["pauses"]["share_pct"], one["pauses"]["share_pct"]);
}

#[test]
fn a_thread_id_decoration_alone_is_not_taken_for_a_process() {
    // `-Xlog:...:utctime,tid,level,tags`: one JVM, lines written by several threads.
    for name in ["g1-jdk25.log.gz", "g1-jdk21.log.gz"] {
        let text = fixture_text(name);
        let tids: std::collections::BTreeSet<&str> = text
            .lines()
            .filter_map(|l| {
                l.split("][")
                    .find(|d| d.bytes().all(|b| b.is_ascii_digit()))
            })
            .collect();
        assert!(tids.len() > 1, "{name}: one thread only");
        let out = run(&[fixtures().join(name).to_str().unwrap()]);
        assert!(out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("interleaved"), "{name}: {err}");
    }
}

#[test]
fn two_jvms_interleaved_in_one_file_are_reported() {
    let dir = tmp("interleaved");
    // Two JVMs with pid decorations appending to one file, lines interleaved.
    let a = fixture_text("parallel-jdk17.log.gz");
    let pid = a
        .lines()
        .next()
        .unwrap()
        .split("][")
        .nth(2)
        .unwrap()
        .to_string();
    let b: String = a
        .lines()
        .map(|l| l.replacen(&format!("][{pid}]["), "][20777][", 1) + "\n")
        .collect();
    let mut mixed = String::new();
    for (x, y) in a.lines().zip(b.lines()) {
        mixed.push_str(x);
        mixed.push('\n');
        mixed.push_str(y);
        mixed.push('\n');
    }
    let path = dir.join("gc.log");
    std::fs::write(&path, mixed).unwrap();
    let out = run(&[path.to_str().unwrap()]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "gc.log: lines of 2 processes (pids {pid}, 20777) are interleaved"
        )),
        "{err}"
    );
    // Two JVMs' runs concatenated: time goes back once.
    let twice = dir.join("twice.log");
    std::fs::write(&twice, fixture_text("serial-jdk17.log.gz").repeat(2)).unwrap();
    let out = run(&[twice.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("twice.log:") && err.contains("time stamps go back 1 time(s)"),
        "{err}"
    );
}

#[test]
fn fail_on_exits_3_only_when_the_condition_holds() {
    let log = fixtures().join("g1-jdk25.log.gz");
    let log = log.to_str().unwrap();
    let out = run(&["--fail-on", "max>1ns", log]);
    assert_eq!(out.status.code(), Some(3));
    // The value holding the condition has its unit.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("max = ") && stderr.contains(" ms"),
        "{stderr}"
    );
    assert_eq!(run(&["--fail-on", "max>60m", log]).status.code(), Some(0));
    assert_eq!(
        run(&["--fail-on", "p99.9>200ms,count>1000000", log])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        run(&["--fail-on", "finding:real_gt_cpu", log])
            .status
            .code(),
        Some(0)
    );
    // A condition that does not parse is bad usage: exit 2, as for any bad argument.
    for bad in ["max>200", "p42>1ms", "finding:nope", "max"] {
        let out = run(&["--fail-on", bad, log]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("bad --fail-on condition"));
    }
    assert!(
        String::from_utf8_lossy(&run(&["--fail-on", "max>200", log]).stderr)
            .contains("not a duration")
    );
}

#[test]
fn a_log_with_a_header_and_no_event_is_reported_with_a_warning() {
    let dir = tmp("header-only");
    let path = dir.join("gc.log");
    std::fs::write(
        &path,
        "Java HotSpot(TM) 64-Bit Server VM (25.202-b08) for linux-amd64 JRE (1.8.0_202-b08), built on Dec 15 2018 12:40:22 by \"java_re\" with gcc 7.3.0\n\
         Memory: 4k page, physical 8000000k(4000000k free), swap 1000000k(1000000k free)\n\
         CommandLine flags: -XX:MaxHeapSize=1073741824 -XX:+PrintGCDetails -XX:+UseParallelGC\n",
    )
    .unwrap();
    let file = path.to_str().unwrap();
    let out = run(&[file]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{file}: no GC events (the log holds only the JVM's header"
        )),
        "{err}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Findings   none: the log holds no GC event"),
        "{text}"
    );
    let json = analyze_json(std::slice::from_ref(&path));
    let warning = json["warnings"][0]["message"].as_str().unwrap();
    assert!(warning.starts_with("no GC events"), "{warning}");
    // --fail-on is evaluated as for any log.
    let out = run(&["--fail-on", "count<1", file]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
}

#[test]
fn a_large_log_reads_the_same_with_any_number_of_threads() {
    let dir = tmp("threads");
    // A JDK 8 CMS log whose events span many lines (heap at GC, free list statistics,
    // tenuring distribution, a remark holding a young collection), over a few chunks.
    let (log, copies) = repeated_sample(
        &dir,
        "SampleSun1_8_0CMS_ScavengeBR_HeapAtGC_TenuringDist_PrintFLS.txt",
        3_000_000,
    );
    let log = log.to_str().unwrap();
    let one = run(&["--json", "--threads", "1", log]);
    assert!(one.status.success(), "{one:?}");
    let report: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    // One pause per copy: the remark with the young collection it holds.
    assert_eq!(report["pauses"]["count"], copies as u64, "{report}");
    for threads in ["2", "3"] {
        let many = run(&["--json", "--threads", threads, log]);
        assert_eq!(
            String::from_utf8_lossy(&many.stdout),
            String::from_utf8_lossy(&one.stdout)
        );
        assert_eq!(many.stderr, one.stderr);
    }
    let zero = run(&["--threads", "0", log]);
    assert_eq!(zero.status.code(), Some(2), "{zero:?}");
}

/// A log with a record on every line (`-Xlog:safepoint` alone) keeps a chunk's records
/// waiting for the analysing thread, several chunks at a time: read by 16 threads (a 16-core
/// host's default; here they take turns), 100 MB of it stays within 64 MB. When the pools
/// of records held 1,024 boxes, a fifth of a chunk's, it took 81 MB: the parsing threads'
/// heaps kept the pages of the boxes the analysing thread freed.
#[test]
fn a_log_of_records_only_is_read_by_16_threads_in_bounded_memory() {
    let dir = tmp("dense");
    let safepoints: Vec<String> = fixture_text("g1-jdk17.log.gz")
        .lines()
        .filter(|line| line.contains("[safepoint"))
        .map(|line| line[line.find("][").unwrap() + 1..].to_string())
        .collect();
    assert!(
        safepoints.len() > 20,
        "{} safepoint lines",
        safepoints.len()
    );
    // The lines with their uptime decoration only, 100 ms apart.
    let mut log = Vec::with_capacity(101_000_000);
    let mut ms = 0u64;
    while log.len() < 100_000_000 {
        for line in &safepoints {
            ms += 100;
            let after_uptime = &line[line.find("s]").unwrap() + 2..];
            writeln!(log, "[{}.{:03}s]{after_uptime}", ms / 1000, ms % 1000).unwrap();
        }
    }
    let path = dir.join("safepoints.log");
    std::fs::write(&path, &log).unwrap();
    drop(log);
    let path = path.to_str().unwrap();
    let read = |threads: &str| {
        let (out, peak_kib) =
            analyze_support::run_measuring_memory(&["--json", "--threads", threads, path]);
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (report, peak_kib)
    };
    let (one_thread, _) = read("1");
    let (sixteen, peak_kib) = read("16");
    assert_eq!(one_thread, sixteen, "--threads 16 gave another result");
    assert!(
        one_thread["safepoints"]["count"].as_u64().unwrap() > 400_000,
        "{}",
        one_thread["safepoints"]
    );
    assert!(peak_kib < 64 * 1024, "max RSS {peak_kib} KiB");
    std::fs::remove_dir_all(dir).unwrap();
}

/// A rotated set of gzipped logs, each decompressed on a thread of its own, stays within
/// 64 MB. When each block of decompressed text was allocated on that thread and freed on
/// the reading one, ten 30 MB logs took 97 MB with two threads.
#[test]
fn a_rotated_set_of_gzipped_logs_is_read_in_bounded_memory() {
    let dir = tmp("gzipped-set");
    let (plain, _) = repeated_sample(&dir, "SampleSun1_7_0G1-ApplicationStopped.txt", 30_000_000);
    let gzip = Command::new("gzip").arg("-1").arg(&plain).status().unwrap();
    assert!(gzip.success());
    // As logrotate leaves them compressed: `gc.log.1.gz` and on, beside no `gc.log`.
    let compressed = dir.join("gc.log.gz");
    for n in 1..=10 {
        std::fs::copy(&compressed, dir.join(format!("gc.log.{n}.gz"))).unwrap();
    }
    let (one, _) = analyze_support::run_measuring_memory(&[
        "--json",
        "--threads",
        "1",
        compressed.to_str().unwrap(),
    ]);
    std::fs::remove_file(&compressed).unwrap();
    let one: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    let (set, peak_kib) = analyze_support::run_measuring_memory(&[
        "--json",
        "--threads",
        "2",
        plain.to_str().unwrap(),
    ]);
    let set: serde_json::Value = serde_json::from_slice(&set.stdout).unwrap();
    assert_eq!(
        set["inputs"].as_array().unwrap().len(),
        10,
        "{}",
        set["inputs"]
    );
    assert_eq!(
        set["pauses"]["count"].as_u64().unwrap(),
        10 * one["pauses"]["count"].as_u64().unwrap()
    );
    assert!(peak_kib < 64 * 1024, "max RSS {peak_kib} KiB");
    std::fs::remove_dir_all(dir).unwrap();
}

/// A JVM started with `-Xlog:gc:file=gc.log::filecount=5` archives the log it finds as
/// `gc.log.0`: a rotated set can hold two runs. Logged with `-Xlog:gc` alone, neither file
/// has a `Version:` line; each has the `Using Serial` line the JVM prints once, at its
/// start. The runs are told apart, each with the pauses its file holds.
#[test]
fn two_runs_of_a_jvm_in_one_rotated_set_are_told_apart() {
    let dir = tmp("restart");
    let source = dir.join("Alloc.java");
    std::fs::write(
        &source,
        "public class Alloc { public static void main(String[] a) { byte[][] keep = new byte[4][]; \
         for (int i = 0; i < 400; i++) keep[i % 4] = new byte[1 << 20]; } }",
    )
    .unwrap();
    for _ in 0..2 {
        let status = Command::new("/usr/lib/jvm/java-17-openjdk-amd64/bin/java")
            .current_dir(&dir)
            .args([
                "-Xmx32m",
                "-XX:+UseSerialGC",
                "-Xlog:gc:file=gc.log::filecount=5",
            ])
            .arg(&source)
            .status()
            .expect("java of JDK 17");
        assert!(status.success());
    }
    let pauses = |name: &str| {
        std::fs::read_to_string(dir.join(name))
            .unwrap()
            .lines()
            .filter(|l| l.contains(" Pause "))
            .count()
    };
    let (archived, current) = (pauses("gc.log.0"), pauses("gc.log"));
    assert!(archived > 0 && current > 0, "{archived} {current}");
    let json = analyze_json(&[dir.join("gc.log.0")]);
    assert_eq!(json["jvm_count"], 2, "{json}");
    let mut counts: Vec<(String, u64)> = json["jvms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|jvm| {
            let file = jvm["inputs"][0]["file"].as_str().unwrap();
            let name = std::path::Path::new(file).file_name().unwrap();
            (
                name.to_string_lossy().into_owned(),
                jvm["pauses"]["count"].as_u64().unwrap(),
            )
        })
        .collect();
    counts.sort();
    assert_eq!(
        counts,
        [
            ("gc.log".to_string(), current as u64),
            ("gc.log.0".to_string(), archived as u64)
        ]
    );
    assert!(
        json["separated_because"][1]
            .as_str()
            .unwrap()
            .contains("starts a JVM run"),
        "{json}"
    );
}

/// A plain JDK 6-8 log of a few MiB is read in chunks by two threads, or by one thread
/// straight into the analysis; its gzipped copy by one thread likewise, or in batches
/// that a second thread parses in part and analyses. Each way passes over runs of
/// indented lines its own way, and all give the same report and the same warnings
/// (GCViewer's G1 and Parallel samples, repeated as they are).
#[test]
fn a_plain_jdk8_log_reads_as_its_gzipped_copy() {
    let dir = tmp("plain-and-gzipped");
    let logs: [(&str, &[&str]); 2] = [
        (
            "g1.log",
            &[
                "SampleSun1_7_0G1-ApplicationStopped.txt",
                "SampleSun1_7_0_12PrintAdaptiveSizePolicy.txt",
                "SampleSun1_6_0G1_PrintHeapAtGC.txt",
                "SampleSun1_7_0G1TenuringDistribution.txt",
            ],
        ),
        (
            "parallel.log",
            &[
                "SampleSun1_6_0AdaptiveSizePolicy.txt",
                "SampleSun1_8_0Parallel_Apple.txt",
                "SampleSun1_7_0PS_Adaptive_Tenuring_AppStopped.txt",
            ],
        ),
    ];
    for (name, samples) in logs {
        let mut text = Vec::new();
        while text.len() < (2 << 20) + (256 << 10) {
            for sample in samples {
                text.extend(gcviewer_sample(sample));
                if !text.ends_with(b"\n") {
                    text.push(b'\n');
                }
            }
        }
        let plain = dir.join(name);
        std::fs::write(&plain, &text).unwrap();
        let gzipped = dir.join(format!("{name}.gz"));
        let gzip = Command::new("gzip").arg("-k").arg(&plain).status().unwrap();
        assert!(gzip.success());
        let report = |file: &PathBuf, threads: &str| {
            let out = run(&["--json", "--threads", threads, file.to_str().unwrap()]);
            assert!(out.status.success(), "{out:?}");
            let text =
                |bytes: &[u8]| String::from_utf8_lossy(bytes).replace(&format!("{name}.gz"), name);
            (text(&out.stdout), text(&out.stderr))
        };
        let expected = report(&plain, "1");
        assert!(expected.0.contains("\"pauses\""), "{}", expected.0);
        for (file, threads) in [(&plain, "2"), (&gzipped, "1"), (&gzipped, "2")] {
            let read = report(file, threads);
            assert_eq!(read, expected, "{}, {threads} threads", file.display());
        }
    }
}
