//! JDKs and the pauselab jars (hiccup agent, workloads, benchmarks), and the JVM command
//! line of a variant.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::Serialize;

use crate::experiment::layout::{LATENCY_LOG, LATENCY_LOG_PLACEHOLDER};
use crate::experiment::{Experiment, Variant};
use crate::jvm::jdk_lookup::parse_major;
use crate::LabError;

#[derive(Debug, Clone, Serialize)]
pub struct Jdk {
    pub home: PathBuf,
    pub java: PathBuf,
    /// `jdk17`, `jdk25`, ... (unique within a run).
    pub label: String,
    /// First line of `java -version`.
    pub version: String,
    pub major: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct Jars {
    pub agent: Option<PathBuf>,
    pub workloads: Option<PathBuf>,
    /// Found when a class path entry names `{benchmarks_jar}` (JMH experiments).
    pub benchmarks: Option<PathBuf>,
}

pub const AGENT_JAR: &str = "pauselab-agent.jar";
pub const WORKLOADS_JAR: &str = "pauselab-workloads.jar";
pub const BENCHMARKS_JAR: &str = "pauselab-benchmarks.jar";
/// Class path placeholder for pauselab-benchmarks.jar, found like the other jars.
pub const BENCHMARKS_JAR_PLACEHOLDER: &str = "{benchmarks_jar}";
pub const PREPARED_PLACEHOLDER: &str = "{prepared}";
pub const WORKLOADS_JAR_PLACEHOLDER: &str = "{workloads_jar}";

impl Jdk {
    /// The bundle's JDK id: `17` for label `jdk17`.
    pub fn id_of(label: &str) -> String {
        label.trim_start_matches("jdk").to_string()
    }
}

/// Resolves JDK homes or major versions (`11`: see `jdk_lookup`), or the default `java`
/// (`$JAVA_HOME`, then `java` on PATH).
pub fn resolve_jdks(homes: &[PathBuf]) -> Result<Vec<Jdk>, LabError> {
    let homes: Vec<PathBuf> = if homes.is_empty() {
        vec![default_home()?]
    } else {
        let places = crate::jvm::jdk_lookup::JdkPlaces::from_env();
        homes
            .iter()
            .map(|h| match crate::jvm::jdk_lookup::as_major(h) {
                Some(major) => places.find(major),
                None => Ok(h.clone()),
            })
            .collect::<Result<_, _>>()?
    };
    let mut jdks: Vec<Jdk> = Vec::new();
    for home in homes {
        let java = home.join("bin/java");
        if !java.is_file() {
            return Err(LabError::Java(format!(
                "{}: no bin/java there; pass a JDK home such as /usr/lib/jvm/java-17-openjdk-amd64 or a major version such as 17",
                home.display()
            )));
        }
        let output = Command::new(&java)
            .arg("-version")
            .output()
            .map_err(|e| LabError::Java(format!("{}: {e}", java.display())))?;
        let text = String::from_utf8_lossy(&output.stderr).into_owned();
        let version = text.lines().next().unwrap_or_default().trim().to_string();
        let major = parse_major(&version).ok_or_else(|| {
            LabError::Java(format!(
                "{}: cannot read the version from {version:?}",
                java.display()
            ))
        })?;
        let mut label = format!("jdk{major}");
        let taken = jdks
            .iter()
            .filter(|j| j.label == label || j.label.starts_with(&format!("{label}-")))
            .count();
        if taken > 0 {
            label = format!("{label}-{}", taken + 1);
        }
        jdks.push(Jdk {
            home,
            java,
            label,
            version,
            major,
        });
    }
    Ok(jdks)
}

fn default_home() -> Result<PathBuf, LabError> {
    if let Some(home) = std::env::var_os("JAVA_HOME") {
        return Ok(PathBuf::from(home));
    }
    let paths = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&paths) {
        let candidate = dir.join("java");
        if candidate.is_file() {
            let real = std::fs::canonicalize(&candidate).unwrap_or(candidate);
            if let Some(home) = real.parent().and_then(Path::parent) {
                return Ok(home.to_path_buf());
            }
        }
    }
    Err(LabError::Java(
        "no JDK found: set JAVA_HOME, put java on PATH or pass --jdk".into(),
    ))
}

/// Finds the jars an experiment needs: `$PAUSELAB_JAVA_DIR`, next to the executable,
/// then the build tree (`java/<module>/target/`).
pub fn find_jars(experiment: &Experiment) -> Result<Jars, LabError> {
    Ok(Jars {
        agent: if experiment.workload.hiccup_agent {
            Some(find_jar(AGENT_JAR, "agent")?)
        } else {
            None
        },
        workloads: if experiment
            .workload
            .classpath
            .as_ref()
            .is_none_or(|entries| {
                entries
                    .iter()
                    .any(|e| e.contains(WORKLOADS_JAR_PLACEHOLDER))
            }) {
            Some(find_jar(WORKLOADS_JAR, "workloads")?)
        } else {
            None
        },
        benchmarks: if experiment
            .workload
            .classpath
            .iter()
            .flatten()
            .any(|entry| entry.contains(BENCHMARKS_JAR_PLACEHOLDER))
        {
            Some(find_jar(BENCHMARKS_JAR, "benchmarks")?)
        } else {
            None
        },
    })
}

/// One pauselab jar (`name`, built by the Maven module `module`), looked up as `find_jars` does.
pub fn find_jar(name: &str, module: &str) -> Result<PathBuf, LabError> {
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("PAUSELAB_JAVA_DIR") {
        candidates.push(PathBuf::from(dir).join(name));
    }
    if let Some(exe_dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        candidates.push(exe_dir.join(name));
        // target/{debug,release}/pauselab -> the workspace root, also for test binaries
        // in target/debug/deps.
        for up in exe_dir.ancestors().skip(1).take(3) {
            candidates.push(up.join("java").join(module).join("target").join(name));
        }
    }
    candidates.push(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../java")
            .join(module)
            .join("target")
            .join(name),
    );
    candidates
        .iter()
        .find(|p| p.is_file())
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        .ok_or_else(|| {
            LabError::Java(format!(
                "{name} not found (looked in {}); build it with `make java` or set PAUSELAB_JAVA_DIR",
                candidates.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
            ))
        })
}

/// Every variant's JVM reports the threads still running when a safepoint has waited a
/// second for them: on stdout (workload.out) on JDK 8 and 11, on the `safepoint` log tag
/// (the GC log, when its selection has the tag) on JDK 17+. A second is far above any
/// healthy time to safepoint, so the report (a few lines) is only written for the stops the
/// experiments are after.
pub const SAFEPOINT_TIMEOUT_FLAGS: [&str; 2] =
    ["-XX:+SafepointTimeout", "-XX:SafepointTimeoutDelay=1000"];

/// The full command line of one variant on one JDK. The hiccup log goes to `out_dir`
/// (outside the stressed filesystem), the GC log to `gc_log`.
pub fn command_line(
    jdk: &Jdk,
    jars: &Jars,
    experiment: &Experiment,
    variant: &Variant,
    out_dir: &Path,
    gc_log: &Path,
    duration: Duration,
) -> Vec<String> {
    let mut cmd = vec![jdk.java.display().to_string()];
    // Name the threads of any safepoint that waits this long for them (docs/lab.md); first,
    // so that an experiment's own -XX:SafepointTimeoutDelay wins.
    cmd.extend(SAFEPOINT_TIMEOUT_FLAGS.map(String::from));
    cmd.extend(experiment.workload.jvm_flags.iter().cloned());
    cmd.extend(variant.flags.iter().cloned());
    if let Some(agent) = &jars.agent {
        cmd.push(format!(
            "-javaagent:{}=log={},interval=1s",
            agent.display(),
            out_dir
                .join(crate::experiment::layout::HICCUP_LOG)
                .display()
        ));
    }
    if let Some(selection) = &experiment.workload.gc_log {
        cmd.push(format!(
            "-Xlog:{selection}:file={}:uptime,level,tags",
            gc_log.display()
        ));
    }
    if experiment.workload.jfr {
        cmd.push(start_flight_recording(
            jdk,
            &out_dir.join(crate::experiment::layout::JFR_RECORDING),
        ));
    }
    let classpath = match (&experiment.workload.classpath, &jars.workloads) {
        (Some(entries), _) => {
            let benchmarks = jars
                .benchmarks
                .as_ref()
                .map(|jar| jar.display().to_string())
                .unwrap_or_default();
            entries
                .iter()
                .map(|entry| entry.replace(BENCHMARKS_JAR_PLACEHOLDER, &benchmarks))
                .collect::<Vec<_>>()
                .join(":")
        }
        (None, Some(jar)) => jar.display().to_string(),
        (None, None) => String::new(),
    };
    cmd.push("-cp".into());
    cmd.push(classpath);
    cmd.push(experiment.workload.main.clone());
    cmd.extend(
        experiment
            .workload
            .args
            .iter()
            .chain(&variant.args)
            .map(|a| expand_arg(a, duration, out_dir)),
    );
    cmd
}

/// `-XX:StartFlightRecording` into `file`, written when the JVM exits (the lab stops it
/// with SIGTERM, which runs the dump): profile.jfc records every GC pause and safepoint;
/// the time to safepoint and safepoint end events are off there and turned on where the
/// JDK can (the `+event#setting` syntax is JDK 17+).
fn start_flight_recording(jdk: &Jdk, file: &Path) -> String {
    let safepoint_events = if jdk.major >= 17 {
        ",+jdk.SafepointStateSynchronization#enabled=true,+jdk.SafepointEnd#enabled=true"
    } else {
        ""
    };
    format!(
        "-XX:StartFlightRecording:filename={},settings=profile{safepoint_events}",
        file.display()
    )
}

/// Replaces the placeholders of a workload argument (docs/lab.md): `{duration_s}` is the
/// run time plus 30 s (the workload may outlive the run: the lab stops it), `{run_s}` the
/// run time, `{run_s/N}` the run time divided by N (whole, at least 1: how many
/// fixed-length rounds fit, e.g. JMH forks), `{out_dir}` the variant's output directory,
/// `{latency_log}` the latency log in it (`latency.hlog`).
pub fn expand_arg(arg: &str, duration: Duration, out_dir: &Path) -> String {
    let run_s = duration.as_secs();
    let mut text = arg
        .replace("{duration_s}", &(run_s + 30).to_string())
        .replace("{run_s}", &run_s.to_string())
        .replace(
            LATENCY_LOG_PLACEHOLDER,
            &out_dir.join(LATENCY_LOG).display().to_string(),
        )
        .replace("{out_dir}", &out_dir.display().to_string());
    const DIVIDED: &str = "{run_s/";
    let mut from = 0;
    while let Some(start) = text[from..].find(DIVIDED).map(|i| i + from) {
        let digits_at = start + DIVIDED.len();
        let Some(len) = text[digits_at..].find('}') else {
            break;
        };
        match text[digits_at..digits_at + len].parse::<u64>() {
            Ok(divisor) if divisor > 0 => {
                let value = (run_s / divisor).max(1).to_string();
                text.replace_range(start..digits_at + len + 1, &value);
                from = start + value.len();
            }
            _ => from = digits_at,
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flight_recording_turns_on_the_safepoint_events_where_the_jdk_can() {
        let jdk = |major| Jdk {
            home: PathBuf::from("/jdk"),
            java: PathBuf::from("/jdk/bin/java"),
            label: format!("jdk{major}"),
            version: String::new(),
            major,
        };
        let file = Path::new("/b/variants/x/recording.jfr");
        assert_eq!(
            start_flight_recording(&jdk(11), file),
            "-XX:StartFlightRecording:filename=/b/variants/x/recording.jfr,settings=profile"
        );
        assert_eq!(
            start_flight_recording(&jdk(17), file),
            "-XX:StartFlightRecording:filename=/b/variants/x/recording.jfr,settings=profile,+jdk.SafepointStateSynchronization#enabled=true,+jdk.SafepointEnd#enabled=true"
        );
    }

    #[test]
    fn placeholders() {
        let out = Path::new("/b/variants/off-jdk17");
        let d = Duration::from_secs(95);
        assert_eq!(expand_arg("{duration_s}s", d, out), "125s");
        assert_eq!(expand_arg("{run_s}", d, out), "95");
        assert_eq!(expand_arg("{run_s/30}", d, out), "3");
        assert_eq!(expand_arg("{run_s/300}", d, out), "1");
        assert_eq!(expand_arg("{run_s/30}x{run_s/10}", d, out), "3x9");
        assert_eq!(
            expand_arg("{out_dir}/jmh.json", d, out),
            "/b/variants/off-jdk17/jmh.json"
        );
        assert_eq!(
            expand_arg("--latency-log={latency_log}", d, out),
            "--latency-log=/b/variants/off-jdk17/latency.hlog"
        );
        // Not placeholders: left as written.
        for literal in ["{run_s/0}", "{run_s/x}", "{run_s/3", "jfr=off", "{}"] {
            assert_eq!(expand_arg(literal, d, out), literal);
        }
    }
}
