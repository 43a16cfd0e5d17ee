//! `pauselab report`: charts, tables and an HTML report from lab bundles, interval logs or
//! GC logs, and a matrix across hosts and JDKs.

use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use pauselab_pause::interval_log::TagFilter;
use pauselab_report::bundle::{
    check_bundles, is_bundle, matrix_bundles, Bundle, MAX_REPORT_VARIANTS,
};
use pauselab_report::hgrm::DEFAULT_UNIT_RATIO;
use pauselab_report::html;
use pauselab_report::matrix::MAX_TABLE_CELLS;
use pauselab_report::model::{self, Section, Sla};

use super::EXIT_CONDITION;
use crate::render;

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

enum Input {
    Bundle(PathBuf),
    IntervalLog(PathBuf),
    GcLog(PathBuf),
    /// A JFR recording: charted like a GC log.
    Recording(PathBuf),
}

/// A directory is a bundle, or a matrix run's directory (its bundles, as matrix.json lists
/// them); a file is an interval log when its first 4 KiB (decompressed) look like one, else
/// a GC log.
fn classify(path: &Path) -> anyhow::Result<Vec<Input>> {
    if path.is_dir() {
        if let Some(bundles) = matrix_bundles(path)? {
            return Ok(bundles.into_iter().map(Input::Bundle).collect());
        }
        anyhow::ensure!(
            is_bundle(path),
            "{}: a directory without manifest.json is not a lab bundle (see docs/bundle-format.md)",
            path.display()
        );
        return Ok(vec![Input::Bundle(path.to_path_buf())]);
    }
    if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) {
        // Recognising an input reads its beginning, charting it reads it again.
        anyhow::bail!(
            "{}: is a pipe; report reads each input twice, so save it to a file first",
            pauselab_pause::input::escape_control(&path.display().to_string())
        );
    }
    if pauselab_jfr::is_recording(&path.display().to_string()) {
        return Ok(vec![Input::Recording(path.to_path_buf())]);
    }
    let interval_log = pauselab_pause::interval_log::looks_like_interval_log(path)?;
    Ok(vec![if interval_log {
        Input::IntervalLog(path.to_path_buf())
    } else {
        Input::GcLog(path.to_path_buf())
    }])
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let sla = args
        .sla
        .as_deref()
        .map(Sla::parse)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--sla: {e}"))?;
    let inputs = args
        .inputs
        .iter()
        .map(|p| classify(p))
        .collect::<anyhow::Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect::<Vec<_>>();
    let tag = TagFilter::from_option(args.tag.as_deref());
    let bundles: Vec<PathBuf> = inputs
        .iter()
        .filter_map(|i| match i {
            Input::Bundle(p) => Some(p.clone()),
            _ => None,
        })
        .collect();
    check_bundles(&bundles)?;
    let mut variants = 0usize;

    let mut sections: Vec<Section> = Vec::new();
    // Files are labelled by name, with directories where two share one (a/gc.log, b/gc.log).
    let files: Vec<PathBuf> = inputs
        .iter()
        .filter_map(|i| match i {
            Input::IntervalLog(p) | Input::GcLog(p) | Input::Recording(p) => Some(p.clone()),
            Input::Bundle(_) => None,
        })
        .collect();
    let names = model::distinct_names(&files);
    let name_of = |path: &PathBuf| {
        let at = files.iter().position(|f| f == path).expect("a file input");
        names[at].clone()
    };
    let logs: Vec<(PathBuf, String)> = inputs
        .iter()
        .filter_map(|i| match i {
            Input::IntervalLog(p) => Some((p.clone(), name_of(p))),
            _ => None,
        })
        .collect();
    for input in &inputs {
        match input {
            Input::Bundle(dir) => {
                let bundle = Bundle::open(dir)?;
                variants += bundle.variants.len();
                anyhow::ensure!(
                    variants <= MAX_REPORT_VARIANTS,
                    "{}: more than {MAX_REPORT_VARIANTS} variants in one report: report fewer bundles at a time",
                    dir.display()
                );
                sections.push(Section::from_bundle_with_recordings(&bundle));
            }
            Input::GcLog(path) => sections.push(Section::from_gc_log(path, &name_of(path))?),
            Input::Recording(path) => sections.push(Section::from_recording(path, &name_of(path))?),
            Input::IntervalLog(_) => {}
        }
    }
    if !logs.is_empty() {
        sections.push(Section::from_logs(&logs, &tag)?);
    }
    // Anchors must be unique when the same experiment ran on several hosts.
    for i in 1..sections.len() {
        if sections[..i].iter().any(|s| s.id == sections[i].id) {
            sections[i].id = format!("{}-{}", sections[i].id, i + 1);
        }
    }
    let matrix = if args.matrix {
        let m = pauselab_report::matrix::matrix(&sections);
        anyhow::ensure!(
            !m.rows.is_empty(),
            "--matrix needs lab bundles whose manifest names a default variant"
        );
        let cells = m.table_cells();
        anyhow::ensure!(
            cells <= MAX_TABLE_CELLS,
            "--matrix: {cells} table cells ({} columns), more than {MAX_TABLE_CELLS}: report fewer bundles at a time",
            m.columns.len()
        );
        Some(m)
    } else {
        None
    };
    let ratio = DEFAULT_UNIT_RATIO;

    if let Some(path) = &args.html {
        let page = html::render(&sections, matrix.as_ref(), sla.as_ref(), ratio);
        pauselab_pause::output::write_file(path, page.as_bytes())
            .with_context(|| format!("{}: cannot write the report", path.display()))?;
    }
    let png_files = match &args.png {
        Some(dir) => render::report::write_pngs(dir, &sections, sla.as_ref(), ratio)?,
        None => Vec::new(),
    };

    let breached = render::report::sla_breached(&sections, sla.as_ref(), ratio);
    let written = render::report::Written {
        html: args.html.as_deref(),
        png_dir: args.png.as_deref(),
        png_files: &png_files,
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let doc = render::report::json(&sections, matrix.as_ref(), sla.as_ref(), ratio, &written);
        serde_json::to_writer_pretty(&mut out, &doc)?;
        writeln!(out)?;
    } else {
        let text = render::report::text(&sections, matrix.as_ref(), sla.as_ref(), ratio, &written);
        out.write_all(text.as_bytes())?;
    }
    out.flush().context("writing to stdout")?;
    Ok(if breached {
        ExitCode::from(EXIT_CONDITION)
    } else {
        ExitCode::SUCCESS
    })
}
