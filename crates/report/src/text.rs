//! The terminal form of a report: per section its facts and one row per variant.

use crate::matrix::variant_cell_words;
use crate::matrix::Matrix;
use crate::model::{Section, Sla};
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
        diagnoses(&mut out, section);
        if section.interval_logs {
            worst_intervals(&mut out, section, unit_ratio);
        }
        out.push('\n');
    }
    out
}

/// Each interval log's intervals with the highest max, with their own count and p99.
fn worst_intervals(out: &mut String, section: &Section, unit_ratio: f64) {
    for v in &section.variants {
        let Some(log) = v.hiccups.as_ref().filter(|l| !l.worst.is_empty()) else {
            continue;
        };
        out.push_str(&format!(
            "\nWorst {} intervals of {} (highest max first)\n",
            log.worst.len(),
            v.label
        ));
        out.push_str(&table::render(
            &crate::summary::WORST_INTERVAL_COLUMNS,
            &log.worst_rows(unit_ratio),
        ));
    }
}

/// What the analysis of each GC log or recording found, in `analyze`'s words: a log's or
/// recording's worst pauses and findings in full; a bundle's, one line per variant (its
/// verdict says what the run showed).
fn diagnoses(out: &mut String, section: &Section) {
    for v in &section.variants {
        let Some(d) = &v.diagnosis else { continue };
        if section.verdict.is_some() {
            out.push_str(&d.summary(&v.label));
        } else {
            out.push('\n');
            out.push_str(d.text.trim_end());
        }
        out.push('\n');
    }
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
pub fn column_title(column: &crate::matrix::MatrixColumn) -> String {
    match &column.gc {
        Some(gc) => format!("JDK {} {gc}", column.jdk),
        None => format!("JDK {}", column.jdk),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    #[test]
    fn a_gc_log_shows_its_findings_with_evidence_ranked_causes_and_fixes() {
        let log = fixture("gclogs/parallel-swapped-jdk17.log");
        let section = Section::from_gc_log(&log, "gc.log").unwrap();
        let text = render(&[section], None, None, 1e6);
        let at = |t: &str| {
            text.find(t)
                .unwrap_or_else(|| panic!("{t} missing from {text}"))
        };
        // The pause table, then the worst pauses and the findings as `analyze` words them.
        at("(values in ms)\n\nWorst 4 pauses\n");
        at("  [critical] real_gt_cpu: 4 of 4 GC pauses spent more than 50 ms of wall time off-CPU");
        at(":59)\n");
        at("      causes: 1. page faults on memory that had to be read back from disk or swap");
        at("              3. descheduling: other processes");
        at("      fix:    - check swap (vm.swappiness, swapoff)");
        at("  [critical] full_gc: 2 full collections");
        assert!(at("Worst 4 pauses") < at("Findings\n") && at("real_gt_cpu") < at("full_gc:"));
    }

    #[test]
    fn a_log_without_findings_says_so_and_a_bundle_names_each_variants_findings() {
        let log = fixture("reference/gclogs/defnew.log.gz");
        let section = Section::from_gc_log(&log, "defnew.log.gz").unwrap();
        let text = render(&[section], None, None, 1e6);
        assert!(
            text.contains("  [warning] real_gt_cpu: 2 of 19166 GC pauses"),
            "{text}"
        );
        assert!(text.contains("      causes: 1. "), "{text}");

        let log = fixture("gclogs/demo-g1-jdk17.log");
        let section = Section::from_gc_log(&log, "g1.log").unwrap();
        let text = render(&[section], None, None, 1e6);
        assert!(
            text.contains(
                "\nFindings   none: no pause shows signs of the OS or the JVM's own machinery"
            ),
            "{text}"
        );

        let bundle = crate::bundle::Bundle::open(&fixture("bundles/lab-kernel6.1")).unwrap();
        let text = render(&[Section::from_bundle(&bundle)], None, None, 1e6);
        assert!(
            text.contains("(values in ms)\nGC log of default (JDK 17): no findings; longest pause 18.763 ms\n"),
            "{text}"
        );
        // A bundle's variants are summed up in one line each, not their worst pauses.
        assert!(!text.contains("Worst "), "{text}");
    }

    #[test]
    fn interval_logs_show_their_worst_intervals_and_bundles_do_not() {
        let log = fixture("reference/jhiccup/java8x4-async-off_c4_2.jHiccup");
        let section = Section::from_logs(
            &[(log, "a.jHiccup".to_string())],
            &pauselab_pause::interval_log::TagFilter::Untagged,
        )
        .unwrap();
        let text = render(&[section], None, None, 1e6);
        let table = text
            .split("\nWorst 10 intervals of a.jHiccup (highest max first)\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{text}"));
        let lines: Vec<&str> = table.lines().take(11).collect();
        assert_eq!(
            lines[0]
                .split("  ")
                .filter(|c| !c.is_empty())
                .map(str::trim)
                .collect::<Vec<_>>(),
            crate::summary::WORST_INTERVAL_COLUMNS
        );
        assert!(
            lines[1].starts_with("11506.627  Wed Mar 08 18:21:50 UTC 2023"),
            "{table}"
        );
        assert!(
            lines[1].ends_with("4913  4177.527  4127.195  2306"),
            "{table}"
        );
        assert!(lines[10].ends_with("656"), "{table}");

        let bundle = crate::bundle::Bundle::open(&fixture("bundles/lab-kernel6.1")).unwrap();
        let text = render(&[Section::from_bundle(&bundle)], None, None, 1e6);
        assert!(!text.contains("intervals of"), "{text}");
    }
}
