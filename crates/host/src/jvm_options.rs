//! What a JVM was told on its command line: `-XX` flags, heap sizes, `-Xlog` outputs.
//! Parsed from `java.rt.vmArgs` (or `/proc/<pid>/cmdline`) plus `JAVA_TOOL_OPTIONS`;
//! later options win, as in HotSpot.

use std::collections::BTreeMap;
use std::path::PathBuf;

use pauselab_pause::units::ByteSize;
use serde::Serialize;

/// Where one `-Xlog` output (or `-Xloggc`) writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "path", rename_all = "lowercase")]
pub enum LogTarget {
    Stdout,
    Stderr,
    /// As given (may be relative to the JVM's working directory, may contain `%p`/`%t`).
    File(PathBuf),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogOutput {
    /// Tag selection, e.g. `gc*` (`-Xloggc` = `gc`).
    pub selection: String,
    pub target: LogTarget,
    /// The option as written.
    pub option: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct JvmOptions {
    /// `-XX:+Name` = true, `-XX:-Name` = false.
    pub booleans: BTreeMap<String, bool>,
    /// `-XX:Name=value`.
    pub values: BTreeMap<String, String>,
    pub initial_heap: Option<u64>,
    pub max_heap: Option<u64>,
    pub logs: Vec<LogOutput>,
    /// `-Xlog:async` (JDK 17+): log lines go through a buffer written by its own thread.
    pub async_logging: bool,
    /// `-Xshare:off` disables class data sharing.
    pub share_off: bool,
}

/// A size as the JVM reads `-Xmx` and `-XX:...Size=` (`256m`, `4g`, `1t`, bytes); `None`
/// when the JVM would refuse it.
pub fn parse_size(text: &str) -> Option<u64> {
    ByteSize::parse(text).ok().map(ByteSize::bytes)
}

impl JvmOptions {
    /// Parses options in order of precedence (earliest first).
    pub fn parse<S: AsRef<str>>(args: &[S]) -> JvmOptions {
        let mut options = JvmOptions::default();
        for arg in args {
            options.apply(arg.as_ref());
        }
        options
    }

    fn apply(&mut self, arg: &str) {
        if let Some(flag) = arg.strip_prefix("-XX:") {
            if let Some(name) = flag.strip_prefix('+') {
                self.booleans.insert(name.to_string(), true);
            } else if let Some(name) = flag.strip_prefix('-') {
                self.booleans.insert(name.to_string(), false);
            } else if let Some((name, value)) = flag.split_once('=') {
                match name {
                    "InitialHeapSize" => self.initial_heap = parse_size(value),
                    "MaxHeapSize" => self.max_heap = parse_size(value),
                    _ => {}
                }
                self.values.insert(name.to_string(), value.to_string());
            }
        } else if let Some(size) = arg.strip_prefix("-Xms") {
            self.initial_heap = parse_size(size);
        } else if let Some(size) = arg.strip_prefix("-Xmx") {
            self.max_heap = parse_size(size);
        } else if let Some(path) = arg.strip_prefix("-Xloggc:") {
            self.logs.push(LogOutput {
                selection: "gc".to_string(),
                target: LogTarget::File(PathBuf::from(path)),
                option: arg.to_string(),
            });
        } else if arg == "-Xshare:off" {
            self.share_off = true;
        } else if arg == "-Xshare:on" || arg == "-Xshare:auto" {
            self.share_off = false;
        } else if arg == "-Xlog:async" {
            self.async_logging = true;
        } else if arg == "-Xlog" {
            // `-Xlog` alone: warnings and info of all tags to stdout.
            self.logs.push(LogOutput {
                selection: "all".to_string(),
                target: LogTarget::Stdout,
                option: arg.to_string(),
            });
        } else if let Some(spec) = arg.strip_prefix("-Xlog:") {
            if let Some(output) = parse_xlog(spec, arg) {
                self.logs.push(output);
            }
        }
    }

    pub fn flag(&self, name: &str) -> Option<bool> {
        self.booleans.get(name).copied()
    }

    pub fn value(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }
}

/// What a running JVM says about its options, as its process and perf counters hold them
/// (pauselab-hsperf reads them; this crate needs no hsperf reader).
#[derive(Debug, Clone, Default)]
pub struct OptionSources {
    pub pid: u32,
    /// The process's environment, `NAME=value` each.
    pub environment: Vec<String>,
    /// `/proc/<pid>/cmdline`.
    pub cmdline: Vec<String>,
    /// The JVM options on that command line as the launcher splits them, when it is a
    /// `java` command line.
    pub launcher_options: Option<Vec<String>>,
    /// `java.rt.vmArgs` and `java.rt.vmFlags`, when the perf counters could be read.
    pub vm_args: Option<String>,
    pub vm_flags: Option<String>,
}

impl OptionSources {
    /// The options in the order HotSpot applies them (`JAVA_TOOL_OPTIONS`, the flags file,
    /// the command line, `_JAVA_OPTIONS`), and where the command line's were read.
    pub fn options(self) -> (JvmOptions, String) {
        // java.rt.vmArgs joins the options with spaces, so an option with a space in it (a
        // log path) would fall apart; the launcher's command line has each one whole. When
        // the two agree (they do unless @argfiles or JDK_JAVA_OPTIONS added options), the
        // command line's split is used.
        let (args, source) = match self.vm_args {
            Some(joined) => (
                match self.launcher_options {
                    Some(options) if options.join(" ") == joined.trim() => options,
                    _ => words(&joined),
                },
                "java.rt.vmArgs (perf counters)".to_string(),
            ),
            None => (
                self.launcher_options.unwrap_or(self.cmdline),
                format!("/proc/{}/cmdline", self.pid),
            ),
        };
        let mut all = environment_words(&self.environment, "JAVA_TOOL_OPTIONS");
        all.extend(self.vm_flags.as_deref().map(words).unwrap_or_default());
        all.extend(args);
        all.extend(environment_words(&self.environment, "_JAVA_OPTIONS"));
        (JvmOptions::parse(&all), source)
    }
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_string).collect()
}

/// The words of the environment variable `name`.
fn environment_words(environment: &[String], name: &str) -> Vec<String> {
    let prefix = format!("{name}=");
    environment
        .iter()
        .filter_map(|e| e.strip_prefix(&prefix))
        .flat_map(words)
        .collect()
}

/// `-Xlog:[what][:[output][:[decorators][:output-options]]]`; `None` for `disable`, `help`
/// and the like. Outputs that are files keep their `file=` path.
fn parse_xlog(spec: &str, option: &str) -> Option<LogOutput> {
    if matches!(spec, "disable" | "help" | "async") {
        return None;
    }
    let mut parts = spec.splitn(3, ':');
    let selection = parts.next().unwrap_or("").to_string();
    let output = parts.next().unwrap_or("");
    let target = match output {
        "" | "stdout" | "#0" => LogTarget::Stdout,
        "stderr" | "#1" => LogTarget::Stderr,
        other => {
            let path = other.strip_prefix("file=").unwrap_or(other);
            let path = path.trim_matches('"');
            LogTarget::File(PathBuf::from(path))
        }
    };
    Some(LogOutput {
        selection: if selection.is_empty() {
            "all".to_string()
        } else {
            selection
        },
        target,
        option: option.to_string(),
    })
}

/// A Java version: `17.0.15` -> (17, 15); `1.8.0_392` -> (8, 392).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct JavaVersion {
    pub feature: u32,
    /// Update release (`17.0.15` -> 15, `1.8.0_392` -> 392, `21` -> 0).
    pub update: u32,
}

impl JavaVersion {
    pub fn parse(text: &str) -> Option<JavaVersion> {
        let text = text.trim();
        if let Some(rest) = text.strip_prefix("1.") {
            let feature: u32 = rest.split('.').next()?.parse().ok()?;
            let update = rest
                .split('_')
                .nth(1)
                .and_then(|u| u.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
                .unwrap_or(0);
            return Some(JavaVersion { feature, update });
        }
        let numeric: String = text
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let mut parts = numeric.split('.');
        let feature = parts.next()?.parse().ok()?;
        let _interim = parts.next();
        let update = parts.next().and_then(|u| u.parse().ok()).unwrap_or(0);
        Some(JavaVersion { feature, update })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(vm_args: Option<&str>, launcher: Option<&[&str]>) -> OptionSources {
        let strings = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        OptionSources {
            pid: 42,
            environment: strings(&[
                "HOME=/root",
                "_JAVA_OPTIONS=-Xmx3g",
                "JAVA_TOOL_OPTIONS=-Xmx1g -XX:+AlwaysPreTouch",
            ]),
            cmdline: strings(&["java", "-Xmx9g", "Main"]),
            launcher_options: launcher.map(strings),
            vm_args: vm_args.map(str::to_string),
            vm_flags: Some("-XX:-AlwaysPreTouch -XX:+UseG1GC".to_string()),
        }
    }

    #[test]
    fn options_are_applied_in_hotspots_order() {
        let (options, source) = sources(Some("-Xmx2g -Xms1g"), None).options();
        assert_eq!(source, "java.rt.vmArgs (perf counters)");
        // _JAVA_OPTIONS comes last and wins; the flags file overrides JAVA_TOOL_OPTIONS.
        assert_eq!(options.max_heap, Some(3 << 30));
        assert_eq!(options.initial_heap, Some(1 << 30));
        assert_eq!(options.flag("AlwaysPreTouch"), Some(false));
        assert_eq!(options.flag("UseG1GC"), Some(true));
    }

    #[test]
    fn a_path_with_a_space_stays_whole_when_the_launcher_agrees() {
        let log = "-Xlog:gc:file=/var/log/my app/gc.log";
        let (options, _) = sources(Some(log), Some(&[log])).options();
        assert_eq!(
            options.logs[0].target,
            LogTarget::File(PathBuf::from("/var/log/my app/gc.log"))
        );
        // vmArgs with more than the command line (an @argfile): split on spaces.
        let (options, _) = sources(Some(&format!("{log} -Xss1m")), Some(&[log])).options();
        assert_eq!(
            options.logs[0].target,
            LogTarget::File(PathBuf::from("/var/log/my"))
        );
    }

    #[test]
    fn without_counters_the_command_line_is_read() {
        let (options, source) = sources(None, Some(&["-Xms5g"])).options();
        assert_eq!(source, "/proc/42/cmdline");
        assert_eq!(options.initial_heap, Some(5 << 30));
        let (options, _) = sources(None, None).options();
        // The whole command line when the launcher's split is unknown; _JAVA_OPTIONS wins.
        assert_eq!(options.max_heap, Some(3 << 30));
        let mut without = sources(None, None);
        without.environment.clear();
        assert_eq!(without.options().0.max_heap, Some(9 << 30));
    }

    #[test]
    fn flags_sizes_and_precedence() {
        let o = JvmOptions::parse(&[
            "-Xms1g",
            "-Xmx4g",
            "-XX:+AlwaysPreTouch",
            "-XX:ParallelGCThreads=8",
            "-XX:-AlwaysPreTouch",
            "-XX:MaxHeapSize=2g",
        ]);
        assert_eq!(o.initial_heap, Some(1 << 30));
        assert_eq!(o.max_heap, Some(2 << 30));
        assert_eq!(o.flag("AlwaysPreTouch"), Some(false));
        assert_eq!(o.value("ParallelGCThreads"), Some("8"));
        assert_eq!(parse_size("512k"), Some(512 << 10));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size("99999999999999t"), None);
    }

    #[test]
    fn xlog_outputs() {
        let o = JvmOptions::parse(&[
            "-Xlog:gc*,safepoint:file=/var/log/gc.log:time,uptime:filecount=5",
            "-Xlog:gc:stderr",
            "-Xlog:safepoint",
            "-Xlog:gc:gc-%p.log",
            "-Xloggc:old.log",
            "-Xlog:disable",
            "-Xlog:async",
        ]);
        assert!(o.async_logging);
        let targets: Vec<_> = o.logs.iter().map(|l| l.target.clone()).collect();
        assert_eq!(
            targets,
            vec![
                LogTarget::File("/var/log/gc.log".into()),
                LogTarget::Stderr,
                LogTarget::Stdout,
                LogTarget::File("gc-%p.log".into()),
                LogTarget::File("old.log".into()),
            ]
        );
        assert_eq!(o.logs[0].selection, "gc*,safepoint");
    }

    #[test]
    fn java_versions() {
        assert_eq!(
            JavaVersion::parse("17.0.15"),
            Some(JavaVersion {
                feature: 17,
                update: 15
            })
        );
        assert_eq!(
            JavaVersion::parse("1.8.0_392"),
            Some(JavaVersion {
                feature: 8,
                update: 392
            })
        );
        assert_eq!(
            JavaVersion::parse("21"),
            Some(JavaVersion {
                feature: 21,
                update: 0
            })
        );
        assert_eq!(
            JavaVersion::parse("25-ea"),
            Some(JavaVersion {
                feature: 25,
                update: 0
            })
        );
        assert_eq!(JavaVersion::parse("garbage"), None);
    }
}
