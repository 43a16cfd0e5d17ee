//! Experiments: declarative TOML files (see docs/lab.md). Built-in ones are embedded.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::experiment::parts::{
    is_plain_name, validate_steps, GovernorSpec, MemoryCgroupSpec, PartError, PrepareStep,
    PressureSpec, SlowDeviceSpec, StressorSpec, SwapSpec,
};
use crate::experiment::units::{WrittenDuration, WrittenSize};
use crate::LabError;

/// Built-in experiments: (name, TOML text).
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "hsperf-mmap",
        include_str!("../../experiments/hsperf-mmap.toml"),
    ),
    ("gclog-io", include_str!("../../experiments/gclog-io.toml")),
    (
        "cpu-quota",
        include_str!("../../experiments/cpu-quota.toml"),
    ),
    (
        "jfr-overhead",
        include_str!("../../experiments/jfr-overhead.toml"),
    ),
    ("pretouch", include_str!("../../experiments/pretouch.toml")),
    ("swap", include_str!("../../experiments/swap.toml")),
    (
        "startup-pressure",
        include_str!("../../experiments/startup-pressure.toml"),
    ),
    (
        "memory-pressure",
        include_str!("../../experiments/memory-pressure.toml"),
    ),
    (
        "classload-cds",
        include_str!("../../experiments/classload-cds.toml"),
    ),
];

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    pub name: String,
    /// One line, shown by `pauselab lab list`.
    pub description: String,
    /// Default run time of each variant, e.g. "2m".
    pub duration: WrittenDuration,
    /// Name of the variant the others are compared with.
    pub baseline: String,
    /// Start-up time left out of statistics and verdicts (JIT compilation of several JVMs
    /// starting at once is noise, not the stall); the logs keep everything.
    #[serde(default = "no_warmup")]
    pub warmup: WrittenDuration,
    /// Whether the variants run at the same time or one after the other.
    #[serde(default)]
    pub schedule: Schedule,
    /// Host settings (sysfs, procfs) for the whole run, restored afterwards.
    #[serde(default)]
    pub host: HostSettings,
    /// Measurements shown as columns of the results table (`workload.<field>`,
    /// `gc.<name>`, `process.elapsed_s`, ...; docs/lab.md, "Measurements"). Every
    /// measurement is in summary.json and `--json` whether shown or not.
    #[serde(default)]
    pub measurements: Vec<String>,
    pub workload: Workload,
    /// Fault injected when root (skipped with `--no-fault` or `--disk`).
    #[serde(default)]
    pub fault: Option<Fault>,
    /// A swap file on the lab's device, on for the whole run (root).
    #[serde(default)]
    pub swap: Option<SwapSpec>,
    #[serde(default, rename = "stressor")]
    pub stressors: Vec<StressorSpec>,
    /// `java` commands run on each JDK before the variants (the jvm layer's `prepare`).
    #[serde(default)]
    pub prepare: Vec<PrepareStep>,
    #[serde(rename = "variant")]
    pub variants: Vec<Variant>,
    pub verdict: VerdictRule,
    /// How the experiment concludes in its own terms, beside the verdict on pauses.
    #[serde(default)]
    pub conclusion: Option<Conclusion>,
}

/// `[conclusion]`: pairs of variants compared on the measurements the experiment is about
/// (start-up time against throughput, cost per operation), one line per pair and JDK.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conclusion {
    /// Whether the table of pauses is shown: false where pauses are not the question.
    #[serde(default = "yes")]
    pub pauses: bool,
    /// Measurement names (as in `measurements`) each pair is compared on.
    pub measurements: Vec<String>,
    /// `[variant, the variant it is compared with]`.
    pub pairs: Vec<[String; 2]>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Main class, in pauselab-workloads.jar unless `classpath` is given.
    pub main: String,
    /// Class path entries of your own workload (relative to the experiment file;
    /// `{benchmarks_jar}` is pauselab-benchmarks.jar); default: pauselab-workloads.jar.
    #[serde(default)]
    pub classpath: Option<Vec<String>>,
    /// Arguments; placeholders such as `{duration_s}` and `{out_dir}` are replaced
    /// (`java::expand_arg`).
    #[serde(default)]
    pub args: Vec<String>,
    /// JVM flags every variant gets (heap, collector).
    #[serde(default)]
    pub jvm_flags: Vec<String>,
    /// Attach the hiccup agent (interval log `hiccup.hlog`).
    #[serde(default = "yes")]
    pub hiccup_agent: bool,
    /// `-Xlog` selection for the GC log (written outside the stressed filesystem).
    #[serde(default)]
    pub gc_log: Option<String>,
    /// The workload writes the latency of each request, from its scheduled start, as an
    /// interval log to the `{latency_log}` argument (`latency.hlog`); the lab reads it as
    /// it grows (`latency` in summary.json, verdict metric `latency`).
    #[serde(default)]
    pub latency_log: bool,
    /// Record JFR (`recording.jfr` in each variant's directory, settings=profile plus the
    /// safepoint events on JDK 17+).
    #[serde(default)]
    pub jfr: bool,
}

/// How the variants of one JDK share the host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Schedule {
    /// All at once, under the same stress (stalls caused by the host).
    #[default]
    Together,
    /// Each alone, in the order given (start-up times, throughput, host settings that
    /// differ per variant); the stressors run throughout.
    OneByOne,
}

/// Host settings: absolute sysfs/procfs path -> value. Only the memory-management and VM
/// tunables may be set (/sys/kernel/mm/, /proc/sys/vm/); every write goes through the
/// journal and is undone afterwards.
pub type HostSettings = std::collections::BTreeMap<String, String>;

/// Where a variant's GC log is written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcLogLocation {
    /// The bundle directory (outside the stressed filesystem).
    #[default]
    Out,
    /// The variant's directory (stressed, tmpfs, ...), copied into the bundle afterwards.
    Tmp,
}

fn no_warmup() -> WrittenDuration {
    "0s".parse().expect("0s is a duration")
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Fault {
    /// A throttled loop device that requires stable pages (docs/lab.md).
    SlowStablePages {
        size: WrittenSize,
        write_bps: WrittenSize,
        #[serde(default = "yes")]
        stable_writes: bool,
        #[serde(default = "ext4")]
        fstype: crate::experiment::dimensions::Filesystem,
        /// As `mount -o` takes them; none: the kernel's defaults.
        #[serde(default)]
        mount_options: Option<crate::experiment::dimensions::MountOptions>,
    },
}

fn ext4() -> crate::experiment::dimensions::Filesystem {
    crate::experiment::dimensions::Filesystem::Ext4
}

impl Fault {
    pub fn slow_device_spec(&self) -> SlowDeviceSpec {
        match self {
            Fault::SlowStablePages {
                size,
                write_bps,
                stable_writes,
                fstype,
                mount_options,
            } => SlowDeviceSpec {
                size_bytes: size.get(),
                write_bps: write_bps.get(),
                stable_writes: *stable_writes,
                fstype: *fstype,
                mount_options: mount_options.clone(),
            },
        }
    }
}

/// Where a variant's directory lives: its hsperf directory (bound over
/// `/tmp/hsperfdata_<user>` for the JVM) and, with `gc_log_on = "tmp"`, its GC log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TmpLocation {
    /// A directory on the stressed filesystem (the slow device, or `--disk DIR`).
    Stressed,
    /// A directory on a tmpfs mounted for the run.
    Tmpfs,
    /// A private directory in the run's scratch area on the host's ordinary disk.
    Scratch,
    /// The host's own `/tmp/hsperfdata_<user>`, shared (no mount namespace).
    Host,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// JVM flags added after the workload's.
    #[serde(default)]
    pub flags: Vec<String>,
    pub tmp: TmpLocation,
    /// What this variant is for in the verdict.
    #[serde(default)]
    pub role: Role,
    /// Processes or threads running beside the JVM.
    #[serde(default, rename = "companion")]
    pub companions: Vec<Companion>,
    /// Arguments appended to the workload's (`{out_dir}` is the variant's bundle directory).
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub gc_log_on: GcLogLocation,
    /// CFS bandwidth limit of the JVM's own CPU cgroup, in CPUs ("0.2" = 20 ms per 100 ms).
    #[serde(default)]
    pub cpu_quota: Option<f64>,
    /// The JVM's memory cgroup: limit, swap, swappiness and a filler beside it.
    #[serde(default)]
    pub memory_cgroup: Option<MemoryCgroupSpec>,
    /// Transparent huge pages disabled for this JVM only (`prctl(PR_SET_THP_DISABLE)`).
    #[serde(default)]
    pub thp_disabled: bool,
    /// Host settings while this variant runs (`schedule = "one-by-one"` only).
    #[serde(default)]
    pub host: HostSettings,
    /// Oldest JDK (feature release) the variant's flags exist on; skipped on older ones.
    #[serde(default)]
    pub min_jdk: Option<u32>,
}

/// What a variant is in its experiment (shared with the bundle format).
pub use pauselab_bundle::Role;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Companion {
    /// pauselab reads the JVM's perf counters (from process memory when the JVM does not
    /// share them through a file) every `interval`.
    HsperfReader { interval: WrittenDuration },
    /// pauselab's memory filler takes the host near its limit for the variant's turn
    /// (docs/experiments/memory-pressure.md).
    MemoryPressure(PressureSpec),
    /// pauselab turns THP off host-wide while memory pressure is high, back on when it
    /// eases (docs/experiments/memory-pressure.md).
    ThpGovernor(GovernorSpec),
}

/// How a variant is judged against the baseline (docs/lab.md, "Verdict").
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerdictRule {
    /// `hiccup` (the agent's log), `safepoint` (the GC log), `latency` (the workload's
    /// request latencies) or `jmh-score`.
    pub metric: Metric,
    /// A variant stalls when its p99.9 or max is at least `margin` times the baseline's
    /// (`jmh-score`: is slower when its cost per operation is)...
    pub margin: f64,
    /// ...and at least `floor_ms` (pause metrics).
    #[serde(default)]
    pub floor_ms: f64,
    /// Inconclusive when the baseline's own max exceeds this: the host is too noisy
    /// (pause metrics).
    #[serde(default)]
    pub noise_ms: f64,
    /// `jmh-score`: inconclusive when the baseline's JMH error exceeds this fraction of
    /// its score.
    #[serde(default = "half")]
    pub max_baseline_error: f64,
}

fn half() -> f64 {
    0.5
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    Hiccup,
    Safepoint,
    /// The workload's request latencies (`latency.hlog`, `latency_log = true`).
    Latency,
    /// Safepoints, with the max raised to the workload's longest gap between allocations
    /// (`"type":"interval"` lines with `max_gap_ms`): the stop the application saw, also
    /// when it fell outside a safepoint.
    Stop,
    /// JMH's primary score (`jmh.score`), as a cost ratio against the baseline's.
    JmhScore,
}

/// Whether a run injects the experiment's fault (a slow device needs root) or stresses a
/// directory the user gave (`--disk`) or the host's own disk (`--no-fault`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultUse {
    /// The experiment's `[fault]`, if it has one.
    Inject,
    /// `--disk DIR` or `--no-fault`.
    Skip,
}

impl Experiment {
    /// What this experiment does that only root may do, one phrase each; empty when it
    /// runs as any user. `lab run` refuses to start without root when this is not empty.
    pub fn root_requirements(&self, fault: FaultUse) -> Vec<&'static str> {
        let mut needs = Vec::new();
        if self.fault.is_some() && fault == FaultUse::Inject {
            needs.push("a slow device (loop device, mount, blkio throttle)");
        }
        if self.variants.iter().any(|v| v.tmp != TmpLocation::Host) {
            needs.push("a private hsperf directory per variant (mount namespace)");
        }
        if self.variants.iter().any(|v| v.cpu_quota.is_some()) {
            needs.push("CPU cgroups");
        }
        if self.variants.iter().any(|v| v.memory_cgroup.is_some()) {
            needs.push("memory cgroups");
        }
        if self.swap.is_some() {
            needs.push("a swap file (mkswap, swapon)");
        }
        if !self.host.is_empty() || self.variants.iter().any(|v| !v.host.is_empty()) {
            needs.push("host settings in /sys and /proc/sys");
        }
        if self
            .variants
            .iter()
            .flat_map(|v| &v.companions)
            .any(|c| matches!(c, Companion::ThpGovernor(_)))
        {
            needs.push("the THP governor (writes /sys/kernel/mm/transparent_hugepage)");
        }
        needs
    }

    pub fn parse(text: &str, origin: &str) -> Result<Experiment, LabError> {
        let experiment: Experiment = toml::from_str(text)
            .map_err(|e| LabError::Experiment(format!("{origin}: {}", e.to_string().trim())))?;
        experiment.validate(origin)?;
        Ok(experiment)
    }

    fn validate(&self, origin: &str) -> Result<(), LabError> {
        let bad = |m: String| Err(LabError::Experiment(format!("{origin}: {m}")));
        if self.variants.is_empty() {
            return bad("no [[variant]]".into());
        }
        check_host_settings(&self.host)
            .map_err(|m| LabError::Experiment(format!("{origin}: {m}")))?;
        let mut names = std::collections::HashSet::new();
        for v in &self.variants {
            check_host_settings(&v.host)
                .map_err(|m| LabError::Experiment(format!("{origin}: variant {}: {m}", v.name)))?;
            if !v.host.is_empty() && self.schedule != Schedule::OneByOne {
                return bad(format!(
                    "variant {}: per-variant host settings need schedule = \"one-by-one\" (the host has one value at a time)",
                    v.name
                ));
            }
            if let Some(q) = v.cpu_quota {
                if !(0.01..=1024.0).contains(&q) {
                    return bad(format!(
                        "variant {}: cpu_quota {q} is not between 0.01 and 1024 CPUs",
                        v.name
                    ));
                }
            }
            if let Some(spec) = &v.memory_cgroup {
                spec.resolve().map_err(|e| {
                    LabError::Experiment(format!("{origin}: variant {}: {e}", v.name))
                })?;
            }
            if !is_plain_name(&v.name) {
                return bad(format!(
                    "variant name {:?}: use letters, digits, - and _",
                    v.name
                ));
            }
            if !names.insert(&v.name) {
                return bad(format!("variant {:?} appears twice", v.name));
            }
            for c in &v.companions {
                match c {
                    // Checked when read.
                    Companion::HsperfReader { .. } => Ok(()),
                    Companion::MemoryPressure(spec) => spec.bounds().map(|_| ()),
                    Companion::ThpGovernor(spec) => spec.thresholds().map(|_| ()),
                }
                .map_err(|e| LabError::Experiment(format!("{origin}: variant {}: {e}", v.name)))?;
            }
        }
        if !self.variants.iter().any(|v| v.name == self.baseline) {
            return bad(format!("baseline {:?} is not a variant", self.baseline));
        }
        for stressor in &self.stressors {
            stressor
                .check()
                .map_err(|e| LabError::Experiment(format!("{origin}: {e}")))?;
        }
        if let Some(c) = &self.conclusion {
            if c.measurements.is_empty() || c.pairs.is_empty() {
                return bad("conclusion: needs measurements and pairs".into());
            }
            if let Some(name) = c
                .pairs
                .iter()
                .flatten()
                .find(|name| !self.variants.iter().any(|v| &&v.name == name))
            {
                return bad(format!(
                    "conclusion: pair names {name:?}, which is not a variant"
                ));
            }
        }
        validate_steps(&self.prepare)
            .map_err(|e| LabError::Experiment(format!("{origin}: {e}")))?;
        if let Some(swap) = &self.swap {
            swap.bytes()
                .map_err(|e| LabError::Experiment(format!("{origin}: swap: {e}")))?;
        }
        let wants_latency_log = self
            .workload
            .args
            .iter()
            .chain(self.variants.iter().flat_map(|v| &v.args))
            .any(|a| a.contains(crate::experiment::layout::LATENCY_LOG_PLACEHOLDER));
        if self.workload.latency_log != wants_latency_log {
            return bad(format!(
                "workload: latency_log = true and an argument with {} go together (the workload writes the log the lab reads)",
                crate::experiment::layout::LATENCY_LOG_PLACEHOLDER
            ));
        }
        let r = &self.verdict;
        if r.metric == Metric::Latency && !self.workload.latency_log {
            return bad(
                "verdict: metric \"latency\" needs a workload with latency_log = true".into(),
            );
        }
        if r.metric == Metric::JmhScore {
            if !(r.margin >= 1.0 && r.max_baseline_error > 0.0) {
                return bad("verdict: margin must be >= 1, max_baseline_error > 0".into());
            }
        } else if !(r.margin >= 1.0 && r.floor_ms >= 0.0 && r.noise_ms > 0.0) {
            return bad("verdict: margin must be >= 1, floor_ms >= 0, noise_ms > 0".into());
        }
        Ok(())
    }

    /// Number of consecutive rounds of `duration` per JDK.
    pub fn rounds_per_jdk(&self) -> usize {
        match self.schedule {
            Schedule::Together => 1,
            Schedule::OneByOne => self.variants.len(),
        }
    }

    /// A built-in by name, or a TOML file.
    pub fn load(name_or_path: &str) -> Result<(Experiment, String), LabError> {
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Ok((Experiment::parse(text, name_or_path)?, text.to_string()));
        }
        let path = Path::new(name_or_path);
        if path.exists() || name_or_path.ends_with(".toml") {
            let text = std::fs::read_to_string(path)
                .map_err(|e| LabError::io(path, "read the experiment", e))?;
            let mut experiment = Experiment::parse(&text, name_or_path)?;
            // Class path entries are relative to the experiment file.
            let base = std::fs::canonicalize(path)
                .ok()
                .and_then(|p| p.parent().map(Path::to_path_buf))
                .unwrap_or_default();
            if let Some(entries) = experiment.workload.classpath.as_mut() {
                for entry in entries.iter_mut() {
                    let p = Path::new(entry.as_str());
                    if p.is_relative() && !entry.starts_with('{') {
                        *entry = base.join(p).display().to_string();
                    }
                }
            }
            return Ok((experiment, text));
        }
        let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
        Err(LabError::Experiment(format!(
            "no experiment {name_or_path:?}: not a built-in ({}) and no such file",
            names.join(", ")
        )))
    }
}

/// Settable host paths: memory management and VM tunables, nothing else.
const SETTABLE_HOST_PREFIXES: &[&str] = &["/sys/kernel/mm/", "/proc/sys/vm/"];

fn check_host_settings(settings: &HostSettings) -> Result<(), PartError> {
    for (path, value) in settings {
        if !SETTABLE_HOST_PREFIXES.iter().any(|p| path.starts_with(p)) || path.contains("..") {
            return Err(PartError::HostSettingPath {
                path: path.clone(),
                allowed: SETTABLE_HOST_PREFIXES.join(" or "),
            });
        }
        if value.is_empty() || value.contains('\n') {
            return Err(PartError::HostSettingValue(path.clone()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpu_hog_has_at_most_1024_threads() {
        let (_, text) = BUILTIN[0];
        let with = |threads: u32, duty: u32| {
            let toml = format!(
                "{text}\n[[stressor]]\nkind = \"cpu-hog\"\nthreads = {threads}\nduty = {duty}\n"
            );
            Experiment::parse(&toml, "x.toml").map(|e| e.stressors.len())
        };
        assert!(with(1024, 100).is_ok());
        for (threads, duty, says) in [
            (100_000, 50, "threads = 100000 is not between 1 and 1024"),
            (0, 50, "threads = 0 is not between 1 and 1024"),
            (4, 150, "duty = 150 is not a percentage"),
        ] {
            let error = with(threads, duty).unwrap_err().to_string();
            assert!(
                error.starts_with("x.toml: stressor cpu-hog: ") && error.contains(says),
                "{error}"
            );
            assert_eq!(error.lines().count(), 1);
        }
    }

    #[test]
    fn durations_are_checked_when_read_and_written_back_as_written() {
        let (_, text) = BUILTIN[0];
        let e = Experiment::parse(text, "x").unwrap();
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(json["duration"].as_str(), Some(e.duration.text()));
        assert!(e.duration.get() > std::time::Duration::ZERO);
        let line = text.lines().find(|l| l.starts_with("duration")).unwrap();
        let bad = text.replace(line, "duration = \"2 weeks\"");
        let err = Experiment::parse(&bad, "x").unwrap_err().to_string();
        assert!(
            err.contains("duration") && err.contains("unknown unit"),
            "{err}"
        );
    }

    #[test]
    fn builtins_parse() {
        for (name, text) in BUILTIN {
            let e = Experiment::parse(text, name).unwrap();
            assert_eq!(&e.name, name);
        }
    }

    #[test]
    fn hsperf_mmap_has_the_five_variants() {
        let (e, _) = Experiment::load("hsperf-mmap").unwrap();
        let names: Vec<&str> = e.variants.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names.len(), 5, "{names:?}");
        assert!(e
            .variants
            .iter()
            .any(|v| v.role == Role::Subject && v.tmp == TmpLocation::Stressed));
        assert!(e.variants.iter().any(|v| v.tmp == TmpLocation::Tmpfs));
        assert!(e.variants.iter().any(|v| !v.companions.is_empty()));
    }

    #[test]
    fn a_conclusion_names_variants_of_the_experiment() {
        let (_, text) = Experiment::load("pretouch").unwrap();
        let e = Experiment::parse(&text, "p.toml").unwrap();
        let c = e.conclusion.unwrap();
        assert!(!c.pauses);
        assert_eq!(c.pairs[1], ["4g-pretouch".to_string(), "4g".to_string()]);
        let typo = text.replacen("[\"4g-pretouch\", \"4g\"]", "[\"4g-pretouch\", \"4G\"]", 1);
        let err = Experiment::parse(&typo, "p.toml").unwrap_err().to_string();
        assert!(
            err.contains("p.toml: conclusion: pair names \"4G\""),
            "{err}"
        );
    }

    #[test]
    fn errors_name_the_problem() {
        let (_, text) = Experiment::load("hsperf-mmap").unwrap();
        let typo = text.replacen("baseline =", "baseline_typo =", 1);
        let err = Experiment::parse(&typo, "x.toml").unwrap_err().to_string();
        assert!(err.contains("x.toml"), "{err}");
        let wrong = text.replacen("tmp = \"tmpfs\"", "tmp = \"ramdisk\"", 1);
        let err = Experiment::parse(&wrong, "y.toml").unwrap_err().to_string();
        assert!(err.contains("ramdisk"), "{err}");
        // The latency log: asked for, written and judged together, or not at all.
        let (_, quota) = Experiment::load("cpu-quota").unwrap();
        let unread = quota.replacen("latency_log = true", "latency_log = false", 1);
        let err = Experiment::parse(&unread, "z.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("{latency_log}"), "{err}");
        let unwritten = quota.replacen("\"{latency_log}\"", "\"/tmp/x.hlog\"", 1);
        let err = Experiment::parse(&unwritten, "z.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("latency_log = true"), "{err}");
        let unjudged = unwritten.replacen("latency_log = true", "latency_log = false", 1);
        let err = Experiment::parse(&unjudged, "z.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("metric \"latency\""), "{err}");
        let missing = Experiment::load("no-such-experiment")
            .unwrap_err()
            .to_string();
        assert!(missing.contains("hsperf-mmap"), "{missing}");
    }
}
