//! Finding HotSpot JVMs: every process that maps libjvm.so, whether or not it shares its
//! perf data in a file, in containers and private mount namespaces too.

use std::fs;
use std::path::PathBuf;

use pauselab_pause::Collector;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::format::Snapshot;
use crate::process::{self, JvmMaps};
use crate::reader::{Reader, Source};

/// How a JVM's perf counters can be reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PerfData {
    /// Shared in a file (the default). `path` is reachable from this host.
    File { path: PathBuf },
    /// Only in the JVM's memory: -XX:+PerfDisableSharedMem (or the file could not be
    /// created). `jps`/`jstat` cannot see these; the memory route can.
    MemoryOnly,
    /// -XX:-UsePerfData: the JVM keeps no counters at all.
    Disabled,
    /// This user cannot tell (the process's mappings are not readable).
    Unknown { reason: String },
}

/// A HotSpot JVM running on this host.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JvmProcess {
    /// Pid on this host.
    pub pid: u32,
    /// Pid inside the JVM's own pid namespace (differs in containers).
    pub ns_pid: u32,
    /// Effective uid of the JVM.
    pub uid: u32,
    /// User name of `uid` as the JVM sees it, if known.
    pub user: Option<String>,
    /// Main class, `-jar` file or module, from the command line.
    pub main_class: Option<String>,
    /// libjvm.so as the JVM sees it.
    pub libjvm: Option<PathBuf>,
    /// Seconds since the process started.
    pub uptime_seconds: Option<f64>,
    /// Where its counters are.
    pub perf_data: PerfData,
}

impl JvmProcess {
    /// True if the counters are shared in a file (jstat/jcmd can see the JVM).
    pub fn shares_perf_data(&self) -> bool {
        matches!(self.perf_data, PerfData::File { .. })
    }

    /// Opens a reader on this JVM.
    pub fn reader(&self, source: Source) -> Result<Reader> {
        Reader::open(self.pid, source)
    }
}

/// Every HotSpot JVM visible to this user, sorted by pid. Processes whose mappings this
/// user cannot read are listed only if their executable is named `java`.
pub fn discover_jvms() -> Vec<JvmProcess> {
    let own = std::process::id();
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|&pid| pid != own)
        .collect();
    pids.sort_unstable();
    pids.into_iter()
        .filter_map(|pid| inspect(pid).ok())
        .collect()
}

/// Describes one pid; [`Error::NotJvm`] if it does not map libjvm.so.
pub fn inspect(pid: u32) -> Result<JvmProcess> {
    let status = process::read_status(pid)?;
    let cmdline = process::read_cmdline(pid).unwrap_or_default();
    let (maps, perf_data) = match process::read_maps(pid) {
        Ok(maps) if maps.libjvm.is_none() => return Err(Error::NotJvm { pid }),
        Ok(maps) => {
            let perf = perf_data_of(pid, &maps, &cmdline);
            (maps, perf)
        }
        Err(Error::Permission { .. }) if looks_like_java(&cmdline) => (
            JvmMaps::default(),
            PerfData::Unknown {
                reason: format!(
                    "permission denied reading /proc/{pid}/maps: run as uid {} or root",
                    status.uid
                ),
            },
        ),
        Err(Error::Permission { .. }) => return Err(Error::NotJvm { pid }),
        Err(e) => return Err(e),
    };
    Ok(JvmProcess {
        pid,
        ns_pid: status.ns_pid,
        uid: status.uid,
        user: process::user_name(pid, status.uid),
        main_class: main_class(&cmdline),
        libjvm: maps.libjvm,
        uptime_seconds: process::uptime_seconds(pid),
        perf_data,
    })
}

fn looks_like_java(cmdline: &[String]) -> bool {
    cmdline
        .first()
        .is_some_and(|a| a.rsplit('/').next() == Some("java"))
}

fn perf_data_of(pid: u32, maps: &JvmMaps, cmdline: &[String]) -> PerfData {
    match &maps.perf_file {
        Some(path) if !maps.perf_file_deleted => PerfData::File {
            path: process::in_process_root(pid, path),
        },
        _ if cmdline.iter().any(|a| a == "-XX:-UsePerfData") => PerfData::Disabled,
        _ => PerfData::MemoryOnly,
    }
}

/// Options of the `java` launcher that take the next argument as their value.
const OPTIONS_WITH_VALUE: &[&str] = &[
    "-cp",
    "-classpath",
    "--class-path",
    "-p",
    "--module-path",
    "--upgrade-module-path",
    "--add-modules",
    "--add-opens",
    "--add-exports",
    "--add-reads",
    "--limit-modules",
    "--patch-module",
    "--enable-native-access",
];

/// The main class, `-jar` file or module of a `java` command line.
pub fn main_class(cmdline: &[String]) -> Option<String> {
    let mut args = cmdline.iter().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-jar" | "-m" | "--module" => return args.next().cloned(),
            a if a.starts_with("--module=") => return Some(a["--module=".len()..].to_string()),
            a if OPTIONS_WITH_VALUE.contains(&a) => {
                args.next();
            }
            a if a.starts_with('-') || a.starts_with('@') => {}
            a => return Some(a.to_string()),
        }
    }
    None
}

/// The JVM options of a `java` launcher command line: everything between the program and
/// the main class (`-jar`, `-m`, a class or source file), without the launcher's own
/// `-cp`-style options and their values. None when it is not a `java` command line or uses
/// @argfiles, whose content it does not show.
pub fn jvm_options(cmdline: &[String]) -> Option<Vec<String>> {
    if !looks_like_java(cmdline) {
        return None;
    }
    let mut options = Vec::new();
    let mut args = cmdline.iter().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            a if a.starts_with('@') => return None,
            "-jar" | "-m" | "--module" => break,
            a if a.starts_with("--module=") || !a.starts_with('-') => break,
            a if OPTIONS_WITH_VALUE.contains(&a) => {
                args.next();
            }
            _ => options.push(arg.clone()),
        }
    }
    Some(options)
}

/// Facts that need the counters: version, GC, command.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct JvmDetails {
    /// `java.property.java.version`, e.g. `17.0.15`.
    pub java_version: Option<String>,
    /// `java.property.java.vm.version`.
    pub vm_version: Option<String>,
    /// The collector, from `sun.gc.policy.name` (e.g. `GarbageFirst` is G1) or the
    /// collectors' names.
    pub gc: Option<Collector>,
    /// `sun.rt.javaCommand`: main class or jar and its arguments.
    pub command: Option<String>,
}

impl JvmDetails {
    /// Extracts the details from a snapshot.
    pub fn from_snapshot(s: &Snapshot) -> JvmDetails {
        let text = |n: &str| s.value_str(n).map(|v| v.into_owned());
        JvmDetails {
            java_version: text("java.property.java.version"),
            vm_version: text("java.property.java.vm.version"),
            gc: Collector::from_perf_counters(
                text("sun.gc.policy.name").as_deref(),
                text("sun.gc.collector.0.name").as_deref(),
            ),
            command: text("sun.rt.javaCommand"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split('|').map(str::to_string).collect()
    }

    #[test]
    fn options_stop_at_the_main_class_and_keep_spaces() {
        let argv = words("/usr/lib/jvm/x/bin/java|-Xmx1g|-cp|a.jar:b.jar|-Xlog:gc*:file=/var/log/my app/gc.log|-XX:+PerfDisableSharedMem|com.example.Main|-XX:+NotAJvmOption");
        assert_eq!(
            jvm_options(&argv).unwrap(),
            words("-Xmx1g|-Xlog:gc*:file=/var/log/my app/gc.log|-XX:+PerfDisableSharedMem")
        );
        let jar = words("java|-XX:-UsePerfData|-jar|app.jar|--verbose");
        assert_eq!(jvm_options(&jar).unwrap(), words("-XX:-UsePerfData"));
        assert!(jvm_options(&words("java|@opts.txt|Main")).is_none());
        assert!(jvm_options(&words("/usr/bin/python3|-Xmx1g")).is_none());
        assert!(jvm_options(&[]).is_none());
    }
}
