//! Java tools the tests compare pauselab with, fetched from Maven Central on first use.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// HdrHistogram 2.2.2 from Maven Central, fetched once into the target directory.
pub fn hdrhistogram_jar() -> &'static Path {
    static JAR: OnceLock<PathBuf> = OnceLock::new();
    JAR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hdrhistogram-2.2.2");
        let jar = dir.join("HdrHistogram-2.2.2.jar");
        if !jar.is_file() {
            let status = Command::new("mvn")
                .args([
                    "-q",
                    "-B",
                    "dependency:copy",
                    "-Dartifact=org.hdrhistogram:HdrHistogram:2.2.2",
                    &format!("-DoutputDirectory={}", dir.display()),
                ])
                .current_dir(env!("CARGO_TARGET_TMPDIR"))
                .status()
                .expect("mvn is needed to fetch HdrHistogram 2.2.2 for this test");
            assert!(
                status.success() && jar.is_file(),
                "mvn could not fetch HdrHistogram 2.2.2"
            );
        }
        jar
    })
}
