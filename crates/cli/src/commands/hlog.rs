//! `pauselab hlog`: summarise HdrHistogram interval logs the way Java's
//! `HistogramLogProcessor` does (same numbers, same `.hgrm` text with `--hgrm`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use pauselab_pause::interval_log::TagFilter;
use pauselab_pause::units::{parse_duration, DurationError, TimeUnit};
use pauselab_render::{write_hlog_hgrm, write_hlog_json, write_hlog_table, HlogShown};
use pauselab_report::hgrm::{DEFAULT_TICKS_PER_HALF_DISTANCE, DEFAULT_UNIT_RATIO};
use pauselab_report::LogSummary;

#[derive(clap::Args)]
pub struct Args {
    /// Interval logs (jHiccup `.hlog`/`.jHiccup`, the hiccup agent's, pauselab's own), plain or gzip-compressed; `-` reads standard input
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Only intervals with this tag (default: untagged intervals, as HistogramLogProcessor)
    #[arg(long, value_name = "TAG")]
    pub tag: Option<String>,
    /// Skip intervals starting earlier than this after the log's start: 3600, 90s, 1h; a
    /// bare number is seconds (as HistogramLogProcessor's -start)
    #[arg(long, value_name = "DURATION", value_parser = parse_offset)]
    pub start: Option<f64>,
    /// Stop at the first interval starting later than this after the log's start: 7200.5,
    /// 2h; a bare number is seconds (as HistogramLogProcessor's -end)
    #[arg(long, value_name = "DURATION", value_parser = parse_offset)]
    pub end: Option<f64>,
    /// Print the full percentile distribution (.hgrm), byte-identical to HistogramLogProcessor
    #[arg(long)]
    pub hgrm: bool,
    /// Percentile rows per half distance to 100% in the distribution
    #[arg(long, value_name = "N", default_value_t = DEFAULT_TICKS_PER_HALF_DISTANCE,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub ticks: u32,
    /// Divide recorded values by this for display (1e6: nanoseconds shown as milliseconds)
    #[arg(long, value_name = "RATIO", default_value_t = DEFAULT_UNIT_RATIO)]
    pub unit_ratio: f64,
    /// Machine-readable output (values in recorded units, see docs/report.md)
    #[arg(long)]
    pub json: bool,
}

/// A time after the log's start, in seconds as the interval log reader takes it.
fn parse_offset(text: &str) -> Result<f64, DurationError> {
    parse_duration(text, Some(TimeUnit::Seconds)).map(|d| d.as_secs_f64())
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.unit_ratio.is_finite() && args.unit_ratio > 0.0,
        "--unit-ratio must be a positive number, got {}",
        args.unit_ratio
    );
    if let (Some(start), Some(end)) = (args.start, args.end) {
        anyhow::ensure!(start <= end, "--start {start} is after --end {end}");
    }
    let tag = TagFilter::from_option(args.tag.as_deref());
    // A file that cannot be read does not hide the others: they are reported, it is named
    // on stderr, and the exit code says something failed.
    let mut summaries = Vec::new();
    let mut failures = Vec::new();
    for file in &args.files {
        match LogSummary::read(file, tag.clone(), args.start, args.end) {
            Ok(summary) => summaries.push(summary),
            Err(error) => failures.push(anyhow::Error::new(error)),
        }
    }
    if summaries.is_empty() {
        if let Some(last) = failures.pop() {
            for failure in &failures {
                super::print_error(failure);
            }
            return Err(last);
        }
    }

    let mut out = std::io::stdout().lock();
    let shown = HlogShown {
        tag: args.tag.as_deref(),
        hgrm: args.hgrm,
        ticks: args.ticks,
        unit_ratio: args.unit_ratio,
    };
    if args.json {
        write_hlog_json(&mut out, &summaries, &shown)?;
    } else if args.hgrm {
        write_hlog_hgrm(&mut out, &summaries, &shown)?;
    } else {
        write_hlog_table(&mut out, &summaries, &shown)?;
    }
    out.flush().context("writing to stdout")?;
    for failure in &failures {
        super::print_error(failure);
    }
    Ok(if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::EXIT_ERROR)
    })
}
