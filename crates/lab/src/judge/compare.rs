//! The experiment's conclusion in its own terms (`[conclusion]`): each pair of variants
//! compared on the experiment's measurements, per JDK, with the ratio.

use pauselab_bundle::{Compared, Comparison, Measurement, VariantSummary};

use crate::experiment::Conclusion;

/// Every pair of `conclusion` on every JDK of `summaries` where both variants ran and the
/// first gave some of the measurements, in the order of the JDKs, then of the pairs.
pub fn compare(conclusion: &Conclusion, summaries: &[&VariantSummary]) -> Vec<Comparison> {
    let mut jdks: Vec<&str> = Vec::new();
    for s in summaries {
        if !jdks.contains(&s.jdk.as_str()) {
            jdks.push(&s.jdk);
        }
    }
    let ran = |jdk: &str, variant: &str| {
        summaries
            .iter()
            .find(|s| s.jdk == jdk && s.variant == variant && s.skipped.is_none())
            .copied()
    };
    let mut out = Vec::new();
    for jdk in jdks {
        for [variant, against] in &conclusion.pairs {
            let (Some(one), Some(other)) = (ran(jdk, variant), ran(jdk, against)) else {
                continue;
            };
            let measures: Vec<Compared> = conclusion
                .measurements
                .iter()
                .map(|name| {
                    let (a, b) = (measurement(one, name), measurement(other, name));
                    let value = a.map(|m| m.value);
                    let base = b.map(|m| m.value);
                    Compared {
                        name: name.clone(),
                        unit: a.or(b).map(|m| m.unit.clone()).unwrap_or_default(),
                        value,
                        against: base,
                        ratio: match (value, base) {
                            (Some(v), Some(b)) if b != 0.0 => Some(v / b),
                            _ => None,
                        },
                    }
                })
                .collect();
            // A variant that gave none of them (it failed) has nothing to conclude.
            if measures.iter().all(|m: &Compared| m.value.is_none()) {
                continue;
            }
            out.push(Comparison {
                jdk: jdk.to_string(),
                variant: variant.clone(),
                against: against.clone(),
                measures,
            });
        }
    }
    out
}

fn measurement<'a>(summary: &'a VariantSummary, name: &str) -> Option<&'a Measurement> {
    summary.measurements.iter().find(|m| m.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pauselab_bundle::VariantVerdict;

    fn summary(jdk: &str, variant: &str, values: &[(&str, f64, &str)]) -> VariantSummary {
        let mut s: VariantSummary = serde_json::from_value(serde_json::json!({
            "id": format!("{variant}-{jdk}"), "jdk": jdk, "variant": variant,
            "verdict": VariantVerdict::NoStalls,
        }))
        .unwrap();
        s.measurements = values
            .iter()
            .map(|(name, value, unit)| Measurement {
                name: name.to_string(),
                value: *value,
                unit: unit.to_string(),
            })
            .collect();
        s
    }

    #[test]
    fn pairs_are_compared_per_jdk_with_their_ratio() {
        let conclusion = Conclusion {
            pauses: false,
            measurements: vec!["workload.uptime_at_main_ms".into(), "workload.x".into()],
            pairs: vec![
                ["4g-pretouch".into(), "4g".into()],
                ["8g-pretouch".into(), "8g".into()],
            ],
        };
        let mut skipped = summary("jdk17", "8g-pretouch", &[("workload.x", 1.0, "")]);
        skipped.skipped = Some("no room".into());
        let summaries = [
            summary(
                "jdk17",
                "4g",
                &[("workload.uptime_at_main_ms", 100.0, "ms")],
            ),
            summary(
                "jdk17",
                "4g-pretouch",
                &[("workload.uptime_at_main_ms", 1300.0, "ms")],
            ),
            summary("jdk17", "8g", &[("workload.uptime_at_main_ms", 0.0, "ms")]),
            skipped,
            summary("jdk25", "4g", &[]),
            summary("jdk25", "8g", &[("workload.uptime_at_main_ms", 5.0, "ms")]),
            summary("jdk25", "8g-pretouch", &[]),
            summary(
                "jdk25",
                "4g-pretouch",
                &[("workload.uptime_at_main_ms", 9.0, "ms")],
            ),
        ];
        let found = compare(&conclusion, &summaries.iter().collect::<Vec<_>>());
        assert_eq!(
            found.len(),
            2,
            "a skipped variant has no comparison: {found:?}"
        );
        let first = &found[0];
        assert_eq!(
            (first.jdk.as_str(), first.variant.as_str()),
            ("jdk17", "4g-pretouch")
        );
        assert_eq!(first.against, "4g");
        assert_eq!(first.measures[0].ratio, Some(13.0));
        assert_eq!(first.measures[0].unit, "ms");
        assert_eq!(
            (first.measures[1].value, first.measures[1].ratio),
            (None, None),
            "a measurement neither gave"
        );
        let later = &found[1];
        assert_eq!(later.jdk, "jdk25");
        assert_eq!(
            (
                later.measures[0].value,
                later.measures[0].against,
                later.measures[0].ratio
            ),
            (Some(9.0), None, None)
        );
    }
}
