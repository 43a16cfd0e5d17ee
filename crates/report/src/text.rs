//! The terminal form of a report: per section its facts and one row per variant.

use crate::matrix::variant_cell_words;
use crate::model::{Matrix, Section, Sla};
use crate::summary::Stats;
use crate::table;

pub fn render(
    sections: &[Section],
    matrix: Option<&Matrix>,
    sla: Option<&Sla>,
    unit_ratio: f64,
) -> String {
    let mut out = String::new();
    if let Some(m) = matrix {
        out.push_str(&matrix_text(m));
        out.push('\n');
    }
    for section in sections {
        out.push_str(&section.title);
        if let Some(result) = &section.result {
            out.push_str(&format!(": {}", result.as_str().replace('_', " ")));
        }
        out.push('\n');
        for (k, v) in &section.facts {
            out.push_str(&format!("  {k}: {v}\n"));
        }
        let mut header = vec!["variant", "count", "p50", "p99", "p99.9", "p99.99", "max"];
        let has_safepoints = section.variants.iter().any(|v| v.safepoints.is_some());
        if has_safepoints {
            header.push("safepoint max");
        }
        if sla.is_some() {
            header.push("SLA");
        }
        header.push("verdict");
        let rows: Vec<Vec<String>> = section
            .variants
            .iter()
            .map(|v| {
                let mut row = vec![v.label.clone()];
                match &v.hiccups {
                    Some(h) => {
                        let st = Stats::of(&h.histogram);
                        row.push(st.count.to_string());
                        row.extend(
                            [st.p50, st.p99, st.p99_9, st.p99_99, st.max]
                                .map(|x| table::scaled(x as f64, unit_ratio)),
                        );
                    }
                    None => row.extend(std::iter::repeat_n("-".to_string(), 6)),
                }
                if has_safepoints {
                    row.push(
                        v.safepoints
                            .as_ref()
                            .map(|s| table::scaled(s.histogram.max() as f64, unit_ratio))
                            .unwrap_or_else(|| "-".into()),
                    );
                }
                if let Some(sla) = sla {
                    row.push(match &v.hiccups {
                        Some(h) if sla.breaches(h, unit_ratio).is_empty() => "met".into(),
                        Some(_) => "BREACH".into(),
                        None => "-".into(),
                    });
                }
                row.push(
                    v.verdict
                        .map(|v| v.as_str().replace('_', " "))
                        .unwrap_or_default(),
                );
                row
            })
            .collect();
        out.push_str(&table::render(&header, &rows));
        out.push_str("(values in ms)\n");
        if !section.measurement_columns.is_empty() {
            let mut header = vec!["variant"];
            header.extend(
                section
                    .measurement_columns
                    .iter()
                    .map(|c| table::measurement_header(c)),
            );
            let rows: Vec<Vec<String>> = section
                .variants
                .iter()
                .map(|v| {
                    let mut row = vec![v.label.clone()];
                    row.extend(
                        section
                            .measurement_columns
                            .iter()
                            .map(|c| v.measurement_cell(c)),
                    );
                    row
                })
                .collect();
            out.push_str(&table::render(&header, &rows));
        }
        out.push('\n');
    }
    out
}

/// The matrix as a table, one line per place and variant, a column per JDK and collector,
/// then the conclusions as one paragraph.
pub fn matrix_text(m: &Matrix) -> String {
    let mut out =
        String::from("Matrix (each cell: the verdict over its repeats and the longest pause; with repeats, min / median / max of their longest pauses)\n");
    let mut header: Vec<String> = [
        "kernel",
        "host",
        "disk",
        "filesystem",
        "mount options",
        "variant",
    ]
    .iter()
    .map(|h| h.to_string())
    .collect();
    header.extend(m.columns.iter().map(column_title));
    let mut rows: Vec<Vec<String>> = Vec::new();
    for r in &m.rows {
        for variant in &m.variants {
            let cells: Vec<String> = m
                .columns
                .iter()
                .map(|c| {
                    match r
                        .cells
                        .get(&c.key)
                        .map(|cell| cell.variants.iter().find(|v| &v.variant == variant))
                    {
                        None => "not run".to_string(),
                        Some(None) => "-".to_string(),
                        Some(Some(v)) => variant_cell_words(v),
                    }
                })
                .collect();
            if cells.iter().all(|c| c == "-") {
                continue;
            }
            let mut row = vec![
                r.kernel.clone(),
                r.host.clone(),
                r.disk.clone(),
                r.filesystem.clone(),
                r.mount_options.clone(),
                variant.clone(),
            ];
            row.extend(cells);
            rows.push(row);
        }
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    out.push_str(&table::render(&header, &rows));
    if !m.conclusions.is_empty() {
        out.push_str(&format!("\nConclusions: {}\n", m.conclusions.join(" ")));
    }
    out
}

/// `JDK 17 G1`, or `JDK 17` when the bundles do not name the collector.
pub fn column_title(column: &crate::model::MatrixColumn) -> String {
    match &column.gc {
        Some(gc) => format!("JDK {} {gc}", column.jdk),
        None => format!("JDK {}", column.jdk),
    }
}
