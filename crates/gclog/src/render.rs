//! Terminal rendering of a [`Report`]: the numbers a reader needs at a glance, worst first.

use std::fmt::Write as _;

use crate::analysis::Report;

fn dur(ms: f64) -> String {
    if ms >= 10_000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else if ms >= 1000.0 {
        format!("{:.3} s", ms / 1000.0)
    } else if ms >= 10.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.3} ms")
    }
}

fn opt_dur(ms: Option<f64>) -> String {
    ms.map_or_else(|| "-".to_string(), dur)
}

/// Uptime when the log has it, else the wall-clock time of day (UTC).
fn when(e: &pauselab_pause::PauseEvent) -> String {
    match e.wall_start_ms {
        Some(w) if e.start_ms == 0.0 => {
            let t = crate::num::format_epoch_ms(w as i64);
            t.get(11..23).unwrap_or(&t).to_string()
        }
        _ => format!("{:.3}s", e.start_ms / 1000.0),
    }
}

pub fn render_text(r: &Report) -> String {
    let mut o = String::new();
    let files: Vec<String> = r
        .inputs
        .iter()
        .map(|f| match f.format {
            Some(fmt) => format!(
                "{} ({})",
                f.file,
                serde_json::to_value(fmt)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            ),
            None => f.file.clone(),
        })
        .collect();
    let _ = writeln!(o, "Log        {}", files.join(", "));
    let _ = writeln!(
        o,
        "JVM        {}, collector {}",
        r.jvm
            .version
            .as_deref()
            .map_or("version not in log".to_string(), |v| format!("JDK {v}")),
        r.jvm.collector.as_deref().unwrap_or("not in log")
    );
    let mut span = format!("{:.1} s covered", r.span.covered_s);
    if let (Some(a), Some(b)) = (&r.span.start_wall, &r.span.end_wall) {
        let _ = write!(span, ", {a} .. {b}");
    } else if let (Some(a), Some(b)) = (r.span.start_uptime_s, r.span.end_uptime_s) {
        let _ = write!(span, ", uptime {a:.3} s .. {b:.3} s");
    }
    let _ = writeln!(o, "Time       {span}");
    let _ = writeln!(o);

    let p = &r.pauses.summary;
    let _ = writeln!(
        o,
        "GC pauses  {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8}",
        "count", "total", "p50", "p90", "p99", "p99.9", "max", "of time"
    );
    let _ = writeln!(
        o,
        "           {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8}",
        p.count,
        dur(p.total_ms),
        dur(p.p50_ms),
        dur(p.p90_ms),
        dur(p.p99_ms),
        dur(p.p99_9_ms),
        dur(p.max_ms),
        r.pauses
            .share_pct
            .map_or("-".into(), |s| format!("{s:.2}%"))
    );
    for n in r.pauses.by_name.iter().take(12) {
        let _ = writeln!(
            o,
            "  {:<40} {:>8} {:>10}  max {:>10}",
            n.name,
            n.count,
            dur(n.total_ms),
            dur(n.max_ms)
        );
    }
    let _ = writeln!(o);

    let s = &r.safepoints;
    match s.source {
        None => {
            let _ = writeln!(
                o,
                "Safepoints none in the log (add -Xlog:safepoint, or -XX:+PrintGCApplicationStoppedTime on JDK 8)"
            );
        }
        Some(source) => {
            let _ = writeln!(
                o,
                "Safepoints {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8}",
                "count", "total", "p99", "max", "ttsp p99", "ttsp max", "stopped"
            );
            let _ = writeln!(
                o,
                "           {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8}",
                s.summary.count,
                dur(s.summary.total_ms),
                dur(s.summary.p99_ms),
                dur(s.summary.max_ms),
                dur(s.ttsp_p99_ms),
                dur(s.ttsp_max_ms),
                s.stopped_share_pct
                    .map_or("-".into(), |v| format!("{v:.2}%"))
            );
            if source == "safepoint_statistics" {
                let _ = writeln!(o, "  (from -XX:+PrintSafepointStatistics)");
            }
            let _ = writeln!(
                o,
                "  not GCs: {} safepoints, {}",
                s.non_gc_count,
                dur(s.non_gc_total_ms)
            );
            for op in s.operations.iter().take(8) {
                let _ = writeln!(
                    o,
                    "  {:<40} {:>8} {:>10}  max {:>10}{}",
                    op.name,
                    op.count,
                    dur(op.total_ms),
                    dur(op.max_ms),
                    if op.gc == Some(false) {
                        "  (not a GC)"
                    } else {
                        ""
                    }
                );
            }
        }
    }
    let _ = writeln!(o);

    if !r.worst.is_empty() {
        let _ = writeln!(o, "Worst {} pauses", r.worst.len());
        let _ = writeln!(
            o,
            "  {:>12} {:>10} {:<36} {:>8} {:>8} {:>8} {:>9} {:>9}  where",
            "uptime", "duration", "pause (cause)", "user", "sys", "real", "ttsp", "stopped"
        );
        for w in &r.worst {
            let e = &w.event;
            let what = match &e.cause {
                Some(c) => format!("{} ({c})", e.name),
                None => e.name.clone(),
            };
            let what: String = if what.chars().count() > 36 {
                what.chars().take(35).chain(std::iter::once('…')).collect()
            } else {
                what
            };
            let (u, sy, re) = match e.cpu {
                Some(c) => (dur(c.user_ms), dur(c.sys_ms), dur(c.real_ms)),
                None => ("-".into(), "-".into(), "-".into()),
            };
            let at = e
                .source
                .as_ref()
                .map(|s| format!("{}:{}", s.file, s.line))
                .unwrap_or_default();
            let _ = writeln!(
                o,
                "  {:>12} {:>10} {:<36} {:>8} {:>8} {:>8} {:>9} {:>9}  {}",
                when(e),
                dur(e.duration_ms),
                what,
                u,
                sy,
                re,
                opt_dur(e.ttsp_ms),
                opt_dur(w.stopped_ms),
                at
            );
        }
        let _ = writeln!(o);
    }

    if r.findings.is_empty() {
        let _ = writeln!(
            o,
            "Findings   none: no pause shows signs of the OS or the JVM's own machinery"
        );
    } else {
        let _ = writeln!(o, "Findings");
        for f in &r.findings {
            let _ = writeln!(o, "  [{}] {}: {}", f.severity.as_str(), f.rule, f.title);
            let _ = writeln!(o, "      confidence: {}", f.confidence);
            for e in f.evidence.iter().take(3) {
                let at = e.uptime_s.map_or(String::new(), |u| format!(" at {u:.3}s"));
                let _ = writeln!(
                    o,
                    "      - {}{at}: {} ({}:{})",
                    e.what, e.detail, e.file, e.line
                );
            }
            if let Some(c) = f.causes.first() {
                let _ = writeln!(
                    o,
                    "      likely: {}",
                    f.causes
                        .iter()
                        .take(2)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join("; ")
                );
                let _ = c;
            }
            if !f.fixes.is_empty() {
                let _ = writeln!(
                    o,
                    "      fix:    {}",
                    f.fixes
                        .iter()
                        .take(2)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join("; ")
                );
            }
        }
    }
    let _ = writeln!(o);
    match &r.first_unparsed {
        Some(u) => {
            let _ = writeln!(
                o,
                "Unparsed   {} lines; first at {}:{}: {}",
                r.unparsed_lines, u.file, u.line, u.text
            );
        }
        None => {
            let _ = writeln!(o, "Unparsed   0 lines");
        }
    }
    o
}
