//! `--fail-on` conditions: `p99.9>200ms`, `max>1s`, `count>=100`, `stopped_share>5%`,
//! `finding:real_gt_cpu`, `finding:any`; several joined by `,` hold when any holds.

use pauselab_pause::units::parse_duration;

use crate::analyzer::Report;
use crate::rules::RULES;

/// One `--fail-on` condition.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// `finding:ID` (or `finding:any`): the rule fired.
    Finding(String),
    /// `METRIC OP VALUE`: a report's number compared.
    Compare {
        /// The number (`p99`, `stopped_share`...).
        metric: String,
        /// How it is compared.
        op: Op,
        /// With what: ms for durations, percent for shares, else a count.
        value: f64,
    },
}

/// How a metric is compared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `<`
    Lt,
    /// `<=`
    Le,
}

/// A condition that does not parse, and why.
#[derive(Debug, thiserror::Error)]
#[error("bad --fail-on condition '{text}': {reason}")]
pub struct ConditionError {
    text: String,
    reason: String,
}

/// Metrics that are durations (value needs a unit, compared in ms).
const DURATIONS: [&str; 17] = [
    "p50",
    "p90",
    "p99",
    "p99.9",
    "max",
    "mean",
    "total",
    "safepoint.max",
    "safepoint.total",
    "safepoint.p99",
    "ttsp",
    "ttsp.p99",
    "alloc_stall.max",
    "alloc_stall.total",
    "alloc_stall.p99",
    "full_gc.total",
    "cycle.max",
];
/// Metrics that are counts or percentages.
const PLAIN: [&str; 10] = [
    "count",
    "alloc_stall.count",
    "full_gc.count",
    "gc_share.1m",
    "gc_share.10m",
    "allocation_rate_mib_s",
    "safepoint.count",
    "stopped_share",
    "gc_share",
    "unparsed",
];

/// Parses `--fail-on`'s text: conditions joined by `,`.
pub fn parse_conditions(text: &str) -> Result<Vec<Condition>, ConditionError> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(parse_one)
        .collect()
}

fn parse_one(s: &str) -> Result<Condition, ConditionError> {
    let err = |reason: String| ConditionError {
        text: s.to_string(),
        reason,
    };
    if let Some(rule) = s.strip_prefix("finding:") {
        if rule != "any" && !RULES.contains(&rule) {
            return Err(err(format!(
                "unknown rule; one of any, {}",
                RULES.join(", ")
            )));
        }
        return Ok(Condition::Finding(rule.to_string()));
    }
    let at = s
        .find(['>', '<'])
        .ok_or_else(|| err("expected METRIC>VALUE, METRIC<VALUE or finding:RULE".into()))?;
    let metric = s[..at].trim().to_string();
    let (op, rest) = match &s[at..] {
        r if r.starts_with(">=") => (Op::Ge, &r[2..]),
        r if r.starts_with("<=") => (Op::Le, &r[2..]),
        r if r.starts_with('>') => (Op::Gt, &r[1..]),
        r => (Op::Lt, &r[1..]),
    };
    let rest = rest.trim();
    let value = if DURATIONS.contains(&metric.as_str()) {
        // A unit is required: `max>200` could mean 200 ms or 200 s.
        let limit = parse_duration(rest, None).map_err(|e| err(e.to_string()))?;
        limit.as_nanos() as f64 / 1e6
    } else if PLAIN.contains(&metric.as_str()) {
        rest.trim_end_matches('%')
            .parse::<f64>()
            .map_err(|_| err(format!("'{rest}' is not a number")))?
    } else {
        return Err(err(format!(
            "unknown metric '{metric}'; one of {}, {}",
            DURATIONS.join(", "),
            PLAIN.join(", ")
        )));
    };
    Ok(Condition::Compare { metric, op, value })
}

impl Condition {
    /// Whether it holds for `report`, with the metric's value in words.
    pub fn holds(&self, report: &Report) -> (bool, String) {
        match self {
            Condition::Finding(rule) => {
                let hit = report
                    .findings
                    .iter()
                    .find(|f| rule == "any" || f.rule == rule.as_str());
                match hit {
                    Some(f) => (true, format!("finding {} ({} matches)", f.rule, f.count)),
                    None => (false, format!("no finding {rule}")),
                }
            }
            Condition::Compare { metric, op, value } => {
                // What the input did not record (time to safepoint without safepoint
                // lines) holds no condition.
                let Some(actual) = metric_value(report, metric) else {
                    return (false, format!("{metric} = n/a (not in the input)"));
                };
                let holds = match op {
                    Op::Gt => actual > *value,
                    Op::Ge => actual >= *value,
                    Op::Lt => actual < *value,
                    Op::Le => actual <= *value,
                };
                (holds, format!("{metric} = {actual:.3}{}", unit(metric)))
            }
        }
    }
}

/// The unit a metric's value is printed in, with its leading space.
fn unit(metric: &str) -> &'static str {
    match metric {
        m if DURATIONS.contains(&m) => " ms",
        "stopped_share" | "gc_share" | "gc_share.1m" | "gc_share.10m" => " %",
        "allocation_rate_mib_s" => " MiB/s",
        _ => "",
    }
}

fn metric_value(r: &Report, metric: &str) -> Option<f64> {
    let p = &r.pauses.summary;
    let s = &r.safepoints.summary;
    Some(match metric {
        "p50" => p.p50_ms,
        "p90" => p.p90_ms,
        "p99" => p.p99_ms,
        "p99.9" => p.p99_9_ms,
        "max" => p.max_ms,
        "mean" => p.mean_ms,
        "total" => p.total_ms,
        "count" => p.count as f64,
        "safepoint.max" => s.max_ms,
        "safepoint.total" => s.total_ms,
        "safepoint.p99" => s.p99_ms,
        "safepoint.count" => s.count as f64,
        "ttsp" => r.safepoints.ttsp_max_ms?,
        "ttsp.p99" => r.safepoints.ttsp_p99_ms?,
        "stopped_share" => r.safepoints.stopped_share_pct.unwrap_or(0.0),
        "gc_share" => r.pauses.share_pct.unwrap_or(0.0),
        "unparsed" => r.unparsed_lines as f64,
        "alloc_stall.count" => r.allocation_stalls.summary.count as f64,
        "alloc_stall.max" => r.allocation_stalls.summary.max_ms,
        "alloc_stall.total" => r.allocation_stalls.summary.total_ms,
        "alloc_stall.p99" => r.allocation_stalls.summary.p99_ms,
        "full_gc.count" => r.pauses.full_gc_causes.iter().map(|c| c.count).sum::<u64>() as f64,
        "full_gc.total" => r.pauses.full_gc_causes.iter().map(|c| c.total_ms).sum(),
        "gc_share.1m" | "gc_share.10m" => {
            let window_s = if metric == "gc_share.1m" { 60 } else { 600 };
            r.pauses
                .worst_windows
                .iter()
                .find(|w| w.window_s == window_s)
                .map_or(0.0, |w| w.share_pct)
        }
        "allocation_rate_mib_s" => r.memory.allocation_rate_mib_s.unwrap_or(0.0),
        "cycle.max" => r.memory.cycles.iter().map(|c| c.max_ms).fold(0.0, f64::max),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_forms() {
        let c = parse_conditions("p99.9>200ms, max>=1s,finding:real_gt_cpu,count<10").unwrap();
        assert_eq!(c.len(), 4);
        assert_eq!(
            c[0],
            Condition::Compare {
                metric: "p99.9".into(),
                op: Op::Gt,
                value: 200.0
            }
        );
        assert_eq!(
            c[1],
            Condition::Compare {
                metric: "max".into(),
                op: Op::Ge,
                value: 1000.0
            }
        );
        assert_eq!(c[2], Condition::Finding("real_gt_cpu".into()));
        assert_eq!(
            c[3],
            Condition::Compare {
                metric: "count".into(),
                op: Op::Lt,
                value: 10.0
            }
        );
        assert!(
            parse_conditions("max>200").is_err(),
            "a duration needs a unit"
        );
        assert!(parse_conditions("finding:nope").is_err());
        assert!(parse_conditions("p42>1ms").is_err());
        assert!(parse_conditions("max").is_err());
        assert!(parse_conditions("alloc_stall.max>100ms,full_gc.count>0,gc_share.1m>20%").is_ok());
        assert!(parse_conditions("alloc_stall.max>100").is_err());
    }
}
