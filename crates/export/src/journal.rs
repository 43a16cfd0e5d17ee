//! The journal of GC log outputs turned on in JVMs (`--enable-gc-log`): one small file per
//! running exporter in a state directory only root can write (`/run/pauselab` by default),
//! written before each attach and rewritten as outputs are turned off. An exporter that is
//! killed (SIGKILL, the OOM killer) leaves its file behind; the next one to start turns off
//! what it names in JVMs that still run.
//!
//! File `export-<exporter pid>.journal`:
//! ```text
//! pauselab export journal 1
//! exporter <pid> <start time in clock ticks>
//! <jvm pid> <jvm start time in clock ticks> <VM.log output, e.g. file=/var/log/jvm/123/gc.log>
//! ```
//! The start times tell a running exporter or JVM from a later process with the same pid.

use std::ffi::CString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use crate::discovery;

const MAGIC: &str = "pauselab export journal 1";
/// A journal is a few lines per JVM: anything far larger was not written by an exporter.
const MAX_JOURNAL_BYTES: u64 = 1 << 20;

/// One output turned on in one JVM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub pid: u32,
    /// Start time of the JVM: the entry is void once the pid belongs to another process.
    pub start_ticks: u64,
    /// The `VM.log` output name, which turning it off must repeat.
    pub output: String,
}

impl Entry {
    /// Whether the JVM the output was turned on in still runs.
    pub(crate) fn jvm_runs(&self) -> bool {
        discovery::start_ticks(self.pid) == Some(self.start_ticks)
    }
}

/// This exporter's journal file.
#[derive(Debug)]
pub(crate) struct Journal {
    /// Opened and checked for each change, every file opened beneath that descriptor (not
    /// kept open: the exporter's descriptors are for connections).
    state_dir: PathBuf,
    name: String,
    header: String,
    entries: Vec<Entry>,
}

impl Journal {
    /// Opens `state_dir` (created 0700 when missing; refused unless owned by this user and
    /// writable by nobody else) and takes over the journals of exporters that no longer run.
    /// Returns the journal and the outputs those exporters left on.
    pub(crate) fn open(state_dir: &Path) -> Result<(Journal, Vec<Entry>), String> {
        let error = |e: std::io::Error| format!("{}: {e}", state_dir.display());
        match std::fs::DirBuilder::new().mode(0o700).create(state_dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(error(e)),
        }
        let pid = std::process::id();
        let ticks = discovery::start_ticks(pid).unwrap_or(0);
        let mut journal = Journal {
            state_dir: state_dir.to_path_buf(),
            name: format!("export-{pid}.journal"),
            header: format!("{MAGIC}\nexporter {pid} {ticks}\n"),
            entries: Vec::new(),
        };
        let mut left = Vec::new();
        let mut stale = Vec::new();
        let others: Vec<String> = journal
            .list()?
            .into_iter()
            .filter(|name| *name != journal.name)
            .collect();
        // Opened only when there is something to read: an exporter at its open file limit
        // still starts when there is not.
        if !others.is_empty() {
            let dir = journal.open_dir()?;
            for name in others {
                match read(&dir, &name) {
                    Some(Previous::Running) => {}
                    Some(Previous::Stopped(entries)) => {
                        left.extend(entries.into_iter().filter(Entry::jvm_runs));
                        stale.push(name);
                    }
                    None => eprintln!(
                        "pauselab export: {}/{name} is not an exporter's journal; left alone",
                        state_dir.display()
                    ),
                }
            }
        }
        // Ours first, so that a kill between here and the unlink loses nothing.
        journal.entries = left.clone();
        journal.save()?;
        if !stale.is_empty() {
            let dir = journal.open_dir()?;
            for name in stale {
                let _ = unlink_beneath(&dir, &name);
            }
        }
        Ok((journal, left))
    }

    /// Records `entry` before its output is turned on.
    pub(crate) fn record(&mut self, entry: Entry) -> Result<(), String> {
        if entry.output.contains('\n') {
            return Err(format!(
                "{}: a line feed in the output name cannot be journaled",
                entry.output
            ));
        }
        self.entries.push(entry);
        self.save()
    }

    /// Forgets the outputs of `pid` whose output is turned off or whose JVM is gone.
    pub(crate) fn forget(&mut self, gone: impl Fn(&Entry) -> bool) {
        let before = self.entries.len();
        self.entries.retain(|e| !gone(e));
        if self.entries.len() != before {
            if let Err(e) = self.save() {
                eprintln!("pauselab export: cannot update the journal: {e}");
            }
        }
    }

    /// Writes the entries (a new file renamed over the old one), or removes the file when
    /// nothing is left to undo.
    fn save(&self) -> Result<(), String> {
        let path = |name: &str| format!("{}/{name}", self.state_dir.display());
        let dir = self.open_dir()?;
        if self.entries.is_empty() {
            return match unlink_beneath(&dir, &self.name) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(format!("{}: {e}", path(&self.name))),
            };
        }
        let mut text = self.header.clone();
        for e in &self.entries {
            text.push_str(&format!("{} {} {}\n", e.pid, e.start_ticks, e.output));
        }
        let temporary = format!(".{}.new", self.name);
        let _ = unlink_beneath(&dir, &temporary);
        let written = open_beneath(Some(&dir), temporary.as_bytes(), CREATE)
            .map(File::from)
            .and_then(|mut file| file.write_all(text.as_bytes()))
            .and_then(|()| rename_beneath(&dir, &temporary, &self.name));
        written.map_err(|e| format!("{}: {e}", path(&self.name)))
    }

    /// The state directory, refused unless owned by this user and writable by nobody else.
    fn open_dir(&self) -> Result<OwnedFd, String> {
        let at = |why: String| format!("{}: {why}", self.state_dir.display());
        let dir = open_beneath(None, self.state_dir.as_os_str().as_bytes(), DIRECTORY)
            .map_err(|e| at(e.to_string()))?;
        check_private(&dir).map_err(at)?;
        Ok(dir)
    }

    /// The journals in the state directory (checked first, then listed by its path: one
    /// descriptor at a time).
    fn list(&self) -> Result<Vec<String>, String> {
        drop(self.open_dir()?);
        let entries = std::fs::read_dir(&self.state_dir)
            .map_err(|e| format!("{}: {e}", self.state_dir.display()))?;
        Ok(entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|name| name.starts_with("export-") && name.ends_with(".journal"))
            .collect())
    }
}

/// Reads another exporter's journal; None if it is not one.
fn read(dir: &OwnedFd, name: &str) -> Option<Previous> {
    let file = File::from(open_beneath(Some(dir), name.as_bytes(), READ).ok()?);
    let mut text = String::new();
    file.take(MAX_JOURNAL_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    parse(&text)
}

/// What another exporter's journal says.
#[derive(Debug, PartialEq)]
enum Previous {
    /// Its exporter still runs: its outputs are its own business.
    Running,
    /// Its exporter stopped without turning these off.
    Stopped(Vec<Entry>),
}

fn parse(text: &str) -> Option<Previous> {
    let mut lines = text.lines();
    if lines.next()? != MAGIC {
        return None;
    }
    let exporter = lines.next()?.strip_prefix("exporter ")?;
    let (pid, ticks) = exporter.split_once(' ')?;
    let (pid, ticks): (u32, u64) = (pid.parse().ok()?, ticks.parse().ok()?);
    if pid != std::process::id() && discovery::start_ticks(pid) == Some(ticks) {
        return Some(Previous::Running);
    }
    let entries = lines
        .filter_map(|line| {
            let mut fields = line.splitn(3, ' ');
            Some(Entry {
                pid: fields.next()?.parse().ok()?,
                start_ticks: fields.next()?.parse().ok()?,
                output: fields.next()?.to_string(),
            })
        })
        .collect();
    Some(Previous::Stopped(entries))
}

const DIRECTORY: libc::c_int = libc::O_RDONLY | libc::O_DIRECTORY;
const READ: libc::c_int = libc::O_RDONLY;
const CREATE: libc::c_int = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;

/// `openat` without following a symbolic link in the last component; beneath `dir`, or
/// the path as given when `dir` is None.
fn open_beneath(
    dir: Option<&OwnedFd>,
    name: &[u8],
    flags: libc::c_int,
) -> std::io::Result<OwnedFd> {
    let name = CString::new(name).map_err(|_| std::io::ErrorKind::InvalidInput)?;
    let at = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: a valid C string; the descriptor returned is owned here.
    let fd = unsafe { libc::openat(at, name.as_ptr(), flags, 0o600 as libc::c_uint) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just returned by openat and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn unlink_beneath(dir: &OwnedFd, name: &str) -> std::io::Result<()> {
    let name = CString::new(name).map_err(|_| std::io::ErrorKind::InvalidInput)?;
    // SAFETY: a valid descriptor and C string.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn rename_beneath(dir: &OwnedFd, from: &str, to: &str) -> std::io::Result<()> {
    let (from, to) = (
        CString::new(from).map_err(|_| std::io::ErrorKind::InvalidInput)?,
        CString::new(to).map_err(|_| std::io::ErrorKind::InvalidInput)?,
    );
    let fd = dir.as_raw_fd();
    // SAFETY: a valid descriptor and C strings.
    if unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The journal decides what root attaches to: nobody else may write where it lives.
fn check_private(dir: &OwnedFd) -> Result<(), String> {
    // SAFETY: fstat on a valid descriptor into a zeroed struct it fills.
    let (st, euid) = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(dir.as_raw_fd(), &mut st) != 0 {
            return Err(std::io::Error::last_os_error().to_string());
        }
        (st, libc::geteuid())
    };
    if st.st_uid != euid {
        return Err(format!(
            "owned by uid {}, not by this exporter's uid {euid}: remove it or choose another --state-dir",
            st.st_uid
        ));
    }
    if st.st_mode & 0o022 != 0 {
        return Err(format!(
            "writable by group or others (mode {:o}): make it 0700 or choose another --state-dir",
            st.st_mode & 0o7777
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("pauselab-journal-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn own_entry(output: &str) -> Entry {
        let pid = std::process::id();
        Entry {
            pid,
            start_ticks: discovery::start_ticks(pid).unwrap(),
            output: output.to_string(),
        }
    }

    #[test]
    fn a_stopped_exporters_journal_is_taken_over_and_a_running_ones_left_alone() {
        let dir = scratch("takeover");
        std::fs::create_dir(&dir).unwrap();
        let me = own_entry("file=/x/1/gc.log");
        // pid 1 runs, but not since tick 0: that exporter stopped.
        std::fs::write(
            dir.join("export-1.journal"),
            format!(
                "{MAGIC}\nexporter 1 0\n{} {} {}\n2 0 file=/gone\nnonsense\n",
                me.pid, me.start_ticks, me.output
            ),
        )
        .unwrap();
        let init_ticks = discovery::start_ticks(1).unwrap();
        let running = format!(
            "{MAGIC}\nexporter 1 {init_ticks}\n{} {} file=/y\n",
            me.pid, me.start_ticks
        );
        std::fs::write(dir.join("export-2.journal"), running).unwrap();
        std::fs::write(dir.join("export-3.journal"), "something else\n").unwrap();

        let (mut journal, left) = Journal::open(&dir).unwrap();
        // Only the entry whose JVM still runs (this process) is left to undo.
        assert_eq!(left, vec![me.clone()]);
        assert!(!dir.join("export-1.journal").exists());
        assert!(dir.join("export-2.journal").exists());
        assert!(dir.join("export-3.journal").exists());
        let ours = dir.join(format!("export-{}.journal", std::process::id()));
        let text = std::fs::read_to_string(&ours).unwrap();
        assert!(text.ends_with(&format!("{} {} file=/x/1/gc.log\n", me.pid, me.start_ticks)));

        journal.record(own_entry("file=/z")).unwrap();
        assert!(std::fs::read_to_string(&ours)
            .unwrap()
            .contains(" file=/z\n"));
        assert!(journal.record(own_entry("file=/a\nb")).is_err());
        journal.forget(|_| true);
        assert!(!ours.exists(), "an empty journal is removed");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_state_directory_others_can_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("shared");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let error = Journal::open(&dir).unwrap_err();
        assert!(error.contains("writable by group or others"), "{error}");
        let link = scratch("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let error = Journal::open(&link).unwrap_err();
        assert!(error.contains(&link.display().to_string()), "{error}");
        std::fs::remove_file(&link).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
