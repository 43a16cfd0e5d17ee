//! Thin wrappers over the system calls and tools the lab uses to change the host. Every
//! caller goes through the journal first; these functions only do the work.

use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::LabError;

/// What a system call or tool of the lab's failed at, in one line naming the path,
/// device, process or tool.
#[derive(Debug, thiserror::Error)]
pub enum SysError {
    /// A path the kernel cannot take.
    #[error("{} contains a NUL byte", .0.display())]
    NulByte(PathBuf),
    /// A mount's source, type or options with a NUL byte.
    #[error("{0}")]
    Nul(#[from] std::ffi::NulError),
    #[error("cannot run {program}: {source} (is it installed?)")]
    NotRunnable {
        program: String,
        source: std::io::Error,
    },
    /// A tool ran and failed; `message` is the last line of its stderr.
    #[error("`{command}` failed: {message}")]
    ToolFailed { command: String, message: String },
    /// A system call on `what` (`mount SOURCE on TARGET`, `swapon FILE`, a path).
    #[error("{what}: {source}")]
    Call {
        what: String,
        source: std::io::Error,
    },
    /// A memory size this machine cannot address.
    #[error("filler of {bytes} bytes")]
    TooLarge { bytes: u64 },
    #[error("process {pid} still alive after SIGKILL")]
    StillAlive { pid: u32 },
    #[error("cannot remove cgroup {}: {source}", path.display())]
    CgroupBusy {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: cannot allocate {} MiB: {source} (a swap file needs a filesystem with fallocate, such as ext4 or xfs)", path.display(), bytes >> 20)]
    Allocate {
        path: PathBuf,
        bytes: u64,
        source: std::io::Error,
    },
}

/// The error of the system call just made on `what`.
fn last_call(what: String) -> SysError {
    SysError::Call {
        what,
        source: std::io::Error::last_os_error(),
    }
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

pub fn unix_now_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Writes `value` as pretty JSON and a newline to `path`, created without following a
/// link planted under its name (every file of a bundle, `matrix.json`).
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<(), LabError> {
    let mut text = serde_json::to_string_pretty(value).expect("lab values serialize");
    text.push('\n');
    write_file(path, text.as_bytes())
}

/// Writes `bytes` to `path`, created as [`write_json`] creates it.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), LabError> {
    pauselab_pause::output::write_file(path, bytes).map_err(|e| LabError::io(path, "write", e))
}

/// Seconds since the Unix epoch of `t` (0 before it).
pub fn unix_s(t: std::time::SystemTime) -> f64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

pub fn unix_now_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}

pub(crate) fn cstring(path: &Path) -> Result<CString, SysError> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| SysError::NulByte(path.to_path_buf()))
}

/// Runs a tool and turns a failure into one line naming the tool and its stderr.
pub fn run_tool(program: &str, args: &[&str]) -> Result<String, SysError> {
    let output = Command::new(program)
        .args(args)
        .output()
        .map_err(|source| SysError::NotRunnable {
            program: program.to_string(),
            source,
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(SysError::ToolFailed {
            command: format!("{program} {}", args.join(" ")),
            message: stderr
                .trim()
                .lines()
                .last()
                .unwrap_or("no message")
                .to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// Mount points (in this process's namespace) at or below `dir`, deepest first.
pub fn mounts_under(dir: &Path) -> Vec<PathBuf> {
    let Ok(text) = fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = text
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|p| PathBuf::from(unescape_mountinfo(p)))
        .filter(|p| p.starts_with(dir))
        .collect();
    found.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    found.dedup();
    found
}

fn unescape_mountinfo(field: &str) -> String {
    field
        .replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

pub fn is_mount_point(path: &Path) -> bool {
    mounts_under(path).iter().any(|p| p == path)
}

pub fn mount(
    source: &str,
    target: &Path,
    fstype: &str,
    flags: libc::c_ulong,
    data: &str,
) -> Result<(), SysError> {
    let source_c = CString::new(source)?;
    let target_c = cstring(target)?;
    let fstype_c = CString::new(fstype)?;
    let data_c = CString::new(data)?;
    // SAFETY: all pointers are valid NUL-terminated strings for the duration of the call.
    let rc = unsafe {
        libc::mount(
            source_c.as_ptr(),
            target_c.as_ptr(),
            fstype_c.as_ptr(),
            flags,
            data_c.as_ptr() as *const libc::c_void,
        )
    };
    if rc != 0 {
        return Err(last_call(format!("mount {source} on {}", target.display())));
    }
    Ok(())
}

/// Unmounts everything at and below `target`, retrying while busy (processes still
/// exiting), then detaching lazily so nothing stays visible.
pub fn unmount(target: &Path, patience: Duration) -> Result<(), SysError> {
    for mount_point in mounts_under(target) {
        let c = cstring(&mount_point)?;
        let mut last_error = None;
        let done = wait_until(patience, || {
            // SAFETY: valid NUL-terminated path.
            if unsafe { libc::umount2(c.as_ptr(), 0) } == 0 {
                return true;
            }
            let err = std::io::Error::last_os_error();
            let gone = err.raw_os_error() == Some(libc::EINVAL)
                || err.raw_os_error() == Some(libc::ENOENT);
            last_error = Some(err);
            gone
        });
        if !done {
            // SAFETY: valid NUL-terminated path.
            if unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) } != 0 {
                return Err(SysError::Call {
                    what: format!("umount {}", mount_point.display()),
                    source: last_error.unwrap_or_else(|| std::io::Error::other("")),
                });
            }
        }
    }
    Ok(())
}

/// Loop device names (`loop3`) whose backing file is `image`.
pub fn loop_devices_backing(image: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let wanted = fs::canonicalize(image).unwrap_or_else(|_| image.to_path_buf());
    let mut devices: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("loop"))
        .filter(|name| {
            fs::read_to_string(format!("/sys/block/{name}/loop/backing_file"))
                .map(|b| {
                    let b = b.trim().trim_end_matches(" (deleted)");
                    Path::new(b) == wanted || Path::new(b) == image
                })
                .unwrap_or(false)
        })
        .collect();
    devices.sort();
    devices
}

pub fn detach_loop(device: &str) -> Result<(), SysError> {
    let path = format!("/dev/{device}");
    let attached = || Path::new(&format!("/sys/block/{device}/loop/backing_file")).exists();
    let mut last = None;
    let marked = wait_until(Duration::from_secs(10), || {
        match run_tool("losetup", &["-d", &path]) {
            Ok(_) => true,
            Err(e) => {
                last = Some(e);
                !attached()
            }
        }
    });
    if let (false, Some(last)) = (marked, last) {
        return Err(last);
    }
    // `losetup -d` on a device still in use (a lazily unmounted filesystem flushing, the
    // mount namespace of a process still exiting) only marks it to clear itself when the
    // last user lets go. That is not a leftover, but give it the time to go, so the host is
    // as it was when the run returns.
    wait_until(Duration::from_secs(30), || !attached());
    Ok(())
}

/// `MAJ:MIN` of a block device such as `loop3`.
pub fn block_dev_numbers(device: &str) -> Result<String, SysError> {
    let path = format!("/sys/block/{device}/dev");
    fs::read_to_string(&path)
        .map(|s| s.trim().to_string())
        .map_err(|source| SysError::Call { what: path, source })
}

/// Pids of processes whose environment holds `key=value`.
pub fn marked_processes(key: &str, value: &str) -> Vec<i32> {
    let needle = format!("{key}={value}");
    let me = std::process::id() as i32;
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|&pid| pid != me)
        .filter(|pid| {
            fs::read(format!("/proc/{pid}/environ"))
                .map(|env| env.split(|&b| b == 0).any(|kv| kv == needle.as_bytes()))
                .unwrap_or(false)
        })
        .filter(|pid| !is_zombie(*pid))
        .collect()
}

fn is_zombie(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

/// SIGKILLs every process marked with `key=value` and waits up to `patience` for them to be
/// gone. Returns those still alive.
pub fn kill_marked_processes(key: &str, value: &str, patience: Duration) -> Vec<i32> {
    let mut left = Vec::new();
    wait_until(patience, || {
        left = marked_processes(key, value);
        for &pid in &left {
            // SAFETY: sending a signal has no memory-safety preconditions.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        // Reap our own children so they do not linger as zombies.
        // SAFETY: non-blocking waitpid on any child.
        while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
        left.is_empty()
    });
    left
}

/// Start time of process `pid` in clock ticks after boot (field 22 of `/proc/PID/stat`).
pub fn process_start_ticks(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    // rest starts at field 3.
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// SIGKILLs process `pid` if it is still the one that started at `started` ticks, and
/// waits up to 10 s for it to be gone (a process with much memory in swap takes a while).
pub fn kill_process(pid: u32, started: u64) -> Result<(), SysError> {
    let same = || process_start_ticks(pid) == Some(started) && !is_zombie(pid as i32);
    let gone = wait_until(Duration::from_secs(10), || {
        if !same() {
            return true;
        }
        // SAFETY: signalling a process we started (same pid and start time).
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        // Reap it when it is our own child.
        // SAFETY: non-blocking waitpid.
        unsafe { libc::waitpid(pid as i32, std::ptr::null_mut(), libc::WNOHANG) };
        false
    });
    if gone {
        Ok(())
    } else {
        Err(SysError::StillAlive { pid })
    }
}

/// Free bytes for unprivileged users on the filesystem holding `path`.
pub fn free_bytes(path: &Path) -> Result<u64, SysError> {
    let c = cstring(path)?;
    // SAFETY: statvfs writes into a zeroed struct we own.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(last_call(format!("statvfs {}", path.display())));
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}
/// Sends `signal` to the process group `child` leads (every JVM and preparation step
/// starts in a group of its own, `isolation::isolate`), so what it started gets it too.
pub fn signal_group(child: &std::process::Child, signal: i32) {
    // SAFETY: signalling the process group of our own child.
    unsafe { libc::kill(-(child.id() as i32), signal) };
}

/// Waits until `cond` holds or `timeout` passes.
pub(crate) fn wait_until(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Removes a cgroup this run made: its processes (ours, already stopped or killed) are moved
/// to the parent first, then the directory is removed, retrying while the kernel still
/// counts exiting tasks.
pub fn remove_cgroup(path: &Path) -> Result<(), SysError> {
    if !path.exists() {
        return Ok(());
    }
    let parent_procs = path.parent().map(|p| p.join("cgroup.procs"));
    let mut tries = 0;
    loop {
        tries += 1;
        if let (Ok(procs), Some(parent)) =
            (fs::read_to_string(path.join("cgroup.procs")), &parent_procs)
        {
            for pid in procs.split_whitespace() {
                let _ = fs::write(parent, pid);
            }
        }
        match fs::remove_dir(path) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(source) if tries == 50 => {
                return Err(SysError::CgroupBusy {
                    path: path.to_path_buf(),
                    source,
                })
            }
            Err(_) => {}
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// MemAvailable in bytes (0 when unreadable: the filler then only releases).
pub fn mem_available() -> u64 {
    meminfo_bytes("MemAvailable")
}

/// MemTotal in bytes (0 when unreadable).
pub fn mem_total() -> u64 {
    meminfo_bytes("MemTotal")
}

fn meminfo_bytes(field: &str) -> u64 {
    pauselab_host::vm::meminfo_kib(field)
        .ok()
        .flatten()
        .map_or(0, |kib| kib * 1024)
}

/// The `avg10` of one `/proc/pressure/<resource>` line (`some` or `full`), when the
/// kernel has PSI.
pub(crate) fn psi(resource: &str, kind: &str) -> Option<f64> {
    let text = fs::read_to_string(format!("/proc/pressure/{resource}")).ok()?;
    let line = text.lines().find(|l| l.starts_with(kind))?;
    line.split_whitespace()
        .find_map(|f| f.strip_prefix("avg10="))
        .and_then(|v| v.parse().ok())
}

/// Turns the swap area on `path` on (`swapon(2)`; the file is prepared with `mkswap`).
pub fn swapon(path: &Path) -> Result<(), SysError> {
    let c = cstring(path)?;
    // SAFETY: valid NUL-terminated path; no flags.
    if unsafe { libc::swapon(c.as_ptr(), 0) } != 0 {
        return Err(last_call(format!("swapon {}", path.display())));
    }
    Ok(())
}

/// Turns the swap area on `path` off (`swapoff(2)`), reading its pages back into memory.
/// Succeeds when it is not on (already off, or the file is gone).
pub fn swapoff(path: &Path) -> Result<(), SysError> {
    if !is_active_swap(path) {
        return Ok(());
    }
    let c = cstring(path)?;
    // SAFETY: valid NUL-terminated path.
    if unsafe { libc::swapoff(c.as_ptr()) } != 0 {
        let error = std::io::Error::last_os_error();
        if !is_active_swap(path) {
            return Ok(());
        }
        return Err(SysError::Call {
            what: format!("swapoff {}", path.display()),
            source: error,
        });
    }
    Ok(())
}

/// Whether `path` is one of the host's active swap areas (/proc/swaps).
pub fn is_active_swap(path: &Path) -> bool {
    let wanted = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    active_swaps()
        .iter()
        .any(|area| *area == wanted || area == path)
}

/// The host's active swap areas, by path (/proc/swaps; empty when unreadable).
pub fn active_swaps() -> Vec<PathBuf> {
    let path = Path::new("/proc/swaps");
    fs::read_to_string(path)
        .ok()
        .and_then(|text| pauselab_host::vm::parse_swaps(path, &text).ok())
        .unwrap_or_default()
        .into_iter()
        .map(|area| PathBuf::from(unescape_mountinfo(&area.name)))
        .collect()
}

/// Gives `path` `bytes` of allocated blocks (swap files may have no holes): `fallocate`.
pub fn allocate(path: &Path, bytes: u64) -> Result<(), SysError> {
    use std::os::unix::io::AsRawFd;
    let file = fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|source| SysError::Call {
            what: path.display().to_string(),
            source,
        })?;
    // SAFETY: fallocate on a file descriptor we own.
    if unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, bytes as libc::off_t) } != 0 {
        return Err(SysError::Allocate {
            path: path.to_path_buf(),
            bytes,
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// Starts writeback of a file's dirty pages without waiting for it (`sync_file_range`
/// with `SYNC_FILE_RANGE_WRITE`): the writeback forcer's way to keep the disk busy.
pub fn start_writeback(file: &fs::File) {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid fd; the call only starts writeback of the file's dirty pages.
    unsafe { libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
}

/// A private anonymous mapping with every page touched, so it is really resident (the
/// memory filler holds these); small pages only, so THP does not change what it costs.
/// Unmapped on drop.
pub struct TouchedMemory {
    address: *mut libc::c_void,
    length: usize,
}

// SAFETY: the mapping is owned by exactly one TouchedMemory and only unmapped in its Drop.
unsafe impl Send for TouchedMemory {}

impl TouchedMemory {
    /// `length` bytes mapped and touched page by page; `None` when the mapping fails.
    pub fn new(length: usize) -> Option<TouchedMemory> {
        // SAFETY: a fresh private anonymous mapping; no existing memory is affected.
        let address = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                length,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if address == libc::MAP_FAILED {
            return None;
        }
        let memory = TouchedMemory { address, length };
        // SAFETY: advice on our own mapping.
        unsafe { libc::madvise(address, length, libc::MADV_NOHUGEPAGE) };
        let bytes = address.cast::<u8>();
        for offset in (0..length).step_by(4096) {
            // SAFETY: offset < length, inside the mapping; a volatile store so the page is
            // really faulted in.
            unsafe { bytes.add(offset).write_volatile(1) };
        }
        Some(memory)
    }
}

impl Drop for TouchedMemory {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping this value owns, once.
        unsafe { libc::munmap(self.address, self.length) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_failure_is_one_line_naming_the_tool_path_or_device() {
        let missing = run_tool("pauselab-no-such-tool", &["x"]).unwrap_err();
        assert!(matches!(missing, SysError::NotRunnable { .. }));
        assert_eq!(
            missing.to_string(),
            "cannot run pauselab-no-such-tool: No such file or directory (os error 2) (is it installed?)"
        );
        let failed = run_tool("sh", &["-c", "echo first >&2; echo last >&2; exit 1"]).unwrap_err();
        assert!(matches!(failed, SysError::ToolFailed { .. }));
        assert_eq!(
            failed.to_string(),
            "`sh -c echo first >&2; echo last >&2; exit 1` failed: last"
        );
        let nowhere = Path::new("/nonexistent/pauselab");
        assert_eq!(
            free_bytes(nowhere).unwrap_err().to_string(),
            "statvfs /nonexistent/pauselab: No such file or directory (os error 2)"
        );
        assert_eq!(
            allocate(nowhere, 1 << 20).unwrap_err().to_string(),
            "/nonexistent/pauselab: No such file or directory (os error 2)"
        );
        assert_eq!(
            block_dev_numbers("pauselab-none").unwrap_err().to_string(),
            "/sys/block/pauselab-none/dev: No such file or directory (os error 2)"
        );
        assert!(matches!(
            cstring(Path::new("a\0b")),
            Err(SysError::NulByte(path)) if path == Path::new("a\0b")
        ));
    }
}
