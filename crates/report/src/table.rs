//! Plain-text tables for terminals: first column left-aligned, the others right-aligned.

/// Renders `rows` under `header`, columns separated by two spaces.
pub fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    let columns = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(columns) {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut out = String::new();
        for (i, cell) in cells.enumerate().take(columns) {
            if i > 0 {
                out.push_str("  ");
            }
            let pad = widths[i].saturating_sub(cell.chars().count());
            if i == 0 {
                out.push_str(cell);
                out.push_str(&" ".repeat(pad));
            } else {
                out.push_str(&" ".repeat(pad));
                out.push_str(cell);
            }
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
        out
    };
    let mut text = line(&mut header.iter().copied());
    for row in rows {
        text.push_str(&line(&mut row.iter().map(String::as_str)));
    }
    text
}

/// A value in recorded units shown in display units with 3 decimals (e.g. ns as ms).
pub fn scaled(value: f64, unit_ratio: f64) -> String {
    format!("{:.3}", value / unit_ratio)
}

/// A measurement for display: whole numbers and values of 100 and more without decimals,
/// others with two, then the unit.
pub fn format_measurement(value: f64, unit: &str) -> String {
    let number = if value.abs() >= 100.0 || value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    };
    if unit.is_empty() {
        number
    } else {
        format!("{number} {unit}")
    }
}

/// `workload.mib_per_s` -> `mib_per_s`: a measurement's column header.
pub fn measurement_header(name: &str) -> &str {
    name.split_once('.').map(|(_, rest)| rest).unwrap_or(name)
}

/// A measurement's header for people, with its unit: `workload.uptime_at_main_ms` in
/// `ms` -> `uptime at main (ms)`, `workload.alloc_mib_per_s_from_start` in `MiB/s` ->
/// `alloc from start (MiB/s)`, `jmh.score` in `us/op` -> `score (us/op)`. The unit's words
/// are taken out of the name where it spells them; an empty `unit` adds none.
pub fn measurement_label(name: &str, unit: &str) -> String {
    let mut words: Vec<&str> = measurement_header(name).split('_').collect();
    let unit_words: Vec<String> = unit
        .to_lowercase()
        .replace('/', "_per_")
        .split('_')
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    if !unit_words.is_empty() {
        if let Some(at) = words
            .windows(unit_words.len())
            .rposition(|w| w.iter().zip(&unit_words).all(|(a, b)| a == b))
        {
            words.drain(at..at + unit_words.len());
        }
    }
    let text = words.join(" ");
    match (text.is_empty(), unit.is_empty()) {
        // The name was its unit (`mib_per_s`): the unit says it all.
        (true, _) => unit.to_string(),
        (false, true) => text,
        (false, false) => format!("{text} ({unit})"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn labels_carry_the_unit_once() {
        use super::measurement_label as label;
        assert_eq!(
            label("workload.uptime_at_main_ms", "ms"),
            "uptime at main (ms)"
        );
        assert_eq!(
            label("workload.alloc_mib_per_s_from_start", "MiB/s"),
            "alloc from start (MiB/s)"
        );
        assert_eq!(label("workload.touch_s", "s"), "touch (s)");
        assert_eq!(label("jmh.score", "us/op"), "score (us/op)");
        assert_eq!(
            label("jmh.gc.alloc.rate.norm", "B/op"),
            "gc.alloc.rate.norm (B/op)"
        );
        assert_eq!(label("gc.pauses", ""), "pauses");
        assert_eq!(label("workload.mib_per_s", "MiB/s"), "MiB/s");
    }

    #[test]
    fn aligns_columns() {
        let text = super::render(
            &["file", "count"],
            &[
                vec!["a.hlog".into(), "5".into()],
                vec!["b".into(), "12345".into()],
            ],
        );
        assert_eq!(text, "file    count\na.hlog      5\nb       12345\n");
    }
}
