//! `pauselab hlog`'s output: a table of each log's percentiles, the `.hgrm` distributions
//! (as HistogramLogProcessor prints them) or one JSON object.

use std::io::Write;

use pauselab_pause::input::escape_control;
use pauselab_report::hgrm::{self, DEFAULT_UNIT_RATIO};
use pauselab_report::{table, LogSummary};

/// How the summaries are shown, as the flags ask.
pub struct HlogShown<'a> {
    /// The tag the intervals were read with (`--tag`).
    pub tag: Option<&'a str>,
    /// With the full distribution (`--hgrm`).
    pub hgrm: bool,
    /// Its percentile rows per half distance to 100%.
    pub ticks: u32,
    /// Recorded values divided by this for display.
    pub unit_ratio: f64,
}

/// `--json`: every log's numbers in its recorded unit.
pub fn write_hlog_json(
    out: &mut impl Write,
    summaries: &[LogSummary],
    shown: &HlogShown,
) -> anyhow::Result<()> {
    let files: Vec<_> = summaries
        .iter()
        .map(|s| {
            let mut doc = serde_json::json!({
                "file": escape_control(&s.source),
                "tag": shown.tag,
                "start_time_s": s.start_s,
                "intervals": s.intervals.len(),
                "span_s": s.span_s(),
                "unit_ratio": shown.unit_ratio,
                "stats": s.stats(),
            });
            if shown.hgrm {
                doc["distribution"] =
                    serde_json::json!(hgrm::percentile_points(&s.histogram, shown.ticks));
            }
            doc
        })
        .collect();
    serde_json::to_writer_pretty(&mut *out, &serde_json::json!({ "files": files }))?;
    writeln!(out)?;
    Ok(())
}

/// `--hgrm`: each log's distribution, under its name when there are several.
pub fn write_hlog_hgrm(
    out: &mut impl Write,
    summaries: &[LogSummary],
    shown: &HlogShown,
) -> anyhow::Result<()> {
    for (i, summary) in summaries.iter().enumerate() {
        if summaries.len() > 1 {
            writeln!(
                out,
                "{}# {}",
                if i > 0 { "\n" } else { "" },
                escape_control(&summary.source)
            )?;
        }
        summary.write_hgrm(&mut *out, shown.ticks, shown.unit_ratio)?;
    }
    Ok(())
}

/// The default: one row of percentiles per log.
pub fn write_hlog_table(
    out: &mut impl Write,
    summaries: &[LogSummary],
    shown: &HlogShown,
) -> anyhow::Result<()> {
    let header = [
        "file",
        "intervals",
        "span s",
        "count",
        "mean",
        "p50",
        "p90",
        "p99",
        "p99.9",
        "p99.99",
        "max",
    ];
    let rows: Vec<Vec<String>> = summaries
        .iter()
        .map(|s| {
            let st = s.stats();
            let r = shown.unit_ratio;
            let mut row = vec![
                escape_control(&s.source).into_owned(),
                s.intervals.len().to_string(),
                format!("{:.1}", s.span_s()),
                st.count.to_string(),
                table::scaled(st.mean, r),
            ];
            row.extend(
                [st.p50, st.p90, st.p99, st.p99_9, st.p99_99, st.max]
                    .map(|v| table::scaled(v as f64, r)),
            );
            row
        })
        .collect();
    out.write_all(table::render(&header, &rows).as_bytes())?;
    if shown.unit_ratio == DEFAULT_UNIT_RATIO {
        writeln!(out, "(values in ms)")?;
    }
    Ok(())
}
