//! Hostile and unusual inputs: each ends in a one-line error (or a correct result) within a
//! bounded amount of memory, measured as the child's peak RSS, and pipes and process
//! substitution read the same as files.

use crate::analyze_support;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Peak resident memory any of these inputs may cost.
const MAX_RSS_KIB: i64 = 256 * 1024;

use analyze_support::{bin, repo_root};

fn gc_fixture() -> PathBuf {
    repo_root().join("fixtures/gclogs/demo-g1-jdk17.log")
}

fn tmp(name: &str) -> PathBuf {
    analyze_support::fresh_dir("hostile-inputs", name)
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// Peak resident set of the child, KiB (from wait4's rusage).
    max_rss_kib: i64,
    elapsed: Duration,
}

/// Runs `pauselab ARGS` and measures its peak RSS.
fn pauselab(args: &[&str]) -> Run {
    run_command(Command::new(bin()).args(args))
}

fn run_command(command: &mut Command) -> Run {
    let (mut command, peak) = crate::process_support::PeakRss::wrap(command);
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).unwrap();
        text
    });
    let mut err = String::new();
    stderr.read_to_string(&mut err).unwrap();
    let status = child.wait().unwrap();
    Run {
        code: status.code(),
        stdout: out.join().unwrap(),
        stderr: err,
        max_rss_kib: peak.kib(),
        elapsed: started.elapsed(),
    }
}

/// Exit 1, one line on stderr containing `needle`, bounded memory.
fn one_line_error(run: &Run, needle: &str) {
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("pauselab: error: ") && run.stderr.contains(needle),
        "{}",
        run.stderr
    );
    assert!(run.max_rss_kib < MAX_RSS_KIB, "{} KiB", run.max_rss_kib);
}

#[test]
fn interval_log_payloads_claiming_gigabytes_are_refused() {
    let hostile = repo_root().join("fixtures/hostile");
    let claims_4_gib = hostile.join("claims-4gib.hlog");
    let claims_4_gib = claims_4_gib.to_str().unwrap();
    one_line_error(
        &pauselab(&["hlog", claims_4_gib]),
        "claims-4gib.hlog:2: cannot decode",
    );
    one_line_error(
        &pauselab(&["report", claims_4_gib]),
        "claims 4294967295 bytes",
    );
    let inflates = hostile.join("inflates-64mib.hlog");
    one_line_error(
        &pauselab(&["hlog", inflates.to_str().unwrap()]),
        "inflates to more than",
    );
}

/// 320 MiB of zero bytes, gzip-compressed (about 320 KiB on disk).
fn gzip_of_zeros(path: &Path) {
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(path).unwrap(),
        flate2::Compression::fast(),
    );
    let block = vec![0u8; 1 << 20];
    for _ in 0..320 {
        gz.write_all(&block).unwrap();
    }
    gz.finish().unwrap();
}

#[test]
fn gzip_bombs_and_devices_cost_neither_memory_nor_time() {
    let dir = tmp("bombs");
    let zeros = dir.join("zeros.gz");
    gzip_of_zeros(&zeros);
    let zeros = zeros.to_str().unwrap();
    one_line_error(&pauselab(&["hlog", zeros]), "a line longer than 4 MiB");
    one_line_error(&pauselab(&["analyze", zeros]), "binary data");

    for command in [&["hlog"][..], &["analyze"], &["report"]] {
        let mut args = command.to_vec();
        args.push("/dev/zero");
        let run = pauselab(&args);
        one_line_error(&run, "/dev/zero: is a character device");
        assert!(run.elapsed < Duration::from_secs(5), "{:?}", run.elapsed);
    }
}

/// A named pipe `gc.fifo` in a fresh directory.
fn make_fifo(test: &str) -> PathBuf {
    let fifo = tmp(test).join("gc.fifo");
    let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    fifo
}

#[test]
fn a_named_pipe_without_a_writer_is_refused_after_the_time_limit() {
    let fifo = make_fifo("fifo");
    let run = pauselab(&["analyze", fifo.to_str().unwrap()]);
    one_line_error(&run, "gc.fifo: named pipe without data for 10 s");
    assert!(run.elapsed < Duration::from_secs(20), "{:?}", run.elapsed);
}

/// A named pipe with a writer is read like a file.
#[test]
fn a_named_pipe_with_a_writer_is_read() {
    let fifo = make_fifo("fifo-writer");
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            let mut pipe = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
            pipe.write_all(&std::fs::read(gc_fixture()).unwrap())
                .unwrap();
        })
    };
    let through_fifo = pause_count(&pauselab(&["analyze", "--json", fifo.to_str().unwrap()]));
    writer.join().unwrap();
    assert_eq!(
        through_fifo,
        pause_count(&pauselab(&[
            "analyze",
            "--json",
            gc_fixture().to_str().unwrap()
        ]))
    );
}

fn pause_count(run: &Run) -> u64 {
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    report["pauses"]["count"].as_u64().unwrap()
}

/// Pauses in the fixture, counted without pauselab: unified `[gc   ] GC(n) Pause ... 1.234ms`
/// lines (the end of each pause).
fn pauses_in_fixture() -> u64 {
    std::fs::read_to_string(gc_fixture())
        .unwrap()
        .lines()
        .filter(|l| l.contains("[info][gc ") && l.contains(") Pause ") && l.ends_with("ms"))
        .count() as u64
}

#[test]
fn pipes_and_process_substitution_read_like_files() {
    let dir = tmp("pipes");
    let plain = gc_fixture();
    let gz = dir.join("gc.log.gz");
    let mut encoder = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::default(),
    );
    encoder.write_all(&std::fs::read(&plain).unwrap()).unwrap();
    encoder.finish().unwrap();
    let expected = pauses_in_fixture();
    assert!(expected > 100);
    for file in [&plain, &gz] {
        let file = file.to_str().unwrap();
        // Process substitution, as a shell user writes it: the log arrives as /dev/fd/N.
        let script = format!("exec \"$0\" analyze --json <(cat '{file}')");
        let run = run_command(Command::new("bash").args(["-c", &script, bin()]));
        assert_eq!(pause_count(&run), expected, "{file}");
        assert!(run.stdout.contains("/dev/fd/"), "{file}");
        // Standard input.
        let run = run_command(Command::new("bash").args([
            "-c",
            &format!("exec \"$0\" analyze --json - < '{file}'"),
            bin(),
        ]));
        assert_eq!(pause_count(&run), expected, "{file}");
    }
    // report recognises an input before reading it: a pipe is refused, not half read.
    let run = run_command(Command::new("bash").args([
        "-c",
        &format!("exec \"$0\" report <(cat '{}')", plain.display()),
        bin(),
    ]));
    one_line_error(&run, "is a pipe; report reads each input twice");
}

#[test]
fn hlog_of_a_log_whose_clock_changes_stays_small() {
    let dir = tmp("clock-change");
    // The first half decorated with uptime only, the second with the wall clock only (a
    // rotated set whose -Xlog decorations were changed between restarts).
    let text = std::fs::read_to_string(gc_fixture()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (first, second) = lines.split_at(lines.len() / 2);
    let mut log = String::new();
    for line in first {
        let rest = line.split_once("][").unwrap().1; // drop [wall clock]
        log.push('[');
        log.push_str(rest);
        log.push('\n');
    }
    for line in second {
        let (wall, rest) = line.split_once("][").unwrap();
        let rest = rest.split_once("][").unwrap().1; // drop [uptime]
        log.push_str(&format!("{wall}][{rest}\n"));
    }
    let gc_log = dir.join("gc.log");
    std::fs::write(&gc_log, log).unwrap();
    let hlog = dir.join("gc.hlog");
    let run = pauselab(&[
        "analyze",
        "--hlog",
        hlog.to_str().unwrap(),
        gc_log.to_str().unwrap(),
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.max_rss_kib < MAX_RSS_KIB, "{} KiB", run.max_rss_kib);
    let intervals = std::fs::read_to_string(&hlog)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("Tag=gc,"))
        .count();
    // 3.7 s of log in 5 s intervals: one interval per clock, not 55 years of empty ones.
    assert_eq!(intervals, 2);
}

fn zip_of(path: &Path, members: usize) {
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let text = std::fs::read_to_string(gc_fixture()).unwrap();
    let head: String = text.lines().take(5).map(|l| format!("{l}\n")).collect();
    for i in 0..members {
        zip.start_file(format!("gc.log.{i}"), options).unwrap();
        zip.write_all(head.as_bytes()).unwrap();
    }
    zip.finish().unwrap();
}

#[test]
fn zip_archives_are_listed_in_linear_time_and_capped() {
    let dir = tmp("zips");
    let many = dir.join("3000.zip");
    zip_of(&many, 3000);
    let run = pauselab(&["analyze", "--json", many.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // Reading 3,000 members twice each took 26 s when each reopened the archive.
    assert!(run.elapsed < Duration::from_secs(10), "{:?}", run.elapsed);

    let too_many = dir.join("10001.zip");
    zip_of(&too_many, 10_001);
    one_line_error(
        &pauselab(&["analyze", too_many.to_str().unwrap()]),
        "10001 entries, more than the 10000",
    );
}

#[test]
fn names_print_on_one_line_and_causes_once() {
    let dir = tmp("names");
    let archive = dir.join("logs.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&archive).unwrap());
    let options = zip::write::SimpleFileOptions::default();
    zip.start_file("evil\u{1b}[31m\nname.log", options).unwrap();
    zip.write_all(b"no gc here\n").unwrap();
    zip.start_file("gc.log", options).unwrap();
    zip.write_all(&std::fs::read(gc_fixture()).unwrap())
        .unwrap();
    zip.finish().unwrap();
    let run = pauselab(&["analyze", archive.to_str().unwrap()]);
    // The good member is reported, the bad one named on one line, and the exit says so.
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stdout.contains("Pause Young"), "{}", run.stdout);
    assert!(!run.stdout.contains('\u{1b}') && !run.stderr.contains('\u{1b}'));
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("logs.zip!evil\\u{1b}[31m\\nname.log: no GC or safepoint log lines"),
        "{}",
        run.stderr
    );

    let looping = dir.join("loop.log");
    std::os::unix::fs::symlink(&looping, &looping).unwrap();
    let run = pauselab(&["analyze", looping.to_str().unwrap()]);
    one_line_error(&run, "Too many levels of symbolic links");
    assert_eq!(
        run.stderr.matches("symbolic links").count(),
        1,
        "{}",
        run.stderr
    );
}

#[test]
fn hlog_reports_the_good_logs_and_names_the_bad_one() {
    let dir = tmp("hlog-mixed");
    let bad = dir.join("notalog.txt");
    std::fs::write(&bad, "hello\n").unwrap();
    let bundle = repo_root().join("fixtures/bundles/lab-kernel6.1/variants");
    let good_a = bundle.join("default-jdk17/hiccups.hlog");
    let good_b = bundle.join("no-perfdata-jdk17/hiccups.hlog");
    let run = pauselab(&[
        "hlog",
        good_a.to_str().unwrap(),
        bad.to_str().unwrap(),
        good_b.to_str().unwrap(),
    ]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stdout.contains("default-jdk17/hiccups.hlog"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("no-perfdata-jdk17/hiccups.hlog"),
        "{}",
        run.stdout
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("notalog.txt:1:"), "{}", run.stderr);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

#[test]
fn oversized_bundle_files_are_refused_in_bounded_memory() {
    let dir = tmp("bundle");
    let bundle = dir.join("bundle");
    copy_dir(&repo_root().join("fixtures/bundles/lab-kernel6.1"), &bundle);
    let host = bundle.join("host.csv");

    // 3 GB without a line break (sparse: costs no disk).
    std::fs::File::create(&host)
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    one_line_error(
        &pauselab(&["report", bundle.to_str().unwrap()]),
        "host.csv:1: a line longer than 64 KiB",
    );

    // Well-formed rows, more of them than a lab run writes.
    let mut csv = std::io::BufWriter::new(std::fs::File::create(&host).unwrap());
    writeln!(
        csv,
        "t_s,cpu_user_pct,cpu_sys_pct,cpu_iowait_pct,dirty_kb,writeback_kb,psi_io_some_avg10"
    )
    .unwrap();
    for t in 0..600_000 {
        writeln!(csv, "{t},40.0,6.0,0.5,20000,0,0.10").unwrap();
    }
    csv.flush().unwrap();
    drop(csv);
    one_line_error(
        &pauselab(&["report", bundle.to_str().unwrap()]),
        "more than 4000000 values",
    );
}
