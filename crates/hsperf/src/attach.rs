//! The HotSpot dynamic attach protocol (what `jcmd` uses), natively.
//!
//! 1. The target must be alive and map libjvm.so; nothing is ever sent to another process.
//! 2. As root, this thread's effective uid, gid and supplementary groups switch to the
//!    JVM's (it checks its peer's credentials, a container's user namespace would not map
//!    our root, and every file operation below then has only the JVM user's rights).
//! 3. The socket is `<tmp>/.java_pid<ns pid>`, `<tmp>` reached through `/proc/<pid>/root`
//!    so containers and private mount namespaces work without entering them. It must be a
//!    socket (not a link), and the process answering on it must be the JVM itself.
//! 4. No socket yet: only if SIGQUIT is caught and not ignored (a HotSpot JVM past start-up;
//!    not one with -Xrs or -XX:+DisableAttachMechanism), create `.attach_pid<ns pid>`
//!    exclusively (never through a link) in a directory the JVM's user or root owns,
//!    signal the JVM through a pidfd (no pid-reuse race), wait for the socket.
//! 5. Protocol 1 (`1\0cmd\0a1\0a2\0a3\0`) when the request fits its limits, else protocol 2
//!    (`2\0<size>\0cmd\0args…\0`, JDK 24+) after asking the JVM with `getversion`.
//!
//! Reply: a decimal status line, then text until the JVM closes the connection, at most
//! [`AttachOptions::max_reply`] bytes and within the timeout.

use std::fs;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::fcntl::{open, openat, OFlag};
use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
use nix::sys::stat::{fstat, fstatat, FileStat, Mode, SFlag};
use nix::unistd::{unlinkat, UnlinkatFlags};

use crate::error::{Error, Result};
use crate::process::{self, ProcStatus, ProcessHandle};

/// Protocol 1 limits: three arguments of at most 1024 bytes each.
const V1_MAX_ARGS: usize = 3;
const V1_MAX_ARG_LEN: usize = 1024;

/// Which protocol version to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// Version 1 when the request fits, else version 2 if the JVM supports it.
    #[default]
    Auto,
    V1,
    V2,
}

/// The JVM's answer to an attach operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The status line: 0 on success.
    pub status: i32,
    /// The text after the status line, as the JVM sent it.
    pub output: Vec<u8>,
}

/// Options of an attach.
#[derive(Debug, Clone, Copy)]
pub struct AttachOptions {
    /// Upper bound for the whole operation (readiness wait, connect, reply).
    pub timeout: Duration,
    pub protocol: Protocol,
    /// Largest reply accepted, in bytes; a longer one is an error (and is not returned).
    pub max_reply: usize,
}

/// Default [`AttachOptions::max_reply`]: far above any diagnostic command's output (a
/// thread dump of 10,000 threads is a few MiB), far below what would hurt this host.
pub const DEFAULT_MAX_REPLY: usize = 16 << 20;

impl Default for AttachOptions {
    fn default() -> Self {
        AttachOptions {
            timeout: Duration::from_secs(10),
            protocol: Protocol::Auto,
            max_reply: DEFAULT_MAX_REPLY,
        }
    }
}

/// Runs a diagnostic command line (`"VM.version"`, `"GC.heap_info"`, `"Thread.print -l"`)
/// like `jcmd PID ...`.
pub fn jcmd(pid: u32, command_line: &str, options: AttachOptions) -> Result<Reply> {
    execute(pid, "jcmd", &[command_line], options)
}

/// Runs one attach operation (`jcmd`, `properties`, `threaddump`, `getversion`, ...).
pub fn execute(pid: u32, command: &str, args: &[&str], options: AttachOptions) -> Result<Reply> {
    let now = Instant::now();
    // A timeout too large to represent means no practical limit: a day.
    let deadline = now
        .checked_add(options.timeout)
        .unwrap_or(now + Duration::from_secs(86_400));
    let handle = ProcessHandle::open(pid)?;
    let status = process::read_status(pid)?;
    if process::read_maps(pid)?.libjvm.is_none() {
        return Err(Error::NotJvm { pid });
    }
    let _creds = Credentials::switch_to(pid, &status)?;
    let socket = ensure_listener(pid, &handle, &status, deadline)?;
    let fits_v1 = args.len() <= V1_MAX_ARGS && args.iter().all(|a| a.len() <= V1_MAX_ARG_LEN);
    let version = match options.protocol {
        Protocol::V1 => 1,
        Protocol::V2 => 2,
        Protocol::Auto if fits_v1 => 1,
        Protocol::Auto => {
            let answer = request(pid, &socket, 1, "getversion", &[], deadline, &options)?;
            let supported = String::from_utf8_lossy(&answer.output)
                .trim()
                .parse::<u32>()
                .unwrap_or(1);
            if answer.status != 0 || supported < 2 {
                return Err(attach_err(
                    pid,
                    "the request exceeds protocol 1 limits (3 arguments of 1024 bytes) and this JVM does not speak protocol 2 (JDK 24+)",
                ));
            }
            2
        }
    };
    if version == 1 && !fits_v1 {
        return Err(attach_err(
            pid,
            "the request exceeds protocol 1 limits (3 arguments of 1024 bytes)",
        ));
    }
    request(pid, &socket, version, command, args, deadline, &options)
}

fn attach_err(pid: u32, reason: impl Into<String>) -> Error {
    Error::Attach {
        pid,
        reason: reason.into(),
    }
}

/// Encodes a request of protocol `version`.
fn encode(version: u32, command: &str, args: &[&str]) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(command.as_bytes());
    body.push(0);
    let padded = if version == 1 {
        V1_MAX_ARGS
    } else {
        args.len()
    };
    for i in 0..padded.max(args.len()) {
        body.extend_from_slice(args.get(i).copied().unwrap_or("").as_bytes());
        body.push(0);
    }
    let mut out = format!("{version}\0").into_bytes();
    if version >= 2 {
        out.extend_from_slice(format!("{}\0", body.len()).as_bytes());
    }
    out.extend_from_slice(&body);
    out
}

fn request(
    pid: u32,
    socket: &Path,
    version: u32,
    command: &str,
    args: &[&str],
    deadline: Instant,
    options: &AttachOptions,
) -> Result<Reply> {
    let remaining = || {
        deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| attach_err(pid, "timed out waiting for the JVM's reply; it may be stuck in a safepoint or GC, retry with a longer --timeout"))
    };
    let mut stream = UnixStream::connect(socket)
        .map_err(|e| attach_err(pid, format!("cannot connect to {}: {e}", socket.display())))?;
    check_peer(pid, socket, &stream)?;
    let io_err = |e: std::io::Error| {
        if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) {
            attach_err(pid, "timed out waiting for the JVM's reply; it may be stuck in a safepoint or GC, retry with a longer --timeout")
        } else {
            attach_err(pid, format!("talking to the JVM: {e}"))
        }
    };
    stream
        .set_write_timeout(Some(remaining()?))
        .map_err(io_err)?;
    stream
        .write_all(&encode(version, command, args))
        .map_err(io_err)?;
    let mut reply = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        stream
            .set_read_timeout(Some(remaining()?))
            .map_err(io_err)?;
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) if reply.len() + n > options.max_reply => {
                return Err(attach_err(
                    pid,
                    format!(
                        "reply larger than {}; truncated and discarded (no diagnostic command answers that much: check what listens on {})",
                        human_bytes(options.max_reply),
                        socket.display()
                    ),
                ))
            }
            Ok(n) => reply.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_err(e)),
        }
    }
    let newline = reply.iter().position(|&b| b == b'\n');
    let (line, rest) = match newline {
        Some(i) => (&reply[..i], &reply[i + 1..]),
        None => (&reply[..], &[][..]),
    };
    let status = std::str::from_utf8(line)
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok())
        .ok_or_else(|| {
            attach_err(
                pid,
                format!(
                    "unexpected reply {:?}",
                    String::from_utf8_lossy(&reply[..reply.len().min(80)])
                ),
            )
        })?;
    if status != 0 && rest.iter().all(u8::is_ascii_whitespace) {
        // Status codes without text: 101 is "unsupported protocol version" since JDK 24.
        let why = match status {
            101 => format!("the JVM does not speak attach protocol {version}"),
            other => format!("the JVM answered status {other} without a message"),
        };
        return Err(attach_err(pid, why));
    }
    Ok(Reply {
        status,
        output: rest.to_vec(),
    })
}

/// The JVM's temporary directory as reachable from here.
fn tmp_dir(pid: u32) -> PathBuf {
    let through_root = process::proc_path(pid, "root/tmp");
    if fs::metadata(&through_root).is_ok() {
        through_root
    } else {
        PathBuf::from("/tmp")
    }
}

/// True if `path` is a socket itself (a link planted in its place does not count).
fn is_socket(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket())
}

/// The process answering on the attach socket must be the JVM: a socket left by another
/// program (or another user) under that name gets nothing from us and we read nothing from it.
fn check_peer(pid: u32, socket: &Path, stream: &UnixStream) -> Result<()> {
    let peer = getsockopt(stream, PeerCredentials).map_err(|e| {
        attach_err(
            pid,
            format!("cannot tell who serves {}: {e}", socket.display()),
        )
    })?;
    if u32::try_from(peer.pid()).ok() != Some(pid) {
        return Err(attach_err(
            pid,
            format!(
                "{} is served by pid {}, not by the JVM; refusing to talk to it (remove it if it is stale)",
                socket.display(),
                peer.pid()
            ),
        ));
    }
    Ok(())
}

fn human_bytes(n: usize) -> String {
    if n % (1 << 20) == 0 {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

/// Returns the attach socket, starting the JVM's attach listener if needed.
fn ensure_listener(
    pid: u32,
    handle: &ProcessHandle,
    status: &ProcStatus,
    deadline: Instant,
) -> Result<PathBuf> {
    let tmp = tmp_dir(pid);
    let socket = tmp.join(format!(".java_pid{}", status.ns_pid));
    if is_socket(&socket) {
        return Ok(socket);
    }
    if !status.catches_sigquit() {
        return Err(attach_err(
            pid,
            "the process does not handle SIGQUIT (still starting, or run with -Xrs or -XX:+DisableAttachMechanism); it was not signalled",
        ));
    }
    let _trigger = Trigger::create(pid, status, &tmp)?;
    send_sigquit(handle).map_err(|e| attach_err(pid, format!("cannot signal the JVM: {e}")))?;
    let mut sleep = Duration::from_millis(20);
    loop {
        std::thread::sleep(sleep.min(deadline.saturating_duration_since(Instant::now())));
        if is_socket(&socket) {
            return Ok(socket);
        }
        handle.check_alive()?;
        if Instant::now() >= deadline {
            return Err(attach_err(
                pid,
                format!(
                    "the JVM did not open {} in time; retry with a longer --timeout",
                    socket.display()
                ),
            ));
        }
        sleep = (sleep * 2).min(Duration::from_millis(500));
    }
}

fn send_sigquit(handle: &ProcessHandle) -> std::io::Result<()> {
    // SAFETY: pidfd_send_signal on our own pidfd, no siginfo.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            handle.as_raw_fd(),
            libc::SIGQUIT,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The `.attach_pid<ns pid>` file that asks HotSpot to start its attach listener on
/// SIGQUIT. It is created in a directory that other users cannot tamper with, never
/// through a link, and removed afterwards only if this attach created it.
struct Trigger {
    dir: OwnedFd,
    name: String,
    /// Device and inode of the file this attach created (None: it was already there).
    created: Option<(u64, u64)>,
}

impl Trigger {
    /// Creates the trigger in the JVM's working directory, else in its `/tmp` (HotSpot
    /// looks in both).
    fn create(pid: u32, status: &ProcStatus, tmp: &Path) -> Result<Trigger> {
        let name = format!(".attach_pid{}", status.ns_pid);
        let mut refusals = Vec::new();
        // `/proc/<pid>/cwd` is a link to follow on purpose (the kernel resolves it to the
        // very directory); a link in place of `tmp` is not followed.
        let candidates = [
            (process::proc_path(pid, "cwd"), OFlag::empty()),
            (tmp.to_path_buf(), OFlag::O_NOFOLLOW),
        ];
        for (dir, follow) in candidates {
            match Trigger::create_in(&dir, follow, &name, status.uid) {
                Ok(trigger) => return Ok(trigger),
                Err(why) => refusals.push(format!("{}: {why}", dir.display())),
            }
        }
        Err(attach_err(
            pid,
            format!(
                "cannot create the attach trigger {name}: {}",
                refusals.join("; ")
            ),
        ))
    }

    fn create_in(dir_path: &Path, follow: OFlag, name: &str, uid: u32) -> Result<Trigger, String> {
        let dir = open(
            dir_path,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC | follow,
            Mode::empty(),
        )
        .map_err(|e| format!("cannot open the directory: {e}"))?;
        let dir_stat = fstat(&dir).map_err(|e| e.to_string())?;
        check_trigger_dir(&dir_stat, uid)?;
        match openat(
            &dir,
            name,
            OFlag::O_WRONLY
                | OFlag::O_CREAT
                | OFlag::O_EXCL
                | OFlag::O_NOFOLLOW
                | OFlag::O_CLOEXEC
                | OFlag::O_NONBLOCK,
            Mode::from_bits_truncate(0o600),
        ) {
            Ok(file) => {
                let st = fstat(&file).map_err(|e| e.to_string())?;
                Ok(Trigger {
                    dir,
                    name: name.to_string(),
                    created: Some((st.st_dev, st.st_ino)),
                })
            }
            Err(nix::errno::Errno::EEXIST) => {
                // Left by an earlier attach of the JVM's own user: usable as it is, and
                // not ours to remove. Anything else in its place is not touched.
                let st = fstatat(&dir, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
                    .map_err(|e| e.to_string())?;
                if file_kind(&st) == SFlag::S_IFREG && st.st_uid == uid {
                    Ok(Trigger {
                        dir,
                        name: name.to_string(),
                        created: None,
                    })
                } else {
                    Err(format!(
                        "{name} already exists and is not a regular file of uid {uid}; not touched (remove it)"
                    ))
                }
            }
            Err(e) => Err(format!("cannot create {name}: {e}")),
        }
    }
}

impl Drop for Trigger {
    fn drop(&mut self) {
        let Some(created) = self.created else { return };
        // Remove only the file this attach created, not one put in its place since.
        let same = fstatat(
            &self.dir,
            self.name.as_str(),
            nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
        )
        .is_ok_and(|st| (st.st_dev, st.st_ino) == created);
        if same {
            let _ = unlinkat(&self.dir, self.name.as_str(), UnlinkatFlags::NoRemoveDir);
        }
    }
}

fn file_kind(st: &FileStat) -> SFlag {
    SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits())
}

/// A directory fit for the trigger: owned by the JVM's user or root, and writable by no
/// one else unless sticky (then others cannot remove or replace what we create).
fn check_trigger_dir(st: &FileStat, uid: u32) -> Result<(), String> {
    if st.st_uid != uid && st.st_uid != 0 {
        return Err(format!(
            "owned by uid {}, neither the JVM's user (uid {uid}) nor root",
            st.st_uid
        ));
    }
    let writable_by_others = st.st_mode & (libc::S_IWGRP | libc::S_IWOTH) != 0;
    if writable_by_others && st.st_mode & libc::S_ISVTX == 0 {
        return Err(format!(
            "writable by other users and not sticky (mode {:o})",
            st.st_mode & 0o7777
        ));
    }
    Ok(())
}

/// This thread's effective uid, gid and supplementary groups switched to the JVM's while
/// attaching, restored on drop.
///
/// Raw system calls on purpose: the kernel keeps credentials per thread, and glibc's
/// `setresuid`/`setgroups` wrappers signal every thread of the process to change them all.
/// The raw calls change the calling thread only, so a library caller's other threads keep
/// root, and everything this attach does (files, socket) runs on this one thread.
struct Credentials {
    saved: Option<Saved>,
}

struct Saved {
    uid: u32,
    gid: u32,
    groups: Vec<libc::gid_t>,
}

fn set_groups(groups: &[libc::gid_t]) -> std::io::Result<()> {
    // SAFETY: a valid pointer to `groups.len()` gids.
    let rc = unsafe { libc::syscall(libc::SYS_setgroups, groups.len(), groups.as_ptr()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn set_effective(uid: Option<u32>, gid: Option<u32>) -> std::io::Result<()> {
    // SAFETY: setresuid/setresgid with -1 for the ids left alone.
    let rc = unsafe {
        match (uid, gid) {
            (Some(uid), _) => libc::syscall(libc::SYS_setresuid, -1i32, uid, -1i32),
            (None, Some(gid)) => libc::syscall(libc::SYS_setresgid, -1i32, gid, -1i32),
            (None, None) => 0,
        }
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

impl Credentials {
    fn switch_to(pid: u32, status: &ProcStatus) -> Result<Credentials> {
        // SAFETY: plain getters.
        let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
        if euid != 0 || (status.uid == euid && status.gid == egid) {
            return Ok(Credentials { saved: None });
        }
        let groups = nix::unistd::getgroups()
            .map_err(|e| attach_err(pid, format!("cannot read this process's groups: {e}")))?
            .into_iter()
            .map(|g| g.as_raw())
            .collect();
        // From here on, dropping restores whatever was changed.
        let creds = Credentials {
            saved: Some(Saved {
                uid: euid,
                gid: egid,
                groups,
            }),
        };
        // Groups first and uid last: changing groups and gid needs root's capabilities.
        // The JVM's own supplementary groups (or just its gid), never root's: a file
        // writable by group root must not become writable through this attach.
        let target_groups: Vec<libc::gid_t> = if status.groups.is_empty() {
            vec![status.gid]
        } else {
            status.groups.clone()
        };
        set_groups(&target_groups)
            .and_then(|()| set_effective(None, Some(status.gid)))
            .and_then(|()| set_effective(Some(status.uid), None))
            .map_err(|e| {
                attach_err(
                    pid,
                    format!(
                        "cannot switch to the JVM's uid {} gid {}: {e}",
                        status.uid, status.gid
                    ),
                )
            })?;
        Ok(creds)
    }
}

impl Drop for Credentials {
    fn drop(&mut self) {
        if let Some(saved) = &self.saved {
            // uid first: back to effective root (the saved set-uid is still 0), which
            // restores the capabilities needed to reset the gid and groups.
            let _ = set_effective(Some(saved.uid), None);
            let _ = set_effective(None, Some(saved.gid));
            let _ = set_groups(&saved.groups);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::encode;

    #[test]
    fn requests_are_encoded_per_protocol() {
        assert_eq!(
            encode(1, "jcmd", &["VM.version"]),
            b"1\0jcmd\0VM.version\0\0\0"
        );
        assert_eq!(
            encode(2, "jcmd", &["VM.version"]),
            b"2\x0016\x00jcmd\x00VM.version\x00"
        );
    }
}
