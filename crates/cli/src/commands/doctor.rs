//! `pauselab doctor`: audit this host and its JVMs for stall risks.

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use pauselab_host::doctor::{
    host_checks, hsperf_directories, jvm_checks, jvm_probe_directories, probe_findings, JvmFacts,
    PerfDataPlace, SafepointCounters, Severity,
};
use pauselab_host::jvm_options::JvmOptions;
use pauselab_host::probe::{run_mmap_probe, ProbeConfig, ProbeTarget};
use pauselab_host::trust::OpenDir;
use pauselab_hsperf::{discover_jvms, inspect, JvmProcess, PerfData, Reader, Source};
use pauselab_pause::Collector;

use super::probe::{stop_on_signals, PROBE_DURATION};
use super::EXIT_CONDITION;
use crate::render;
use crate::render::doctor::DoctorReport;

#[derive(clap::Args)]
pub struct Args {
    /// Check only this JVM; repeat for several (default: every JVM on the host)
    #[arg(long)]
    pub pid: Vec<u32>,
    /// Also measure: run `probe mmap` on the hsperf and GC log directories
    #[arg(long)]
    pub probe: bool,
    /// How long `--probe` measures: 5s, 500ms, 1m; a bare number is seconds
    #[arg(long, default_value = "5s", value_name = "DURATION",
          value_parser = |text: &str| PROBE_DURATION.parse(text))]
    pub probe_duration: Duration,
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}

/// Everything the checks need about one JVM, from its counters when they can be read, else
/// from its command line.
fn jvm_facts(jvm: &JvmProcess) -> JvmFacts {
    let perf_data = match &jvm.perf_data {
        PerfData::File { path } => PerfDataPlace::File(path.clone()),
        PerfData::MemoryOnly => PerfDataPlace::MemoryOnly,
        PerfData::Disabled => PerfDataPlace::Disabled,
        PerfData::Unknown { reason } => PerfDataPlace::Unknown(reason.clone()),
    };
    let environment = pauselab_hsperf::read_environ(jvm.pid).unwrap_or_default();
    let snapshot = Reader::open(jvm.pid, Source::Auto)
        .and_then(|mut r| r.snapshot())
        .ok();
    let text = |name: &str| {
        snapshot
            .as_ref()
            .and_then(|s| s.value_str(name).map(|v| v.into_owned()))
    };
    // java.rt.vmArgs joins the options with spaces, so an option with a space in it (a log
    // path) would fall apart; the launcher's command line has each one whole. When the two
    // agree (they do unless @argfiles or JDK_JAVA_OPTIONS added options), the command
    // line's split is used.
    let cmdline = pauselab_hsperf::read_cmdline(jvm.pid).unwrap_or_default();
    let launcher_options = pauselab_hsperf::jvm_options(&cmdline);
    let (args, options_source): (Vec<String>, String) = match text("java.rt.vmArgs") {
        Some(joined) => (
            match launcher_options {
                Some(options) if options.join(" ") == joined.trim() => options,
                _ => joined.split_whitespace().map(str::to_string).collect(),
            },
            "java.rt.vmArgs (perf counters)".to_string(),
        ),
        None => (
            launcher_options.unwrap_or(cmdline),
            format!("/proc/{}/cmdline", jvm.pid),
        ),
    };
    // HotSpot reads JAVA_TOOL_OPTIONS before the command line and _JAVA_OPTIONS after it.
    let mut all: Vec<String> = Vec::new();
    all.extend(environment_words(&environment, "JAVA_TOOL_OPTIONS"));
    all.extend(
        text("java.rt.vmFlags")
            .map(|f| f.split_whitespace().map(str::to_string).collect::<Vec<_>>())
            .unwrap_or_default(),
    );
    all.extend(args);
    all.extend(environment_words(&environment, "_JAVA_OPTIONS"));
    JvmFacts {
        pid: jvm.pid,
        name: jvm.main_class.clone(),
        java_version: text("java.property.java.version"),
        gc: Collector::from_perf_counters(
            text("sun.gc.policy.name").as_deref(),
            text("sun.gc.collector.0.name").as_deref(),
        ),
        options: JvmOptions::parse(&all),
        options_source,
        perf_data,
        safepoints: snapshot.as_ref().and_then(|s| {
            Some(SafepointCounters {
                count: u64::try_from(s.value_i64("sun.rt.safepoints")?).ok()?,
                sync_seconds: s.seconds("sun.rt.safepointSyncTime")?,
            })
        }),
    }
}

fn environment_words(environment: &[String], name: &str) -> Vec<String> {
    let prefix = format!("{name}=");
    environment
        .iter()
        .filter_map(|e| e.strip_prefix(&prefix))
        .flat_map(|v| v.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .collect()
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let jvms = if args.pid.is_empty() {
        discover_jvms()
    } else {
        args.pid
            .iter()
            .map(|&pid| inspect(pid).with_context(|| format!("pid {pid}")))
            .collect::<anyhow::Result<Vec<_>>>()?
    };
    let facts: Vec<JvmFacts> = jvms.iter().map(jvm_facts).collect();
    let mut findings = host_checks();
    for jvm in &facts {
        findings.extend(jvm_checks(jvm));
    }
    if args.probe {
        // Each directory is reached through a descriptor: `/tmp/hsperfdata_<user>` belongs
        // to that user, who could put a link there (docs/ARCHITECTURE.md, Trust).
        let mut targets: Vec<ProbeTarget> = hsperf_directories()
            .into_iter()
            .filter_map(|shown| {
                let dir = OpenDir::no_follow(&shown).ok()?;
                Some(ProbeTarget::Opened {
                    shown,
                    dir: Arc::new(dir),
                })
            })
            .collect();
        for target in facts.iter().flat_map(jvm_probe_directories) {
            if !targets.iter().any(|t| t.label() == target.label()) {
                targets.push(target);
            }
        }
        targets.push(ProbeTarget::Anonymous);
        let config = ProbeConfig {
            duration: args.probe_duration,
            ..ProbeConfig::default()
        };
        let stop = stop_on_signals();
        let results = run_mmap_probe(&targets, &config, stop).context("--probe")?;
        if stop.load(Ordering::SeqCst) {
            anyhow::bail!("interrupted during --probe");
        }
        findings.extend(probe_findings(&results));
    }
    let report = DoctorReport::new(facts, findings);
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        write!(out, "{}", render::doctor::render(&report))?;
    }
    Ok(if report.worst == Severity::Critical {
        ExitCode::from(EXIT_CONDITION)
    } else {
        ExitCode::SUCCESS
    })
}
