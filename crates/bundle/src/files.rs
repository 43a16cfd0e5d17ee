//! File names of a bundle and its format version.

/// Per variant: the hiccup agent's interval log.
pub const HICCUP_LOG: &str = "hiccups.hlog";
/// Per variant: the workload's standard output and error.
pub const WORKLOAD_OUT: &str = "workload.out";
/// Per variant: the JVM's GC log.
pub const GC_LOG: &str = "gc.log";
/// Per variant: the JVM's JFR recording, when the experiment asks for one (`jfr = true`).
pub const JFR_RECORDING: &str = "recording.jfr";
/// Per variant: safepoint pauses from the GC log, as an interval log.
pub const SAFEPOINT_LOG: &str = "safepoints.hlog";
/// Per variant: the request latencies an open-loop workload logs, as an interval log.
pub const LATENCY_LOG: &str = "latency.hlog";
/// Per variant: measurements and pause statistics.
pub const SUMMARY: &str = "summary.json";
/// The run: experiment, host, JDKs, variants, notes.
pub const MANIFEST: &str = "manifest.json";
/// The run's verdict.
pub const VERDICT: &str = "verdict.json";
/// The host time series, one row a second.
pub const HOST_SERIES: &str = "host.csv";
/// A matrix run's plan and bundles, in the directory that holds them.
pub const MATRIX: &str = "matrix.json";
/// The manifest's `format`.
pub const FORMAT: &str = "pauselab-bundle";
/// The major version of the format this build writes and the newest it reads. Adding a
/// field is not a new version (readers ignore fields they do not know); removing or
/// renaming one, or adding a verdict value, is.
pub const FORMAT_VERSION: u32 = 1;

/// Refuses a manifest of another format, or of a newer major version of this one: the
/// message names the file and both versions. Older versions read as they are.
pub fn check_format(file: &str, format: &str, format_version: u32) -> Result<(), String> {
    if format != FORMAT {
        return Err(format!(
            "{file}: format {format:?} is not {FORMAT:?}: not a pauselab lab bundle"
        ));
    }
    if format_version > FORMAT_VERSION {
        return Err(format!(
            "{file}: bundle format version {format_version} is newer than this pauselab reads ({FORMAT_VERSION}): update pauselab"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newer_major_versions_and_other_formats_are_refused_older_read() {
        assert_eq!(
            check_format("b/manifest.json", FORMAT, FORMAT_VERSION + 1).unwrap_err(),
            format!(
                "b/manifest.json: bundle format version {} is newer than this pauselab reads ({FORMAT_VERSION}): update pauselab",
                FORMAT_VERSION + 1
            )
        );
        assert!(check_format("b/manifest.json", FORMAT, FORMAT_VERSION).is_ok());
        assert!(check_format("b/manifest.json", FORMAT, 0).is_ok());
        assert_eq!(
            check_format("b/manifest.json", "other", 1).unwrap_err(),
            r#"b/manifest.json: format "other" is not "pauselab-bundle": not a pauselab lab bundle"#
        );
    }
}
