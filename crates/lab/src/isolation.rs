//! Starting a variant's process in isolation: its own process group, killed when the lab
//! dies (`PR_SET_PDEATHSIG`), marked with the run id, and, when asked, in a private mount
//! namespace where a per-variant directory is bound over `/tmp` (the host's `/tmp` is never
//! touched: the bind exists only inside that namespace). It can also join a cgroup (CPU
//! quota) and give up transparent huge pages before exec.

use std::ffi::CString;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use crate::journal::RUN_MARKER_ENV;

/// What a variant's process gets besides its own process group.
#[derive(Debug, Default, Clone, Copy)]
pub struct Isolation<'a> {
    /// Bound over `/tmp` in a private mount namespace.
    pub tmp: Option<&'a Path>,
    /// `cgroup.procs` of the cgroup to join.
    pub cgroup_procs: Option<&'a Path>,
    /// `prctl(PR_SET_THP_DISABLE)`: no transparent huge pages, inherited by exec.
    pub thp_disabled: bool,
}

/// Prepares `command` to run as a child of the lab run `run_id`, isolated as asked. Must
/// be spawned from the thread that lives for the whole run (the death signal follows the
/// spawning thread).
pub fn isolate(command: &mut Command, run_id: &str, isolation: Isolation) -> Result<(), String> {
    command.env(RUN_MARKER_ENV, run_id);
    let tmp_c: Option<CString> = isolation.tmp.map(crate::sys::cstring).transpose()?;
    let procs_c: Option<CString> = isolation
        .cgroup_procs
        .map(crate::sys::cstring)
        .transpose()?;
    let thp_disabled = isolation.thp_disabled;
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs between fork and exec and only makes async-signal-safe
    // system calls on memory prepared before the fork.
    unsafe {
        command.pre_exec(move || {
            if libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The lab may have died between fork and prctl.
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            if let Some(procs) = &procs_c {
                // "0" is the writing process itself, in cgroup v1 and v2.
                let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let written = libc::write(fd, b"0".as_ptr().cast(), 1);
                let error = std::io::Error::last_os_error();
                libc::close(fd);
                if written != 1 {
                    return Err(error);
                }
            }
            if thp_disabled && libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(dir) = &tmp_c {
                if libc::unshare(libc::CLONE_NEWNS) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let root = c"/";
                let none = c"none";
                if libc::mount(
                    none.as_ptr(),
                    root.as_ptr(),
                    std::ptr::null(),
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                let tmp = c"/tmp";
                if libc::mount(
                    dir.as_ptr(),
                    tmp.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    Ok(())
}
