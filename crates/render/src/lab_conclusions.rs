//! The experiment's conclusion in its own terms (`[conclusion]`), one line per pair of
//! variants and JDK.

use std::io::{self, Write};

use pauselab_lab::bundle::Outcome;
use pauselab_report::table::{format_measurement, measurement_label};

/// The experiment's pairs compared on its own measurements (`[conclusion]`), one line per
/// pair and JDK: `jdk17 4g-pretouch against 4g: uptime at main (ms) 1300 against 100
/// (x13.00), ...`.
pub fn print_conclusions(out: &mut dyn Write, outcome: &Outcome) -> io::Result<()> {
    if outcome.conclusions.is_empty() {
        return Ok(());
    }
    writeln!(out, "conclusion:")?;
    for c in &outcome.conclusions {
        let measures: Vec<String> = c
            .measures
            .iter()
            .map(|m| {
                let value =
                    |v: Option<f64>| v.map_or("-".to_string(), |v| format_measurement(v, ""));
                let ratio = m.ratio.map(|r| format!(" (x{r:.2})")).unwrap_or_default();
                format!(
                    "{} {} against {}{ratio}",
                    measurement_label(&m.name, &m.unit),
                    value(m.value),
                    value(m.against)
                )
            })
            .collect();
        writeln!(
            out,
            "  {} {} against {}: {}",
            c.jdk,
            c.variant,
            c.against,
            measures.join(", ")
        )?;
    }
    writeln!(out)
}
