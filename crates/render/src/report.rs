//! `pauselab report`'s terminal text and `--json`, and the names of the charts `--png`
//! writes.

use std::path::{Path, PathBuf};

use anyhow::Context;
use pauselab_report::html::{self, Charts};
use pauselab_report::matrix::Matrix;
use pauselab_report::model::{self, Section, Sla};
use pauselab_report::png;

/// What a report wrote besides its text.
pub struct ReportFiles<'a> {
    /// The HTML page (`--html`).
    pub html: Option<&'a Path>,
    /// The directory of the PNG charts (`--png`).
    pub png_dir: Option<&'a Path>,
    /// The PNG charts written there.
    pub png_files: &'a [PathBuf],
}

/// Each chart of a section with the name of its PNG file (without `.png`).
pub fn chart_files<'c>(section: &Section, charts: &'c Charts) -> Vec<(String, &'c String)> {
    let mut named: Vec<(String, &String)> = Vec::new();
    if let Some(p) = &charts.percentiles {
        named.push((format!("{}-percentiles", section.id), p));
    }
    for (anchor, _, svg, safepoints) in &charts.timelines {
        named.push((format!("{anchor}-timeline"), svg));
        if let Some(sp) = safepoints {
            named.push((format!("{anchor}-safepoints"), sp));
        }
    }
    if let Some(svg) = &charts.noise {
        named.push((format!("{}-noise", section.id), svg));
    }
    for (i, svg) in charts.host.iter().enumerate() {
        named.push((format!("{}-host-{}", section.id, i + 1), svg));
    }
    for (what, svg) in &charts.gc {
        named.push((format!("{}-{what}", section.id), svg));
    }
    named
}

/// Every chart of every section as a PNG file in `dir` (created when missing): the files
/// written.
pub fn write_pngs(
    dir: &Path,
    sections: &[Section],
    sla: Option<&Sla>,
    unit_ratio: f64,
) -> anyhow::Result<Vec<PathBuf>> {
    pauselab_pause::output::create_dir(dir)
        .with_context(|| format!("--png {}: cannot write charts there", dir.display()))?;
    let mut files = Vec::new();
    for section in sections {
        let charts = html::charts(section, sla, unit_ratio);
        for (name, svg) in chart_files(section, &charts) {
            let path = dir.join(format!("{name}.png"));
            png::write_png(svg, &path)?;
            files.push(path);
        }
    }
    Ok(files)
}

/// The `--json` document (docs/report.md).
pub fn report_json(
    sections: &[Section],
    matrix: Option<&Matrix>,
    sla: Option<&Sla>,
    unit_ratio: f64,
    written: &ReportFiles,
) -> serde_json::Value {
    let breached = sla.is_some_and(|sla| sla.breached_by(sections, unit_ratio));
    serde_json::json!({
        "sections": sections.iter().map(|s| serde_json::json!({
            "id": s.id, "title": s.title, "source": s.source,
            "facts": s.facts.iter().map(|(k, v)| serde_json::json!({"name": k, "value": v})).collect::<Vec<_>>(),
            "result": s.result, "verdict": s.verdict, "default_variant": s.default_variant, "baseline_variant": s.baseline_variant,
            "variants": s.variants.iter().map(|v| model::variant_json(v, sla, unit_ratio)).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "matrix": matrix,
        "sla": sla,
        "sla_met": sla.map(|_| !breached),
        "html": written.html,
        "png": written.png_files,
    })
}

/// The terminal text: the report, then where the HTML and the PNG charts went.
pub fn report_text(
    sections: &[Section],
    matrix: Option<&Matrix>,
    sla: Option<&Sla>,
    unit_ratio: f64,
    written: &ReportFiles,
) -> String {
    let mut out = pauselab_report::text::render(sections, matrix, sla, unit_ratio);
    if let Some(path) = written.html {
        out.push_str(&format!("HTML report: {}\n", path.display()));
    }
    if let Some(dir) = written.png_dir {
        out.push_str(&format!(
            "PNG charts: {} files in {}\n",
            written.png_files.len(),
            dir.display()
        ));
    }
    out
}
