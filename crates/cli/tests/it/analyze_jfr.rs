//! `pauselab analyze recording.jfr` on a real JDK 25 recording: the same report, `--json`,
//! `--fail-on` and `--hlog` as for GC logs, checked against the JDK's `jfr print --json`;
//! recordings mixed with GC logs, truncated and foreign files get a one-line error.

use crate::analyze_support;
use crate::jfr_support;

use std::path::Path;
use std::process::Command;

use analyze_support::{analyze_json, bin, export_events, run, CpuHogs};
use jfr_support::{jfr_print, record, record_for, record_keeping, record_repository, JDK25};

/// How many events of each of `types` the recording has, per `jfr print --json`.
fn jdk_count(jfr: &Path, types: &[&str]) -> Vec<u64> {
    let events = jfr_print(Path::new(JDK25), jfr, types);
    types
        .iter()
        .map(|t| events.iter().filter(|e| e["type"] == *t).count() as u64)
        .collect()
}

/// GC pauses and safepoints (`jdk.SafepointBegin`) in the recording per `jfr print --json`.
fn jdk_counts(jfr: &Path) -> (u64, u64) {
    let counts = jdk_count(jfr, &["jdk.GCPhasePause", "jdk.SafepointBegin"]);
    (counts[0], counts[1])
}

#[test]
fn recordings_get_the_gc_log_report_and_hostile_files_a_clear_error() {
    let Some(run_) = record(JDK25, "-XX:+UseG1GC") else {
        return;
    };
    let jfr = &run_.jfr;
    let (pauses, safepoints) = jdk_counts(jfr);
    assert!(pauses > 0 && safepoints > 0);

    let json = analyze_json(std::slice::from_ref(jfr));
    assert_eq!(json["pauses"]["count"], pauses);
    assert_eq!(json["safepoints"]["count"], safepoints);
    assert_eq!(json["jvm"]["collector"], "G1");
    // The stops that were not GCs here are the flight recorder's own (its checkpoints,
    // its periodic class loader statistics): named as the likeliest cause.
    let operations = json["safepoints"]["operations"].as_array().unwrap();
    let jfr_own = |name: &str| name.starts_with("JFR") || name == "ClassLoaderStatsOperation";
    // (A stop cut by the recording's start or end has no operation.)
    let non_gc: Vec<&str> = operations
        .iter()
        .filter(|o| o["gc"] == false && o["name"] != "(not a GC)")
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    if !non_gc.is_empty() && non_gc.iter().all(|n| jfr_own(n)) {
        let found = analyze_support::finding(&json, "non_gc_safepoints").unwrap();
        let first = found["causes"][0]["cause"].as_str().unwrap();
        assert!(
            first.starts_with("the flight recorder's own stops"),
            "{found}"
        );
    }
    assert!(json["jfr"][0]["heap"]["collections"].as_u64().unwrap() > 0);
    assert!(json["jfr"][0]["cpu_load"]["samples"].as_u64().unwrap() > 0);

    let text = run(&[jfr.to_str().unwrap()]);
    assert!(text.status.success());
    let text = String::from_utf8(text.stdout).unwrap();
    // Named as the GC log names them, not after JFR's collector (`G1New`).
    assert!(
        text.contains("Pause Young") && !text.contains("G1New"),
        "{text}"
    );
    assert!(text.contains("Recording  "), "{text}");
    // Worst pauses are located by event number: a recording has no lines.
    let name = jfr.display().to_string();
    assert!(text.contains(&format!("{name} event ")), "{text}");
    assert!(
        !text
            .lines()
            .any(|l| l.contains(&format!("{name}:")) && !l.starts_with("Recording")),
        "{text}"
    );

    // --fail-on and --hlog work as for logs.
    let hlog = jfr.with_extension("hlog");
    let out = run(&[
        "--fail-on",
        "count>0",
        "--hlog",
        hlog.to_str().unwrap(),
        jfr.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3));
    let hlog_text = std::fs::read_to_string(&hlog).unwrap();
    assert!(
        hlog_text.lines().any(|l| l.starts_with("Tag=gc,")),
        "{hlog_text}"
    );

    // --events: a row per pause and safepoint counted, cited by event index, with the heap
    // of the recording's own heap events.
    let rows = export_events(jfr, &jfr.with_extension("csv"));
    assert_eq!((rows.gc_pauses, rows.safepoints), (pauses, safepoints));
    assert_eq!(rows.rows, pauses + safepoints);
    assert_eq!(
        (rows.rows_with_line, rows.rows_with_event_index),
        (0, rows.rows)
    );
    assert!(rows.rows_with_heap > 0);

    // A recording and the GC log of the same JVM are not added up.
    let out = run(&[jfr.to_str().unwrap(), run_.log.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("analyze them separately"), "{err}");

    // Truncated in its only chunk, and a text file named .jfr: one line naming the file.
    let bytes = std::fs::read(jfr).unwrap();
    let cut = jfr.with_file_name("cut.jfr");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let foreign = jfr.with_file_name("notes.jfr");
    std::fs::write(&foreign, "not a recording\n").unwrap();
    for (file, says) in [(&cut, "cut off"), (&foreign, "not a JFR recording")] {
        let out = Command::new(bin())
            .args(["analyze", file.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains(file.to_str().unwrap()) && err.contains(says),
            "{err}"
        );
    }
}

/// A ZGC recording's allocation stalls count like a GC log's: `allocation_stalls`, the
/// finding and `--fail-on alloc_stall.*`.
#[test]
fn recordings_of_different_jvms_are_analysed_each_on_its_own() {
    let (Some(g1), Some(parallel), Some(g1_again)) = (
        record(JDK25, "-XX:+UseG1GC"),
        record(JDK25, "-XX:+UseParallelGC"),
        record(JDK25, "-XX:+UseG1GC"),
    ) else {
        return;
    };
    let recordings = [g1.jfr.clone(), g1_again.jfr.clone(), parallel.jfr.clone()];
    let json = analyze_json(&recordings);
    assert_eq!(json["jvm_count"], 3, "{json}");
    for (at, (jfr, collector)) in recordings.iter().zip(["G1", "G1", "Parallel"]).enumerate() {
        let jvm = &json["jvms"][at];
        assert_eq!(jvm["pauses"]["count"], jdk_counts(jfr).0, "JVM {at}");
        assert_eq!(jvm["jvm"]["collector"], collector, "JVM {at}");
        // Each JVM's report has its own recording's section.
        let files: Vec<&str> = jvm["jfr"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["file"].as_str().unwrap())
            .collect();
        assert_eq!(files, [jfr.to_str().unwrap()], "JVM {at}");
    }
    let why = |at: usize| json["separated_because"][at].as_str().unwrap().to_string();
    // The same collector and JDK: told apart by the JVMs' start times.
    assert!(why(1).starts_with("JVM start "), "{}", why(1));
    assert_eq!(why(2), "collector G1 vs Parallel");

    let names: Vec<&str> = recordings.iter().map(|p| p.to_str().unwrap()).collect();
    let out = run(&names);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.matches("=== JVM ").count(), 3, "{text}");
    assert_eq!(text.matches("Recording  ").count(), 3, "{text}");
    // A recording that cannot be read among them: the others are reported, then its
    // error, and the exit is 1.
    let cut = g1.jfr.with_file_name("cut.jfr");
    std::fs::write(&cut, &std::fs::read(&g1.jfr).unwrap()[..1000]).unwrap();
    let out = run(&["--json", names[0], cut.to_str().unwrap(), names[2]]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["jvm_count"], 2, "{json}");
    assert_eq!(json["separated_because"][0], serde_json::Value::Null);
    assert_eq!(json["separated_because"][1], "collector G1 vs Parallel");
    let err = String::from_utf8(out.stderr).unwrap();
    let errors: Vec<&str> = err.lines().filter(|l| l.contains("error:")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(errors[0].contains(cut.to_str().unwrap()), "{err}");

    // An output that holds one JVM's pauses refuses them, naming why.
    let hlog = g1.jfr.with_extension("hlog");
    let out = run(&["--hlog", hlog.to_str().unwrap(), names[1], names[2]]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("2 different JVMs (collector G1 vs Parallel)"),
        "{err}"
    );
}

#[test]
fn recorded_allocation_stalls_feed_fail_on() {
    // At most 2,000 objects (10 MB) kept: allocation outruns ZGC, but the heap holds.
    let flags = ["-XX:+UseZGC", "-Xmx32m"];
    let Some(run_) = record_keeping(Path::new(JDK25), &flags, 1500, Some(2000)) else {
        return;
    };
    let jfr = run_.jfr.to_str().unwrap();
    let stalls = jdk_count(&run_.jfr, &["jdk.ZAllocationStall"])[0];
    assert!(stalls > 0, "a 32 MB ZGC heap made no allocation stall");
    let json = analyze_json(std::slice::from_ref(&run_.jfr));
    assert_eq!(json["allocation_stalls"]["count"], stalls);
    assert_eq!(json["jfr"][0]["allocation_stalls"]["count"], stalls);
    // The threads that waited, by their Java names, as the JDK's `jfr print` names them.
    let mut jdk_threads = std::collections::BTreeMap::<String, u64>::new();
    for stall in jfr_print(Path::new(JDK25), &run_.jfr, &["jdk.ZAllocationStall"]) {
        let name = stall["values"]["eventThread"]["javaName"].as_str().unwrap();
        *jdk_threads.entry(name.to_string()).or_default() += 1;
    }
    let threads: std::collections::BTreeMap<String, u64> = json["allocation_stalls"]["by_thread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(threads, jdk_threads);
    let found = analyze_support::finding(&json, "allocation_stalls").unwrap();
    assert_eq!(found["count"], stalls, "{found}");
    let at_least = format!("alloc_stall.count>={stalls}");
    assert_eq!(run(&["--fail-on", &at_least, jfr]).status.code(), Some(3));
    let more = format!("alloc_stall.count>{stalls}");
    assert_eq!(run(&["--fail-on", &more, jfr]).status.code(), Some(0));
    let max_ms = json["allocation_stalls"]["max_ms"].as_f64().unwrap();
    assert!(max_ms > 0.0);
    let over = format!("alloc_stall.max>{}ms", max_ms * 2.0);
    assert_eq!(run(&["--fail-on", &over, jfr]).status.code(), Some(0));
}

#[test]
fn a_jdk11_recording_tells_allocation_stalls_by_the_cycles_they_started() {
    let Some(jdk) = jfr_support::cached_jdk(11) else {
        return;
    };
    // The heap of `record_for` (256 MB): smaller ones ran out of memory on JDK 11's ZGC.
    let flags = ["-XX:+UnlockExperimentalVMOptions", "-XX:+UseZGC"];
    let Some(run_) = record_for(&jdk, &flags, 2000) else {
        return;
    };
    // JDK 11 records no stall; the cycles it started say `Allocation Stall`.
    assert_eq!(jdk_count(&run_.jfr, &["jdk.ZAllocationStall"])[0], 0);
    let stalled = jfr_print(&jdk, &run_.jfr, &["jdk.GarbageCollection"])
        .iter()
        .filter(|e| e["values"]["cause"] == "Allocation Stall")
        .count() as u64;
    if stalled == 0 {
        eprintln!("skipped: no ZGC cycle was started by an allocation stall in a 256 MB heap");
        return;
    }
    let json = analyze_json(std::slice::from_ref(&run_.jfr));
    assert_eq!(json["allocation_stalls"]["count"], 0);
    let found = analyze_support::finding(&json, "allocation_stalls").unwrap();
    assert_eq!(found["count"], stalled, "{found}");
    assert!(
        found["title"].as_str().unwrap().starts_with(&format!(
            "{stalled} ZGC cycles were started by allocation stalls"
        )),
        "{found}"
    );
    // The same JVM's GC log holds the stalls themselves: counted as such, not by cycle.
    let log = analyze_json(std::slice::from_ref(&run_.log));
    let lines = std::fs::read_to_string(&run_.log)
        .unwrap()
        .lines()
        .filter(|l| l.contains("] Allocation Stall ("))
        .count() as u64;
    assert!(lines > 0);
    assert_eq!(log["allocation_stalls"]["count"], lines);
    let found = analyze_support::finding(&log, "allocation_stalls").unwrap();
    assert_eq!(found["count"], lines, "{found}");
}

#[test]
fn a_recording_of_many_chunks_is_read_on_every_core_in_bounded_memory() {
    let Some(run_) = record_for(Path::new(JDK25), &["-XX:+UseZGC"], 3000) else {
        return;
    };
    // A recording is a sequence of self-contained chunks: 150 copies of one, each of
    // about 1 MB of ZGC's many short pauses, which take several times their bytes read.
    let one = std::fs::read(&run_.jfr).unwrap();
    let many = run_.jfr.with_file_name("many.jfr");
    std::fs::write(&many, one.repeat(150)).unwrap();
    let many = many.to_str().unwrap();
    let read = |threads: &str| {
        let (out, peak_kib) =
            analyze_support::run_measuring_memory(&["--json", "--threads", threads, many]);
        (out.stdout, peak_kib)
    };
    let (one_thread, _) = read("1");
    let (every_core, peak_kib) = read("16");
    assert!(one_thread == every_core, "--threads 16 gave another result");
    // At most two threads read a recording: eight held 127 to 147 MB of 1 MB chunks.
    assert!(peak_kib < 64 * 1024, "max RSS {peak_kib} KiB");
}

/// The pauses, safepoints and total pause time `analyze --json` finds in `inputs`.
fn pause_numbers(inputs: &[std::path::PathBuf]) -> (u64, u64, f64) {
    let json = analyze_json(inputs);
    (
        json["pauses"]["count"].as_u64().unwrap(),
        json["safepoints"]["count"].as_u64().unwrap(),
        json["pauses"]["total_ms"].as_f64().unwrap(),
    )
}

/// A recording read from its JVM's repository directory (several chunk files, one of
/// them started at a safepoint whose events straddle two chunks) matches the JDK's `jfr`
/// on each chunk file; gzipped or in a zip, a recording gives what the file gives.
#[test]
fn a_recording_as_its_repository_gzipped_or_zipped_gives_the_same_pauses() {
    let repository = tempfile::tempdir().unwrap();
    let Some(jvm_dir) = record_repository(Path::new(JDK25), repository.path()) else {
        return;
    };
    let mut chunk_files: Vec<_> = std::fs::read_dir(&jvm_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jfr"))
        .collect();
    chunk_files.sort();
    assert!(chunk_files.len() >= 2, "{chunk_files:?}");
    let (mut pauses, mut safepoints) = (0, 0);
    for file in &chunk_files {
        let (p, s) = jdk_counts(file);
        pauses += p;
        safepoints += s;
    }
    assert!(pauses > 0 && safepoints > 0);
    // The chunk files given one by one: one JVM's recordings, analysed as one.
    let json = analyze_json(&chunk_files);
    assert!(json["jvm_count"].is_null(), "{json}");
    assert_eq!(json["pauses"]["count"], pauses);
    assert_eq!(json["jfr"].as_array().unwrap().len(), chunk_files.len());
    // Another program's file named like a chunk: a one-line warning naming it, and the
    // JVM's chunks are read.
    let notes = jvm_dir.join("notes.jfr");
    std::fs::write(&notes, "not a recording\n").unwrap();
    let out = run(&["--json", jvm_dir.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&json["pauses"]["count"], &json["safepoints"]["count"]),
        (&pauses.into(), &safepoints.into())
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(notes.to_str().unwrap()) && err.contains("not a JFR recording"),
        "{err}"
    );
    std::fs::remove_file(&notes).unwrap();
    // A FIFO named like a chunk is left alone in a directory, and refused given alone.
    let fifo = jvm_dir.join("9999_99_99_99_99_99.jfr");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let out = run(&[fifo.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("not a regular file") && err.trim_end().lines().count() == 1,
        "{err}"
    );
    // The JVM's directory, and the repository root holding it.
    for dir in [&jvm_dir, &repository.path().to_path_buf()] {
        let (p, s, _) = pause_numbers(std::slice::from_ref(dir));
        assert_eq!((p, s), (pauses, safepoints), "{}", dir.display());
    }

    // Gzipped, and zipped alone.
    let Some(run_) = record(JDK25, "-XX:+UseG1GC") else {
        return;
    };
    let whole = pause_numbers(std::slice::from_ref(&run_.jfr));
    let bytes = std::fs::read(&run_.jfr).unwrap();
    let gz = run_.jfr.with_file_name("rec.jfr.gz");
    let mut encoder = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::fast(),
    );
    std::io::Write::write_all(&mut encoder, &bytes).unwrap();
    encoder.finish().unwrap();
    let zipped = run_.jfr.with_file_name("recording.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&zipped).unwrap());
    zip.start_file(
        "rec.jfr",
        zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated),
    )
    .unwrap();
    std::io::Write::write_all(&mut zip, &bytes).unwrap();
    zip.finish().unwrap();
    for packed in [&gz, &zipped] {
        assert_eq!(
            pause_numbers(std::slice::from_ref(packed)),
            whole,
            "{}",
            packed.display()
        );
        // Over a lower limit than the recording's size: one line naming file and limit.
        let out = Command::new(bin())
            .args(["analyze", packed.to_str().unwrap()])
            .env("PAUSELAB_MAX_DECOMPRESSED", "64K")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.trim_end().lines().count() == 1
                && err.contains("decompresses to more than 64K")
                && err.contains(packed.file_name().unwrap().to_str().unwrap()),
            "{err}"
        );
    }

    // Two JVMs' repositories under one root: name one.
    let other = repository.path().join("2026_01_01_00_00_00_1");
    std::fs::create_dir(&other).unwrap();
    std::fs::copy(&run_.jfr, other.join("2026_01_01_00_00_00.jfr")).unwrap();
    let out = run(&[repository.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("of 2 JVMs") && err.trim_end().lines().count() == 1,
        "{err}"
    );
}

/// Full collections of a JVM competing with busy loops on every core: the recording's
/// CPU samples put the machine at 90 % or more around them, and the `busy_cpu` finding
/// names them; the physical memory the recording saw is reported.
#[test]
fn pauses_on_a_saturated_machine_are_named_from_the_cpu_samples() {
    let hogs = CpuHogs::start();
    let recorded = record_for(Path::new(JDK25), &["-XX:+UseSerialGC"], 4000);
    drop(hogs);
    let Some(run_) = recorded else {
        return;
    };
    let json = analyze_json(std::slice::from_ref(&run_.jfr));
    let finding = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "busy_cpu")
        .unwrap_or_else(|| panic!("no busy_cpu finding: {:#}", json["findings"]));
    let count = finding["count"].as_u64().unwrap();
    assert!(count >= 1);
    let long_pauses = json["pauses"]["count"].as_u64().unwrap();
    assert!(count <= long_pauses);
    for evidence in finding["evidence"].as_array().unwrap() {
        let detail = evidence["detail"].as_str().unwrap();
        let busy: f64 = detail
            .strip_prefix("machine CPU ")
            .and_then(|d| d.split('%').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{detail}"));
        assert!(busy >= 90.0, "{detail}");
    }
    assert_eq!(
        run(&["--fail-on", "finding:busy_cpu", run_.jfr.to_str().unwrap()])
            .status
            .code(),
        Some(3)
    );
    let memory = &json["jfr"][0]["physical_memory"];
    let total = memory["total_bytes"].as_u64().unwrap();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let host_total = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").parse::<u64>().ok())
        .unwrap()
        * 1024;
    // The host's memory, or a container's smaller limit.
    assert!(
        total > 0 && total <= host_total,
        "jdk.PhysicalMemory {total} against /proc/meminfo {host_total}"
    );
    assert!(memory["max_used_bytes"].as_u64().unwrap() <= total);
}

/// 18 MB of gzip that inflates to 18 GiB of zeros, named like a recording: refused on its
/// first 68 bytes. The command runs with a file size limit of 8 MiB, which writing the
/// decompressed copy first would exceed (SIGXFSZ).
#[test]
fn a_gzip_bomb_named_like_a_recording_is_refused_before_it_is_spooled() {
    let dir = tempfile::tempdir().unwrap();
    let mut member = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..64 {
        std::io::Write::write_all(&mut member, &zeros).unwrap();
    }
    let member = member.finish().unwrap();
    // Concatenated gzip members read as one stream, as zcat reads them.
    let copies = (18 << 20) / member.len();
    let bomb = dir.path().join("rec.jfr.gz");
    std::fs::write(&bomb, member.repeat(copies)).unwrap();
    let out = Command::new("sh")
        .args(["-c", "ulimit -f 8192 && exec \"$0\" analyze \"$1\""])
        .args([bin(), bomb.to_str().unwrap()])
        .env("TMPDIR", dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.trim_end().lines().count() == 1
            && err.contains("rec.jfr.gz")
            && err.contains("not a JFR recording"),
        "{err}"
    );
}

/// JDK 11's G1 fails to evacuate where JDK 17+ no longer does on this workload: its
/// recording holds `jdk.EvacuationFailed` for some collections, and `jdk.ConcurrentModeFailure`
/// for cycles whose marking a full collection aborted (no CMS failure). Each failed
/// collection is one `evacuation_failure`, counted by its GC id in `jfr print`; run where
/// `make jdks` installed JDK 11, and where the host let G1 fail (a busy one may not).
#[test]
fn recorded_evacuation_failures_fire_their_rule() {
    let Some(jdk) = jfr_support::cached_jdk(11) else {
        eprintln!("skipped: no JDK 11 (make jdks)");
        return;
    };
    // Whether G1 fails to evacuate depends on how its threads and the workload's are
    // scheduled: a run on a busy host may have none, and is run again (three at most).
    let mut attempts = 0;
    let (run_, failed) = loop {
        attempts += 1;
        let Some(run_) = record_for(&jdk, &["-XX:+UseG1GC", "-Xmx112m"], 3000) else {
            return;
        };
        let failed: std::collections::BTreeSet<u64> =
            jfr_print(&jdk, &run_.jfr, &["jdk.EvacuationFailed"])
                .iter()
                .filter_map(|e| e["values"]["gcId"].as_u64())
                .collect();
        if !failed.is_empty() || attempts == 3 {
            break (run_, failed);
        }
    };
    let json = analyze_json(std::slice::from_ref(&run_.jfr));
    let count = |rule: &str| {
        analyze_support::finding(&json, rule).map_or(0, |f| f["count"].as_u64().unwrap())
    };
    if failed.is_empty() {
        // The reading itself is checked without a JVM (`assemble::tests`).
        eprintln!("skipped: G1 did not fail to evacuate in {attempts} runs on this host");
        return;
    }
    assert_eq!(count("evacuation_failure"), failed.len() as u64, "{json}");
    assert_eq!(count("concurrent_mode_failure"), 0, "G1 has no CMS failure");
}

/// With the `default` settings a recording keeps a safepoint's `jdk.SafepointBegin` only
/// when reaching it took 10 ms or more, its VM operation only from 10 ms on, and never its
/// `jdk.SafepointEnd`. A ZGC pause's operation takes microseconds, so a pause held up by a
/// thread in a loop without safepoint polls is recorded as a begin event, then the pause.
/// The JVM's own `-Xlog:safepoint` names each operation and its time to safepoint: each
/// ZGC operation that waited 10 ms or more is a GC safepoint of the recording, and the
/// begin event's duration its time to safepoint.
#[test]
fn a_safepoint_recorded_by_its_begin_alone_holds_the_gc_pause_that_follows_it() {
    let jdk = Path::new("/usr/lib/jvm/java-17-openjdk-amd64");
    if !jdk.join("bin/java").exists() {
        eprintln!("skipped: no JDK 17 at {}", jdk.display());
        return;
    }
    let dir = analyze_support::fresh_dir("analyze-jfr", "begin-only-safepoints");
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/safepoint_hold/HoldSafepoints.java");
    let javac = Command::new(jdk.join("bin/javac"))
        .arg("-d")
        .arg(&dir)
        .arg(source)
        .status()
        .unwrap();
    assert!(javac.success());
    let (jfr, log) = (dir.join("rec.jfr"), dir.join("safepoint.log"));
    let java = Command::new(jdk.join("bin/java"))
        .args(["-XX:+UseZGC", "-Xmx256m", "-XX:-UseCountedLoopSafepoints"])
        .arg("-XX:LoopStripMiningIter=0")
        .arg(format!(
            "-XX:StartFlightRecording:filename={}",
            jfr.display()
        ))
        .arg(format!("-Xlog:safepoint:file={}", log.display()))
        .args(["-cp", dir.to_str().unwrap(), "HoldSafepoints", "1"])
        .output()
        .unwrap();
    assert!(java.status.success(), "{java:?}");
    // `Safepoint "ZMarkStart", Time since last: ..., Reaching safepoint: 524054267 ns, ...`
    let held_gc_ops: Vec<u64> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let op = l.split("Safepoint \"").nth(1)?.split('"').next()?;
            let reaching = l.split("Reaching safepoint: ").nth(1)?.split(' ').next()?;
            let ns: u64 = reaching.parse().ok()?;
            (op.starts_with('Z') && ns >= 9_000_000).then_some(ns)
        })
        .collect();
    // The log and the recording time each stop apart: one near the recording's 10 ms
    // threshold may fall on either side of it in each. On a busy host the looping thread
    // holds stops for seconds: the JVM may exit before a collection it held records its
    // pause, which leaves that stop without one. So every held stop counted is the log's,
    // and at least one is.
    let surely_held = held_gc_ops.iter().filter(|&&ns| ns >= 11_000_000).count();
    let held = 1..=held_gc_ops.len();
    let begins = jfr_print(jdk, &jfr, &["jdk.SafepointBegin", "jdk.GCPhasePause"]);
    let pauses = begins
        .iter()
        .filter(|e| e["type"] == "jdk.GCPhasePause")
        .count();
    assert!(pauses > 0 && surely_held > 0, "no ZGC pause was held up");
    // Every pause among the worst (10 by default): a busy host holds the looping thread's
    // stops long enough for ZGC to run more than three cycles of three pauses.
    let out = run(&["--json", "--top", "1000", jfr.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let safepoints = &json["safepoints"];
    let gc_stops: u64 = safepoints["operations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["gc"] == true)
        .map(|o| o["count"].as_u64().unwrap())
        .sum();
    assert!(
        held.contains(&(gc_stops as usize)),
        "{held:?}: {safepoints}"
    );
    // Every pause was counted in its own safepoint, none in the stop after it.
    let names: Vec<&str> = safepoints["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with("+ GC")), "{names:?}");
    // Each held pause is shown with its safepoint's time to safepoint (the warm-up
    // collection's, before the looping thread started, reached theirs in microseconds).
    let worst = json["worst"].as_array().unwrap();
    assert_eq!(worst.len(), pauses, "{json}");
    let held_pauses = worst
        .iter()
        .filter(|w| w["ttsp_ms"].as_f64().is_some_and(|t| t >= 10.0))
        .count();
    assert!(held.contains(&held_pauses), "{held:?}: {worst:?}");
    // Each stop's time to safepoint is its begin event's duration, as long as the log says.
    let begun = begins
        .iter()
        .filter(|e| e["type"] == "jdk.SafepointBegin")
        .count();
    assert_eq!(safepoints["count"], begun, "{safepoints}");
    let longest_held = *held_gc_ops.iter().max().unwrap() as f64 / 1e6;
    assert!(
        safepoints["ttsp_max_ms"].as_f64().unwrap() >= longest_held - 1.0,
        "{safepoints}: the log's longest {longest_held} ms"
    );
    let ttsp = analyze_support::finding(&json, "long_ttsp").expect("long_ttsp");
    assert!(
        ttsp["count"].as_u64().unwrap() >= surely_held as u64,
        "{ttsp}"
    );
    // The recording states the JVM's options: the ones that took the poll out of the loop.
    assert_eq!(
        ttsp["causes"][0]["evidence"],
        "the JVM runs with -XX:-UseCountedLoopSafepoints -XX:LoopStripMiningIter=0",
        "{ttsp}"
    );
}

/// With the settings the JDK uses when none are given, a recording keeps a safepoint only
/// when its VM operation or its reaching took 10 ms or more, and writes the VM thread's
/// last events after every pause. Each pause must still be shown with the safepoint it
/// ran in, which `jfr print` tells by time: Parallel's `System.gc()` runs a young and a
/// full collection in one `ParallelGCSystemGC` stop, and both show its length; a pause in
/// no recorded safepoint shows none (Serial's quick full collections, held a while for a
/// young collection they might be part of, among them).
#[test]
fn each_pause_shows_the_recorded_safepoint_it_ran_in() {
    for (gc, shares_stops) in [("-XX:+UseParallelGC", true), ("-XX:+UseSerialGC", false)] {
        pauses_show_their_recorded_safepoints(gc, shares_stops);
    }
}

fn pauses_show_their_recorded_safepoints(gc: &str, shares_stops: bool) {
    let jdk = Path::new(jfr_support::JDK17);
    let Some(run_) = jfr_support::record_default(jdk, &[gc], 1500) else {
        return;
    };
    let ns = |v: &serde_json::Value| jfr_support::instant_ns(v.as_str().unwrap());
    let events = jfr_print(
        jdk,
        &run_.jfr,
        &[
            "jdk.GCPhasePause",
            "jdk.SafepointBegin",
            "jdk.ExecuteVMOperation",
        ],
    );
    // Safepoint id -> (start, end, begin only) over its begin and operation.
    let mut spans: std::collections::BTreeMap<u64, (i64, i64, bool)> = Default::default();
    let mut pauses = Vec::new();
    for e in &events {
        let v = &e["values"];
        let start = ns(&v["startTime"]);
        let end = start + jfr_support::iso_ns(v["duration"].as_str().unwrap()) as i64;
        match e["type"].as_str().unwrap() {
            "jdk.GCPhasePause" => pauses.push((start, end)),
            "jdk.SafepointBegin" => {
                let span = spans
                    .entry(v["safepointId"].as_u64().unwrap())
                    .or_insert((start, end, true));
                *span = (start, span.1.max(end), span.2);
            }
            "jdk.ExecuteVMOperation" if v["safepoint"] == true => {
                let span = spans
                    .entry(v["safepointId"].as_u64().unwrap())
                    .or_insert((start, end, false));
                *span = (span.0.min(start), span.1.max(end), false);
            }
            _ => {}
        }
    }
    let out = run(&["--json", "--top", "100000", run_.jfr.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let worst = json["worst"].as_array().unwrap();
    assert_eq!(worst.len(), pauses.len(), "every pause is listed");
    let (mut shared, mut checked) = (0, 0);
    for (start, end) in &pauses {
        let around: Vec<_> = spans
            .values()
            .filter(|(s, e, _)| s <= start && start <= e)
            .collect();
        // A safepoint of its begin alone ends before its operation: which pause ran in it
        // is read from the gap after it (`a_safepoint_recorded_by_its_begin_alone_...`).
        if around.iter().any(|(_, _, begin_only)| *begin_only) {
            continue;
        }
        let expected = around.first().map(|(s, e, _)| (e - s) as f64 / 1e6);
        let duration_ms = (end - start) as f64 / 1e6;
        let shown = worst
            .iter()
            .find(|w| (w["duration_ms"].as_f64().unwrap() - duration_ms).abs() < 1e-6)
            .unwrap_or_else(|| panic!("no pause of {duration_ms} ms in {worst:?}"));
        match expected {
            Some(ms) => {
                let stopped = shown["stopped_ms"].as_f64();
                assert!(
                    stopped.is_some_and(|s| (s - ms).abs() < 0.01),
                    "{shown}: {ms} ms"
                );
            }
            None => assert!(
                shown["stopped_ms"].is_null(),
                "{gc} {shown}: in no safepoint"
            ),
        }
        checked += 1;
        shared += pauses
            .iter()
            .filter(|(s, _)| around.first().is_some_and(|(a, b, _)| a <= s && s <= b))
            .count()
            .saturating_sub(1);
    }
    assert!(checked > 0, "{gc}: no pause checked");
    assert!(!shares_stops || shared > 0, "{gc}: no stop held two pauses");
}
