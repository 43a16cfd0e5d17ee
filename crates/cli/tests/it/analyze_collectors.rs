//! Logs written here by real JVMs under memory pressure (JDK 25 generational ZGC, JDK 17 G1
//! with System.gc(), JDK 17 Shenandoah): minor ZGC pauses, allocation stalls, full
//! collections, degenerated cycles and heap samples must equal an independent count of the
//! log's lines (awk, not pauselab's parser), and logs of different JVMs stay apart.

use crate::analyze_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use analyze_support::{analyze_json, bin};

const JDK17: &str = "/usr/lib/jvm/java-17-openjdk-amd64";
const JDK25: &str = "/usr/lib/jvm/temurin-25-jdk-amd64";

/// Threads that allocate as fast as they can while keeping a small live set; the main thread
/// calls System.gc() every N ms when asked. Args: seconds threads live-arrays gc-every-ms.
const CHURN: &str = r#"
import java.util.*;
public class Churn {
  public static void main(String[] a) throws Exception {
    long end = System.nanoTime() + (long) (Double.parseDouble(a[0]) * 1e9);
    int threads = Integer.parseInt(a[1]);
    int live = Integer.parseInt(a[2]);
    long gcEvery = Long.parseLong(a[3]);
    List<Thread> all = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread th = new Thread(() -> {
        List<byte[]> keep = new ArrayList<>();
        Random r = new Random();
        while (System.nanoTime() < end) {
          keep.add(new byte[4096 + r.nextInt(128 * 1024)]);
          if (keep.size() > live) keep.subList(0, live / 2).clear();
        }
      }, "churn-" + t);
      th.start();
      all.add(th);
    }
    long next = System.currentTimeMillis() + gcEvery;
    while (System.nanoTime() < end) {
      Thread.sleep(10);
      if (gcEvery > 0 && System.currentTimeMillis() >= next) { System.gc(); next += gcEvery; }
    }
    for (Thread th : all) th.join();
  }
}
"#;

/// A directory of the test's own, `name`, in the system's temporary directory (the JVMs'
/// `-Xlog:...:file=PATH` takes no `:` in the path, which a clone's path may hold): tests run
/// at the same time, and each removes its directory when it is done.
fn work_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("pauselab-collectors-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn compile(dir: &Path) {
    std::fs::write(dir.join("Churn.java"), CHURN).unwrap();
    let status = Command::new(format!("{JDK17}/bin/javac"))
        .args(["--release", "17", "-d"])
        .arg(dir)
        .arg(dir.join("Churn.java"))
        .status()
        .expect("javac of JDK 17");
    assert!(status.success());
}

/// Runs Churn on `jdk` with `flags`, logging gc* and safepoints to `dir/name.log`.
fn run_jvm(dir: &Path, jdk: &str, name: &str, flags: &[&str], args: &[&str]) -> PathBuf {
    let log = dir.join(format!("{name}.log"));
    let status = Command::new(format!("{jdk}/bin/java"))
        .args(flags)
        .arg("-XX:ActiveProcessorCount=2")
        .arg(format!("-Xlog:gc*,safepoint:file={}", log.display()))
        .arg("-cp")
        .arg(dir)
        .arg("Churn")
        .args(args)
        .status()
        .unwrap_or_else(|e| panic!("{jdk}/bin/java: {e}"));
    assert!(status.success(), "{name}: the JVM failed");
    log
}

/// `awk PROGRAM FILE` -> its whitespace-separated output numbers.
fn awk(program: &str, file: &Path) -> Vec<f64> {
    let out = Command::new("awk").arg(program).arg(file).output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect()
}

fn finding_count(json: &serde_json::Value, rule: &str) -> u64 {
    analyze_support::finding(json, rule).map_or(0, |f| f["count"].as_u64().unwrap())
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() < 0.01, "{what}: {a} vs {b}");
}

#[test]
fn collectors_under_pressure_match_an_independent_count() {
    let dir = work_dir("pressure");
    compile(&dir);
    // The three JVMs run at once: the test takes as long as the slowest.
    let runs = std::thread::scope(|s| {
        let zgc = s.spawn(|| {
            run_jvm(
                &dir,
                JDK25,
                "zgc-generational",
                &["-Xmx64m", "-XX:+UseZGC"],
                &["2", "4", "20", "0"],
            )
        });
        let g1 = s.spawn(|| {
            run_jvm(
                &dir,
                JDK17,
                "g1-system-gc",
                &["-Xmx64m", "-XX:+UseG1GC"],
                &["2", "2", "40", "200"],
            )
        });
        let shenandoah = s.spawn(|| {
            run_jvm(
                &dir,
                JDK17,
                "shenandoah",
                &["-Xmx48m", "-XX:+UseShenandoahGC"],
                &["2", "2", "40", "0"],
            )
        });
        [zgc, g1, shenandoah].map(|h| h.join().unwrap())
    });
    let [zgc, g1, shenandoah] = &runs;

    // Generational ZGC: minor (y:) and major (Y:, O:) pauses, allocation stalls.
    let pauses = awk(
        r#"/GC\([0-9]+\) [yYO]: Pause .*ms$/ { n++; v = $NF; sub(/ms$/, "", v); s += v }
           END { printf "%d %.3f\n", n, s }"#,
        zgc,
    );
    let minor = awk(
        r#"/GC\([0-9]+\) y: Pause .*ms$/ { n++ } END { print n + 0 }"#,
        zgc,
    );
    let stalls = awk(
        r#"/ Allocation Stall \(.*\) [0-9.]+ms$/ { n++; v = $NF; sub(/ms$/, "", v); s += v; if (v + 0 > m) m = v + 0 }
           END { printf "%d %.3f %.3f\n", n, s, m }"#,
        zgc,
    );
    let json = analyze_json(std::slice::from_ref(zgc));
    assert!(minor[0] > 0.0, "no minor collection in the ZGC log");
    assert_eq!(json["pauses"]["count"].as_f64().unwrap(), pauses[0]);
    close(
        json["pauses"]["total_ms"].as_f64().unwrap(),
        pauses[1],
        "ZGC pause total",
    );
    let stall = &json["allocation_stalls"];
    assert!(stalls[0] > 0.0, "no allocation stall provoked");
    assert_eq!(stall["count"].as_f64().unwrap(), stalls[0]);
    close(
        stall["total_ms"].as_f64().unwrap(),
        stalls[1],
        "stall total",
    );
    close(stall["max_ms"].as_f64().unwrap(), stalls[2], "stall max");
    assert_eq!(finding_count(&json, "allocation_stalls") as f64, stalls[0]);
    // A JVM that already runs generational ZGC is not told to turn it on.
    let fixes = analyze_support::finding(&json, "allocation_stalls").unwrap()["fixes"].to_string();
    assert!(!fixes.contains("ZGenerational"), "{fixes}");
    // Stalls are not pauses: the pause total is the pause lines' alone (checked above).
    assert!(json["memory"]["heap_samples"].as_u64().unwrap() > 0);
    assert!(json["memory"]["allocation_rate_mib_s"].as_f64().unwrap() > 0.0);
    let fail = Command::new(bin())
        .args(["analyze", "--fail-on"])
        .arg(format!("alloc_stall.max>{}ms", stalls[2] - 0.01))
        .arg(zgc)
        .output()
        .unwrap();
    assert_eq!(fail.status.code(), Some(3));
    let pass = Command::new(bin())
        .args(["analyze", "--fail-on"])
        .arg(format!("alloc_stall.max>{}ms", stalls[2] + 0.01))
        .arg(zgc)
        .output()
        .unwrap();
    assert_eq!(pass.status.code(), Some(0));

    // G1 with System.gc(): full collections by cause, heap before/after every pause line.
    let system_gc = awk(
        r#"/GC\([0-9]+\) Pause Full \(System\.gc\(\)\) .*ms$/ { n++ } END { print n + 0 }"#,
        g1,
    );
    let heap_lines = awk(
        r#"/GC\([0-9]+\) Pause .*->.*ms$/ { n++ } END { print n + 0 }"#,
        g1,
    );
    let json = analyze_json(std::slice::from_ref(g1));
    assert!(system_gc[0] > 0.0);
    let causes = json["pauses"]["full_gc_causes"].as_array().unwrap();
    let by_system = causes.iter().find(|c| c["name"] == "System.gc()").unwrap();
    assert_eq!(by_system["count"].as_f64().unwrap(), system_gc[0]);
    assert!(finding_count(&json, "full_gc") as f64 >= system_gc[0]);
    assert_eq!(
        json["memory"]["heap_samples"].as_f64().unwrap(),
        heap_lines[0]
    );

    // Shenandoah: degenerated cycles, counted as the log names them.
    let degenerated = awk(
        r#"/GC\([0-9]+\) Pause Degenerated GC.*ms$/ { n++ } END { print n + 0 }"#,
        shenandoah,
    );
    let json = analyze_json(std::slice::from_ref(shenandoah));
    assert_eq!(
        finding_count(&json, "degenerated_gc") as f64,
        degenerated[0]
    );

    // Two JVMs given together are analysed apart, each as on its own.
    let both = analyze_json(&[zgc.clone(), g1.clone()]);
    assert_eq!(both["jvm_count"], 2);
    let jvms = both["jvms"].as_array().unwrap();
    assert_eq!(jvms[0]["pauses"]["count"].as_f64().unwrap(), pauses[0]);
    assert_eq!(jvms[0]["jvm"]["collector"], "ZGC");
    assert_eq!(jvms[1]["jvm"]["collector"], "G1");
    let why = both["separated_because"][1].as_str().unwrap();
    assert!(why.starts_with("JDK 25") && why.contains(" vs 17"), "{why}");
    // The interval log holds one JVM: refused, in one line.
    let hlog = dir.join("both.hlog");
    let out = Command::new(bin())
        .args(["analyze", "--hlog"])
        .arg(&hlog)
        .arg(zgc)
        .arg(g1)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("2 different JVMs") && err.lines().count() == 1,
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_decoration_set_gives_the_same_pauses_as_an_independent_count() {
    let dir = work_dir("decorations");
    compile(&dir);
    // One JVM writes the same events into one file per decoration set.
    let sets = [
        "uptime",
        "time",
        "utctime",
        "uptimemillis",
        "timemillis",
        "uptimenanos",
        "timenanos",
        "time,uptime,level,tags",
        "utctime,uptimenanos,pid,tid,level,tags",
        "hostname,uptime,level,tags",
        "uptimemillis,pid,tags",
        "tid,uptime",
    ];
    let logs: Vec<PathBuf> = sets
        .iter()
        .map(|set| dir.join(format!("decorated-{}.log", set.replace(',', "-"))))
        .collect();
    let mut java = Command::new(format!("{JDK17}/bin/java"));
    java.args(["-Xmx64m", "-XX:+UseG1GC", "-XX:ActiveProcessorCount=2"]);
    for (set, log) in sets.iter().zip(&logs) {
        java.arg(format!("-Xlog:gc*,safepoint:file={}:{set}", log.display()));
    }
    let status = java
        .arg("-cp")
        .arg(&dir)
        .args(["Churn", "1", "2", "40", "300"])
        .status()
        .expect("java of JDK 17");
    assert!(status.success());
    for (set, log) in sets.iter().zip(&logs) {
        // Pause lines end in "<duration>ms"; safepoint lines carry "Total: <n> ns".
        let counted = awk(
            r#"/GC\([0-9]+\) Pause .*[0-9]ms$/ { n++; sub(/ms$/, "", $NF); s += $NF }
               /Safepoint ".*Total: [0-9]+ ns/ { sp++ }
               END { print n + 0, s + 0, sp + 0 }"#,
            log,
        );
        let json = analyze_json(std::slice::from_ref(log));
        assert!(counted[0] > 0.0, "{set}: no pauses in the log");
        assert_eq!(
            json["pauses"]["count"].as_f64().unwrap(),
            counted[0],
            "{set}"
        );
        close(
            json["pauses"]["total_ms"].as_f64().unwrap(),
            counted[1],
            &format!("{set}: pause sum"),
        );
        assert_eq!(
            json["safepoints"]["count"].as_f64().unwrap(),
            counted[2],
            "{set}"
        );
        assert_eq!(json["unparsed_lines"].as_u64().unwrap(), 0, "{set}");
        // A start is given on the clocks the log has, and never made up.
        // `timenanos` is System.nanoTime(): a monotonic clock, read as the uptime axis.
        let has_uptime = set.contains("uptime") || set.contains("timenanos");
        let has_wall = set
            .split(',')
            .any(|d| ["time", "utctime", "timemillis"].contains(&d));
        for worst in json["worst"].as_array().unwrap() {
            assert_eq!(worst["start_ms"].is_f64(), has_uptime, "{set}: {worst}");
            assert_eq!(worst["wall_start_ms"].is_f64(), has_wall, "{set}: {worst}");
        }
        assert!(
            json["warnings"].as_array().unwrap().is_empty(),
            "{set}: {}",
            json["warnings"]
        );
    }
}

/// Keeps about `live` KiB alive in 8 KiB arrays, replacing random ones: young collections
/// find live objects to promote into a nearly full old generation, and full collections
/// follow them. Args: live-KiB replacements.
const FILL: &str = r#"
import java.util.*;
public class Fill {
  public static void main(String[] a) {
    byte[][] live = new byte[Integer.parseInt(a[0]) / 8][];
    long replacements = Long.parseLong(a[1]);
    Random r = new Random(1);
    for (long i = 0; i < replacements; i++) live[r.nextInt(live.length)] = new byte[8 * 1024];
  }
}
"#;

/// Pauses by an independent count: a pause line whose `gc,start` line came while another
/// pause was open lies inside it (one stop, not counted); prints pauses, their sum, `Pause
/// Full` lines (a nested one is its outer pause, upgraded), nested pauses.
const NESTED_AWK: &str = r#"
/GC\([0-9]+\) Pause / {
  match($0, /GC\([0-9]+\)/); id = substr($0, RSTART + 3, RLENGTH - 4)
  if ($0 ~ /[0-9]ms$/) {
    nested = 0
    for (i = 1; i <= n; i++) if (open[i] == id) { nested = i > 1; for (j = i; j < n; j++) open[j] = open[j + 1]; n--; break }
    if (nested) inner++; else { count++; v = $NF; sub(/ms$/, "", v); sum += v }
    if ($0 ~ / Pause Full/) full++
  } else if ($0 ~ /gc,start/) open[++n] = id
}
END { printf "%d %.3f %d %d\n", count, sum, full, inner + 0 }
"#;

#[test]
fn full_collections_in_or_after_a_young_one_match_an_independent_count() {
    let dir = work_dir("fill");
    std::fs::write(dir.join("Fill.java"), FILL).unwrap();
    let status = Command::new(format!("{JDK17}/bin/javac"))
        .args(["--release", "17", "-d"])
        .arg(&dir)
        .arg(dir.join("Fill.java"))
        .status()
        .expect("javac of JDK 17");
    assert!(status.success());
    let mut logs = Vec::new();
    // JDK 17 and 25 run the full collection after the young one, in the same safepoint.
    for (jdk, label, collector) in [
        (JDK17, "17", "Serial"),
        (JDK17, "17", "Parallel"),
        (JDK25, "25", "Serial"),
    ] {
        let log = dir.join(format!("{collector}-{label}.log"));
        let status = Command::new(format!("{jdk}/bin/java"))
            .arg(format!("-XX:+Use{collector}GC"))
            .args(["-Xmx8m", "-XX:ActiveProcessorCount=2"])
            .arg(format!("-Xlog:gc*,safepoint:file={}", log.display()))
            .arg("-cp")
            .arg(&dir)
            .args(["Fill", "5000", "20000"])
            .status()
            .unwrap();
        assert!(status.success(), "{collector} on {jdk}");
        logs.push(log);
    }
    // JDK 9-10 (GCViewer's samples, real logs) printed the full collection inside the young one.
    let samples = analyze_support::shared_gclogs().join("gcviewer-samples.tar.gz");
    for member in ["serial", "cms"] {
        let name = format!(
            "gcviewer-samples/logs/unified-jvm-logging/sample-ujl-{member}-gc-all,safepoint,os+cpu.txt"
        );
        let out = Command::new("tar")
            .arg("xzOf")
            .arg(&samples)
            .arg(&name)
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}");
        let log = dir.join(format!("jdk9-{member}.log"));
        std::fs::write(&log, out.stdout).unwrap();
        logs.push(log);
    }
    let mut nested_seen = 0.0;
    for log in &logs {
        let [count, sum, full, nested] = awk(NESTED_AWK, log)[..] else {
            panic!("awk on {}", log.display())
        };
        nested_seen += nested;
        let json = analyze_json(std::slice::from_ref(log));
        let what = log.display();
        assert!(full > 0.0, "{what}: no full collection provoked");
        assert_eq!(json["pauses"]["count"].as_f64().unwrap(), count, "{what}");
        close(
            json["pauses"]["total_ms"].as_f64().unwrap(),
            sum,
            "pause total",
        );
        assert_eq!(finding_count(&json, "full_gc") as f64, full, "{what}");
        // The same JVM as `-Xlog:gc` alone would have logged it (the `[gc]` lines): no
        // start lines tell the nesting, the order of the lines does; the same stops.
        let only_gc = log.with_extension("gc-only.log");
        let text = std::fs::read_to_string(log).unwrap();
        let kept: String = text
            .lines()
            .filter(|l| l.contains("][gc ") || l.contains("][gc]"))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&only_gc, kept).unwrap();
        let json = analyze_json(std::slice::from_ref(&only_gc));
        assert_eq!(
            json["pauses"]["count"].as_f64().unwrap(),
            count,
            "{what} (-Xlog:gc)"
        );
        close(
            json["pauses"]["total_ms"].as_f64().unwrap(),
            sum,
            "pause total (-Xlog:gc)",
        );
        assert_eq!(
            finding_count(&json, "full_gc") as f64,
            full,
            "{what} (-Xlog:gc)"
        );
    }
    assert!(
        nested_seen >= 3.0,
        "the JDK 9 samples nest 3 full collections"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Allocates after a line on stdin, so the JVM starts at full speed and only its
/// collections run on a saturated CPU. Args: live KiB, 8 KiB arrays to allocate.
const SATURATED: &str = r#"
import java.util.*;
public class Saturated {
  public static void main(String[] a) throws Exception {
    byte[][] live = new byte[Integer.parseInt(a[0]) / 8][];
    long replacements = Long.parseLong(a[1]);
    Random r = new Random(1);
    System.out.println("ready");
    System.out.flush();
    new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();
    for (long i = 0; i < replacements; i++) live[r.nextInt(live.length)] = new byte[8 * 1024];
  }
}
"#;

/// What `real_gt_cpu` ranks its causes by, summed by awk over the pauses it takes (real >
/// user + sys + 50 ms, from `gc+cpu` lines): pauses, real, user, sys (ms).
const OFF_CPU_AWK: &str = r#"
/gc,cpu/ && /User=/ {
  for (i = 1; i <= NF; i++) {
    if ($i ~ /^User=/) u = substr($i, 6) + 0
    if ($i ~ /^Sys=/) s = substr($i, 5) + 0
    if ($i ~ /^Real=/) r = substr($i, 6) + 0
  }
  if (r > u + s + 0.05) { n++; R += r; U += u; S += s }
}
END { printf "%d %.0f %.0f %.0f\n", n, R * 1000, U * 1000, S * 1000 }
"#;

#[test]
fn on_a_saturated_cpu_descheduling_ranks_first_and_no_option_the_jvm_has_is_advised() {
    let dir = analyze_support::fresh_dir("analyze-collectors", "saturated");
    std::fs::write(dir.join("Saturated.java"), SATURATED).unwrap();
    let status = Command::new(format!("{JDK17}/bin/javac"))
        .args(["--release", "17", "-d"])
        .arg(&dir)
        .arg(dir.join("Saturated.java"))
        .status()
        .unwrap();
    assert!(status.success());
    for (jdk, label) in [(JDK17, "17"), (JDK25, "25")] {
        let log = dir.join(format!("gc-{label}.log"));
        // The ranking's inputs, counted without pauselab: off-CPU pauses whose real time
        // is over twice their CPU time, with sys at most a fifth of the time off-CPU. The
        // scheduler may let a run's collections through before the loops take the CPU:
        // such a run shows nothing to rank, and is run again (three runs at most).
        let mut counted = [0.0; 4];
        for _ in 0..3 {
            run_saturated(jdk, &dir, &log);
            let Ok(read) = <[f64; 4]>::try_from(awk(OFF_CPU_AWK, &log)) else {
                panic!("awk on {}", log.display())
            };
            counted = read;
            if counted[0] >= 1.0 {
                break;
            }
        }
        let [n, real, user, sys] = counted;
        let off = real - user - sys;
        assert!(
            n >= 1.0,
            "no pause off-CPU beside busy loops: {}",
            log.display()
        );
        assert!(
            real >= 2.0 * (user + sys) && 5.0 * sys <= off,
            "{real} {user} {sys}"
        );

        let json = analyze_json(std::slice::from_ref(&log));
        let finding = json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["rule"] == "real_gt_cpu")
            .expect("real_gt_cpu");
        assert_eq!(finding["count"].as_f64().unwrap(), n);
        let first = finding["causes"][0]["cause"].as_str().unwrap();
        assert!(first.starts_with("descheduling"), "{}", finding["causes"]);
        let text = Command::new(bin())
            .arg("analyze")
            .arg(&log)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&text.stdout);
        assert!(text.contains("causes: 1. descheduling"), "{text}");
        // JDK 25 writes the JVM's arguments (`-Xlog:arguments`) into the log file; JDK 17
        // only to stdout, so its log cannot tell.
        let fixes = finding["fixes"].to_string();
        if label == "25" {
            assert!(!fixes.contains("PerfDisableSharedMem"), "{fixes}");
            assert!(
                text.contains("already runs with -XX:+PerfDisableSharedMem"),
                "{text}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `Saturated` on `jdk`, niced, with busy loops on every core while it allocates, so
/// the loops take the CPU from its GC thread. It already runs with
/// -XX:+PerfDisableSharedMem.
fn run_saturated(jdk: &str, dir: &Path, log: &Path) {
    use std::io::{BufRead, BufReader, Write};
    let mut jvm = Command::new("nice")
        .args(["-n", "10"])
        .arg(format!("{jdk}/bin/java"))
        .args([
            "-XX:+UseG1GC",
            "-XX:ParallelGCThreads=1",
            "-XX:+PerfDisableSharedMem",
            "-Xmx32m",
        ])
        .arg(format!(
            "-Xlog:gc*,safepoint,arguments:file={}",
            log.display()
        ))
        .arg("-cp")
        .arg(dir)
        // 120 MB allocated: long enough that the JVM runs past the scheduler's credit for
        // its wake-up and its collections share the CPU with the loops (1,500 arrays,
        // 12 MB, could finish inside that credit, with no pause off-CPU).
        .args(["Saturated", "8192", "15000"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    BufReader::new(jvm.stdout.take().unwrap())
        .read_line(&mut ready)
        .unwrap();
    assert_eq!(ready.trim(), "ready");
    let busy = analyze_support::CpuHogs::start();
    jvm.stdin.take().unwrap().write_all(b"go\n").unwrap();
    assert!(jvm.wait().unwrap().success());
    drop(busy);
}

/// A program that keeps a cache of byte arrays churning, run by JDK 25 for `seconds` with
/// `flags`; its log is `dir/name.log`.
fn run_cache_churn(dir: &Path, name: &str, flags: &[&str], seconds: u32) -> PathBuf {
    let program = dir.join("CacheChurn.java");
    std::fs::write(
        &program,
        r#"import java.util.*;
public class CacheChurn {
  static volatile Object sink;
  public static void main(String[] a) {
    long end = System.currentTimeMillis() + Long.parseLong(a[0]) * 1000;
    LinkedHashMap<Integer, byte[]> cache = new LinkedHashMap<>(2000, 0.75f, true) {
      protected boolean removeEldestEntry(Map.Entry<Integer, byte[]> e) { return size() > 2000; }
    };
    Random r = new Random(42);
    for (long i = 0; System.currentTimeMillis() < end; i++) {
      sink = new byte[r.nextInt(512) + 16];
      if (i % 4 == 0) cache.put(r.nextInt(100000), new byte[r.nextInt(16384) + 1024]);
    }
  }
}
"#,
    )
    .unwrap();
    let log = dir.join(format!("{name}.log"));
    let _ = std::fs::remove_file(&log);
    let logging: Vec<String> = flags
        .iter()
        .map(|f| f.replace("FILE", log.to_str().unwrap()))
        .collect();
    let status = Command::new(format!("{JDK25}/bin/java"))
        .args(&logging)
        .arg("-XX:ActiveProcessorCount=2")
        .arg(&program)
        .arg(seconds.to_string())
        .status()
        .unwrap();
    assert!(status.success(), "{name}: the JVM failed");
    log
}

/// JDK 25 at the edges of unified logging, against counts of the log's lines:
/// - asynchronous logging with a small buffer drops messages (`[warning][   ]    105
///   messages dropped due to async logging`) and `gc*=trace` writes messages over several
///   lines, the later ones with blank decorations: every line is read, and the drops are
///   a warning with their total, since the counts are then lower bounds;
/// - generational ZGC's workers stall on relocation under the collection's id (`GC(54) y:
///   Relocation Stall (ZWorkerYoung#0) 0.352ms`): counted with the application's stalls;
/// - ZGC logged with `-Xlog:gc` has no pause lines: a warning says which tags hold them.
#[test]
fn jdk25_async_drops_multi_line_messages_and_zgc_worker_stalls_are_read() {
    let dir = work_dir("jdk25-async");
    let log = run_cache_churn(
        &dir,
        "g1-async-trace",
        &[
            "-Xmx128m",
            "-XX:AsyncLogBufferSize=102400",
            "-Xlog:async",
            "-Xlog:gc*=trace,safepoint:file=FILE::filecount=0",
        ],
        2,
    );
    let dropped = awk(
        "/messages dropped due to async logging/ { n += $(NF - 6) } END { print n + 0 }",
        &log,
    )[0] as u64;
    let blank = awk("/^\\[ +\\]/ { n++ } END { print n + 0 }", &log)[0];
    assert!(
        dropped > 0 && blank > 0.0,
        "{dropped} dropped, {blank} continuation lines"
    );
    let json = analyze_json(std::slice::from_ref(&log));
    assert_eq!(json["unparsed_lines"], 0, "{}", json["first_unparsed"]);
    assert_eq!(json["inputs"][0]["dropped_messages"], dropped);
    let warned = json["warnings"].as_array().unwrap().iter().any(|w| {
        w["message"].as_str().unwrap().starts_with(&format!(
            "asynchronous logging (-Xlog:async) dropped {dropped} log messages"
        ))
    });
    assert!(warned, "{}", json["warnings"]);

    // Whether a worker stalls depends on the scheduler: a run without one is run again
    // (three runs at most).
    let mut zgc_run = None;
    for _ in 0..3 {
        let log = run_cache_churn(
            &dir,
            "zgc-stalls",
            &["-XX:+UseZGC", "-Xmx64m", "-Xlog:gc*:file=FILE"],
            3,
        );
        let by_workers = awk(
            "/Relocation Stall \\(ZWorker/ { n++ } END { print n + 0 }",
            &log,
        )[0];
        if by_workers > 0.0 {
            zgc_run = Some(log);
            break;
        }
    }
    let log = zgc_run.expect("no ZGC worker stalled in three runs: nothing to check");
    let stalls = awk("/Relocation Stall \\(/ { n++ } END { print n + 0 }", &log)[0] as u64;
    let json = analyze_json(std::slice::from_ref(&log));
    assert_eq!(json["relocation_stalls"]["count"], stalls);

    let log = run_cache_churn(
        &dir,
        "zgc-gc-only",
        &["-XX:+UseZGC", "-Xmx64m", "-Xlog:gc:file=FILE"],
        1,
    );
    let json = analyze_json(std::slice::from_ref(&log));
    assert_eq!(json["pauses"]["count"], 0);
    let hinted = json["warnings"].as_array().unwrap().iter().any(|w| {
        w["message"]
            .as_str()
            .unwrap()
            .contains("ZGC writes its pauses")
    });
    assert!(hinted, "{}", json["warnings"]);
}
