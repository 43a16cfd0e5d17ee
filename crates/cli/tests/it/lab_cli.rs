//! `pauselab lab` as a new user meets it: without a subcommand it only prints help, `lab
//! list` says which experiments need root, and without root `lab run` of one of those stops
//! with one line before it changes anything, while the others run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn pauselab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pauselab"))
}

/// `pauselab ARGS` as user `nobody` (root only: setpriv needs it), or None.
fn as_nobody(args: &[&str], state: &Path) -> Option<Output> {
    // SAFETY: no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: switching to user nobody needs root");
        return None;
    }
    let output = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_pauselab"))
        .args(args)
        .env("PAUSELAB_STATE_DIR", state)
        .current_dir("/")
        .output()
        .expect("setpriv (util-linux) runs");
    Some(output)
}

fn fresh_state_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lab-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn lab_alone_prints_help_and_changes_nothing() {
    let state = fresh_state_dir("help");
    let output = pauselab()
        .arg("lab")
        .env("PAUSELAB_STATE_DIR", &state)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("Usage: pauselab lab <COMMAND>"), "{stderr}");
    for command in ["list", "show", "run", "cleanup"] {
        assert!(
            stderr.contains(&format!("\n  {command} ")),
            "{command}: {stderr}"
        );
    }
    assert!(
        !state.exists(),
        "`pauselab lab` created {}",
        state.display()
    );
}

#[test]
fn list_says_which_experiments_need_root() {
    let output = pauselab().args(["lab", "list", "--json"]).output().unwrap();
    assert!(output.status.success());
    let rows: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let needs_root = |name: &str| {
        let row = rows
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("{name} not listed: {rows}"));
        assert_eq!(
            row["needs_root"].as_bool().unwrap(),
            !row["root_for"].as_array().unwrap().is_empty(),
            "{row}"
        );
        row["needs_root"].as_bool().unwrap()
    };
    // Slow device, mount namespaces, cgroups, sysfs writes...
    for name in [
        "hsperf-mmap",
        "gclog-io",
        "cpu-quota",
        "memory-pressure",
        "swap",
        "startup-pressure",
    ] {
        assert!(needs_root(name), "{name}");
    }
    // ...against JVMs on the host's own /tmp, with nothing changed on the host.
    for name in ["pretouch", "jfr-overhead", "classload-cds"] {
        assert!(!needs_root(name), "{name}");
    }
    let text = pauselab().args(["lab", "list"]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name}: {text}"))
            .to_string()
    };
    assert!(line("hsperf-mmap").contains(" root "), "{text}");
    assert!(!line("pretouch").contains(" root "), "{text}");
}

#[test]
fn without_root_an_experiment_that_needs_it_stops_before_touching_anything() {
    let state = fresh_state_dir("nonroot");
    let Some(output) = as_nobody(&["lab", "run", "hsperf-mmap", "--duration", "5s"], &state) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains("hsperf-mmap"), "{stderr}");
    assert!(stderr.contains("needs root"), "{stderr}");
    assert!(stderr.contains("slow device"), "{stderr}");
    assert!(output.stdout.is_empty());
    assert!(!state.exists(), "a refused run created {}", state.display());
    // With --no-fault the slow device is not needed, but the mount namespaces still are.
    let output = as_nobody(
        &[
            "lab",
            "run",
            "hsperf-mmap",
            "--no-fault",
            "--duration",
            "5s",
        ],
        &state,
    )
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("slow device"), "{stderr}");
    assert!(stderr.contains("mount namespace"), "{stderr}");
    assert!(!state.exists());
}

/// An experiment whose JVMs use the host's own /tmp changes nothing on the host: it runs as
/// any user, with its bundle under /tmp.
#[test]
fn without_root_an_experiment_on_the_host_tmp_runs_with_its_bundle_under_tmp() {
    // SAFETY: no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: switching to user nobody needs root");
        return;
    }
    // Everything nobody reads or writes lives in one directory under /tmp, open to it.
    let dir = tempdir_under_tmp("nonroot-run");
    let experiment = host_tmp_experiment(&dir, "8s", true);
    let out = dir.join("bundle");
    let state = dir.join("state");
    chmod_recursive(&dir);
    let output = as_nobody(
        &[
            "lab",
            "run",
            experiment.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--json",
        ],
        &state,
    )
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        matches!(output.status.code(), Some(0) | Some(3)),
        "{stdout} {stderr}"
    );
    let verdict: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for variant in verdict["variants"].as_array().unwrap() {
        assert!(variant["skipped"].is_null(), "{variant}");
        assert!(
            variant["safepoints"]["count"].as_u64().unwrap() > 0,
            "{variant}"
        );
    }
    assert!(out.join("verdict.json").is_file());
    // Every JVM names the threads of a safepoint that waits a second for them.
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    for variant in manifest["variants"].as_array().unwrap() {
        let command: Vec<&str> = variant["command"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        for flag in ["-XX:+SafepointTimeout", "-XX:SafepointTimeoutDelay=1000"] {
            assert!(command.contains(&flag), "{command:?}");
        }
    }
    // `jfr = true`: each variant's recording, dumped when the lab stopped the JVM, holds
    // the GC pauses `jfr print` finds in it; without a GC log the report's pause markers
    // come from it.
    let mut recorded = Vec::new();
    for variant in manifest["variants"].as_array().unwrap() {
        let dir = out.join(variant["dir"].as_str().unwrap());
        let recording = dir.join("recording.jfr");
        let events = Command::new("jfr")
            .args(["print", "--json", "--events", "jdk.GCPhasePause"])
            .arg(&recording)
            .output()
            .unwrap();
        assert!(
            events.status.success(),
            "{}: {}",
            recording.display(),
            String::from_utf8_lossy(&events.stderr)
        );
        let events: serde_json::Value = serde_json::from_slice(&events.stdout).unwrap();
        let pauses = events["recording"]["events"].as_array().unwrap().len();
        assert!(pauses > 0, "{}", recording.display());
        std::fs::remove_file(dir.join("gc.log")).unwrap();
        recorded.push((variant["id"].clone(), pauses));
    }

    // The report reads what the lab wrote: the same verdicts, variant by variant.
    let report = pauselab()
        .args(["report", "--json", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let section = &report["sections"][0];
    assert_eq!(section["result"], verdict["result"]);
    let written = verdict["variants"].as_array().unwrap();
    let read = section["variants"].as_array().unwrap();
    assert_eq!(read.len(), written.len());
    for variant in written {
        let shown = read.iter().find(|r| r["id"] == variant["id"]).unwrap();
        assert_eq!(shown["verdict"], variant["verdict"], "{shown}");
        assert_eq!(shown["evidence"], variant["evidence"], "{shown}");
    }
    for (id, pauses) in recorded {
        let shown = read.iter().find(|r| r["id"] == id).unwrap();
        assert_eq!(shown["gc_pauses"], pauses, "{shown}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two variants of the test workload `Garbage` on the host's `/tmp` (no root needed),
/// compiled and written into `dir`; returns the experiment file.
fn host_tmp_experiment(dir: &Path, duration: &str, jfr: bool) -> PathBuf {
    let classes = dir.join("classes");
    let javac = Command::new("javac")
        .arg("-d")
        .arg(&classes)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lab/Garbage.java"))
        .status()
        .expect("javac (a JDK) is needed for the lab tests");
    assert!(javac.success());
    let experiment = dir.join("host-tmp.toml");
    std::fs::write(
        &experiment,
        format!(
            r#"name = "test-host-tmp"
description = "test: two variants on the host's /tmp"
duration = "{duration}"
baseline = "small"

[workload]
main = "Garbage"
classpath = ["classes"]
args = ["{{duration_s}}"]
jvm_flags = ["-XX:+UseSerialGC"]
hiccup_agent = false
gc_log = "safepoint"
jfr = {jfr}

[[variant]]
name = "small"
flags = ["-Xmx64m"]
tmp = "host"

[[variant]]
name = "large"
flags = ["-Xmx128m"]
tmp = "host"
role = "subject"

[verdict]
metric = "safepoint"
margin = 3.0
floor_ms = 200.0
noise_ms = 300.0
"#
        ),
    )
    .unwrap();
    experiment
}

/// Busy time of all CPUs over one second, percent (from /proc/stat).
fn host_busy_pct() -> f64 {
    let ticks = || -> (u64, u64) {
        let stat = std::fs::read_to_string("/proc/stat").unwrap();
        let cpu: Vec<u64> = stat
            .lines()
            .next()
            .unwrap()
            .split_whitespace()
            .skip(1)
            .map(|f| f.parse().unwrap())
            .collect();
        let idle = cpu[3] + cpu[4];
        (cpu.iter().sum::<u64>() - idle, cpu.iter().sum())
    };
    let (busy0, all0) = ticks();
    std::thread::sleep(std::time::Duration::from_secs(1));
    let (busy1, all1) = ticks();
    100.0 * (busy1 - busy0) as f64 / (all1 - all0).max(1) as f64
}

/// The highest "some avg10" pressure of CPU, I/O and memory, percent (0 without PSI).
fn host_pressure_pct() -> f64 {
    ["cpu", "io", "memory"]
        .iter()
        .filter_map(|r| std::fs::read_to_string(format!("/proc/pressure/{r}")).ok())
        .filter_map(|text| {
            let some = text.lines().find(|l| l.starts_with("some "))?.to_string();
            some.split_whitespace()
                .find_map(|f| f.strip_prefix("avg10="))?
                .parse::<f64>()
                .ok()
        })
        .fold(0.0, f64::max)
}

/// CPU-bound `yes` processes, killed when dropped.
struct BusyLoops(Vec<std::process::Child>);

impl Drop for BusyLoops {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `noisy` of a 6 s run of the host-tmp experiment (verdict.json through --json).
fn noisy_of_a_short_run(dir: &Path, name: &str) -> Vec<String> {
    let out = pauselab()
        .args(["lab", "run"])
        .arg(dir.join("host-tmp.toml"))
        .arg("--out")
        .arg(dir.join(name))
        .arg("--json")
        .env("PAUSELAB_STATE_DIR", dir.join("state"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(0) | Some(3) | Some(4)),
        "{stdout} {stderr}"
    );
    let verdict: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    verdict["noisy"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_run_beside_busy_loops_is_noisy_and_names_them_the_same_run_on_a_quiet_host_is_not() {
    // No slow device or host change of another test beside it: their I/O pressure is
    // exactly what the verdict must notice, and its loops would make their verdicts noisy.
    let _host = crate::host_lock::exclusive();
    let dir = tempdir_under_tmp("noise");
    host_tmp_experiment(&dir, "6s", false);
    // The quiet half first: pressure (a 10 s average) stays up a while after the loops.
    // Its assertion needs a host that is quiet on its own, which a shared one may not be.
    let busy = host_busy_pct();
    let pressure = host_pressure_pct();
    if busy < 25.0 && pressure < 10.0 {
        let noisy = noisy_of_a_short_run(&dir, "quiet");
        assert!(noisy.is_empty(), "a quiet host was called busy: {noisy:?}");
    } else {
        eprintln!(
            "quiet half skipped: the host was {busy:.0} % busy (limit 25 %) with pressure {pressure:.0} % (limit 10 %) before it"
        );
    }
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let loops = BusyLoops(
        (0..2 * cpus)
            .map(|_| {
                Command::new("sh")
                    .args(["-c", "exec yes > /dev/null"])
                    .spawn()
                    .unwrap()
            })
            .collect(),
    );
    std::thread::sleep(std::time::Duration::from_secs(1));
    let noisy = noisy_of_a_short_run(&dir, "busy");
    drop(loops);
    let during = noisy
        .iter()
        .find(|l| l.starts_with("during the run: other processes used"))
        .unwrap_or_else(|| panic!("no busy seconds named: {noisy:?}"));
    assert!(
        during.contains("; busiest: ") && during.contains("yes "),
        "{during}"
    );
    eprintln!("beside the loops: {during}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempdir_under_tmp(name: &str) -> PathBuf {
    let dir = Path::new("/tmp").join(format!("pauselab-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn chmod_recursive(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            chmod_recursive(&path);
        } else {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        }
    }
}

const JDK17: &str = "/usr/lib/jvm/java-17-openjdk-amd64";

/// `pauselab lab run ARGS --dry-run` with `PATH` set to `path`.
fn dry_run(args: &[&str], path: &str, state: &Path) -> Output {
    pauselab()
        .args(["lab", "run"])
        .args(args)
        .args(["--jdk", JDK17, "--dry-run"])
        .env("PATH", path)
        .env("PAUSELAB_STATE_DIR", state)
        .output()
        .unwrap()
}

#[test]
fn a_run_no_longer_than_its_warm_up_is_refused_and_warmup_shortens_it() {
    let state = fresh_state_dir("warmup");
    let path = std::env::var("PATH").unwrap();
    // gclog-io leaves its first 20 s out of the measurements.
    let short = dry_run(&["gclog-io", "--duration", "15s"], &path, &state);
    let stderr = String::from_utf8_lossy(&short.stderr);
    assert_eq!(short.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("a 15s run leaves nothing to measure after the experiment's 20s warm-up")
            && stderr.lines().count() == 1,
        "{stderr}"
    );
    let shortened = dry_run(
        &["gclog-io", "--duration", "15s", "--warmup", "5s"],
        &path,
        &state,
    );
    let text = String::from_utf8_lossy(&shortened.stdout);
    assert_eq!(shortened.status.code(), Some(0), "{text}");
    assert!(
        text.contains("run(s) of 15s, the first 5s not measured"),
        "{text}"
    );
    let json = dry_run(
        &[
            "gclog-io",
            "--duration",
            "15s",
            "--warmup",
            "5000ms",
            "--json",
        ],
        &path,
        &state,
    );
    let plan: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(plan["warmup_s"], 5.0);
    assert!(!state.exists(), "a dry run created {}", state.display());
}

#[test]
fn a_matrix_plan_expands_every_combination_and_changes_nothing() {
    let state = fresh_state_dir("plan");
    let path = std::env::var("PATH").unwrap();
    // The plan names what each cell runs: its variants with their roles, and the JDKs.
    let pretouch = dry_run(&["pretouch", "--duration", "20s"], &path, &state);
    let text = String::from_utf8_lossy(&pretouch.stdout);
    assert!(
        text.contains("each cell runs 6 variant(s), one by one: 1g (baseline), 1g-pretouch (subject), 4g (mitigation)")
            && text.contains(&format!("on jdk17: {JDK17} (openjdk version \"17")),
        "{text}"
    );
    let args = [
        "hsperf-mmap",
        "--gc",
        "G1",
        "--gc",
        "Parallel",
        "--fs",
        "ext4",
        "--fs",
        "xfs",
        "--mount-options",
        "relatime",
        "--mount-options",
        "lazytime",
        "--repeat",
        "2",
        "--duration",
        "60s",
        "--json",
    ];
    let output = dry_run(&args, &path, &state);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!state.exists(), "a dry run created {}", state.display());
    // SAFETY: no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let has_xfs = std::env::split_paths(&path).any(|d| d.join("mkfs.xfs").is_file());
    if !root || !has_xfs {
        assert_eq!(output.status.code(), Some(1));
        let why = if root {
            "mkfs.xfs is not installed"
        } else {
            "needs root"
        };
        assert!(
            stderr.contains(why) && stderr.lines().count() == 1,
            "{stderr}"
        );
        return;
    }
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let plan: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let cells: Vec<&str> = plan["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["label"].as_str().unwrap())
        .collect();
    assert_eq!(cells.len(), 8);
    let runs: Vec<&str> = plan["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(runs.len(), 16);
    for cell in &cells {
        for repeat in [1, 2] {
            let name = format!("{cell}-r{repeat}");
            assert_eq!(runs.iter().filter(|r| **r == name).count(), 1, "{name}");
        }
    }
    assert!(cells.contains(&"Parallel-xfs-lazytime"));
    let per_run = plan["per_run_s"].as_f64().unwrap();
    assert!(per_run > 60.0);
    assert_eq!(
        plan["expected_duration_s"].as_f64().unwrap(),
        16.0 * per_run
    );
}

#[test]
fn a_filesystem_or_collector_the_host_lacks_is_refused_before_any_change() {
    // SAFETY: no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: --fs needs root to be planned at all");
        return;
    }
    let state = fresh_state_dir("refuse");
    // No mkfs anywhere on this PATH.
    let empty = fresh_state_dir("empty-path");
    std::fs::create_dir_all(&empty).unwrap();
    let output = dry_run(
        &["hsperf-mmap", "--fs", "btrfs"],
        empty.to_str().unwrap(),
        &state,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.trim(),
        "pauselab: error: lab run hsperf-mmap: --fs btrfs: mkfs.btrfs is not installed (not on PATH); install it or leave btrfs out (nothing was changed)"
    );
    assert!(
        !state.exists(),
        "a refused plan created {}",
        state.display()
    );
    // A collector the JDK cannot start: asked of the JVM itself.
    let output = dry_run(&["hsperf-mmap", "--gc", "CMS"], "/usr/bin:/bin", &state);
    assert_eq!(
        output.status.code(),
        Some(2),
        "clap refuses an unknown collector name"
    );
    let jdk11 = PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/pauselab/jdks/11");
    if jdk11.join("bin/java").is_file() {
        let output = pauselab()
            .args([
                "lab",
                "run",
                "hsperf-mmap",
                "--gc",
                "ZGC",
                "--dry-run",
                "--jdk",
            ])
            .arg(&jdk11)
            .env("PAUSELAB_STATE_DIR", &state)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains("--gc ZGC: JDK 11") && stderr.contains("experimental"),
            "{stderr}"
        );
        assert!(!state.exists());
    } else {
        eprintln!("JDK 11 not in the cache (`make jdks`): its ZGC refusal not checked");
    }
}
