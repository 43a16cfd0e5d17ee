//! `pauselab doctor` on hosts built with each risk: real JVMs in their own mount
//! namespaces, on tmpfs, on disk and on a slow device that requires stable pages.

use crate::probe_slowdev;
use crate::process_support;

use std::io::BufRead;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};

use probe_slowdev::jvm::{TestJvm, Tmp};
use process_support::{as_nobody, fake_build, Running, NOBODY};
use serde_json::Value;

fn doctor(args: &[&str]) -> (Option<i32>, Value) {
    let output = Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .arg("doctor")
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        matches!(output.status.code(), Some(0) | Some(3)),
        "{stderr}"
    );
    (
        output.status.code(),
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}")),
    )
}

/// `doctor`'s text report (exit 0 or 3).
fn doctor_text(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .arg("doctor")
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        matches!(output.status.code(), Some(0) | Some(3)),
        "{}{text}",
        String::from_utf8_lossy(&output.stderr)
    );
    text
}

/// Findings about one JVM as (check, severity).
fn jvm_findings(report: &Value, pid: u32) -> Vec<(String, String)> {
    let prefix = format!("pid {pid}");
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["subject"].as_str().unwrap().starts_with(&prefix))
        .map(|f| {
            (
                f["check"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn has(findings: &[(String, String)], check: &str, severity: &str) -> bool {
    findings.iter().any(|(c, s)| c == check && s == severity)
}

fn skip() -> bool {
    if !probe_slowdev::jvm::available() {
        eprintln!("skipped: needs JDK 17 and unshare");
        return true;
    }
    if let Some(reason) = probe_slowdev::unavailable() {
        eprintln!("skipped: {reason}");
        return true;
    }
    false
}

fn disk_dir(name: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("doctor-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn hsperf_directory_on_tmpfs_versus_disk() {
    if skip() {
        return;
    }
    let disk = disk_dir("disk-tmp");
    // A large -Xmx (reserved, not used) without -Xms: the same heap-grows warning on both.
    let on_tmpfs = TestJvm::start(Tmp::Tmpfs, &["-Xmx2g"], 60);
    let on_disk = TestJvm::start(Tmp::Bind(&disk), &["-Xmx2g"], 60);
    let (tmpfs_pid, disk_pid) = (on_tmpfs.pid.to_string(), on_disk.pid.to_string());
    let (_, tmpfs_report) = doctor(&["--pid", &tmpfs_pid]);
    let (_, disk_report) = doctor(&["--pid", &disk_pid]);
    let both = doctor_text(&["--pid", &tmpfs_pid, "--pid", &disk_pid]);
    drop((on_tmpfs, on_disk));

    // The warning both JVMs share is printed once, naming both.
    let lines: Vec<&str> = both.lines().collect();
    let heads: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].ends_with("[heap-grows]"))
        .collect();
    assert_eq!(heads.len(), 1, "{both}");
    let jvms = lines[heads[0] + 1];
    assert!(
        jvms.contains("on 2 JVMs: ")
            && jvms.contains(&format!("pid {tmpfs_pid} (Garbage)"))
            && jvms.contains(&format!("pid {disk_pid} (Garbage)")),
        "{both}"
    );
    assert!(lines[heads[0]].starts_with("WARNING "), "{both}");
    std::fs::remove_dir_all(&disk).unwrap();

    let tmpfs = jvm_findings(
        &tmpfs_report,
        tmpfs_report["jvms"][0]["pid"].as_u64().unwrap() as u32,
    );
    assert!(has(&tmpfs, "hsperf-on-disk", "ok"), "{tmpfs:?}");
    let disk_pid: u32 = disk_pid.parse().unwrap();
    let on_disk = jvm_findings(&disk_report, disk_pid);
    assert!(has(&on_disk, "hsperf-on-disk", "info"), "{on_disk:?}");
    let finding = disk_report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| {
            f["check"] == "hsperf-on-disk"
                && f["subject"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("pid {disk_pid}"))
        })
        .unwrap();
    let evidence = finding["evidence"].to_string();
    assert!(
        evidence.contains("ext4") && evidence.contains(&format!("/proc/{disk_pid}/mountinfo")),
        "{evidence}"
    );
    for findings in [&tmpfs, &on_disk] {
        assert!(
            !findings.iter().any(|(c, _)| c == "hsperf-stable-pages"),
            "{findings:?}"
        );
    }
}

#[test]
fn slow_device_risks_are_found_and_measured() {
    if skip() {
        return;
    }
    let device = probe_slowdev::SlowDevice::start("doctor", 4);
    let slow_tmp = device.mount_point().join("tmp");
    std::fs::create_dir_all(&slow_tmp).unwrap();
    // The GC logs go to the JVMs' /tmp, which is the slow device's directory: a path of the
    // host's may be hidden from them (a checkout under /tmp).
    let sync_jvm = TestJvm::start(
        Tmp::Bind(&slow_tmp),
        &["-Xmx64m", "-Xlog:gc:file=/tmp/gc.log"],
        60,
    );
    let careful_jvm = TestJvm::start(
        Tmp::Bind(&slow_tmp),
        &[
            "-Xmx64m",
            "-XX:+PerfDisableSharedMem",
            "-Xlog:async",
            "-Xlog:gc:file=/tmp/gc-async.log",
        ],
        60,
    );
    let (sync_code, sync_report) = doctor(&[
        "--pid",
        &sync_jvm.pid.to_string(),
        "--probe",
        "--probe-duration",
        "4s",
    ]);
    let (_, careful_report) = doctor(&["--pid", &careful_jvm.pid.to_string()]);
    let sync_text = doctor_text(&["--pid", &sync_jvm.pid.to_string()]);
    let (sync_pid, careful_pid) = (sync_jvm.pid, careful_jvm.pid);
    drop((sync_jvm, careful_jvm));
    drop(device);

    let risky = jvm_findings(&sync_report, sync_pid);
    assert!(has(&risky, "hsperf-stable-pages", "critical"), "{risky:?}");
    assert!(has(&risky, "gc-log-sync-write", "critical"), "{risky:?}");
    assert_eq!(sync_code, Some(3));
    // The closing line names the critical findings and where they were found.
    let closing = sync_text.lines().last().unwrap();
    for check in ["hsperf-stable-pages", "gc-log-sync-write"] {
        assert!(
            closing.contains(&format!("{check} (pid {sync_pid} (Garbage))")),
            "{closing}"
        );
    }
    let critical: Vec<&str> = sync_report["summary"]["critical_checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["check"].as_str().unwrap())
        .collect();
    assert!(critical.contains(&"hsperf-stable-pages"), "{critical:?}");
    assert_eq!(
        sync_report["summary"]["critical"],
        sync_report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == "critical")
            .count()
    );
    // The probe measured the slow directory, not just guessed.
    let probe = sync_report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == "probe-mmap-stall")
        .collect::<Vec<_>>();
    assert!(
        probe.iter().any(|f| f["severity"] == "critical"
            && f["title"]
                .as_str()
                .unwrap()
                .contains(&format!("/proc/{sync_pid}/root/tmp"))),
        "{probe:?}"
    );

    let careful = jvm_findings(&careful_report, careful_pid);
    assert!(has(&careful, "perf-data-not-shared", "ok"), "{careful:?}");
    assert!(has(&careful, "gc-log-sync-write", "ok"), "{careful:?}");
    assert_eq!(
        careful_report["jvms"][0]["perf_data"]["kind"],
        "memory_only"
    );
    // Options came from the counters, read from memory.
    assert_eq!(
        careful_report["jvms"][0]["options_source"],
        "java.rt.vmArgs (perf counters)"
    );
    assert!(
        !careful
            .iter()
            .any(|(_, s)| s == "critical" || s == "warning"),
        "{careful:?}"
    );
}

#[test]
fn clean_setup_has_no_jvm_level_findings() {
    if skip() {
        return;
    }
    let jvm = TestJvm::start(
        Tmp::Tmpfs,
        &[
            "-Xmx64m",
            "-Xms64m",
            "-Xlog:async",
            "-Xlog:gc:file=/tmp/gc.log",
        ],
        60,
    );
    let (_, report) = doctor(&["--pid", &jvm.pid.to_string()]);
    drop(jvm);
    let findings = jvm_findings(&report, report["jvms"][0]["pid"].as_u64().unwrap() as u32);
    assert!(has(&findings, "gc-log-sync-write", "ok"), "{findings:?}");
    assert!(findings.iter().all(|(_, s)| s == "ok"), "{findings:?}");
}

#[test]
fn pid_that_is_not_a_jvm_is_a_one_line_error() {
    let output = Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .args(["doctor", "--pid", &std::process::id().to_string()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(&std::process::id().to_string()), "{stderr}");
}

/// `doctor --probe` creates a file in each JVM's log directory. For a fake JVM of nobody,
/// only the directory nobody may write is probed: not one reached through nobody's link
/// to a root-only directory, nor a root-owned one nobody can only read.
#[test]
fn probe_creates_files_only_where_the_jvms_user_may() {
    let scratch = tempfile::tempdir().unwrap();
    let base = scratch.path();
    std::fs::set_permissions(base, PermissionsExt::from_mode(0o755)).unwrap();
    let nobody: u32 = NOBODY.parse().unwrap();
    let secret = base.join("secret");
    let read_only = base.join("read-only");
    let public = base.join("public");
    for (dir, mode) in [(&secret, 0o700), (&read_only, 0o755), (&public, 0o755)] {
        std::fs::create_dir(dir).unwrap();
        std::fs::set_permissions(dir, PermissionsExt::from_mode(mode)).unwrap();
        std::fs::write(dir.join("gc.log"), "").unwrap();
    }
    std::os::unix::fs::chown(&public, Some(nobody), Some(nobody)).unwrap();
    let link = public.join("logs");
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    let options = format!(
        "-Xlog:gc:file={}/gc.log -Xlog:safepoint:file={}/gc.log -Xlog:gc+heap:file={}/gc.log",
        link.display(),
        read_only.display(),
        public.display()
    );
    let mut child = as_nobody(fake_build().fake_jvm.to_str().unwrap())
        .arg(&fake_build().faithful_libjvm)
        .env("JAVA_TOOL_OPTIONS", &options)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut ready)
        .unwrap();
    let jvm = Running(child);
    assert_eq!(ready, "ready\n");
    let pid = jvm.0.id().to_string();
    let (_, report) = doctor(&["--pid", &pid, "--probe", "--probe-duration", "200ms"]);
    let probed: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == "probe-mmap-stall")
        .flat_map(|f| f["evidence"].as_array().unwrap().iter())
        .filter_map(|e| e["source"].as_str().map(str::to_string))
        .collect();
    let named = |dir: &std::path::Path| {
        let dir = dir.display().to_string();
        probed.iter().any(|s| s.ends_with(&dir))
    };
    assert!(named(&public), "{probed:?}");
    assert!(!named(&link) && !named(&read_only), "{probed:?}");
    assert!(!probed.iter().any(|s| s.contains("secret")), "{probed:?}");
}
