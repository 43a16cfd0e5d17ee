//! The HotSpot dynamic attach protocol (what `jcmd` uses), natively.
//!
//! 1. The target must be alive and map libjvm.so; nothing is ever sent to another process.
//! 2. As root, the effective uid/gid switch to the JVM's (it checks its peer's credentials,
//!    and a container's user namespace would not map our root).
//! 3. The socket is `<tmp>/.java_pid<ns pid>`, `<tmp>` reached through `/proc/<pid>/root`
//!    so containers and private mount namespaces work without entering them.
//! 4. No socket yet: only if SIGQUIT is caught and not ignored (a HotSpot JVM past start-up;
//!    not one with -Xrs or -XX:+DisableAttachMechanism), create `.attach_pid<ns pid>`,
//!    signal the JVM through a pidfd (no pid-reuse race), wait for the socket.
//! 5. Protocol 1 (`1\0cmd\0a1\0a2\0a3\0`) when the request fits its limits, else protocol 2
//!    (`2\0<size>\0cmd\0args…\0`, JDK 24+) after asking the JVM with `getversion`.
//!
//! Reply: a decimal status line, then text until the JVM closes the connection.

use std::fs;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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
}

impl Default for AttachOptions {
    fn default() -> Self {
        AttachOptions {
            timeout: Duration::from_secs(10),
            protocol: Protocol::Auto,
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
    let deadline = Instant::now() + options.timeout;
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
            let answer = request(pid, &socket, 1, "getversion", &[], deadline)?;
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
    request(pid, &socket, version, command, args, deadline)
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
) -> Result<Reply> {
    let remaining = || {
        deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| attach_err(pid, "timed out waiting for the JVM's reply; it may be stuck in a safepoint or GC, retry with a longer --timeout"))
    };
    let mut stream = UnixStream::connect(socket)
        .map_err(|e| attach_err(pid, format!("cannot connect to {}: {e}", socket.display())))?;
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

fn is_socket(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.file_type().is_socket())
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
    let trigger_name = format!(".attach_pid{}", status.ns_pid);
    let cwd_trigger = process::proc_path(pid, "cwd").join(&trigger_name);
    let trigger = match fs::File::create(&cwd_trigger) {
        Ok(_) => cwd_trigger,
        Err(_) => {
            let t = tmp.join(&trigger_name);
            fs::File::create(&t)
                .map_err(|e| attach_err(pid, format!("cannot create {}: {e}", t.display())))?;
            t
        }
    };
    let _remove = RemoveOnDrop(trigger);
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

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// Effective uid/gid switched to the JVM's while attaching, restored on drop.
struct Credentials {
    saved: Option<(u32, u32)>,
}

impl Credentials {
    fn switch_to(pid: u32, status: &ProcStatus) -> Result<Credentials> {
        // SAFETY: plain getters.
        let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
        if euid != 0 || (status.uid == euid && status.gid == egid) {
            return Ok(Credentials { saved: None });
        }
        // Only this thread's credentials change (raw syscalls): the CLI is single-threaded
        // here, and a library caller's other threads keep theirs.
        // SAFETY: setresgid/setresuid with -1 for the fields left alone.
        let switched = unsafe {
            libc::syscall(libc::SYS_setresgid, -1i32, status.gid, -1i32) == 0
                && libc::syscall(libc::SYS_setresuid, -1i32, status.uid, -1i32) == 0
        };
        if !switched {
            let e = std::io::Error::last_os_error();
            return Err(attach_err(
                pid,
                format!(
                    "cannot switch to the JVM's uid {} gid {}: {e}",
                    status.uid, status.gid
                ),
            ));
        }
        Ok(Credentials {
            saved: Some((euid, egid)),
        })
    }
}

impl Drop for Credentials {
    fn drop(&mut self) {
        if let Some((uid, gid)) = self.saved {
            // SAFETY: restoring the saved effective ids (the saved set-uid is still 0).
            unsafe {
                libc::syscall(libc::SYS_setresuid, -1i32, uid, -1i32);
                libc::syscall(libc::SYS_setresgid, -1i32, gid, -1i32);
            }
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
