//! Finding the JVMs of this host on every scrape without re-reading every process's
//! mappings every time.
//!
//! Telling a JVM from another process means reading `/proc/<pid>/maps`, which costs more for
//! a big non-Java process than reading a JVM's counters. A scraper runs every few seconds
//! for months, so the verdict is remembered per process: pid, start time (a reused pid is a
//! new process) and command name (`exec java` in a start script keeps pid and start time but
//! changes the name). A process that is not a JVM yet may become one: the `java` launcher
//! maps libjvm.so a few milliseconds after it starts, so young `java` processes are looked
//! at on every scrape; a native program can create a JVM at any time, so every other
//! process is looked at again once a minute.

use std::collections::HashMap;
use std::fs;
use std::time::{Duration, Instant};

use std::panic::{self, AssertUnwindSafe};

use pauselab_hsperf::{inspect, Error, JvmProcess};

/// `java` processes younger than this are looked at on every scrape.
const YOUNG: Duration = Duration::from_secs(10);
/// Older processes that were not JVMs are looked at again after this long.
const RECHECK: Duration = Duration::from_secs(60);

#[derive(Default)]
pub(crate) struct Discovery {
    processes: HashMap<u32, Process>,
}

struct Process {
    identity: ProcessIdentity,
    verdict: Verdict,
}

/// What tells one process from another that had the same pid, or from its former self
/// before an exec.
#[derive(PartialEq, Eq)]
struct ProcessIdentity {
    /// Clock ticks since boot when the process started.
    start_ticks: u64,
    /// The executable's name as the kernel keeps it (`comm`, 15 bytes at most).
    command: String,
}

enum Verdict {
    Jvm(Box<JvmProcess>),
    NotJvm {
        checked: Instant,
    },
    /// Looking at it hit a bug (a panic, contained to this process); looked at again after
    /// [`RECHECK`] rather than on every scrape.
    Failed {
        checked: Instant,
    },
}

/// What one look at the host found.
pub(crate) struct Found {
    /// Every HotSpot JVM running now, sorted by pid.
    pub jvms: Vec<JvmProcess>,
    /// Processes that could not be told apart from a JVM because of a bug in doing so.
    pub failed: Vec<u32>,
}

impl Discovery {
    /// Every HotSpot JVM running now.
    pub(crate) fn jvms(&mut self) -> Found {
        let own = std::process::id();
        let now = Instant::now();
        let host_uptime = host_uptime();
        let ticks_per_second = clock_ticks_per_second();
        let mut pids: Vec<u32> = fs::read_dir("/proc")
            .map(|entries| {
                entries
                    .flatten()
                    .filter_map(|e| e.file_name().to_str()?.parse().ok())
                    .filter(|&pid| pid != own)
                    .collect()
            })
            .unwrap_or_default();
        pids.sort_unstable();
        self.processes
            .retain(|pid, _| pids.binary_search(pid).is_ok());

        let mut jvms = Vec::new();
        let mut failed = Vec::new();
        for pid in pids {
            // Gone already: nothing to report.
            let Some(identity) = process_identity(pid) else {
                self.processes.remove(&pid);
                continue;
            };
            let age = match (host_uptime, ticks_per_second) {
                (Some(up), Some(hz)) => {
                    Duration::from_secs_f64((up - identity.start_ticks as f64 / hz).max(0.0))
                }
                _ => Duration::ZERO,
            };
            let known = self.processes.get(&pid).filter(|p| p.identity == identity);
            let look_again = match known.map(|p| &p.verdict) {
                Some(Verdict::Jvm(jvm)) => {
                    jvms.push((**jvm).clone());
                    continue;
                }
                Some(Verdict::NotJvm { checked }) => {
                    (identity.command == "java" && age < YOUNG)
                        || now.duration_since(*checked) >= RECHECK
                }
                Some(Verdict::Failed { checked }) => {
                    let again = now.duration_since(*checked) >= RECHECK;
                    if !again {
                        failed.push(pid);
                    }
                    again
                }
                None => true,
            };
            if !look_again {
                continue;
            }
            let Ok(inspected) = panic::catch_unwind(AssertUnwindSafe(|| inspect(pid))) else {
                failed.push(pid);
                let verdict = Verdict::Failed { checked: now };
                self.processes.insert(pid, Process { identity, verdict });
                continue;
            };
            let verdict = match inspected {
                Ok(jvm) => {
                    jvms.push(jvm.clone());
                    Verdict::Jvm(Box::new(jvm))
                }
                Err(Error::NotJvm { .. }) => Verdict::NotJvm { checked: now },
                // Exited meanwhile, or a passing error: decide on the next scrape.
                Err(_) => {
                    self.processes.remove(&pid);
                    continue;
                }
            };
            self.processes.insert(pid, Process { identity, verdict });
        }
        Found { jvms, failed }
    }

    /// Forgets what is known about `pid`, e.g. after it could not be read, so the next
    /// scrape looks at it afresh.
    pub(crate) fn forget(&mut self, pid: u32) {
        self.processes.remove(&pid);
    }
}

/// When process `pid` started, clock ticks since boot: tells a reused pid from the process
/// that had it before.
pub(crate) fn start_ticks(pid: u32) -> Option<u64> {
    process_identity(pid).map(|identity| identity.start_ticks)
}

/// Command name (field 2) and start time (field 22) from `/proc/<pid>/stat`.
fn process_identity(pid: u32) -> Option<ProcessIdentity> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name may contain spaces and parentheses: it ends at the last ')'.
    let name_start = stat.find('(')? + 1;
    let name_end = stat.rfind(')')?;
    let after_name = stat.get(name_end + 2..)?;
    Some(ProcessIdentity {
        start_ticks: after_name.split(' ').nth(19)?.parse().ok()?,
        command: stat.get(name_start..name_end)?.to_string(),
    })
}

fn host_uptime() -> Option<f64> {
    fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn clock_ticks_per_second() -> Option<f64> {
    // SAFETY: sysconf only reads a configuration value.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then_some(hz as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_of_this_process_is_stable_and_started_before_now() {
        let pid = std::process::id();
        let first = process_identity(pid).expect("own /proc/<pid>/stat");
        assert!(process_identity(pid).as_ref() == Some(&first));
        let own_name = std::fs::read_to_string("/proc/self/comm").unwrap();
        assert_eq!(first.command, own_name.trim_end());
        let hz = clock_ticks_per_second().unwrap();
        assert!(first.start_ticks as f64 / hz <= host_uptime().unwrap() + 1.0);
        assert!(process_identity(u32::MAX).is_none());
    }
}
