//! Host settings an experiment asks for (THP mode, VM tunables): each write is recorded in
//! the journal with the previous value before it is made, and undone with the run.

use std::fs;
use std::path::Path;

use crate::experiment::HostSettings;
use crate::host::journal::{Change, Journal};
use crate::LabError;

/// The value a sysfs file is set to: the bracketed choice of a selection file
/// (`always [madvise] never` -> `madvise`), otherwise the trimmed text.
pub fn current_value(text: &str) -> String {
    if let (Some(open), Some(close)) = (text.find('['), text.find(']')) {
        if open < close {
            return text[open + 1..close].to_string();
        }
    }
    text.trim().to_string()
}

/// Applies `settings` through the journal; returns one note per change made. A path the
/// kernel does not have is an error naming it (the experiment cannot mean what it says).
pub fn apply(journal: &mut Journal, settings: &HostSettings) -> Result<Vec<String>, LabError> {
    let mut notes = Vec::new();
    for (path, wanted) in settings {
        let path = Path::new(path);
        let text = fs::read_to_string(path).map_err(|e| {
            LabError::io(path, "read the host setting (does this kernel have it?)", e)
        })?;
        let previous = current_value(&text);
        if previous == *wanted {
            notes.push(format!("{} already {wanted}", path.display()));
            continue;
        }
        journal.record(Change::SysfsWrite {
            path: path.to_path_buf(),
            previous: previous.clone(),
            loop_image: None,
        })?;
        fs::write(path, wanted).map_err(|e| LabError::io(path, "write the host setting", e))?;
        let now = fs::read_to_string(path)
            .map(|t| current_value(&t))
            .unwrap_or_default();
        if now != *wanted {
            return Err(LabError::Host(format!(
                "{}: wrote {wanted:?} but it reads {now:?}; the kernel refused the setting",
                path.display()
            )));
        }
        notes.push(format!(
            "{} set to {wanted} (was {previous})",
            path.display()
        ));
    }
    Ok(notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_files_and_plain_values() {
        assert_eq!(current_value("always [madvise] never\n"), "madvise");
        assert_eq!(
            current_value("always defer defer+madvise [madvise] never"),
            "madvise"
        );
        assert_eq!(current_value("100\n"), "100");
    }
}
