//! `pauselab report`: charts, tables and an HTML report from lab bundles, interval logs or
//! GC logs, and a matrix across hosts and JDKs.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use pauselab_pause::interval_log::TagFilter;
use pauselab_render::{report_json, report_text, write_pngs, ReportFiles};
use pauselab_report::hgrm::DEFAULT_UNIT_RATIO;
use pauselab_report::html;
use pauselab_report::inputs::{classify_all, sections};
use pauselab_report::matrix::checked_matrix;
use pauselab_report::model::Sla;

use super::EXIT_CONDITION;

#[derive(clap::Args)]
pub struct Args {
    /// Lab bundle directories, HdrHistogram interval logs (charted side by side), GC logs or
    /// JFR recordings
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Write one self-contained HTML file (inline SVG, no scripts, no network)
    #[arg(long, value_name = "OUT")]
    pub html: Option<PathBuf>,
    /// Write the charts as PNG files into this directory
    #[arg(long, value_name = "DIR")]
    pub png: Option<PathBuf>,
    /// Summarise several bundles as a table: rows kernel (host, disk), columns JDK
    #[arg(long)]
    pub matrix: bool,
    /// Service level to check and draw, e.g. "p99=10ms,p99.9=50ms,max=200ms" (exit 3 if broken)
    #[arg(long, value_name = "SPEC")]
    pub sla: Option<String>,
    /// Tag of the intervals to read from interval logs (default: untagged)
    #[arg(long, value_name = "TAG")]
    pub tag: Option<String>,
    /// Machine-readable output (see docs/report.md)
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    super::keep_freed_memory();
    let sla = args
        .sla
        .as_deref()
        .map(Sla::parse)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--sla: {e}"))?;
    let inputs = classify_all(&args.inputs)?;
    let tag = TagFilter::from_option(args.tag.as_deref());
    let sections = sections(&inputs, &tag)?;
    let matrix = args.matrix.then(|| checked_matrix(&sections)).transpose()?;
    let ratio = DEFAULT_UNIT_RATIO;

    if let Some(path) = &args.html {
        let page = html::render(&sections, matrix.as_ref(), sla.as_ref(), ratio);
        pauselab_pause::output::write_file(path, page.as_bytes())
            .with_context(|| format!("{}: cannot write the report", path.display()))?;
    }
    let png_files = match &args.png {
        Some(dir) => write_pngs(dir, &sections, sla.as_ref(), ratio)?,
        None => Vec::new(),
    };

    let breached = sla
        .as_ref()
        .is_some_and(|sla| sla.breached_by(&sections, ratio));
    let written = ReportFiles {
        html: args.html.as_deref(),
        png_dir: args.png.as_deref(),
        png_files: &png_files,
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let doc = report_json(&sections, matrix.as_ref(), sla.as_ref(), ratio, &written);
        serde_json::to_writer_pretty(&mut out, &doc)?;
        writeln!(out)?;
    } else {
        let text = report_text(&sections, matrix.as_ref(), sla.as_ref(), ratio, &written);
        out.write_all(text.as_bytes())?;
    }
    out.flush().context("writing to stdout")?;
    Ok(if breached {
        ExitCode::from(EXIT_CONDITION)
    } else {
        ExitCode::SUCCESS
    })
}
