//! The host-change journal: every change a lab run makes to the host (scratch files, loop
//! devices, sysfs writes, mounts, blkio throttles, cgroups, swap areas, child processes) is appended here and
//! synced BEFORE it is made, and undone in reverse order when the run ends, on Ctrl-C,
//! SIGTERM and panic. A run killed with SIGKILL leaves its journal behind;
//! [`cleanup_stale`] (`pauselab lab cleanup`) replays it.
//!
//! Format: JSON lines. The first line is the [`Header`]; each further line is either
//! `{"seq":N,"change":{..}}` (intent, written before the change) or `{"undone":N}`.
//! The owning run holds an exclusive `flock` on the file, so a journal whose lock can be
//! taken belongs to a dead run.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::host::sys::{self, SysError};
use crate::LabError;

/// Environment variable carried by every child process of a run, so that processes can be
/// found (and killed) again even after the run itself was killed.
pub const RUN_MARKER_ENV: &str = "PAUSELAB_LAB_RUN";

/// One change to the host, and everything needed to undo it without the process that made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Change {
    /// A directory this run created (removed with its content; never crosses a mount).
    Dir { path: PathBuf },
    /// A directory this run created in a place other processes share (the host's
    /// `/tmp/hsperfdata_<user>`): removed only if it is still empty, since JVMs started
    /// meanwhile may have put their files in it.
    SharedDir { path: PathBuf },
    /// A file this run created.
    File { path: PathBuf },
    /// A loop device attached to `image` (detached by looking the image up again).
    LoopDevice { image: PathBuf },
    /// A write to a sysfs or procfs file; undone by writing `previous` back. With
    /// `loop_image`, only while that loop device still backs this image.
    SysfsWrite {
        path: PathBuf,
        previous: String,
        loop_image: Option<PathBuf>,
    },
    /// A mount on `target` in the host's mount namespace.
    Mount { target: PathBuf },
    /// A cgroup v1 blkio throttle rule `device` (MAJ:MIN) in `control`; undone with "MAJ:MIN 0".
    BlkioThrottle { control: PathBuf, device: String },
    /// Child processes carrying `PAUSELAB_LAB_RUN=<run_id>` in their environment.
    Processes { run_id: String },
    /// A cgroup directory this run created (its processes moved to the parent, then removed).
    Cgroup { path: PathBuf },
    /// One process this run forked without exec (a cgroup filler): SIGKILLed if process
    /// `pid` still has the start time `started` (clock ticks after boot), so a reused pid is
    /// never hit.
    Process { pid: u32, started: u64 },
    /// cgroup v2: `controller` enabled in `group`'s `cgroup.subtree_control` by this run;
    /// undone by disabling it again.
    SubtreeControl { group: PathBuf, controller: String },
    /// cgroup v2: process `pid` (started at `started` clock ticks after boot) moved into a
    /// cgroup of the run; undone by moving it back to `previous`, if it still lives.
    JoinCgroup {
        pid: u32,
        started: u64,
        previous: PathBuf,
    },
    /// cgroup v2: a write limit for `device` (MAJ:MIN) in `control` (an `io.max`); undone
    /// with "MAJ:MIN wbps=max".
    IoMax { control: PathBuf, device: String },
    /// A swap area on the file `path` (`swapon`); undone with `swapoff`, which reads its
    /// pages back into memory first.
    Swap { path: PathBuf },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    pub run_id: String,
    pub pid: u32,
    pub started_unix_s: u64,
    pub what: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
enum Line {
    Header { header: Header },
    Change { seq: u64, change: Change },
    Undone { undone: u64 },
}

/// An open journal owned by a running lab run.
pub struct Journal {
    path: PathBuf,
    file: File,
    header: Header,
    /// Changes not undone yet, in the order they were made.
    pending: Vec<(u64, Change)>,
    next_seq: u64,
    /// Some undo failed: the journal file stays for `pauselab lab cleanup`.
    keep: bool,
}

/// Where journals live: `$PAUSELAB_STATE_DIR`, else `/var/lib/pauselab` for root and
/// `$XDG_STATE_HOME/pauselab` (or `~/.local/state/pauselab`) for other users.
pub fn state_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("PAUSELAB_STATE_DIR") {
        return PathBuf::from(dir);
    }
    if sys::is_root() {
        return PathBuf::from("/var/lib/pauselab");
    }
    if let Some(dir) = std::env::var_os("XDG_STATE_HOME") {
        return PathBuf::from(dir).join("pauselab");
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into());
    PathBuf::from(home).join(".local/state/pauselab")
}

fn journal_dir(state: &Path) -> PathBuf {
    state.join("lab/journals")
}

impl Journal {
    /// Creates a new journal for a run and takes its lock.
    pub fn create(state: &Path, run_id: &str, what: &str) -> Result<Journal, LabError> {
        let dir = journal_dir(state);
        fs::create_dir_all(&dir)
            .map_err(|e| LabError::io(&dir, "create the journal directory", e))?;
        let path = dir.join(format!("{run_id}.journal"));
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path)
            .map_err(|e| LabError::io(&path, "create the journal", e))?;
        lock(&file, &path)?;
        let header = Header {
            run_id: run_id.to_string(),
            pid: std::process::id(),
            started_unix_s: sys::unix_now_s(),
            what: what.to_string(),
        };
        let mut journal = Journal {
            path,
            file,
            header: header.clone(),
            pending: Vec::new(),
            next_seq: 1,
            keep: false,
        };
        journal.append(&Line::Header { header })?;
        Ok(journal)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn run_id(&self) -> &str {
        &self.header.run_id
    }

    /// Records `change` durably. Call BEFORE making the change.
    pub fn record(&mut self, change: Change) -> Result<(), LabError> {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.append(&Line::Change {
            seq,
            change: change.clone(),
        })?;
        self.pending.push((seq, change));
        Ok(())
    }

    /// A point to undo back to with [`Journal::undo_to`] (changes of one variant's turn).
    pub fn mark(&self) -> usize {
        self.pending.len()
    }

    /// Undoes, in reverse order, the changes recorded since `mark`. Failures are returned;
    /// the journal is kept so `lab cleanup` can try again.
    pub fn undo_to(&mut self, mark: usize) -> Vec<String> {
        let failures = self.undo_while(|pending| pending.len() > mark);
        if !failures.is_empty() {
            self.keep = true;
        }
        failures
    }

    /// Undoes every pending change in reverse order. Keeps going past failures; returns
    /// them all. The journal file is removed when everything was undone.
    pub fn undo_all(&mut self) -> Vec<String> {
        let failures = self.undo_while(|pending| !pending.is_empty());
        if failures.is_empty() && !self.keep {
            let _ = fs::remove_file(&self.path);
        } else {
            self.keep = true;
        }
        failures
    }

    fn undo_while(&mut self, more: impl Fn(&[(u64, Change)]) -> bool) -> Vec<String> {
        let mut failures = Vec::new();
        while more(&self.pending) {
            let Some((seq, change)) = self.pending.pop() else {
                break;
            };
            match undo(&change) {
                Ok(()) => {
                    if let Err(e) = self.append(&Line::Undone { undone: seq }) {
                        failures.push(e.to_string());
                    }
                }
                Err(e) => failures.push(format!("{}: {e}", describe(&change))),
            }
        }
        failures
    }

    fn append(&mut self, line: &Line) -> Result<(), LabError> {
        append_line(&mut self.file, &self.path, line)
    }
}

fn append_line(file: &mut File, path: &Path, line: &Line) -> Result<(), LabError> {
    let mut text = serde_json::to_string(line).expect("journal lines serialize");
    text.push('\n');
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_data())
        .map_err(|e| LabError::io(path, "write the journal", e))
}

impl Drop for Journal {
    /// Undo on every exit path, panics included.
    fn drop(&mut self) {
        if self.pending.is_empty() {
            if !self.keep {
                let _ = fs::remove_file(&self.path);
            }
            return;
        }
        let failures = self.undo_all();
        for failure in &failures {
            pauselab_pause::eprintln_lossy!("pauselab: warning: could not undo {failure}");
        }
        if !failures.is_empty() {
            pauselab_pause::eprintln_lossy!(
                "pauselab: warning: journal kept at {}; run `pauselab lab cleanup`",
                self.path.display()
            );
        }
    }
}

fn lock(file: &File, path: &Path) -> Result<(), LabError> {
    // SAFETY: flock on a valid, owned file descriptor.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc != 0 {
        return Err(LabError::io(
            path,
            "lock the journal",
            std::io::Error::last_os_error(),
        ));
    }
    Ok(())
}

/// A human description of a change, for messages.
pub fn describe(change: &Change) -> String {
    match change {
        Change::Dir { path } => format!("directory {}", path.display()),
        Change::SharedDir { path } => format!("directory {} (if empty)", path.display()),
        Change::File { path } => format!("file {}", path.display()),
        Change::LoopDevice { image } => format!("loop device on {}", image.display()),
        Change::SysfsWrite { path, previous, .. } => {
            format!("write to {} (was {previous:?})", path.display())
        }
        Change::Mount { target } => format!("mount on {}", target.display()),
        Change::BlkioThrottle { control, device } => {
            format!("blkio throttle of {device} in {}", control.display())
        }
        Change::Processes { run_id } => format!("processes of run {run_id}"),
        Change::Cgroup { path } => format!("cgroup {}", path.display()),
        Change::Swap { path } => format!("swap on {}", path.display()),
        Change::SubtreeControl { group, controller } => format!(
            "{controller} controller enabled in {}",
            group.join("cgroup.subtree_control").display()
        ),
        Change::JoinCgroup { pid, previous, .. } => {
            format!("process {pid} moved out of {}", previous.display())
        }
        Change::IoMax { control, device } => {
            format!("io.max write limit of {device} in {}", control.display())
        }
        Change::Process { pid, .. } => format!("process {pid}"),
    }
}

/// Why a change could not be undone (the journal keeps it for `lab cleanup`).
#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    /// Processes of the run that outlived SIGKILL.
    #[error("processes still alive: {0:?}")]
    StillAlive(Vec<i32>),
    #[error("move process {pid} back to {}: {source}", to.display())]
    MoveBack {
        pid: u32,
        to: PathBuf,
        source: std::io::Error,
    },
    /// A directory with mounts below it is left alone.
    #[error("still mounted below it: {0:?}; not removing")]
    StillMounted(Vec<PathBuf>),
    /// Writing back, removing: the system's own words.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Sys(#[from] SysError),
}

/// Undoes one change. Idempotent: undoing something already gone succeeds.
pub fn undo(change: &Change) -> Result<(), UndoError> {
    match change {
        Change::Processes { run_id } => {
            let left = sys::kill_marked_processes(RUN_MARKER_ENV, run_id, Duration::from_secs(10));
            if left.is_empty() {
                Ok(())
            } else {
                Err(UndoError::StillAlive(left))
            }
        }
        Change::BlkioThrottle { control, device } => {
            match fs::write(control, format!("{device} 0\n")) {
                Ok(()) => Ok(()),
                // The device is gone, and its rule with it.
                Err(e) if e.raw_os_error() == Some(libc::ENODEV) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(e.into()),
            }
        }
        Change::Mount { target } => Ok(sys::unmount(target, Duration::from_secs(20))?),
        Change::Cgroup { path } => Ok(sys::remove_cgroup(path)?),
        Change::SubtreeControl { group, controller } => gone_is_done(fs::write(
            group.join("cgroup.subtree_control"),
            format!("-{controller}"),
        )),
        Change::JoinCgroup {
            pid,
            started,
            previous,
        } => {
            if sys::process_start_ticks(*pid) != Some(*started) {
                return Ok(());
            }
            fs::write(previous.join("cgroup.procs"), pid.to_string()).map_err(|source| {
                UndoError::MoveBack {
                    pid: *pid,
                    to: previous.clone(),
                    source,
                }
            })
        }
        Change::IoMax { control, device } => {
            match fs::write(control, format!("{device} wbps=max")) {
                // The device is gone, and its rule with it.
                Err(e) if e.raw_os_error() == Some(libc::ENODEV) => Ok(()),
                other => gone_is_done(other),
            }
        }
        Change::Swap { path } => Ok(sys::swapoff(path)?),
        Change::Process { pid, started } => Ok(sys::kill_process(*pid, *started)?),
        Change::SysfsWrite {
            path,
            previous,
            loop_image,
        } => {
            if let Some(image) = loop_image {
                let device = path
                    .components()
                    .nth(3)
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .unwrap_or_default();
                if !sys::loop_devices_backing(image).contains(&device) {
                    return Ok(());
                }
            }
            match fs::write(path, previous) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(e.into()),
            }
        }
        Change::LoopDevice { image } => {
            for device in sys::loop_devices_backing(image) {
                sys::detach_loop(&device)?;
            }
            Ok(())
        }
        Change::File { path } => match fs::remove_file(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e.into()),
        },
        Change::SharedDir { path } => match fs::remove_dir(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            // Another JVM has put its perf file in it since: it is the host's now.
            Err(e) if e.raw_os_error() == Some(libc::ENOTEMPTY) => Ok(()),
            Err(e) => Err(e.into()),
        },
        Change::Dir { path } => {
            if !path.exists() {
                return Ok(());
            }
            let mounted = sys::mounts_under(path);
            if !mounted.is_empty() {
                return Err(UndoError::StillMounted(mounted));
            }
            Ok(fs::remove_dir_all(path)?)
        }
    }
}

/// A write whose target no longer exists has nothing left to undo.
fn gone_is_done(result: std::io::Result<()>) -> Result<(), UndoError> {
    match result {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
        _ => Ok(()),
    }
}

/// What `pauselab lab cleanup` did with one journal.
#[derive(Debug, Clone, Serialize)]
pub struct CleanupReport {
    pub journal: PathBuf,
    pub run_id: String,
    /// The run is still alive (its journal is locked); nothing was touched.
    pub running: bool,
    pub undone: Vec<String>,
    pub failures: Vec<String>,
}

/// Replays the journals of dead runs found in `state`, undoing what they left behind.
pub fn cleanup_stale(state: &Path) -> Result<Vec<CleanupReport>, LabError> {
    let dir = journal_dir(state);
    let mut reports = Vec::new();
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(reports),
        Err(e) => return Err(LabError::io(&dir, "read the journal directory", e)),
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "journal"))
        .collect();
    paths.sort();
    for path in paths {
        reports.push(replay(&path)?);
    }
    Ok(reports)
}

/// Journals of runs that died without cleaning up (unlocked journals), without touching them.
pub fn stale_journals(state: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(journal_dir(state)) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "journal"))
        .filter(|p| {
            File::open(p)
                .map(|f| {
                    // SAFETY: flock on a valid, owned file descriptor.
                    unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) == 0 }
                })
                .unwrap_or(false)
        })
        .collect()
}

fn replay(path: &Path) -> Result<CleanupReport, LabError> {
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .open(path)
        .map_err(|e| LabError::io(path, "open the journal", e))?;
    let mut report = CleanupReport {
        journal: path.to_path_buf(),
        run_id: String::new(),
        running: false,
        undone: Vec::new(),
        failures: Vec::new(),
    };
    // SAFETY: flock on a valid, owned file descriptor.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        report.running = true;
        return Ok(report);
    }
    let mut changes: Vec<(u64, Change)> = Vec::new();
    let mut undone = std::collections::HashSet::new();
    let text =
        std::io::read_to_string(&file).map_err(|e| LabError::io(path, "read the journal", e))?;
    let lines: Vec<&str> = text.lines().collect();
    for (number, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Line>(line) {
            Ok(Line::Header { header }) => report.run_id = header.run_id,
            Ok(Line::Change { seq, change }) => changes.push((seq, change)),
            Ok(Line::Undone { undone: seq }) => {
                undone.insert(seq);
            }
            // A run killed mid-write leaves a torn last line: the change it described was
            // not started (intent is synced before the change), so it is skipped.
            Err(_) if number + 1 == lines.len() && !text.ends_with('\n') => {}
            Err(e) => report.failures.push(format!(
                "{}:{}: unreadable line skipped: {e}",
                path.display(),
                number + 1
            )),
        }
    }
    for (seq, change) in changes.into_iter().rev() {
        if undone.contains(&seq) {
            continue;
        }
        match undo(&change) {
            Ok(()) => {
                let _ = append_line(&mut file, path, &Line::Undone { undone: seq });
                report.undone.push(describe(&change));
            }
            Err(e) => report.failures.push(format!("{}: {e}", describe(&change))),
        }
    }
    if report.failures.is_empty() {
        fs::remove_file(path).map_err(|e| LabError::io(path, "remove the journal", e))?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_undo_that_fails_says_what_it_could_not_do() {
        let me = std::process::id();
        let started = sys::process_start_ticks(me).unwrap();
        let back = undo(&Change::JoinCgroup {
            pid: me,
            started,
            previous: PathBuf::from("/nonexistent/pauselab-cgroup"),
        })
        .unwrap_err();
        assert!(matches!(back, UndoError::MoveBack { pid, .. } if pid == me));
        assert_eq!(
            back.to_string(),
            format!("move process {me} back to /nonexistent/pauselab-cgroup: No such file or directory (os error 2)")
        );
        let dir = temp_dir("undo-error");
        let file = undo(&Change::File { path: dir.clone() }).unwrap_err();
        assert!(matches!(file, UndoError::Io(_)));
        assert_eq!(file.to_string(), "Is a directory (os error 21)");
        // Already gone: nothing to undo.
        undo(&Change::File {
            path: dir.join("gone"),
        })
        .unwrap();
        fs::remove_dir_all(&dir).unwrap();
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("pauselab-journal-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn panic_undoes_in_reverse_order() {
        let state = temp_dir("panic");
        let scratch = state.join("scratch");
        let result = std::panic::catch_unwind(|| {
            let mut journal = Journal::create(&state, "run-panic", "test").unwrap();
            journal
                .record(Change::Dir {
                    path: scratch.clone(),
                })
                .unwrap();
            fs::create_dir(&scratch).unwrap();
            let file = scratch.join("f");
            journal.record(Change::File { path: file.clone() }).unwrap();
            fs::write(&file, "x").unwrap();
            panic!("boom");
        });
        assert!(result.is_err());
        assert!(!scratch.exists(), "scratch directory left behind");
        assert!(
            fs::read_dir(state.join("lab/journals"))
                .unwrap()
                .next()
                .is_none(),
            "journal left behind"
        );
        fs::remove_dir_all(&state).unwrap();
    }

    #[test]
    fn cleanup_replays_a_dead_runs_journal_once() {
        let state = temp_dir("replay");
        let dir = state.join("left-behind");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("data"), "x").unwrap();
        let kept = state.join("already-undone");
        fs::create_dir(&kept).unwrap();
        let journals = state.join("lab/journals");
        fs::create_dir_all(&journals).unwrap();
        // As a SIGKILLed run leaves it: intent lines, one undone, and a torn last line.
        let text = format!(
            "{{\"header\":{{\"run_id\":\"dead\",\"pid\":1,\"started_unix_s\":0,\"what\":\"t\"}}}}\n\
             {{\"seq\":1,\"change\":{{\"kind\":\"dir\",\"path\":{:?}}}}}\n\
             {{\"seq\":2,\"change\":{{\"kind\":\"dir\",\"path\":{:?}}}}}\n\
             {{\"undone\":2}}\n\
             {{\"seq\":3,\"chan",
            dir, kept
        );
        fs::write(journals.join("dead.journal"), text).unwrap();
        assert_eq!(stale_journals(&state).len(), 1);
        let reports = cleanup_stale(&state).unwrap();
        assert_eq!(reports.len(), 1);
        assert_eq!(reports[0].run_id, "dead");
        assert_eq!(reports[0].undone.len(), 1, "{:?}", reports[0]);
        assert!(!dir.exists());
        assert!(kept.exists(), "an undone change was replayed");
        assert!(reports[0].failures.is_empty(), "{:?}", reports[0]);
        assert!(!journals.join("dead.journal").exists());
        fs::remove_dir_all(&state).unwrap();
    }

    #[test]
    fn a_live_run_is_left_alone() {
        let state = temp_dir("live");
        let dir = state.join("in-use");
        let mut journal = Journal::create(&state, "live", "test").unwrap();
        journal.record(Change::Dir { path: dir.clone() }).unwrap();
        fs::create_dir(&dir).unwrap();
        assert!(stale_journals(&state).is_empty());
        let reports = cleanup_stale(&state).unwrap();
        assert!(reports[0].running);
        assert!(dir.exists());
        drop(journal);
        assert!(!dir.exists());
        fs::remove_dir_all(&state).unwrap();
    }
}
