//! The classload-cds experiment, shortened (2000 classes), on the host's JDK 17: the
//! preparation really creates an application CDS archive, the CDS variants really load the
//! storm's classes from it (and the -Xshare:off ones from the jar), the measurements exist,
//! and the scratch area is gone afterwards. A failing preparation step skips that JDK's
//! variants with the JVM's own error. No root needed (the variants use the host's /tmp).

use crate::lab_support;
use lab_support::measurement;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const JDK17: &str = "/usr/lib/jvm/java-17-openjdk-amd64";
const CLASSES: usize = 2000;

struct Env {
    dir: PathBuf,
}

impl Env {
    fn new(name: &str) -> Env {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("lab-cds-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("state")).unwrap();
        Env { dir }
    }

    /// `pauselab lab run EXPERIMENT --jdk 17 --out OUT [extra...]`.
    fn run_on_jdk17(&self, experiment: &str, out: &Path, extra: &[&str]) -> Output {
        let mut args = vec![
            "lab",
            "run",
            experiment,
            "--jdk",
            "17",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        self.pauselab(&args)
    }

    fn pauselab(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_pauselab"))
            .args(args)
            .env("PAUSELAB_STATE_DIR", self.dir.join("state"))
            .output()
            .unwrap()
    }

    /// The built-in experiment, shortened, with class loading logged into the GC log.
    fn short_experiment(&self, edit: impl Fn(String) -> String) -> String {
        let shown = self.pauselab(&["lab", "show", "classload-cds"]);
        assert!(shown.status.success());
        let text = String::from_utf8(shown.stdout).unwrap();
        for original in ["\"30000\"", "\"256m\"", "gc_log = \"gc*,safepoint,cds\""] {
            assert!(
                text.contains(original),
                "the experiment changed: {original}"
            );
        }
        let text = text
            .replace("\"30000\"", &format!("\"{CLASSES}\""))
            .replace("\"256m\"", "\"64m\"")
            .replace(
                "gc_log = \"gc*,safepoint,cds\"",
                "gc_log = \"gc*,safepoint,cds,class+load\"",
            );
        let path = self.dir.join("classload-cds-short.toml");
        std::fs::write(&path, edit(text)).unwrap();
        path.display().to_string()
    }

    fn scratch_areas(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.dir.join("state/lab/scratch"))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default()
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// `pauselab.generated.Storm<i>` class-load lines of a unified log, and how many of them
/// name `source`.
fn storm_loads(gc_log: &Path, source: &str) -> (usize, usize) {
    let text = std::fs::read_to_string(gc_log).unwrap();
    let loads: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("[class,load") && l.contains(" pauselab.generated.Storm"))
        .collect();
    let from = loads.iter().filter(|l| l.contains(source)).count();
    (loads.len(), from)
}

#[test]
fn archive_is_made_per_jdk_and_used_by_the_cds_variants() {
    if !Path::new(JDK17).join("bin/java").is_file() {
        panic!("{JDK17}: the host's JDK 17 is needed");
    }
    let env = Env::new("run");
    let experiment = env.short_experiment(|t| t);
    let out = env.dir.join("bundle");
    let run = env.run_on_jdk17(&experiment, &out, &[]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    // 0 or 3; 4 only if the host was too noisy to judge. Never an error.
    assert!(
        matches!(run.status.code(), Some(0 | 3 | 4)),
        "{:?}\n{stderr}",
        run.status
    );

    // The preparation: three steps, an archive of real size, their output in the bundle.
    let prepared = json(&out.join("prepare/prepared.json"));
    let jdk = &prepared["jdks"][0];
    assert_eq!(jdk["jdk"], "jdk17");
    assert!(jdk["failure"].is_null(), "{jdk}");
    let steps: Vec<&str> = jdk["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["classes-jar", "class-list", "archive"]);
    let archive = &jdk["steps"][2]["created"][0];
    assert_eq!(archive[0], "app.jsa");
    assert!(archive[1].as_u64().unwrap() > 1 << 20, "{archive}");
    for step in &steps {
        assert!(out.join(format!("prepare/jdk17/{step}.out")).is_file());
    }
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(
        manifest.contains("prepared jdk17: classes-jar"),
        "{manifest}"
    );

    for variant in ["cds-16m", "no-cds-16m", "cds-2m", "no-cds-2m"] {
        let dir = out.join(format!("variants/{variant}-jdk17"));
        // Every storm class came from the archive with CDS, from the jar without.
        let source = if variant.starts_with("cds") {
            "source: shared objects file"
        } else {
            "storm.jar"
        };
        let (loads, from) = storm_loads(&dir.join("gc.log"), source);
        assert_eq!((loads, from), (CLASSES, CLASSES), "{variant}: {source}");
        // The CDS variants opened the run's own archive and mapped its heap part (where
        // the archived mirrors are); the others have no CDS at all.
        let log = std::fs::read_to_string(dir.join("gc.log")).unwrap();
        let cds_lines: Vec<&str> = log.lines().filter(|l| l.contains("[cds")).collect();
        if variant.starts_with("cds") {
            assert!(
                cds_lines
                    .iter()
                    .any(|l| l.contains("prepared-jdk17/app.jsa")),
                "{variant}: {cds_lines:?}"
            );
            assert!(
                cds_lines.iter().any(|l| l.contains("map heap data")),
                "{variant}: {cds_lines:?}"
            );
        } else {
            assert!(cds_lines.is_empty(), "{variant}: {cds_lines:?}");
        }
        // The numbers the experiment reports.
        let summary = json(&dir.join("summary.json"));
        assert_eq!(
            measurement(&summary, "workload.loaded"),
            Some(CLASSES as f64),
            "{variant}"
        );
        let elapsed = measurement(&summary, "workload.elapsed_s").unwrap();
        assert!(elapsed > 0.0, "{variant}: {elapsed}");
        let young = measurement(&summary, "gc.max_young_pause_ms").unwrap();
        assert!(
            young > 0.0,
            "{variant}: 64 MB of garbage without a young pause"
        );
    }

    // The archive and the jar lived in the scratch area, which the run removed.
    assert!(env.scratch_areas().is_empty(), "{:?}", env.scratch_areas());
}

#[test]
fn a_failing_preparation_skips_that_jdks_variants() {
    let env = Env::new("broken");
    let experiment = env.short_experiment(|t| {
        t.replacen(
            "java = [\"-cp\", \"{workloads_jar}\"",
            "java = [\"-XX:+NoSuchOption\", \"-cp\", \"{workloads_jar}\"",
            1,
        )
    });
    let out = env.dir.join("bundle");
    let run = env.run_on_jdk17(&experiment, &out, &["--json"]);
    // Nothing ran: inconclusive, not an error and not a verdict.
    assert_eq!(
        run.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let prepared = json(&out.join("prepare/prepared.json"));
    let failure = prepared["jdks"][0]["failure"].as_str().unwrap();
    assert!(failure.starts_with("step classes-jar:"), "{failure}");
    assert!(failure.contains("NoSuchOption"), "{failure}");
    assert_eq!(prepared["jdks"][0]["steps"].as_array().unwrap().len(), 1);
    let summary = json(&out.join("variants/cds-16m-jdk17/summary.json"));
    let skipped = summary["skipped"].as_str().unwrap();
    assert!(
        skipped.contains("preparation failed: step classes-jar"),
        "{skipped}"
    );
    assert!(env.scratch_areas().is_empty());
}
