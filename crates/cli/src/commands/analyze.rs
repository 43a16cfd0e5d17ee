//! `pauselab analyze`: GC and safepoint logs into pause histograms and a diagnosis.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context as _;
use pauselab_gclog::condition::{parse_conditions, Condition};
use pauselab_gclog::{analyze_inputs, input, render, Analyzer, Options};

use super::EXIT_CONDITION;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  pauselab analyze gc.log
  pauselab analyze /var/log/app/gc.log          # with gc.log.0 .. gc.log.N: the whole rotated set
  zcat old.log.gz | pauselab analyze -
  pauselab analyze --json gc.log | jq .pauses.p99_ms
  pauselab analyze --fail-on 'p99.9>200ms,finding:real_gt_cpu' gc.log   # exit 3 when it holds")]
pub struct Args {
    /// GC or safepoint logs: files, rotated sets (base name), .gz, .zip, or - for stdin
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
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let conditions: Vec<Condition> = match &args.fail_on {
        Some(text) => parse_conditions(text)?,
        None => Vec::new(),
    };
    let inputs = input::expand(&args.logs)?;
    let mut analyzer = Analyzer::new(Options {
        top: args.top,
        ..Options::default()
    });
    analyze_inputs(&inputs, &mut analyzer)?;
    let report = analyzer.finish();

    for w in &report.warnings {
        match w.line {
            Some(line) => eprintln!("pauselab: warning: {}:{line}: {}", w.file, w.message),
            None => eprintln!("pauselab: warning: {}: {}", w.file, w.message),
        }
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report).context("writing JSON")?;
        writeln!(out)?;
    } else {
        out.write_all(render::render_text(&report).as_bytes())?;
    }
    let mut code = ExitCode::SUCCESS;
    for c in &conditions {
        let (holds, why) = c.holds(&report);
        if holds {
            eprintln!("pauselab: --fail-on holds: {why}");
            code = ExitCode::from(EXIT_CONDITION);
        }
    }
    Ok(code)
}
