//! `--enable-gc-log DIR`: GC and safepoint logging turned on at run time in JVMs that log
//! neither, through the attach mechanism (`VM.log`), and off again when the exporter exits.
//!
//! Attaching can take seconds (a JVM in a long safepoint) or never answer (a process that
//! only looks like a JVM), so it never runs in a scrape: a scrape asks for a JVM's log and
//! reads what is already known, one worker thread attaches under a time budget per cycle.
//! Every output is journaled before it is turned on ([`crate::journal`]): exit turns them
//! all off under one deadline, and an exporter that was killed has its leftovers turned
//! off by the next one.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use pauselab_host::trust::PrivateDir;
use pauselab_hsperf::attach::{jcmd, AttachOptions};
use pauselab_hsperf::JvmProcess;

use crate::journal::{Entry, Journal};

/// Files per JVM and their size: 32 MiB at most hold days of `gc=info,safepoint=info`.
const FILE_COUNT: u32 = 4;
const FILE_SIZE: &str = "8m";
/// A JVM that could not be attached to is tried again after this long; so is turning off
/// an output a killed exporter left on.
const RETRY: Duration = Duration::from_secs(60);
/// One attach gives up after this long.
const ATTACH_TIMEOUT: Duration = Duration::from_secs(3);
/// Attaching to turn logs on stops for this cycle once it took this long; the JVMs not
/// reached wait for the next cycle.
const CYCLE_BUDGET: Duration = Duration::from_secs(5);
/// Turning every output off, at exit and at start, ends within this long, whatever the
/// JVMs do. With an attach under way when the signal comes (at most [`ATTACH_TIMEOUT`]),
/// exit takes at most 10 s: far inside systemd's default stop limit of 90 s.
pub(crate) const UNDO_DEADLINE: Duration = Duration::from_secs(7);
/// Attaches run in parallel when undoing, so that a few JVMs that never answer cannot use
/// up the deadline of all the others.
const UNDO_THREADS: usize = 8;
/// How often the worker looks at the stop flag while it has nothing to do.
const IDLE_WAKE: Duration = Duration::from_millis(100);

/// GC logs turned on (and to turn off): shared by the scrapes and the attach worker.
#[derive(Debug)]
pub(crate) struct GcLogControl {
    /// `DIR` of `--enable-gc-log`; None: nothing is turned on (leftovers are turned off).
    dir: Option<PathBuf>,
    shared: Mutex<Shared>,
    wake: Condvar,
}

#[derive(Debug, Default)]
struct Shared {
    /// JVMs a scrape found without a log, for the worker to turn one on, by pid.
    wanted: BTreeMap<u32, Candidate>,
    enabled: HashMap<u32, Enabled>,
    failed: HashMap<u32, Instant>,
    /// Outputs an exporter that was killed left on, not turned off yet.
    left_on: Vec<Entry>,
    /// Outputs asked for whose JVM did not answer: they may be on.
    unconfirmed: Vec<Entry>,
    journal: Option<Journal>,
    stopping: bool,
}

#[derive(Debug, Clone)]
struct Candidate {
    jvm: JvmProcess,
    start_ticks: u64,
}

#[derive(Debug)]
struct Enabled {
    entry: Entry,
    /// `DIR/<pid>`, removed when the JVM exits.
    dir: PathBuf,
    log: NewLog,
}

/// A log turned on: where the JVM writes it (as it sees it, and here).
#[derive(Debug, Clone)]
pub(crate) struct NewLog {
    pub shown: String,
    pub on_host: PathBuf,
}

/// Why turning a log on failed.
struct EnableError {
    reason: String,
    /// The request reached the JVM but no answer came: the output may be on.
    maybe_on: bool,
}

impl GcLogControl {
    pub(crate) fn new(dir: Option<PathBuf>) -> GcLogControl {
        GcLogControl {
            dir,
            shared: Mutex::new(Shared::default()),
            wake: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Journals from now on in `state_dir`, taking over what stopped exporters left on
    /// (turned off by [`GcLogControl::run`]).
    pub(crate) fn open_journal(&self, state_dir: &Path) -> Result<(), String> {
        let (journal, left_on) = Journal::open(state_dir)?;
        let mut shared = self.lock();
        shared.journal = Some(journal);
        shared.left_on = left_on;
        Ok(())
    }

    /// The log turned on in `jvm`, if there is one yet; else asks the worker to turn one
    /// on (unless that failed less than a minute ago). Never waits for an attach.
    pub(crate) fn log_for(&self, jvm: &JvmProcess, start_ticks: Option<u64>) -> Option<NewLog> {
        self.dir.as_ref()?;
        let start_ticks = start_ticks?;
        let mut shared = self.lock();
        match shared.enabled.get(&jvm.pid) {
            Some(enabled) if enabled.entry.start_ticks == start_ticks => {
                return Some(enabled.log.clone());
            }
            // The pid of a JVM that exited, reused by another one: nothing to turn off.
            Some(_) => {
                if let Some(stale) = shared.enabled.remove(&jvm.pid) {
                    if let Some(journal) = shared.journal.as_mut() {
                        journal.forget(|e| *e == stale.entry);
                    }
                }
            }
            None => {}
        }
        let recently_failed = shared
            .failed
            .get(&jvm.pid)
            .is_some_and(|at| at.elapsed() < RETRY);
        let left_on = shared.left_on.iter().any(|e| e.pid == jvm.pid);
        if !recently_failed && !left_on && !shared.stopping {
            let candidate = Candidate {
                jvm: jvm.clone(),
                start_ticks,
            };
            shared.wanted.insert(jvm.pid, candidate);
            self.wake.notify_one();
        }
        None
    }

    /// Outputs a killed exporter left on that are not turned off yet: (pid, output).
    pub(crate) fn left_on(&self) -> Vec<(u32, String)> {
        let shared = self.lock();
        shared
            .left_on
            .iter()
            .map(|e| (e.pid, e.output.clone()))
            .collect()
    }

    /// Forgets JVMs that exited, removing the directories made for them.
    pub(crate) fn retain(&self, alive: impl Fn(u32) -> bool) {
        let mut shared = self.lock();
        let mut gone = Vec::new();
        shared.enabled.retain(|pid, enabled| {
            let keep = alive(*pid);
            if !keep {
                let _ = fs::remove_dir_all(&enabled.dir);
                gone.push(enabled.entry.clone());
            }
            keep
        });
        shared.failed.retain(|pid, _| alive(*pid));
        shared.wanted.retain(|pid, _| alive(*pid));
        shared.unconfirmed.retain(|e| {
            let keep = alive(e.pid);
            if !keep {
                gone.push(e.clone());
            }
            keep
        });
        if let Some(journal) = shared.journal.as_mut() {
            journal.forget(|e| gone.contains(e));
        }
    }

    /// Asks [`GcLogControl::run`] to undo everything and return.
    pub(crate) fn stop(&self) {
        self.lock().stopping = true;
        self.wake.notify_all();
    }

    /// The attach worker: turns off what killed exporters left on, then turns logs on as
    /// scrapes ask, until `stop` is set (or [`GcLogControl::stop`] is called); then turns
    /// off every output it and they turned on, within [`UNDO_DEADLINE`]. Outputs it could
    /// not turn off stay in the journal for the next exporter.
    pub(crate) fn run(&self, stop: &AtomicBool) {
        let stopped = || stop.load(Ordering::Relaxed) || self.lock().stopping;
        self.undo_left_on(Instant::now() + UNDO_DEADLINE, &stopped);
        let mut last_undo = Instant::now();
        while !stopped() {
            let wanted = {
                let shared = self.lock();
                let (mut shared, _) = self
                    .wake
                    .wait_timeout_while(shared, IDLE_WAKE, |s| s.wanted.is_empty() && !s.stopping)
                    .unwrap_or_else(|p| p.into_inner());
                std::mem::take(&mut shared.wanted)
            };
            self.enable_cycle(wanted, &stopped);
            if last_undo.elapsed() >= RETRY && !self.lock().left_on.is_empty() {
                self.undo_left_on(Instant::now() + CYCLE_BUDGET, &stopped);
                last_undo = Instant::now();
            }
        }
        let deadline = Instant::now() + UNDO_DEADLINE;
        let everything: Vec<Entry> = {
            let mut shared = self.lock();
            shared.stopping = true;
            let enabled = shared.enabled.drain().map(|(_, e)| e.entry);
            let mut all: Vec<Entry> = enabled.collect();
            all.append(&mut shared.left_on);
            all.append(&mut shared.unconfirmed);
            all
        };
        let not_off = turn_off(everything.clone(), deadline, &|| false);
        if !not_off.is_empty() {
            eprintln!(
                "pauselab export: {} GC log output(s) still on at exit (JVMs {}); the journal keeps them for the next start",
                not_off.len(),
                pids(&not_off)
            );
        }
        if let Some(journal) = self.lock().journal.as_mut() {
            journal.forget(|e| everything.contains(e) && !not_off.contains(e));
        }
    }

    /// Turns off the outputs killed exporters left on, within `deadline`; on `stopped`,
    /// what is left waits for the exit, which turns everything off.
    fn undo_left_on(&self, deadline: Instant, stopped: &(dyn Fn() -> bool + Sync)) {
        let left_on = self.lock().left_on.clone();
        if left_on.is_empty() {
            return;
        }
        let not_off = turn_off(left_on.clone(), deadline, stopped);
        for entry in left_on.iter().filter(|e| !not_off.contains(e)) {
            eprintln!(
                "pauselab export: turned off GC log output {} of JVM {}, left on by an exporter that was stopped without undoing it",
                entry.output, entry.pid
            );
        }
        let mut shared = self.lock();
        shared.left_on = not_off.clone();
        if let Some(journal) = shared.journal.as_mut() {
            journal.forget(|e| left_on.contains(e) && !not_off.contains(e));
        }
    }

    /// Turns logs on in `wanted`, one user's JVMs in turn with the others' (so that one
    /// user's many JVMs cannot keep another's waiting), until the cycle's budget is spent.
    fn enable_cycle(&self, wanted: BTreeMap<u32, Candidate>, stopped: &(dyn Fn() -> bool + Sync)) {
        let Some(dir) = self.dir.as_deref() else {
            return;
        };
        let budget_end = Instant::now() + CYCLE_BUDGET;
        let mut queue = fair_order(wanted.into_values());
        while let Some(candidate) = queue.pop_front() {
            let left = budget_end.saturating_duration_since(Instant::now());
            if left.is_zero() || stopped() {
                // Asked for again by the next scrape that still sees them without a log.
                return;
            }
            let pid = candidate.jvm.pid;
            // Asked for again while this cycle ran, and done since.
            if self.lock().enabled.contains_key(&pid) {
                continue;
            }
            let output = format!("file={}", log_file(dir, pid).display());
            let entry = Entry {
                pid,
                start_ticks: candidate.start_ticks,
                output,
            };
            if let Some(journal) = self.lock().journal.as_mut() {
                if let Err(reason) = journal.record(entry.clone()) {
                    self.failed(pid, &format!("cannot journal it: {reason}"));
                    continue;
                }
            }
            let result = try_enable(&candidate.jvm, dir, &entry.output, left.min(ATTACH_TIMEOUT));
            let mut shared = self.lock();
            match result {
                Ok(log) => {
                    shared.failed.remove(&pid);
                    let dir = dir.join(pid.to_string());
                    shared.enabled.insert(pid, Enabled { entry, dir, log });
                }
                Err(error) => {
                    if error.maybe_on {
                        // Turned off with the others at exit, to be sure.
                        shared.unconfirmed.push(entry);
                    } else if let Some(journal) = shared.journal.as_mut() {
                        journal.forget(|e| *e == entry);
                    }
                    drop(shared);
                    self.failed(pid, &error.reason);
                }
            }
        }
    }

    fn failed(&self, pid: u32, reason: &str) {
        eprintln!("pauselab export: cannot turn on the GC log of JVM {pid}: {reason}");
        self.lock().failed.insert(pid, Instant::now());
    }
}

/// `DIR/<pid>/gc.log`.
fn log_file(dir: &Path, pid: u32) -> PathBuf {
    dir.join(pid.to_string()).join("gc.log")
}

/// The candidates, taking one of each user's in turn.
fn fair_order(candidates: impl Iterator<Item = Candidate>) -> VecDeque<Candidate> {
    let mut by_uid: BTreeMap<u32, VecDeque<Candidate>> = BTreeMap::new();
    for candidate in candidates {
        by_uid
            .entry(candidate.jvm.uid)
            .or_default()
            .push_back(candidate);
    }
    let mut order = VecDeque::new();
    while !by_uid.is_empty() {
        by_uid.retain(|_, queue| {
            order.extend(queue.pop_front());
            !queue.is_empty()
        });
    }
    order
}

fn pids(entries: &[Entry]) -> String {
    let pids: Vec<String> = entries.iter().map(|e| e.pid.to_string()).collect();
    pids.join(", ")
}

fn try_enable(
    jvm: &JvmProcess,
    dir: &Path,
    output: &str,
    timeout: Duration,
) -> Result<NewLog, EnableError> {
    let refused = |reason: String| EnableError {
        reason,
        maybe_on: false,
    };
    let pid = jvm.pid;
    if !same_mount_namespace(pid) {
        return Err(refused(
            "it runs in another mount namespace (a container): DIR would be a directory of its own file system"
                .to_string(),
        ));
    }
    let dir = create_owned_dir(dir, jvm.uid, pid).map_err(refused)?;
    let file = dir.join("gc.log");
    let command = format!(
        "VM.log output={output} what=gc=info,safepoint=info decorators=uptime,level,tags \
         output_options=filecount={FILE_COUNT},filesize={FILE_SIZE}"
    );
    let options = AttachOptions {
        timeout,
        ..AttachOptions::default()
    };
    let reply = jcmd(pid, &command, options).map_err(|e| EnableError {
        maybe_on: sent_but_unanswered(&e),
        reason: e.to_string(),
    })?;
    let text = String::from_utf8_lossy(&reply.output);
    if reply.status != 0 || text.to_ascii_lowercase().contains("error") {
        let _ = fs::remove_dir_all(&dir);
        return Err(refused(format!("VM.log answered: {}", text.trim())));
    }
    Ok(NewLog {
        shown: file.display().to_string(),
        on_host: file,
    })
}

/// Whether an attach failed after its request reached the JVM (which may then have done
/// it), rather than before (no attach socket, no permission, not a JVM).
fn sent_but_unanswered(error: &pauselab_hsperf::Error) -> bool {
    matches!(error, pauselab_hsperf::Error::Attach { reason, .. } if reason.contains("waiting for the JVM's reply"))
}

/// Turns off every output of `entries` whose JVM still runs, in parallel, giving up at
/// `deadline` or once `give_up` says so. Returns those that are still on (or may be).
fn turn_off(
    entries: Vec<Entry>,
    deadline: Instant,
    give_up: &(dyn Fn() -> bool + Sync),
) -> Vec<Entry> {
    let threads = entries.len().min(UNDO_THREADS);
    let queue = Mutex::new(entries.into_iter());
    let not_off = Mutex::new(Vec::new());
    let next = || queue.lock().unwrap_or_else(|p| p.into_inner()).next();
    let keep = |entry: Entry| {
        not_off
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(entry)
    };
    let work = || {
        while let Some(entry) = next() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || give_up() {
                keep(entry);
                continue;
            }
            if let Err(e) = turn_off_one(&entry, left.min(ATTACH_TIMEOUT)) {
                eprintln!(
                    "pauselab export: cannot turn off the GC log of JVM {}: {e}",
                    entry.pid
                );
                keep(entry);
            }
        }
    };
    std::thread::scope(|scope| {
        for n in 1..threads {
            let _ = std::thread::Builder::new()
                .name(format!("export-undo-{n}"))
                .spawn_scoped(scope, work);
        }
        work();
    });
    not_off.into_inner().unwrap_or_else(|p| p.into_inner())
}

/// Turns off one output; a JVM that exited has nothing to turn off.
fn turn_off_one(entry: &Entry, timeout: Duration) -> Result<(), pauselab_hsperf::Error> {
    if !entry.jvm_runs() {
        return Ok(());
    }
    // `what=all=off` removes this one output and leaves the JVM's others alone.
    let command = format!("VM.log output={} what=all=off", entry.output);
    let options = AttachOptions {
        timeout,
        ..AttachOptions::default()
    };
    match jcmd(entry.pid, &command, options) {
        Ok(_) | Err(pauselab_hsperf::Error::NoProcess { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

fn same_mount_namespace(pid: u32) -> bool {
    let ours = fs::read_link("/proc/self/ns/mnt");
    let theirs = fs::read_link(format!("/proc/{pid}/ns/mnt"));
    matches!((ours, theirs), (Ok(a), Ok(b)) if a == b)
}

/// The directory of `--enable-gc-log` as an absolute path (the JVMs resolve it, each from
/// its own working directory), created if missing. pauselab creates directories for other
/// users in it: one that others can write, or reached through another user's link, is
/// refused now rather than at the first JVM.
pub fn gc_log_root(dir: &Path) -> Result<PathBuf, crate::Error> {
    let refused = crate::Error::GcLogRoot;
    let absolute =
        std::path::absolute(dir).map_err(|e| refused(format!("{}: {e}", dir.display())))?;
    let private = PrivateDir::open_or_create(&absolute).map_err(|e| refused(e.to_string()))?;
    Ok(private.path().to_path_buf())
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

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn the_gc_log_root_is_created_and_refused_where_others_can_write() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path().join("logs");
        assert_eq!(gc_log_root(&root).unwrap(), root);
        let mode = fs::metadata(&root).unwrap().permissions().mode();
        assert_eq!(mode & 0o022, 0, "mode {mode:o}");
        let message = gc_log_root(Path::new("/tmp")).unwrap_err().to_string();
        assert!(message.starts_with("--enable-gc-log /tmp"), "{message}");
        let message = gc_log_root(Path::new("")).unwrap_err().to_string();
        assert!(message.starts_with("--enable-gc-log : "), "{message}");
    }
}
