//! The HTML of what an analysis concluded: a GC log's or recording's findings with their
//! evidence, causes and fixes, its worst pauses, and a lab bundle's verdict.
//!
//! Findings are rendered from their JSON form (`pauselab analyze --json`), field by field:
//! a field this code does not know (a new list on a finding) is still shown, as a list or a
//! table, so the page carries everything the analysis says.

use std::fmt::Write as _;

use pauselab_analysis::{findings_text, worst_text, Jvm, Report, WorstPause};
use serde_json::Value;

use crate::bundle::Verdict;
use crate::svg::escape;

/// Fields of a finding shown in its heading, not as a list of their own.
const HEADING_FIELDS: [&str; 6] = [
    "rule",
    "severity",
    "title",
    "confidence",
    "count",
    "excess_total_ms",
];

/// Columns of an evidence table in reading order; other fields follow.
const EVIDENCE_COLUMNS: [&str; 6] = ["uptime_s", "wall", "what", "detail", "excess_ms", "file"];

/// The text of an item that is an object (a ranked cause, say): the first of these it has.
const MAIN_TEXT_FIELDS: [&str; 6] = ["cause", "text", "title", "name", "what", "fix"];

/// A number as the analysis gives it, up to 3 decimals, trailing zeros dropped.
pub fn exact(v: f64) -> String {
    let text = format!("{v:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "n/a".to_string(),
        Value::Number(n) => n
            .as_f64()
            .filter(|_| !n.is_i64() && !n.is_u64())
            .map(exact)
            .unwrap_or_else(|| n.to_string()),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Field names for people: `excess_ms` -> `excess (ms)`, `uptime_s` -> `start (s)`.
fn field_title(key: &str) -> String {
    match key {
        "uptime_s" => "start (s)".to_string(),
        "file" => "where".to_string(),
        _ => match key.rsplit_once('_') {
            Some((what, unit @ ("ms" | "s" | "pct" | "bytes"))) => {
                format!(
                    "{} ({})",
                    what.replace('_', " "),
                    if unit == "pct" { "%" } else { unit }
                )
            }
            _ => key.replace('_', " "),
        },
    }
}

/// `file:line` with only the file's name shown (the full path in the tooltip); a recording
/// (one of `recordings`) numbers its events, not lines: `rec.jfr event 202`, as `analyze`
/// prints it.
fn source_html(file: &str, line: Option<u64>, recordings: &[String]) -> String {
    let name = file.rsplit('/').next().unwrap_or(file);
    let place = match line {
        Some(n) if recordings.iter().any(|r| r == file) => format!("{name} event {n}"),
        Some(l) => format!("{name}:{l}"),
        None => name.to_string(),
    };
    format!(
        r#"<span class="where" title="{}">{}</span>"#,
        escape(file),
        escape(&place)
    )
}

/// One item of a list: a string as it is, an object as its main text followed by its
/// other fields.
fn item_html(v: &Value) -> String {
    let Value::Object(map) = v else {
        return escape(&scalar(v));
    };
    let main = MAIN_TEXT_FIELDS
        .iter()
        .find_map(|k| map.get(*k).map(|v| (*k, v)));
    let mut out = main.map(|(_, v)| escape(&scalar(v))).unwrap_or_default();
    let rest: Vec<String> = map
        .iter()
        .filter(|(k, _)| main.is_none_or(|(m, _)| m != k.as_str()))
        // A field the input gave nothing for says nothing, as in the terminal output.
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| {
            let value = match v {
                Value::Array(items) => items.iter().map(scalar).collect::<Vec<_>>().join("; "),
                other => scalar(other),
            };
            format!("{}: {}", field_title(k), value)
        })
        .collect();
    if !rest.is_empty() {
        let _ = write!(
            out,
            r#" <span class="muted">({})</span>"#,
            escape(&rest.join(", "))
        );
    }
    out
}

/// A list of objects as a table, `preferred` columns first; `file` and `line` make one
/// `where` column.
fn object_table(
    out: &mut String,
    class: &str,
    items: &[Value],
    preferred: &[&str],
    recordings: &[String],
) {
    let mut columns: Vec<String> = preferred
        .iter()
        .filter(|c| items.iter().any(|i| i.get(**c).is_some()))
        .map(|c| c.to_string())
        .collect();
    for item in items {
        if let Value::Object(map) = item {
            for key in map.keys() {
                if key != "line" && !columns.contains(key) {
                    columns.push(key.clone());
                }
            }
        }
    }
    // A column no item has a value for (no wall clock in the log) says nothing.
    columns.retain(|c| items.iter().any(|i| i.get(c).is_some_and(|v| !v.is_null())));
    let is_text = |c: &str| {
        c != "file"
            && items
                .iter()
                .any(|i| i.get(c).is_some_and(|v| v.is_string() || v.is_array()))
    };
    let _ = write!(
        out,
        r#"<div class="scroll"><table class="{class}"><thead><tr>"#
    );
    for c in &columns {
        let _ = write!(
            out,
            "<th{}>{}</th>",
            if is_text(c) { r#" class="text""# } else { "" },
            escape(&field_title(c))
        );
    }
    out.push_str("</tr></thead><tbody>");
    for item in items {
        out.push_str("<tr>");
        for c in &columns {
            let v = item.get(c).unwrap_or(&Value::Null);
            let cell = match (c.as_str(), v) {
                ("file", Value::String(f)) => {
                    source_html(f, item.get("line").and_then(Value::as_u64), recordings)
                }
                (_, Value::Array(_) | Value::Object(_)) => item_html(v),
                _ => escape(&scalar(v)),
            };
            let _ = write!(
                out,
                "<td{}>{cell}</td>",
                if is_text(c) { r#" class="text""# } else { "" }
            );
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
}

/// One field of a finding that is not in its heading: a list of strings or objects, or a
/// value.
fn finding_field(out: &mut String, key: &str, value: &Value, recordings: &[String]) {
    let items = match value {
        Value::Array(items) if items.is_empty() => return,
        Value::Array(items) => items,
        Value::Null => return,
        other => {
            let _ = write!(
                out,
                r#"<p class="field" data-field="{}"><strong>{}:</strong> {}</p>"#,
                escape(key),
                escape(&field_title(key)),
                item_html(other)
            );
            return;
        }
    };
    let _ = write!(
        out,
        r#"<div class="field" data-field="{}"><h5>{}</h5>"#,
        escape(key),
        escape(&title_case(&field_title(key)))
    );
    if key == "evidence" && items.iter().all(Value::is_object) {
        object_table(out, "evidence", items, &EVIDENCE_COLUMNS, recordings);
    } else {
        // Causes are ranked by the analysis: their order is their rank.
        let tag = if key == "causes" { "ol" } else { "ul" };
        let _ = write!(out, "<{tag}>");
        for item in items {
            let _ = write!(out, "<li>{}</li>", item_html(item));
        }
        let _ = write!(out, "</{tag}>");
    }
    out.push_str("</div>");
}

fn title_case(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The findings of one analysis, each with every field it carries.
/// `recordings`: the inputs that number their events instead of lines.
pub fn findings_html(out: &mut String, findings: &[Value], recordings: &[String]) {
    if findings.is_empty() {
        out.push_str(r#"<p class="findings none">Findings: none. No pause shows signs of the OS or the JVM's own machinery, and no rule on the collector's health fired.</p>"#);
        return;
    }
    out.push_str(r#"<div class="findings">"#);
    for f in findings {
        let text = |k: &str| f.get(k).map(scalar).unwrap_or_default();
        let severity = text("severity");
        let _ = write!(
            out,
            r#"<article class="finding sev-{sev}" data-rule="{rule}"><h4><span class="badge sev-{sev}">{sev}</span> <code>{rule}</code> {title}</h4>"#,
            sev = escape(&severity),
            rule = escape(&text("rule")),
            title = escape(&text("title")),
        );
        let mut about = Vec::new();
        if let Some(c) = f.get("confidence").filter(|c| !c.is_null()) {
            about.push(format!("confidence: {}", scalar(c)));
        }
        if let Some(n) = f.get("count").and_then(Value::as_u64) {
            about.push(format!("{n} matched"));
        }
        if let Some(ms) = f.get("excess_total_ms").and_then(Value::as_f64) {
            about.push(format!("{} ms over the rule's margin in all", exact(ms)));
        }
        if !about.is_empty() {
            let _ = write!(
                out,
                r#"<p class="muted">{}</p>"#,
                escape(&about.join(" · "))
            );
        }
        if let Value::Object(map) = f {
            // Evidence, causes and fixes first, in that order; any other field after them.
            let known = ["evidence", "causes", "fixes"];
            for key in known {
                if let Some(v) = map.get(key) {
                    finding_field(out, key, v, recordings);
                }
            }
            for (key, v) in map {
                if !known.contains(&key.as_str()) && !HEADING_FIELDS.contains(&key.as_str()) {
                    finding_field(out, key, v, recordings);
                }
            }
        }
        out.push_str("</article>");
    }
    out.push_str("</div>");
}

/// The worst pauses, longest first: start, duration, kind, pause and cause, CPU times,
/// time to safepoint, the whole stop, and the source line.
pub fn worst_pauses_html(out: &mut String, worst: &[WorstPause], recordings: &[String]) {
    if worst.is_empty() {
        return;
    }
    out.push_str(r#"<div class="scroll"><table class="worst"><thead><tr><th>start (s)</th><th>duration (ms)</th><th>kind</th><th class="text">pause</th><th class="text">cause</th><th>user / sys / real (ms)</th><th>ttsp (ms)</th><th>stopped (ms)</th><th>where</th></tr></thead><tbody>"#);
    let ms = |v: Option<f64>| v.map(exact).unwrap_or_else(|| "n/a".to_string());
    for w in worst {
        let e = &w.event;
        let start = match (e.start_ms, e.wall_start_ms) {
            (Some(uptime), Some(wall)) => format!(
                r#"<span title="{}">{}</span>"#,
                escape(&pauselab_pause::interval_log::java_date_utc(wall / 1000.0)),
                exact(uptime / 1000.0)
            ),
            (Some(uptime), None) => exact(uptime / 1000.0),
            (None, Some(wall)) => {
                escape(&pauselab_pause::interval_log::java_date_utc(wall / 1000.0))
            }
            (None, None) => "n/a".to_string(),
        };
        let kind = serde_json::to_value(e.kind)
            .map(|k| scalar(&k))
            .unwrap_or_default();
        let _ = write!(
            out,
            r#"<tr><td>{start}</td><td>{}</td><td>{}</td><td class="text">{}</td><td class="text">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            exact(e.duration_ms),
            escape(&kind),
            escape(&e.name),
            escape(e.cause.as_deref().unwrap_or("")),
            e.cpu
                .map(|c| format!(
                    "{} / {} / {}",
                    exact(c.user_ms),
                    exact(c.sys_ms),
                    exact(c.real_ms)
                ))
                .unwrap_or_else(|| "n/a".to_string()),
            ms(e.ttsp_ms),
            ms(w.stopped_ms),
            e.source
                .as_ref()
                .map(|s| source_html(&s.file, Some(s.line), recordings))
                .unwrap_or_default(),
        );
    }
    out.push_str("</tbody></table></div>");
}

/// A GC log's or recording's diagnosis in full: its findings, then its worst pauses.
pub fn diagnosis_html(out: &mut String, diagnosis: &Diagnosis) {
    out.push_str(r#"<div class="diagnosis"><h3>Findings</h3>"#);
    findings_html(out, &diagnosis.findings, &diagnosis.recordings);
    if !diagnosis.worst.is_empty() {
        let _ = write!(out, "<h3>Worst {} pauses</h3>", diagnosis.worst.len());
        worst_pauses_html(out, &diagnosis.worst, &diagnosis.recordings);
    }
    out.push_str("</div>");
}

/// A lab bundle's verdict: the answer, why on each JDK, whether the host was busy beside
/// the run (then the answer may be noise), the run's notes, and each variant's verdict
/// with its evidence and what the analysis of its GC log found.
pub fn verdict_html(out: &mut String, verdict: &Verdict) {
    let _ = write!(
        out,
        r#"<div class="verdict"><h3>Verdict: {}{}{}</h3>"#,
        badge(verdict.result.as_str()),
        if verdict.noisy.is_empty() {
            ""
        } else {
            r#" <span class="badge v-inconsistent">noisy</span>"#
        },
        if verdict.interrupted {
            r#" <span class="badge v-inconclusive">interrupted</span>"#
        } else {
            ""
        }
    );
    if !verdict.noisy.is_empty() {
        out.push_str(r#"<div class="noisy"><strong>The host was busy beside the run: the verdict may reflect that, not the experiment.</strong><ul>"#);
        for n in &verdict.noisy {
            let _ = write!(out, "<li>{}</li>", escape(n));
        }
        out.push_str("</ul></div>");
    }
    if !verdict.per_jdk.is_empty() {
        out.push_str(r#"<ul class="per-jdk">"#);
        for j in &verdict.per_jdk {
            let _ = write!(
                out,
                "<li>JDK {} {}: {}</li>",
                escape(&j.jdk),
                badge(j.vulnerable.as_str()),
                escape(&j.reason)
            );
        }
        out.push_str("</ul>");
    }
    let findings: Vec<&crate::bundle::VariantSummary> = verdict
        .variants
        .iter()
        .filter(|v| {
            !v.evidence.is_empty()
                || !v.gc_findings.is_empty()
                || !v.errors.is_empty()
                || v.skipped.is_some()
                || v.early_exit.is_some()
        })
        .collect();
    if !findings.is_empty() {
        out.push_str(r#"<h4>Findings</h4><ul class="verdict-findings">"#);
        for v in findings {
            let _ = write!(
                out,
                "<li>{} <strong>{}</strong>",
                badge(v.verdict.as_str()),
                escape(&v.id)
            );
            let mut parts: Vec<String> = Vec::new();
            if !v.evidence.is_empty() {
                parts.push(v.evidence.clone());
            }
            if let Some(s) = &v.skipped {
                parts.push(format!("skipped: {s}"));
            }
            if let Some(e) = &v.early_exit {
                parts.push(format!("ended early: {e}"));
            }
            if !v.gc_findings.is_empty() {
                parts.push(format!("GC log: {}", v.gc_findings.join(", ")));
            }
            parts.extend(v.errors.iter().map(|e| format!("error: {e}")));
            let _ = write!(out, ": {}</li>", escape(&parts.join("; ")));
        }
        out.push_str("</ul>");
    }
    if !verdict.notes.is_empty() {
        out.push_str(r#"<h4>Notes</h4><ul class="notes">"#);
        for n in &verdict.notes {
            let _ = write!(out, "<li>{}</li>", escape(n));
        }
        out.push_str("</ul>");
    }
    out.push_str("</div>");
}

/// What the analysis concluded about one GC log or recording: its findings, exactly as
/// `pauselab analyze --json` writes them, its worst pauses and the JVM it names.
#[derive(Debug, Clone)]
pub struct Diagnosis {
    /// Each finding in its JSON form: the report shows every field a finding carries
    /// (evidence, causes, fixes, threads...) whatever the finding's type holds.
    pub findings: Vec<serde_json::Value>,
    /// The longest pauses, longest first, with their source line.
    pub worst: Vec<WorstPause>,
    pub jvm: Jvm,
    /// The inputs that are recordings: their places are event numbers, not lines.
    pub recordings: Vec<String>,
    /// The worst pauses and the findings as `pauselab analyze` prints them, word for word:
    /// the terminal report shows these.
    pub text: String,
}

impl Diagnosis {
    pub(crate) fn of(report: Report) -> Diagnosis {
        let text = worst_text(&report) + &findings_text(&report);
        Diagnosis {
            text,
            recordings: report
                .inputs
                .iter()
                .filter(|i| i.format.is_none())
                .map(|i| i.file.clone())
                .collect(),
            findings: report
                .findings
                .iter()
                .filter_map(|f| serde_json::to_value(f).ok())
                .collect(),
            worst: report.worst,
            jvm: report.jvm,
        }
    }

    /// One line for a variant labelled `label`: the rules that fired and the longest pause
    /// (`GC log of default (JDK 17): 2 finding(s): real_gt_cpu, full_gc; longest pause
    /// 37928.706 ms`).
    pub fn summary(&self, label: &str) -> String {
        let rules: Vec<&str> = self
            .findings
            .iter()
            .filter_map(|f| f.get("rule").and_then(|r| r.as_str()))
            .collect();
        let found = if rules.is_empty() {
            "no findings".to_string()
        } else {
            format!("{} finding(s): {}", rules.len(), rules.join(", "))
        };
        let longest = self
            .longest_ms()
            .map(|ms| format!("; longest pause {} ms", crate::diagnosis::exact(ms)))
            .unwrap_or_default();
        format!("GC log of {label}: {found}{longest}")
    }

    /// The exact longest pause (ms), as the log gives it (a histogram quantises it).
    pub fn longest_ms(&self) -> Option<f64> {
        self.worst.first().map(|w| w.event.duration_ms)
    }
}

/// A verdict word as a coloured badge (`no_stalls` reads "no stalls").
pub(crate) fn badge(text: &str) -> String {
    format!(
        r#"<span class="badge v-{}">{}</span>"#,
        escape(text),
        escape(&text.replace('_', " "))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finding_shows_every_field_and_ranked_causes_of_any_shape() {
        let finding = serde_json::json!({
            "rule": "real_gt_cpu", "severity": "critical", "title": "4 of 4 pauses off-CPU",
            "count": 4, "excess_total_ms": 31900.0, "confidence": "high",
            "evidence": [{"file": "/logs/a/gc.log", "line": 59, "uptime_s": 33.504294,
                          "wall": null, "what": "Pause Full (Ergonomics)",
                          "detail": "real 37930 ms", "excess_ms": 27000.0}],
            "causes": [{"cause": "descheduling by other processes", "evidence": ["user+sys 2 % of real"], "rank": 1},
                       "page faults"],
            "fixes": ["-XX:+AlwaysPreTouch"],
            "threads": [{"name": "main", "state": "running"}],
            "jvm_flags_checked": true
        });
        let mut out = String::new();
        findings_html(&mut out, &[finding], &[]);
        for text in [
            r#"data-rule="real_gt_cpu""#,
            "4 of 4 pauses off-CPU",
            "confidence: high · 4 matched · 31900 ms",
            "<th>start (s)</th>",
            "33.504",
            r#"title="/logs/a/gc.log">gc.log:59</span>"#,
            "<ol><li>descheduling by other processes <span class=\"muted\">(evidence: user+sys 2 % of real, rank: 1)</span></li><li>page faults</li></ol>",
            "<li>-XX:+AlwaysPreTouch</li>",
            r#"data-field="threads""#,
            "main",
            "jvm flags checked:</strong> true",
        ] {
            assert!(out.contains(text), "{text} missing from {out}");
        }
        // Evidence, then causes, then fixes.
        let at = |t: &str| out.find(t).unwrap();
        assert!(at("<h5>Evidence") < at("<h5>Causes") && at("<h5>Causes") < at("<h5>Fixes"));
    }

    #[test]
    fn exact_keeps_the_logged_precision() {
        assert_eq!(exact(37928.7), "37928.7");
        assert_eq!(exact(18.763), "18.763");
        assert_eq!(exact(0.30000000000000004), "0.3");
        assert_eq!(exact(5.0), "5");
    }
}
