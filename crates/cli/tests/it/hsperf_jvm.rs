//! `pauselab jvms`, `perf`, `jstat` and `jcmd` against real JVMs (JDK 17 and 25), compared
//! with the JDK's own jcmd and jstat while the target is frozen with SIGSTOP, plus the
//! failure modes users meet: PerfDisableSharedMem, a private /tmp, a process that is not a
//! JVM, a pid that does not exist, a JVM that exits while read, a reader without rights.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use pauselab_hsperf::{locate_region, AddressSource, Reader, Snapshot, Source};

use crate::process_support;
use process_support::{as_nobody, fake_build};

const JDK17: &str = "/usr/lib/jvm/java-17-openjdk-amd64";
const JDK25: &str = "/usr/lib/jvm/temurin-25-jdk-amd64";
const JSTAT_OPTIONS: [&str; 6] = [
    "-gcutil",
    "-gc",
    "-gccause",
    "-class",
    "-compiler",
    "-printcompilation",
];

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_pauselab")
}

/// A small Java program: sleeps, or allocates steadily with `alloc`.
fn workload_classes() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hsperf-workload");
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("Idle.java");
        std::fs::write(
            &src,
            "public class Idle { public static void main(String[] a) throws Exception {\n\
             boolean alloc = a.length > 0 && a[0].equals(\"alloc\");\n\
             java.util.List<byte[]> keep = new java.util.ArrayList<>();\n\
             for (int i = 0; ; i++) {\n\
               if (!alloc) { Thread.sleep(1000); continue; }\n\
               keep.add(new byte[1024]); if (keep.size() > 2000) keep.clear();\n\
               if (i % 1000 == 0) Thread.sleep(50); } } }\n",
        )
        .unwrap();
        let status = Command::new(format!("{JDK17}/bin/javac"))
            .args(["--release", "17", "-d"])
            .arg(&dir)
            .arg(&src)
            .status()
            .expect("javac runs");
        assert!(status.success(), "javac failed");
        dir
    })
}

/// At most two test JVMs run at once (the host has 2 cores, shared).
struct Slot;

static SLOTS: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

impl Slot {
    fn take() -> Slot {
        let (count, freed) = &SLOTS;
        let mut n = count.lock().unwrap_or_else(|e| e.into_inner());
        while *n >= 2 {
            n = freed.wait(n).unwrap_or_else(|e| e.into_inner());
        }
        *n += 1;
        Slot
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let (count, freed) = &SLOTS;
        *count.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        freed.notify_one();
    }
}

/// A JVM that is killed when the guard drops, also when a test fails.
struct Jvm {
    child: Child,
    _scratch: Option<Scratch>,
    _slot: Slot,
}

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Jvm {
    fn start(jdk: &str, extra: &[&str], alloc: bool) -> Jvm {
        let mut cmd = Command::new(format!("{jdk}/bin/java"));
        cmd.args(["-Xmx64m", "-Xss512k", "-XX:TieredStopAtLevel=1"]);
        cmd.args(extra);
        Self::spawn(cmd, alloc, None)
    }

    fn spawn(mut cmd: Command, alloc: bool, scratch: Option<Scratch>) -> Jvm {
        cmd.arg("-cp").arg(workload_classes()).arg("Idle");
        Self::spawn_with_classpath_set(cmd, alloc, scratch)
    }

    /// Starts a JVM whose /tmp is replaced: the class path is its working directory, which
    /// it keeps when the checkout itself is under /tmp.
    /// Starts a JVM whose /tmp is `scratch`, bound over it: the class is copied there, so
    /// the JVM finds it also when the checkout itself is under /tmp (and hidden from it).
    fn spawn_in_private_tmp(mut cmd: Command, scratch: Scratch) -> Jvm {
        let classes = scratch.0.join("classes");
        std::fs::create_dir_all(&classes).unwrap();
        std::fs::copy(
            workload_classes().join("Idle.class"),
            classes.join("Idle.class"),
        )
        .unwrap();
        cmd.args(["-cp", "/tmp/classes", "Idle"]);
        Self::spawn_with_classpath_set(cmd, false, Some(scratch))
    }

    fn spawn_with_classpath_set(mut cmd: Command, alloc: bool, scratch: Option<Scratch>) -> Jvm {
        if alloc {
            cmd.arg("alloc");
        }
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        let slot = Slot::take();
        let child = cmd.spawn().expect("java starts");
        let jvm = Jvm {
            child,
            _scratch: scratch,
            _slot: slot,
        };
        jvm.wait_ready();
        jvm
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Ready: counters readable, VM start-up finished, SIGQUIT handler installed.
    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = Snapshot::read(self.pid(), Source::Auto)
                .ok()
                .and_then(|s| s.value_i64("sun.rt.createVmEndTime"))
                .is_some_and(|t| t > 0)
                && pauselab_hsperf::read_status(self.pid()).is_ok_and(|s| s.catches_sigquit());
            if ready {
                // Let the main class start so loaded-class counters settle.
                std::thread::sleep(Duration::from_millis(300));
                return;
            }
            assert!(
                Instant::now() < deadline,
                "JVM {} did not get ready",
                self.pid()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops the JVM until the returned guard drops.
    fn freeze(&self) -> Frozen {
        signal(self.pid(), libc::SIGSTOP);
        Frozen(self.pid())
    }
}

impl Drop for Jvm {
    fn drop(&mut self) {
        signal(self.pid(), libc::SIGCONT);
        let _ = self.child.kill();
        let _ = self.child.wait();
        // A killed JVM (or fake) leaves its attach socket behind.
        let _ = std::fs::remove_file(format!("/tmp/.java_pid{}", self.pid()));
    }
}

struct Frozen(u32);

impl Drop for Frozen {
    fn drop(&mut self) {
        signal(self.0, libc::SIGCONT);
    }
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: signalling a child this test started.
    unsafe { libc::kill(pid as i32, sig) };
}

fn run(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .output()
        .expect("pauselab runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(
        o.status.success(),
        "pauselab {args:?} failed: {}",
        stderr(&o)
    );
    stdout(&o)
}

/// jcmd's output without its leading `<pid>:` line.
fn jdk_jcmd(jdk: &str, pid: u32, command: &str) -> String {
    let o = Command::new(format!("{jdk}/bin/jcmd"))
        .arg(pid.to_string())
        .arg(command)
        .output()
        .unwrap();
    assert!(o.status.success(), "jcmd {command} failed: {}", stdout(&o));
    let text = stdout(&o);
    text.split_once('\n')
        .map(|(_, rest)| rest.to_string())
        .unwrap_or_default()
}

fn jdk_jstat(jdk: &str, args: &[&str]) -> String {
    let o = Command::new(format!("{jdk}/bin/jstat"))
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "jstat {args:?} failed: {}", stdout(&o));
    stdout(&o)
}

/// A one-line error naming the pid, with exit code 1.
fn assert_one_line_error(o: &Output, pid: u32, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "not one line: {err:?}");
    assert!(err.starts_with("pauselab: error: "), "{err}");
    assert!(err.contains(&format!("pid {pid}")), "no pid in {err:?}");
    assert!(err.contains(needle), "{needle:?} not in {err:?}");
    assert!(!err.contains("panicked"), "{err}");
}

/// The object `pauselab jvms --json` lists for `pid` (it must succeed and list it).
fn listed_by_jvms(pid: u32) -> serde_json::Value {
    let listed: serde_json::Value = serde_json::from_str(&ok(&["jvms", "--json"])).unwrap();
    listed
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["pid"] == pid)
        .cloned()
        .unwrap_or_else(|| panic!("pid {pid} not listed: {listed}"))
}

fn compare_with_jdk_tools(jdk: &str) {
    let busy = Jvm::start(jdk, &[], true);
    let pid = busy.pid();
    let p = pid.to_string();
    {
        let _frozen = busy.freeze();
        let ours = ok(&["perf", &p]);
        assert_eq!(
            ours,
            jdk_jcmd(jdk, pid, "PerfCounter.print"),
            "perf vs jcmd on {jdk}"
        );
        let from_memory = ok(&["perf", &p, "--source", "memory"]);
        assert_eq!(
            from_memory, ours,
            "memory route differs from file route on {jdk}"
        );
        let gc = ok(&[
            "perf",
            &p,
            "sun.gc.collector.?.invocations",
            "*.hrt.frequency",
        ]);
        assert_eq!(gc.lines().count(), 4, "{gc}");
        for option in JSTAT_OPTIONS {
            assert_eq!(
                ok(&["jstat", option, &p]),
                jdk_jstat(jdk, &[option, &p]),
                "jstat {option} on {jdk}"
            );
        }
        // JDK 22+ has no tick counter: its jstat prints `-` for -t, pauselab the uptime.
        if jdk == JDK17 {
            assert_eq!(
                ok(&["jstat", "-gcutil", "-t", "-h", "2", &p, "10", "3"]),
                jdk_jstat(jdk, &["-gcutil", "-t", "-h", "2", &p, "10", "3"])
            );
        }
        // Both routes to the address agree.
        let symtab = locate_region(pid, Some(AddressSource::Symtab)).unwrap();
        let vm_structs = locate_region(pid, Some(AddressSource::VmStructs)).unwrap();
        assert_eq!(
            (symtab.address, symtab.size),
            (vm_structs.address, vm_structs.size)
        );
    }
    assert_rates_are_changes_per_second(&p);
    drop(busy);

    // A JVM that does not allocate answers GC.heap_info identically twice in a row.
    let quiet = Jvm::start(jdk, &[], false);
    let pid = quiet.pid();
    let p = pid.to_string();
    for command in ["VM.version", "GC.heap_info"] {
        let ours = ok(&["jcmd", &p, command]);
        assert_eq!(ours, jdk_jcmd(jdk, pid, command), "jcmd {command} on {jdk}");
    }
    let unknown = run(&["jcmd", &p, "No.such.command"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(stdout(&unknown).contains("Unknown diagnostic command"));
    // Protocol 2 exists from JDK 24 on; JDK 17 says it does not speak it.
    let v2 = run(&["jcmd", &p, "--protocol", "2", "VM.version"]);
    if jdk == JDK25 {
        assert_eq!(stdout(&v2), jdk_jcmd(jdk, pid, "VM.version"));
    } else {
        assert_one_line_error(&v2, pid, "does not speak attach protocol 2");
    }
}

/// `perf -i --rate`: each monotonic counter's change since the sample before, per second of
/// the interval; ticks counters in seconds per second through sun.os.hrt.frequency.
fn assert_rates_are_changes_per_second(p: &str) {
    let json = ok(&[
        "perf",
        p,
        "-i",
        "300",
        "-n",
        "2",
        "--rate",
        "--json",
        "sun.rt.safepoint*",
        "sun.gc.collector.0.*",
        "sun.os.hrt.frequency",
    ]);
    let docs: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(docs.len(), 2, "-n counts intervals: {json}");
    let value = |doc: &serde_json::Value, name: &str| {
        doc["counters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("{name} not in {doc}"))["value"]
            .as_i64()
            .unwrap()
    };
    let frequency = value(&docs[0], "sun.os.hrt.frequency") as f64;
    let (before, doc) = (&docs[0], &docs[1]);
    let seconds = doc["interval_seconds"].as_f64().unwrap();
    assert!(seconds > 0.0, "{doc}");
    let mut ticks = 0;
    for c in doc["counters"].as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        if c["variability"] != "monotonic" || !c["value"].is_i64() {
            assert!(c.get("delta").is_none() && c.get("rate").is_none(), "{c}");
            continue;
        }
        let delta = c["value"].as_i64().unwrap() - value(before, name);
        assert_eq!(c["delta"].as_i64(), Some(delta), "{c}");
        let (expected, unit) = match c["units"].as_str().unwrap() {
            "ticks" => (delta as f64 / frequency / seconds, "s/s"),
            _ => (delta as f64 / seconds, "/s"),
        };
        ticks += usize::from(unit == "s/s");
        let rate = c["rate"].as_f64().unwrap();
        assert!(
            (rate - expected).abs() <= 1e-9 * expected.abs().max(1.0),
            "{c}"
        );
        assert_eq!(c["rate_unit"], unit, "{c}");
    }
    // sun.rt.safepointTime, safepointSyncTime, sun.gc.collector.0.time.
    assert!(ticks >= 3, "{doc}");
    let text = ok(&[
        "perf",
        p,
        "-i",
        "100",
        "-n",
        "1",
        "--rate",
        "sun.rt.safepoints",
    ]);
    let words: Vec<&str> = text.trim_end().split(' ').collect();
    assert!(
        text.lines().count() == 1
            && words.len() == 4
            && words[0].starts_with("sun.rt.safepoints=")
            && words[1].starts_with('+')
            && words[2].parse::<f64>().is_ok()
            && words[3] == "/s",
        "{text}"
    );
}

#[test]
fn jdk17_matches_jcmd_and_jstat() {
    compare_with_jdk_tools(JDK17);
}

#[test]
fn jdk25_matches_jcmd_and_jstat() {
    compare_with_jdk_tools(JDK25);
}

#[test]
fn perf_disable_shared_mem_jvm_is_listed_and_read() {
    let jvm = Jvm::start(JDK25, &["-XX:+PerfDisableSharedMem"], false);
    let pid = jvm.pid();
    let p = pid.to_string();
    let me = listed_by_jvms(pid);
    assert_eq!(me["shared"], false);
    assert_eq!(me["source"], "memory");
    assert_eq!(me["perf_data"]["kind"], "memory_only");
    assert_eq!(
        me["java_version"].as_str().map(|v| v.starts_with("25")),
        Some(true)
    );
    let gcutil = ok(&["jstat", "-gcutil", &p]);
    assert!(gcutil.starts_with("  S0     S1     E"), "{gcutil}");
    let perf = ok(&["perf", &p, "sun.rt.javaCommand"]);
    assert_eq!(perf, "sun.rt.javaCommand=\"Idle\"\n");
    let file = run(&["perf", &p, "--source", "file"]);
    assert_one_line_error(&file, pid, "PerfDisableSharedMem");
    // The JDK's own tools cannot see it.
    let jstat = Command::new(format!("{JDK25}/bin/jstat"))
        .args(["-gcutil", &p])
        .output()
        .unwrap();
    assert!(!jstat.status.success() || stdout(&jstat).contains("not found"));
}

#[test]
fn jvm_with_private_tmp_is_found_and_read() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("hsperf-private-tmp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let java = format!("{JDK17}/bin/java");
    let mut cmd = Command::new("unshare");
    cmd.args(["-m", "--propagation", "private", "sh", "-c"])
        .arg(format!(
            "mount --bind {} /tmp && exec \"$0\" \"$@\"",
            dir.display()
        ))
        .args([java.as_str(), "-Xmx64m", "-XX:TieredStopAtLevel=1"]);
    let jvm = Jvm::spawn_in_private_tmp(cmd, Scratch(dir.clone()));
    let pid = jvm.pid();
    let p = pid.to_string();
    // Not in the host's /tmp: only reachable through the process's own root.
    assert!(!Path::new(&format!("/tmp/hsperfdata_root/{pid}")).exists());
    assert!(dir.join(format!("hsperfdata_root/{pid}")).exists());
    let me = listed_by_jvms(pid);
    assert_eq!(me["shared"], true);
    assert_eq!(me["source"], "file");
    let reader = Reader::open(pid, Source::File).unwrap();
    assert!(format!("{:?}", reader.route()).contains(&format!("/proc/{pid}/root/tmp")));
    assert_eq!(
        ok(&["perf", &p, "sun.rt.javaCommand"]),
        "sun.rt.javaCommand=\"Idle\"\n"
    );
    assert!(ok(&["jcmd", &p, "VM.version"]).contains("JDK 17"));
}

#[test]
fn non_jvm_and_missing_pids_get_one_line_errors_and_no_signal() {
    let mut sleeper = Command::new("sleep").arg("60").spawn().unwrap();
    let pid = sleeper.id();
    let p = pid.to_string();
    for args in [
        vec!["perf", &p],
        vec!["jstat", "-gcutil", &p],
        vec!["jcmd", &p, "VM.version"],
    ] {
        assert_one_line_error(&run(&args), pid, "not a HotSpot JVM");
    }
    // sleep dies on SIGQUIT: still running means it was never signalled.
    assert!(
        sleeper.try_wait().unwrap().is_none(),
        "the non-JVM was signalled"
    );
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();

    let mut gone = Command::new("true").spawn().unwrap();
    let gone_pid = gone.id();
    gone.wait().unwrap();
    let g = gone_pid.to_string();
    for args in [
        vec!["perf", &g],
        vec!["jstat", "-gc", &g],
        vec!["jcmd", &g, "VM.version"],
    ] {
        assert_one_line_error(&run(&args), gone_pid, "no such process");
    }
}

#[test]
fn jvm_exiting_while_sampled_gives_one_line_error() {
    let mut jvm = Jvm::start(JDK17, &[], false);
    let pid = jvm.pid();
    let p = pid.to_string();
    let sampler = Command::new(bin())
        .args(["jstat", "-gcutil", &p, "20"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    jvm.child.kill().unwrap();
    jvm.child.wait().unwrap();
    let out = sampler.wait_with_output().unwrap();
    assert!(stdout(&out).lines().count() >= 2, "no samples before exit");
    assert_one_line_error(&out, pid, "no such process");
}

#[test]
fn reader_without_permission_gets_one_line_error() {
    let jvm = Jvm::start(JDK17, &[], false);
    let pid = jvm.pid();
    let p = pid.to_string();
    for args in [
        vec!["perf", &p],
        vec!["perf", &p, "--source", "memory"],
        vec!["jstat", "-gcutil", &p],
        vec!["jcmd", &p, "VM.version"],
    ] {
        let o = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", bin()])
            .args(&args)
            .output()
            .unwrap();
        assert_one_line_error(&o, pid, "permission denied");
    }
}

// Hostile processes and files: pauselab runs as root and reads what other users control.

/// Starts a fake JVM as nobody and waits for it to say it is ready.
fn start_fake_jvm(libjvm: &Path, extra: &[&str]) -> Jvm {
    let mut cmd = as_nobody(fake_build().fake_jvm.to_str().unwrap());
    cmd.arg(libjvm).args(extra);
    spawn_fake_jvm(cmd)
}

/// Starts a command that ends in exec'ing the fake JVM (same pid), waits until ready.
fn spawn_fake_jvm(mut cmd: Command) -> Jvm {
    let slot = Slot::take();
    let mut child = cmd.stdout(Stdio::piped()).spawn().expect("fake_jvm starts");
    let mut ready = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut ready)
        .unwrap();
    assert_eq!(ready, "ready\n", "fake_jvm did not start");
    Jvm {
        child,
        _scratch: None,
        _slot: slot,
    }
}

/// A JVM's `-jar` path holding a line break and terminal escapes, as a local user can start
/// one: root's `doctor` and `jvms` print it escaped inside its own line, so it can neither
/// forge a line of the report nor drive the terminal.
#[test]
fn a_jar_path_with_a_line_break_and_escapes_stays_in_its_line() {
    let forged = "OK        nothing to see here  [swap]";
    let jar = format!("/srv/app\n== host\n{forged}\u{1b}[2J\u{9b}31m.jar");
    let mut cmd = as_nobody(fake_build().fake_jvm.to_str().unwrap());
    cmd.env("FAKE_JVM_LIBJVM", &fake_build().faithful_libjvm)
        .args(["-Xmx64m", "-jar", &jar]);
    let jvm = spawn_fake_jvm(cmd);
    let p = jvm.pid().to_string();
    let escaped =
        "/srv/app\\n== host\\nOK        nothing to see here  [swap]\\u{1b}[2J\\u{9b}31m.jar";
    for args in [vec!["doctor", "--pid", &p], vec!["jvms"]] {
        let out = run(&args);
        let text = stdout(&out);
        assert!(
            !text.contains(['\u{1b}', '\u{9b}']),
            "{args:?} printed an escape: {text}"
        );
        let quoting: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("nothing to see"))
            .collect();
        assert!(!quoting.is_empty(), "{args:?}: {text}");
        for line in quoting {
            assert!(
                line.contains(&p) && line.contains(escaped),
                "{args:?}: {line}"
            );
        }
    }
}

#[test]
fn fake_libjvm_with_hostile_vm_structs_gets_one_line_errors() {
    // The faithful fake is read like a JVM: the test reaches the VMStructs walk.
    let faithful = start_fake_jvm(&fake_build().faithful_libjvm, &[]);
    assert_eq!(
        ok(&["perf", &faithful.pid().to_string(), "sun.perfdata.used"]),
        "sun.perfdata.used=32\n"
    );
    let hostile = start_fake_jvm(&fake_build().hostile_libjvm, &[]);
    let pid = hostile.pid();
    let p = pid.to_string();
    for args in [
        vec!["perf", &p],
        vec!["jstat", "-gcutil", &p],
        vec!["perf", &p, "--source", "memory"],
    ] {
        assert_one_line_error(&run(&args), pid, "implausible VMStructs layout");
    }
    let me = listed_by_jvms(pid);
    let error = me["error"].as_str().unwrap_or_default();
    assert!(error.contains("implausible VMStructs layout"), "{me}");
    // In the text, the row says the counters are unreadable and the error follows the
    // table, where its length cannot push the columns apart.
    let text = ok(&["jvms"]);
    let (table, below) = text.split_once("\n\n").unwrap_or((&text, ""));
    let row = table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(&p))
        .unwrap_or_else(|| panic!("pid {pid} not in the table: {text}"));
    assert!(
        row.ends_with("unreadable (error below)") && !row.contains("VMStructs"),
        "{text}"
    );
    let header = table.lines().next().unwrap();
    assert_eq!(row.find("unreadable"), header.find("PERF DATA"), "{text}");
    assert!(
        below.lines().any(|l| l.starts_with(&format!("pid {pid}: "))
            && l.contains("implausible VMStructs layout")),
        "{text}"
    );
}

/// Runs pauselab and returns (exit code, stderr, peak RSS in KiB, seconds).
fn run_measured(args: &[&str]) -> (i32, String, i64, f64) {
    use std::io::Read;
    let started = Instant::now();
    let (mut command, peak) = process_support::PeakRss::wrap(Command::new(bin()).args(args));
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    (
        status.code().unwrap_or(-1),
        err,
        peak.kib(),
        started.elapsed().as_secs_f64(),
    )
}

#[test]
fn endless_attach_reply_is_cut_off_in_bounded_memory() {
    let server = start_fake_jvm(&fake_build().faithful_libjvm, &["serve"]);
    let pid = server.pid();
    let (code, err, rss_kib, seconds) = run_measured(&["jcmd", &pid.to_string(), "VM.version"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&format!("pid {pid}")), "{err}");
    assert!(err.contains("reply larger than 16 MiB"), "{err}");
    assert!(rss_kib < 64 * 1024, "jcmd peaked at {rss_kib} KiB");
    assert!(seconds < 10.0, "took {seconds} s");
}

#[test]
fn attach_socket_served_by_another_process_is_refused() {
    let target = start_fake_jvm(&fake_build().faithful_libjvm, &[]);
    let pid = target.pid();
    let _impostor = start_fake_jvm(&fake_build().faithful_libjvm, &["serve", &pid.to_string()]);
    let o = run(&["jcmd", &pid.to_string(), "VM.version"]);
    assert_one_line_error(&o, pid, "not by the JVM");
}

/// A file that must come out of a test byte for byte as it went in.
struct Victim {
    path: PathBuf,
    content: &'static [u8],
}

impl Victim {
    fn plant(dir: &Path, name: &str, mode: u32) -> Victim {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(name);
        let content = b"must survive\n";
        std::fs::write(&path, content).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        Victim { path, content }
    }

    fn assert_unchanged(&self) {
        assert_eq!(
            std::fs::read(&self.path).unwrap(),
            self.content,
            "{} was modified",
            self.path.display()
        );
    }
}

/// A scratch directory with `mode`, owned by `owner` (a uid).
fn scratch_dir(name: &str, owner: u32, mode: u32) -> Scratch {
    use std::os::unix::fs::PermissionsExt;
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("hsperf-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(owner), None).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
    Scratch(dir)
}

#[test]
fn planted_trigger_links_are_not_followed_by_root_jcmd() {
    // Root's JVM runs in a directory every user may write (not sticky); another user
    // plants `.attach_pid<pid>` there and in /tmp, pointing at a root-only file.
    let vault = scratch_dir("vault-root", 0, 0o755);
    let victim = Victim::plant(&vault.0, "secret", 0o600);
    let open_dir = scratch_dir("open-cwd", 0, 0o777);
    let mut cmd = Command::new(format!("{JDK17}/bin/java"));
    cmd.current_dir(&open_dir.0)
        .args(["-Xmx64m", "-XX:TieredStopAtLevel=1"]);
    let jvm = Jvm::spawn(cmd, false, None);
    let pid = jvm.pid();
    let p = pid.to_string();
    let trigger = format!(".attach_pid{pid}");
    let in_cwd = open_dir.0.join(&trigger);
    let in_tmp = Path::new("/tmp").join(&trigger);
    std::os::unix::fs::symlink(&victim.path, &in_cwd).unwrap();
    std::os::unix::fs::symlink(&victim.path, &in_tmp).unwrap();
    let _remove_tmp_link = Scratch(in_tmp.clone());

    // Both places are taken by links: a clean refusal, nothing touched.
    let refused = run(&["jcmd", &p, "VM.version"]);
    assert_one_line_error(&refused, pid, "not touched");
    victim.assert_unchanged();

    // With /tmp free the attach works there; the link in the open directory stays.
    std::fs::remove_file(&in_tmp).unwrap();
    assert!(ok(&["jcmd", &p, "VM.version"]).contains("JDK 17"));
    victim.assert_unchanged();
    assert!(in_cwd.symlink_metadata().unwrap().file_type().is_symlink());
    assert!(in_tmp.symlink_metadata().is_err(), "trigger left in /tmp");
}

#[test]
fn jcmd_as_root_with_groups_cannot_write_through_the_jvm_users_links() {
    // A JVM of nobody, started in nobody's own directory, where nobody plants a link to
    // a file that group root may write. Root runs jcmd from a login shell (group root).
    let vault = scratch_dir("vault-group", 0, 0o755);
    let victim = Victim::plant(&vault.0, "shared", 0o664);
    let home = scratch_dir("nobody-cwd", 65534, 0o755);
    let mut cmd = as_nobody(&format!("{JDK17}/bin/java"));
    cmd.current_dir(&home.0)
        .args(["-Xmx64m", "-XX:TieredStopAtLevel=1"]);
    let jvm = Jvm::spawn(cmd, false, None);
    let pid = jvm.pid();
    let trigger = home.0.join(format!(".attach_pid{pid}"));
    std::os::unix::fs::symlink(&victim.path, &trigger).unwrap();

    let o = Command::new("setpriv")
        .args(["--groups=0", bin(), "jcmd", &pid.to_string(), "VM.version"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("JDK 17"));
    victim.assert_unchanged();
}

#[test]
fn sampling_without_pause_is_a_usage_error() {
    // `-i 0` used to snapshot in a tight loop until killed.
    for (args, needle) in [
        (vec!["perf", "1", "-i", "0"], "at least 1ms"),
        (vec!["perf", "1", "-i", "99999999999999"], "at most"),
        (vec!["perf", "1", "-n", "0"], "0 is not in 1.."),
        (vec!["jstat", "-gcutil", "1", "0"], "at least 1ms"),
        (vec!["jstat", "-gcutil", "1", "0s"], "at least 1ms"),
        (vec!["jstat", "-gcutil", "1", "10", "0"], "0 is not in 1.."),
        (
            vec!["jcmd", "--timeout", "3601", "1", "VM.version"],
            "at most 1h",
        ),
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn libjvm_replaced_or_truncated_by_its_owner_neither_blocks_nor_crashes() {
    let dir = scratch_dir("libjvm-copy", 0, 0o755);
    let copy = dir.0.join("libjvm.so");
    std::fs::copy(&fake_build().faithful_libjvm, &copy).unwrap();
    let fake = start_fake_jvm(&copy, &[]);
    let p = fake.pid().to_string();
    // The file is deleted and a FIFO takes its name (opening it would block forever):
    // the reader opens the mapped file itself through /proc/<pid>/map_files.
    std::fs::remove_file(&copy).unwrap();
    let status = Command::new("mkfifo").arg(&copy).status().unwrap();
    assert!(status.success());
    let read = Command::new("timeout")
        .args(["10", bin(), "perf", &p, "sun.perfdata.used"])
        .output()
        .unwrap();
    assert_eq!(stdout(&read), "sun.perfdata.used=32\n", "{}", stderr(&read));
    // The mapped file shrinks under the reader: an error naming the pid, no SIGBUS.
    let mapped = std::fs::read_dir(format!("/proc/{p}/map_files"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        // The link reads "<path> (deleted)" now.
        .find(|link| {
            std::fs::read_link(link).is_ok_and(|target| {
                target
                    .to_string_lossy()
                    .starts_with(&*copy.to_string_lossy())
            })
        })
        .expect("libjvm.so mapping");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&mapped)
        .unwrap()
        .set_len(100)
        .unwrap();
    assert_one_line_error(&run(&["perf", &p]), fake.pid(), "not a usable libjvm.so");
}

#[test]
fn jvm_whose_passwd_is_a_fifo_is_listed_without_blocking() {
    // In its own mount namespace the process's /etc/passwd is a FIFO: reading it for the
    // user name would block `jvms` forever.
    let dir = scratch_dir("fifo-passwd", 0, 0o755);
    let fifo = dir.0.join("passwd");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    // setpriv itself reads /etc/passwd: the FIFO is mounted once the fake runs.
    let mut cmd = Command::new("unshare");
    cmd.args(["-m", "--propagation", "private"]);
    let fake_as_nobody = as_nobody(fake_build().fake_jvm.to_str().unwrap());
    cmd.arg(fake_as_nobody.get_program())
        .args(fake_as_nobody.get_args())
        .arg(&fake_build().faithful_libjvm);
    let fake = spawn_fake_jvm(cmd);
    let mounted = Command::new("nsenter")
        .args(["-t", &fake.pid().to_string(), "-m", "mount", "--bind"])
        .arg(&fifo)
        .arg("/etc/passwd")
        .status()
        .unwrap();
    assert!(mounted.success());
    let o = Command::new("timeout")
        .args(["10", bin(), "jvms", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "jvms: {:?} {}", o.status, stderr(&o));
    let listed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let me = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["pid"] == fake.pid())
        .unwrap_or_else(|| panic!("not listed: {listed}"));
    // The host's name for the uid, since the process's own passwd was refused.
    assert_eq!(me["user"], "nobody");
}

/// `perf --pages` while the JVM runs a full GC: the pages holding the collector's counters
/// are marked written in an interval with a safepoint, and every changed counter's offset
/// holds, in the hsperfdata file, the value the JDK's own `jcmd PerfCounter.print` gives.
fn page_map_marks_what_a_gc_writes(jdk: &str) {
    let jvm = Jvm::start(jdk, &[], false);
    jvm.wait_ready();
    let pid = jvm.pid();
    let p = pid.to_string();
    let sampler = Command::new(bin())
        // 1 ms intervals: the full GC spans several, so its counters change in intervals
        // where neither safepoint counter moves and the map must know one is under way.
        .args([
            "perf",
            &p,
            "--pages",
            // Long enough for jcmd to attach and the GC to run on a busy host.
            "--duration",
            "6s",
            "-i",
            "1ms",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    jdk_jcmd(jdk, pid, "GC.run");
    let output = sampler.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let map = &doc["map"];
    assert!(map["safepoint_intervals"].as_u64().unwrap() >= 1, "{map}");
    let pages = map["pages"].as_array().unwrap();
    let in_use = map["region_bytes_in_use"].as_u64().unwrap();
    assert_eq!(pages.len() as u64, in_use.div_ceil(4096));

    let full_gcs = "sun.gc.collector.1.invocations";
    let gc_page = pages
        .iter()
        .find(|page| {
            page["changed"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["name"] == full_gcs)
        })
        .unwrap_or_else(|| panic!("no page shows {full_gcs} written: {map}"));
    assert!(
        gc_page["in_safepoint_intervals"].as_u64().unwrap() >= 1,
        "{gc_page}"
    );

    let file = std::fs::read(format!("/tmp/hsperfdata_root/{pid}")).unwrap();
    let jcmd_values = jdk_jcmd(jdk, pid, "PerfCounter.print");
    let mut checked = 0;
    for page in pages {
        let start = page["offset"].as_u64().unwrap();
        for counter in page["changed"].as_array().unwrap() {
            let offset = counter["offset"].as_u64().unwrap();
            assert!(
                (start..start + 4096).contains(&offset),
                "{counter} in {page}"
            );
            let name = counter["name"].as_str().unwrap();
            // Invocation counts stay put once the GC is over: the file and jcmd agree.
            if !name.ends_with(".invocations") {
                continue;
            }
            let at = offset as usize;
            let in_file = i64::from_le_bytes(file[at..at + 8].try_into().unwrap());
            let line = format!("{name}={in_file}");
            assert!(
                jcmd_values.lines().any(|l| l == line),
                "{line} is not in jcmd PerfCounter.print"
            );
            checked += 1;
        }
    }
    assert!(checked >= 1, "no invocation counter changed: {map}");
}

#[test]
fn jdk17_page_map_marks_what_a_gc_writes() {
    page_map_marks_what_a_gc_writes(JDK17);
}

#[test]
fn jdk25_page_map_marks_what_a_gc_writes() {
    page_map_marks_what_a_gc_writes(JDK25);
}
