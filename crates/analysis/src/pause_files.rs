//! The files written beside a report (`analyze --hlog`, `--events`): both created before
//! the analysis, so that a path that cannot be written fails at once, fed at once through a
//! [`Tee`], and written out when the report is known.

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::time::Duration;

use pauselab_pause::interval_log::IntervalLogError;

use crate::analyzer::{PauseSink, Report};
use crate::events::{EventRows, EventsFile};
use crate::hlog::{HlogMode, HlogSink};
use crate::tee::Tee;

/// The interval log asked for: where, in which mode, how long each interval.
pub struct HlogFile {
    /// The file to write.
    pub path: PathBuf,
    /// What an interval's histogram holds.
    pub mode: HlogMode,
    /// The length of an interval.
    pub interval: Duration,
}

/// The interval log and the events file, each when asked for.
pub struct PauseFiles {
    hlog: Option<(PathBuf, HlogSink<BufWriter<File>>)>,
    events: Option<(EventsFile, File, EventRows)>,
}

/// A file beside the report that could not be created or written; the message names it.
#[derive(Debug, thiserror::Error)]
pub enum PauseFileError {
    /// The file could not be created.
    #[error("{}: cannot create the --{flag} file", path.display())]
    Create {
        /// The file.
        path: PathBuf,
        /// The option that names it (`hlog`, `events`).
        flag: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// The interval log could not be written.
    #[error("{}: writing the interval log", path.display())]
    Hlog {
        /// The file.
        path: PathBuf,
        /// Why.
        source: IntervalLogError,
    },
    /// The events could not be written.
    #[error("{}: writing the events", path.display())]
    Events {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl PauseFiles {
    /// Creates the files asked for, the interval log first. `recording`: the pauses come
    /// from JFR recordings (their events cite event indexes, not lines).
    pub fn create(
        hlog: Option<HlogFile>,
        events: Option<&EventsFile>,
        recording: bool,
    ) -> Result<PauseFiles, PauseFileError> {
        let create = |path: &PathBuf, flag| {
            pauselab_pause::output::create_file(path).map_err(|source| PauseFileError::Create {
                path: path.clone(),
                flag,
                source,
            })
        };
        let hlog = match hlog {
            Some(HlogFile {
                path,
                mode,
                interval,
            }) => {
                let out = BufWriter::new(create(&path, "hlog")?);
                let sink = HlogSink::new(out, mode, interval.as_secs_f64(), "gc");
                Some((path, sink))
            }
            None => None,
        };
        let events = match events {
            Some(to) => Some((
                to.clone(),
                create(&to.path, "events")?,
                EventRows::new(recording),
            )),
            None => None,
        };
        Ok(PauseFiles { hlog, events })
    }

    /// No file was asked for.
    pub fn is_empty(&self) -> bool {
        self.hlog.is_none() && self.events.is_none()
    }

    /// What the analysis feeds its pauses to: every file asked for.
    pub fn sinks(&mut self) -> Tee<'_> {
        Tee::default()
            .with(self.hlog.as_mut().map(|(_, s)| s as &mut dyn PauseSink))
            .with(
                self.events
                    .as_mut()
                    .map(|(_, _, rows)| rows as &mut dyn PauseSink),
            )
    }

    /// Writes the files out; the events need the `report` of the JVM they hold.
    pub fn finish(self, report: &Report) -> Result<(), PauseFileError> {
        if let Some((path, sink)) = self.hlog {
            sink.finish()
                .map_err(|source| PauseFileError::Hlog { path, source })?;
        }
        if let Some((to, file, rows)) = self.events {
            rows.write(file, to.format, report)
                .map_err(|source| PauseFileError::Events {
                    path: to.path,
                    source,
                })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use pauselab_pause::{PauseEvent, PauseKind};

    use super::*;
    use crate::{Analyzer, Options};

    /// An empty directory of this test's own, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir = std::env::temp_dir().join(format!(
                "pauselab-pause-files-{name}-{}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir(&dir).unwrap();
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn hlog_in(dir: &Path) -> HlogFile {
        HlogFile {
            path: dir.join("p.hlog"),
            mode: HlogMode::Pauses,
            interval: Duration::from_secs(5),
        }
    }

    fn events_in(dir: &Path) -> EventsFile {
        dir.join("p.csv").display().to_string().parse().unwrap()
    }

    fn event(kind: PauseKind) -> PauseEvent {
        PauseEvent {
            start_ms: Some(1000.0),
            wall_start_ms: None,
            duration_ms: 12.5,
            kind,
            name: "Cleanup".into(),
            cause: None,
            cpu: None,
            ttsp_ms: None,
            source: None,
        }
    }

    #[test]
    fn both_files_are_created_at_once_fed_together_and_written_at_the_end() {
        let scratch = Scratch::new("both");
        let hlog = hlog_in(&scratch.0);
        let events = events_in(&scratch.0);
        let mut files = PauseFiles::create(Some(hlog), Some(&events), false).unwrap();
        assert!(!files.is_empty());
        assert!(scratch.0.join("p.hlog").exists() && events.path.exists());
        let mut sinks = files.sinks();
        sinks.pause(&event(PauseKind::Gc));
        sinks.safepoint(&event(PauseKind::Safepoint), false);
        files
            .finish(&Analyzer::new(Options::default()).finish())
            .unwrap();
        let hlog = std::fs::read_to_string(scratch.0.join("p.hlog")).unwrap();
        let intervals: Vec<&str> = hlog.lines().filter(|l| l.starts_with("Tag=gc,")).collect();
        assert_eq!(intervals.len(), 1, "{hlog}");
        let rows = std::fs::read_to_string(&events.path).unwrap();
        let rows: Vec<&str> = rows.lines().collect();
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert!(rows[1].starts_with("gc_pause,1000.0,"), "{rows:?}");
        assert!(rows[2].starts_with("safepoint,1000.0,"), "{rows:?}");
    }

    #[test]
    fn a_file_that_cannot_be_created_is_named_and_stops_the_rest() {
        let scratch = Scratch::new("refused");
        let missing = scratch.0.join("missing");
        let events = events_in(&scratch.0);
        let error = PauseFiles::create(Some(hlog_in(&missing)), Some(&events), false)
            .err()
            .unwrap();
        let expected = format!(
            "{}: cannot create the --hlog file",
            missing.join("p.hlog").display()
        );
        assert_eq!(error.to_string(), expected);
        assert!(!events.path.exists());
        assert!(PauseFiles::create(None, None, false).unwrap().is_empty());
    }
}
