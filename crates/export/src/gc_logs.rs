//! Pause histograms from each JVM's own GC and safepoint log.
//!
//! The log is found from the JVM's options and followed with pauselab-gclog's
//! [`GcLogFollower`]: every scrape parses only the lines appended since the previous one,
//! through rotation. The path is the JVM's user's choice: it is resolved inside the JVM's
//! root (or beneath its working directory) and read with that user's credentials, through
//! [`pauselab_host::trust`], so the exporter reads no file that user could not. What a JVM's log said so far lives in a few fixed-size histograms per
//! label set, with a bounded number of label sets, so memory does not grow with the log.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use pauselab_gclog::follow::GcLogFollower;
use pauselab_gclog::parse::Parsed;
use pauselab_host::jvm_options::{JvmOptions, LogTarget};
use pauselab_host::trust::{OpenDir, ProcessFiles};
use pauselab_hsperf::{glob_match, JvmProcess};
use pauselab_pause::input::open_regular_file;
use pauselab_pause::record::{Record, StallKind};
use pauselab_pause::{Collector, PauseType};
use prometheus_client::collector::Collector as EncodeCollector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Unit;

use crate::metrics::Labels;

/// Upper bounds of the buckets, seconds: 1-2.5-5 steps from 0.1 ms to a minute.
pub(crate) const BUCKETS: [f64; 18] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0, 30.0, 60.0,
];

/// Label sets per histogram family per JVM; further ones are counted under `other`.
const MAX_LABEL_SETS: usize = 64;
/// Label values from the log (causes, VM operations) are cut to this many bytes: a line of
/// the log may be a megabyte long, and any user can write a JVM's log.
const MAX_LABEL_BYTES: usize = 128;
/// GC log files followed per JVM.
const MAX_LOGS: usize = 4;
/// Bytes of log read per file per scrape: a long log is caught up over several scrapes
/// rather than in one slow one.
pub(crate) const READ_BUDGET: u64 = 32 << 20;

/// A histogram with the fixed [`BUCKETS`].
#[derive(Debug, Clone, Default)]
pub(crate) struct Histogram {
    /// Per bucket, not cumulative; the last one is `+Inf`.
    counts: [u64; BUCKETS.len() + 1],
    sum: f64,
}

impl Histogram {
    pub(crate) fn observe(&mut self, seconds: f64) {
        let bucket = BUCKETS.partition_point(|&upper| upper < seconds);
        self.counts[bucket] += 1;
        self.sum += seconds;
    }

    fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    fn add(&mut self, other: &Histogram) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts) {
            *mine += theirs;
        }
        self.sum += other.sum;
    }

    fn encode(&self, encoder: prometheus_client::encoding::MetricEncoder) -> std::fmt::Result {
        // The encoder adds the buckets up itself: it takes the count of each bucket.
        let buckets: Vec<(f64, u64)> = BUCKETS
            .iter()
            .copied()
            .chain([f64::INFINITY])
            .zip(self.counts)
            .collect();
        let mut encoder = encoder;
        encoder.encode_histogram::<NoLabelSet>(self.sum, self.count(), &buckets, None)
    }
}

/// Histograms by label values, at most [`MAX_LABEL_SETS`] of them.
#[derive(Debug, Clone)]
struct Bounded<K: Ord> {
    by_key: BTreeMap<K, Histogram>,
}

impl<K: Ord> Default for Bounded<K> {
    fn default() -> Self {
        Bounded {
            by_key: BTreeMap::new(),
        }
    }
}

impl<K: Ord> Bounded<K> {
    fn observe(&mut self, key: K, overflow: impl FnOnce() -> K, seconds: f64) {
        let key = if self.by_key.len() < MAX_LABEL_SETS || self.by_key.contains_key(&key) {
            key
        } else {
            overflow()
        };
        self.by_key.entry(key).or_default().observe(seconds);
    }
}

/// What a JVM's log is, as `pauselab_export_gc_log` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogState {
    Following,
    Enabled,
    Unreadable,
}

impl LogState {
    fn as_str(self) -> &'static str {
        match self {
            LogState::Following => "following",
            LogState::Enabled => "enabled",
            LogState::Unreadable => "unreadable",
        }
    }
}

/// One log file of a JVM.
struct FollowedLog {
    /// The path as the JVM sees it (the label).
    shown: String,
    /// The path as the JVM names it (absolute, or relative to its working directory),
    /// with `%` placeholders still in it.
    pattern: PathBuf,
    /// The lines read from it.
    tags: Tags,
    /// The directory of the file being followed, opened as the JVM's user: the follower
    /// reaches the file through it.
    dir: Option<OpenDir>,
    follower: Option<GcLogFollower>,
    /// `Enabled` for a log this exporter turned on, else `Following`: what `state` says
    /// while the log is read.
    read_state: LogState,
    state: LogState,
    /// The VM operation of the next stopped-time line (JDK 9-16 `Entering safepoint region`).
    next_operation: Option<String>,
    /// Reading what the log held when the exporter started: not "since the last scrape".
    catching_up: bool,
}

impl FollowedLog {
    /// Finds the file if need be and hands `on_line` each line appended to it, as it is
    /// read (never gathered: a catching-up read of [`READ_BUDGET`] can hold a third of a
    /// million pause lines); `None` when it cannot be opened (missing, or not the JVM's
    /// user's to read: the two look the same), else whether more is waiting (the read
    /// budget ran out). Runs with the JVM's user's credentials.
    fn read(
        &mut self,
        files: &ProcessFiles,
        ns_pid: u32,
        on_line: impl FnMut(Parsed),
    ) -> Option<bool> {
        if self.follower.is_none() {
            let (dir, file) = resolve(files, &self.pattern, ns_pid)?;
            self.follower = Some(GcLogFollower::new(&file));
            self.dir = Some(dir);
        }
        let follower = self.follower.as_mut()?;
        match follower.poll(READ_BUDGET, on_line) {
            Ok(progress) => Some(progress.more),
            Err(_) => {
                // Gone or not readable now: look for it afresh next time.
                self.follower = None;
                self.dir = None;
                None
            }
        }
    }
}

/// What the logs of one JVM said so far.
#[derive(Default)]
pub(crate) struct JvmPauses {
    /// The JVM's pid on this host.
    pid: u32,
    logs: Vec<FollowedLog>,
    /// The collector as the log announces it (`Using G1`).
    collector: Option<Collector>,
    gc: Bounded<(PauseType, String)>,
    safepoint: Bounded<String>,
    ttsp: Bounded<String>,
    stalls: Histogram,
    /// Longest since the previous scrape: GC pause, safepoint, allocation stall.
    max: [f64; 3],
}

impl JvmPauses {
    /// Finds the GC logs of `jvm` from its options. With `catching_up`, what they hold
    /// already is older than the previous scrape (the exporter just started).
    pub(crate) fn new(jvm: &JvmProcess, catching_up: bool) -> JvmPauses {
        let logs = log_paths(jvm)
            .into_iter()
            .map(|(shown, pattern, tags)| FollowedLog {
                shown,
                pattern,
                tags,
                dir: None,
                follower: None,
                read_state: LogState::Following,
                state: LogState::Unreadable,
                next_operation: None,
                catching_up,
            })
            .collect();
        JvmPauses {
            pid: jvm.pid,
            logs,
            ..JvmPauses::default()
        }
    }

    /// Whether a log of the JVM's own was found (followed or not).
    pub(crate) fn has_log(&self) -> bool {
        !self.logs.is_empty()
    }

    /// Follows a log this exporter turned on (`--enable-gc-log`), from its start. The JVM
    /// runs in this mount namespace, so `on_host` is also the path it writes to; it is
    /// opened like any other log, inside the JVM's root and with its user's rights.
    pub(crate) fn follow_enabled(&mut self, shown: &str, on_host: &Path) {
        self.logs.push(FollowedLog {
            shown: shown.to_string(),
            pattern: on_host.to_path_buf(),
            tags: Tags {
                gc: true,
                safepoint: true,
            },
            dir: None,
            follower: None,
            read_state: LogState::Enabled,
            state: LogState::Enabled,
            next_operation: None,
            catching_up: false,
        });
    }

    /// Reads what every log of the JVM appended since the previous scrape, with the JVM's
    /// user's rights.
    pub(crate) fn poll(&mut self, ns_pid: u32) {
        self.max = [0.0; 3];
        // Gone, or not ours to trace: nothing of its files is opened.
        let files = ProcessFiles::of(self.pid).ok();
        // Out of `self` while they are read, so that each line is counted as it comes.
        let mut logs = std::mem::take(&mut self.logs);
        for log in &mut logs {
            let (tags, catching_up) = (log.tags, log.catching_up);
            let mut next_operation = log.next_operation.take();
            let mut count = |parsed| self.record(tags, &mut next_operation, parsed, catching_up);
            let read = files
                .as_ref()
                .and_then(|files| {
                    files
                        .as_process(|| log.read(files, ns_pid, &mut count))
                        .ok()
                })
                .flatten();
            log.next_operation = next_operation;
            let Some(more) = read else {
                log.state = LogState::Unreadable;
                continue;
            };
            log.state = log.read_state;
            log.catching_up &= more;
        }
        self.logs = logs;
    }

    /// One line of a log with `tags`; `next_operation`: the VM operation of the log's
    /// safepoint being read (named on the line before its times).
    fn record(
        &mut self,
        tags: Tags,
        next_operation: &mut Option<String>,
        parsed: Parsed,
        catching_up: bool,
    ) {
        let seconds = |ns: u64| ns as f64 / 1e9;
        let mut longest = |kind: usize, s: f64| {
            if !catching_up {
                self.max[kind] = self.max[kind].max(s);
            }
        };
        match parsed.record {
            Record::Pause(pause) if tags.gc => {
                let s = seconds(pause.duration_ns);
                longest(0, s);
                let cause =
                    label_value(pause.cause.map_or_else(|| "none".to_string(), String::from));
                let kind = PauseType::of(&pause.name);
                self.gc
                    .observe((kind, cause), || (kind, "other".to_string()), s);
            }
            Record::SafepointBegin(operation) if tags.safepoint => {
                *next_operation = Some(operation)
            }
            Record::Safepoint(safepoint) if tags.safepoint => {
                let s = seconds(safepoint.total_ns);
                longest(1, s);
                let operation = safepoint
                    .operation
                    .map(String::from)
                    .or_else(|| next_operation.take())
                    .map_or_else(|| "unknown".to_string(), label_value);
                if let Some(ttsp) = safepoint.ttsp_ns {
                    self.ttsp
                        .observe(operation.clone(), || "other".to_string(), seconds(ttsp));
                }
                self.safepoint.observe(operation, || "other".to_string(), s);
            }
            Record::Stall(stall) if tags.gc && stall.kind == StallKind::Allocation => {
                let s = seconds(stall.duration_ns);
                longest(2, s);
                self.stalls.observe(s);
            }
            Record::Collector(name) if tags.gc => {
                self.collector = self
                    .collector
                    .or_else(|| Collector::ALL.into_iter().find(|c| c.name() == name));
            }
            _ => {}
        }
    }

    /// The collector the log names, for JVMs whose counters do not tell.
    pub(crate) fn collector(&self) -> Option<Collector> {
        self.collector
    }
}

/// `text` cut to [`MAX_LABEL_BYTES`] at a character boundary.
fn label_value(mut text: String) -> String {
    if text.len() > MAX_LABEL_BYTES {
        let mut end = MAX_LABEL_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

/// Every `-Xlog` file output that logs `gc` or `safepoint` at info, and `-Xloggc`: the path
/// as the JVM sees it (the label), and as it names it (placeholders left in).
fn log_paths(jvm: &JvmProcess) -> Vec<(String, PathBuf, Tags)> {
    let pid = jvm.pid;
    let cmdline = pauselab_hsperf::read_cmdline(pid).unwrap_or_default();
    let environment = pauselab_hsperf::read_environ(pid).unwrap_or_default();
    let words = |name: &str| -> Vec<String> {
        let prefix = format!("{name}=");
        environment
            .iter()
            .filter_map(|v| v.strip_prefix(&prefix))
            .flat_map(|v| v.split_whitespace().map(str::to_string))
            .collect()
    };
    // HotSpot reads JAVA_TOOL_OPTIONS before the command line and _JAVA_OPTIONS after it.
    let mut all = words("JAVA_TOOL_OPTIONS");
    all.extend(pauselab_hsperf::jvm_options(&cmdline).unwrap_or(cmdline));
    all.extend(words("_JAVA_OPTIONS"));
    let cwd = fs::read_link(format!("/proc/{pid}/cwd")).ok();
    let mut paths: Vec<(String, PathBuf, Tags)> = Vec::new();
    // Each kind of line is read from one file only: a JVM logging GC to two files would
    // otherwise count every pause twice.
    let mut taken = Tags::default();
    let outputs = JvmOptions::parse(&all).logs;
    let is_loggc = |option: &str| option.starts_with("-Xloggc:");
    // JDK 8 writes its safepoint lines (-XX:+PrintGCApplicationStoppedTime) into the
    // -Xloggc file; JDK 9+ into the -Xlog outputs that select `safepoint`, if any.
    let safepoint_elsewhere = outputs
        .iter()
        .any(|o| !is_loggc(&o.option) && logged_tags(&o.selection).safepoint);
    for output in outputs {
        let mut logged = logged_tags(&output.selection);
        if is_loggc(&output.option) {
            logged.safepoint = !safepoint_elsewhere;
        }
        let LogTarget::File(path) = output.target else {
            continue;
        };
        let tags = Tags {
            gc: logged.gc && !taken.gc,
            safepoint: logged.safepoint && !taken.safepoint,
        };
        if !(tags.gc || tags.safepoint) {
            continue;
        }
        let shown = if path.is_absolute() {
            path.clone()
        } else {
            cwd.as_ref().map_or(path.clone(), |cwd| cwd.join(&path))
        };
        let shown = shown
            .display()
            .to_string()
            .replace("%p", &jvm.ns_pid.to_string());
        if paths.len() < MAX_LOGS && !paths.iter().any(|(s, _, _)| *s == shown) {
            taken.gc |= tags.gc;
            taken.safepoint |= tags.safepoint;
            paths.push((shown, path, tags));
        }
    }
    paths
}

/// Which of the lines pauses are read from an `-Xlog` selection (`gc*`,
/// `gc=info,safepoint`, `all`, `gc+heap=debug`) writes: `gc` and `safepoint` at `info` or
/// finer.
pub(crate) fn logged_tags(selection: &str) -> Tags {
    Tags {
        gc: logs_tag(selection, "gc"),
        safepoint: logs_tag(selection, "safepoint"),
    }
}

/// Which lines of a log are read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tags {
    /// GC pauses, allocation stalls, the collector's name (tag `gc`).
    pub gc: bool,
    /// Safepoints (tag `safepoint`).
    pub safepoint: bool,
}

fn logs_tag(selection: &str, tag: &str) -> bool {
    selection.split(',').any(|selector| {
        let (tags, level) = selector.split_once('=').unwrap_or((selector, "info"));
        if !matches!(level, "info" | "debug" | "trace") {
            return false;
        }
        let (tags, wildcard) = match tags.strip_suffix('*') {
            Some(t) => (t, true),
            None => (tags, false),
        };
        let mut set = tags.split('+');
        match (set.next(), set.next()) {
            (Some("all" | ""), None) => true,
            (Some(first), None) => first == tag,
            (Some(first), Some(_)) => wildcard && first == tag,
            (None, _) => false,
        }
    })
}

/// The file a log path names now, opened as the JVM's user: its directory, and the file's
/// path through that directory. `%p` is the JVM's pid in its own namespace; any other
/// placeholder (`%t`, `%hn`) matches any text, and the newest matching file is taken.
fn resolve(files: &ProcessFiles, pattern: &Path, ns_pid: u32) -> Option<(OpenDir, PathBuf)> {
    let path = PathBuf::from(pattern.to_str()?.replace("%p", &ns_pid.to_string()));
    let name = path.file_name()?.to_str()?;
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = files.open_dir(parent.unwrap_or(Path::new("."))).ok()?;
    let inside = dir.path();
    let file = if name.contains('%') {
        let glob = placeholders_as_stars(name);
        fs::read_dir(&inside)
            .ok()?
            .flatten()
            .filter(|e| e.file_name().to_str().is_some_and(|n| glob_match(&glob, n)))
            .filter_map(|e| Some((e.metadata().ok()?.mtime(), e.path())))
            .max()
            .map(|(_, p)| p)?
    } else {
        inside.join(name)
    };
    // Opened, not looked at: a file the JVM's user cannot read is as good as missing.
    let opened = open_regular_file(&file, false).ok()?;
    files.may_read(&opened).then_some((dir, file))
}

/// `gc-%t.log` -> `gc-*.log`: `%` and the letters after it become one `*`.
fn placeholders_as_stars(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '%' {
            while chars.next_if(|c| c.is_ascii_alphabetic()).is_some() {}
            out.push('*');
        } else {
            out.push(c);
        }
    }
    out
}

/// The `GarbageCollectorMXBean` name and GC action that report a pause of this kind, as
/// OpenTelemetry's `jvm.gc.duration` labels it (`jvm.gc.name`, `jvm.gc.action`: the JVM's
/// GC notification, which the OpenTelemetry Java agent and Micrometer pass on as they are).
/// Generational ZGC's minor and major
/// pauses are not told apart in the log: both are `ZGC Pauses`, as JDK 17's ZGC names them.
fn otel_gc_name_and_action(
    collector: Option<Collector>,
    pause: PauseType,
) -> (&'static str, &'static str) {
    const MINOR: &str = "end of minor GC";
    const MAJOR: &str = "end of major GC";
    const PAUSE: &str = "end of GC pause";
    let full = pause == PauseType::Full;
    match collector {
        Some(Collector::G1) => match pause {
            PauseType::Full => ("G1 Old Generation", MAJOR),
            PauseType::Remark | PauseType::Cleanup => {
                ("G1 Concurrent GC", "end of concurrent GC pause")
            }
            _ => ("G1 Young Generation", MINOR),
        },
        Some(Collector::Parallel) if full => ("PS MarkSweep", MAJOR),
        Some(Collector::Parallel) => ("PS Scavenge", MINOR),
        Some(Collector::Serial) if full => ("MarkSweepCompact", MAJOR),
        Some(Collector::Serial) => ("Copy", MINOR),
        Some(Collector::Cms) if pause == PauseType::Young => ("ParNew", MINOR),
        Some(Collector::Cms) => ("ConcurrentMarkSweep", MAJOR),
        // The JVM's own names for `-XX:+UseParNewGC` without CMS.
        Some(Collector::ParNew) if full => ("MarkSweepCompact", MAJOR),
        Some(Collector::ParNew) => ("ParNew", MINOR),
        Some(Collector::Zgc) => ("ZGC Pauses", PAUSE),
        Some(Collector::Shenandoah) => ("Shenandoah Pauses", PAUSE),
        _ if full => ("unknown", MAJOR),
        _ => ("unknown", PAUSE),
    }
}

/// One scrape's pause series of every JVM, encoded as whole families (a family appears
/// once, whatever the number of JVMs).
#[derive(Debug, Default)]
pub(crate) struct PauseFamilies {
    gc: Vec<(Labels, Histogram)>,
    /// The GC pauses again under OpenTelemetry's names (`--names otel`), when asked for.
    otel_gc: Option<Vec<(Labels, Histogram)>>,
    safepoint: Vec<(Labels, Histogram)>,
    ttsp: Vec<(Labels, Histogram)>,
    stalls: Vec<(Labels, Histogram)>,
    max: Vec<(Labels, f64)>,
    logs: Vec<Labels>,
}

impl PauseFamilies {
    /// No series yet; with `otel_names`, GC pauses also as `jvm_gc_duration_seconds`.
    pub(crate) fn new(otel_names: bool) -> PauseFamilies {
        PauseFamilies {
            otel_gc: otel_names.then(Vec::new),
            ..PauseFamilies::default()
        }
    }

    /// Adds the series of one JVM. `collector` is its collector as best known.
    pub(crate) fn add(&mut self, pid: u32, pauses: &JvmPauses, collector: Option<Collector>) {
        let pid = pid.to_string();
        let collector_name = collector.map_or("unknown", Collector::name).to_string();
        for ((kind, cause), h) in &pauses.gc.by_key {
            let labels = vec![
                ("pid", pid.clone()),
                ("collector", collector_name.clone()),
                ("pause", kind.as_str().to_string()),
                ("cause", cause.clone()),
            ];
            self.gc.push((labels, h.clone()));
        }
        if let Some(otel_gc) = self.otel_gc.as_mut() {
            let mut by_bean: BTreeMap<(&str, &str), Histogram> = BTreeMap::new();
            for ((kind, _), h) in &pauses.gc.by_key {
                by_bean
                    .entry(otel_gc_name_and_action(collector, *kind))
                    .or_default()
                    .add(h);
            }
            for ((name, action), h) in by_bean {
                let labels = vec![
                    ("pid", pid.clone()),
                    ("jvm_gc_name", name.to_string()),
                    ("jvm_gc_action", action.to_string()),
                ];
                otel_gc.push((labels, h));
            }
        }
        for (series, by_operation) in [
            (&mut self.safepoint, &pauses.safepoint),
            (&mut self.ttsp, &pauses.ttsp),
        ] {
            for (operation, h) in &by_operation.by_key {
                let labels = vec![("pid", pid.clone()), ("vm_operation", operation.clone())];
                series.push((labels, h.clone()));
            }
        }
        let following = pauses.logs.iter().any(|l| l.state != LogState::Unreadable);
        if pauses.stalls.count() > 0 || (following && collector == Some(Collector::Zgc)) {
            self.stalls
                .push((vec![("pid", pid.clone())], pauses.stalls.clone()));
        }
        if following {
            for (kind, max) in ["gc", "safepoint", "allocation_stall"]
                .into_iter()
                .zip(pauses.max)
            {
                let labels = vec![("pid", pid.clone()), ("kind", kind.to_string())];
                self.max.push((labels, max));
            }
        }
        for log in &pauses.logs {
            self.logs.push(vec![
                ("pid", pid.clone()),
                ("path", log.shown.clone()),
                ("state", log.state.as_str().to_string()),
            ]);
        }
        if pauses.logs.is_empty() {
            self.logs.push(vec![
                ("pid", pid),
                ("path", String::new()),
                ("state", "none".to_string()),
            ]);
        }
    }
}

impl EncodeCollector for PauseFamilies {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        let seconds = Unit::Seconds;
        let histograms = [
            (
                "hotspot_gc_pause",
                "Stop-the-world GC pauses, from the JVM's GC log",
                &self.gc,
            ),
            (
                "hotspot_safepoint",
                "Time stopped per safepoint, from the JVM's safepoint log",
                &self.safepoint,
            ),
            (
                "hotspot_time_to_safepoint",
                "Time to safepoint (bringing every thread to a stop), from the JVM's safepoint log",
                &self.ttsp,
            ),
            (
                "hotspot_allocation_stall",
                "ZGC allocation stalls: a thread waited for memory, from the JVM's GC log",
                &self.stalls,
            ),
        ];
        let otel = self.otel_gc.iter().map(|series| {
            (
                "jvm_gc_duration",
                "Duration of JVM garbage collection actions: the stop-the-world GC pauses of \
                 hotspot_gc_pause_seconds under OpenTelemetry's name (jvm.gc.duration)",
                series,
            )
        });
        for (name, help, series) in histograms.into_iter().chain(otel) {
            if series.is_empty() {
                continue;
            }
            let mut family =
                encoder.encode_descriptor(name, help, Some(&seconds), MetricType::Histogram)?;
            for (labels, histogram) in series {
                histogram.encode(family.encode_family(labels)?)?;
            }
        }
        if !self.max.is_empty() {
            let mut family = encoder.encode_descriptor(
                "hotspot_pause_max",
                "The longest GC pause, safepoint or allocation stall whose log line was written since the previous scrape (0 when none)",
                Some(&seconds),
                MetricType::Gauge,
            )?;
            for (labels, max) in &self.max {
                ConstGauge::new(*max).encode(family.encode_family(labels)?)?;
            }
        }
        if !self.logs.is_empty() {
            let mut family = encoder.encode_descriptor(
                "pauselab_export_gc_log",
                "The GC log read for a JVM (1): following, enabled (turned on by --enable-gc-log), none (no GC log to a file), unreadable",
                None,
                MetricType::Gauge,
            )?;
            for labels in &self.logs {
                ConstGauge::new(1i64).encode(family.encode_family(labels)?)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_hold_their_upper_bound_and_grow() {
        assert!(BUCKETS.windows(2).all(|w| w[0] < w[1]));
        let mut h = Histogram::default();
        for s in [0.0, 0.0001, 0.00010001, 60.0, 61.0] {
            h.observe(s);
        }
        assert_eq!(h.counts[0], 2, "0 and 0.1 ms are in the first bucket");
        assert_eq!(h.counts[1], 1);
        assert_eq!(h.counts[BUCKETS.len() - 1], 1, "60 s is in the 60 s bucket");
        assert_eq!(h.counts[BUCKETS.len()], 1, "61 s only in +Inf");
        assert_eq!(h.count(), 5);
    }

    #[test]
    fn label_values_from_the_log_are_bounded() {
        let mut pauses = JvmPauses {
            logs: vec![FollowedLog {
                shown: String::new(),
                pattern: PathBuf::new(),
                tags: Tags {
                    gc: true,
                    safepoint: true,
                },
                dir: None,
                follower: None,
                read_state: LogState::Following,
                state: LogState::Following,
                next_operation: None,
                catching_up: false,
            }],
            ..JvmPauses::default()
        };
        for i in 0..200 {
            let cause = format!("{i}{}", "é".repeat(100));
            let line =
                format!("[1.0s][info][gc] GC({i}) Pause Young (Normal) ({cause}) 3M->1M(8M) 1.0ms");
            let parsed = pauselab_gclog::parse::parse_line(line.as_bytes()).unwrap();
            pauses.record(
                Tags {
                    gc: true,
                    safepoint: true,
                },
                &mut None,
                parsed,
                false,
            );
        }
        let causes: Vec<&String> = pauses.gc.by_key.keys().map(|(_, c)| c).collect();
        assert_eq!(causes.len(), MAX_LABEL_SETS + 1, "64 causes and other");
        assert!(causes.iter().all(|c| c.len() <= MAX_LABEL_BYTES));
        let total: u64 = pauses.gc.by_key.values().map(Histogram::count).sum();
        assert_eq!(total, 200, "every pause is counted");
    }

    #[test]
    fn buckets_are_exposed_cumulative() {
        let mut pauses = JvmPauses::default();
        for ms in [1.0, 2.0, 2.0, 40.0] {
            pauses.gc.observe(
                (PauseType::Young, "x".to_string()),
                || unreachable!(),
                ms / 1e3,
            );
        }
        let mut families = PauseFamilies::default();
        families.add(7, &pauses, Some(Collector::G1));
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register_collector(Box::new(families));
        let text = crate::exposition::encode(&registry, crate::exposition::Format::Prometheus);
        let bucket = |le: &str| {
            let prefix = format!("hotspot_gc_pause_seconds_bucket{{le=\"{le}\",pid=\"7\",collector=\"G1\",pause=\"young\",cause=\"x\"}} ");
            let line = text.lines().find(|l| l.starts_with(&prefix));
            line.and_then(|l| l[prefix.len()..].parse::<u64>().ok())
        };
        assert_eq!(bucket("0.001"), Some(1), "{text}");
        assert_eq!(bucket("0.0025"), Some(3), "{text}");
        assert_eq!(bucket("0.025"), Some(3), "{text}");
        assert_eq!(bucket("0.05"), Some(4), "{text}");
        assert_eq!(bucket("+Inf"), Some(4), "{text}");
        assert!(
            text.contains("# TYPE hotspot_gc_pause_seconds histogram\n"),
            "{text}"
        );
    }

    #[test]
    fn otel_names_merge_pauses_by_the_bean_that_reports_them() {
        let mut pauses = JvmPauses::default();
        for (kind, cause, ms) in [
            (PauseType::Young, "G1 Evacuation Pause", 2.0),
            (PauseType::Mixed, "G1 Evacuation Pause", 3.0),
            (PauseType::ConcurrentStart, "G1 Humongous Allocation", 4.0),
            (PauseType::Remark, "none", 1.0),
            (PauseType::Full, "System.gc()", 30.0),
        ] {
            pauses
                .gc
                .observe((kind, cause.to_string()), || unreachable!(), ms / 1e3);
        }
        let text = |otel: bool| {
            let mut families = PauseFamilies::new(otel);
            families.add(7, &pauses, Some(Collector::G1));
            let mut registry = prometheus_client::registry::Registry::default();
            registry.register_collector(Box::new(families));
            crate::exposition::encode(&registry, crate::exposition::Format::Prometheus)
        };
        assert!(!text(false).contains("jvm_gc_duration"));
        let text = text(true);
        let series = |name: &str, action: &str| {
            let prefix = format!("jvm_gc_duration_seconds_count{{pid=\"7\",jvm_gc_name=\"{name}\",jvm_gc_action=\"{action}\"}} ");
            let line = text.lines().find(|l| l.starts_with(&prefix));
            line.and_then(|l| l[prefix.len()..].parse::<u64>().ok())
        };
        assert_eq!(
            series("G1 Young Generation", "end of minor GC"),
            Some(3),
            "{text}"
        );
        assert_eq!(
            series("G1 Old Generation", "end of major GC"),
            Some(1),
            "{text}"
        );
        assert_eq!(
            series("G1 Concurrent GC", "end of concurrent GC pause"),
            Some(1),
            "{text}"
        );
        assert!(text.contains("# TYPE jvm_gc_duration_seconds histogram\n"));
        assert!(text.contains("hotspot_gc_pause_seconds_count{"), "{text}");
        assert_eq!(
            otel_gc_name_and_action(Some(Collector::Parallel), PauseType::Young),
            ("PS Scavenge", "end of minor GC")
        );
        assert_eq!(
            otel_gc_name_and_action(Some(Collector::Zgc), PauseType::MarkEnd),
            ("ZGC Pauses", "end of GC pause")
        );
    }

    #[test]
    fn selections_that_log_pauses_and_safepoints() {
        let both = Tags {
            gc: true,
            safepoint: true,
        };
        let gc = Tags {
            gc: true,
            safepoint: false,
        };
        let safepoint = Tags {
            gc: false,
            safepoint: true,
        };
        for (selection, tags) in [
            ("gc", gc),
            ("gc*", gc),
            ("gc*=info", gc),
            ("safepoint", safepoint),
            ("safepoint*=trace", safepoint),
            ("gc=debug,safepoint=info", both),
            ("gc*,safepoint", both),
            ("all", both),
            ("gc+heap=debug,gc", gc),
            ("gc+heap", Tags::default()),
            ("gc=warning", Tags::default()),
            ("gc=off", Tags::default()),
            ("jit+compilation=debug", Tags::default()),
        ] {
            assert_eq!(logged_tags(selection), tags, "{selection}");
        }
    }

    #[test]
    fn placeholders_match_any_text() {
        assert_eq!(placeholders_as_stars("gc-%t.log"), "gc-*.log");
        assert_eq!(placeholders_as_stars("gc-%hn-%t.log"), "gc-*-*.log");
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("gc-2026-01-01_10-00-00.log");
        let new = dir.path().join("gc-2026-01-02_10-00-00.log");
        fs::write(&old, "").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        fs::write(&new, "").unwrap();
        let files = ProcessFiles::of(std::process::id()).unwrap();
        let resolved = |pattern: &Path, pid: u32| {
            resolve(&files, pattern, pid).map(|(_, file)| fs::read_to_string(file).unwrap())
        };
        fs::write(&new, "new").unwrap();
        assert_eq!(
            resolved(&dir.path().join("gc-%t.log"), 1).as_deref(),
            Some("new")
        );
        let by_pid = dir.path().join("gc-%p.log");
        fs::write(dir.path().join("gc-77.log"), "77").unwrap();
        assert_eq!(resolved(&by_pid, 77).as_deref(), Some("77"));
        assert_eq!(resolved(&by_pid, 78), None);
    }
}
