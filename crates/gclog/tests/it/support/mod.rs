//! Analysing a log written by a test, through the same reading path as `pauselab analyze`
//! (line reader and the JDK 6-8 stitcher).

use std::io::Write;

use pauselab_analysis::{Analyzer, Options, Report};
use pauselab_gclog::{analyze_inputs, input::Input};

/// The report of `text` saved as `gc.log`.
pub fn analyze_text(text: &str) -> Report {
    let (_dir, input) = log_input(text);
    let mut analyzer = Analyzer::new(Options::default());
    analyze_inputs(&[input], &mut analyzer).unwrap();
    analyzer.finish()
}

/// `text` saved as `gc.log`, in a directory that lasts as long as the `TempDir`.
pub fn log_input(text: &str) -> (tempfile::TempDir, Input) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gc.log");
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let input = Input {
        name: "gc.log".to_string(),
        path: Some(path),
        zip_entry: None,
    };
    (dir, input)
}
