//! `pauselab analyze`: GC and safepoint logs into pause histograms and a diagnosis.
//!
//! The flags and their wiring only: one analysis per JVM is `pauselab_report::each_jvm`'s
//! (the one library above the analysis and both readers), the files beside the report
//! `pauselab_analysis::PauseFiles`'s, the terminal text pauselab-render's.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use pauselab_analysis::{
    parse_conditions, Condition, EventsFile, HlogFile, HlogMode, Options, PauseFiles,
};
use pauselab_gclog::default_threads;
use pauselab_pause::units::{DurationSyntax, TimeUnit};
use pauselab_render::{
    print_analysis_warnings, print_condition_holds, write_analysis, AnalyzedJvms,
};
use pauselab_report::each_jvm::{analyze_each_jvm, Sources};

use super::EXIT_CONDITION;

/// `--hlog-interval`: at least a millisecond, the resolution of the log's time stamps; a
/// bare number is seconds, as HdrHistogram's own `-i` flags.
const HLOG_INTERVAL: DurationSyntax =
    DurationSyntax::new(TimeUnit::Seconds).at_least(Duration::from_millis(1));

#[derive(clap::Args)]
#[command(after_help = "Examples:
  pauselab analyze gc.log
  pauselab analyze recording.jfr                # JDK Flight Recorder (docs/jfr.md)
  pauselab analyze /var/log/app/gc.log          # with gc.log.0 .. gc.log.N: the whole rotated set
  zcat old.log.gz | pauselab analyze -
  pauselab analyze --json gc.log | jq .pauses.p99_ms
  pauselab analyze --fail-on 'p99.9>200ms,finding:real_gt_cpu' gc.log   # exit 3 when it holds
  pauselab analyze --fail-on 'alloc_stall.max>100ms,gc_share.1m>20' gc.log
  pauselab analyze --events pauses.csv gc.log   # one row per pause and safepoint (.csv, .jsonl)
  pauselab analyze a/gc.log b/gc.log            # logs of different JVMs: one report each")]
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
    /// METRIC>VALUE (p50 p90 p99 p99.9 max mean total ttsp safepoint.max alloc_stall.max
    /// full_gc.total ... with a unit; count, stopped_share, gc_share, gc_share.1m,
    /// full_gc.count, alloc_stall.count, unparsed as numbers) or finding:RULE / finding:any;
    /// with several JVMs, it holds when it holds for any of them
    #[arg(long, value_name = "EXPR", value_parser = |text: &str| parse_conditions(text).map(FailOn))]
    pub fail_on: Option<FailOn>,
    /// Also write the GC pauses as an HdrHistogram interval log (V2, readable by Java's
    /// HistogramLogProcessor), tagged `gc`
    #[arg(long, value_name = "FILE")]
    pub hlog: Option<PathBuf>,
    /// pauses: each interval holds the pauses that started in it; hiccup: what jHiccup's
    /// `-f -fz` file mode makes of them (1 ms ticks, zeros, coordinated-omission fill)
    #[arg(long, value_enum, default_value_t = HlogModeArg::Pauses, requires = "hlog")]
    pub hlog_mode: HlogModeArg,
    /// Interval length of the --hlog file: 5s, 500ms, 1m; a bare number is seconds (at
    /// least 1ms)
    #[arg(long, value_name = "DURATION", default_value = "5", requires = "hlog",
          value_parser = |text: &str| HLOG_INTERVAL.parse(text))]
    pub hlog_interval: Duration,
    /// Also write one row per GC pause and per safepoint (start, duration, kind, cause,
    /// collector, time to safepoint, heap, source) to FILE.csv or FILE.jsonl, the format
    /// following the extension
    #[arg(long, value_name = "FILE", value_parser = |text: &str| text.parse::<EventsFile>())]
    pub events: Option<EventsFile>,
    /// Threads reading a large log or recording (chunks of one file in parallel; the
    /// result is the same with any number); default: the machine's cores
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

/// The `--fail-on` conditions, parsed with the arguments.
#[derive(Clone, Debug)]
pub struct FailOn(Vec<Condition>);

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum HlogModeArg {
    Pauses,
    Hiccup,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    super::keep_freed_memory();
    // A condition that does not parse is bad usage (exit 2), refused by clap before this.
    let conditions: Vec<Condition> = args.fail_on.clone().map(|f| f.0).unwrap_or_default();
    let sources = Sources::find(&args.logs)?;
    let hlog = args.hlog.clone().map(|path| HlogFile {
        path,
        mode: match args.hlog_mode {
            HlogModeArg::Pauses => HlogMode::Pauses,
            HlogModeArg::Hiccup => HlogMode::Hiccup,
        },
        interval: args.hlog_interval,
    });
    let mut files = PauseFiles::create(hlog, args.events.as_ref(), sources.are_recordings())?;
    let options = Options {
        top: args.top,
        ..Options::default()
    };
    // The interval log and the events file hold one JVM's pauses.
    let one_jvm = !files.is_empty();
    let threads = args.threads.map_or_else(default_threads, usize::from);
    let analyses = analyze_each_jvm(sources, one_jvm, &options, &mut files.sinks(), threads)?;
    let reports = &analyses.reports;
    files.finish(&reports[0])?;

    print_analysis_warnings(reports);
    let jvms = AnalyzedJvms {
        reports,
        separated_because: &analyses.separated_because,
        jfr: analyses.recordings.as_deref(),
    };
    // Buffered: standard output is flushed at each newline, and the JSON report's hundreds
    // of lines were as many writes.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    write_analysis(&mut out, &jvms, args.json)?;
    out.flush()?;
    drop(out);
    let mut code = ExitCode::SUCCESS;
    for (i, report) in reports.iter().enumerate() {
        for (holds, why) in conditions.iter().map(|c| c.holds(report)) {
            if holds {
                print_condition_holds(i, reports.len(), &why);
                code = ExitCode::from(EXIT_CONDITION);
            }
        }
    }
    // A file that could not be read outranks a condition: the report is incomplete.
    if !analyses.failed.is_empty() {
        for error in analyses.failed {
            super::print_error(&error.into());
        }
        code = ExitCode::from(super::EXIT_ERROR);
    }
    Ok(code)
}
