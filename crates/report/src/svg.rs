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
    pub color: &'static str,
}

/// Horizontal reference lines across the plot, named in `data-level`.
fn level_lines(out: &mut String, f: &Frame, levels: &[Level]) {
    for level in levels {
        let y = f.y(level.value);
        let _ = write!(
            out,
            r##"<line class="level" data-level="{}" x1="{LEFT}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="{}" stroke-width="1" stroke-dasharray="{}"/>"##,
            escape(&level.label),
            WIDTH - RIGHT,
            level.color,
            level.dash
        );
    }
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
    // Past 10 minutes the axis counts minutes (see time_axis): nice steps of minutes.
    let step = if max_s >= 600.0 {
        nice_axis(max_s / 60.0).1 * 60.0
    } else {
        nice_axis(max_s).1
    };
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

/// Values that span more than this ratio (largest over smallest positive) are drawn on a
/// log axis: on a linear one a 5 ms line lies flat on the floor beside a 5 s stall.
pub const LOG_SCALE_RATIO: f64 = 100.0;

/// A value axis: linear from 0, or log10 over whole decades. A [`Frame`] is linear from 0;
/// a log axis hands it exponents counted from its lowest decade.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ValueAxis {
    /// Nice maximum and tick step.
    Linear { max: f64, step: f64 },
    /// Lowest and highest decade exponents (10^lo .. 10^hi).
    Log { lo: i32, hi: i32 },
}

impl ValueAxis {
    /// Log when `log_allowed` and the positive values span more than [`LOG_SCALE_RATIO`],
    /// else linear from 0.
    pub fn fit(values: impl Iterator<Item = f64>, log_allowed: bool) -> ValueAxis {
        let (mut lo, mut hi) = (f64::INFINITY, 0.0_f64);
        for v in values.filter(|v| v.is_finite()) {
            hi = hi.max(v);
            if v > 0.0 {
                lo = lo.min(v);
            }
        }
        if log_allowed && lo.is_finite() && hi / lo > LOG_SCALE_RATIO {
            let lo_exp = lo.log10().floor() as i32;
            let hi_exp = (hi.log10().ceil() as i32).max(lo_exp + 1);
            return ValueAxis::Log {
                lo: lo_exp,
                hi: hi_exp,
            };
        }
        let (max, step) = nice_axis(hi);
        ValueAxis::Linear { max, step }
    }

    /// The top of the frame's 0-based scale.
    fn frame_max(self) -> f64 {
        match self {
            ValueAxis::Linear { max, .. } => max,
            ValueAxis::Log { lo, hi } => f64::from(hi - lo),
        }
    }

    /// A value on the frame's scale (log: values at or below 0 sit on the floor).
    fn to_frame(self, v: f64) -> f64 {
        match self {
            ValueAxis::Linear { .. } => v,
            ValueAxis::Log { lo, .. } if v > 0.0 => (v.log10() - f64::from(lo)).max(0.0),
            ValueAxis::Log { .. } => 0.0,
        }
    }

    /// Grid lines and labels: linear ticks, or each decade with 2x and 5x between.
    fn draw(self, out: &mut String, f: &Frame, label: &str) {
        let (lo, hi) = match self {
            ValueAxis::Linear { step, .. } => return y_axis(out, f, step, label),
            ValueAxis::Log { lo, hi } => (lo, hi),
        };
        let x2 = WIDTH - RIGHT;
        for e in lo..=hi {
            for m in [1.0, 2.0, 5.0] {
                let v = m * 10f64.powi(e);
                let at = self.to_frame(v);
                if at > f.y1 + 1e-9 {
                    break;
                }
                let y = f.y(at);
                let (stroke, text) = if m == 1.0 {
                    ("#d0d0d0", fmt_num(v))
                } else if hi - lo <= 3 {
                    ("#f0f0f0", fmt_num(v))
                } else {
                    ("#f0f0f0", String::new())
                };
                let _ = write!(
                    out,
                    r##"<line x1="{LEFT}" x2="{x2:.1}" y1="{y:.1}" y2="{y:.1}" stroke="{stroke}"/>"##
                );
                if !text.is_empty() {
                    let _ = write!(
                        out,
                        r##"<text class="y-label" x="{tx}" y="{ty:.1}" text-anchor="end" fill="{}">{text}</text>"##,
                        if m == 1.0 { "#444" } else { "#888" },
                        tx = LEFT - 6.0,
                        ty = y + 4.0
                    );
                }
            }
        }
        let _ = write!(
            out,
            r##"<text transform="translate(14 {:.1}) rotate(-90)" text-anchor="middle" fill="#444">{}, log scale</text>"##,
            f.top + f.plot_h() / 2.0,
            escape(label)
        );
    }
}

fn polyline(out: &mut String, f: &Frame, series: &Series, map_x: impl Fn(f64) -> f64) {
    polyline_scaled(out, f, series, map_x, |y| y);
}

fn polyline_scaled(
    out: &mut String,
    f: &Frame,
    series: &Series,
    map_x: impl Fn(f64) -> f64,
    map_y: impl Fn(f64) -> f64,
) {
    let mut points = String::new();
    for (x, y) in &series.points {
        let _ = write!(points, "{:.1},{:.1} ", f.x(map_x(*x)), f.y(map_y(*y)));
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

/// Each point (interval start s, its max) as a bar as wide as its interval (the gap to the
/// next start, at most the usual gap, so a hole in the log stays a hole): the max belongs to
/// the whole interval, and a line between two maxima would draw values nobody measured.
fn bars(out: &mut String, f: &Frame, series: &Series) {
    let mut gaps: Vec<f64> = series
        .points
        .windows(2)
        .map(|w| w[1].0 - w[0].0)
        .filter(|g| *g > 0.0)
        .collect();
    gaps.sort_by(f64::total_cmp);
    let usual = gaps.get(gaps.len() / 2).copied().unwrap_or(1.0);
    let base = f.bottom_y();
    let mut path = String::new();
    for (i, (t, v)) in series.points.iter().enumerate() {
        let next = series.points.get(i + 1).map_or(t + usual, |n| n.0);
        let (x0, x1) = (f.x(t.min(f.x1)), f.x((t + (next - t).min(usual)).min(f.x1)));
        // At least a pixel wide, so a short interval on a long run stays visible.
        let x1 = x1.max(x0 + 1.0);
        let _ = write!(path, "M{x0:.1} {base:.1}V{:.1}H{x1:.1}V{base:.1}", f.y(*v));
    }
    let _ = write!(
        out,
        r##"<path class="series bars" data-series="{}" fill="{c}" fill-opacity="0.35" stroke="{c}" stroke-width="1" stroke-dasharray="{}" d="{path}"/>"##,
        escape(&series.name),
        series.dash,
        c = series.color,
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
    // The axis ends at the data's last finite percentile (or the SLA's), not at 99.9999%.
    let max_x = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .chain(
            sla.iter()
                .filter(|s| s.0 < 100.0)
                .map(|s| 1.0 / (1.0 - s.0 / 100.0)),
        )
        .fold(1.0, f64::max);
    let decades = ((max_x.log10() - 1e-9).ceil().max(0.0) as u32).clamp(1, 9);
    let axis = ValueAxis::fit(
        series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .chain(sla.iter().map(|s| s.1)),
        true,
    );
    let mut rows: Vec<(String, &str, Swatch)> = series
        .iter()
        .map(|s| {
            let max = s.points.iter().map(|p| p.1).fold(0.0, f64::max);
            (
                format!("{} (max {})", s.name, fmt_ms(max)),
                s.color,
                Swatch::Line(s.dash),
            )
        })
        .collect();
    if !sla.is_empty() {
        rows.push(("SLA".to_string(), "#c00", Swatch::Line("6 3")));
    }
    let legend_h = legend_height(&rows);
    let f = Frame {
        height: 420.0 + legend_h,
        top: 30.0,
        bottom: 44.0 + legend_h,
        x0: 0.0,
        x1: f64::from(decades),
        y1: axis.frame_max(),
    };
    let mut out = String::new();
    open_svg(&mut out, f.height, title, "percentiles");
    axis.draw(&mut out, &f, "latency (ms)");
    for d in 0..=decades {
        let x = f.x(f64::from(d));
        // The last label ends at the chart's edge: centred on its line, "99.999999%" would
        // run off the chart.
        let (anchor, label_x) = if d == decades {
            ("end", WIDTH - 2.0)
        } else {
            ("middle", x)
        };
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{:.1}" y2="{:.1}" stroke="#e4e4e4"/><text class="x-label" x="{label_x:.1}" y="{:.1}" text-anchor="{anchor}" fill="#444">{}</text>"##,
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
        f.bottom_y() + 38.0
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
            let y = f.y(axis.to_frame(*ms));
            let _ = write!(points, "{:.1},{y:.1} {:.1},{y:.1} ", f.x(from), f.x(to),);
            from = to;
        }
        let _ = write!(
            out,
            r##"<polyline class="sla" fill="none" stroke="#c00" stroke-width="1.5" stroke-dasharray="6 3" points="{}"/>"##,
            points.trim_end()
        );
    }
    for s in &series {
        polyline_scaled(&mut out, &f, s, f64::log10, |y| axis.to_frame(y));
    }
    legend_below(&mut out, f.bottom_y() + 58.0, &rows);
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
    let mut rows = vec![(series.name.clone(), series.color, Swatch::Line(series.dash))];
    rows.extend(
        levels
            .iter()
            .map(|l| (l.label.clone(), l.color, Swatch::Line(l.dash))),
    );
    let legend_h = legend_height(&rows);
    let f = Frame {
        height: 300.0 + strip + legend_h,
        top: 30.0,
        bottom: 44.0 + strip + legend_h,
        x0: 0.0,
        x1,
        y1,
    };
    let mut out = String::new();
    open_svg(&mut out, f.height, title, "timeline");
    y_axis(&mut out, &f, y_step, "interval max (ms)");
    time_axis(&mut out, &f, x_step);
    level_lines(&mut out, &f, levels);
    bars(&mut out, &f, series);
    if !markers.is_empty() {
        let base = f.bottom_y() + 82.0;
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
    legend_below(&mut out, f.bottom_y() + 52.0 + strip, &rows);
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

/// Several series over time sharing a y axis, with `thresholds` as horizontal lines
/// (the limits a value is judged by), the legend below the plot so it hides no data.
pub fn threshold_chart(
    title: &str,
    y_label: &str,
    series: &[Series],
    thresholds: &[Level],
    x_max_s: f64,
) -> String {
    let (x1, x_step) = time_range(x_max_s);
    let max_y = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .chain(thresholds.iter().map(|l| l.value))
        .fold(0.0, f64::max);
    let (y1, y_step) = nice_axis(max_y);
    let rows: Vec<(String, &str, Swatch)> = series
        .iter()
        .map(|s| (s.name.clone(), s.color, Swatch::Line(s.dash)))
        .chain(
            thresholds
                .iter()
                .map(|l| (l.label.clone(), l.color, Swatch::Line(l.dash))),
        )
        .collect();
    let legend_h = legend_height(&rows);
    let f = Frame {
        height: 240.0 + legend_h,
        top: 30.0,
        bottom: 44.0 + legend_h,
        x0: 0.0,
        x1,
        y1,
    };
    let mut out = String::new();
    open_svg(&mut out, f.height, title, "noise");
    y_axis(&mut out, &f, y_step, y_label);
    time_axis(&mut out, &f, x_step);
    level_lines(&mut out, &f, thresholds);
    for s in series {
        polyline(&mut out, &f, s, |x| x);
    }
    legend_below(&mut out, f.bottom_y() + 52.0, &rows);
    out.push_str("</svg>");
    out
}

/// Values over time as dots, one per sample (a series kept as min and max per time
/// bucket gives two), with `lines` (a capacity, say) drawn through their points; the legend
/// below the plot. `log_allowed`: values spanning more than [`LOG_SCALE_RATIO`] go on a
/// log axis.
pub fn points_chart(
    title: &str,
    y_label: &str,
    dots: &[Series],
    lines: &[Series],
    x_max_s: f64,
    log_allowed: bool,
) -> String {
    let (x1, x_step) = time_range(x_max_s);
    let axis = ValueAxis::fit(
        dots.iter()
            .chain(lines)
            .flat_map(|s| s.points.iter().map(|p| p.1)),
        log_allowed,
    );
    let rows: Vec<(String, &str, Swatch)> = dots
        .iter()
        .map(|s| (s.name.clone(), s.color, Swatch::Dot))
        .chain(
            lines
                .iter()
                .map(|s| (s.name.clone(), s.color, Swatch::Line(s.dash))),
        )
        .collect();
    let legend_h = legend_height(&rows);
    let f = Frame {
        height: 260.0 + legend_h,
        top: 30.0,
        bottom: 52.0 + legend_h,
        x0: 0.0,
        x1,
        y1: axis.frame_max(),
    };
    let mut out = String::new();
    open_svg(&mut out, f.height, title, "points");
    axis.draw(&mut out, &f, y_label);
    time_axis(&mut out, &f, x_step);
    for s in lines {
        polyline_scaled(&mut out, &f, s, |x| x, |y| axis.to_frame(y));
    }
    for s in dots {
        let _ = write!(
            out,
            r##"<g class="dots" data-series="{}" fill="{}">"##,
            escape(&s.name),
            s.color
        );
        for (t, v) in &s.points {
            let _ = write!(
                out,
                r##"<circle cx="{:.1}" cy="{:.1}" r="2.5"/>"##,
                f.x(t.clamp(0.0, x1)),
                f.y(axis.to_frame(*v))
            );
        }
        out.push_str("</g>");
    }
    legend_below(&mut out, f.bottom_y() + 52.0, &rows);
    out.push_str("</svg>");
    out
}

/// How a legend row shows its series.
#[derive(Debug, Clone, Copy)]
enum Swatch {
    /// A line with this dash pattern.
    Line(&'static str),
    /// A dot, for series drawn as points.
    Dot,
}

/// Width a legend entry takes, px (about 6.4 px a character at 12 px).
fn legend_entry_width(text: &str) -> f64 {
    text.chars().count() as f64 * 6.4 + 40.0
}

/// Legend entries in lines that fit the chart's width: the indexes of each line's rows.
fn legend_layout(rows: &[(String, &str, Swatch)]) -> Vec<Vec<usize>> {
    let mut lines: Vec<Vec<usize>> = Vec::new();
    let mut used = f64::INFINITY;
    for (i, (text, _, _)) in rows.iter().enumerate() {
        let w = legend_entry_width(text);
        if used + w > WIDTH - LEFT - RIGHT {
            lines.push(Vec::new());
            used = 0.0;
        }
        lines.last_mut().expect("a line").push(i);
        used += w;
    }
    lines
}

/// Height the legend's lines take under a plot, px.
fn legend_height(rows: &[(String, &str, Swatch)]) -> f64 {
    18.0 * legend_layout(rows).len() as f64
}

/// The legend in lines from `y` down (under the x axis's title), so it hides no data.
fn legend_below(out: &mut String, mut y: f64, rows: &[(String, &str, Swatch)]) {
    for line in legend_layout(rows) {
        let mut x = LEFT;
        for i in line {
            let (text, color, swatch) = &rows[i];
            match swatch {
                Swatch::Dot => {
                    let _ = write!(
                        out,
                        r##"<circle cx="{:.1}" cy="{:.1}" r="4" fill="{color}"/>"##,
                        x + 10.0,
                        y - 4.0
                    );
                }
                Swatch::Line(dash) => {
                    let _ = write!(
                        out,
                        r##"<line x1="{x:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>"##,
                        x + 20.0,
                        y - 4.0,
                        y - 4.0
                    );
                }
            }
            let _ = write!(
                out,
                r##"<text class="legend-item" x="{:.1}" y="{y:.1}" fill="#222">{}</text>"##,
                x + 26.0,
                escape(text)
            );
            x += legend_entry_width(text);
        }
        y += 18.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_and_labels() {
        assert_eq!(nice_axis(1795.16), (2000.0, 500.0));
        assert_eq!(nice_axis(0.9), (1.0, 0.2));
        // Minutes past 10 minutes step by whole minutes (50 min, not 83.3).
        assert_eq!(time_range(10_000.0), (10_000.0, 3000.0));
        assert_eq!(time_range(300.0), (300.0, 100.0));
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
    fn values_spanning_more_than_100x_get_a_log_axis() {
        let axis = |values: &[f64]| ValueAxis::fit(values.iter().copied(), true);
        assert_eq!(
            axis(&[0.0, 5.0, 400.0]),
            ValueAxis::Linear {
                max: 400.0,
                step: 100.0
            }
        );
        assert_eq!(axis(&[0.02, 5.0, 5000.0]), ValueAxis::Log { lo: -2, hi: 4 });
        assert_eq!(axis(&[10.0, 10000.0]), ValueAxis::Log { lo: 1, hi: 4 });
        assert!(matches!(
            ValueAxis::fit([0.02, 5000.0].into_iter(), false),
            ValueAxis::Linear { .. }
        ));

        // A mitigation at 5 ms beside a 5 s stall: its line stands well off the floor.
        let series = |name: &str, max: f64| Series {
            name: name.to_string(),
            color: color(0),
            dash: "",
            points: vec![(1.0, max / 10.0), (10.0, max / 2.0), (100.0, max)],
        };
        let svg = percentile_chart(
            "t",
            &[series("stall", 5000.0), series("mitigation", 5.0)],
            &[],
        );
        assert!(svg.contains("latency (ms), log scale"));
        let line = svg.split(r#"data-series="mitigation""#).nth(1).unwrap();
        let points = line.split(r#"points=""#).nth(1).unwrap();
        let top_y = points
            .split(['"', ' '])
            .take_while(|p| p.contains(','))
            .map(|p| p.split(',').nth(1).unwrap().parse::<f64>().unwrap())
            .fold(f64::MAX, f64::min);
        // The plot spans y 30..376 (346 px): on a linear axis 5 ms of 5000 would sit 0.3 px
        // above the floor; here it is more than a quarter up.
        assert!(top_y < 376.0 - 346.0 * 0.25, "{top_y}");
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
        // The axis ends where the data does (1/(1-p) = 1000: 99.9%), not at 99.9999%.
        assert!(svg.contains(">99.9%</text>") && !svg.contains(">99.99%</text>"));
        assert!(svg.contains("v2 (max 15 ms)"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }
}
