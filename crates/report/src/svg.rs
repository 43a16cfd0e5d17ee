//! Hand-made SVG charts (no scripts, no external fonts): the percentile distribution on a
//! 1/(1-p) log axis, and the max-per-interval timeline with percentile lines and pause
//! markers, as HistogramLogAnalyzer draws them.
//!
//! Every series is a `<polyline class="series" data-series="NAME">` so tests (and users'
//! scripts) can find them; text uses the generic `sans-serif` family.

use std::fmt::Write as _;

/// Colour-blind-safe palette (Okabe and Ito), in series order.
pub const PALETTE: [&str; 7] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
];

pub fn color(index: usize) -> &'static str {
    PALETTE[index % PALETTE.len()]
}

/// One line: a name and (x, y) points.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub color: &'static str,
    /// SVG stroke-dasharray ("" = solid): tells JDKs apart when variants share a colour.
    pub dash: &'static str,
    pub points: Vec<(f64, f64)>,
}

/// Dash patterns for the second, third ... JDK of a run.
pub const DASHES: [&str; 4] = ["", "7 3", "2 2", "10 3 2 3"];

/// A horizontal reference line (e.g. "p99.9 0.80 ms").
#[derive(Debug, Clone)]
pub struct Level {
    pub label: String,
    pub value: f64,
    pub dash: &'static str,
}

/// A pause marker on a timeline: start (s), duration (ms) and a tooltip.
#[derive(Debug, Clone)]
pub struct Marker {
    pub t_s: f64,
    pub duration_ms: f64,
    pub label: String,
}

const WIDTH: f64 = 820.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 34.0;

pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Compact number for axis labels and legends: 3 significant digits, no trailing zeros.
pub fn fmt_num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return "0".to_string();
    }
    let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
    let text = format!("{v:.digits$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// "1.79 ms", "0.082 ms", "1 796 ms" stays "1796 ms" (no grouping, easy to copy).
pub fn fmt_ms(v: f64) -> String {
    format!("{} ms", fmt_num(v))
}

/// A time axis ends at the data (a run of 300.2 s is not drawn to 400 s), ticks at nice steps.
fn time_range(max_s: f64) -> (f64, f64) {
    let (_, step) = nice_axis(max_s);
    let end = if max_s > 0.0 && max_s.is_finite() {
        max_s
    } else {
        1.0
    };
    (end, step)
}

/// A nice axis maximum and tick step covering `max` with about 5 ticks.
pub fn nice_axis(max: f64) -> (f64, f64) {
    let max = if max > 0.0 && max.is_finite() {
        max
    } else {
        1.0
    };
    let raw = max / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude);
    ((max / step).ceil() * step, step)
}

struct Frame {
    height: f64,
    top: f64,
    bottom: f64,
    x0: f64,
    x1: f64,
    y1: f64,
}

impl Frame {
    fn plot_w(&self) -> f64 {
        WIDTH - LEFT - RIGHT
    }
    fn plot_h(&self) -> f64 {
        self.height - self.top - self.bottom
    }
    fn x(&self, v: f64) -> f64 {
        LEFT + (v - self.x0) / (self.x1 - self.x0) * self.plot_w()
    }
    fn y(&self, v: f64) -> f64 {
        self.top + self.plot_h() - (v.min(self.y1 * 1.02) / self.y1) * self.plot_h()
    }
    fn bottom_y(&self) -> f64 {
        self.top + self.plot_h()
    }
}

fn open_svg(out: &mut String, height: f64, title: &str, class: &str) {
    let _ = write!(
        out,
        r##"<svg class="chart {class}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{t}" font-family="sans-serif" font-size="12"><title>{t}</title><rect width="{WIDTH}" height="{height}" fill="#fff"/>"##,
        t = escape(title)
    );
    let _ = write!(
        out,
        r##"<text x="{LEFT}" y="18" font-size="14" font-weight="bold" fill="#222">{}</text>"##,
        escape(title)
    );
}

fn y_axis(out: &mut String, f: &Frame, step: f64, label: &str) {
    let mut v = 0.0;
    while v <= f.y1 + step * 1e-9 {
        let y = f.y(v);
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" x2="{x2:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{tx}" y="{ty:.1}" text-anchor="end" fill="#444">{}</text>"##,
            fmt_num(v),
            x2 = WIDTH - RIGHT,
            tx = LEFT - 6.0,
            ty = y + 4.0
        );
        v += step;
    }
    let _ = write!(
        out,
        r##"<text transform="translate(14 {:.1}) rotate(-90)" text-anchor="middle" fill="#444">{}</text>"##,
        f.top + f.plot_h() / 2.0,
        escape(label)
    );
}

fn polyline(out: &mut String, f: &Frame, series: &Series, map_x: impl Fn(f64) -> f64) {
    let mut points = String::new();
    for (x, y) in &series.points {
        let _ = write!(points, "{:.1},{:.1} ", f.x(map_x(*x)), f.y(*y));
    }
    let _ = write!(
        out,
        r##"<polyline class="series" data-series="{}" fill="none" stroke="{}" stroke-dasharray="{}" stroke-width="2" stroke-linejoin="round" points="{}"/>"##,
        escape(&series.name),
        series.color,
        series.dash,
        points.trim_end()
    );
}

/// Legend rows (swatch + text) from the top-left corner of the plot.
fn legend(out: &mut String, f: &Frame, rows: &[(String, &str, &str)]) {
    let x = LEFT + 10.0;
    let mut y = f.top + 14.0;
    let longest = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0) as f64;
    if !rows.is_empty() {
        let _ = write!(
            out,
            r##"<rect class="legend" x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#fff" fill-opacity="0.85" stroke="#ccc"/>"##,
            x - 6.0,
            y - 12.0,
            longest * 6.4 + 40.0,
            rows.len() as f64 * 16.0 + 4.0
        );
    }
    for (text, color, dash) in rows {
        let _ = write!(
            out,
            r##"<line x1="{x}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/><text class="legend-item" x="{:.1}" y="{y:.1}" fill="#222">{}</text>"##,
            x + 20.0,
            y - 4.0,
            y - 4.0,
            x + 26.0,
            escape(text)
        );
        y += 16.0;
    }
}

/// Seconds (or minutes past 10 minutes) along the bottom, with light vertical grid lines.
fn time_axis(out: &mut String, f: &Frame, step: f64) {
    let minutes = f.x1 >= 600.0;
    let mut v = 0.0;
    while v <= f.x1 + step * 1e-9 {
        let x = f.x(v);
        let label = if minutes {
            fmt_num(v / 60.0)
        } else {
            fmt_num(v)
        };
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{:.1}" y2="{:.1}" stroke="#f0f0f0"/><text class="x-label" x="{x:.1}" y="{:.1}" text-anchor="middle" fill="#444">{label}</text>"##,
            f.top,
            f.bottom_y(),
            f.bottom_y() + 16.0
        );
        v += step;
    }
    let _ = write!(
        out,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#444">time since start ({})</text>"##,
        LEFT + f.plot_w() / 2.0,
        f.bottom_y() + 32.0,
        if minutes { "min" } else { "s" }
    );
}

/// Percentile label of a 1/(1-p) decade: 0 -> "0%", 1 -> "90%", 3 -> "99.9%".
pub fn decade_label(decade: u32) -> String {
    match decade {
        0 => "0%".to_string(),
        1 => "90%".to_string(),
        2 => "99%".to_string(),
        d => format!("99.{}%", "9".repeat(d as usize - 2)),
    }
}

/// The percentile distribution: x = 1/(1-p) on a log axis, y in ms from 0; one line per
/// series (points as (1/(1-p), ms), infinite x dropped); `sla` is (percentile, ms) steps.
pub fn percentile_chart(title: &str, series: &[Series], sla: &[(f64, f64)]) -> String {
    let finite = |s: &Series| {
        s.points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .copied()
            .collect::<Vec<_>>()
    };
    let series: Vec<Series> = series
        .iter()
        .map(|s| Series {
            points: finite(s),
            ..s.clone()
        })
        .collect();
    let max_x = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(1.0, f64::max);
    let decades = (max_x.log10().ceil() as u32).clamp(6, 9);
    let max_y = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .chain(sla.iter().map(|s| s.1))
        .fold(0.0, f64::max);
    let (y1, step) = nice_axis(max_y);
    let f = Frame {
        height: 420.0,
        top: 30.0,
        bottom: 44.0,
        x0: 0.0,
        x1: f64::from(decades),
        y1,
    };
    let mut out = String::new();
    open_svg(&mut out, f.height, title, "percentiles");
    y_axis(&mut out, &f, step, "latency (ms)");
    for d in 0..=decades {
        let x = f.x(f64::from(d));
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{:.1}" y2="{:.1}" stroke="#e4e4e4"/><text class="x-label" x="{x:.1}" y="{:.1}" text-anchor="middle" fill="#444">{}</text>"##,
            f.top,
            f.bottom_y(),
            f.bottom_y() + 16.0,
            decade_label(d)
        );
    }
    let _ = write!(
        out,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#444">percentile</text>"##,
        LEFT + f.plot_w() / 2.0,
        f.height - 6.0
    );
    if !sla.is_empty() {
        // Step line: the limit at percentile p is that of the first SLA point at or above p.
        let mut points = String::new();
        let mut from = 0.0;
        for (pct, ms) in sla {
            let to = if *pct >= 100.0 {
                f64::from(decades)
            } else {
                (1.0 / (1.0 - pct / 100.0)).log10().min(f64::from(decades))
            };
            let _ = write!(
                points,
                "{:.1},{:.1} {:.1},{:.1} ",
                f.x(from),
                f.y(*ms),
                f.x(to),
                f.y(*ms)
            );
            from = to;
        }
        let _ = write!(
            out,
            r##"<polyline class="sla" fill="none" stroke="#c00" stroke-width="1.5" stroke-dasharray="6 3" points="{}"/>"##,
            points.trim_end()
        );
    }
    for s in &series {
        polyline(&mut out, &f, s, f64::log10);
    }
    let mut rows: Vec<(String, &str, &str)> = series
        .iter()
        .map(|s| {
            let max = s.points.iter().map(|p| p.1).fold(0.0, f64::max);
            (format!("{} (max {})", s.name, fmt_ms(max)), s.color, s.dash)
        })
        .collect();
    if !sla.is_empty() {
        rows.push(("SLA".to_string(), "#c00", "6 3"));
    }
    legend(&mut out, &f, &rows);
    out.push_str("</svg>");
    out
}

/// Max per interval over time for one series, with horizontal `levels` (values in the
/// legend) and, under the plot, a strip of pause `markers` (tick height ~ duration).
/// `x_max_s` and `y_max_ms` are shared by the caller so small multiples compare.
pub fn timeline_chart(
    title: &str,
    series: &Series,
    levels: &[Level],
    markers: &[Marker],
    markers_label: &str,
    x_max_s: f64,
    y_max_ms: f64,
) -> String {
    let (x1, x_step) = time_range(x_max_s);
    let (y1, y_step) = nice_axis(y_max_ms);
    let strip = if markers.is_empty() { 0.0 } else { 46.0 };
    let f = Frame {
        height: 300.0 + strip,
        top: 30.0,
        bottom: 44.0 + strip,
        x0: 0.0,
        x1,
        y1,
    };
    let mut out = String::new();
    open_svg(&mut out, f.height, title, "timeline");
    y_axis(&mut out, &f, y_step, "interval max (ms)");
    time_axis(&mut out, &f, x_step);
    for level in levels {
        let y = f.y(level.value);
        let _ = write!(
            out,
            r##"<line class="level" data-level="{}" x1="{LEFT}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#555" stroke-width="1" stroke-dasharray="{}"/>"##,
            escape(&level.label),
            WIDTH - RIGHT,
            level.dash
        );
    }
    polyline(&mut out, &f, series, |x| x);
    if !markers.is_empty() {
        let base = f.height - 8.0;
        let longest = markers.iter().map(|m| m.duration_ms).fold(0.0, f64::max);
        let _ = write!(
            out,
            r##"<text x="{LEFT}" y="{:.1}" fill="#444">{}</text><line x1="{LEFT}" x2="{:.1}" y1="{base:.1}" y2="{base:.1}" stroke="#bbb"/>"##,
            base - 30.0,
            escape(markers_label),
            WIDTH - RIGHT
        );
        for m in markers {
            let x = f.x(m.t_s.clamp(0.0, x1));
            let h = 4.0 + 20.0 * (m.duration_ms / longest.max(1e-9)).sqrt();
            let _ = write!(
                out,
                r##"<line class="marker" x1="{x:.1}" x2="{x:.1}" y1="{base:.1}" y2="{:.1}" stroke="#8a2be2" stroke-width="1.5"><title>{}</title></line>"##,
                base - h,
                escape(&m.label)
            );
        }
    }
    let mut rows = vec![(series.name.clone(), series.color, series.dash)];
    rows.extend(levels.iter().map(|l| (l.label.clone(), "#555", l.dash)));
    legend(&mut out, &f, &rows);
    out.push_str("</svg>");
    out
}

/// Several series over time sharing a y axis (host signals).
pub fn line_chart(title: &str, y_label: &str, series: &[Series], x_max_s: f64) -> String {
    let (x1, x_step) = time_range(x_max_s);
    let max_y = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let (y1, y_step) = nice_axis(max_y);
    let f = Frame {
        height: 240.0,
        top: 30.0,
        bottom: 44.0,
        x0: 0.0,
        x1,
        y1,
    };
    let mut out = String::new();
    open_svg(&mut out, f.height, title, "host");
    y_axis(&mut out, &f, y_step, y_label);
    time_axis(&mut out, &f, x_step);
    for s in series {
        polyline(&mut out, &f, s, |x| x);
    }
    let rows: Vec<(String, &str, &str)> = series
        .iter()
        .map(|s| (s.name.clone(), s.color, ""))
        .collect();
    legend(&mut out, &f, &rows);
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_and_labels() {
        assert_eq!(nice_axis(1795.16), (2000.0, 500.0));
        assert_eq!(nice_axis(0.9), (1.0, 0.2));
        assert_eq!(decade_label(0), "0%");
        assert_eq!(decade_label(1), "90%");
        assert_eq!(decade_label(2), "99%");
        assert_eq!(decade_label(3), "99.9%");
        assert_eq!(decade_label(6), "99.9999%");
        assert_eq!(fmt_num(1795.162), "1795");
        assert_eq!(fmt_num(0.0819), "0.0819");
        assert_eq!(fmt_num(12.5), "12.5");
        assert_eq!(escape("a<b&\"c\""), "a&lt;b&amp;&quot;c&quot;");
    }

    #[test]
    fn percentile_chart_has_one_polyline_per_series_and_the_sla() {
        let series: Vec<Series> = (0..3)
            .map(|i| Series {
                name: format!("v{i}"),
                color: color(i),
                dash: "",
                points: vec![
                    (1.0, 0.1),
                    (10.0, 0.2),
                    (1000.0, 5.0 * (i + 1) as f64),
                    (f64::INFINITY, 9.0),
                ],
            })
            .collect();
        let svg = percentile_chart("t", &series, &[(99.0, 1.0), (100.0, 20.0)]);
        assert_eq!(svg.matches(r#"class="series""#).count(), 3);
        assert_eq!(svg.matches(r#"class="sla""#).count(), 1);
        assert!(svg.contains(">99.9999%</text>"));
        assert!(svg.contains("v2 (max 15 ms)"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }
}
