//! Per-variant measurements besides the pause histograms: the workload's own summary line,
//! what pauselab-gclog finds in the variant's GC log, and the process's run time. Every
//! measurement lands in summary.json; the experiment's `measurements` list picks the table
//! columns.

use std::path::Path;

use pauselab_analysis::{Analyzer, Options, PauseSink};
use pauselab_pause::{PauseEvent, PauseType};
use serde::Serialize;

use crate::measure::error::MeasureError;

pub use pauselab_bundle::Measurement;

/// Unit of a workload field, from its name's suffix (a rate keeps its unit before a
/// qualifier: `alloc_mib_per_s_from_start`).
pub fn unit_of(field: &str) -> &'static str {
    if field.contains("mib_per_s") {
        "MiB/s"
    } else if field.contains("_per_s") {
        "1/s"
    } else if field.ends_with("_ms") {
        "ms"
    } else if field.ends_with("_s") {
        "s"
    } else if field.ends_with("_bytes") {
        "B"
    } else {
        ""
    }
}

/// The numeric fields of the last `"type":"summary"` line of a workload's output, as
/// `workload.<field>`. Fields the workload marks unknown (NaN, null, negative sentinel
/// `-1`) are left out. None when there is no summary line (the workload died).
pub fn workload_summary(output: &Path) -> Option<Vec<Measurement>> {
    let text = std::fs::read_to_string(output).ok()?;
    let summary = text
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
        .find(|v| v["type"] == "summary")?;
    let fields = summary.as_object()?;
    Some(
        fields
            .iter()
            .filter_map(|(key, value)| {
                let v = value.as_f64()?;
                (v.is_finite() && v != -1.0)
                    .then(|| Measurement::new(&format!("workload.{key}"), v, unit_of(key)))
            })
            .collect(),
    )
}

/// What the GC log says, read with pauselab-gclog: GC pause count, total and maxima (all,
/// young, full), and the rules of `pauselab analyze` that fire. (Safepoints have their own
/// histogram in the summary.)
#[derive(Debug, Clone, Default, Serialize)]
pub struct GcLogMeasures {
    pub measurements: Vec<Measurement>,
    /// Rule names of the findings (`stopped-far-above-gc`, ...).
    pub findings: Vec<String>,
}

/// Reads `path`; pauses starting before `warmup_s` of JVM uptime are left out of the
/// maxima (not of the findings, which judge the whole log as `pauselab analyze` would).
pub fn gc_log(path: &Path, warmup_s: f64) -> Result<GcLogMeasures, MeasureError> {
    #[derive(Default)]
    struct Maxima {
        count: u64,
        max_ms: f64,
        max_young_ms: f64,
        max_full_ms: f64,
        total_ms: f64,
        warmup_ms: f64,
        over_1s: u64,
        /// CPU times of the longest pause, when the log gives them.
        max_cpu: Option<pauselab_pause::CpuTimes>,
    }
    impl PauseSink for Maxima {
        fn pause(&mut self, event: &PauseEvent) {
            // The lab's own logs always have uptime; a pause without it is not in warm-up.
            if event.start_ms.is_some_and(|start| start < self.warmup_ms) {
                return;
            }
            self.count += 1;
            self.total_ms += event.duration_ms;
            if event.duration_ms >= 1000.0 {
                self.over_1s += 1;
            }
            if event.duration_ms > self.max_ms {
                self.max_cpu = event.cpu;
            }
            self.max_ms = self.max_ms.max(event.duration_ms);
            if is_young(&event.name) {
                self.max_young_ms = self.max_young_ms.max(event.duration_ms);
            }
            if is_full(&event.name) {
                self.max_full_ms = self.max_full_ms.max(event.duration_ms);
            }
        }
    }
    let inputs = pauselab_gclog::input::expand(&[path.display().to_string()])?;
    let mut maxima = Maxima {
        warmup_ms: warmup_s * 1000.0,
        ..Maxima::default()
    };
    let mut analyzer = Analyzer::new(Options::default()).with_sink(&mut maxima);
    pauselab_gclog::analyze_inputs(&inputs, &mut analyzer)?;
    let report = analyzer.finish();
    let mut measurements = vec![
        Measurement::new("gc.pauses", maxima.count as f64, ""),
        Measurement::new("gc.total_pause_ms", maxima.total_ms, "ms"),
        Measurement::new("gc.max_pause_ms", maxima.max_ms, "ms"),
        Measurement::new("gc.max_young_pause_ms", maxima.max_young_ms, "ms"),
        Measurement::new("gc.pauses_over_1s", maxima.over_1s as f64, ""),
    ];
    // user, sys and real of the longest pause (`gc+cpu`, `[Times: ...]`): real far above
    // user + sys is a pause spent waiting (for swap-ins, the disk, the CPU quota).
    if let Some(cpu) = maxima.max_cpu {
        measurements.push(Measurement::new("gc.max_pause_user_ms", cpu.user_ms, "ms"));
        measurements.push(Measurement::new("gc.max_pause_sys_ms", cpu.sys_ms, "ms"));
        measurements.push(Measurement::new("gc.max_pause_real_ms", cpu.real_ms, "ms"));
    }
    if maxima.max_full_ms > 0.0 {
        measurements.push(Measurement::new(
            "gc.max_full_pause_ms",
            maxima.max_full_ms,
            "ms",
        ));
    }
    Ok(GcLogMeasures {
        measurements,
        findings: report.findings.iter().map(|f| f.rule.to_string()).collect(),
    })
}

/// Young (and G1 mixed) collections of every collector's log names.
fn is_young(name: &str) -> bool {
    PauseType::of(name).is_young()
}

fn is_full(name: &str) -> bool {
    PauseType::of(name) == PauseType::Full
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_follow_the_field_names() {
        assert_eq!(unit_of("mib_per_s"), "MiB/s");
        assert_eq!(unit_of("alloc_mib_per_s_from_start"), "MiB/s");
        assert_eq!(unit_of("classes_per_s"), "1/s");
        assert_eq!(unit_of("max_gap_ms"), "ms");
        assert_eq!(unit_of("elapsed_s"), "s");
        assert_eq!(unit_of("max_heap_bytes"), "B");
        assert_eq!(unit_of("gc_count"), "");
    }

    #[test]
    fn summary_line_fields_become_measurements() {
        let dir = std::env::temp_dir().join(format!("pauselab-measure-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("workload.out");
        std::fs::write(
            &out,
            "{\"type\":\"interval\",\"mib_per_s\":1.0}\nnot json\n\
             {\"type\":\"summary\",\"workload\":\"MakeGarbage\",\"mib_per_s\":200.5,\"max_gap_ms\":12.0,\"process_start_to_main_ms\":-1,\"touch_mib_per_s\":null}\n",
        )
        .unwrap();
        let m = workload_summary(&out).unwrap();
        let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["workload.max_gap_ms", "workload.mib_per_s"]);
        assert_eq!(m[1].value, 200.5);
        std::fs::write(&out, "{\"type\":\"interval\"}\n").unwrap();
        assert!(workload_summary(&out).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn gc_log_measures_on_a_real_log() {
        let log =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/gclogs/demo-g1-jdk17.log");
        let m = gc_log(&log, 0.0).unwrap();
        let get = |n: &str| m.measurements.iter().find(|x| x.name == n).map(|x| x.value);
        assert!(get("gc.pauses").unwrap() > 0.0);
        assert!(get("gc.max_young_pause_ms").unwrap() > 0.0);
        assert!(get("gc.max_pause_ms").unwrap() >= get("gc.max_young_pause_ms").unwrap());
        let garbage = std::env::temp_dir().join(format!("pauselab-garbage-{}", std::process::id()));
        std::fs::write(&garbage, "hello\nworld\n").unwrap();
        let err = gc_log(&garbage, 0.0).unwrap_err();
        assert!(matches!(err, MeasureError::GcLog(_)), "{err}");
        let err = err.to_string();
        assert!(err.contains(&garbage.display().to_string()), "{err}");
        std::fs::remove_file(&garbage).unwrap();
    }

    #[test]
    fn the_longest_pause_brings_its_cpu_times() {
        // A Parallel GC log of a JVM whose heap was swapped out (JDK 17, `gc*,gc+cpu`).
        let log = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/gclogs/parallel-swapped-jdk17.log");
        let m = gc_log(&log, 0.0).unwrap();
        let get = |n: &str| m.measurements.iter().find(|x| x.name == n).map(|x| x.value);
        // Independently: the `User=.. Sys=.. Real=..` line with the largest Real.
        let text = std::fs::read_to_string(&log).unwrap();
        let seconds = |line: &str, key: &str| -> f64 {
            let at = line.find(key).unwrap() + key.len();
            line[at..].split('s').next().unwrap().parse().unwrap()
        };
        let worst = text
            .lines()
            .filter(|l| l.contains(" Real="))
            .max_by(|a, b| seconds(a, "Real=").total_cmp(&seconds(b, "Real=")))
            .unwrap();
        let close = |a: f64, b: f64| (a - b).abs() <= 10.0;
        assert!(close(
            get("gc.max_pause_real_ms").unwrap(),
            seconds(worst, "Real=") * 1000.0
        ));
        assert!(close(
            get("gc.max_pause_sys_ms").unwrap(),
            seconds(worst, "Sys=") * 1000.0
        ));
        assert!(close(
            get("gc.max_pause_user_ms").unwrap(),
            seconds(worst, "User=") * 1000.0
        ));
        let over_1s = text
            .lines()
            .filter(|l| l.contains("Pause") && l.ends_with("ms"))
            .filter_map(|l| {
                l.rsplit(' ')
                    .next()?
                    .trim_end_matches("ms")
                    .parse::<f64>()
                    .ok()
            })
            .filter(|ms| *ms >= 1000.0)
            .count();
        assert_eq!(get("gc.pauses_over_1s").unwrap(), over_1s as f64);
        assert!(
            m.findings.iter().any(|f| f == "sys_gt_user"),
            "{:?}",
            m.findings
        );
    }
}
