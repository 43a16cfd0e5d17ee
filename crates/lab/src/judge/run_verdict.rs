//! The verdict of a whole run (`verdict.json`): every variant judged against the
//! baseline on its JDK by the experiment's metric, each JDK's answer, the experiment's.

use crate::experiment::layout::FORMAT_VERSION;
use crate::experiment::{Experiment, Metric};
use crate::judge::verdict::{self, Judgement, VariantVerdict, Vulnerable};
use crate::judge::{JdkVerdict, VariantSummary};
use pauselab_pause::Summary;

/// `verdict.json`, with the lab's typed verdict rule.
pub type Outcome = pauselab_bundle::Verdict<crate::experiment::VerdictRule>;

/// What a run left to judge besides its variants' summaries.
pub struct RunFacts<'a> {
    /// The labels of the JDKs, in the run's order.
    pub jdks: &'a [String],
    /// The run was cut short (SIGINT, SIGTERM): it cannot say "not vulnerable".
    pub interrupted: bool,
    pub notes: &'a [String],
    /// What kept the host busy (empty: a quiet host).
    pub noise: &'a [String],
}

/// Why a variant whose JVM ran with the hiccup agent has nothing to judge: its interval
/// log holds no interval after the warm-up, so the JVM failed to start, died at once or
/// ended before the warm-up did. Whatever the metric, the rest of its numbers (the few
/// safepoints of a dying JVM) say nothing about stalls.
fn never_ran(experiment: &Experiment, summary: &VariantSummary) -> Option<String> {
    if !experiment.workload.hiccup_agent || summary.skipped.is_some() || summary.hiccups.is_some() {
        return None;
    }
    let how = summary
        .early_exit
        .as_deref()
        .and_then(|e| e.lines().next())
        .map_or(String::new(), |e| format!(" ({e})"));
    Some(format!(
        "the JVM logged no hiccup interval after the warm-up: it failed to start or died early{how}"
    ))
}

/// Judges `summaries` (each variant's verdict and evidence are filled in) and gives the
/// run's verdict, holding them.
pub fn judge_run(
    experiment: &Experiment,
    facts: &RunFacts<'_>,
    mut summaries: Vec<VariantSummary>,
) -> Outcome {
    let rule = &experiment.verdict;
    let metric_of = |s: &VariantSummary| -> Option<Summary> {
        match rule.metric {
            Metric::Hiccup => s.hiccups,
            Metric::Safepoint => s.safepoints,
            Metric::Latency => s.latency,
            Metric::Stop => s.stops,
            Metric::JmhScore => None,
        }
    };
    let mut per_jdk = Vec::new();
    for jdk in facts.jdks {
        if rule.metric == Metric::JmhScore {
            let mut of_jdk: Vec<&mut VariantSummary> =
                summaries.iter_mut().filter(|s| &s.jdk == jdk).collect();
            per_jdk.push(crate::judge::judge_summaries(
                rule,
                &experiment.baseline,
                jdk,
                &mut of_jdk,
            ));
            continue;
        }
        let baseline = summaries
            .iter()
            .find(|s| &s.jdk == jdk && s.variant == experiment.baseline)
            .filter(|s| never_ran(experiment, s).is_none())
            .and_then(metric_of);
        let mut roles = Vec::new();
        for summary in summaries.iter_mut().filter(|s| &s.jdk == jdk) {
            let judgement = if let Some(reason) = never_ran(experiment, summary) {
                Judgement {
                    verdict: VariantVerdict::Failed,
                    evidence: reason,
                }
            } else {
                match (metric_of(summary), &baseline) {
                    _ if summary.variant == experiment.baseline => Judgement {
                        verdict: VariantVerdict::Baseline,
                        evidence: "the baseline".into(),
                    },
                    (Some(stats), Some(base)) if base.count > 0 => {
                        verdict::judge(rule, &stats, base)
                    }
                    (Some(_), _) => Judgement {
                        verdict: VariantVerdict::NoData,
                        evidence: "the baseline has no data".into(),
                    },
                    (None, _) => Judgement {
                        verdict: summary.verdict,
                        evidence: summary
                            .skipped
                            .clone()
                            .or_else(|| summary.early_exit.clone())
                            .or_else(|| summary.errors.first().cloned())
                            .unwrap_or_else(|| "no data".into()),
                    },
                }
            };
            summary.verdict = judgement.verdict;
            summary.evidence = judgement.evidence;
            roles.push((summary.role, summary.verdict));
        }
        let (vulnerable, reason) = verdict::experiment_verdict(rule, baseline.as_ref(), &roles);
        per_jdk.push(JdkVerdict {
            jdk: jdk.clone(),
            vulnerable,
            reason,
            baseline_max_ms: baseline.map(|b| b.max_ms),
        });
    }
    let mut result = Vulnerable::combine(&per_jdk.iter().map(|j| j.vulnerable).collect::<Vec<_>>());
    if facts.interrupted && result != Vulnerable::Yes {
        result = Vulnerable::Inconclusive;
    }
    let baseline_max_ms = per_jdk
        .iter()
        .filter_map(|j| j.baseline_max_ms)
        .reduce(f64::max);
    let conclusions = experiment
        .conclusion
        .as_ref()
        .map(|c| crate::judge::compare(c, &summaries.iter().collect::<Vec<_>>()))
        .unwrap_or_default();
    Outcome {
        format_version: FORMAT_VERSION,
        experiment: experiment.name.clone(),
        result,
        rule: rule.clone(),
        baseline_max_ms,
        per_jdk,
        variants: summaries,
        interrupted: facts.interrupted,
        notes: facts.notes.to_vec(),
        noisy: facts.noise.to_vec(),
        conclusions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A variant of `summary.json` as a run writes it: a JVM that ran gives hiccups,
    /// safepoints and stops; one that died at once gives its early exit, the GC log's few
    /// safepoints and no hiccup interval.
    fn variant(jdk: &str, name: &str, role: &str, ran: bool) -> VariantSummary {
        let summary =
            |max_ms: f64| serde_json::json!({"count": 50, "p99_9_ms": max_ms, "max_ms": max_ms});
        let json = if ran {
            serde_json::json!({
                "id": format!("{name}-{jdk}"), "jdk": jdk, "variant": name, "role": role,
                "verdict": "failed", "hiccups": summary(8.0), "safepoints": summary(4.0),
                "stops": summary(6.0), "exit_code": 0,
            })
        } else {
            serde_json::json!({
                "id": format!("{name}-{jdk}"), "jdk": jdk, "variant": name, "role": role,
                "verdict": "failed", "safepoints": summary(3.0), "stops": summary(3.0),
                "early_exit": "exited early: exit status: 1",
                "errors": [format!("variants/{name}-{jdk}/hiccup.hlog: no hiccup samples after the warm-up (missing or empty log)")],
            })
        };
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn a_variant_whose_jvm_never_logged_an_interval_failed() {
        let (experiment, _) = Experiment::load("hsperf-mmap").unwrap();
        let jdks = ["jdk17".to_string(), "jdk25".to_string()];
        let facts = RunFacts {
            jdks: &jdks,
            interrupted: false,
            notes: &[],
            noise: &[],
        };
        let summaries = vec![
            variant("jdk17", "no-perfdata", "baseline", true),
            variant("jdk17", "default", "subject", false),
            variant("jdk17", "no-shared-mem", "mitigation", true),
            variant("jdk25", "no-perfdata", "baseline", false),
            variant("jdk25", "default", "subject", true),
        ];
        let outcome = judge_run(&experiment, &facts, summaries);
        let judged = |jdk: &str, name: &str| {
            let v = outcome
                .variants
                .iter()
                .find(|v| v.jdk == jdk && v.variant == name)
                .unwrap();
            (v.verdict, v.evidence.clone())
        };
        for (jdk, name) in [("jdk17", "default"), ("jdk25", "no-perfdata")] {
            let (verdict, evidence) = judged(jdk, name);
            assert_eq!(verdict, VariantVerdict::Failed, "{jdk} {name}: {evidence}");
            assert_eq!(
                evidence,
                "the JVM logged no hiccup interval after the warm-up: it failed to start or died early (exited early: exit status: 1)"
            );
        }
        assert_eq!(judged("jdk17", "no-shared-mem").0, VariantVerdict::NoStalls);
        assert_eq!(judged("jdk25", "default").0, VariantVerdict::NoData);
        // Neither JDK can answer: its subject, or its baseline, never ran.
        for jdk in &outcome.per_jdk {
            assert_eq!(jdk.vulnerable, Vulnerable::Inconclusive, "{}", jdk.reason);
        }
        assert_eq!(outcome.result, Vulnerable::Inconclusive);
    }
}
