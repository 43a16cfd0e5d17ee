//! The end of the analysis: the report's sections and the rules' findings.

use pauselab_pause::civil::format_epoch_ms;
use pauselab_pause::Collector;

use crate::analyzer::clock::Clock;
use crate::analyzer::report::{Jvm, PauseSection, Report, SafepointSection, Span, Warning};
use crate::analyzer::safepoints::SafepointSeries;
use crate::analyzer::Analyzer;
use crate::evidence::RuleTracker;
use crate::health::{StallSection, WindowShare};
use crate::rules::concurrent_mode_failure;
use crate::rules::finding::Finding;
use crate::rules::rule::{Context, Series};
use crate::timeouts::TimeoutSection;
use crate::totals::{NameTotals, Totals};

/// What the findings need besides the analyzer's own numbers.
struct Judged<'a> {
    series: Series,
    covered_ns: u64,
    operations: &'a [NameTotals],
    full_gc_causes: &'a [NameTotals],
    worst_windows: &'a [WindowShare],
    allocation_stalls: &'a StallSection,
    timeouts: &'a TimeoutSection,
    unmatched_timeouts: &'a RuleTracker,
}

impl Analyzer<'_> {
    /// Finishes the analysis.
    pub fn finish(mut self) -> Report {
        self.release_nested();
        self.flush_pending();
        let covered_ns = Clock::covered_by_all(&self.clocks);
        let (source, series) = self.counted_series();
        let (timeouts, unmatched_timeouts) =
            std::mem::take(&mut self.timeouts).finish(self.opts.evidence);
        let full_gc_causes =
            sorted_by_count(self.full_gc_causes.iter().map(|(c, t)| (c.as_str(), t)));
        let worst_windows: Vec<WindowShare> = self.windows.worst().into_iter().flatten().collect();
        let allocation_stalls = self.allocation_stalls.section();
        let safepoints = self.safepoint_section(source, series, covered_ns, timeouts);
        let (findings, cms_failures) = self.findings(&Judged {
            series,
            covered_ns,
            operations: &safepoints.operations,
            full_gc_causes: &full_gc_causes,
            worst_windows: &worst_windows,
            allocation_stalls: &allocation_stalls,
            timeouts: &safepoints.timeouts,
            unmatched_timeouts: &unmatched_timeouts,
        });
        let jvm = Jvm {
            version: self.jvm.version(&self.files),
            collector: self.jvm.collector(&self.by_name, cms_failures > 0),
        };
        let pauses = PauseSection {
            summary: self.gc.summary(),
            share_pct: if self.gc.count() > 0 {
                share(self.gc.total_ns(), covered_ns)
            } else {
                None
            },
            by_name: sorted_by_count(self.by_name.iter()),
            worst_windows,
            full_gc_causes,
        };
        let mut report = Report {
            jvm,
            span: self.span(covered_ns),
            pauses,
            safepoints,
            allocation_stalls,
            relocation_stalls: self.relocation_stalls.section(),
            memory: self.memory.section(),
            worst: std::mem::take(&mut self.worst),
            findings,
            unparsed_lines: self.unparsed,
            first_unparsed: self.first_unparsed.take(),
            warnings: std::mem::take(&mut self.warnings),
            inputs: std::mem::take(&mut self.files),
        };
        if !report.has_events() {
            self.warn_of_no_events(&mut report);
        } else if report.pauses.summary.count == 0
            && report.jvm.collector.as_deref() == Some(Collector::Zgc.name())
        {
            // ZGC's pause lines carry the `gc,phases` tags: `-Xlog:gc` shows its cycles
            // and stalls but none of its pauses.
            report.warnings.push(Warning {
                file: report.inputs.first().map_or_else(String::new, |f| f.file.clone()),
                line: None,
                message: "no GC pauses: ZGC writes its pauses (Pause Mark Start, Pause Mark End, Pause Relocate Start) with the gc+phases tags, which this log leaves out; log with -Xlog:gc*,safepoint to count them".to_string(),
            });
        }
        report
    }

    /// The safepoint series the report counts: safepoint lines, else the JDK 8 statistics
    /// table.
    fn counted_series(&self) -> (Option<&'static str>, Series) {
        if self.safepoint_lines.stats.count() > 0 {
            (Some("safepoint_lines"), Series::Lines)
        } else if self.safepoint_statistics.stats.count() > 0 {
            (Some("safepoint_statistics"), Series::Statistics)
        } else {
            (None, Series::Lines)
        }
    }

    fn series(&self, series: Series) -> &SafepointSeries {
        match series {
            Series::Lines => &self.safepoint_lines,
            Series::Statistics => &self.safepoint_statistics,
        }
    }

    fn safepoint_section(
        &self,
        source: Option<&'static str>,
        series: Series,
        covered_ns: u64,
        timeouts: TimeoutSection,
    ) -> SafepointSection {
        let series = self.series(series);
        let mut operations: Vec<NameTotals> = series
            .operations
            .iter()
            .map(|(name, t)| t.named(name))
            .collect();
        operations.sort_by(|a, b| b.total_ms.total_cmp(&a.total_ms));
        let ttsp = &series.ttsp;
        SafepointSection {
            source,
            summary: series.stats.summary(),
            ttsp_max_ms: (ttsp.count() > 0).then(|| ttsp.max_ns() as f64 / 1e6),
            ttsp_p99_ms: (ttsp.count() > 0).then(|| ttsp.percentile_ns(99.0) as f64 / 1e6),
            stopped_share_pct: if series.stats.count() > 0 {
                share(series.stats.total_ns(), covered_ns)
            } else {
                None
            },
            non_gc_count: series.non_gc.count,
            non_gc_total_ms: series.non_gc.total_ns as f64 / 1e6,
            operations,
            timeouts,
        }
    }

    /// The rules' findings, and how many CMS concurrent mode failures they saw.
    fn findings(&self, judged: &Judged<'_>) -> (Vec<Finding>, u64) {
        let counted = self.series(judged.series);
        let stalls = &judged.allocation_stalls.summary;
        let mut ctx = Context {
            thresholds: self.opts.thresholds,
            flags: &self.jvm.flags,
            pause_count: self.gc.count(),
            pause_total_ns: self.gc.total_ns(),
            covered_ns: judged.covered_ns,
            series: judged.series,
            safepoint_count: counted.stats.count(),
            non_gc_total_ns: counted.non_gc.total_ns,
            non_gc_count: counted.non_gc.count,
            top_non_gc_operations: judged
                .operations
                .iter()
                .filter(|o| o.gc == Some(false))
                .take(3)
                .map(|o| (o.name.clone(), o.count, o.total_ms))
                .collect(),
            full_gc_causes: judged
                .full_gc_causes
                .iter()
                .map(|c| (c.name.clone(), c.count, c.total_ms))
                .collect(),
            worst_windows: judged.worst_windows,
            allocation_stalls: (stalls.count, stalls.total_ms, stalls.max_ms),
            generational_zgc: self.jvm.flags.has("-XX:+ZGenerational")
                || self
                    .by_name
                    .names()
                    .any(|n| matches!(n.as_bytes(), [b'y' | b'Y' | b'O', b':', b' ', ..])),
            jdk_feature: self
                .jvm
                .version(&self.files)
                .as_deref()
                .and_then(super::jvm::feature_release),
            safepoint_timeouts: &judged.timeouts.threads,
            unmatched_timeouts: judged.unmatched_timeouts,
            matched: Vec::new(),
        };
        let findings = self.rules.findings(&mut ctx);
        (findings, ctx.matched(concurrent_mode_failure::ID))
    }

    fn span(&self, covered_ns: u64) -> Span {
        let walls = || self.clocks.iter().filter_map(Clock::wall_range);
        let first_wall = walls().map(|(first, _)| first).min();
        let last_wall = walls().map(|(_, last)| last).max();
        Span {
            start_uptime_s: self.uptime.span().map(|(u, _)| u as f64 / 1e9),
            end_uptime_s: self.uptime.span().map(|(_, u)| u as f64 / 1e9),
            start_wall: first_wall.map(format_epoch_ms),
            end_wall: last_wall.map(format_epoch_ms),
            covered_s: covered_ns as f64 / 1e9,
        }
    }

    /// A header or decorated lines alone must not read as a healthy JVM.
    fn warn_of_no_events(&self, report: &mut Report) {
        for (i, file) in report.inputs.iter().enumerate() {
            let recognised: u64 = self.format_counts[i].iter().sum();
            if recognised == 0 {
                continue;
            }
            let holds = if recognised <= self.header_lines[i] {
                "only the JVM's header (version, collector, command line flags): GC logging began, nothing was collected yet, or the log was cut".to_string()
            } else {
                format!("{recognised} log line(s), none of them a pause, safepoint, stall or collection cycle: e.g. concurrent phases, statistics printed at exit, or a log level that leaves pauses out (use -Xlog:gc*)")
            };
            report.warnings.push(Warning {
                file: file.file.clone(),
                line: None,
                message: format!("no GC events (the log holds {holds})"),
            });
        }
    }
}

/// Pauses that overlap in the log (two JVMs in one file) could add up to more than the
/// covered time: at most 100 %.
fn share(ns: u128, covered_ns: u64) -> Option<f64> {
    (covered_ns > 0).then(|| (ns as f64 * 100.0 / covered_ns as f64).min(100.0))
}

/// Named totals, most frequent first (equal counts in name order).
fn sorted_by_count<'a>(totals: impl IntoIterator<Item = (&'a str, &'a Totals)>) -> Vec<NameTotals> {
    let mut named: Vec<NameTotals> = totals.into_iter().map(|(name, t)| t.named(name)).collect();
    named.sort_by_key(|n| std::cmp::Reverse(n.count));
    named
}
