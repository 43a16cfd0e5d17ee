//! A process that takes memory inside a variant's memory cgroup: forked from the lab, it
//! joins the filler cgroup, waits, maps `bytes` of anonymous memory, writes one byte in
//! every page and holds them. Its pages compete with the JVM's for the cgroup's limit, as
//! another process in the same container would. It dies with the lab
//! (`PR_SET_PDEATHSIG`), SIGKILL included, is killed at the end of the variant's turn, and
//! is in the journal for `pauselab lab cleanup`.
//!
//! A fork without exec: the child runs only system calls (no allocation, no locks) on
//! memory prepared before the fork, so the lab's other threads cannot leave it stuck.

use std::ffi::CString;
use std::path::Path;
use std::time::Duration;

use crate::host::journal::{Change, Journal};
use crate::host::sys::SysError;
use crate::LabError;

/// A running filler; killed (and reaped) when dropped.
#[derive(Debug)]
pub struct CgroupFiller {
    pid: libc::pid_t,
}

impl CgroupFiller {
    /// Forks the filler into the cgroup whose `cgroup.procs` is `procs`, and journals it
    /// (by pid and start time) so `lab cleanup` kills it should the death signal not have.
    /// Must be called from the thread that lives for the whole run (the death signal
    /// follows it).
    pub fn start(
        journal: &mut Journal,
        procs: &Path,
        bytes: u64,
        after: Duration,
    ) -> Result<CgroupFiller, LabError> {
        let filler = CgroupFiller::fork(procs, bytes, after)?;
        let started = crate::host::sys::process_start_ticks(filler.pid as u32).unwrap_or(0);
        journal.record(Change::Process {
            pid: filler.pid as u32,
            started,
        })?;
        Ok(filler)
    }

    fn fork(procs: &Path, bytes: u64, after: Duration) -> Result<CgroupFiller, SysError> {
        let procs_c: CString = crate::host::sys::cstring(procs)?;
        let length = usize::try_from(bytes).map_err(|_| SysError::TooLarge { bytes })?;
        let delay = libc::timespec {
            tv_sec: after.as_secs() as libc::time_t,
            tv_nsec: after.subsec_nanos() as libc::c_long,
        };
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: the child only makes async-signal-safe system calls on memory prepared
        // before the fork and leaves with _exit or by being killed.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(SysError::Call {
                what: "fork the cgroup filler".into(),
                source: std::io::Error::last_os_error(),
            });
        }
        if pid == 0 {
            // SAFETY: see above.
            unsafe { child(&procs_c, length, &delay, parent) }
        }
        Ok(CgroupFiller { pid })
    }

    pub fn pid(&self) -> u32 {
        self.pid as u32
    }
}

/// The filler's life: never returns.
unsafe fn child(procs: &CString, length: usize, delay: &libc::timespec, parent: libc::pid_t) -> ! {
    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 || libc::getppid() != parent
    {
        libc::_exit(1);
    }
    // Without exec, the child holds every descriptor of the lab: the journal's, whose lock
    // tells `lab cleanup` the run is alive, and the pipes of whoever reads the lab's output.
    if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
        for fd in 0..4096 {
            libc::close(fd);
        }
    }
    let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd < 0 || libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
        libc::_exit(2);
    }
    libc::close(fd);
    let mut rest = *delay;
    while libc::nanosleep(&rest, &mut rest) != 0 {}
    let memory = libc::mmap(
        std::ptr::null_mut(),
        length,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
        -1,
        0,
    );
    if memory == libc::MAP_FAILED {
        libc::_exit(3);
    }
    // 4 KiB pages, whatever the THP mode, like the lab's other filler.
    libc::madvise(memory, length, libc::MADV_NOHUGEPAGE);
    let bytes = memory.cast::<u8>();
    let mut offset = 0;
    while offset < length {
        std::ptr::write_volatile(bytes.add(offset), 1);
        offset += 4096;
    }
    loop {
        libc::pause();
    }
}

impl Drop for CgroupFiller {
    fn drop(&mut self) {
        // SAFETY: signalling and reaping our own child.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
            libc::waitpid(self.pid, std::ptr::null_mut(), 0);
        }
    }
}
