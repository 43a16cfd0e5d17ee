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
            .and_then(metric_of);
        let mut roles = Vec::new();
        for summary in summaries.iter_mut().filter(|s| &s.jdk == jdk) {
            let judgement = match (metric_of(summary), &baseline) {
                _ if summary.variant == experiment.baseline => Judgement {
                    verdict: VariantVerdict::Baseline,
                    evidence: "the baseline".into(),
                },
                (Some(stats), Some(base)) if base.count > 0 => verdict::judge(rule, &stats, base),
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
