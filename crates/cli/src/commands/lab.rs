//! `pauselab lab`: reproduce a stall on this host and compare JVM variants side by side.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Subcommand;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use pauselab_lab::bundle::Outcome;
use pauselab_lab::experiment::Conclusion;
use pauselab_lab::experiment::{Experiment, FaultUse, BUILTIN};
use pauselab_lab::experiment::{Filesystem, Gc, MountOptions};
use pauselab_lab::runner::{Observer, Progress, RunState, VariantProgress};
use pauselab_lab::verdict::VariantSummary;
use pauselab_lab::verdict::{VariantVerdict, Vulnerable};
use pauselab_lab::{journal, units, RunOptions};
use pauselab_pause::Summary;
use pauselab_report::table::{format_measurement, measurement_label};

mod matrix;

/// Exit code when a run could not decide (noisy host, no baseline data, interrupted).
pub const EXIT_INCONCLUSIVE: u8 = 4;

#[derive(clap::Args)]
#[command(arg_required_else_help = true)]
pub struct Args {
    #[command(subcommand)]
    command: LabCommand,
}

#[derive(Subcommand)]
enum LabCommand {
    /// List the built-in experiments
    List {
        #[arg(long)]
        json: bool,
    },
    /// Print an experiment's TOML
    Show { name: String },
    /// Run an experiment (default: hsperf-mmap for 2 minutes); changes the host and undoes it
    Run(RunArgs),
    /// Undo what runs killed with SIGKILL left on the host (mounts, loop devices, throttles, files, processes)
    Cleanup {
        #[arg(long)]
        json: bool,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// Built-in experiment name or TOML file
    #[arg(default_value = "hsperf-mmap")]
    experiment: String,
    /// Run time: 90s, 2m, 1h; a bare number is seconds (default: the experiment's)
    #[arg(long, value_name = "DURATION", value_parser = |text: &str| units::DURATION.parse(text))]
    duration: Option<Duration>,
    /// JDK home or major version (11: from /usr/lib/jvm, $JAVA_HOME or `make jdks`); repeat
    /// for a matrix (every variant on every JDK, in the same run)
    #[arg(long = "jdk")]
    jdks: Vec<PathBuf>,
    /// Result bundle directory (default: ./pauselab-lab-NAME-DATE)
    #[arg(long)]
    out: Option<PathBuf>,
    /// Stress this directory (your own disk) instead of injecting the slow device; repeat
    /// for a matrix (one cell per disk)
    #[arg(long = "disk", value_name = "DIR", conflicts_with = "no_fault")]
    disks: Vec<PathBuf>,
    /// Do not inject the fault: show what this host does on its own
    #[arg(long)]
    no_fault: bool,
    /// Collector of every variant (Serial, Parallel, G1, ZGC, Shenandoah); repeat for a
    /// matrix (one cell per collector)
    #[arg(long = "gc", value_name = "GC")]
    gcs: Vec<Gc>,
    /// Filesystem of the slow device (ext4, xfs, btrfs); repeat for a matrix
    #[arg(long = "fs", value_name = "FS")]
    filesystems: Vec<Filesystem>,
    /// Mount options of the slow device, as `mount -o` takes them (noatime, lazytime,
    /// data=writeback); repeat for a matrix
    #[arg(long = "mount-options", value_name = "OPTIONS")]
    mount_options: Vec<MountOptions>,
    /// Run each cell of the matrix N times, in interleaved order
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// Print the plan and its expected duration, change nothing
    #[arg(long)]
    dry_run: bool,
    /// Print verdict.json instead of the table
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        LabCommand::List { json } => list(json),
        LabCommand::Show { name } => {
            let (_, text) = Experiment::load(&name)?;
            io::stdout().lock().write_all(text.as_bytes())?;
            Ok(ExitCode::SUCCESS)
        }
        LabCommand::Cleanup { json } => cleanup(json),
        LabCommand::Run(run_args) => run_experiment(run_args),
    }
}

fn list(json: bool) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let mut rows = Vec::new();
    for (name, text) in BUILTIN {
        let e = Experiment::parse(text, name)?;
        let expected = expected_duration(&e)?;
        let needs_root = e.root_requirements(FaultUse::Inject);
        rows.push(serde_json::json!({
            "name": e.name,
            "description": e.description,
            "duration": e.duration,
            "schedule": e.schedule,
            "expected_duration_s": expected.as_secs(),
            "needs_root": !needs_root.is_empty(),
            "root_for": needs_root,
            "variants": e.variants.iter().map(|v| v.name.clone()).collect::<Vec<_>>(),
        }));
        if !json {
            writeln!(
                out,
                "{:<16} {:>6}  {:<4}  {}",
                e.name,
                format!("~{}", human_duration(expected)),
                if needs_root.is_empty() { "" } else { "root" },
                e.description
            )?;
        }
    }
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)?;
    } else {
        writeln!(
            out,
            "(expected duration on one JDK; each --jdk adds as much; \"root\": runs only as root)"
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Wall time of a run on one JDK (`matrix::expected_run_duration`).
fn expected_duration(e: &Experiment) -> anyhow::Result<Duration> {
    Ok(pauselab_lab::matrix::expected_run_duration(
        e,
        e.duration.get(),
        1,
        e.fault.is_some(),
    ))
}

fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

fn cleanup(json: bool) -> anyhow::Result<ExitCode> {
    let state = journal::state_dir();
    let reports = journal::cleanup_stale(&state).context("lab cleanup")?;
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&reports)?)?;
    } else if reports.is_empty() {
        writeln!(
            out,
            "nothing to clean up (no journals in {})",
            state.join("lab/journals").display()
        )?;
    }
    let mut failed = false;
    for r in &reports {
        if r.running {
            if !json {
                writeln!(
                    out,
                    "{}: run {} is still running; left alone",
                    r.journal.display(),
                    r.run_id
                )?;
            }
            continue;
        }
        if !json {
            writeln!(out, "run {}: undid {} change(s)", r.run_id, r.undone.len())?;
            for u in &r.undone {
                writeln!(out, "  undone: {u}")?;
            }
        }
        for f in &r.failures {
            failed = true;
            eprintln!("pauselab: warning: {f}");
        }
    }
    if failed {
        anyhow::bail!("some changes could not be undone; the journals were kept, fix the cause and run `pauselab lab cleanup` again");
    }
    Ok(ExitCode::SUCCESS)
}

fn run_experiment(args: RunArgs) -> anyhow::Result<ExitCode> {
    let (experiment, text) = Experiment::load(&args.experiment)?;
    let fault = if !args.disks.is_empty() || args.no_fault {
        FaultUse::Skip
    } else {
        FaultUse::Inject
    };
    let needs_root = experiment.root_requirements(fault);
    if !needs_root.is_empty() && !pauselab_lab::sys::is_root() {
        anyhow::bail!(
            "lab run {}: needs root for {}; run it as root (nothing was changed)",
            args.experiment,
            needs_root.join(", ")
        );
    }
    let (plan, jdks) =
        matrix::plan(&args, &experiment).with_context(|| format!("lab run {}", args.experiment))?;
    if args.dry_run {
        matrix::print_plan(
            &mut io::stdout().lock(),
            &experiment,
            &plan,
            &jdks,
            args.json,
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    if matrix::is_matrix(&args) {
        return matrix::run(args, experiment, text, plan, &jdks);
    }
    let measurement_columns = experiment.measurements.clone();
    let conclusion = experiment.conclusion.clone();
    let bundle_dir = args.out.unwrap_or_else(|| {
        PathBuf::from(format!("pauselab-lab-{}-{}", experiment.name, timestamp()))
    });
    let options = RunOptions {
        duration: args.duration,
        jdks: args.jdks,
        out: bundle_dir.clone(),
        disk: args.disks.into_iter().next(),
        no_fault: args.no_fault,
        state_dir: journal::state_dir(),
        cell: None,
    };
    let stop = pauselab_lab::runner::interrupt_flag()?;
    let mut observer = Bars::new();
    let finished = pauselab_lab::run(experiment, text, options, stop.clone(), &mut observer)
        .with_context(|| format!("lab run {}", args.experiment))?;
    let interrupted = stop.load(std::sync::atomic::Ordering::SeqCst);
    for failure in &finished.cleanup_failures {
        eprintln!("pauselab: warning: could not undo {failure}; run `pauselab lab cleanup`");
    }
    let outcome = pauselab_lab::bundle::write(&finished)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&outcome)?)?;
    } else {
        for note in &outcome.notes {
            writeln!(out, "note: {note}")?;
        }
        print_table(
            &mut out,
            &outcome,
            &measurement_columns,
            conclusion.as_ref(),
        )?;
        writeln!(out, "bundle: {}", bundle_dir.display())?;
    }
    if interrupted {
        // On stderr, also with --json: the run was cut short, whatever the table says.
        eprintln!(
            "pauselab: lab run {} interrupted (SIGINT or SIGTERM): rounds were cut short, host changes undone; the bundle {} holds what was measured until then",
            args.experiment,
            bundle_dir.display()
        );
    }
    Ok(match outcome.result {
        Vulnerable::Yes => ExitCode::from(super::EXIT_CONDITION),
        Vulnerable::No => ExitCode::SUCCESS,
        Vulnerable::Inconclusive => ExitCode::from(EXIT_INCONCLUSIVE),
    })
}

fn result_word(v: Vulnerable) -> &'static str {
    match v {
        Vulnerable::Yes => "vulnerable",
        Vulnerable::No => "not vulnerable",
        Vulnerable::Inconclusive => "inconclusive",
    }
}

fn verdict_word(v: VariantVerdict) -> &'static str {
    match v {
        VariantVerdict::Stalls => "STALLS",
        VariantVerdict::NoStalls => "no stalls",
        VariantVerdict::Baseline => "baseline",
        VariantVerdict::Skipped => "skipped",
        VariantVerdict::Failed => "failed",
        VariantVerdict::NoData => "no baseline data",
        VariantVerdict::Slower => "SLOWER",
        VariantVerdict::NotSlower => "not slower",
        VariantVerdict::Unclear => "unclear",
    }
}

fn ms(v: Option<f64>) -> String {
    match v {
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.1}"),
        None => "-".into(),
    }
}

/// A group of the pause table: its title, column headers and each variant's cells (none
/// when the variant has no such log).
struct PauseGroup {
    title: &'static str,
    headers: [&'static str; 5],
    summary: fn(&VariantSummary) -> Option<&Summary>,
    /// The statistics after the count, in the order of `headers`.
    stats: fn(&Summary) -> [f64; 4],
}

const PAUSE_GROUPS: [PauseGroup; 3] = [
    PauseGroup {
        title: "hiccups (ms)",
        headers: ["count", "p99", "p99.9", "p99.99", "max"],
        summary: |v| v.hiccups.as_ref(),
        stats: |s| [s.p99_ms, s.p99_9_ms, s.p99_99_ms, s.max_ms],
    },
    PauseGroup {
        title: "safepoints (ms)",
        headers: ["count", "p99", "p99.9", "p99.99", "max"],
        summary: |v| v.safepoints.as_ref(),
        stats: |s| [s.p99_ms, s.p99_9_ms, s.p99_99_ms, s.max_ms],
    },
    PauseGroup {
        title: "request latency (ms)",
        headers: ["requests", "p50", "p99", "p99.9", "max"],
        summary: |v| v.latency.as_ref(),
        stats: |s| [s.p50_ms, s.p99_ms, s.p99_9_ms, s.max_ms],
    },
];

/// Width of a pause table column.
const PAUSE_COLUMN: usize = 8;

/// The table of a run: pauses where pauses are the question (and some variant has a pause
/// log), the experiment's measurements, its conclusion in its own terms, the verdicts.
fn print_table(
    out: &mut dyn Write,
    outcome: &Outcome,
    columns: &[String],
    conclusion: Option<&Conclusion>,
) -> io::Result<()> {
    let groups: Vec<&PauseGroup> = PAUSE_GROUPS
        .iter()
        .filter(|g| outcome.variants.iter().any(|v| (g.summary)(v).is_some()))
        .collect();
    let pauses = conclusion.is_none_or(|c| c.pauses) && !groups.is_empty();
    if pauses {
        print_pauses(out, outcome, &groups)?;
    }
    print_measurements(out, outcome, columns)?;
    print_conclusions(out, outcome)?;
    if pauses {
        print_verdicts_of_jdks(out, outcome)
    } else {
        // No pause table to carry them: each variant's verdict with its evidence.
        print_verdicts(out, outcome)
    }
}

/// One group of columns per pause log some variant has (a group empty in every row is
/// left out), then each variant's verdict.
fn print_pauses(out: &mut dyn Write, outcome: &Outcome, groups: &[&PauseGroup]) -> io::Result<()> {
    let w = variant_width(outcome);
    let c = PAUSE_COLUMN;
    let group_width = 5 * (c + 1) - 1;
    let mut header = format!("{:<8} {:<w$} |", "jdk", "variant");
    let mut titles = format!("{:<8} {:<w$} |", "", "");
    for g in groups {
        for h in g.headers {
            header.push_str(&format!(" {h:>c$}"));
        }
        header.push_str(" |");
        titles.push_str(&format!(" {:^group_width$} |", g.title));
    }
    writeln!(out, "{header} verdict")?;
    writeln!(out, "{titles}")?;
    for v in &outcome.variants {
        let verdict = match (&v.skipped, &v.early_exit) {
            (Some(reason), _) => format!("skipped: {reason}"),
            (None, Some(exit)) => format!("{} ({exit})", verdict_word(v.verdict)),
            _ => verdict_word(v.verdict).to_string(),
        };
        let mut row = format!("{:<8} {:<w$} |", v.jdk, v.variant);
        for g in groups {
            match (g.summary)(v) {
                Some(s) => {
                    row.push_str(&format!(" {:>c$}", s.count));
                    for value in (g.stats)(s) {
                        row.push_str(&format!(" {:>c$}", ms(Some(value))));
                    }
                }
                None => row.push_str(&format!(" {:>c$}", "-").repeat(5)),
            }
            row.push_str(" |");
        }
        writeln!(out, "{row} {verdict}")?;
    }
    Ok(())
}

/// The experiment's pairs compared on its own measurements (`[conclusion]`), one line per
/// pair and JDK: `jdk17 4g-pretouch against 4g: uptime at main (ms) 1300 against 100
/// (x13.00), ...`.
fn print_conclusions(out: &mut dyn Write, outcome: &Outcome) -> io::Result<()> {
    if outcome.conclusions.is_empty() {
        return Ok(());
    }
    writeln!(out, "conclusion:")?;
    for c in &outcome.conclusions {
        let measures: Vec<String> = c
            .measures
            .iter()
            .map(|m| {
                let value =
                    |v: Option<f64>| v.map_or("-".to_string(), |v| format_measurement(v, ""));
                let ratio = m.ratio.map(|r| format!(" (x{r:.2})")).unwrap_or_default();
                format!(
                    "{} {} against {}{ratio}",
                    measurement_label(&m.name, &m.unit),
                    value(m.value),
                    value(m.against)
                )
            })
            .collect();
        writeln!(
            out,
            "  {} {} against {}: {}",
            c.jdk,
            c.variant,
            c.against,
            measures.join(", ")
        )?;
    }
    writeln!(out)
}

fn print_verdicts(out: &mut dyn Write, outcome: &Outcome) -> io::Result<()> {
    let w = variant_width(outcome);
    for v in &outcome.variants {
        writeln!(
            out,
            "{:<8} {:<w$} | {}: {}",
            v.jdk,
            v.variant,
            verdict_word(v.verdict),
            v.evidence
        )?;
    }
    print_verdicts_of_jdks(out, outcome)
}

fn print_verdicts_of_jdks(out: &mut dyn Write, outcome: &Outcome) -> io::Result<()> {
    for j in &outcome.per_jdk {
        writeln!(
            out,
            "{}: {} ({})",
            j.jdk,
            result_word(j.vulnerable),
            j.reason
        )?;
    }
    let noisy = if outcome.noisy.is_empty() {
        ""
    } else {
        ", noisy (the host was busy with other work)"
    };
    writeln!(
        out,
        "experiment {}: {}{noisy}",
        outcome.experiment,
        result_word(outcome.result)
    )?;
    for line in &outcome.noisy {
        writeln!(out, "noisy: {line}")?;
    }
    Ok(())
}

/// The experiment's chosen measurements, one row per variant (summary.json has them all):
/// a column no variant has a value for is left out; the unit is in the header.
fn print_measurements(
    out: &mut dyn Write,
    outcome: &Outcome,
    columns: &[String],
) -> io::Result<()> {
    let find = |v: &VariantSummary, column: &str| -> Option<(f64, String)> {
        v.measurements
            .iter()
            .find(|m| m.name == column)
            .map(|m| (m.value, m.unit.clone()))
    };
    // (name, the unit of its first value)
    let shown: Vec<(&String, String)> = columns
        .iter()
        .filter_map(|c| {
            let unit = outcome.variants.iter().find_map(|v| find(v, c))?.1;
            Some((c, unit))
        })
        .collect();
    if shown.is_empty() {
        return Ok(());
    }
    let w = variant_width(outcome);
    let labels: Vec<String> = shown
        .iter()
        .map(|(c, unit)| measurement_label(c, unit))
        .collect();
    let widths: Vec<usize> = labels.iter().map(|l| l.len().max(8)).collect();
    let mut header = format!("{:<8} {:<w$} |", "jdk", "variant");
    for (label, width) in labels.iter().zip(&widths) {
        header.push_str(&format!(" {label:>width$}"));
    }
    writeln!(out)?;
    writeln!(out, "{header}")?;
    for v in &outcome.variants {
        let mut row = format!("{:<8} {:<w$} |", v.jdk, v.variant);
        for ((column, unit), width) in shown.iter().zip(&widths) {
            let cell = match find(v, column) {
                // The header carries the column's unit; a value in another one says so.
                Some((value, own)) if &own == unit => format_measurement(value, ""),
                Some((value, own)) => format_measurement(value, &own),
                None => "-".into(),
            };
            row.push_str(&format!(" {cell:>width$}"));
        }
        writeln!(out, "{row}")?;
    }
    let findings: Vec<String> = outcome
        .variants
        .iter()
        .filter(|v| !v.gc_findings.is_empty())
        .map(|v| format!("{}/{}: {}", v.jdk, v.variant, v.gc_findings.join(", ")))
        .collect();
    if !findings.is_empty() {
        writeln!(
            out,
            "GC log findings (pauselab analyze): {}",
            findings.join("; ")
        )?;
    }
    writeln!(out)?;
    Ok(())
}

/// Width of the variant column: the longest name.
fn variant_width(outcome: &Outcome) -> usize {
    outcome
        .variants
        .iter()
        .map(|v| v.variant.len())
        .max()
        .unwrap_or(0)
        .max("variant".len())
}

/// Progress bars on a terminal, plain lines every 10 s otherwise.
struct Bars {
    multi: MultiProgress,
    main: Option<ProgressBar>,
    rows: Vec<ProgressBar>,
    tty: bool,
    last_line: Duration,
}

impl Bars {
    fn new() -> Bars {
        Bars {
            multi: MultiProgress::new(),
            main: None,
            rows: Vec::new(),
            tty: std::io::stderr().is_terminal(),
            last_line: Duration::ZERO,
        }
    }
}

impl Observer for Bars {
    fn note(&mut self, message: &str) {
        eprintln!("{message}");
    }

    fn started(&mut self, total: Duration, labels: &[String]) {
        if !self.tty {
            eprintln!(
                "running {} variant(s) for up to {}s",
                labels.len(),
                total.as_secs()
            );
            return;
        }
        let bar = self.multi.add(ProgressBar::new(total.as_secs()));
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {elapsed_precise} elapsed, {msg} remaining")
                .expect("valid template"),
        );
        self.main = Some(bar);
        for label in labels {
            let row = self.multi.add(ProgressBar::new_spinner());
            row.set_style(ProgressStyle::with_template("  {msg}").expect("valid template"));
            row.set_message(format!("{label:<24} starting"));
            self.rows.push(row);
        }
    }

    fn tick(&mut self, progress: &Progress) {
        let remaining = progress.total.saturating_sub(progress.elapsed).as_secs();
        if let Some(bar) = &self.main {
            bar.set_position(progress.elapsed.as_secs());
            bar.set_message(format!("{}:{:02}", remaining / 60, remaining % 60));
            for (row, v) in self.rows.iter().zip(&progress.variants) {
                row.set_message(describe(v));
            }
        } else if progress.elapsed >= self.last_line + Duration::from_secs(10) {
            self.last_line = progress.elapsed;
            eprintln!(
                "{}s/{}s",
                progress.elapsed.as_secs(),
                progress.total.as_secs()
            );
            for v in &progress.variants {
                eprintln!("  {}", describe(v));
            }
        }
    }

    fn finished(&mut self) {
        if let Some(bar) = self.main.take() {
            bar.finish_and_clear();
        }
        for row in self.rows.drain(..) {
            row.finish_and_clear();
        }
    }
}

/// One variant's line: max hiccup and max safepoint so far, and the workload's longest gap
/// between allocations when it prints one (just its state when the experiment records
/// none of them, e.g. JMH).
fn describe(v: &VariantProgress) -> String {
    if v.max_hiccup_ms.is_none() && v.max_safepoint_ms.is_none() {
        let state = match v.state {
            RunState::Waiting => "waiting for its turn",
            RunState::Running => "running",
            RunState::Exited => "exited",
        };
        return format!("{:<24} {state}", v.label);
    }
    let show = |x: Option<f64>| {
        x.map(|x| format!("{x:>8.1} ms"))
            .unwrap_or_else(|| "       -   ".into())
    };
    let gap = v
        .max_gap_ms
        .map(|g| format!("  max gap {}", show(Some(g))))
        .unwrap_or_default();
    format!(
        "{:<24} max hiccup {}  max safepoint {}{gap}{}",
        v.label,
        show(v.max_hiccup_ms),
        show(v.max_safepoint_ms),
        match v.state {
            RunState::Waiting => "  (waiting for its turn)",
            RunState::Running => "",
            RunState::Exited => "  (exited)",
        }
    )
}

/// Local-free UTC timestamp for default bundle names: 20261121-2345.
fn timestamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let t = pauselab_pause::civil::UtcTime::from_epoch_ms(secs as i64 * 1000);
    format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-by-one run with safepoint logs and no hiccup agent, as pretouch's bundle has.
    fn outcome() -> Outcome {
        let stats = serde_json::json!({
            "count": 7, "total_ms": 70.0, "mean_ms": 10.0, "min_ms": 1.0, "p50_ms": 5.0,
            "p90_ms": 9.0, "p99_ms": 12.0, "p99_9_ms": 14.0, "p99_99_ms": 15.0, "max_ms": 15.0,
            "at_least_100ms": 0, "at_least_1s": 0,
        });
        let variant = |name: &str, uptime: f64| {
            serde_json::json!({
                "id": format!("{name}-jdk17"), "jdk": "jdk17", "variant": name,
                "safepoints": stats, "verdict": "no_stalls", "evidence": "max 15 ms",
                "measurements": [
                    {"name": "workload.uptime_at_main_ms", "value": uptime, "unit": "ms"},
                    {"name": "workload.alloc_mib_per_s", "value": 90.25, "unit": "MiB/s"},
                ],
            })
        };
        serde_json::from_value(serde_json::json!({
            "experiment": "pretouch", "result": "not_vulnerable",
            "rule": {"metric": "safepoint", "margin": 3.0, "floor_ms": 5000.0, "noise_ms": 5000.0},
            "variants": [variant("4g", 100.0), variant("4g-pretouch", 1300.0)],
            "per_jdk": [{"jdk": "jdk17", "vulnerable": "not_vulnerable", "reason": "none stalls", "baseline_max_ms": 15.0}],
            "conclusions": [{"jdk": "jdk17", "variant": "4g-pretouch", "against": "4g", "measures": [
                {"name": "workload.uptime_at_main_ms", "unit": "ms", "value": 1300.0, "against": 100.0, "ratio": 13.0},
            ]}],
        }))
        .unwrap()
    }

    fn table(conclusion: Option<&Conclusion>) -> String {
        let columns = [
            "workload.uptime_at_main_ms".to_string(),
            "workload.alloc_mib_per_s".to_string(),
            "workload.touch_s".to_string(),
        ];
        let mut out = Vec::new();
        print_table(&mut out, &outcome(), &columns, conclusion).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn each_experiment_concludes_in_its_own_terms_without_empty_columns() {
        let pauses = table(None);
        // Where pauses are the question: the safepoint group, and no hiccup group that
        // would be `-` in every row.
        assert!(pauses.contains("safepoints (ms)"), "{pauses}");
        assert!(!pauses.contains("hiccups"), "{pauses}");
        // Units in the headers, values without them; no column without any value.
        assert!(
            pauses.contains("uptime at main (ms) alloc (MiB/s)"),
            "{pauses}"
        );
        assert!(
            pauses.contains(" 1300 ") && pauses.contains(" 90.25"),
            "{pauses}"
        );
        assert!(!pauses.contains("touch ("), "{pauses}");
        assert!(
            pauses.contains(
                "jdk17 4g-pretouch against 4g: uptime at main (ms) 1300 against 100 (x13.00)"
            ),
            "{pauses}"
        );
        // Where they are not: no pause table, each variant's verdict with its evidence.
        let conclusion = Conclusion {
            pauses: false,
            measurements: vec!["workload.uptime_at_main_ms".into()],
            pairs: vec![["4g-pretouch".into(), "4g".into()]],
        };
        let trade_off = table(Some(&conclusion));
        assert!(!trade_off.contains("safepoints"), "{trade_off}");
        assert!(trade_off.contains("no stalls: max 15 ms"), "{trade_off}");
        assert!(trade_off.contains("4g-pretouch against 4g"), "{trade_off}");
    }
}
