//! The self-contained HTML report: inline SVG and CSS only (no scripts, fonts or network),
//! one column on phones, wider on large screens, and printable.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::diagnosis::badge;
use crate::hgrm;
use crate::matrix::Matrix;
use crate::model::{variant_anchor, Section, Sla, VariantReport};
use crate::summary::Stats;
use crate::svg::{self, escape, fmt_ms, Level, Marker, Series};

/// Charts of one section, as SVG strings, in display order: (anchor, caption, svg).
pub struct Charts {
    pub percentiles: Option<String>,
    /// (anchor, variant label, hiccup timeline, safepoint timeline when recorded).
    pub timelines: Vec<(String, String, String, Option<String>)>,
    pub host: Vec<String>,
    /// What else kept the host busy (PSI, other processes' CPU) against the thresholds
    /// that make a verdict noisy, on the timelines' time axis.
    pub noise: Option<String>,
    /// Heap after GC and pauses by type, for a GC log: (file-name suffix, svg).
    pub gc: Vec<(&'static str, String)>,
}

const STYLE: &str = r#"
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #1d1d1f; background: #fafafa; line-height: 1.4; }
main { max-width: 1780px; margin: 0 auto; padding: 12px; }
header h1 { font-size: 1.5rem; margin: 8px 0 4px; }
section.bundle { background: #fff; border: 1px solid #e2e2e2; border-radius: 8px; padding: 12px 16px; margin: 16px 0; }
h2 { font-size: 1.25rem; margin: 4px 0 8px; }
h3 { font-size: 1.05rem; margin: 16px 0 6px; }
.muted { color: #666; font-size: .9rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 8px 0; font-size: .9rem; }
dl.facts dt { color: #666; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: .9rem; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 6px; border-bottom: 1px solid #eee; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
/* Headers wrap ("safepoint p99.9"), so a table is as wide as its numbers, not its words. */
thead th { white-space: normal; vertical-align: bottom; }
table.variants td:first-child { white-space: normal; min-width: 9em; }
td.text, th.text { text-align: left; white-space: normal; min-width: 10em; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: .85rem; font-weight: 600; }
.v-stalls, .v-vulnerable, .v-breach { background: #fde2e1; color: #a4000f; }
.v-no_stalls, .v-not_vulnerable, .v-met { background: #dff3e4; color: #0a6b2c; }
.v-baseline { background: #e6eefc; color: #1f4ea8; }
.v-inconsistent { background: #fff1c2; color: #7a5200; }
.v-inconclusive, .v-skipped, .v-failed, .v-unknown { background: #f1f1f1; color: #555; }
figure { margin: 8px 0; }
figure svg.chart { width: 100%; max-width: 1000px; height: auto; display: block; border: 1px solid #eee; border-radius: 4px; }
.grid { display: grid; grid-template-columns: 1fr; gap: 12px; }
/* Two chart columns only where each is drawn at least at its own size (820 px): smaller,
   the charts' 12 px text shrinks below reading size. */
@media (min-width: 1760px) { .grid.two { grid-template-columns: 1fr 1fr; } }
table.matrix td { text-align: left; vertical-align: top; white-space: normal; }
table.matrix a { color: inherit; text-decoration: none; display: block; }
table.matrix ul { margin: 4px 0 0; padding-left: 1.1em; font-size: .85rem; }
footer { color: #888; font-size: .8rem; margin: 24px 0; }
.verdict, .diagnosis { margin: 8px 0 12px; }
.verdict ul, .diagnosis ul, .diagnosis ol { margin: 4px 0; padding-left: 1.4em; }
.noisy { background: #fff1c2; border-left: 4px solid #e0a800; padding: 6px 10px; margin: 6px 0; border-radius: 4px; }
article.finding { border: 1px solid #e2e2e2; border-left: 4px solid #999; border-radius: 6px; padding: 6px 12px; margin: 8px 0; }
article.finding.sev-critical { border-left-color: #c62828; }
article.finding.sev-warning { border-left-color: #e0a800; }
article.finding h4 { margin: 4px 0; font-size: 1rem; }
article.finding h5 { margin: 8px 0 2px; font-size: .9rem; color: #444; }
article.finding p { margin: 2px 0; }
.sev-critical.badge { background: #fde2e1; color: #a4000f; }
.sev-warning.badge { background: #fff1c2; color: #7a5200; }
.sev-info.badge { background: #e6eefc; color: #1f4ea8; }
table.evidence .text, table.worst .text { min-width: 8em; }
table.worst td:last-child, table.evidence td:last-child { white-space: normal; }
span.where { overflow-wrap: anywhere; }
details.variant-diagnosis { margin: 6px 0; }
details.variant-diagnosis summary { cursor: pointer; }
@media print {
  body { background: #fff; }
  main { max-width: none; padding: 0; }
  section.bundle { border: none; padding: 0; break-before: page; }
  section.bundle:first-of-type { break-before: auto; }
  figure, table { break-inside: avoid; }
  .grid.two { grid-template-columns: 1fr; }
  a { color: inherit; text-decoration: none; }
}
"#;

fn ms(v: u64, unit_ratio: f64) -> String {
    format!("{:.3}", v as f64 / unit_ratio)
}

/// Colour by variant name, dash pattern by JDK: the same variant on two JDKs reads as a pair.
/// Names and JDKs are numbered in order of first appearance, once per section, so a chart
/// of n variants looks each up instead of scanning them all (which was cubic in n).
struct Styles<'a> {
    names: HashMap<&'a str, usize>,
    jdks: HashMap<Option<&'a str>, usize>,
}

impl<'a> Styles<'a> {
    fn of(section: &'a Section) -> Self {
        let mut styles = Styles {
            names: HashMap::new(),
            jdks: HashMap::new(),
        };
        for x in &section.variants {
            let next = styles.names.len();
            styles.names.entry(&x.variant).or_insert(next);
            let next = styles.jdks.len();
            styles.jdks.entry(x.jdk.as_deref()).or_insert(next);
        }
        styles
    }

    /// (colour, dash pattern) of a variant of the section.
    fn of_variant(&self, v: &VariantReport) -> (&'static str, &'static str) {
        let name = self.names.get(v.variant.as_str()).copied().unwrap_or(0);
        let jdk = self.jdks.get(&v.jdk.as_deref()).copied().unwrap_or(0);
        (svg::color(name), svg::DASHES[jdk % svg::DASHES.len()])
    }
}

/// The log a variant is charted by: its hiccups, else its safepoints.
struct Charted<'a> {
    log: &'a crate::summary::LogSummary,
    /// After the variant's name in a legend shared with other variants.
    suffix: &'static str,
    /// What the log measures, for a title.
    what: &'static str,
}

impl<'a> Charted<'a> {
    /// None when the variant recorded nothing (a failed run's empty log).
    fn of(v: &'a VariantReport) -> Option<Charted<'a>> {
        let recorded = |log: &&crate::summary::LogSummary| !log.histogram.is_empty();
        match (
            v.hiccups.as_ref().filter(recorded),
            v.safepoints.as_ref().filter(recorded),
        ) {
            (Some(log), _) => Some(Charted {
                log,
                suffix: "",
                what: "Hiccups",
            }),
            (None, Some(log)) => Some(Charted {
                log,
                suffix: " (safepoints)",
                what: "Safepoints",
            }),
            (None, None) => None,
        }
    }
}

/// The charts of a section (shared scales across its variants).
pub fn charts(section: &Section, sla: Option<&Sla>, unit_ratio: f64) -> Charts {
    let styles = Styles::of(section);
    // A variant without a hiccup log (an experiment without the meter) is charted by its
    // safepoints.
    let charted: Vec<(&VariantReport, Charted)> = section
        .variants
        .iter()
        .filter_map(|v| Charted::of(v).map(|c| (v, c)))
        .collect();
    let percentiles = (!charted.is_empty()).then(|| {
        let series: Vec<Series> = charted
            .iter()
            .map(|(v, c)| Series {
                name: format!("{}{}", v.label, c.suffix),
                color: styles.of_variant(v).0,
                dash: styles.of_variant(v).1,
                points: hgrm::percentile_points(
                    &c.log.histogram,
                    hgrm::DEFAULT_TICKS_PER_HALF_DISTANCE,
                )
                .iter()
                .map(|p| (p.inverse_tail(), p.value as f64 / unit_ratio))
                .collect(),
            })
            .collect();
        svg::percentile_chart(
            &format!("Latency by percentile: {}", section.title),
            &series,
            sla.map(|s| s.limits.as_slice()).unwrap_or(&[]),
        )
    });
    // One time axis for the timelines and the host's charts, so a moment lines up in all.
    let span = section.span_s().max(
        section
            .host
            .as_ref()
            .and_then(|h| h.t_s.last().copied())
            .unwrap_or(0.0),
    );
    let y_max = charted
        .iter()
        .flat_map(|(v, _)| v.hiccups.iter().chain(v.safepoints.iter()))
        .map(|s| s.histogram.max() as f64 / unit_ratio)
        .fold(0.0, f64::max);
    let timelines = charted
        .iter()
        .map(|(v, c)| {
            let h = c.log;
            let st = Stats::of(&h.histogram);
            let levels = [
                ("p99", st.p99, "2 2"),
                ("p99.9", st.p99_9, "6 3"),
                ("p99.99", st.p99_99, "10 4"),
                ("max", st.max, "1 3"),
            ]
            .iter()
            .map(|(name, value, dash)| Level {
                label: format!("{name} {}", fmt_ms(*value as f64 / unit_ratio)),
                value: *value as f64 / unit_ratio,
                dash,
                color: "#555",
            })
            .collect::<Vec<_>>();
            let series = Series {
                name: format!("{}: max per interval", v.label),
                color: styles.of_variant(v).0,
                dash: styles.of_variant(v).1,
                points: h
                    .intervals
                    .iter()
                    .map(|p| (p.offset_s, p.max as f64 / unit_ratio))
                    .collect(),
            };
            let markers: Vec<Marker> = v
                .pauses
                .iter()
                .map(|(t, e)| Marker {
                    t_s: *t,
                    duration_ms: e.duration_ms,
                    label: format!("{:.1} s: {} {}", t, e.name, fmt_ms(e.duration_ms)),
                })
                .collect();
            let longest = v.pauses.iter().map(|p| p.1.duration_ms).fold(0.0, f64::max);
            let markers_label =
                format!("GC pauses: {} (longest {})", markers.len(), fmt_ms(longest));
            let title = if section.gc.is_some() {
                format!(
                    "Longest GC pause per {} s: {}",
                    crate::gc::TIMELINE_INTERVAL_S,
                    v.label
                )
            } else {
                format!("{} over time: {}", c.what, v.label)
            };
            let chart = svg::timeline_chart(
                &title,
                &series,
                &levels,
                &markers,
                &markers_label,
                span,
                y_max,
            );
            // Beside the hiccups; a variant charted by its safepoints has them above.
            let beside = v.hiccups.as_ref().and(v.safepoints.as_ref());
            let safepoints = beside.map(|sp| {
                let st = Stats::of(&sp.histogram);
                let caption = format!(
                    "Safepoints: {} intervals, p99.9 {}, max {}",
                    sp.intervals.len(),
                    fmt_ms(st.p99_9 as f64 / unit_ratio),
                    fmt_ms(st.max as f64 / unit_ratio)
                );
                let sp_series = Series {
                    name: format!("{}: safepoint max per interval", v.label),
                    color: "#6d6d6d",
                    dash: "",
                    points: sp
                        .intervals
                        .iter()
                        .map(|p| (p.offset_s, p.max as f64 / unit_ratio))
                        .collect(),
                };
                svg::timeline_chart(
                    &format!("Safepoints over time: {}", v.label),
                    &sp_series,
                    &[],
                    &[],
                    &caption,
                    span,
                    y_max,
                )
            });
            (
                variant_anchor(section, v),
                v.label.clone(),
                chart,
                safepoints,
            )
        })
        .collect();
    let mut host = Vec::new();
    if let Some(hs) = &section.host {
        let pick = |names: &[(&str, &str, f64)], colors: usize| -> Vec<Series> {
            names
                .iter()
                .enumerate()
                .filter_map(|(i, (col, label, scale))| {
                    let values = hs.columns.get(*col)?;
                    let points: Vec<(f64, f64)> = hs
                        .t_s
                        .iter()
                        .zip(values)
                        .filter_map(|(t, v)| v.map(|v| (*t, v * scale)))
                        .collect();
                    (!points.is_empty()).then(|| Series {
                        name: label.to_string(),
                        color: svg::color(colors + i),
                        dash: "",
                        points,
                    })
                })
                .collect()
        };
        let pressure = pick(
            &[
                ("cpu_iowait_pct", "CPU iowait %", 1.0),
                ("psi_io_some_avg10", "PSI io some avg10 %", 1.0),
            ],
            4,
        );
        if !pressure.is_empty() {
            host.push(svg::line_chart("Host: I/O pressure", "%", &pressure, span));
        }
        let dirty = pick(
            &[
                ("dirty_kb", "Dirty MiB", 1.0 / 1024.0),
                ("writeback_kb", "Writeback MiB", 1.0 / 1024.0),
            ],
            2,
        );
        if !dirty.is_empty() {
            host.push(svg::line_chart(
                "Host: dirty and writeback pages",
                "MiB",
                &dirty,
                span,
            ));
        }
        let swap = pick(
            &[
                ("swap_in_pages_per_s", "swapped in, pages/s", 1.0),
                ("swap_out_pages_per_s", "swapped out, pages/s", 1.0),
                ("major_faults_per_s", "major faults/s", 1.0),
                (
                    "direct_scan_pages_per_s",
                    "direct reclaim scans, pages/s",
                    1.0,
                ),
            ],
            0,
        );
        // Only when something moved: a host without swap or pressure has flat zeros.
        if swap.iter().any(|s| s.points.iter().any(|p| p.1 > 0.0)) {
            host.push(svg::line_chart(
                "Host: swap and reclaim",
                "pages/s",
                &swap,
                span,
            ));
        }
    }
    Charts {
        percentiles,
        timelines,
        noise: section.host.as_ref().and_then(|hs| noise_chart(hs, span)),
        host,
        gc: section.gc.as_ref().map(gc_charts).unwrap_or_default(),
    }
}

/// The host's pressure (PSI `some avg10`) and the CPU other processes used, each with the
/// threshold that makes a verdict noisy in its colour (pressure is judged before the run
/// only, other processes' CPU in every second of it); None when host.csv has none of them.
fn noise_chart(hs: &crate::bundle::HostSeries, x_max_s: f64) -> Option<String> {
    use pauselab_bundle::noise;
    // (column, series name, what its threshold judges, threshold %).
    let signals = [
        (
            "other_cpu_pct",
            "other processes' CPU %",
            "",
            noise::OTHER_CPU_PCT,
        ),
        (
            "psi_cpu_some_avg10",
            "PSI cpu some avg10 %",
            "CPU",
            noise::CPU_PRESSURE_PCT,
        ),
        (
            "psi_io_some_avg10",
            "PSI io some avg10 %",
            "I/O",
            noise::IO_PRESSURE_PCT,
        ),
        (
            "psi_memory_some_avg10",
            "PSI memory some avg10 %",
            "memory",
            noise::MEMORY_PRESSURE_PCT,
        ),
    ];
    let mut series = Vec::new();
    // Pressure thresholds of the same value are one line: (whats, value, colour).
    let mut pressure: Vec<(Vec<&str>, f64, &'static str)> = Vec::new();
    let mut thresholds: Vec<Level> = Vec::new();
    for (i, (column, name, what, limit)) in signals.into_iter().enumerate() {
        let points: Vec<(f64, f64)> = match hs.columns.get(column) {
            Some(values) => hs
                .t_s
                .iter()
                .zip(values)
                .filter_map(|(t, v)| v.map(|v| (*t, v)))
                .collect(),
            None => continue,
        };
        if points.is_empty() {
            continue;
        }
        let color = svg::color(i);
        series.push(Series {
            name: name.to_string(),
            color,
            dash: "",
            points,
        });
        if what.is_empty() {
            thresholds.push(Level {
                label: format!(
                    "noisy: other processes >= {limit} % in {} s or more",
                    noise::BUSY_SECONDS
                ),
                value: limit,
                dash: "6 3",
                color,
            });
        } else if let Some(same) = pressure.iter_mut().find(|p| p.1 == limit) {
            same.0.push(what);
            same.2 = "#555";
        } else {
            pressure.push((vec![what], limit, color));
        }
    }
    thresholds.extend(pressure.into_iter().map(|(whats, limit, color)| Level {
        label: format!(
            "noisy before the run: {} pressure >= {limit} %",
            whats.join(" or ")
        ),
        value: limit,
        dash: "6 3",
        color,
    }));
    (!series.is_empty()).then(|| {
        svg::threshold_chart(
            "Host: what else was busy (noise)",
            "%",
            &series,
            &thresholds,
            x_max_s,
        )
    })
}

/// The noisy verdict's words under the noise chart: what kept the host busy and when, or
/// that no threshold was crossed.
fn noise_caption(section: &Section) -> String {
    match &section.verdict {
        Some(v) if !v.noisy.is_empty() => format!(
            r#"<figcaption class="noisy"><strong>noisy:</strong> {}</figcaption>"#,
            escape(&v.noisy.join("; "))
        ),
        Some(_) => r#"<figcaption class="muted">not noisy: the host stayed under every threshold (docs/lab.md, "Noise: a busy host")</figcaption>"#.to_string(),
        None => String::new(),
    }
}

/// The heap before and after each collection with its capacity, and each pause over time
/// coloured by pause type: dots, since a line between two pauses would draw pauses that
/// never happened.
fn gc_charts(gc: &crate::gc::GcSeries) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let x_max = |series: &[Series]| {
        series
            .iter()
            .flat_map(|s| s.points.last().map(|p| p.0))
            .fold(0.0, f64::max)
    };
    let series =
        |name: &str, color: &'static str, dash: &'static str, s: &crate::gc::MinMaxSeries| Series {
            name: name.to_string(),
            color,
            dash,
            points: s.points(),
        };
    if !gc.heap_after.is_empty() {
        let dots = [
            series("before GC", svg::color(4), "", &gc.heap_before),
            series("after GC", svg::color(0), "", &gc.heap_after),
        ];
        let capacity: Vec<Series> = (!gc.heap_capacity.is_empty())
            .then(|| series("capacity", "#555555", "6 3", &gc.heap_capacity))
            .into_iter()
            .collect();
        out.push((
            "heap",
            svg::points_chart(
                "Heap before and after GC",
                "MiB",
                &dots,
                &capacity,
                x_max(&dots),
                false,
            ),
        ));
    }
    let dots: Vec<Series> = gc
        .pauses
        .iter()
        .enumerate()
        .map(|(i, (name, s))| series(name, svg::color(i), "", s))
        .collect();
    if !dots.is_empty() {
        out.push((
            "pauses",
            svg::points_chart(
                "GC pauses over time, by type",
                "pause (ms)",
                &dots,
                &[],
                x_max(&dots),
                true,
            ),
        ));
    }
    out
}

fn variant_table(out: &mut String, section: &Section, sla: Option<&Sla>, unit_ratio: f64) {
    let has_verdicts = section.variants.iter().any(|v| v.verdict.is_some());
    let has_safepoints = section.variants.iter().any(|v| v.safepoints.is_some());
    out.push_str(r#"<div class="scroll"><table class="variants"><thead><tr><th>variant</th><th>intervals</th><th>count</th><th>p50</th><th>p99</th><th>p99.9</th><th>p99.99</th><th>max (ms)</th>"#);
    if has_safepoints {
        out.push_str("<th>safepoint p99.9</th><th>safepoint max</th>");
    }
    if sla.is_some() {
        out.push_str("<th>SLA</th>");
    }
    if has_verdicts {
        out.push_str(r#"<th>verdict</th><th class="text">evidence</th>"#);
    }
    out.push_str("</tr></thead><tbody>");
    for v in &section.variants {
        let _ = write!(
            out,
            r##"<tr data-variant="{}"><td><a href="#{}">{}</a></td>"##,
            escape(&v.id),
            variant_anchor(section, v),
            escape(&v.label)
        );
        match &v.hiccups {
            Some(h) => {
                let st = Stats::of(&h.histogram);
                let _ = write!(out, "<td>{}</td><td>{}</td>", h.intervals.len(), st.count);
                for value in [st.p50, st.p99, st.p99_9, st.p99_99, st.max] {
                    let _ = write!(out, "<td>{}</td>", ms(value, unit_ratio));
                }
            }
            None => {
                out.push_str(r#"<td colspan="7" class="text muted">no hiccup log recorded</td>"#)
            }
        }
        if has_safepoints {
            match &v.safepoints {
                Some(sp) => {
                    let st = Stats::of(&sp.histogram);
                    let _ = write!(
                        out,
                        "<td>{}</td><td>{}</td>",
                        ms(st.p99_9, unit_ratio),
                        ms(st.max, unit_ratio)
                    );
                }
                None => out.push_str("<td>-</td><td>-</td>"),
            }
        }
        if let Some(sla) = sla {
            match &v.hiccups {
                Some(h) => {
                    let breaches = sla.breaches(h, unit_ratio);
                    if breaches.is_empty() {
                        let _ = write!(out, "<td>{}</td>", badge("met"));
                    } else {
                        let what: Vec<String> = breaches
                            .iter()
                            .map(|(p, l, a)| format!("p{p} {a:.1} > {l} ms"))
                            .collect();
                        let _ = write!(
                            out,
                            r#"<td title="{}">{}</td>"#,
                            escape(&what.join("; ")),
                            badge("breach")
                        );
                    }
                }
                None => out.push_str("<td>-</td>"),
            }
        }
        if has_verdicts {
            let _ = write!(
                out,
                r#"<td>{}</td><td class="text">{}</td>"#,
                v.verdict.map(|v| badge(v.as_str())).unwrap_or_default(),
                escape(v.evidence.as_deref().unwrap_or(""))
            );
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
}

/// Per variant of a bundle, what the analysis of its GC log found, folded: the summary
/// names the rules that fired and the longest pause.
fn variant_diagnoses(out: &mut String, section: &Section) {
    for v in &section.variants {
        let Some(d) = &v.diagnosis else { continue };
        let _ = write!(
            out,
            r#"<details class="variant-diagnosis" data-variant="{}"><summary>{}</summary>"#,
            escape(&v.id),
            escape(&d.summary(&v.label)),
        );
        crate::diagnosis::diagnosis_html(out, d);
        out.push_str("</details>");
    }
}

/// Each interval log's intervals with the highest max, with their own count and p99.
fn worst_intervals_html(out: &mut String, section: &Section, unit_ratio: f64) {
    for v in &section.variants {
        let Some(log) = v.hiccups.as_ref().filter(|l| !l.worst.is_empty()) else {
            continue;
        };
        let _ = write!(
            out,
            r#"<h3>Worst {} intervals of {} <span class="muted">(highest max first; each interval's own histogram)</span></h3><div class="scroll"><table class="worst-intervals" data-variant="{}"><thead><tr>"#,
            log.worst.len(),
            escape(&v.label),
            escape(&v.id)
        );
        for column in crate::summary::WORST_INTERVAL_COLUMNS {
            let _ = write!(out, "<th>{}</th>", escape(column));
        }
        out.push_str("</tr></thead><tbody>");
        for row in log.worst_rows(unit_ratio) {
            out.push_str("<tr>");
            for cell in row {
                let _ = write!(out, "<td>{}</td>", escape(&cell));
            }
            out.push_str("</tr>");
        }
        out.push_str("</tbody></table></div>");
    }
}

/// The experiment's chosen measurements (throughput, start-up, JMH scores...), one row
/// per variant.
fn measurement_table(out: &mut String, section: &Section) {
    if section.measurement_columns.is_empty() {
        return;
    }
    out.push_str(r#"<div class="scroll"><table class="measurements"><thead><tr><th>variant</th>"#);
    for column in &section.measurement_columns {
        let _ = write!(
            out,
            r#"<th title="{}">{}</th>"#,
            escape(column),
            escape(crate::table::measurement_header(column))
        );
    }
    out.push_str("</tr></thead><tbody>");
    for v in &section.variants {
        let _ = write!(out, "<tr><td>{}</td>", escape(&v.label));
        for column in &section.measurement_columns {
            let _ = write!(out, "<td>{}</td>", escape(&v.measurement_cell(column)));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
}

fn matrix_html(out: &mut String, matrix: &Matrix) {
    out.push_str(r#"<section class="bundle" id="matrix"><h2>Matrix</h2><p class="muted">One line per place and variant, a column per JDK and collector. Each cell: the verdict over the cell's repeats (inconsistent when they disagree, with each repeat's verdict) and the longest pause. Click a cell for its charts.</p><div class="scroll"><table class="matrix"><thead><tr><th>kernel</th><th>host</th><th>disk</th><th>filesystem</th><th>mount options</th><th>variant</th>"#);
    for column in &matrix.columns {
        let _ = write!(
            out,
            "<th>{}</th>",
            escape(&crate::text::column_title(column))
        );
    }
    out.push_str("</tr></thead><tbody>");
    for row in &matrix.rows {
        for variant in &matrix.variants {
            let present = row
                .cells
                .values()
                .any(|c| c.variants.iter().any(|v| &v.variant == variant));
            if !present {
                continue;
            }
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                escape(&row.kernel),
                escape(&row.host),
                escape(&row.disk),
                escape(&row.filesystem),
                escape(&row.mount_options),
                escape(variant)
            );
            for column in &matrix.columns {
                let cell = row.cells.get(&column.key);
                match cell.map(|c| c.variants.iter().find(|v| &v.variant == variant)) {
                    None => out.push_str(r#"<td class="muted">not run</td>"#),
                    Some(None) => out.push_str(r#"<td class="muted">-</td>"#),
                    Some(Some(v)) => matrix_variant_html(out, v),
                }
            }
            out.push_str("</tr>");
        }
    }
    out.push_str("</tbody></table></div>");
    if !matrix.conclusions.is_empty() {
        let _ = write!(
            out,
            r#"<p class="conclusions"><strong>Conclusions.</strong> {}</p>"#,
            escape(&matrix.conclusions.join(" "))
        );
    }
    out.push_str("</section>");
}

/// One variant's cell: its verdict as a badge linked to the first repeat's charts, the
/// longest pause, and each repeat when they disagree.
fn matrix_variant_html(out: &mut String, v: &crate::matrix::MatrixVariant) {
    let class = v.verdict.map_or("unknown", |c| c.as_str());
    let anchor = v.repeats.first().map(|r| r.anchor.as_str()).unwrap_or("");
    let _ = write!(
        out,
        r##"<td class="cell"><a href="#{}">{}"##,
        escape(anchor),
        badge_text(class, &crate::matrix::cell_words(v.verdict))
    );
    if let Some(longest) = crate::matrix::longest_pause_words(v) {
        let _ = write!(out, " {}", escape(&longest));
    }
    out.push_str("</a>");
    if v.verdict == Some(pauselab_bundle::CellVerdict::Inconsistent) {
        out.push_str("<ul>");
        for (i, r) in v.repeats.iter().enumerate() {
            let _ = write!(
                out,
                r##"<li><a href="#{}">repeat {}: {}{}</a></li>"##,
                escape(&r.anchor),
                i + 1,
                escape(&crate::model::verdict_words(r.verdict)),
                r.max_pause_ms
                    .map(|ms| format!(" {}", escape(&crate::matrix::pause_words(ms))))
                    .unwrap_or_default()
            );
        }
        out.push_str("</ul>");
    }
    out.push_str("</td>");
}

fn badge_text(class: &str, text: &str) -> String {
    format!(
        r#"<span class="badge v-{}">{}</span>"#,
        escape(class),
        escape(text)
    )
}

/// The whole page.
pub fn render(
    sections: &[Section],
    matrix: Option<&Matrix>,
    sla: Option<&Sla>,
    unit_ratio: f64,
) -> String {
    let title = match sections {
        [one] => format!("pauselab report: {}", one.title),
        _ => format!("pauselab report: {} runs", sections.len()),
    };
    let mut out = String::with_capacity(256 * 1024);
    let _ = write!(
        out,
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>{}</title><style>{STYLE}</style></head><body><main><header><h1>{}</h1><p class="muted">Hiccups are delays every application thread would have seen; values in ms.{}</p></header>"#,
        escape(&title),
        escape(&title),
        sla.map(|s| format!(
            " SLA: {}.",
            s.limits
                .iter()
                .map(|(p, l)| if *p >= 100.0 {
                    format!("max {l} ms")
                } else {
                    format!("p{p} {l} ms")
                })
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .unwrap_or_default()
    );
    if let Some(m) = matrix {
        matrix_html(&mut out, m);
    }
    for section in sections {
        let _ = write!(
            out,
            r#"<section class="bundle" id="{}"><h2>{}"#,
            escape(&section.id),
            escape(&section.title)
        );
        if let Some(result) = &section.result {
            let _ = write!(out, " {}", badge(result.as_str()));
        }
        let _ = write!(
            out,
            r#"</h2><p class="muted">{}</p>"#,
            escape(&section.source)
        );
        if let Some(verdict) = &section.verdict {
            crate::diagnosis::verdict_html(&mut out, verdict);
        }
        if !section.facts.is_empty() {
            out.push_str(r#"<dl class="facts">"#);
            for (k, v) in &section.facts {
                let _ = write!(out, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(v));
            }
            out.push_str("</dl>");
        }
        if section.verdict.is_none() {
            // A GC log or recording: its findings come first.
            for d in section.variants.iter().filter_map(|v| v.diagnosis.as_ref()) {
                crate::diagnosis::diagnosis_html(&mut out, d);
            }
        }
        variant_table(&mut out, section, sla, unit_ratio);
        measurement_table(&mut out, section);
        if section.interval_logs {
            worst_intervals_html(&mut out, section, unit_ratio);
        }
        if section.verdict.is_some() {
            variant_diagnoses(&mut out, section);
        }
        let charts = charts(section, sla, unit_ratio);
        if let Some(p) = &charts.percentiles {
            let _ = write!(out, r#"<figure class="percentiles">{p}</figure>"#);
        }
        out.push_str(r#"<div class="grid two">"#);
        for (anchor, _, svg, safepoints) in &charts.timelines {
            let _ = write!(
                out,
                r#"<figure class="timeline" id="{}">{svg}</figure>"#,
                escape(anchor)
            );
            if let Some(sp) = safepoints {
                let _ = write!(out, r#"<figure class="safepoints">{sp}</figure>"#);
            }
        }
        if let Some(noise) = &charts.noise {
            let _ = write!(
                out,
                r#"<figure class="noise">{noise}{}</figure>"#,
                noise_caption(section)
            );
        }
        for svg in &charts.host {
            let _ = write!(out, r#"<figure class="host">{svg}</figure>"#);
        }
        for (_, svg) in &charts.gc {
            let _ = write!(out, r#"<figure class="gc">{svg}</figure>"#);
        }
        out.push_str("</div></section>");
    }
    let _ = write!(
        out,
        r#"<footer>Made by pauselab {}.</footer></main></body></html>"#,
        env!("CARGO_PKG_VERSION")
    );
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::bundle::{Bundle, HostSeries};

    fn fixture(path: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/bundles")
            .join(path)
    }

    /// The `<figure class="{class}"` elements of a page, each to its `</figure>`.
    fn figures<'a>(html: &'a str, class: &str) -> Vec<&'a str> {
        html.split(&format!(r#"<figure class="{class}""#))
            .skip(1)
            .map(|f| &f[..f.find("</figure>").unwrap()])
            .collect()
    }

    /// The time axis's labels with their x positions.
    fn time_axis(svg: &str) -> Vec<(&str, &str)> {
        svg.split(r#"<text class="x-label" x=""#)
            .skip(1)
            .map(|t| {
                let t = &t[..t.find("</text>").unwrap()];
                (&t[..t.find('"').unwrap()], &t[t.rfind('>').unwrap() + 1..])
            })
            .collect()
    }

    #[test]
    fn a_busy_hosts_noise_is_charted_on_the_pauses_time_axis_with_the_noisy_thresholds() {
        let mut bundle = Bundle::open(&fixture("lab-kernel6.1")).unwrap();
        // A real lab run's host.csv on a busy host, shifted to outlast the bundle's 300 s
        // logs: the timelines must then run as long as the host's series.
        let csv = std::fs::read_to_string(fixture("host-busy.csv")).unwrap();
        let mut host = HostSeries::read(csv.as_bytes(), "host-busy.csv").unwrap();
        host.t_s.iter_mut().for_each(|t| *t += 280.0);
        bundle.host_series = Some(host);
        let noisy = "during the run: other processes used 25 % of the CPUs or more in 65 of 65 s (t = 1-66 s, peak 100 %); busiest: rustc 40 % (9 processes), java 6 % (5 processes)";
        bundle.verdict.as_mut().unwrap().noisy = vec![noisy.to_string()];
        let html = render(&[Section::from_bundle(&bundle)], None, None, 1e6);
        let noise = figures(&html, "noise");
        assert_eq!(noise.len(), 1);
        let noise = noise[0];
        for series in [
            "other processes' CPU %",
            "PSI cpu some avg10 %",
            "PSI io some avg10 %",
            "PSI memory some avg10 %",
        ] {
            assert!(
                noise.contains(&format!(r#"data-series="{}""#, escape(series))),
                "{series}"
            );
        }
        let levels: Vec<&str> = noise
            .split(r#"<line class="level" data-level=""#)
            .skip(1)
            .map(|l| &l[..l.find('"').unwrap()])
            .collect();
        assert_eq!(
            levels,
            [
                "noisy: other processes &gt;= 25 % in 3 s or more",
                "noisy before the run: CPU or I/O pressure &gt;= 20 %",
                "noisy before the run: memory pressure &gt;= 10 %"
            ]
        );
        assert!(noise.contains(&format!(
            r#"<figcaption class="noisy"><strong>noisy:</strong> {}</figcaption>"#,
            escape(noisy)
        )));
        // Every timeline has the noise chart's time axis, which reaches the host series' last
        // second (346 s; ticks every 100 s).
        let axis = time_axis(noise);
        assert_eq!(axis.last(), Some(&("690.0", "300")), "{axis:?}");
        let timelines = figures(&html, "timeline");
        assert_eq!(timelines.len(), 3);
        for t in timelines {
            assert_eq!(time_axis(t), axis);
        }
    }

    #[test]
    fn a_quiet_hosts_noise_chart_says_it_stayed_under_the_thresholds() {
        let bundle = Bundle::open(&fixture("lab-kernel6.1")).unwrap();
        let html = render(&[Section::from_bundle(&bundle)], None, None, 1e6);
        let noise = figures(&html, "noise")[0];
        // This host.csv has I/O pressure only.
        assert_eq!(noise.matches("<polyline").count(), 1);
        assert!(noise.contains(r#"data-level="noisy before the run: I/O pressure &gt;= 20 %""#));
        assert!(noise.contains("not noisy: the host stayed under every threshold"));
    }
}
