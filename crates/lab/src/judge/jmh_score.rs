//! The `jmh-score` judge: a variant's JMH score against the baseline's on the same JDK,
//! in the direction of the score's unit, beyond the margin and the error bars.

use serde::Serialize;

use crate::experiment::{Role, VerdictRule};
use crate::judge::verdict::{Judgement, VariantVerdict, Vulnerable};
use crate::judge::{JdkVerdict, VariantSummary};
use crate::measure::jmh::{score_of, Score};

/// Whether a higher score means more cost: times per operation (`us/op`, `ns/op`, ...) do,
/// throughputs (`ops/s`, ...) do not.
pub fn higher_is_costlier(unit: &str) -> bool {
    !unit.starts_with("ops/")
}

/// A variant's score against the baseline's (same benchmark, same JDK).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cost {
    /// Cost per operation relative to the baseline: 2.0 = each operation takes twice as
    /// long (or throughput halves).
    pub ratio: f64,
    /// Whether the two confidence intervals (score +- error) are apart, so the difference
    /// is not JMH's own noise. False when an error is unknown.
    pub separated: bool,
    /// The baseline's error relative to its score (None when JMH gave no error).
    pub baseline_relative_error: Option<f64>,
}

/// Compares two scores of the same unit; None when the units differ or a score is 0.
pub fn cost(subject: &Score, baseline: &Score) -> Option<Cost> {
    if subject.unit != baseline.unit || subject.value <= 0.0 || baseline.value <= 0.0 {
        return None;
    }
    let ratio = if higher_is_costlier(&subject.unit) {
        subject.value / baseline.value
    } else {
        baseline.value / subject.value
    };
    let separated = match (subject.error, baseline.error) {
        (Some(s), Some(b)) => {
            subject.value - s > baseline.value + b || subject.value + s < baseline.value - b
        }
        _ => false,
    };
    Some(Cost {
        ratio,
        separated,
        baseline_relative_error: baseline.error.map(|e| e / baseline.value),
    })
}

/// A variant judged on its score against the baseline's.
#[derive(Debug, Clone, PartialEq)]
pub struct CostJudgement {
    /// `Slower`: at least `margin` times the baseline's cost, with the confidence
    /// intervals apart; `Unclear`: at least `margin` times, within the error bars;
    /// `NotSlower`: below the margin.
    pub verdict: VariantVerdict,
    pub cost: Cost,
    /// `3.70x jfr-off (+270%): 8.692 +- 2.132 us/op vs 2.350 +- 0.257 us/op`.
    pub evidence: String,
}

/// Judges `subject` against `baseline` (named `baseline_name` in the evidence): slower
/// when its cost is at least `margin` times the baseline's and the difference is larger
/// than JMH's errors. None when the scores cannot be compared (different units).
pub fn judge_cost(
    margin: f64,
    subject: &Score,
    baseline: &Score,
    baseline_name: &str,
) -> Option<CostJudgement> {
    let cost = cost(subject, baseline)?;
    let verdict = match (cost.ratio >= margin, cost.separated) {
        (true, true) => VariantVerdict::Slower,
        (true, false) => VariantVerdict::Unclear,
        (false, _) => VariantVerdict::NotSlower,
    };
    let mut evidence = format!(
        "{:.2}x {baseline_name} ({:+.0}%): {} vs {}",
        cost.ratio,
        (cost.ratio - 1.0) * 100.0,
        format_score(subject),
        format_score(baseline)
    );
    match verdict {
        VariantVerdict::Unclear => evidence.push_str("; within the error bars"),
        VariantVerdict::NotSlower => evidence.push_str(&format!("; below the {margin}x margin")),
        _ => {}
    }
    Some(CostJudgement {
        verdict,
        cost,
        evidence,
    })
}

/// Judges the summaries of one JDK on `jmh.score` (sets their verdict and evidence).
pub fn judge_summaries(
    rule: &VerdictRule,
    baseline: &str,
    jdk: &str,
    summaries: &mut [&mut VariantSummary],
) -> JdkVerdict {
    let inputs: Vec<CostInput> = summaries
        .iter()
        .map(|s| CostInput {
            variant: s.variant.clone(),
            role: s.role,
            score: score_of(&s.measurements),
        })
        .collect();
    let (judgements, vulnerable, reason) = judge_jdk(rule, baseline, &inputs);
    for (summary, judgement) in summaries.iter_mut().zip(judgements) {
        match judgement {
            Some(j) => {
                summary.verdict = j.verdict;
                summary.evidence = j.evidence;
            }
            None => {
                summary.evidence = summary
                    .skipped
                    .clone()
                    .or_else(|| summary.early_exit.clone())
                    .or_else(|| summary.errors.first().cloned())
                    .unwrap_or_else(|| "no JMH result".into())
            }
        }
    }
    JdkVerdict {
        jdk: jdk.to_string(),
        vulnerable,
        reason,
        baseline_max_ms: None,
    }
}

/// One variant of one JDK, for [`judge_jdk`].
#[derive(Debug, Clone)]
pub struct CostInput {
    pub variant: String,
    pub role: Role,
    /// None when the variant gave no JMH result.
    pub score: Option<Score>,
}

/// The `jmh-score` verdict of one JDK: a judgement per variant (None: no score, the
/// variant keeps its failed/skipped verdict) and the JDK's answer with its reason.
pub fn judge_jdk(
    rule: &VerdictRule,
    baseline: &str,
    inputs: &[CostInput],
) -> (Vec<Option<Judgement>>, Vulnerable, String) {
    let base = inputs
        .iter()
        .find(|i| i.variant == baseline)
        .and_then(|i| i.score.as_ref());
    let mut judgements = Vec::new();
    let mut subjects = Vec::new();
    for input in inputs {
        let judgement = match (&input.score, base) {
            (None, _) => None,
            (Some(score), _) if input.variant == baseline => Some(Judgement {
                verdict: VariantVerdict::Baseline,
                evidence: format_score(score),
            }),
            (Some(_), None) => Some(Judgement {
                verdict: VariantVerdict::NoData,
                evidence: "the baseline has no JMH result".into(),
            }),
            (Some(score), Some(base)) => {
                Some(match judge_cost(rule.margin, score, base, baseline) {
                    Some(c) => {
                        if input.role == Role::Subject {
                            subjects.push((input.variant.clone(), c.clone()));
                        }
                        Judgement {
                            verdict: c.verdict,
                            evidence: c.evidence,
                        }
                    }
                    None => Judgement {
                        verdict: VariantVerdict::Failed,
                        evidence: format!(
                            "score in {} cannot be compared with the baseline's {}",
                            score.unit, base.unit
                        ),
                    },
                })
            }
        };
        judgements.push(judgement);
    }
    let (answer, reason) = jdk_answer(rule, baseline, base, &subjects);
    (judgements, answer, reason)
}

fn jdk_answer(
    rule: &VerdictRule,
    baseline: &str,
    base: Option<&Score>,
    subjects: &[(String, CostJudgement)],
) -> (Vulnerable, String) {
    let Some(base) = base else {
        return (
            Vulnerable::Inconclusive,
            "the baseline variant gave no JMH result".into(),
        );
    };
    if let Some((name, c)) = subjects
        .iter()
        .find(|(_, c)| c.verdict == VariantVerdict::Slower)
    {
        return (
            Vulnerable::Yes,
            format!(
                "{name} costs {:.2}x {baseline} per operation ({:+.0}%)",
                c.cost.ratio,
                (c.cost.ratio - 1.0) * 100.0
            ),
        );
    }
    match base.error {
        None => {
            return (
                Vulnerable::Inconclusive,
                "JMH gave no error for the baseline (too few iterations): cannot tell".into(),
            )
        }
        Some(error) if error / base.value > rule.max_baseline_error => {
            return (
                Vulnerable::Inconclusive,
                format!(
                    "noise too high: the baseline's error is {:.0}% of its score (limit {:.0}%)",
                    100.0 * error / base.value,
                    100.0 * rule.max_baseline_error
                ),
            )
        }
        Some(_) => {}
    }
    if let Some((name, c)) = subjects
        .iter()
        .find(|(_, c)| c.verdict == VariantVerdict::Unclear)
    {
        return (Vulnerable::Inconclusive, format!("{name}: {}", c.evidence));
    }
    match subjects.first() {
        None => (
            Vulnerable::Inconclusive,
            "no subject variant gave a JMH result".into(),
        ),
        Some((name, c)) => (Vulnerable::No, format!("{name}: {}", c.evidence)),
    }
}

/// `7.85 +- 1.20 us/op`.
pub fn format_score(score: &Score) -> String {
    match score.error {
        Some(e) => format!("{:.3} +- {:.3} {}", score.value, e, score.unit),
        None => format!("{:.3} {}", score.value, score.unit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(value: f64, error: Option<f64>, unit: &str) -> Score {
        Score {
            value,
            error,
            unit: unit.into(),
        }
    }

    #[test]
    fn cost_is_relative_to_the_baseline_in_the_direction_of_the_unit() {
        let base = score(2.0, Some(0.2), "us/op");
        let c = cost(&score(8.0, Some(1.0), "us/op"), &base).unwrap();
        assert_eq!(c.ratio, 4.0);
        assert!(c.separated);
        assert_eq!(c.baseline_relative_error, Some(0.1));
        // Overlapping intervals: not separated.
        let c = cost(&score(2.3, Some(0.2), "us/op"), &base).unwrap();
        assert!(!c.separated);
        // Faster and apart is separated too.
        assert!(
            cost(&score(1.0, Some(0.1), "us/op"), &base)
                .unwrap()
                .separated
        );
        // Throughput: half the operations per second is twice the cost.
        let c = cost(&score(250.0, None, "ops/s"), &score(500.0, None, "ops/s")).unwrap();
        assert_eq!(c.ratio, 2.0);
        assert!(!c.separated);
        assert_eq!(c.baseline_relative_error, None);
        assert!(cost(&score(1.0, None, "ns/op"), &base).is_none());
        assert!(cost(&score(1.0, None, "us/op"), &score(0.0, None, "us/op")).is_none());
        assert_eq!(format_score(&base), "2.000 +- 0.200 us/op");
        assert_eq!(format_score(&score(3.0, None, "B/op")), "3.000 B/op");
    }

    #[test]
    fn judged_slower_only_beyond_the_margin_and_the_error_bars() {
        let base = score(2.35, Some(0.257), "us/op");
        let on = judge_cost(1.5, &score(8.692, Some(2.132), "us/op"), &base, "jfr-off").unwrap();
        assert_eq!(on.verdict, VariantVerdict::Slower);
        assert_eq!(
            on.evidence,
            "3.70x jfr-off (+270%): 8.692 +- 2.132 us/op vs 2.350 +- 0.257 us/op"
        );
        let disabled = judge_cost(1.5, &score(2.138, Some(0.239), "us/op"), &base, "jfr-off");
        let disabled = disabled.unwrap();
        assert_eq!(disabled.verdict, VariantVerdict::NotSlower);
        assert!(disabled.evidence.contains("(-9%)"), "{}", disabled.evidence);
        assert!(
            disabled.evidence.contains("below the 1.5x margin"),
            "{}",
            disabled.evidence
        );
        // Twice as slow, but JMH's errors overlap: not enough to say so.
        let noisy = judge_cost(1.5, &score(5.0, Some(2.5), "us/op"), &base, "jfr-off").unwrap();
        assert_eq!(noisy.verdict, VariantVerdict::Unclear);
        assert!(
            noisy.evidence.contains("within the error bars"),
            "{}",
            noisy.evidence
        );
        assert!(judge_cost(1.5, &score(5.0, None, "ops/s"), &base, "jfr-off").is_none());
    }

    fn rule() -> VerdictRule {
        VerdictRule {
            metric: crate::experiment::Metric::JmhScore,
            margin: 1.5,
            floor_ms: 0.0,
            noise_ms: 0.0,
            max_baseline_error: 0.5,
        }
    }

    fn input(variant: &str, role: Role, s: Option<Score>) -> CostInput {
        CostInput {
            variant: variant.into(),
            role,
            score: s,
        }
    }

    #[test]
    fn jdk_answers() {
        let off = || Some(score(2.35, Some(0.257), "us/op"));
        let setups = |on: Option<Score>| {
            vec![
                input("jfr-off", Role::Baseline, off()),
                input(
                    "event-disabled",
                    Role::Mitigation,
                    Some(score(2.138, Some(0.239), "us/op")),
                ),
                input("event-enabled", Role::Subject, on),
            ]
        };
        let (judgements, answer, reason) = judge_jdk(
            &rule(),
            "jfr-off",
            &setups(Some(score(8.692, Some(2.132), "us/op"))),
        );
        let verdicts: Vec<VariantVerdict> = judgements
            .iter()
            .map(|j| j.as_ref().unwrap().verdict)
            .collect();
        assert_eq!(
            verdicts,
            [
                VariantVerdict::Baseline,
                VariantVerdict::NotSlower,
                VariantVerdict::Slower
            ]
        );
        assert_eq!(answer, Vulnerable::Yes);
        assert_eq!(
            reason,
            "event-enabled costs 3.70x jfr-off per operation (+270%)"
        );

        let (_, answer, reason) = judge_jdk(
            &rule(),
            "jfr-off",
            &setups(Some(score(2.5, Some(0.2), "us/op"))),
        );
        assert_eq!(answer, Vulnerable::No);
        assert!(
            reason.starts_with("event-enabled: 1.06x jfr-off"),
            "{reason}"
        );

        // A quiet baseline, but the subject's own error bars reach back to it: cannot tell.
        let (judgements, answer, reason) = judge_jdk(
            &rule(),
            "jfr-off",
            &setups(Some(score(5.0, Some(3.0), "us/op"))),
        );
        assert_eq!(
            judgements[2].as_ref().unwrap().verdict,
            VariantVerdict::Unclear
        );
        assert_eq!(answer, Vulnerable::Inconclusive);
        assert!(reason.contains("within the error bars"), "{reason}");

        // No result from the subject: its own verdict stays, the answer is inconclusive.
        let (judgements, answer, _) = judge_jdk(&rule(), "jfr-off", &setups(None));
        assert!(judgements[2].is_none());
        assert_eq!(answer, Vulnerable::Inconclusive);

        // A noisy baseline cannot say "no"...
        let mut noisy = setups(Some(score(2.5, Some(0.2), "us/op")));
        noisy[0].score = Some(score(2.35, Some(1.5), "us/op"));
        let (_, answer, reason) = judge_jdk(&rule(), "jfr-off", &noisy);
        assert_eq!(answer, Vulnerable::Inconclusive);
        assert!(reason.contains("64% of its score"), "{reason}");
        // ...nor can one without an error.
        noisy[0].score = Some(score(2.35, None, "us/op"));
        assert_eq!(
            judge_jdk(&rule(), "jfr-off", &noisy).1,
            Vulnerable::Inconclusive
        );

        // No baseline result.
        let mut none = setups(Some(score(8.0, Some(1.0), "us/op")));
        none[0].score = None;
        let (judgements, answer, _) = judge_jdk(&rule(), "jfr-off", &none);
        assert_eq!(answer, Vulnerable::Inconclusive);
        assert_eq!(
            judgements[2].as_ref().unwrap().verdict,
            VariantVerdict::NoData
        );
    }

    #[test]
    fn cost_direction_follows_the_unit() {
        assert!(higher_is_costlier("us/op"));
        assert!(higher_is_costlier("ns/op"));
        assert!(!higher_is_costlier("ops/s"));
        assert!(!higher_is_costlier("ops/us"));
    }
}
