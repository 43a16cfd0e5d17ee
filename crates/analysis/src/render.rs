//! Terminal rendering of a [`Report`]: the numbers a reader needs at a glance, worst first.

use std::fmt::Write as _;

use crate::analyzer::Report;
use crate::terminal::dur;

/// `n/a` for what the input did not record (never 0).
fn opt_dur(ms: Option<f64>) -> String {
    ms.map_or_else(|| "n/a".to_string(), dur)
}

/// A CPU time as precisely as HotSpot measures it: in clock ticks of 10 ms (`times()`), for
/// `[Times:]` and `gc+cpu` lines and for a recording's `jdk.GCCPUTime` alike, whose ns carry
/// the ticks' float rounding (`PT0.009999997S`). So `110 ms`, not `110.0 ms` or `109.999997
/// ms`; a value off the ticks (another source's) keeps its precision.
fn cpu_dur(ms: f64) -> String {
    const TICK_MS: f64 = 10.0;
    let off_tick = (ms - (ms / TICK_MS).round() * TICK_MS).abs();
    if off_tick < 0.001 && ms < 10_000.0 {
        format!("{:.0} ms", (ms / TICK_MS).round() * TICK_MS)
    } else {
        dur(ms)
    }
}

/// Uptime when the log has it, else the wall-clock time of day (UTC).
fn when(e: &pauselab_pause::PauseEvent) -> String {
    match (e.start_ms, e.wall_start_ms) {
        (Some(uptime), _) => format!("{:.3}s", uptime / 1000.0),
        (None, Some(w)) => {
            let t = pauselab_pause::civil::format_epoch_ms(w as i64);
            t.get(11..23).unwrap_or(&t).to_string()
        }
        (None, None) => "?".to_string(),
    }
}

/// What the worst pauses' first column holds: uptime, or the time of day when no pause has it.
fn start_heading(r: &Report) -> &'static str {
    if r.worst.iter().any(|w| w.event.start_ms.is_some()) {
        "uptime"
    } else {
        "time (UTC)"
    }
}

/// The report as `pauselab analyze` prints it.
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
    for w in &r.pauses.worst_windows {
        let _ = writeln!(
            o,
            "  worst {:>2} min window: {:.1}% in pauses ({}) from {:.0} s",
            w.window_s / 60,
            w.share_pct,
            dur(w.pause_ms),
            w.start_s
        );
    }
    if !r.pauses.full_gc_causes.is_empty() {
        let causes: Vec<String> = r
            .pauses
            .full_gc_causes
            .iter()
            .map(|c| format!("{} x{} ({})", c.name, c.count, dur(c.total_ms)))
            .collect();
        let _ = writeln!(o, "  full collections by cause: {}", causes.join(", "));
    }
    let _ = writeln!(o);
    render_stalls_and_memory(&mut o, r);

    let s = &r.safepoints;
    if s.timeouts.count > 0 {
        let _ = writeln!(
            o,
            "Safepoint timeouts {} (-XX:+SafepointTimeout), {} with their safepoint line; not stopped in time: {}",
            s.timeouts.count,
            s.timeouts.matched,
            culprits(&s.timeouts.threads)
        );
    }
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
                opt_dur(s.ttsp_p99_ms),
                opt_dur(s.ttsp_max_ms),
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

    o.push_str(&worst_text(r));
    o.push_str(&findings_text(r));
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

/// The worst pauses as `analyze` prints them, longest first, each with its source line,
/// followed by a blank line; nothing when the input has no pause.
pub fn worst_text(r: &Report) -> String {
    let mut o = String::new();
    if !r.worst.is_empty() {
        let _ = writeln!(o, "Worst {} pauses", r.worst.len());
        let _ = writeln!(
            o,
            "  {:>12} {:>10} {:<36} {:>8} {:>8} {:>8} {:>9} {:>9}  where",
            start_heading(r),
            "duration",
            "pause (cause)",
            "user",
            "sys",
            "real",
            "ttsp",
            "stopped"
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
                Some(c) => (cpu_dur(c.user_ms), cpu_dur(c.sys_ms), cpu_dur(c.real_ms)),
                None => ("n/a".into(), "n/a".into(), "n/a".into()),
            };
            let at = e
                .source
                .as_ref()
                .map(|s| place(r, &s.file, s.line))
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

    o
}

/// The findings as `analyze` prints them: each with its evidence, every cause ranked by
/// what supports it, and the fixes; or one line saying why there are none.
pub fn findings_text(r: &Report) -> String {
    let mut o = String::new();
    if !r.has_events() {
        let _ = writeln!(
            o,
            "Findings   none: the log holds no GC event (no pause, safepoint, stall or collection cycle), so nothing could be judged"
        );
    } else if r.findings.is_empty() {
        let _ = writeln!(
            o,
            "Findings   none: no pause shows signs of the OS or the JVM's own machinery, and no rule on the collector's health fired"
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
                    "      - {}{at}: {} ({})",
                    e.what,
                    e.detail,
                    place(r, &e.file, e.line)
                );
            }
            if !f.threads.is_empty() {
                let _ = writeln!(o, "      threads: {}", culprits(&f.threads));
            }
            // Every cause, the best supported first, with what supports it.
            for (i, c) in f.causes.iter().enumerate() {
                let label = if i == 0 { "causes:" } else { "" };
                let _ = match &c.evidence {
                    Some(e) => writeln!(o, "      {label:<8}{}. {} [{e}]", i + 1, c.cause),
                    None => writeln!(o, "      {label:<8}{}. {}", i + 1, c.cause),
                };
            }
            for (i, fix) in f.fixes.iter().enumerate() {
                let label = if i == 0 { "fix:" } else { "" };
                let _ = writeln!(o, "      {label:<8}- {fix}");
            }
        }
    }
    o
}

/// Where a pause or safepoint came from: `gc.log:120` for a log line, `rec.jfr event 202`
/// for a recording, whose inputs have no line format and number their events instead.
fn place(r: &Report, file: &str, number: u64) -> String {
    let recording = r
        .inputs
        .iter()
        .any(|i| i.file == file && i.format.is_none());
    if recording {
        format!("{file} event {number}")
    } else {
        format!("{file}:{number}")
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

fn opt_mib(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "-".to_string(), mib)
}

fn render_stalls_and_memory(o: &mut String, r: &Report) {
    for (label, s) in [
        ("Alloc stalls", &r.allocation_stalls),
        ("Reloc stalls", &r.relocation_stalls),
    ] {
        if s.summary.count == 0 {
            continue;
        }
        let threads: Vec<String> = s
            .by_thread
            .iter()
            .take(3)
            .map(|t| format!("{} x{} ({})", t.name, t.count, dur(t.total_ms)))
            .collect();
        let _ = writeln!(
            o,
            "{label} {} stalls, {} in total, p99 {}, max {} (not safepoints); threads that waited most: {}",
            s.summary.count,
            dur(s.summary.total_ms),
            dur(s.summary.p99_ms),
            dur(s.summary.max_ms),
            threads.join(", ")
        );
    }
    let m = &r.memory;
    if m.heap_samples > 0 {
        let _ = writeln!(
            o,
            "Heap       after GC {} .. {} (last {}), before GC max {}, capacity max {}",
            opt_mib(m.heap_after_gc_min_bytes),
            opt_mib(m.heap_after_gc_max_bytes),
            opt_mib(m.heap_after_gc_last_bytes),
            opt_mib(m.heap_before_gc_max_bytes),
            opt_mib(m.heap_capacity_max_bytes)
        );
    }
    if let Some(rate) = m.allocation_rate_mib_s {
        let _ = writeln!(
            o,
            "Allocation {rate:.1} MiB/s ({} between collections)",
            opt_mib(m.allocated_bytes)
        );
    }
    if let Some(rate) = m.promotion_rate_mib_s {
        let _ = writeln!(
            o,
            "Promotion  {rate:.1} MiB/s ({} into the old generation)",
            opt_mib(m.promoted_bytes)
        );
    }
    for c in &m.cycles {
        let _ = writeln!(
            o,
            "Cycles     {:<24} {:>8} {:>10}  max {:>10}  (concurrent, not pauses)",
            c.name,
            c.count,
            dur(c.total_ms),
            dur(c.max_ms)
        );
    }
    if m.heap_samples > 0 || !m.cycles.is_empty() || r.allocation_stalls.summary.count > 0 {
        let _ = writeln!(o);
    }
}

/// `worker-1 (RUNNABLE) x2, worker-2 (RUNNABLE) x1`: the threads of safepoint timeouts.
fn culprits(threads: &[crate::timeouts::Culprit]) -> String {
    if threads.is_empty() {
        return "no thread listed".to_string();
    }
    threads
        .iter()
        .take(8)
        .map(|c| match &c.state {
            Some(state) => format!("{} ({state}) x{}", c.thread, c.timeouts),
            None => format!("{} x{}", c.thread, c.timeouts),
        })
        .chain((threads.len() > 8).then(|| format!("{} more", threads.len() - 8)))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use pauselab_pause::record::{Cpu, GcPause};
    use pauselab_pause::{Record, RecordSink, Stamp};

    use crate::{Analyzer, Options};

    /// A recording's CPU times are HotSpot's 10 ms clock ticks in ns, with the float
    /// rounding of `jfr print`'s `PT0.009999997S`: they print as a log's do (`10 ms`,
    /// `numbers_not_recorded_are_null_and_cpu_times_keep_the_logs_precision`), and a
    /// value off the ticks keeps its precision.
    #[test]
    fn a_recordings_cpu_times_print_to_the_ticks_they_were_measured_in() {
        let mut analyzer = Analyzer::new(Options::default());
        analyzer.begin_input("rec.jfr");
        let pause = GcPause {
            gc_id: Some(1),
            start: Stamp::default(),
            duration_ns: 48_250_000,
            name: "Pause Full".into(),
            cause: Some("System.gc()".into()),
            cpu: Some(Cpu {
                user_ns: 9_999_997,
                sys_ns: 12_345_678,
                real_ns: 50_000_001,
            }),
            heap: None,
            young: None,
            failures: Default::default(),
            upgraded_to_full: false,
            collector: None,
            generations: None,
            icms_duty_cycle: None,
        };
        let end = Stamp {
            uptime_ns: Some(2_000_000_000),
            ..Stamp::default()
        };
        analyzer.record(end, Record::Pause(pause), 1);
        analyzer.end_input(100);
        let mut report = analyzer.finish();
        // As `analyze` marks a recording: an input with no log format.
        report.inputs[0].format = None;
        let text = super::worst_text(&report);
        let row = text.lines().find(|l| l.contains("Pause Full")).unwrap();
        assert!(
            row.contains("   10 ms  12.3 ms    50 ms ") && row.contains("rec.jfr event 1"),
            "{text}"
        );
    }
}
