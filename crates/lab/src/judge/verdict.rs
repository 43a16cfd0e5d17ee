//! Verdicts: each variant against the baseline, then the experiment as a whole.

use serde::Serialize;

use crate::experiment::{Role, VerdictRule};
use pauselab_pause::Summary;

pub use pauselab_bundle::{VariantSummary, VariantVerdict, Vulnerable};

#[derive(Debug, Clone, Serialize)]
pub struct Judgement {
    pub verdict: VariantVerdict,
    /// Why, with the numbers.
    pub evidence: String,
}

/// A variant stalls when its p99.9 or its max is at least `margin` times the baseline's
/// and at least `floor_ms`.
pub fn judge(rule: &VerdictRule, variant: &Summary, baseline: &Summary) -> Judgement {
    if variant.count == 0 {
        return Judgement {
            verdict: VariantVerdict::Failed,
            evidence: "no samples".into(),
        };
    }
    let limit = |base: f64| (base * rule.margin).max(rule.floor_ms);
    let p999_limit = limit(baseline.p99_9_ms);
    let max_limit = limit(baseline.max_ms);
    let mut reasons = Vec::new();
    if variant.p99_9_ms >= p999_limit {
        reasons.push(format!(
            "p99.9 {:.1} ms >= {:.1} ms (max of {}x baseline {:.1} ms, floor {} ms)",
            variant.p99_9_ms, p999_limit, rule.margin, baseline.p99_9_ms, rule.floor_ms
        ));
    }
    if variant.max_ms >= max_limit {
        reasons.push(format!(
            "max {:.1} ms >= {:.1} ms (max of {}x baseline {:.1} ms, floor {} ms)",
            variant.max_ms, max_limit, rule.margin, baseline.max_ms, rule.floor_ms
        ));
    }
    if reasons.is_empty() {
        Judgement {
            verdict: VariantVerdict::NoStalls,
            evidence: format!(
                "p99.9 {:.1} ms < {:.1} ms and max {:.1} ms < {:.1} ms",
                variant.p99_9_ms, p999_limit, variant.max_ms, max_limit
            ),
        }
    } else {
        Judgement {
            verdict: VariantVerdict::Stalls,
            evidence: reasons.join("; "),
        }
    }
}

/// The experiment's answer for one JDK: vulnerable when a subject variant stalls;
/// inconclusive when the baseline has no data or its own max is above the noise limit.
pub fn experiment_verdict(
    rule: &VerdictRule,
    baseline: Option<&Summary>,
    variants: &[(Role, VariantVerdict)],
) -> (Vulnerable, String) {
    let Some(baseline) = baseline.filter(|b| b.count > 0) else {
        return (
            Vulnerable::Inconclusive,
            "the baseline variant produced no data".into(),
        );
    };
    let subjects: Vec<VariantVerdict> = variants
        .iter()
        .filter(|(role, _)| *role == Role::Subject)
        .map(|(_, v)| *v)
        .collect();
    if subjects.contains(&VariantVerdict::Stalls) {
        return (
            Vulnerable::Yes,
            format!(
                "the subject variant stalls (baseline max {:.1} ms)",
                baseline.max_ms
            ),
        );
    }
    if baseline.max_ms > rule.noise_ms {
        return (
            Vulnerable::Inconclusive,
            format!(
                "noise floor too high: the baseline's own max is {:.1} ms (limit {} ms)",
                baseline.max_ms, rule.noise_ms
            ),
        );
    }
    if subjects.is_empty() || !subjects.contains(&VariantVerdict::NoStalls) {
        return (
            Vulnerable::Inconclusive,
            "no subject variant produced data".into(),
        );
    }
    (
        Vulnerable::No,
        format!(
            "no subject variant stalls (baseline max {:.1} ms)",
            baseline.max_ms
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::Metric;

    fn rule() -> VerdictRule {
        VerdictRule {
            metric: Metric::Hiccup,
            margin: 3.0,
            floor_ms: 200.0,
            noise_ms: 300.0,
            max_baseline_error: 0.5,
        }
    }

    fn stats(p999: f64, max: f64) -> Summary {
        Summary {
            count: 1000,
            p99_9_ms: p999,
            max_ms: max,
            ..Summary::default()
        }
    }

    #[test]
    fn margin_and_floor_both_apply() {
        let base = stats(5.0, 12.0);
        assert_eq!(
            judge(&rule(), &stats(2600.0, 3000.0), &base).verdict,
            VariantVerdict::Stalls
        );
        // 10x the baseline but under the floor: no stall.
        assert_eq!(
            judge(&rule(), &stats(50.0, 120.0), &base).verdict,
            VariantVerdict::NoStalls
        );
        // Above the floor but within the margin of a noisy baseline: no stall.
        let noisy = stats(150.0, 280.0);
        assert_eq!(
            judge(&rule(), &stats(300.0, 800.0), &noisy).verdict,
            VariantVerdict::NoStalls
        );
        assert_eq!(
            judge(&rule(), &stats(300.0, 900.0), &noisy).verdict,
            VariantVerdict::Stalls
        );
    }

    #[test]
    fn experiment_answers() {
        let base = stats(5.0, 12.0);
        let yes = [
            (Role::Subject, VariantVerdict::Stalls),
            (Role::Mitigation, VariantVerdict::NoStalls),
        ];
        assert_eq!(
            experiment_verdict(&rule(), Some(&base), &yes).0,
            Vulnerable::Yes
        );
        let no = [(Role::Subject, VariantVerdict::NoStalls)];
        assert_eq!(
            experiment_verdict(&rule(), Some(&base), &no).0,
            Vulnerable::No
        );
        let noisy = stats(200.0, 900.0);
        assert_eq!(
            experiment_verdict(&rule(), Some(&noisy), &no).0,
            Vulnerable::Inconclusive
        );
        assert_eq!(
            experiment_verdict(&rule(), None, &yes).0,
            Vulnerable::Inconclusive
        );
        assert_eq!(
            Vulnerable::combine(&[Vulnerable::No, Vulnerable::Yes]),
            Vulnerable::Yes
        );
        assert_eq!(
            Vulnerable::combine(&[Vulnerable::No, Vulnerable::Inconclusive]),
            Vulnerable::Inconclusive
        );
        assert_eq!(
            Vulnerable::combine(&[Vulnerable::No, Vulnerable::No]),
            Vulnerable::No
        );
    }
}
