//! Process and namespace plumbing from /proc: status, maps, cmdline, liveness.

use std::fs::{self, File};
use std::io::{self, ErrorKind};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The fields of `/proc/<pid>/status` this crate needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStatus {
    /// Effective uid (the owner of the hsperfdata file, the peer the JVM checks on attach).
    pub uid: u32,
    /// Effective gid.
    pub gid: u32,
    /// Supplementary groups.
    pub groups: Vec<u32>,
    /// The pid inside the process's innermost pid namespace (equal to the pid on the host
    /// when the process is not in a container).
    pub ns_pid: u32,
    /// Signals with a handler installed (`SigCgt`).
    pub sig_caught: u64,
    /// Signals ignored (`SigIgn`).
    pub sig_ignored: u64,
}

impl ProcStatus {
    /// True if SIGQUIT has a handler and is not ignored: the HotSpot attach listener's
    /// precondition. Anything else would be killed or disturbed by SIGQUIT.
    pub fn catches_sigquit(&self) -> bool {
        let bit = 1u64 << (libc::SIGQUIT - 1);
        self.sig_caught & bit != 0 && self.sig_ignored & bit == 0
    }
}

pub(crate) fn proc_path(pid: u32, rest: &str) -> PathBuf {
    PathBuf::from(format!("/proc/{pid}/{rest}"))
}

/// Maps an I/O error on a /proc file of `pid` to a crate error.
pub(crate) fn proc_error(pid: u32, path: &Path, err: io::Error) -> Error {
    match err.kind() {
        ErrorKind::NotFound => Error::NoProcess { pid },
        ErrorKind::PermissionDenied => Error::Permission {
            pid,
            uid: read_status(pid).map(|s| s.uid).unwrap_or(0),
            what: path.display().to_string(),
        },
        _ if err.raw_os_error() == Some(libc::ESRCH) => Error::NoProcess { pid },
        _ => Error::io(path, err),
    }
}

/// Reads `/proc/<pid>/status`.
pub fn read_status(pid: u32) -> Result<ProcStatus> {
    let path = proc_path(pid, "status");
    let text = fs::read_to_string(&path).map_err(|e| match e.kind() {
        ErrorKind::NotFound => Error::NoProcess { pid },
        _ => Error::io(&path, e),
    })?;
    let mut status = ProcStatus {
        uid: 0,
        gid: 0,
        groups: Vec::new(),
        ns_pid: pid,
        sig_caught: 0,
        sig_ignored: 0,
    };
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let mut fields = value.split_whitespace();
        match key {
            "Uid" => status.uid = fields.nth(1).and_then(|v| v.parse().ok()).unwrap_or(0),
            "Gid" => status.gid = fields.nth(1).and_then(|v| v.parse().ok()).unwrap_or(0),
            "Groups" => status.groups = fields.filter_map(|v| v.parse().ok()).collect(),
            "NSpid" => status.ns_pid = fields.last().and_then(|v| v.parse().ok()).unwrap_or(pid),
            "SigCgt" => status.sig_caught = u64::from_str_radix(value.trim(), 16).unwrap_or(0),
            "SigIgn" => status.sig_ignored = u64::from_str_radix(value.trim(), 16).unwrap_or(0),
            _ => {}
        }
    }
    Ok(status)
}

/// What `/proc/<pid>/maps` says about HotSpot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JvmMaps {
    /// Path of libjvm.so as the process sees it (inside its mount namespace).
    pub libjvm: Option<PathBuf>,
    /// Address at which libjvm.so's file offset 0 is mapped.
    pub libjvm_base: u64,
    /// Start and end address of that mapping (the name of its `/proc/<pid>/map_files` entry).
    pub libjvm_range: (u64, u64),
    /// Path of the mapped hsperfdata file as the process sees it, if any.
    pub perf_file: Option<PathBuf>,
    /// True if that file was deleted while mapped.
    pub perf_file_deleted: bool,
}

/// Scans `/proc/<pid>/maps` for libjvm.so and a mapped hsperfdata file.
pub fn read_maps(pid: u32) -> Result<JvmMaps> {
    let path = proc_path(pid, "maps");
    let text = fs::read_to_string(&path).map_err(|e| proc_error(pid, &path, e))?;
    Ok(parse_maps(&text))
}

pub(crate) fn parse_maps(text: &str) -> JvmMaps {
    let mut maps = JvmMaps::default();
    for line in text.lines() {
        // address perms offset dev inode path
        let mut fields = line.splitn(6, ' ');
        let (Some(range), _, Some(offset), _, _, Some(rest)) = (
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
        ) else {
            continue;
        };
        let file = rest.trim_start();
        if !file.starts_with('/') {
            continue;
        }
        let (file, deleted) = match file.strip_suffix(" (deleted)") {
            Some(f) => (f, true),
            None => (file, false),
        };
        let base_name = file.rsplit('/').next().unwrap_or("");
        if base_name == "libjvm.so" && maps.libjvm.is_none() {
            let bounds = range.split_once('-').and_then(|(start, end)| {
                Some((
                    u64::from_str_radix(start, 16).ok()?,
                    u64::from_str_radix(end, 16).ok()?,
                ))
            });
            let offset = u64::from_str_radix(offset, 16).ok();
            if let (Some((start, end)), Some(0)) = (bounds, offset) {
                maps.libjvm = Some(PathBuf::from(file));
                maps.libjvm_base = start;
                maps.libjvm_range = (start, end);
            }
        } else if maps.perf_file.is_none()
            && file
                .rsplit('/')
                .nth(1)
                .is_some_and(|dir| dir.starts_with("hsperfdata_"))
        {
            maps.perf_file = Some(PathBuf::from(file));
            maps.perf_file_deleted = deleted;
        }
    }
    maps
}

/// The command line of a process, split at NULs.
pub fn read_cmdline(pid: u32) -> Result<Vec<String>> {
    read_nul_separated(pid, "cmdline")
}

/// The environment of a process (`NAME=value` each), split at NULs.
pub fn read_environ(pid: u32) -> Result<Vec<String>> {
    read_nul_separated(pid, "environ")
}

fn read_nul_separated(pid: u32, file: &str) -> Result<Vec<String>> {
    let path = proc_path(pid, file);
    let bytes = fs::read(&path).map_err(|e| proc_error(pid, &path, e))?;
    Ok(bytes
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect())
}

/// Seconds since the process started (from `/proc/<pid>/stat` and `/proc/uptime`).
pub fn uptime_seconds(pid: u32) -> Option<f64> {
    let stat = fs::read_to_string(proc_path(pid, "stat")).ok()?;
    // Field 22 (starttime), counted after the parenthesised command name.
    let after = stat.get(stat.rfind(')')? + 2..)?;
    let start_ticks: f64 = after.split(' ').nth(19)?.parse().ok()?;
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let host_uptime: f64 = fs::read_to_string("/proc/uptime")
        .ok()?
        .split(' ')
        .next()?
        .parse()
        .ok()?;
    (hz > 0.0).then(|| (host_uptime - start_ticks / hz).max(0.0))
}

/// Largest passwd file read: a container's is written by whoever controls it.
const MAX_PASSWD_BYTES: u64 = 4 << 20;

/// The user name of `uid` as the process sees it (its own /etc/passwd in a container).
pub fn user_name(pid: u32, uid: u32) -> Option<String> {
    let candidates = [
        proc_path(pid, "root/etc/passwd"),
        PathBuf::from("/etc/passwd"),
    ];
    candidates.iter().find_map(|p| {
        // A container's /etc/passwd may be a link (resolved from this host's root, not
        // the container's), a FIFO or huge: none of those is read.
        let file = open_regular_file(p, Follow::NoLinks).ok()?;
        let mut text = String::new();
        io::Read::read_to_string(&mut io::Read::take(file, MAX_PASSWD_BYTES), &mut text).ok()?;
        text.lines().find_map(|line| {
            let mut f = line.split(':');
            let name = f.next()?;
            let id: u32 = f.nth(1)?.parse().ok()?;
            (id == uid).then(|| name.to_string())
        })
    })
}

/// A handle on a process that tells reliably whether *that* process is still alive,
/// even if its pid is reused later.
#[derive(Debug)]
pub struct ProcessHandle {
    pid: u32,
    fd: OwnedFd,
}

impl ProcessHandle {
    /// Opens a pidfd on `pid`.
    pub fn open(pid: u32) -> Result<ProcessHandle> {
        if pid == 0 || pid > i32::MAX as u32 {
            return Err(Error::NoProcess { pid });
        }
        // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
        if fd < 0 {
            let err = io::Error::last_os_error();
            return Err(match err.raw_os_error() {
                Some(libc::ESRCH) => Error::NoProcess { pid },
                _ => Error::io(proc_path(pid, ""), err),
            });
        }
        // SAFETY: fd is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        Ok(ProcessHandle { pid, fd })
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// True while the process has not exited (a stopped process is alive).
    pub fn is_alive(&self) -> bool {
        let mut pfd = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, zero timeout.
        let n = unsafe { libc::poll(&mut pfd, 1, 0) };
        n == 0
    }

    /// `Ok` if alive, else the "no such process" error.
    pub fn check_alive(&self) -> Result<()> {
        if self.is_alive() {
            Ok(())
        } else {
            Err(Error::NoProcess { pid: self.pid })
        }
    }
}

impl AsRawFd for ProcessHandle {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.fd.as_raw_fd()
    }
}

/// Path of a file as the process sees it, reached from the host through
/// `/proc/<pid>/root` (works for containers and private mount namespaces).
pub(crate) fn in_process_root(pid: u32, path: &Path) -> PathBuf {
    let relative = path.strip_prefix("/").unwrap_or(path);
    proc_path(pid, "root").join(relative)
}

/// Whether opening a path may follow a symbolic link in its last component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Follow {
    /// Follow it (the path names a link on purpose, e.g. `/proc/<pid>/map_files/...`).
    Links,
    /// Refuse it (`ELOOP`): the path is in a directory another user may write.
    NoLinks,
}

/// Opens a file that another user may control, for reading only: never blocks on a FIFO
/// or device planted under that name, and fails unless it is a regular file.
pub(crate) fn open_regular_file(path: &Path, follow: Follow) -> io::Result<File> {
    pauselab_pause::input::open_regular_file(path, follow == Follow::Links)
}
