//! One analysis per JVM (`pauselab analyze`): GC logs grouped by the JVM that wrote them,
//! or JFR recordings, each group read into an `Analyzer` of its own, with the inputs that
//! could not be read kept to be named after the reports of the others.
//!
//! Here rather than in pauselab-analysis, which depends on neither reader, nor in a reader,
//! which depends on no analysis (docs/ARCHITECTURE.md): this crate reads logs and
//! recordings into the analysis already (`gc`), and `report` can read each JVM alike.

use pauselab_analysis::{Analyzer, Options, Report, Tee};
use pauselab_gclog::input::{self, Input};
use pauselab_gclog::{analyze_inputs_with, jvm_groups, JvmRead};
use pauselab_jfr::RecordingExtras;

/// What was given to analyse: JFR recordings, or GC logs (rotated sets expanded, stdin).
pub enum Sources {
    Recordings(Vec<String>),
    Logs(Vec<Input>),
}

impl Sources {
    /// The inputs named on the command line; recordings and logs do not mix.
    pub fn find(names: &[String]) -> Result<Sources, AnalyzeError> {
        Ok(match pauselab_jfr::recordings(names)? {
            Some(recordings) => Sources::Recordings(recordings),
            None => Sources::Logs(input::expand(names)?),
        })
    }

    pub fn are_recordings(&self) -> bool {
        matches!(self, Sources::Recordings(_))
    }
}

/// The inputs of one JVM, and why they are not an earlier group's JVM.
enum Group {
    Recordings(Vec<String>, Option<String>),
    Logs(Vec<Input>, Option<String>),
}

/// The error for recordings of several JVMs given to an output that holds one JVM's
/// pauses: the same as for logs.
fn several_jvms(groups: &[pauselab_jfr::RecordingsOfJvm]) -> pauselab_gclog::Error {
    pauselab_gclog::Error::SeveralJvms {
        count: groups.len(),
        why: groups[1].separated_because.clone().unwrap_or_default(),
        groups: groups
            .iter()
            .map(|g| g.paths.join(" + "))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// Why nothing could be reported.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    #[error(transparent)]
    Log(#[from] pauselab_gclog::Error),
    #[error(transparent)]
    Recording(#[from] pauselab_jfr::Error),
    /// No JVM's inputs were given.
    #[error("no input could be read")]
    NothingRead,
}

/// The analyses of the JVMs that could be read.
pub struct Analyses {
    /// One report per JVM, in the order of their first inputs; never empty.
    pub reports: Vec<Report>,
    /// Why each JVM's inputs are not an earlier one's (None for the first).
    pub separated_because: Vec<Option<String>>,
    /// Inputs that could not be read: the reports are incomplete.
    pub failed: Vec<AnalyzeError>,
    /// What each recording adds to its records, when the sources were recordings.
    pub recordings: Option<Vec<RecordingExtras>>,
}

/// Reads `sources` into one analysis per JVM, every pause also handed to `sinks`.
/// `one_jvm`: the caller's outputs hold one JVM's pauses (an interval log, an events file),
/// so inputs of several JVMs are refused; a recording is always one JVM's.
pub fn analyze_each_jvm(
    sources: Sources,
    one_jvm: bool,
    options: &Options,
    sinks: &mut Tee<'_>,
    threads: usize,
) -> Result<Analyses, AnalyzeError> {
    let groups: Vec<Group> = match sources {
        Sources::Recordings(paths) => {
            let groups = pauselab_jfr::group_recordings_by_jvm(paths);
            if one_jvm && groups.len() > 1 {
                return Err(several_jvms(&groups).into());
            }
            groups
                .into_iter()
                .map(|g| Group::Recordings(g.paths, g.separated_because))
                .collect()
        }
        Sources::Logs(inputs) => jvm_groups(inputs, one_jvm)?
            .into_iter()
            .map(|g| Group::Logs(g.inputs, g.separated_because))
            .collect(),
    };
    let jvms = groups.len();
    let mut analyses = Analyses {
        reports: Vec::new(),
        separated_because: Vec::new(),
        failed: Vec::new(),
        recordings: None,
    };
    for group in groups {
        let mut analyzer = Analyzer::new(options.clone());
        if !sinks.is_empty() {
            analyzer = analyzer.with_sink(sinks);
        }
        let (read, separated_because) = match group {
            Group::Recordings(paths, separated_because) => {
                match pauselab_jfr::read_recordings_with(&paths, &mut analyzer, threads) {
                    Ok(extras) => {
                        let all = analyses.recordings.get_or_insert_with(Vec::new);
                        all.extend(extras);
                        (Ok(()), separated_because)
                    }
                    // The other JVMs are reported, then this error, as for logs.
                    Err(e) if jvms > 1 => {
                        analyses.failed.push(e.into());
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            Group::Logs(inputs, separated_because) => (
                analyze_inputs_with(&inputs, &mut analyzer, threads),
                separated_because,
            ),
        };
        match JvmRead::of(read, jvms)? {
            JvmRead::Complete => {}
            JvmRead::Partly(errors) => analyses.failed.extend(errors.into_iter().map(Into::into)),
            JvmRead::Unread(error) => {
                analyses.failed.push(error.into());
                continue;
            }
        }
        // The first JVM reported has no JVM before it, even when an unread one came first.
        let separated_because = separated_because.filter(|_| !analyses.reports.is_empty());
        analyses.reports.push(analyzer.finish());
        analyses.separated_because.push(separated_because);
    }
    if analyses.reports.is_empty() {
        // Every JVM was unread: the first input that failed says why.
        let first = analyses.failed.into_iter().next();
        return Err(first.unwrap_or(AnalyzeError::NothingRead));
    }
    if analyses.recordings.is_some() {
        // Not a log: no log format to name.
        analyses
            .reports
            .iter_mut()
            .flat_map(|r| r.inputs.iter_mut())
            .for_each(|f| f.format = None);
    }
    Ok(analyses)
}

#[cfg(test)]
mod tests {
    use pauselab_analysis::PauseSink;
    use pauselab_pause::PauseEvent;

    use super::*;
    use crate::fixture;

    struct Count(u64);
    impl PauseSink for Count {
        fn pause(&mut self, _event: &PauseEvent) {
            self.0 += 1;
        }
    }

    fn names(paths: &[&str]) -> Vec<String> {
        paths
            .iter()
            .map(|p| fixture(p).display().to_string())
            .collect()
    }

    fn analyze(names: &[String], one_jvm: bool, sinks: &mut Tee) -> Result<Analyses, AnalyzeError> {
        let sources = Sources::find(names)?;
        analyze_each_jvm(sources, one_jvm, &Options::default(), sinks, 2)
    }

    #[test]
    fn each_jvm_is_analysed_on_its_own_and_every_pause_reaches_the_sinks() {
        let logs = names(&["gclogs/g1-jdk17.log.gz", "gclogs/zgc-jdk21.log.gz"]);
        let mut count = Count(0);
        let mut sinks = Tee::default().with(Some(&mut count as &mut dyn PauseSink));
        let analyses = analyze(&logs, false, &mut sinks).unwrap();
        assert_eq!(analyses.reports.len(), 2);
        assert_eq!(analyses.reports[0].inputs[0].file, logs[0]);
        assert_eq!(analyses.reports[1].inputs[0].file, logs[1]);
        assert_eq!(analyses.separated_because[0], None);
        assert_eq!(
            analyses.separated_because[1].as_deref(),
            Some("collector G1 vs ZGC")
        );
        assert!(analyses.failed.is_empty() && analyses.recordings.is_none());
        let pauses: u64 = analyses
            .reports
            .iter()
            .map(|r| r.pauses.summary.count)
            .sum();
        assert!(pauses > 0);
        assert_eq!(count.0, pauses);
        // An output of one JVM's pauses refuses them.
        let error = analyze(&logs, true, &mut Tee::default()).err().unwrap();
        assert!(
            matches!(
                error,
                AnalyzeError::Log(pauselab_gclog::Error::SeveralJvms { count: 2, .. })
            ),
            "{error}"
        );
    }

    #[test]
    fn an_input_that_cannot_be_read_is_kept_for_after_the_report() {
        // A Java source beside the log: no GC log lines.
        let logs = names(&["gclogs/g1-jdk17.log.gz", "gclogs/Garbage.java"]);
        let analyses = analyze(&logs, false, &mut Tee::default()).unwrap();
        assert_eq!(analyses.reports.len(), 1);
        assert_eq!(analyses.failed.len(), 1);
        let failed = analyses.failed[0].to_string();
        assert!(
            failed.contains("Garbage.java: no GC or safepoint log lines"),
            "{failed}"
        );
        // Alone, it leaves nothing to report: its error is the result.
        let error = analyze(&logs[1..], false, &mut Tee::default())
            .err()
            .unwrap();
        assert_eq!(error.to_string(), failed);
    }

    #[test]
    fn recordings_are_found_by_name_and_read_by_the_recording_reader() {
        let missing = vec!["/nonexistent/app.jfr".to_string()];
        assert!(Sources::find(&missing).unwrap().are_recordings());
        let error = analyze(&missing, false, &mut Tee::default()).err().unwrap();
        assert!(matches!(error, AnalyzeError::Recording(_)), "{error}");
        let logs = names(&["gclogs/g1-jdk17.log.gz"]);
        assert!(!Sources::find(&logs).unwrap().are_recordings());
    }
}
