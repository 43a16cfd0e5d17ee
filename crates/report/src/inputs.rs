//! What a report is made of: each input recognised by what it holds (a lab bundle, a matrix
//! run's bundles, an interval log, a GC log, a JFR recording) and read into its section.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use pauselab_pause::interval_log::{looks_like_interval_log, TagFilter};

use crate::bundle::{check_bundles, is_bundle, matrix_bundles, Bundle, MAX_REPORT_VARIANTS};
use crate::model::{distinct_names, Section};
use crate::ReportError;

/// One input of a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A lab bundle's directory.
    Bundle(PathBuf),
    /// An HdrHistogram interval log: all of them are charted side by side in one section.
    IntervalLog(PathBuf),
    /// A GC log.
    GcLog(PathBuf),
    /// A JFR recording: charted like a GC log.
    Recording(PathBuf),
}

impl Input {
    /// A directory is a bundle, or a matrix run's directory (its bundles, as matrix.json
    /// lists them); a file is an interval log when its first 4 KiB (decompressed) look like
    /// one, else a GC log.
    pub fn classify(path: &Path) -> Result<Vec<Input>, ReportError> {
        let refuse = |message: &str| ReportError::Input {
            source_name: path.display().to_string(),
            message: message.into(),
        };
        if path.is_dir() {
            if let Some(bundles) = matrix_bundles(path)? {
                return Ok(bundles.into_iter().map(Input::Bundle).collect());
            }
            if !is_bundle(path) {
                return Err(refuse("a directory without manifest.json is not a lab bundle (see docs/bundle-format.md)"));
            }
            return Ok(vec![Input::Bundle(path.to_path_buf())]);
        }
        if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) {
            // Recognising an input reads its beginning, charting it reads it again.
            return Err(ReportError::Input {
                source_name: pauselab_pause::input::escape_control(&path.display().to_string())
                    .into_owned(),
                message: "is a pipe; report reads each input twice, so save it to a file first"
                    .into(),
            });
        }
        if pauselab_jfr::is_recording(&path.display().to_string()) {
            return Ok(vec![Input::Recording(path.to_path_buf())]);
        }
        Ok(vec![if looks_like_interval_log(path)? {
            Input::IntervalLog(path.to_path_buf())
        } else {
            Input::GcLog(path.to_path_buf())
        }])
    }

    fn file(&self) -> Option<&PathBuf> {
        match self {
            Input::IntervalLog(p) | Input::GcLog(p) | Input::Recording(p) => Some(p),
            Input::Bundle(_) => None,
        }
    }
}

/// Every path's inputs, in order.
pub fn classify_all(paths: &[PathBuf]) -> Result<Vec<Input>, ReportError> {
    let mut inputs = Vec::new();
    for path in paths {
        inputs.extend(Input::classify(path)?);
    }
    Ok(inputs)
}

/// One section per bundle, GC log and recording, in order, then one for all interval logs
/// (their intervals tagged `tag`); each section's anchor unique.
pub fn sections(inputs: &[Input], tag: &TagFilter) -> Result<Vec<Section>, ReportError> {
    let bundles: Vec<PathBuf> = inputs
        .iter()
        .filter_map(|i| match i {
            Input::Bundle(p) => Some(p.clone()),
            _ => None,
        })
        .collect();
    check_bundles(&bundles)?;
    // Files are labelled by name, with directories where two share one (a/gc.log, b/gc.log).
    let files: Vec<PathBuf> = inputs.iter().filter_map(Input::file).cloned().collect();
    let names = distinct_names(&files);
    let name_of = |path: &PathBuf| {
        let at = files.iter().position(|f| f == path).expect("a file input");
        names[at].clone()
    };
    let mut sections = Vec::new();
    let mut logs = Vec::new();
    let mut variants = 0usize;
    for input in inputs {
        match input {
            Input::Bundle(dir) => {
                let bundle = Bundle::open(dir)?;
                variants += bundle.variants.len();
                if variants > MAX_REPORT_VARIANTS {
                    return Err(ReportError::Input {
                        source_name: dir.display().to_string(),
                        message: format!("more than {MAX_REPORT_VARIANTS} variants in one report: report fewer bundles at a time"),
                    });
                }
                sections.push(Section::from_bundle_with_recordings(&bundle));
            }
            Input::GcLog(path) => sections.push(Section::from_gc_log(path, &name_of(path))?),
            Input::Recording(path) => sections.push(Section::from_recording(path, &name_of(path))?),
            Input::IntervalLog(path) => logs.push((path.clone(), name_of(path))),
        }
    }
    if !logs.is_empty() {
        sections.push(Section::from_logs(&logs, tag)?);
    }
    // Anchors must be unique when the same experiment ran on several hosts.
    for i in 1..sections.len() {
        if sections[..i].iter().any(|s| s.id == sections[i].id) {
            sections[i].id = format!("{}-{}", sections[i].id, i + 1);
        }
    }
    Ok(sections)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    #[test]
    fn each_input_is_recognised_by_what_it_holds() {
        let bundle = fixture("bundles/lab-kernel6.1");
        let hiccups = fixture("reference/jhiccup/java17x4-async-off_c4_1.jHiccup");
        let gc_log = fixture("gclogs/demo-g1-jdk17.log");
        let inputs = classify_all(&[bundle.clone(), hiccups.clone(), gc_log.clone()]).unwrap();
        assert_eq!(
            inputs,
            [
                Input::Bundle(bundle),
                Input::IntervalLog(hiccups),
                Input::GcLog(gc_log)
            ]
        );
        let recording = PathBuf::from("/nonexistent/app.jfr");
        assert_eq!(
            Input::classify(&recording).unwrap(),
            [Input::Recording(recording.clone())]
        );
    }

    #[test]
    fn a_directory_without_a_manifest_and_a_pipe_are_refused_by_name() {
        let logs = fixture("gclogs");
        let error = Input::classify(&logs).unwrap_err().to_string();
        assert_eq!(
            error,
            format!(
                "{}: a directory without manifest.json is not a lab bundle (see docs/bundle-format.md)",
                logs.display()
            )
        );
        let dir = std::env::temp_dir().join(format!("pauselab-inputs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("pipe\nname");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        let error = Input::classify(&fifo).unwrap_err().to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            error.ends_with(
                "pipe\\nname: is a pipe; report reads each input twice, so save it to a file first"
            ),
            "{error}"
        );
    }

    #[test]
    fn sections_come_in_input_order_with_the_interval_logs_last_and_unique_anchors() {
        let gc_log = fixture("gclogs/demo-g1-jdk17.log");
        let hiccups = fixture("reference/jhiccup/java17x4-async-off_c4_1.jHiccup");
        let inputs = [
            Input::IntervalLog(hiccups),
            Input::GcLog(gc_log.clone()),
            Input::GcLog(gc_log),
        ];
        let made = sections(&inputs, &TagFilter::from_option(None)).unwrap();
        assert_eq!(made.len(), 3);
        assert_eq!(made[0].source, made[1].source);
        assert_eq!(made[1].id, format!("{}-2", made[0].id));
        assert_ne!(made[2].id, made[0].id);
        assert!(made[2].source.contains("java17x4"), "{}", made[2].source);
    }

    #[test]
    fn a_matrix_needs_bundles_naming_their_default_variant() {
        let gc_log = [Input::GcLog(fixture("gclogs/demo-g1-jdk17.log"))];
        let logs = sections(&gc_log, &TagFilter::from_option(None)).unwrap();
        let error = crate::matrix::checked_matrix(&logs).unwrap_err();
        assert_eq!(
            error.to_string(),
            "--matrix needs lab bundles whose manifest names a default variant"
        );
        let bundle = [Input::Bundle(fixture("bundles/lab-kernel6.1"))];
        let sections = sections(&bundle, &TagFilter::from_option(None)).unwrap();
        assert_eq!(
            crate::matrix::checked_matrix(&sections).unwrap().rows.len(),
            1
        );
    }
}
