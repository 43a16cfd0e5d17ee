//! The terminal and `--json` wording of what a JFR recording adds to `pauselab analyze`'s
//! report (allocation stalls, heap, CPU load, memory).

use std::fmt::Write as _;

use pauselab_analysis::Report;
use pauselab_jfr::RecordingExtras;
use serde::Serialize;

/// The `--json` object for recordings: the GC-log report's fields plus `jfr`.
#[derive(Serialize)]
pub struct JfrReport<'r> {
    #[serde(flatten)]
    pub report: &'r Report,
    pub jfr: &'r [RecordingExtras],
}

/// The text report's JFR section.
pub fn render(extras: &[RecordingExtras]) -> String {
    let mut o = String::new();
    for r in extras {
        let e = &r.extras;
        let _ = writeln!(
            o,
            "Recording  {}: {} chunk(s), {} events read",
            r.file, e.chunks, e.events
        );
        match &e.allocation_stalls {
            Some(s) => {
                let pages: Vec<String> = s
                    .by_page_type
                    .iter()
                    .map(|p| format!("{} {}", p.page_type, p.count))
                    .collect();
                let _ = writeln!(
                    o,
                    "Stalls     {} ZGC allocation stalls, total {:.1} ms, p99 {:.1} ms, max {:.1} ms ({})",
                    s.summary.count,
                    s.summary.total_ms,
                    s.summary.p99_ms,
                    s.summary.max_ms,
                    pages.join(", ")
                );
            }
            None => {
                let _ = writeln!(o, "Stalls     no ZGC allocation stalls recorded");
            }
        }
        if let Some(h) = &e.heap {
            let _ = writeln!(
                o,
                "Heap       {} collections: before up to {:.0} MB, after up to {:.0} MB (mean {:.0} MB), committed up to {:.0} MB",
                h.collections, h.max_before_mb, h.max_after_mb, h.mean_after_mb, h.max_committed_mb
            );
        }
        if let Some(c) = &e.cpu_load {
            let _ = writeln!(
                o,
                "CPU load   machine mean {:.0}% (max {:.0}%), JVM user {:.0}% system {:.0}% ({} samples)",
                c.machine_total_mean_pct,
                c.machine_total_max_pct,
                c.jvm_user_mean_pct,
                c.jvm_system_mean_pct,
                c.samples
            );
        }
        if let Some(m) = &e.physical_memory {
            let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
            let _ = writeln!(
                o,
                "Memory     physical {:.1} GiB, at most {:.1} GiB in use (least free {:.1} GiB; {} samples)",
                gib(m.total_bytes),
                gib(m.max_used_bytes),
                gib(m.min_free_bytes),
                m.samples
            );
        }
    }
    o
}
