//! `pauselab analyze`: GC and safepoint logs into pause histograms and a diagnosis.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use pauselab_analysis::{
    parse_conditions, render_text, Analyzer, Condition, HeapSample, HlogMode, HlogSink, Options,
    PauseSink,
};
use pauselab_gclog::{analyze_inputs_with, default_threads, group_by_jvm, input, JvmInputs};
use pauselab_pause::input::escape_control;
use pauselab_pause::record::GcPause;
use pauselab_pause::units::{DurationSyntax, TimeUnit};
use pauselab_pause::PauseEvent;

use super::analyze_events::{self, parse_events_file, EventRows, EventsFile};
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
    #[arg(long, value_name = "FILE", value_parser = parse_events_file)]
    pub events: Option<EventsFile>,
    /// Threads reading a large log or recording (chunks of one file in parallel; the
    /// result is the same with any number); default: the machine's cores
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

/// The analysis's one sink: each pause to the interval log and to the events file.
struct Sinks<'a> {
    hlog: Option<&'a mut dyn PauseSink>,
    events: Option<&'a mut EventRows>,
}

impl Sinks<'_> {
    fn each(&mut self, mut give: impl FnMut(&mut dyn PauseSink)) {
        if let Some(hlog) = self.hlog.as_deref_mut() {
            give(hlog);
        }
        if let Some(events) = self.events.as_deref_mut() {
            give(events);
        }
    }
}

impl PauseSink for Sinks<'_> {
    fn pause(&mut self, event: &PauseEvent) {
        self.each(|sink| sink.pause(event));
    }

    fn gc_pause(&mut self, event: &PauseEvent, pause: &GcPause) {
        self.each(|sink| sink.gc_pause(event, pause));
    }

    fn heap(&mut self, sample: &HeapSample) {
        self.each(|sink| sink.heap(sample));
    }

    fn safepoint(&mut self, event: &PauseEvent, statistics: bool) {
        self.each(|sink| sink.safepoint(event, statistics));
    }
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
    // A condition that does not parse is bad usage (exit 2), refused by clap before this.
    let conditions: Vec<Condition> = args.fail_on.clone().map(|f| f.0).unwrap_or_default();
    // JFR recordings take their own reader; GC logs are expanded (rotated sets, stdin).
    let recordings = pauselab_jfr::recordings(&args.logs)?;
    let inputs = match recordings {
        Some(_) => Vec::new(),
        None => input::expand(&args.logs)?,
    };
    let mut sink = match &args.hlog {
        Some(path) => {
            let file = pauselab_pause::output::create_file(path)
                .with_context(|| format!("{}: cannot create the --hlog file", path.display()))?;
            let mode = match args.hlog_mode {
                HlogModeArg::Pauses => HlogMode::Pauses,
                HlogModeArg::Hiccup => HlogMode::Hiccup,
            };
            Some(HlogSink::new(
                BufWriter::new(file),
                mode,
                args.hlog_interval.as_secs_f64(),
                "gc",
            ))
        }
        None => None,
    };
    let events_file = args
        .events
        .as_ref()
        .map(analyze_events::create)
        .transpose()?;
    let mut events = args
        .events
        .as_ref()
        .map(|_| EventRows::new(recordings.is_some()));
    let options = Options {
        top: args.top,
        ..Options::default()
    };
    // One analysis per JVM: pauses of different JVMs do not add up. The interval log and
    // the events file hold one JVM's pauses, so they refuse several.
    let groups = if recordings.is_some() || sink.is_some() || events.is_some() {
        pauselab_gclog::ensure_one_jvm(&inputs)?;
        vec![JvmInputs {
            inputs,
            separated_because: None,
        }]
    } else {
        group_by_jvm(inputs)?
    };
    let groups_len = groups.len();
    // Inputs that could not be read are named after the report of the others.
    let mut reports = Vec::with_capacity(groups.len());
    let mut failed = Vec::new();
    let threads = args.threads.map_or_else(default_threads, usize::from);
    let mut kept_groups = Vec::with_capacity(groups.len());
    let mut jfr = None;
    for group in groups {
        let mut sinks = Sinks {
            hlog: sink.as_mut().map(|s| s as &mut dyn PauseSink),
            events: events.as_mut(),
        };
        let mut analyzer = match (&sinks.hlog, &sinks.events) {
            (None, None) => Analyzer::new(options.clone()),
            _ => Analyzer::new(options.clone()).with_sink(&mut sinks),
        };
        let read = match &recordings {
            Some(paths) => {
                jfr = Some(pauselab_jfr::read_recordings_with(
                    paths,
                    &mut analyzer,
                    threads,
                )?);
                Ok(())
            }
            None => analyze_inputs_with(&group.inputs, &mut analyzer, threads),
        };
        match read {
            Ok(()) => {}
            Err(pauselab_gclog::Error::InputsFailed { failed: f, read }) if read > 0 => {
                failed.extend(f)
            }
            // A JVM none of whose files could be read: the other JVMs are still reported.
            Err(error) if groups_len > 1 => {
                failed.push(error);
                continue;
            }
            Err(error) => return Err(error.into()),
        }
        reports.push(analyzer.finish());
        kept_groups.push(group);
    }
    if reports.is_empty() {
        let first = failed.into_iter().next();
        return Err(first.map_or_else(|| anyhow::anyhow!("no input could be read"), Into::into));
    }
    let groups = kept_groups;
    if jfr.is_some() {
        // Not a log: no log format to name.
        reports
            .iter_mut()
            .flat_map(|r| r.inputs.iter_mut())
            .for_each(|f| f.format = None);
    }
    if let (Some(sink), Some(path)) = (sink, &args.hlog) {
        sink.finish()
            .with_context(|| format!("{}: writing the interval log", path.display()))?;
    }
    if let (Some(rows), Some(file), Some(to)) = (events, events_file, &args.events) {
        rows.write(file, to.format, &reports[0])
            .with_context(|| format!("{}: writing the events", to.path.display()))?;
    }

    // Warnings quote file names and their text: one line each, whatever they hold.
    for w in reports.iter().flat_map(|r| &r.warnings) {
        let line = match w.line {
            Some(line) => format!("{}:{line}: {}", w.file, w.message),
            None => format!("{}: {}", w.file, w.message),
        };
        pauselab_pause::eprintln_lossy!("pauselab: warning: {}", escape_control(&line));
    }
    let separated: Vec<Option<&str>> = groups
        .iter()
        .map(|g| g.separated_because.as_deref())
        .collect();
    if reports.len() > 1 {
        pauselab_pause::eprintln_lossy!(
            "pauselab: the inputs come from {} different JVMs; each is analysed on its own",
            reports.len()
        );
    }
    let mut out = std::io::stdout().lock();
    match (&reports[..], args.json) {
        ([one], true) => {
            match &jfr {
                Some(jfr) => {
                    let both = super::jfr_render::JfrReport { report: one, jfr };
                    serde_json::to_writer_pretty(&mut out, &both)
                }
                None => serde_json::to_writer_pretty(&mut out, one),
            }
            .context("writing JSON")?;
            writeln!(out)?;
        }
        ([one], false) => {
            out.write_all(render_text(one).as_bytes())?;
            if let Some(jfr) = &jfr {
                out.write_all(super::jfr_render::render(jfr).as_bytes())?;
            }
        }
        (several, true) => {
            let json = serde_json::json!({
                "jvm_count": several.len(),
                "separated_because": separated,
                "jvms": several,
            });
            serde_json::to_writer_pretty(&mut out, &json).context("writing JSON")?;
            writeln!(out)?;
        }
        (several, false) => {
            for (i, report) in several.iter().enumerate() {
                let files: Vec<&str> = report.inputs.iter().map(|f| f.file.as_str()).collect();
                writeln!(
                    out,
                    "=== JVM {} of {}: {}{}\n",
                    i + 1,
                    several.len(),
                    files.join(", "),
                    separated[i].map_or(String::new(), |why| format!(" (another JVM: {why})"))
                )?;
                out.write_all(render_text(report).as_bytes())?;
                writeln!(out)?;
            }
        }
    }
    let mut code = ExitCode::SUCCESS;
    for (i, report) in reports.iter().enumerate() {
        for c in &conditions {
            let (holds, why) = c.holds(report);
            if holds {
                match reports.len() {
                    1 => pauselab_pause::eprintln_lossy!("pauselab: --fail-on holds: {why}"),
                    _ => pauselab_pause::eprintln_lossy!(
                        "pauselab: --fail-on holds for JVM {}: {why}",
                        i + 1
                    ),
                }
                code = ExitCode::from(EXIT_CONDITION);
            }
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
