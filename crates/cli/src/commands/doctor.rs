//! `pauselab doctor`: audit this host and its JVMs for stall risks.

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use pauselab_host::doctor::{
    host_checks, hsperf_directories, jvm_checks, jvm_probe_directories, probe_findings, Finding,
    JvmFacts, PerfDataPlace, SafepointCounters, Severity,
};
use pauselab_host::jvm_options::JvmOptions;
use pauselab_host::probe::{run_mmap_probe, ProbeConfig, ProbeTarget};
use pauselab_host::trust::OpenDir;
use pauselab_hsperf::{discover_jvms, inspect, JvmProcess, PerfData, Reader, Source};
use pauselab_pause::input::escape_control;
use pauselab_pause::Collector;
use serde::Serialize;

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

#[derive(Serialize)]
struct DoctorReport {
    jvms: Vec<JvmFacts>,
    findings: Vec<Finding>,
    /// Highest severity among the findings.
    worst: Severity,
    summary: Summary,
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
    let worst = findings
        .iter()
        .map(|f| f.severity)
        .max()
        .unwrap_or(Severity::Ok);
    let report = DoctorReport {
        jvms: facts,
        summary: Summary::of(&findings),
        findings,
        worst,
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        write!(out, "{}", render(&report))?;
    }
    Ok(if worst == Severity::Critical {
        ExitCode::from(EXIT_CONDITION)
    } else {
        ExitCode::SUCCESS
    })
}

/// How many findings of each severity, and which checks found something critical where:
/// the closing line of the text.
#[derive(Serialize)]
struct Summary {
    critical: usize,
    warning: usize,
    info: usize,
    ok: usize,
    /// Each critical check with the subjects (`host`, `pid N (main)`) it was found on.
    critical_checks: Vec<CriticalCheck>,
}

#[derive(Serialize)]
struct CriticalCheck {
    check: &'static str,
    subjects: Vec<String>,
}

impl Summary {
    fn of(findings: &[Finding]) -> Summary {
        let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
        let mut critical_checks: Vec<CriticalCheck> = Vec::new();
        for f in findings.iter().filter(|f| f.severity == Severity::Critical) {
            match critical_checks.iter_mut().find(|c| c.check == f.check) {
                Some(c) if c.subjects.contains(&f.subject) => {}
                Some(c) => c.subjects.push(f.subject.clone()),
                None => critical_checks.push(CriticalCheck {
                    check: f.check,
                    subjects: vec![f.subject.clone()],
                }),
            }
        }
        Summary {
            critical: count(Severity::Critical),
            warning: count(Severity::Warning),
            info: count(Severity::Info),
            ok: count(Severity::Ok),
            critical_checks,
        }
    }

    /// `2 critical, 1 warning, 4 info, 9 ok; critical: hsperf-stable-pages (pid 7 (App), pid
    /// 9 (Svc)), swap-...`
    fn line(&self) -> String {
        let mut line = format!(
            "{} critical, {} warning, {} info, {} ok",
            self.critical, self.warning, self.info, self.ok
        );
        if !self.critical_checks.is_empty() {
            let named: Vec<String> = self
                .critical_checks
                .iter()
                .map(|c| format!("{} ({})", c.check, escape_control(&c.subjects.join(", "))))
                .collect();
            line.push_str(&format!("; critical: {}", named.join(", ")));
        }
        line
    }
}

/// Findings of one check with the same severity, reasoning and fix on several JVMs: printed
/// once, naming the JVMs, instead of once per JVM.
struct Folded<'a> {
    findings: Vec<&'a Finding>,
}

impl Folded<'_> {
    /// The JVMs, once each (one JVM may have several alike, e.g. one per log file).
    fn jvms(&self) -> Vec<&str> {
        let mut jvms: Vec<&str> = Vec::new();
        for f in &self.findings {
            if !jvms.contains(&f.subject.as_str()) {
                jvms.push(&f.subject);
            }
        }
        jvms
    }
}

/// Splits the findings into those alike on several JVMs and the rest, both in their order.
fn fold<'a>(
    findings: &'a [Finding],
    jvm_subjects: &[String],
) -> (Vec<Folded<'a>>, Vec<&'a Finding>) {
    let alike = |a: &Finding, b: &Finding| {
        a.check == b.check && a.severity == b.severity && a.why == b.why && a.fix == b.fix
    };
    let mut groups: Vec<Folded> = Vec::new();
    let mut single: Vec<&Finding> = Vec::new();
    for f in findings {
        if !jvm_subjects.contains(&f.subject) {
            single.push(f);
            continue;
        }
        match groups.iter_mut().find(|g| alike(g.findings[0], f)) {
            Some(group) => group.findings.push(f),
            None => groups.push(Folded { findings: vec![f] }),
        }
    }
    let (folded, alone): (Vec<Folded>, Vec<Folded>) =
        groups.into_iter().partition(|g| g.jvms().len() > 1);
    single.extend(alone.into_iter().flat_map(|g| g.findings));
    single.sort_by_key(|f| findings.iter().position(|g| std::ptr::eq(*f, g)));
    (folded, single)
}

fn severity_label(severity: Severity) -> String {
    format!("{:<9}", severity.as_str().to_uppercase())
}

fn push_evidence(out: &mut String, f: &Finding, prefix: &str) {
    for e in &f.evidence {
        out.push_str(&format!(
            "          evidence: {prefix}{}  ({})\n",
            escape_control(&e.value),
            escape_control(&e.source)
        ));
    }
}

fn push_why_fix(out: &mut String, f: &Finding) {
    out.push_str(&format!(
        "          why: {}\n          fix: {}\n",
        escape_control(&f.why),
        escape_control(&f.fix)
    ));
}

fn render_folded(out: &mut String, group: &Folded) {
    let first = group.findings[0];
    let subjects: Vec<String> = group
        .findings
        .iter()
        .map(|f| escape_control(&f.subject).into_owned())
        .collect();
    let jvms: Vec<String> = group
        .jvms()
        .into_iter()
        .map(|jvm| escape_control(jvm).into_owned())
        .collect();
    let same_title = group.findings.iter().all(|f| f.title == first.title);
    if same_title {
        out.push_str(&format!(
            "{} {}  [{}]\n          on {} JVMs: {}\n",
            severity_label(first.severity),
            escape_control(&first.title),
            first.check,
            jvms.len(),
            jvms.join(", ")
        ));
    } else {
        out.push_str(&format!(
            "{} on {} JVMs  [{}]\n",
            severity_label(first.severity),
            jvms.len(),
            first.check
        ));
        for (f, subject) in group.findings.iter().zip(&subjects) {
            out.push_str(&format!(
                "          {subject}: {}\n",
                escape_control(&f.title)
            ));
        }
    }
    if first.severity >= Severity::Warning {
        let same_evidence = group.findings.iter().all(|f| {
            f.evidence.len() == first.evidence.len()
                && f.evidence
                    .iter()
                    .zip(&first.evidence)
                    .all(|(a, b)| a.value == b.value && a.source == b.source)
        });
        if same_evidence {
            push_evidence(out, first, "");
        } else {
            for (f, subject) in group.findings.iter().zip(&subjects) {
                push_evidence(out, f, &format!("{subject}: "));
            }
        }
        push_why_fix(out, first);
    }
}

/// The text report. Subjects, titles and evidence quote other processes' command lines,
/// paths and counters: each field is escaped on its own, so a line break in a `-jar` path
/// prints as `\n` inside its line instead of starting a line of its own.
fn render(report: &DoctorReport) -> String {
    let mut out = String::new();
    let jvm_subjects: Vec<String> = report.jvms.iter().map(JvmFacts::subject).collect();
    let (mut folded, single) = fold(&report.findings, &jvm_subjects);
    folded.sort_by_key(|g| std::cmp::Reverse(g.findings[0].severity));
    let mut subjects: Vec<&str> = Vec::new();
    for f in &single {
        if !subjects.contains(&f.subject.as_str()) {
            subjects.push(&f.subject);
        }
    }
    if report.jvms.is_empty() {
        out.push_str("no running JVMs found: host checks only\n\n");
    }
    let mut folded_shown = folded.is_empty();
    for subject in subjects {
        // The folded findings come after the host's, before each JVM's own.
        if !folded_shown && subject != "host" {
            render_folded_section(&mut out, &folded);
            folded_shown = true;
        }
        out.push_str(&format!("== {}\n", escape_control(subject)));
        let mut findings: Vec<&Finding> = single
            .iter()
            .copied()
            .filter(|f| f.subject == subject)
            .collect();
        findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
        for f in findings {
            out.push_str(&format!(
                "{} {}  [{}]\n",
                severity_label(f.severity),
                escape_control(&f.title),
                f.check
            ));
            if f.severity >= Severity::Warning {
                push_evidence(&mut out, f, "");
                push_why_fix(&mut out, f);
            }
        }
        out.push('\n');
    }
    if !folded_shown {
        render_folded_section(&mut out, &folded);
    }
    out.push_str(&report.summary.line());
    out.push('\n');
    out
}

fn render_folded_section(out: &mut String, folded: &[Folded]) {
    out.push_str("== alike on several JVMs\n");
    for group in folded {
        render_folded(out, group);
    }
    out.push('\n');
}
