//! `--enable-gc-log DIR`: GC and safepoint logging turned on at run time in JVMs that log
//! neither, through the attach mechanism (`VM.log`), and off again when the exporter exits.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pauselab_host::trust::PrivateDir;
use pauselab_hsperf::attach::{jcmd, AttachOptions};
use pauselab_hsperf::JvmProcess;

/// Files per JVM and their size: 32 MiB at most hold days of `gc=info,safepoint=info`.
const FILE_COUNT: u32 = 4;
const FILE_SIZE: &str = "8m";
/// A JVM that could not be attached to is tried again after this long.
const RETRY: Duration = Duration::from_secs(60);
/// An attach that takes longer gives up (the scrape waits for it).
const ATTACH_TIMEOUT: Duration = Duration::from_secs(3);

/// The logs this exporter turned on, by pid.
#[derive(Debug)]
pub(crate) struct EnabledLogs {
    dir: PathBuf,
    enabled: HashMap<u32, Enabled>,
    failed: HashMap<u32, Instant>,
}

#[derive(Debug)]
struct Enabled {
    /// The `VM.log` output name, which turning it off must repeat.
    output: String,
    /// `DIR/<pid>`, removed when the JVM exits.
    dir: PathBuf,
}

/// A log turned on: where the JVM writes it (as it sees it, and here).
pub(crate) struct NewLog {
    pub shown: String,
    pub on_host: PathBuf,
}

impl EnabledLogs {
    pub(crate) fn new(dir: PathBuf) -> EnabledLogs {
        EnabledLogs {
            dir,
            enabled: HashMap::new(),
            failed: HashMap::new(),
        }
    }

    /// Turns logging on in `jvm`, unless this was tried and failed less than a minute ago.
    /// Errors are one line on stderr: the metric says `none`.
    pub(crate) fn enable(&mut self, jvm: &JvmProcess) -> Option<NewLog> {
        if self
            .failed
            .get(&jvm.pid)
            .is_some_and(|at| at.elapsed() < RETRY)
        {
            return None;
        }
        match self.try_enable(jvm) {
            Ok(log) => {
                self.failed.remove(&jvm.pid);
                Some(log)
            }
            Err(reason) => {
                eprintln!(
                    "pauselab export: cannot turn on the GC log of JVM {}: {reason}",
                    jvm.pid
                );
                self.failed.insert(jvm.pid, Instant::now());
                None
            }
        }
    }

    fn try_enable(&mut self, jvm: &JvmProcess) -> Result<NewLog, String> {
        let pid = jvm.pid;
        if !same_mount_namespace(pid) {
            return Err(
                "it runs in another mount namespace (a container): DIR would be a directory of its own file system"
                    .to_string(),
            );
        }
        let dir = create_owned_dir(&self.dir, jvm.uid, pid)?;
        let file = dir.join("gc.log");
        let output = format!("file={}", file.display());
        let command = format!(
            "VM.log output={output} what=gc=info,safepoint=info decorators=uptime,level,tags \
             output_options=filecount={FILE_COUNT},filesize={FILE_SIZE}"
        );
        let options = AttachOptions {
            timeout: ATTACH_TIMEOUT,
            ..AttachOptions::default()
        };
        let reply = jcmd(pid, &command, options).map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&reply.output);
        if reply.status != 0 || text.to_ascii_lowercase().contains("error") {
            let _ = fs::remove_dir_all(&dir);
            return Err(format!("VM.log answered: {}", text.trim()));
        }
        self.enabled.insert(
            pid,
            Enabled {
                output,
                dir: dir.clone(),
            },
        );
        Ok(NewLog {
            shown: file.display().to_string(),
            on_host: file,
        })
    }

    /// Forgets JVMs that exited, removing the directories made for them.
    pub(crate) fn retain(&mut self, alive: impl Fn(u32) -> bool) {
        self.enabled.retain(|pid, enabled| {
            let keep = alive(*pid);
            if !keep {
                let _ = fs::remove_dir_all(&enabled.dir);
            }
            keep
        });
        self.failed.retain(|pid, _| alive(*pid));
    }

    /// Turns off every output this exporter added (the files stay). Called on exit.
    pub(crate) fn disable_all(&mut self) {
        let options = AttachOptions {
            timeout: ATTACH_TIMEOUT,
            ..AttachOptions::default()
        };
        for (pid, enabled) in self.enabled.drain() {
            // `what=all=off` removes this one output and leaves the JVM's others alone.
            let command = format!("VM.log output={} what=all=off", enabled.output);
            match jcmd(pid, &command, options) {
                Ok(_) => {}
                // Exited since the last scrape: nothing to turn off, nobody to write there.
                Err(pauselab_hsperf::Error::NoProcess { .. }) => {
                    let _ = fs::remove_dir_all(&enabled.dir);
                }
                Err(e) => {
                    eprintln!("pauselab export: cannot turn off the GC log of JVM {pid}: {e}")
                }
            }
        }
    }
}

fn same_mount_namespace(pid: u32) -> bool {
    let ours = fs::read_link("/proc/self/ns/mnt");
    let theirs = fs::read_link(format!("/proc/{pid}/ns/mnt"));
    matches!((ours, theirs), (Ok(a), Ok(b)) if a == b)
}

/// `DIR/<pid>`, created afresh for the JVM's user (it writes and rotates the files itself):
/// DIR must be a directory only root can change, and whatever was at `<pid>` (a leftover,
/// or a link planted there) is removed without being followed.
fn create_owned_dir(root: &Path, uid: u32, pid: u32) -> Result<PathBuf, String> {
    let root = PrivateDir::open_or_create(root).map_err(|e| e.to_string())?;
    let gid = pauselab_hsperf::read_status(pid)
        .map(|s| s.gid)
        .map_err(|e| e.to_string())?;
    let name = pid.to_string();
    root.fresh_subdir(&name, uid, gid, 0o750)
        .map_err(|e| format!("{}: {e}", root.path().join(&name).display()))
}
