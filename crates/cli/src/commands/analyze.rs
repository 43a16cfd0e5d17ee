//! `pauselab analyze`: GC and safepoint logs into pause histograms and a diagnosis.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use pauselab_gclog::condition::{parse_conditions, Condition};
use pauselab_gclog::hlog::{HlogMode, HlogSink};
use pauselab_gclog::{analyze_inputs, input, render, Analyzer, Options};

use super::EXIT_CONDITION;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  pauselab analyze gc.log
  pauselab analyze recording.jfr                # JDK Flight Recorder (docs/jfr.md)
  pauselab analyze /var/log/app/gc.log          # with gc.log.0 .. gc.log.N: the whole rotated set
  zcat old.log.gz | pauselab analyze -
  pauselab analyze --json gc.log | jq .pauses.p99_ms
  pauselab analyze --fail-on 'p99.9>200ms,finding:real_gt_cpu' gc.log   # exit 3 when it holds")]
pub struct Args {
    /// GC or safepoint logs: files, rotated sets (base name), .gz, .zip, or - for stdin;
    /// or JFR recordings (.jfr)
    #[arg(value_name = "LOG", required = true)]
    pub logs: Vec<String>,
    /// Print one JSON object (schema in docs/analyze.md) instead of the text report
    #[arg(long)]
    pub json: bool,
    /// How many of the worst pauses to list
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Exit with code 3 when any of these comma-separated conditions holds:
    /// METRIC>VALUE (p50 p90 p99 p99.9 max mean total ttsp safepoint.max ... with a unit;
    /// count, stopped_share, gc_share, unparsed as numbers) or finding:RULE / finding:any
    #[arg(long, value_name = "EXPR")]
    pub fail_on: Option<String>,
    /// Also write the GC pauses as an HdrHistogram interval log (V2, readable by Java's
    /// HistogramLogProcessor), tagged `gc`
    #[arg(long, value_name = "FILE")]
    pub hlog: Option<PathBuf>,
    /// pauses: each interval holds the pauses that started in it; hiccup: what jHiccup's
    /// `-f -fz` file mode makes of them (1 ms ticks, zeros, coordinated-omission fill)
    #[arg(long, value_enum, default_value_t = HlogModeArg::Pauses, requires = "hlog")]
    pub hlog_mode: HlogModeArg,
    /// Interval length of the --hlog file, seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0, requires = "hlog")]
    pub hlog_interval: f64,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum HlogModeArg {
    Pauses,
    Hiccup,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let conditions: Vec<Condition> = match &args.fail_on {
        Some(text) => parse_conditions(text)?,
        None => Vec::new(),
    };
    if args.hlog_interval.is_nan() || args.hlog_interval < 0.001 {
        anyhow::bail!("--hlog-interval must be at least 0.001 seconds");
    }
    // JFR recordings take their own reader; GC logs are expanded (rotated sets, stdin).
    let recordings = super::analyze_jfr::recordings(&args.logs)?;
    let inputs = match recordings {
        Some(_) => Vec::new(),
        None => input::expand(&args.logs)?,
    };
    let mut sink = match &args.hlog {
        Some(path) => {
            let file = File::create(path)
                .with_context(|| format!("{}: cannot create the --hlog file", path.display()))?;
            let mode = match args.hlog_mode {
                HlogModeArg::Pauses => HlogMode::Pauses,
                HlogModeArg::Hiccup => HlogMode::Hiccup,
            };
            Some(HlogSink::new(
                BufWriter::new(file),
                mode,
                args.hlog_interval,
                "gc",
            ))
        }
        None => None,
    };
    let options = Options {
        top: args.top,
        ..Options::default()
    };
    let mut analyzer = match sink.as_mut() {
        Some(s) => Analyzer::new(options).with_sink(s),
        None => Analyzer::new(options),
    };
    // Inputs that could not be read are named after the report of the others.
    let mut failed = Vec::new();
    let jfr = match &recordings {
        Some(paths) => Some(super::analyze_jfr::analyze(paths, &mut analyzer)?),
        None => {
            match analyze_inputs(&inputs, &mut analyzer) {
                Ok(()) => {}
                Err(pauselab_gclog::Error::InputsFailed { failed: f, read }) if read > 0 => {
                    failed = f
                }
                Err(error) => return Err(error.into()),
            }
            None
        }
    };
    let mut report = analyzer.finish();
    if jfr.is_some() {
        // Not a log: no log format to name.
        report.inputs.iter_mut().for_each(|f| f.format = None);
    }
    if let (Some(sink), Some(path)) = (sink, &args.hlog) {
        sink.finish()
            .with_context(|| format!("{}: writing the interval log", path.display()))?;
    }

    for w in &report.warnings {
        match w.line {
            Some(line) => eprintln!("pauselab: warning: {}:{line}: {}", w.file, w.message),
            None => eprintln!("pauselab: warning: {}: {}", w.file, w.message),
        }
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        match &jfr {
            Some(jfr) => {
                let both = super::analyze_jfr::JfrReport {
                    report: &report,
                    jfr,
                };
                serde_json::to_writer_pretty(&mut out, &both)
            }
            None => serde_json::to_writer_pretty(&mut out, &report),
        }
        .context("writing JSON")?;
        writeln!(out)?;
    } else {
        out.write_all(render::render_text(&report).as_bytes())?;
        if let Some(jfr) = &jfr {
            out.write_all(super::analyze_jfr::render(jfr).as_bytes())?;
        }
    }
    let mut code = ExitCode::SUCCESS;
    for c in &conditions {
        let (holds, why) = c.holds(&report);
        if holds {
            eprintln!("pauselab: --fail-on holds: {why}");
            code = ExitCode::from(EXIT_CONDITION);
        }
    }
    // A file that could not be read outranks a condition: the report is incomplete.
    if !failed.is_empty() {
        for error in failed {
            super::print_error(&error.into());
        }
        code = ExitCode::from(super::EXIT_ERROR);
    }
    Ok(code)
}
