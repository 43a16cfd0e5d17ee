//! Starting a variant's process in isolation: its own process group, killed when the lab
//! dies (`PR_SET_PDEATHSIG`), marked with the run id, and, when asked, in a private mount
//! namespace where a per-variant directory is bound over the JVM's hsperf directory
//! `/tmp/hsperfdata_<user>` (the bind exists only inside that namespace). It can also join a
//! variant's cgroups (CPU quota, memory limits) and give up transparent huge pages before exec.
//!
//! Only the hsperf directory is replaced, not all of `/tmp`: the perf file is the one thing
//! the experiments move (to the stressed disk, a tmpfs, ...), and a whole private `/tmp`
//! would hide everything else under it from the JVM: a checkout, a classpath, a JDK or a
//! bundle under `/tmp` (docs/lab.md, "Isolation").

use std::ffi::CString;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::host::journal::{Change, Journal, RUN_MARKER_ENV};
use crate::host::sys::SysError;
use crate::LabError;

/// The hsperf directory name of the user the JVMs run as (the lab's effective user), as
/// HotSpot forms it: `hsperfdata_<user>`.
pub fn hsperf_dir_name() -> String {
    format!("hsperfdata_{}", pauselab_host::probe::effective_user_name())
}

/// `/tmp/hsperfdata_<user>`: HotSpot's hsperf directory on Linux (it ignores
/// `java.io.tmpdir` for it).
pub fn host_hsperf_path() -> PathBuf {
    Path::new("/tmp").join(hsperf_dir_name())
}

/// The host's `/tmp/hsperfdata_<user>`, the mount point of every variant's own hsperf
/// directory. Created (journaled; removed afterwards only if still empty) when no JVM of
/// the user has made it yet. Anything else at that path (a symbolic link, another user's
/// directory) is refused: a bind mount would follow it.
pub fn ensure_host_hsperf_dir(journal: &mut Journal) -> Result<(), LabError> {
    let path = host_hsperf_path();
    match fs::symlink_metadata(&path) {
        Ok(meta) => {
            // SAFETY: geteuid has no preconditions.
            let euid = unsafe { libc::geteuid() };
            if !meta.file_type().is_dir() || meta.uid() != euid {
                return Err(LabError::Host(format!(
                    "{}: not a directory owned by uid {euid} (a symbolic link or another user's file?); \
                     the JVMs of this run would not use it: remove it and run again",
                    path.display()
                )));
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            journal.record(Change::SharedDir { path: path.clone() })?;
            fs::create_dir(&path).map_err(|e| LabError::io(&path, "create", e))?;
            secure_for_hotspot(&path)
        }
        Err(e) => Err(LabError::io(&path, "inspect", e)),
    }
}

/// Creates `<variant_dir>/hsperfdata_<user>`, the directory bound over the host's hsperf
/// directory for that variant. It goes away with `variant_dir`.
pub fn variant_hsperf_dir(variant_dir: &Path) -> Result<PathBuf, LabError> {
    let path = variant_dir.join(hsperf_dir_name());
    fs::create_dir(&path).map_err(|e| LabError::io(&path, "create", e))?;
    secure_for_hotspot(&path)?;
    Ok(path)
}

/// HotSpot refuses an hsperf directory that others can write to (it then keeps its counters
/// in anonymous memory and the experiment would measure nothing): 0755, owned by the user.
fn secure_for_hotspot(path: &Path) -> Result<(), LabError> {
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
        .map_err(|e| LabError::io(path, "chmod", e))
}

/// A directory bound over the JVM's hsperf directory in a private mount namespace.
#[derive(Debug, Clone, Copy)]
pub struct HsperfBind<'a> {
    /// The variant's own directory (`<variant dir>/hsperfdata_<user>`).
    pub source: &'a Path,
    /// The host's `/tmp/hsperfdata_<user>`, an existing directory owned by the user.
    pub target: &'a Path,
}

/// What a variant's process gets besides its own process group.
#[derive(Debug, Default, Clone, Copy)]
pub struct Isolation<'a> {
    /// The hsperf directory the JVM sees.
    pub hsperf: Option<HsperfBind<'a>>,
    /// `cgroup.procs` of the cgroups to join (one per v1 hierarchy: CPU, memory).
    pub cgroups: &'a [PathBuf],
    /// `prctl(PR_SET_THP_DISABLE)`: no transparent huge pages, inherited by exec.
    pub thp_disabled: bool,
}

/// Prepares `command` to run as a child of the lab run `run_id`, isolated as asked. Must
/// be spawned from the thread that lives for the whole run (the death signal follows the
/// spawning thread).
pub fn isolate(command: &mut Command, run_id: &str, isolation: Isolation) -> Result<(), SysError> {
    command.env(RUN_MARKER_ENV, run_id);
    let bind_c: Option<(CString, CString)> = match isolation.hsperf {
        Some(bind) => Some((
            crate::host::sys::cstring(bind.source)?,
            crate::host::sys::cstring(bind.target)?,
        )),
        None => None,
    };
    let procs_c: Vec<CString> = isolation
        .cgroups
        .iter()
        .map(|p| crate::host::sys::cstring(p))
        .collect::<Result<_, _>>()?;
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
            for procs in &procs_c {
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
            if let Some((source, target)) = &bind_c {
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
                if libc::mount(
                    source.as_ptr(),
                    target.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
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
