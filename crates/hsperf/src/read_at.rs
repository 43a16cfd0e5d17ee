//! Reading bytes at an offset from things other users control: a file by `pread` (never a
//! mapping, which its owner could truncate under us: SIGBUS), or another process's memory
//! by `process_vm_readv`. Every read lands in a buffer this process owns.

use std::fs::File;
use std::io::{self, IoSliceMut};
use std::os::unix::fs::FileExt;

use nix::sys::uio::{process_vm_readv, RemoteIoVec};
use nix::unistd::Pid;

/// A source of bytes addressed by offset.
pub(crate) trait ReadAt {
    /// Reads up to `buf.len()` bytes at `offset`; fewer at the end of the data.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;

    /// Fills `buf` from `offset`, or fails with `UnexpectedEof` naming the shortfall.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let mut done = 0;
        while done < buf.len() {
            let at = offset
                .checked_add(done as u64)
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "offset overflows"))?;
            match self.read_at(&mut buf[done..], at) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("short read: {done} of {} bytes at {offset:#x}", buf.len()),
                    ))
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// A native-endian u64 at `offset` (a pointer or size in the target's memory).
    fn read_u64(&self, offset: u64) -> io::Result<u64> {
        let mut b = [0u8; 8];
        self.read_exact_at(&mut b, offset)?;
        Ok(u64::from_ne_bytes(b))
    }
}

impl ReadAt for File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        FileExt::read_at(self, buf, offset)
    }
}

/// In-memory bytes (saved copies, property tests, fuzz targets).
impl ReadAt for [u8] {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let rest = usize::try_from(offset)
            .ok()
            .and_then(|o| self.get(o..))
            .unwrap_or_default();
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        Ok(n)
    }
}

/// The address space of another process.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RemoteMemory {
    pub pid: u32,
}

impl ReadAt for RemoteMemory {
    fn read_at(&self, buf: &mut [u8], address: u64) -> io::Result<usize> {
        let base =
            usize::try_from(address).map_err(|_| io::Error::from_raw_os_error(libc::EFAULT))?;
        let remote = [RemoteIoVec {
            base,
            len: buf.len(),
        }];
        let mut local = [IoSliceMut::new(buf)];
        // A partial read means the range ran into an unmapped page: the next call at the
        // following address fails with EFAULT, which read_exact_at reports.
        process_vm_readv(Pid::from_raw(self.pid as i32), &mut local, &remote)
            .map_err(|e| io::Error::from_raw_os_error(e as i32))
    }
}
