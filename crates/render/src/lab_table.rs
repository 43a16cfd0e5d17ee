//! The table of a lab run: the pause statistics where pauses are the question, the
//! experiment's measurements, each variant's verdict and each JDK's.

use std::io::{self, Write};

use pauselab_lab::bundle::Outcome;
use pauselab_lab::experiment::Conclusion;
use pauselab_lab::verdict::{VariantSummary, VariantVerdict, Vulnerable};
use pauselab_pause::Summary;
use pauselab_report::table::{format_measurement, measurement_label};

/// A run's result on the terminal: its notes, the table, where the bundle is.
pub fn print_run(
    out: &mut dyn Write,
    outcome: &Outcome,
    columns: &[String],
    conclusion: Option<&Conclusion>,
    bundle: &std::path::Path,
) -> io::Result<()> {
    for note in &outcome.notes {
        writeln!(out, "note: {note}")?;
    }
    print_table(out, outcome, columns, conclusion)?;
    writeln!(out, "bundle: {}", bundle.display())
}

pub fn result_word(v: Vulnerable) -> &'static str {
    match v {
        Vulnerable::Yes => "vulnerable",
        Vulnerable::No => "not vulnerable",
        Vulnerable::Inconclusive => "inconclusive",
    }
}

pub fn verdict_word(v: VariantVerdict) -> &'static str {
    match v {
        VariantVerdict::Stalls => "STALLS",
        VariantVerdict::NoStalls => "no stalls",
        VariantVerdict::Baseline => "baseline",
        VariantVerdict::Skipped => "skipped",
        VariantVerdict::Failed => "failed",
        VariantVerdict::NoData => "no baseline data",
        VariantVerdict::Slower => "SLOWER",
        VariantVerdict::NotSlower => "not slower",
        VariantVerdict::Unclear => "unclear",
    }
}

fn ms(v: Option<f64>) -> String {
    match v {
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.1}"),
        None => "-".into(),
    }
}

/// A group of the pause table: its title, column headers and each variant's cells (none
/// when the variant has no such log).
struct PauseGroup {
    title: &'static str,
    headers: [&'static str; 5],
    summary: fn(&VariantSummary) -> Option<&Summary>,
    /// The statistics after the count, in the order of `headers`.
    stats: fn(&Summary) -> [f64; 4],
}

const PAUSE_GROUPS: [PauseGroup; 3] = [
    PauseGroup {
        title: "hiccups (ms)",
        headers: ["count", "p99", "p99.9", "p99.99", "max"],
        summary: |v| v.hiccups.as_ref(),
        stats: |s| [s.p99_ms, s.p99_9_ms, s.p99_99_ms, s.max_ms],
    },
    PauseGroup {
        title: "safepoints (ms)",
        headers: ["count", "p99", "p99.9", "p99.99", "max"],
        summary: |v| v.safepoints.as_ref(),
        stats: |s| [s.p99_ms, s.p99_9_ms, s.p99_99_ms, s.max_ms],
    },
    PauseGroup {
        title: "request latency (ms)",
        headers: ["requests", "p50", "p99", "p99.9", "max"],
        summary: |v| v.latency.as_ref(),
        stats: |s| [s.p50_ms, s.p99_ms, s.p99_9_ms, s.max_ms],
    },
];

/// Width of a pause table column.
const PAUSE_COLUMN: usize = 8;

/// The table of a run: pauses where pauses are the question (and some variant has a pause
/// log), the experiment's measurements, its conclusion in its own terms, the verdicts.
pub fn print_table(
    out: &mut dyn Write,
    outcome: &Outcome,
    columns: &[String],
    conclusion: Option<&Conclusion>,
) -> io::Result<()> {
    let groups: Vec<&PauseGroup> = PAUSE_GROUPS
        .iter()
        .filter(|g| outcome.variants.iter().any(|v| (g.summary)(v).is_some()))
        .collect();
    let pauses = conclusion.is_none_or(|c| c.pauses) && !groups.is_empty();
    if pauses {
        print_pauses(out, outcome, &groups)?;
    }
    print_measurements(out, outcome, columns)?;
    super::lab_conclusions::print_conclusions(out, outcome)?;
    if pauses {
        print_verdicts_of_jdks(out, outcome)
    } else {
        // No pause table to carry them: each variant's verdict with its evidence.
        print_verdicts(out, outcome)
    }
}

/// One group of columns per pause log some variant has (a group empty in every row is
/// left out), then each variant's verdict.
fn print_pauses(out: &mut dyn Write, outcome: &Outcome, groups: &[&PauseGroup]) -> io::Result<()> {
    let w = variant_width(outcome);
    let c = PAUSE_COLUMN;
    let group_width = 5 * (c + 1) - 1;
    let mut header = format!("{:<8} {:<w$} |", "jdk", "variant");
    let mut titles = format!("{:<8} {:<w$} |", "", "");
    for g in groups {
        for h in g.headers {
            header.push_str(&format!(" {h:>c$}"));
        }
        header.push_str(" |");
        titles.push_str(&format!(" {:^group_width$} |", g.title));
    }
    writeln!(out, "{header} verdict")?;
    writeln!(out, "{titles}")?;
    for v in &outcome.variants {
        let verdict = match (&v.skipped, &v.early_exit) {
            (Some(reason), _) => format!("skipped: {reason}"),
            (None, Some(exit)) => format!("{} ({exit})", verdict_word(v.verdict)),
            _ => verdict_word(v.verdict).to_string(),
        };
        let mut row = format!("{:<8} {:<w$} |", v.jdk, v.variant);
        for g in groups {
            match (g.summary)(v) {
                Some(s) => {
                    row.push_str(&format!(" {:>c$}", s.count));
                    for value in (g.stats)(s) {
                        row.push_str(&format!(" {:>c$}", ms(Some(value))));
                    }
                }
                None => row.push_str(&format!(" {:>c$}", "-").repeat(5)),
            }
            row.push_str(" |");
        }
        writeln!(out, "{row} {verdict}")?;
    }
    Ok(())
}

fn print_verdicts(out: &mut dyn Write, outcome: &Outcome) -> io::Result<()> {
    let w = variant_width(outcome);
    for v in &outcome.variants {
        writeln!(
            out,
            "{:<8} {:<w$} | {}: {}",
            v.jdk,
            v.variant,
            verdict_word(v.verdict),
            v.evidence
        )?;
    }
    print_verdicts_of_jdks(out, outcome)
}

fn print_verdicts_of_jdks(out: &mut dyn Write, outcome: &Outcome) -> io::Result<()> {
    for j in &outcome.per_jdk {
        writeln!(
            out,
            "{}: {} ({})",
            j.jdk,
            result_word(j.vulnerable),
            j.reason
        )?;
    }
    let noisy = if outcome.noisy.is_empty() {
        ""
    } else {
        ", noisy (the host was busy with other work)"
    };
    writeln!(
        out,
        "experiment {}: {}{noisy}",
        outcome.experiment,
        result_word(outcome.result)
    )?;
    for line in &outcome.noisy {
        writeln!(out, "noisy: {line}")?;
    }
    Ok(())
}

/// The experiment's chosen measurements, one row per variant (summary.json has them all):
/// a column no variant has a value for is left out; the unit is in the header.
fn print_measurements(
    out: &mut dyn Write,
    outcome: &Outcome,
    columns: &[String],
) -> io::Result<()> {
    let find = |v: &VariantSummary, column: &str| -> Option<(f64, String)> {
        v.measurements
            .iter()
            .find(|m| m.name == column)
            .map(|m| (m.value, m.unit.clone()))
    };
    // (name, the unit of its first value)
    let shown: Vec<(&String, String)> = columns
        .iter()
        .filter_map(|c| {
            let unit = outcome.variants.iter().find_map(|v| find(v, c))?.1;
            Some((c, unit))
        })
        .collect();
    if shown.is_empty() {
        return Ok(());
    }
    let w = variant_width(outcome);
    let labels: Vec<String> = shown
        .iter()
        .map(|(c, unit)| measurement_label(c, unit))
        .collect();
    let widths: Vec<usize> = labels.iter().map(|l| l.len().max(8)).collect();
    let mut header = format!("{:<8} {:<w$} |", "jdk", "variant");
    for (label, width) in labels.iter().zip(&widths) {
        header.push_str(&format!(" {label:>width$}"));
    }
    writeln!(out)?;
    writeln!(out, "{header}")?;
    for v in &outcome.variants {
        let mut row = format!("{:<8} {:<w$} |", v.jdk, v.variant);
        for ((column, unit), width) in shown.iter().zip(&widths) {
            let cell = match find(v, column) {
                // The header carries the column's unit; a value in another one says so.
                Some((value, own)) if &own == unit => format_measurement(value, ""),
                Some((value, own)) => format_measurement(value, &own),
                None => "-".into(),
            };
            row.push_str(&format!(" {cell:>width$}"));
        }
        writeln!(out, "{row}")?;
    }
    let findings: Vec<String> = outcome
        .variants
        .iter()
        .filter(|v| !v.gc_findings.is_empty())
        .map(|v| format!("{}/{}: {}", v.jdk, v.variant, v.gc_findings.join(", ")))
        .collect();
    if !findings.is_empty() {
        writeln!(
            out,
            "GC log findings (pauselab analyze): {}",
            findings.join("; ")
        )?;
    }
    writeln!(out)?;
    Ok(())
}

/// Width of the variant column: the longest name.
pub fn variant_width(outcome: &Outcome) -> usize {
    outcome
        .variants
        .iter()
        .map(|v| v.variant.len())
        .max()
        .unwrap_or(0)
        .max("variant".len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-by-one run with safepoint logs and no hiccup agent, as pretouch's bundle has.
    fn outcome() -> Outcome {
        let stats = serde_json::json!({
            "count": 7, "total_ms": 70.0, "mean_ms": 10.0, "min_ms": 1.0, "p50_ms": 5.0,
            "p90_ms": 9.0, "p99_ms": 12.0, "p99_9_ms": 14.0, "p99_99_ms": 15.0, "max_ms": 15.0,
            "at_least_100ms": 0, "at_least_1s": 0,
        });
        let variant = |name: &str, uptime: f64| {
            serde_json::json!({
                "id": format!("{name}-jdk17"), "jdk": "jdk17", "variant": name,
                "safepoints": stats, "verdict": "no_stalls", "evidence": "max 15 ms",
                "measurements": [
                    {"name": "workload.uptime_at_main_ms", "value": uptime, "unit": "ms"},
                    {"name": "workload.alloc_mib_per_s", "value": 90.25, "unit": "MiB/s"},
                ],
            })
        };
        serde_json::from_value(serde_json::json!({
            "experiment": "pretouch", "result": "not_vulnerable",
            "rule": {"metric": "safepoint", "margin": 3.0, "floor_ms": 5000.0, "noise_ms": 5000.0},
            "variants": [variant("4g", 100.0), variant("4g-pretouch", 1300.0)],
            "per_jdk": [{"jdk": "jdk17", "vulnerable": "not_vulnerable", "reason": "none stalls", "baseline_max_ms": 15.0}],
            "conclusions": [{"jdk": "jdk17", "variant": "4g-pretouch", "against": "4g", "measures": [
                {"name": "workload.uptime_at_main_ms", "unit": "ms", "value": 1300.0, "against": 100.0, "ratio": 13.0},
            ]}],
        }))
        .unwrap()
    }

    fn table(conclusion: Option<&Conclusion>) -> String {
        let columns = [
            "workload.uptime_at_main_ms".to_string(),
            "workload.alloc_mib_per_s".to_string(),
            "workload.touch_s".to_string(),
        ];
        let mut out = Vec::new();
        print_table(&mut out, &outcome(), &columns, conclusion).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn each_experiment_concludes_in_its_own_terms_without_empty_columns() {
        let pauses = table(None);
        // Where pauses are the question: the safepoint group, and no hiccup group that
        // would be `-` in every row.
        assert!(pauses.contains("safepoints (ms)"), "{pauses}");
        assert!(!pauses.contains("hiccups"), "{pauses}");
        // Units in the headers, values without them; no column without any value.
        assert!(
            pauses.contains("uptime at main (ms) alloc (MiB/s)"),
            "{pauses}"
        );
        assert!(
            pauses.contains(" 1300 ") && pauses.contains(" 90.25"),
            "{pauses}"
        );
        assert!(!pauses.contains("touch ("), "{pauses}");
        assert!(
            pauses.contains(
                "jdk17 4g-pretouch against 4g: uptime at main (ms) 1300 against 100 (x13.00)"
            ),
            "{pauses}"
        );
        // Where they are not: no pause table, each variant's verdict with its evidence.
        let conclusion = Conclusion {
            pauses: false,
            measurements: vec!["workload.uptime_at_main_ms".into()],
            pairs: vec![["4g-pretouch".into(), "4g".into()]],
        };
        let trade_off = table(Some(&conclusion));
        assert!(!trade_off.contains("safepoints"), "{trade_off}");
        assert!(trade_off.contains("no stalls: max 15 ms"), "{trade_off}");
        assert!(trade_off.contains("4g-pretouch against 4g"), "{trade_off}");
    }
}
