//! Judgement: stall risks of this host and of each JVM, as findings with evidence, the
//! reason they matter and the fix.
//!
//! JVM checks take [`JvmFacts`] (what the caller read from the JVM's perf counters or its
//! command line), so this crate needs no hsperf reader.

use std::path::{Path, PathBuf};

use pauselab_pause::Collector;
use serde::Serialize;

use crate::cgroup::{cpu_limits, CgroupVersion, CpuLimits};
use crate::jvm_options::{JavaVersion, JvmOptions, LogTarget};
use crate::kernel::{kernel_version, KernelVersion};
use crate::mounts::{filesystem_of, PathFilesystem};
use crate::probe::{ProbeResult, ProbeTarget};
use crate::trust::{OpenDir, ProcessFiles};
use crate::vm::{dirty_settings, meminfo_kib, swap, transparent_huge_pages};

/// The scale shared with `analyze`'s log findings.
pub use pauselab_pause::Severity;

/// A value and where it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    pub value: String,
    pub source: String,
}

fn evidence(value: impl Into<String>, source: impl Into<String>) -> Evidence {
    Evidence {
        value: value.into(),
        source: source.into(),
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// Stable identifier, e.g. `hsperf-stable-pages` (see docs/doctor.md).
    pub check: &'static str,
    pub severity: Severity,
    /// `host`, or `pid N (main class)`.
    pub subject: String,
    pub title: String,
    pub evidence: Vec<Evidence>,
    pub why: String,
    pub fix: String,
}

/// Where a JVM keeps its perf counters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "path", rename_all = "snake_case")]
pub enum PerfDataPlace {
    /// A file, as a path reachable from this host (`/proc/<pid>/root/...` for containers).
    File(PathBuf),
    /// `-XX:+PerfDisableSharedMem`: anonymous memory only.
    MemoryOnly,
    /// `-XX:-UsePerfData`.
    Disabled,
    Unknown(String),
}

/// What the JVM checks need to know about one JVM.
#[derive(Debug, Clone, Serialize)]
pub struct JvmFacts {
    pub pid: u32,
    /// Main class or jar.
    pub name: Option<String>,
    /// `java.property.java.version`.
    pub java_version: Option<String>,
    /// The collector (from `sun.gc.policy.name` or the collectors' names).
    pub gc: Option<Collector>,
    pub options: JvmOptions,
    /// Where the options were read, e.g. `java.rt.vmArgs (perf counters)`.
    pub options_source: String,
    pub perf_data: PerfDataPlace,
    /// The JVM's safepoint counters, when its perf counters could be read.
    pub safepoints: Option<SafepointCounters>,
}

/// Safepoints since the JVM started (`sun.rt.safepoints`) and the time spent bringing the
/// threads to them (`sun.rt.safepointSyncTime`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SafepointCounters {
    pub count: u64,
    pub sync_seconds: f64,
}

impl SafepointCounters {
    fn mean_sync_ms(&self) -> f64 {
        self.sync_seconds * 1000.0 / self.count.max(1) as f64
    }
}

impl JvmFacts {
    /// What its findings are about: `pid N (main class)`.
    pub fn subject(&self) -> String {
        match &self.name {
            Some(name) => format!("pid {} ({name})", self.pid),
            None => format!("pid {}", self.pid),
        }
    }
}

/// Whether stores into (or writes to) a filesystem can wait for writeback.
#[derive(Debug, Clone, PartialEq, Eq)]
enum WritebackRisk {
    Memory,
    /// Waits: the string says why.
    Waits(String),
    /// A disk that does not ask for stable pages (kernel 3.9+): no wait on writeback.
    Disk,
    Unknown,
}

fn writeback_risk(fs: &PathFilesystem, kernel: Option<&KernelVersion>) -> WritebackRisk {
    if fs.is_memory_backed() {
        return WritebackRisk::Memory;
    }
    let fs_type = fs
        .overlay_upper
        .as_ref()
        .map_or(fs.fs_type.as_str(), |u| u.fs_type.as_str());
    if fs_type == "btrfs" {
        return WritebackRisk::Waits(
            "btrfs checksums data, so pages under writeback are stable whatever the device says"
                .into(),
        );
    }
    if let Some(kernel) = kernel.filter(|k| !k.at_least(3, 9)) {
        return WritebackRisk::Waits(format!(
            "kernel {} (before 3.9) waits for writeback of every page on every device",
            kernel.release
        ));
    }
    match fs.stable_writes() {
        Some(true) => {
            WritebackRisk::Waits("the device requires stable pages (stable_writes=1)".into())
        }
        Some(false) => WritebackRisk::Disk,
        None => WritebackRisk::Unknown,
    }
}

fn filesystem_evidence(label: &str, fs: &PathFilesystem) -> Vec<Evidence> {
    let mut out = vec![evidence(
        format!("{label}: {}", fs.describe()),
        fs.mountinfo.display().to_string(),
    )];
    let device = fs.block_device.as_ref().or(fs
        .overlay_upper
        .as_ref()
        .and_then(|u| u.block_device.as_ref()));
    if let Some(dev) = device {
        if let (Some(stable), Some(source)) = (dev.stable_writes, &dev.stable_writes_source) {
            out.push(evidence(
                format!("stable_writes={} on {}", u8::from(stable), dev.disk),
                source.display().to_string(),
            ));
        }
    }
    out
}

/// Every host-wide check.
pub fn host_checks() -> Vec<Finding> {
    let mut findings = Vec::new();
    let kernel = kernel_version().ok();
    findings.push(kernel_check(kernel.as_ref()));
    findings.extend(hsperf_directory_checks(kernel.as_ref()));
    findings.extend(thp_checks());
    findings.extend(swap_check());
    findings.extend(dirty_check());
    if let Ok(limits) = cpu_limits(std::process::id()) {
        findings.push(own_quota_check(&limits));
    }
    findings
}

fn host(
    check: &'static str,
    severity: Severity,
    title: impl Into<String>,
    evidence: Vec<Evidence>,
    why: &str,
    fix: &str,
) -> Finding {
    Finding {
        check,
        severity,
        subject: "host".to_string(),
        title: title.into(),
        evidence,
        why: why.to_string(),
        fix: fix.to_string(),
    }
}

fn kernel_check(kernel: Option<&KernelVersion>) -> Finding {
    match kernel {
        Some(k) if !k.at_least(3, 9) => host(
            "kernel-stable-pages",
            Severity::Critical,
            format!("kernel {} waits for writeback on every store into a mapped page", k.release),
            vec![evidence(&k.release, &k.source)],
            "Before Linux 3.9 a store into a mapped file page that is being written back always waits for the write to finish; the JVM's hsperf file is such a page, touched at every safepoint.",
            "Put /tmp (the hsperf directory) on tmpfs, or run the JVMs with -XX:+PerfDisableSharedMem; upgrade the kernel.",
        ),
        Some(k) => host(
            "kernel-stable-pages",
            Severity::Ok,
            format!("kernel {}: stores wait for writeback only on devices that require stable pages", k.release),
            vec![evidence(&k.release, &k.source)],
            "Since Linux 3.9 only devices that ask for stable pages (checksumming storage, some RAID, iSCSI with data digests, btrfs) make stores wait for writeback.",
            "Nothing to do.",
        ),
        None => host(
            "kernel-stable-pages",
            Severity::Info,
            "kernel version unknown",
            vec![],
            "The kernel version decides whether mapped stores wait for writeback on every device.",
            "Check /proc/sys/kernel/osrelease.",
        ),
    }
}

/// The hsperf directories present (`/tmp/hsperfdata_*`), or `/tmp` if there are none.
pub fn hsperf_directories() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/tmp")
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("hsperfdata_"))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    if dirs.is_empty() {
        dirs.push(PathBuf::from("/tmp"));
    }
    dirs
}

fn hsperf_directory_checks(kernel: Option<&KernelVersion>) -> Vec<Finding> {
    hsperf_directories()
        .into_iter()
        .filter_map(|dir| {
            let fs = filesystem_of(&dir).ok()?;
            let label = dir.display().to_string();
            Some(match writeback_risk(&fs, kernel) {
                WritebackRisk::Waits(reason) => host(
                    "hsperf-dir-stable-pages",
                    Severity::Critical,
                    format!("{label} is on a filesystem where mapped stores wait for writeback: {reason}"),
                    filesystem_evidence(&label, &fs),
                    HSPERF_WHY,
                    HSPERF_FIX,
                ),
                WritebackRisk::Disk => host(
                    "hsperf-dir-on-disk",
                    Severity::Info,
                    format!("{label} is on a disk ({}) that does not require stable pages", fs.fs_type),
                    filesystem_evidence(&label, &fs),
                    "Not stalling today: the hsperf file is written back but stores do not wait. Moving /tmp to a device that requires stable pages (or btrfs) would make every safepoint wait for writeback.",
                    "Optional: mount /tmp as tmpfs.",
                ),
                WritebackRisk::Memory => host(
                    "hsperf-dir-on-disk",
                    Severity::Ok,
                    format!("{label} is on {} (memory)", fs.fs_type),
                    filesystem_evidence(&label, &fs),
                    "Pages in memory are never written back, so hsperf stores never wait for a disk.",
                    "Nothing to do.",
                ),
                WritebackRisk::Unknown => host(
                    "hsperf-dir-stable-pages",
                    Severity::Warning,
                    format!("{label}: cannot tell whether its device requires stable pages"),
                    filesystem_evidence(&label, &fs),
                    HSPERF_WHY,
                    "Run `pauselab doctor --probe` to measure, or mount /tmp as tmpfs.",
                ),
            })
        })
        .collect()
}

const HSPERF_WHY: &str = "Each JVM maps /tmp/hsperfdata_<user>/<pid> and updates its counters at every safepoint and in GC threads. When the kernel writes that page back and the device requires stable pages, the store waits for the write: the safepoint (every Java thread) waits with it, for as long as the device needs (seconds under I/O load).";
const HSPERF_FIX: &str = "Mount /tmp as tmpfs, or start the JVMs with -XX:+PerfDisableSharedMem (counters stay readable with pauselab's memory route, not with jstat), or -XX:-UsePerfData (no counters).";

fn thp_checks() -> Vec<Finding> {
    let Ok(thp) = transparent_huge_pages() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(enabled) = &thp.enabled {
        let ev = vec![evidence(
            &enabled.selected,
            enabled.source.display().to_string(),
        )];
        out.push(if enabled.selected == "always" {
            host("thp-enabled", Severity::Warning, "transparent huge pages: enabled=always", ev,
                "Every anonymous mapping may get huge pages: page faults zero 2 MiB at a time, and khugepaged and compaction work behind the JVM's back; pauses and RSS bloat follow.",
                "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled (the JVM asks with -XX:+UseTransparentHugePages where it helps)")
        } else {
            host("thp-enabled", Severity::Ok, format!("transparent huge pages: enabled={}", enabled.selected), ev, "Huge pages only where asked for.", "Nothing to do.")
        });
    }
    if let Some(defrag) = &thp.defrag {
        let ev = vec![evidence(
            &defrag.selected,
            defrag.source.display().to_string(),
        )];
        out.push(if defrag.selected == "always" {
            host("thp-defrag", Severity::Warning, "transparent huge pages: defrag=always", ev,
                "A page fault that wants a huge page compacts memory synchronously (direct compaction): a GC thread touching new heap can stall for tens of milliseconds or more on a fragmented host.",
                "echo defer+madvise > /sys/kernel/mm/transparent_hugepage/defrag")
        } else {
            host("thp-defrag", Severity::Ok, format!("transparent huge pages: defrag={}", defrag.selected), ev, "No synchronous compaction for ordinary faults.", "Nothing to do.")
        });
    }
    out
}

fn swap_check() -> Option<Finding> {
    let swap = swap().ok()?;
    let ev = vec![
        evidence(
            format!(
                "swap total {} MiB, used {} MiB",
                swap.total_kib / 1024,
                swap.used_kib / 1024
            ),
            "/proc/swaps",
        ),
        evidence(
            format!("vm.swappiness={}", swap.swappiness),
            "/proc/sys/vm/swappiness",
        ),
    ];
    Some(if swap.total_kib == 0 {
        host(
            "swap",
            Severity::Ok,
            "no swap",
            ev,
            "Heap pages cannot be swapped out.",
            "Nothing to do.",
        )
    } else if swap.swappiness > 10 {
        host("swap", Severity::Warning, format!("swap is on and vm.swappiness={}", swap.swappiness), ev,
            "A collector touches the whole live heap; any heap page swapped out turns into a major fault inside the pause (milliseconds each).",
            "sysctl vm.swappiness=1 (or 0), size the heap to fit RAM, or disable swap for JVM hosts.")
    } else {
        host(
            "swap",
            Severity::Info,
            format!("swap is on, vm.swappiness={}", swap.swappiness),
            ev,
            "Low swappiness keeps the heap in memory unless memory runs out.",
            "Nothing to do unless memory is overcommitted.",
        )
    })
}

fn dirty_check() -> Option<Finding> {
    let dirty = dirty_settings().ok()?;
    let total_kib = meminfo_kib("MemTotal").ok().flatten().unwrap_or(0);
    let limit = |bytes: u64, ratio: u64| {
        if bytes > 0 {
            bytes
        } else {
            total_kib * 1024 / 100 * ratio
        }
    };
    let source = dirty.source.display().to_string();
    let ev = vec![
        evidence(
            format!(
                "dirty_ratio={} dirty_bytes={} (limit {} MiB)",
                dirty.dirty_ratio,
                dirty.dirty_bytes,
                limit(dirty.dirty_bytes, dirty.dirty_ratio) >> 20
            ),
            &source,
        ),
        evidence(
            format!(
                "dirty_background_ratio={} dirty_background_bytes={} (limit {} MiB)",
                dirty.dirty_background_ratio,
                dirty.dirty_background_bytes,
                limit(dirty.dirty_background_bytes, dirty.dirty_background_ratio) >> 20
            ),
            &source,
        ),
        evidence(
            format!(
                "dirty_expire_centisecs={} dirty_writeback_centisecs={}",
                dirty.dirty_expire_centisecs, dirty.dirty_writeback_centisecs
            ),
            &source,
        ),
    ];
    Some(host("dirty-settings", Severity::Info,
        format!("dirty pages are written back after {} s; writers are throttled above {} MiB dirty", dirty.dirty_expire_centisecs / 100, limit(dirty.dirty_bytes, dirty.dirty_ratio) >> 20),
        ev,
        "The flusher writes the hsperf file and GC logs back every expire interval (the moments a store can wait on a stable-pages device); a process writing above the dirty limit, including the JVM writing its GC log, is throttled in write().",
        "Keep JVM files off such devices; lowering dirty_background_bytes spreads writeback into smaller, shorter writes."))
}

fn own_quota_check(limits: &CpuLimits) -> Finding {
    let source = limits
        .cgroup_dir
        .as_ref()
        .map(|d| d.display().to_string())
        .unwrap_or_else(|| format!("/proc/{}/cgroup", limits.pid));
    match &limits.quota {
        Some(quota) => host("cpu-quota", Severity::Info,
            format!("this cgroup has a CPU quota of {:.2} CPUs: JVMs started here inherit it", quota.cpus()),
            vec![evidence(format!("{} us per {} us", quota.quota_us, quota.period_us), quota.source.display().to_string())],
            "A quota stops every thread of the cgroup until the next period once it is used up; a GC burning the quota with many threads stalls the application for the rest of the period.",
            "Give the JVM at least as many CPUs of quota as it has GC threads, or set -XX:ParallelGCThreads/-XX:ConcGCThreads to fit."),
        None => host("cpu-quota", Severity::Ok, "no CPU quota on this cgroup", vec![evidence("no cfs quota up to the root", source)], "No CFS throttling.", "Nothing to do."),
    }
}

/// Every check of one JVM.
pub fn jvm_checks(jvm: &JvmFacts) -> Vec<Finding> {
    let kernel = kernel_version().ok();
    let mut out = Vec::new();
    out.push(perf_data_check(jvm, kernel.as_ref()));
    out.extend(gc_log_checks(jvm, kernel.as_ref()));
    out.extend(heap_checks(jvm));
    let limits = cpu_limits(jvm.pid).ok();
    if let Some(limits) = &limits {
        out.extend(gc_threads_check(jvm, limits));
    }
    out.extend(cds_check(jvm));
    out.extend(known_jdk_issues(jvm, limits.as_ref()));
    out.extend(jvm_swap_check(jvm));
    out.extend(time_to_safepoint_check(jvm));
    out
}

/// Mean time to safepoint above which the JVM's threads are slow to stop (healthy JVMs
/// take microseconds), and the total it must add up to (one slow start-up safepoint is not
/// a pattern).
const SLOW_TTSP_MEAN_MS: f64 = 1.0;
const SLOW_TTSP_TOTAL_S: f64 = 0.05;

fn time_to_safepoint_check(jvm: &JvmFacts) -> Option<Finding> {
    let counters = jvm.safepoints.filter(|c| c.count > 0)?;
    let mean = counters.mean_sync_ms();
    let ev = vec![evidence(
        format!(
            "{} safepoints, {:.3} s to reach them ({mean:.3} ms on average)",
            counters.count, counters.sync_seconds
        ),
        "sun.rt.safepoints, sun.rt.safepointSyncTime (perf counters)",
    )];
    let title = format!("time to safepoint {mean:.3} ms on average");
    if mean < SLOW_TTSP_MEAN_MS || counters.sync_seconds < SLOW_TTSP_TOTAL_S {
        return Some(for_jvm(
            jvm,
            "time-to-safepoint",
            Severity::Ok,
            title,
            ev,
            "Threads reach safepoints quickly on average.",
            "Nothing to do.",
        ));
    }
    let why = "Every safepoint waits for the slowest thread to stop: a JIT-compiled loop without a safepoint poll, a long array copy or a thread descheduled by the OS holds every other thread stopped meanwhile. HotSpot names the threads still running after -XX:SafepointTimeoutDelay when -XX:+SafepointTimeout is on.";
    if jvm.options.flag("SafepointTimeout") == Some(true) {
        let delay = jvm
            .options
            .value("SafepointTimeoutDelay")
            .unwrap_or("10000 (the default)");
        return Some(for_jvm(jvm, "time-to-safepoint", Severity::Warning,
            format!("{title}; -XX:+SafepointTimeout is on (delay {delay} ms)"), ev, why,
            "Run pauselab analyze on the JVM's stdout (JDK 8, 11) or its GC log with the safepoint tag (JDK 17+): it names the threads of each timeout beside the long time to safepoint."));
    }
    // Catch stops about twice the mean: long enough to skip ordinary ones.
    let delay_ms = ((mean * 2.0 / 10.0).ceil() * 10.0).clamp(20.0, 1000.0);
    let fix = format!(
        "Restart with -XX:+SafepointTimeout -XX:SafepointTimeoutDelay={delay_ms:.0} (and -Xlog:safepoint on JDK 17+) and run pauselab analyze on the JVM's stdout or GC log: it names the threads that did not stop in time."
    );
    Some(for_jvm(
        jvm,
        "time-to-safepoint",
        Severity::Warning,
        title,
        ev,
        why,
        &fix,
    ))
}

fn for_jvm(
    jvm: &JvmFacts,
    check: &'static str,
    severity: Severity,
    title: impl Into<String>,
    evidence: Vec<Evidence>,
    why: &str,
    fix: &str,
) -> Finding {
    Finding {
        check,
        severity,
        subject: jvm.subject(),
        title: title.into(),
        evidence,
        why: why.to_string(),
        fix: fix.to_string(),
    }
}

fn perf_data_check(jvm: &JvmFacts, kernel: Option<&KernelVersion>) -> Finding {
    match &jvm.perf_data {
        PerfDataPlace::File(path) => {
            let label = path.display().to_string();
            match filesystem_of(path) {
                Ok(fs) => match writeback_risk(&fs, kernel) {
                    WritebackRisk::Waits(reason) => for_jvm(jvm, "hsperf-stable-pages", Severity::Critical,
                        format!("perf data file {label} is on a filesystem where mapped stores wait for writeback: {reason}"),
                        filesystem_evidence(&label, &fs), HSPERF_WHY, HSPERF_FIX),
                    WritebackRisk::Unknown => for_jvm(jvm, "hsperf-stable-pages", Severity::Warning,
                        format!("perf data file {label}: cannot tell whether its device requires stable pages"),
                        filesystem_evidence(&label, &fs), HSPERF_WHY, "Run `pauselab doctor --probe`, or use tmpfs for /tmp."),
                    WritebackRisk::Disk => for_jvm(jvm, "hsperf-on-disk", Severity::Info,
                        format!("perf data shared in {label} on {} (no stable pages required)", fs.fs_type),
                        filesystem_evidence(&label, &fs),
                        "Safe on this device; the same JVM on a stable-pages device or btrfs would stall at safepoints during writeback.",
                        "Optional: tmpfs for /tmp."),
                    WritebackRisk::Memory => for_jvm(jvm, "hsperf-on-disk", Severity::Ok,
                        format!("perf data shared in {label} on {} (memory)", fs.fs_type),
                        filesystem_evidence(&label, &fs), "Never written back.", "Nothing to do."),
                },
                Err(err) => for_jvm(jvm, "hsperf-stable-pages", Severity::Warning, format!("perf data file {label}: filesystem unknown"),
                    vec![evidence(err.to_string(), label.clone())], HSPERF_WHY, "Check the file's filesystem by hand."),
            }
        }
        PerfDataPlace::MemoryOnly => for_jvm(jvm, "perf-data-not-shared", Severity::Ok,
            "perf data not shared (-XX:+PerfDisableSharedMem): counters live in anonymous memory",
            vec![evidence("no hsperfdata file mapped", format!("/proc/{}/maps", jvm.pid))],
            "Immune to the hsperf writeback stall. jps, jstat and jcmd cannot see this JVM; pauselab reads its counters from memory.",
            "Nothing to do."),
        PerfDataPlace::Disabled => for_jvm(jvm, "perf-data-not-shared", Severity::Ok,
            "perf data disabled (-XX:-UsePerfData)",
            vec![evidence("-XX:-UsePerfData", format!("/proc/{}/cmdline", jvm.pid))],
            "No hsperf file, no stall from it; also no counters for monitoring tools.", "Nothing to do."),
        PerfDataPlace::Unknown(reason) => for_jvm(jvm, "perf-data-not-shared", Severity::Info, "cannot tell where the perf data is",
            vec![evidence(reason, format!("/proc/{}/maps", jvm.pid))], "", "Run as root or as the JVM's user."),
    }
}

/// The path of a log file as reachable from this host: relative paths are resolved against
/// the JVM's working directory, both through `/proc/<pid>/root`. `%p` becomes the pid;
/// other `%` patterns only affect the name, so the directory decides.
fn host_path_of(pid: u32, path: &Path) -> PathBuf {
    let text = path.display().to_string().replace("%p", &pid.to_string());
    let path = PathBuf::from(text);
    let absolute = if path.is_absolute() {
        path
    } else {
        match std::fs::read_link(format!("/proc/{pid}/cwd")) {
            Ok(cwd) => cwd.join(path),
            Err(_) => PathBuf::from("/").join(path),
        }
    };
    let dir = if absolute.exists() || absolute.to_string_lossy().contains('%') {
        absolute
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or(absolute.clone())
    } else {
        absolute.clone()
    };
    PathBuf::from(format!("/proc/{pid}/root")).join(dir.strip_prefix("/").unwrap_or(&dir))
}

/// Directories a probe should test for this JVM: its perf data file's and its log files',
/// opened as the JVM's user inside its root and only where that user may write (the probe
/// creates a file there: root never does so in a directory the user merely names, see
/// [`crate::trust`]).
pub fn jvm_probe_directories(jvm: &JvmFacts) -> Vec<ProbeTarget> {
    let Ok(files) = ProcessFiles::of(jvm.pid) else {
        return Vec::new();
    };
    let cwd = std::fs::read_link(format!("/proc/{}/cwd", jvm.pid)).ok();
    let perf_data = match &jvm.perf_data {
        PerfDataPlace::File(path) => Some(path),
        _ => None,
    };
    let logs = jvm.options.logs.iter().filter_map(|log| match &log.target {
        LogTarget::File(path) => Some(path),
        LogTarget::Stdout | LogTarget::Stderr => None,
    });
    let mut targets: Vec<ProbeTarget> = Vec::new();
    for path in perf_data.into_iter().chain(logs) {
        let named = PathBuf::from(
            path.display()
                .to_string()
                .replace("%p", &jvm.pid.to_string()),
        );
        let Some(parent) = named.parent() else {
            continue;
        };
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        let shown = match &cwd {
            Some(cwd) if parent.is_relative() => cwd.join(parent),
            _ => parent.to_path_buf(),
        };
        let known = targets
            .iter()
            .any(|t| matches!(t, ProbeTarget::Opened { shown: s, .. } if *s == shown));
        if known {
            continue;
        }
        if let Ok(dir) = files.open_writable_dir(parent) {
            targets.push(ProbeTarget::Opened {
                shown,
                dir: std::sync::Arc::new(dir),
            });
        }
    }
    targets
}

/// What `doctor --probe` measures: the hsperf directories, the JVMs' own directories (each
/// once) and anonymous memory, the floor the others are compared with.
pub fn probe_targets(jvms: &[JvmFacts]) -> Vec<ProbeTarget> {
    // Each directory is reached through a descriptor: `/tmp/hsperfdata_<user>` belongs to
    // that user, who could put a link there (docs/ARCHITECTURE.md, Trust).
    let mut targets: Vec<ProbeTarget> = hsperf_directories()
        .into_iter()
        .filter_map(|shown| {
            let dir = OpenDir::no_follow(&shown).ok()?;
            Some(ProbeTarget::Opened {
                shown,
                dir: std::sync::Arc::new(dir),
            })
        })
        .collect();
    for target in jvms.iter().flat_map(jvm_probe_directories) {
        if !targets.iter().any(|t| t.label() == target.label()) {
            targets.push(target);
        }
    }
    targets.push(ProbeTarget::Anonymous);
    targets
}

fn gc_log_checks(jvm: &JvmFacts, kernel: Option<&KernelVersion>) -> Vec<Finding> {
    let mut out = Vec::new();
    for log in &jvm.options.logs {
        let (label, host_path) = match &log.target {
            LogTarget::File(path) => (path.display().to_string(), host_path_of(jvm.pid, path)),
            LogTarget::Stdout | LogTarget::Stderr => {
                let fd = if log.target == LogTarget::Stdout {
                    1
                } else {
                    2
                };
                let Ok(target) = std::fs::read_link(format!("/proc/{}/fd/{fd}", jvm.pid)) else {
                    continue;
                };
                let text = target.display().to_string();
                if !text.starts_with('/') || text.starts_with("/dev/") {
                    continue; // pipes, sockets, terminals: not a filesystem question
                }
                (
                    format!("{} ({text})", if fd == 1 { "stdout" } else { "stderr" }),
                    host_path_of(jvm.pid, &target),
                )
            }
        };
        let Ok(fs) = filesystem_of(&host_path) else {
            continue;
        };
        let mut ev = vec![evidence(&log.option, &jvm.options_source)];
        ev.extend(filesystem_evidence(&label, &fs));
        let asynchronous = jvm.options.async_logging;
        ev.push(evidence(
            if asynchronous {
                "-Xlog:async"
            } else {
                "no -Xlog:async"
            },
            &jvm.options_source,
        ));
        let finding = match (writeback_risk(&fs, kernel), asynchronous) {
            (WritebackRisk::Memory, _) => for_jvm(jvm, "gc-log-sync-write", Severity::Ok, format!("log {label} is on {} (memory)", fs.fs_type), ev, "write() to memory does not wait for a disk.", "Nothing to do."),
            (_, true) => for_jvm(jvm, "gc-log-sync-write", Severity::Ok, format!("log {label} is written asynchronously"), ev, "-Xlog:async moves the write() out of the safepoint.", "Nothing to do."),
            (WritebackRisk::Waits(reason), false) => for_jvm(jvm, "gc-log-sync-write", Severity::Critical,
                format!("log {label} is written synchronously to a filesystem where writes wait for writeback: {reason}"), ev,
                "Unified logging writes each line with write() from the thread that logs, the VM thread inside the safepoint included. Rewriting a page under writeback waits for the device, and the pause with it (seconds were measured).",
                "Add -Xlog:async (JDK 17+), or log to tmpfs and ship the file from there."),
            (WritebackRisk::Disk | WritebackRisk::Unknown, false) => for_jvm(jvm, "gc-log-sync-write", Severity::Warning,
                format!("log {label} is written synchronously to disk ({})", fs.fs_type), ev,
                "write() from inside the safepoint can block on the filesystem (journal commits, dirty page throttling); any such delay lengthens the pause.",
                "Add -Xlog:async (JDK 17+), or log to tmpfs."),
        };
        out.push(finding);
    }
    out
}

const LARGE_HEAP: u64 = 2 << 30;

fn heap_checks(jvm: &JvmFacts) -> Vec<Finding> {
    let options = &jvm.options;
    let Some(max) = options.max_heap.filter(|&m| m >= LARGE_HEAP) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mib = |b: u64| format!("{} MiB", b >> 20);
    if options.initial_heap.is_none_or_less(max) {
        out.push(for_jvm(jvm, "heap-grows", Severity::Warning,
            format!("heap can grow from {} to {}", options.initial_heap.map_or("the default".into(), mib), mib(max)),
            vec![evidence(format!("-Xms {} -Xmx {}", options.initial_heap.map_or("unset".into(), mib), mib(max)), &jvm.options_source)],
            "Growing the heap commits memory during a GC and faults it in while the world is stopped; shrinking and growing again repeats it.",
            "Set -Xms equal to -Xmx for latency-sensitive services."));
    }
    if options.flag("AlwaysPreTouch") != Some(true) {
        out.push(for_jvm(jvm, "no-pretouch", Severity::Info,
            format!("{} heap without -XX:+AlwaysPreTouch", mib(max)),
            vec![evidence("AlwaysPreTouch not set", &jvm.options_source)],
            "Each heap page is faulted in on first use, often by a GC thread copying objects into it during a pause.",
            "Add -XX:+AlwaysPreTouch (costs start-up time, not pauses)."));
    }
    out
}

trait LessThan {
    fn is_none_or_less(&self, than: u64) -> bool;
}

impl LessThan for Option<u64> {
    fn is_none_or_less(&self, than: u64) -> bool {
        self.is_none_or(|v| v < than)
    }
}

/// GC worker threads: `-XX:ParallelGCThreads`, else the `GC Thread#N` threads that exist.
fn gc_thread_count(jvm: &JvmFacts) -> Option<(u64, String)> {
    if let Some(n) = jvm
        .options
        .value("ParallelGCThreads")
        .and_then(|v| v.parse().ok())
    {
        return Some((n, jvm.options_source.clone()));
    }
    let names = crate::threads::thread_names(jvm.pid).ok()?;
    let n = names.iter().filter(|n| n.starts_with("GC Thread#")).count() as u64;
    (n > 0).then(|| (n, format!("/proc/{}/task/*/comm (GC Thread#N)", jvm.pid)))
}

fn gc_threads_check(jvm: &JvmFacts, limits: &CpuLimits) -> Option<Finding> {
    let quota = limits.quota.as_ref()?;
    let (threads, source) = gc_thread_count(jvm)?;
    if threads as f64 <= quota.cpus() {
        return None;
    }
    let mut ev = vec![
        evidence(format!("{threads} GC threads"), source),
        evidence(
            format!(
                "quota {:.2} CPUs ({} us per {} us)",
                quota.cpus(),
                quota.quota_us,
                quota.period_us
            ),
            quota.source.display().to_string(),
        ),
    ];
    if let (Some(throttled), Some(periods)) = (limits.nr_throttled, limits.nr_periods) {
        ev.push(evidence(
            format!(
                "throttled in {throttled} of {periods} periods, {} ms in total",
                limits.throttled_us.unwrap_or(0) / 1000
            ),
            limits
                .cgroup_dir
                .as_ref()
                .map(|d| d.join("cpu.stat").display().to_string())
                .unwrap_or_default(),
        ));
    }
    let throttled = limits.nr_throttled.unwrap_or(0) > 0;
    Some(for_jvm(jvm, "gc-threads-over-quota", if throttled { Severity::Critical } else { Severity::Warning },
        format!("{threads} GC threads share a CPU quota of {:.2} CPUs", quota.cpus()), ev,
        "Parallel GC threads use up the quota early in the period; the whole cgroup, the paused application included, then waits for the next period. Pauses of a second were measured with a 0.2 CPU quota.",
        "Raise the quota to at least the number of GC threads, or lower -XX:ParallelGCThreads (and -XX:ConcGCThreads) to fit the quota."))
}

/// G1's region size: the flag, else HotSpot's ergonomics (heap / 2048, power of two,
/// 1..32 MiB).
fn g1_region_size(options: &JvmOptions) -> Option<(u64, &'static str)> {
    if let Some(size) = options
        .value("G1HeapRegionSize")
        .and_then(crate::jvm_options::parse_size)
    {
        return Some((size, "-XX:G1HeapRegionSize"));
    }
    let max = options.max_heap?;
    let target = (max / 2048).clamp(1 << 20, 32 << 20);
    let power = 1u64 << (63 - target.leading_zeros());
    Some((power, "ergonomic: max heap / 2048"))
}

fn is_g1(jvm: &JvmFacts) -> bool {
    jvm.gc == Some(Collector::G1) || jvm.options.flag("UseG1GC") == Some(true)
}

fn cds_check(jvm: &JvmFacts) -> Option<Finding> {
    let version = JavaVersion::parse(jvm.java_version.as_deref()?)?;
    if version.feature > 16
        || version.feature < 12
        || !is_g1(jvm)
        || jvm.options.share_off
        || jvm.options.flag("UseSharedSpaces") == Some(false)
    {
        return None;
    }
    let (region, source) = g1_region_size(&jvm.options)?;
    if region < 8 << 20 {
        return None;
    }
    Some(for_jvm(jvm, "cds-large-g1-regions", Severity::Warning,
        format!("JDK {} with CDS and {} MiB G1 regions", jvm.java_version.as_deref().unwrap_or("?"), region >> 20),
        vec![evidence(format!("java.version {}", jvm.java_version.as_deref().unwrap_or("?")), "java.property.java.version"), evidence(format!("region size {} MiB", region >> 20), source)],
        "Up to JDK 16 the archived CDS heap regions are pinned and may be mapped in the middle of the G1 heap (JDK-8214455, fixed in 17); with large regions they split the contiguous free space humongous objects need, which ends in evacuation failures and full GCs.",
        "Upgrade to JDK 17+, or run with -Xshare:off, or a smaller -XX:G1HeapRegionSize."))
}

fn known_jdk_issues(jvm: &JvmFacts, limits: Option<&CpuLimits>) -> Vec<Finding> {
    let Some(version) = jvm.java_version.as_deref().and_then(JavaVersion::parse) else {
        return Vec::new();
    };
    let shown = jvm.java_version.clone().unwrap_or_default();
    let ev = || {
        vec![evidence(
            format!("java.version {shown}"),
            "java.property.java.version",
        )]
    };
    let mut out = Vec::new();
    if version.feature <= 14 && jvm.options.flag("UseBiasedLocking") != Some(false) {
        out.push(for_jvm(jvm, "jdk-biased-locking", Severity::Info, format!("JDK {shown} uses biased locking"), ev(),
            "Revoking biased locks needs safepoints; contended hand-offs between threads cause frequent short pauses (disabled by default since JDK 15, JEP 374).",
            "Add -XX:-UseBiasedLocking, or upgrade."));
    }
    let quota = limits.and_then(|l| l.quota.as_ref());
    if version.feature == 8 && version.update < 191 && quota.is_some() {
        out.push(for_jvm(jvm, "jdk-not-container-aware", Severity::Warning, format!("JDK {shown} ignores the cgroup CPU quota"), ev(),
            "Before 8u191 the JVM sizes GC and compiler threads by the host's CPUs, not the quota, so GC burns the quota and the JVM is throttled.",
            "Upgrade to 8u191+ or set -XX:ParallelGCThreads and -XX:CICompilerCount to fit the quota."));
    }
    let cgroup_v2 = limits.and_then(|l| l.version) == Some(CgroupVersion::V2);
    let knows_v2 = version.feature >= 15
        || (version.feature == 11 && version.update >= 16)
        || (version.feature == 8 && version.update >= 372);
    if cgroup_v2 && !knows_v2 && quota.is_some() {
        out.push(for_jvm(jvm, "jdk-no-cgroup-v2", Severity::Warning, format!("JDK {shown} does not read cgroup v2 limits"), ev(),
            "cgroup v2 support came with JDK 15 (backported to 11.0.16 and 8u372); older JVMs see the host's CPUs and memory and size GC threads and heap for them.",
            "Upgrade, or set -XX:ActiveProcessorCount, -XX:ParallelGCThreads and -Xmx explicitly."));
    }
    out
}

fn jvm_swap_check(jvm: &JvmFacts) -> Option<Finding> {
    let path = format!("/proc/{}/status", jvm.pid);
    let status = std::fs::read_to_string(&path).ok()?;
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSwap:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    (kib > 0).then(|| for_jvm(jvm, "jvm-swapped", Severity::Critical, format!("{} MiB of this JVM are swapped out", kib / 1024),
        vec![evidence(format!("VmSwap {kib} kB"), path)],
        "A GC that touches a swapped-out page waits for a major fault from the swap device inside the pause.",
        "Give the host more memory or the JVM a smaller heap; vm.swappiness=1."))
}

/// Findings from a probe run: a file target that stalled while anonymous memory did not.
pub fn probe_findings(results: &[ProbeResult]) -> Vec<Finding> {
    let floor = results
        .iter()
        .filter(|r| r.file.is_none())
        .map(|r| r.max_ns)
        .max()
        .unwrap_or(0);
    results
        .iter()
        .filter(|r| r.file.is_some())
        .map(|r| {
            let ev = vec![evidence(
                format!("{} stores, max {:.1} ms, {} stalls >= threshold; anonymous memory max {:.1} ms", r.stores, r.max_ns as f64 / 1e6, r.stall_count, floor as f64 / 1e6),
                format!("pauselab probe mmap {}", r.target),
            )];
            if r.stall_count > 0 && r.max_ns > floor.saturating_mul(2) {
                host("probe-mmap-stall", Severity::Critical, format!("stores into a mapped file in {} stalled up to {:.0} ms", r.target, r.max_ns as f64 / 1e6), ev,
                    "Measured: the filesystem makes stores into mapped pages wait (writeback of stable pages); hsperf files and memory-mapped GC data there stall safepoints.",
                    HSPERF_FIX)
            } else {
                host("probe-mmap-stall", Severity::Ok, format!("stores into a mapped file in {} did not stall", r.target), ev, "Measured with forced writeback.", "Nothing to do.")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This test process as a JVM whose GC log is in `dir`.
    fn logging_into(dir: &Path) -> JvmFacts {
        let log = format!("-Xlog:gc:file={}/gc.log", dir.display());
        JvmFacts {
            pid: std::process::id(),
            name: None,
            java_version: None,
            gc: None,
            options: JvmOptions::parse(&[log]),
            options_source: String::new(),
            perf_data: PerfDataPlace::MemoryOnly,
            safepoints: None,
        }
    }

    #[test]
    fn probe_targets_are_each_directory_once_then_anonymous_memory() {
        let dir = std::env::temp_dir().join(format!("pauselab-doctor-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let jvm = logging_into(&dir);
        let labels: Vec<String> = probe_targets(&[jvm.clone(), jvm])
            .iter()
            .map(ProbeTarget::label)
            .collect();
        let hsperf: Vec<String> = hsperf_directories()
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        let expected: Vec<String> = hsperf
            .into_iter()
            .chain([dir.display().to_string(), "anonymous".to_string()])
            .collect();
        std::fs::remove_dir(&dir).unwrap();
        assert_eq!(labels, expected);
    }
}
