//! What a report shows, whatever its input: sections (one per bundle, or one for a set of
//! interval logs), each with variants, their summaries and verdicts, the SLA check and the
//! matrix across bundles. Renderers (terminal, JSON, HTML, PNG) read only this.

use std::path::{Path, PathBuf};

use pauselab_pause::interval_log::TagFilter;
use pauselab_pause::units::{parse_duration, TimeUnit};
use pauselab_pause::PauseEvent;
use serde::Serialize;

use crate::bundle::{Bundle, HostSeries, VariantVerdict, Verdict, Vulnerable};
use crate::summary::{LogSummary, Stats};
use crate::ReportError;

/// One variant (or one log) in a section.
#[derive(Debug, Clone)]
pub struct VariantReport {
    pub id: String,
    pub label: String,
    pub variant: String,
    pub jdk: Option<String>,
    pub description: Option<String>,
    pub hiccups: Option<LogSummary>,
    pub safepoints: Option<LogSummary>,
    /// Pauses from the variant's GC log, offsets in seconds since the section's start.
    pub pauses: Vec<(f64, PauseEvent)>,
    /// What the analysis of the variant's GC log or recording found, when it has one.
    pub diagnosis: Option<crate::diagnosis::Diagnosis>,
    pub verdict: Option<VariantVerdict>,
    pub evidence: Option<String>,
    pub measurements: Vec<crate::bundle::Measurement>,
    /// The longest pause after the warm-up by the metric the verdict used: the stop max
    /// (safepoints or workload gap) when the bundle has it, else the safepoint max, else
    /// the hiccup max (ms).
    pub judged_max_ms: Option<f64>,
}

impl VariantReport {
    /// The measurement `name` formatted for a table cell, `-` when the variant has none.
    pub fn measurement_cell(&self, name: &str) -> String {
        self.measurements
            .iter()
            .find(|m| m.name == name)
            .map(|m| crate::table::format_measurement(m.value, &m.unit))
            .unwrap_or_else(|| "-".into())
    }
}

/// One bundle, or a set of interval logs.
#[derive(Debug, Clone, Default)]
pub struct Section {
    /// HTML anchor, unique in a report.
    pub id: String,
    pub title: String,
    pub source: String,
    /// Host and run facts, in display order.
    pub facts: Vec<(String, String)>,
    pub result: Option<Vulnerable>,
    /// The bundle's verdict.json: its reasons per JDK, notes and what kept the host busy.
    pub verdict: Option<Verdict>,
    pub default_variant: Option<String>,
    pub baseline_variant: Option<String>,
    pub kernel: Option<String>,
    pub hostname: Option<String>,
    /// What was stressed, for the matrix's rows (`slow loop device, 4 MB/s, stable pages`).
    pub disk: Option<String>,
    /// The stressed filesystem.
    pub filesystem: Option<String>,
    /// The slow device's mount options, `defaults` when none were given.
    pub mount_options: Option<String>,
    /// The matrix cell and repeat the bundle ran, when it is part of a matrix run.
    pub cell: Option<pauselab_bundle::CellEntry>,
    pub variants: Vec<VariantReport>,
    pub host: Option<HostSeries>,
    /// Heap and pause series of a GC log given as input.
    pub gc: Option<crate::gc::GcSeries>,
    /// Measurements shown as a table beside the pause table (empty: none).
    pub measurement_columns: Vec<String>,
    /// Interval logs given as inputs: each variant's worst intervals are shown.
    pub interval_logs: bool,
}

fn slug(text: &str) -> String {
    let mut s: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    while s.contains("--") {
        s = s.replace("--", "-");
    }
    s.trim_matches('-').to_string()
}

fn file_stem(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| path.display().to_string())
}

/// Names for inputs that tell them apart: each file's name, with as many parent directories
/// as it takes to differ from every other input (`a/gc.log`, `b/gc.log`; `gc.log` alone).
pub fn distinct_names(paths: &[PathBuf]) -> Vec<String> {
    let parts: Vec<Vec<String>> = paths
        .iter()
        .map(|p| {
            p.components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect()
        })
        .collect();
    let tail = |i: usize, k: usize| {
        let c = &parts[i];
        c[c.len().saturating_sub(k)..]
            .join("/")
            .replacen("//", "/", 1)
    };
    (0..paths.len())
        .map(|i| {
            let mut k = 1;
            while k < parts[i].len()
                && (0..paths.len())
                    .any(|j| j != i && parts[j] != parts[i] && tail(j, k) == tail(i, k))
            {
                k += 1;
            }
            tail(i, k)
        })
        .collect()
}

impl Section {
    pub fn from_bundle(bundle: &Bundle) -> Section {
        Self::of_bundle(bundle, false)
    }

    /// The same, with the pause markers of variants that have a JFR recording and no GC
    /// log.
    pub fn from_bundle_with_recordings(bundle: &Bundle) -> Section {
        Self::of_bundle(bundle, true)
    }

    /// A bundle's section; `recordings`: variants with a JFR recording and no GC log get
    /// the recording's pause markers.
    fn of_bundle(bundle: &Bundle, recordings: bool) -> Section {
        let m = &bundle.manifest;
        let h = &m.host;
        let mut facts = Vec::new();
        let mut fact = |k: &str, v: Option<String>| {
            if let Some(v) = v.filter(|v| !v.is_empty()) {
                facts.push((k.to_string(), v));
            }
        };
        fact("host", h.hostname.clone());
        fact("kernel", h.kernel.clone());
        fact("distribution", h.distribution.clone());
        fact(
            "CPU",
            h.cpu.clone().map(|c| match h.cpus {
                Some(n) => format!("{c} ({n} CPUs)"),
                None => c,
            }),
        );
        fact(
            "memory",
            h.memory_bytes
                .map(|b| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)),
        );
        fact(
            "swap",
            h.swap_bytes.map(|b| {
                if b == 0 {
                    "none".to_string()
                } else {
                    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
                }
            }),
        );
        fact("THP", h.thp.clone());
        if let Some(dirty) = h.dirty.as_ref().filter(|d| !d.is_empty()) {
            fact(
                "dirty",
                Some(
                    dirty
                        .iter()
                        .filter(|(_, v)| !v.is_null())
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
            );
        }
        for p in &h.paths {
            let mut text = p.path.clone();
            if let Some(fs) = &p.filesystem {
                text.push_str(&format!(" ({fs}"));
                if let Some(dev) = &p.device {
                    text.push_str(&format!(" on {dev}"));
                }
                if let Some(sw) = p.stable_writes {
                    text.push_str(if sw { ", stable_writes" } else { "" });
                }
                text.push(')');
            }
            fact(&format!("{} path", p.role), Some(text));
        }
        fact(
            "JDKs",
            Some(
                m.jdks
                    .iter()
                    .map(|j| match &j.version {
                        Some(v) => format!("{} ({v})", j.id),
                        None => j.id.clone(),
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        );
        fact("fault injection", m.fault_injection.clone());
        if let (Some(s), Some(e)) = (m.start_time_s, m.end_time_s) {
            fact(
                "run",
                Some(format!(
                    "{}, {:.0} s",
                    pauselab_pause::interval_log::java_date_utc(s),
                    e - s
                )),
            );
        }
        if let Some(skipped) = bundle.host_series.as_ref().map(|h| h.skipped) {
            fact(
                "host series",
                (skipped > 0)
                    .then(|| format!("{skipped} samples not finite (NaN or infinite), left out")),
            );
        }
        let start = m.start_time_s;
        let variants = bundle
            .variants
            .iter()
            .map(|v| {
                let gc = match (&v.gc_log, &v.recording, recordings) {
                    (Some(log), _, _) => crate::gc::variant_gc(log, start),
                    (None, Some(rec), true) => crate::gc::variant_recording(rec, start),
                    _ => crate::gc::VariantGc::default(),
                };
                VariantReport {
                    id: v.entry.id.clone(),
                    label: v.label(),
                    variant: v.entry.variant.clone(),
                    jdk: v.entry.jdk.clone(),
                    description: v.entry.description.clone(),
                    hiccups: v.hiccups.clone(),
                    safepoints: v.safepoints.clone(),
                    pauses: gc.pauses,
                    diagnosis: gc.diagnosis,
                    verdict: v.verdict.as_ref().map(|x| x.verdict),
                    evidence: v
                        .verdict
                        .as_ref()
                        .map(|x| x.evidence.clone())
                        .filter(|e| !e.is_empty()),
                    measurements: v
                        .verdict
                        .as_ref()
                        .map(|x| x.measurements.clone())
                        .unwrap_or_default(),
                    judged_max_ms: v.verdict.as_ref().and_then(|x| {
                        x.stops
                            .as_ref()
                            .or(x.safepoints.as_ref())
                            .or(x.hiccups.as_ref())
                            .map(|s| s.max_ms)
                    }),
                }
            })
            .collect();
        Section {
            id: slug(&format!("{}-{}", bundle.title(), file_stem(&bundle.dir))),
            title: bundle.title(),
            source: bundle.dir.display().to_string(),
            facts,
            result: bundle.verdict.as_ref().map(|v| v.result),
            verdict: bundle.verdict.clone(),
            default_variant: m.experiment.default_variant.clone(),
            baseline_variant: m.experiment.baseline_variant.clone(),
            kernel: h.kernel.clone(),
            hostname: h.hostname.clone(),
            disk: bundle.disk(),
            filesystem: bundle.filesystem(),
            mount_options: bundle.mount_options(),
            cell: m.cell.clone(),
            variants,
            host: bundle.host_series.clone(),
            gc: None,
            measurement_columns: m.experiment.measurement_columns(),
            interval_logs: false,
        }
    }

    /// A section comparing interval logs side by side, one "variant" per file, each labelled
    /// with its name (from [`distinct_names`]).
    pub fn from_logs(logs: &[(PathBuf, String)], tag: &TagFilter) -> Result<Section, ReportError> {
        let mut variants = Vec::new();
        for (path, name) in logs {
            let summary = LogSummary::read(path, tag.clone(), None, None)?;
            variants.push(VariantReport {
                id: slug(name),
                label: name.clone(),
                variant: name.clone(),
                jdk: None,
                description: None,
                hiccups: Some(summary),
                safepoints: None,
                pauses: Vec::new(),
                diagnosis: None,
                verdict: None,
                evidence: None,
                measurements: Vec::new(),
                judged_max_ms: None,
            });
        }
        let mut facts = Vec::new();
        if let Some(start) = variants
            .first()
            .and_then(|v| v.hiccups.as_ref()?.start_s)
            .filter(|s| *s > 1e8)
        {
            facts.push((
                "start".to_string(),
                pauselab_pause::interval_log::java_date_utc(start),
            ));
        }
        Ok(Section {
            id: "interval-logs".to_string(),
            title: match logs {
                [(_, name)] => name.clone(),
                _ => format!("{} interval logs", logs.len()),
            },
            source: logs
                .iter()
                .map(|(p, _)| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            facts,
            variants,
            interval_logs: true,
            ..Section::default()
        })
    }

    /// A GC log analysed on the fly: its pauses as one variant, labelled `name` (from
    /// [`distinct_names`]).
    pub fn from_gc_log(path: &Path, name: &str) -> Result<Section, ReportError> {
        let summary = crate::gc::pause_summary(path)?;
        Ok(Self::gc_pauses(path, name, summary, "GC pauses"))
    }

    /// A JFR recording's GC pauses: the same charts as a GC log's.
    pub fn from_recording(path: &Path, name: &str) -> Result<Section, ReportError> {
        let source = path.display().to_string();
        let summary = crate::gc::summarize(
            &source,
            crate::gc::read_recording(path)?,
            "no GC pauses in the recording (record with jdk.GCPhasePause and jdk.GarbageCollection enabled, see docs/jfr.md)",
        )?;
        Ok(Self::gc_pauses(path, name, summary, "GC pauses (JFR)"))
    }

    fn gc_pauses(path: &Path, name: &str, read: crate::gc::GcLogSummary, what: &str) -> Section {
        let jvm = &read.diagnosis.jvm;
        let mut facts = Vec::new();
        if let Some(version) = &jvm.version {
            facts.push(("JVM".to_string(), version.clone()));
        }
        if let Some(collector) = &jvm.collector {
            facts.push(("collector".to_string(), collector.clone()));
        }
        facts.push(("pauses".to_string(), read.pauses.len().to_string()));
        if let Some(longest) = read.diagnosis.longest_ms() {
            // The table's max comes from a histogram (3 significant digits).
            let source = if read.diagnosis.recordings.is_empty() {
                "the log"
            } else {
                "the recording"
            };
            facts.push((
                "longest pause".to_string(),
                format!("{longest} ms (exact, from {source})"),
            ));
        }
        Section {
            id: slug(&format!("gc-{name}")),
            title: format!("{what}: {name}"),
            source: path.display().to_string(),
            facts,
            variants: vec![VariantReport {
                id: slug(name),
                label: format!("{name} (GC pauses)"),
                variant: name.to_string(),
                jdk: None,
                description: None,
                hiccups: Some(read.summary),
                safepoints: None,
                pauses: read.pauses,
                diagnosis: Some(read.diagnosis),
                verdict: None,
                evidence: None,
                measurements: Vec::new(),
                judged_max_ms: None,
            }],
            gc: Some(read.series),
            ..Section::default()
        }
    }

    /// Longest run among the variants, seconds.
    pub fn span_s(&self) -> f64 {
        self.variants
            .iter()
            .flat_map(|v| v.hiccups.iter().chain(v.safepoints.iter()))
            .flat_map(|s| s.intervals.last().map(|i| i.offset_s + i.length_s))
            .fold(0.0, f64::max)
    }
}

/// Service level: a maximum latency per percentile ("p99=10ms,p99.9=50ms,max=200ms").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sla {
    /// (percentile 0..=100, limit ms), ascending percentiles; `max` is 100.
    pub limits: Vec<(f64, f64)>,
}

impl Sla {
    pub fn parse(spec: &str) -> Result<Sla, String> {
        let mut limits = Vec::new();
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| format!("{part:?}: expected pNN=LIMIT or max=LIMIT"))?;
            let pct = match key.trim() {
                "max" => 100.0,
                k => k
                    .strip_prefix('p')
                    .and_then(|n| n.parse::<f64>().ok())
                    .filter(|p| *p > 0.0 && *p <= 100.0)
                    .ok_or_else(|| format!("{key:?}: expected a percentile like p99.9 or max"))?,
            };
            // A bare number is milliseconds, the unit of the limits.
            let limit =
                parse_duration(value, Some(TimeUnit::Milliseconds)).map_err(|e| e.to_string())?;
            let ms = limit.as_nanos() as f64 / 1e6;
            limits.push((pct, ms));
        }
        if limits.is_empty() {
            return Err("empty SLA: expected e.g. p99=10ms,p99.9=50ms,max=200ms".to_string());
        }
        limits.sort_by(|a, b| a.0.total_cmp(&b.0));
        Ok(Sla { limits })
    }

    /// The limits a histogram breaks: (percentile, limit ms, actual ms).
    pub fn breaches(&self, summary: &LogSummary, unit_ratio: f64) -> Vec<(f64, f64, f64)> {
        self.limits
            .iter()
            .filter_map(|(pct, limit)| {
                let actual = summary.histogram.value_at_quantile(pct / 100.0) as f64 / unit_ratio;
                (actual > *limit).then_some((*pct, *limit, actual))
            })
            .collect()
    }

    /// Whether any variant of `sections` breaks this service level.
    pub fn breached_by(&self, sections: &[Section], unit_ratio: f64) -> bool {
        sections
            .iter()
            .flat_map(|s| &s.variants)
            .filter_map(|v| v.hiccups.as_ref())
            .any(|h| !self.breaches(h, unit_ratio).is_empty())
    }
}

pub fn variant_anchor(section: &Section, variant: &VariantReport) -> String {
    format!("{}-{}", section.id, slug(&variant.id))
}

/// A variant's verdict for people: `no stalls`, `unknown` when there is none.
pub fn verdict_words(verdict: Option<VariantVerdict>) -> String {
    verdict
        .map_or("unknown", VariantVerdict::as_str)
        .replace('_', " ")
}

/// The JSON form of a variant (values in the logs' recorded unit, ns).
pub fn variant_json(v: &VariantReport, sla: Option<&Sla>, unit_ratio: f64) -> serde_json::Value {
    let log = |s: &Option<LogSummary>| {
        s.as_ref().map(|s| {
            serde_json::json!({
                "file": s.source, "intervals": s.intervals.len(), "span_s": s.span_s(),
                "stats": Stats::of(&s.histogram), "worst_intervals": s.worst,
            })
        })
    };
    let mut doc = serde_json::json!({
        "id": v.id, "label": v.label, "variant": v.variant, "jdk": v.jdk,
        "description": v.description, "verdict": v.verdict, "evidence": v.evidence,
        "hiccups": log(&v.hiccups), "safepoints": log(&v.safepoints),
        "gc_pauses": v.pauses.len(),
        "gc_pause_max_ms": v.pauses.iter().map(|p| p.1.duration_ms).fold(None, |a: Option<f64>, d| Some(a.map_or(d, |a| a.max(d)))),
    });
    if let Some(d) = &v.diagnosis {
        // As `pauselab analyze --json` gives them.
        doc["findings"] = serde_json::Value::Array(d.findings.clone());
        doc["worst_pauses"] = serde_json::to_value(&d.worst).unwrap_or_default();
    }
    if let (Some(sla), Some(h)) = (sla, &v.hiccups) {
        let breaches: Vec<_> = sla
            .breaches(h, unit_ratio)
            .into_iter()
            .map(|(p, limit, actual)| serde_json::json!({ "percentile": p, "limit_ms": limit, "actual_ms": actual }))
            .collect();
        doc["sla"] = serde_json::json!({ "met": breaches.is_empty(), "breaches": breaches });
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sla_parses_units_and_sorts() {
        let sla = Sla::parse("max=1s, p99=500us,p99.9=20").unwrap();
        assert_eq!(sla.limits, vec![(99.0, 0.5), (99.9, 20.0), (100.0, 1000.0)]);
        assert!(Sla::parse("p99").is_err());
        assert!(Sla::parse("p101=1ms").is_err());
        assert!(Sla::parse("p99=fast").is_err());
        assert!(Sla::parse("").is_err());
    }

    #[test]
    fn distinct_names_add_directories_only_where_names_collide() {
        let paths: Vec<PathBuf> = [
            "runs/a/gc.log",
            "runs/b/gc.log",
            "x/other.log",
            "/abs/b/gc.log",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(
            distinct_names(&paths),
            ["a/gc.log", "runs/b/gc.log", "other.log", "abs/b/gc.log"]
        );
        let same = [PathBuf::from("gc.log"), PathBuf::from("gc.log")];
        assert_eq!(distinct_names(&same), ["gc.log", "gc.log"]);
        assert_eq!(distinct_names(&[PathBuf::from("gc.log")]), ["gc.log"]);
    }

    #[test]
    fn slugs_are_anchor_safe() {
        assert_eq!(slug("hsperf-mmap on lab1 / x"), "hsperf-mmap-on-lab1-x");
    }
}
