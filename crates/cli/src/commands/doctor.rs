//! `pauselab doctor`: audit this host and its JVMs for stall risks.
//!
//! The checks, the probe's targets and a JVM's options in HotSpot's order are
//! pauselab-host's; this reads each JVM with pauselab-hsperf (host needs no hsperf reader)
//! and hands the facts over; the text is pauselab-render's.

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Context;
use pauselab_host::doctor::{
    host_checks, jvm_checks, probe_findings, probe_targets, JvmFacts, PerfDataPlace,
    SafepointCounters, Severity,
};
use pauselab_host::jvm_options::OptionSources;
use pauselab_host::probe::{run_mmap_probe, ProbeConfig};
use pauselab_hsperf::{discover_jvms, inspect, JvmProcess, PerfData, Reader, Source};
use pauselab_pause::Collector;
use pauselab_render::{render_doctor, DoctorReport};

use super::probe::{stop_on_signals, PROBE_DURATION};
use super::EXIT_CONDITION;

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
    let snapshot = Reader::open(jvm.pid, Source::Auto)
        .and_then(|mut r| r.snapshot())
        .ok();
    let text = |name: &str| {
        snapshot
            .as_ref()
            .and_then(|s| s.value_str(name).map(|v| v.into_owned()))
    };
    let cmdline = pauselab_hsperf::read_cmdline(jvm.pid).unwrap_or_default();
    let (options, options_source) = OptionSources {
        pid: jvm.pid,
        environment: pauselab_hsperf::read_environ(jvm.pid).unwrap_or_default(),
        launcher_options: pauselab_hsperf::jvm_options(&cmdline),
        cmdline,
        vm_args: text("java.rt.vmArgs"),
        vm_flags: text("java.rt.vmFlags"),
    }
    .options();
    JvmFacts {
        pid: jvm.pid,
        name: jvm.main_class.clone(),
        java_version: text("java.property.java.version"),
        gc: Collector::from_perf_counters(
            text("sun.gc.policy.name").as_deref(),
            text("sun.gc.collector.0.name").as_deref(),
        ),
        options,
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
        let targets = probe_targets(&facts);
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
        write!(out, "{}", render_doctor(&report))?;
    }
    Ok(if report.worst == Severity::Critical {
        ExitCode::from(EXIT_CONDITION)
    } else {
        ExitCode::SUCCESS
    })
}
