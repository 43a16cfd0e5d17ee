//! `pauselab lab`: reproduce a stall on this host and compare JVM variants side by side.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Subcommand;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use pauselab_lab::bundle::Outcome;
use pauselab_lab::experiment::{Experiment, FaultUse, BUILTIN};
use pauselab_lab::experiment::{Filesystem, Gc, MountOptions};
use pauselab_lab::runner::{Observer, Progress, RunState, VariantProgress};
use pauselab_lab::verdict::{VariantVerdict, Vulnerable};
use pauselab_lab::{journal, units, RunOptions};
use pauselab_report::table::{format_measurement, measurement_header as short_name};

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
    let plan =
        matrix::plan(&args, &experiment).with_context(|| format!("lab run {}", args.experiment))?;
    if args.dry_run {
        matrix::print_plan(&mut io::stdout().lock(), &experiment, &plan, args.json)?;
        return Ok(ExitCode::SUCCESS);
    }
    if matrix::is_matrix(&args) {
        return matrix::run(args, experiment, text, plan);
    }
    let measurement_columns = experiment.measurements.clone();
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
        print_table(&mut out, &outcome, &measurement_columns)?;
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

fn print_table(out: &mut dyn Write, outcome: &Outcome, columns: &[String]) -> io::Result<()> {
    if outcome
        .variants
        .iter()
        .all(|v| v.hiccups.is_none() && v.safepoints.is_none() && v.latency.is_none())
    {
        // No pause logs (e.g. a JMH experiment): the verdicts with their evidence.
        print_measurements(out, outcome, columns)?;
        return print_verdicts(out, outcome);
    }
    // Request latencies (open-loop workloads) get their own group of columns.
    let with_latency = outcome.variants.iter().any(|v| v.latency.is_some());
    let w = variant_width(outcome);
    let mut header = format!(
        "{:<8} {:<w$} | {:>7} {:>7} {:>7} {:>7} {:>7} | {:>5} {:>7} {:>7} {:>7} {:>7} |",
        "jdk",
        "variant",
        "hiccups",
        "p99",
        "p99.9",
        "p99.99",
        "max",
        "safep",
        "p99",
        "p99.9",
        "p99.99",
        "max"
    );
    let mut groups = format!(
        "{:<8} {:<w$} | {:^39} | {:^37} |",
        "", "", "hiccups (ms)", "safepoints (ms)"
    );
    if with_latency {
        header.push_str(&format!(
            " {:>7} {:>7} {:>7} {:>7} |",
            "reqs", "p50", "p99", "max"
        ));
        groups.push_str(&format!(" {:^31} |", "request latency (ms)"));
    }
    writeln!(out, "{header} verdict")?;
    writeln!(out, "{groups}")?;
    for v in &outcome.variants {
        let h = v.hiccups.as_ref();
        let s = v.safepoints.as_ref();
        let verdict = match (&v.skipped, &v.early_exit) {
            (Some(reason), _) => format!("skipped: {reason}"),
            (None, Some(exit)) => format!("{} ({exit})", verdict_word(v.verdict)),
            _ => verdict_word(v.verdict).to_string(),
        };
        let mut row = format!(
            "{:<8} {:<w$} | {:>7} {:>7} {:>7} {:>7} {:>7} | {:>5} {:>7} {:>7} {:>7} {:>7} |",
            v.jdk,
            v.variant,
            h.map(|h| h.count.to_string()).unwrap_or("-".into()),
            ms(h.map(|h| h.p99_ms)),
            ms(h.map(|h| h.p99_9_ms)),
            ms(h.map(|h| h.p99_99_ms)),
            ms(h.map(|h| h.max_ms)),
            s.map(|s| s.count.to_string()).unwrap_or("-".into()),
            ms(s.map(|s| s.p99_ms)),
            ms(s.map(|s| s.p99_9_ms)),
            ms(s.map(|s| s.p99_99_ms)),
            ms(s.map(|s| s.max_ms)),
        );
        if with_latency {
            let l = v.latency.as_ref();
            row.push_str(&format!(
                " {:>7} {:>7} {:>7} {:>7} |",
                l.map(|l| l.count.to_string()).unwrap_or("-".into()),
                ms(l.map(|l| l.p50_ms)),
                ms(l.map(|l| l.p99_ms)),
                ms(l.map(|l| l.max_ms)),
            ));
        }
        writeln!(out, "{row} {verdict}")?;
    }
    print_measurements(out, outcome, columns)?;
    print_verdicts_of_jdks(out, outcome)
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

/// The experiment's chosen measurements, one row per variant (summary.json has them all).
fn print_measurements(
    out: &mut dyn Write,
    outcome: &Outcome,
    columns: &[String],
) -> io::Result<()> {
    if columns.is_empty() {
        return Ok(());
    }
    let w = variant_width(outcome);
    let mut header = format!("{:<8} {:<w$} |", "jdk", "variant");
    let widths: Vec<usize> = columns
        .iter()
        .map(|c| short_name(c).len().max(12))
        .collect();
    for (column, width) in columns.iter().zip(&widths) {
        header.push_str(&format!(" {:>width$}", short_name(column)));
    }
    writeln!(out)?;
    writeln!(out, "{header}")?;
    for v in &outcome.variants {
        let mut row = format!("{:<8} {:<w$} |", v.jdk, v.variant);
        for (column, width) in columns.iter().zip(&widths) {
            let cell = v
                .measurements
                .iter()
                .find(|m| &m.name == column)
                .map(|m| format_measurement(m.value, &m.unit))
                .unwrap_or_else(|| "-".into());
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
