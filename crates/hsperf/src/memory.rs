//! The memory route: find `PerfMemory::_start` in a running JVM and copy the region with
//! `process_vm_readv`. Works with -XX:+PerfDisableSharedMem, where no file exists.
//!
//! The address comes from libjvm.so's `.symtab` (local symbols `PerfMemory::_start` and
//! `_end`) when the library is not stripped, else from the exported `gHotSpotVMStructs`
//! table that the serviceability agent uses. The ELF file is opened through
//! `/proc/<pid>/root`, so a JVM in a container is read with its own libjvm.so.

use std::fs::File;
use std::io::{self, IoSliceMut};
use std::path::{Path, PathBuf};

use nix::sys::uio::{process_vm_readv, RemoteIoVec};
use nix::unistd::Pid;
use object::{Object, ObjectSegment, ObjectSymbol};

use crate::error::{Error, Result};
use crate::process::{self, JvmMaps};

const START_SYMBOL: &str = "_ZN10PerfMemory6_startE";
const END_SYMBOL: &str = "_ZN10PerfMemory4_endE";
/// Every symbol either route needs.
const WANTED_SYMBOLS: [&str; 7] = [
    START_SYMBOL,
    END_SYMBOL,
    "gHotSpotVMStructs",
    "gHotSpotVMStructEntryArrayStride",
    "gHotSpotVMStructEntryTypeNameOffset",
    "gHotSpotVMStructEntryFieldNameOffset",
    "gHotSpotVMStructEntryAddressOffset",
];
/// Largest region accepted (`-XX:PerfDataMemorySize` is 32 KiB by default).
const MAX_REGION: u64 = 64 << 20;

/// Where the perf data region lives in a JVM's address space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteRegion {
    pub address: u64,
    pub size: u64,
    /// How the address was found.
    pub via: AddressSource,
}

/// How the address of the region was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AddressSource {
    /// Local symbols of libjvm.so's `.symtab`.
    Symtab,
    /// The exported `gHotSpotVMStructs` table.
    VmStructs,
}

/// Copies `buf.len()` bytes at `address` of process `pid`.
pub(crate) fn read_remote(pid: u32, address: u64, buf: &mut [u8]) -> io::Result<()> {
    let len = buf.len();
    let remote = [RemoteIoVec {
        base: address as usize,
        len,
    }];
    let mut local = [IoSliceMut::new(buf)];
    let n = process_vm_readv(Pid::from_raw(pid as i32), &mut local, &remote)
        .map_err(|e| io::Error::from_raw_os_error(e as i32))?;
    if n != len {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("short read: {n} of {len} bytes"),
        ));
    }
    Ok(())
}

fn read_u64(pid: u32, address: u64) -> io::Result<u64> {
    let mut b = [0u8; 8];
    read_remote(pid, address, &mut b)?;
    Ok(u64::from_ne_bytes(b))
}

/// Turns an error of process_vm_readv into a crate error.
pub(crate) fn remote_error(pid: u32, uid: u32, err: io::Error) -> Error {
    match err.raw_os_error() {
        Some(libc::ESRCH) => Error::NoProcess { pid },
        Some(libc::EPERM) | Some(libc::EACCES) => Error::Permission {
            pid,
            uid,
            what: "its memory (process_vm_readv needs ptrace access: same user, or CAP_SYS_PTRACE)"
                .into(),
        },
        _ => Error::Memory {
            pid,
            reason: format!("reading its memory: {err}"),
        },
    }
}

/// A read-only mapping of an ELF file.
struct MappedFile {
    ptr: *mut libc::c_void,
    len: usize,
}

impl MappedFile {
    fn open(path: &Path) -> io::Result<MappedFile> {
        use std::os::fd::AsRawFd;
        let file = File::open(path)?;
        let len = file.metadata()?.len() as usize;
        if len == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "empty file"));
        }
        // SAFETY: a private read-only mapping of a regular file; the slice handed out
        // lives no longer than the mapping. A shared library is not rewritten in place.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(MappedFile { ptr, len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: ptr/len describe a live mapping owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping created in `open`.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

/// Finds the perf data region of a running JVM, by `via` only if given (both routes are
/// tested against each other; callers normally use [`crate::Reader`]).
pub fn locate_region(pid: u32, via: Option<AddressSource>) -> Result<RemoteRegion> {
    let status = process::read_status(pid)?;
    let maps = process::read_maps(pid)?;
    locate(pid, status.uid, &maps, via)
}

/// Finds the perf data region of a JVM. `maps` must come from the same pid.
pub(crate) fn locate(
    pid: u32,
    uid: u32,
    maps: &JvmMaps,
    via: Option<AddressSource>,
) -> Result<RemoteRegion> {
    let libjvm = maps.libjvm.as_ref().ok_or(Error::NotJvm { pid })?;
    let mem_err = |reason: String| Error::Memory { pid, reason };
    let (elf_path, mapped) = open_libjvm(pid, libjvm)
        .map_err(|e| mem_err(format!("cannot open {}: {e}", libjvm.display())))?;
    let elf = object::File::parse(mapped.bytes()).map_err(|e| {
        mem_err(format!(
            "{} is not a readable ELF file: {e}",
            elf_path.display()
        ))
    })?;
    // Load bias: where the first loadable segment's file offset 0 ended up.
    let first_vaddr = elf
        .segments()
        .map(|s| s.address() & !0xfff)
        .min()
        .unwrap_or(0);
    let bias = maps.libjvm_base.wrapping_sub(first_vaddr);

    // One pass over each symbol table (.symtab has ~70,000 entries): the exported
    // table first, the local PerfMemory symbols only if the route may use them.
    let mut found: Vec<(&str, u64)> = Vec::new();
    let mut collect = |symbols: &mut dyn Iterator<Item = object::Symbol<'_, '_>>| {
        for sym in symbols {
            let Ok(name) = sym.name_bytes() else { continue };
            if let Some(wanted) = WANTED_SYMBOLS.iter().find(|w| w.as_bytes() == name) {
                if !found.iter().any(|(n, _)| n == wanted) {
                    found.push((wanted, sym.address().wrapping_add(bias)));
                }
            }
        }
    };
    collect(&mut elf.dynamic_symbols());
    if via != Some(AddressSource::VmStructs) {
        collect(&mut elf.symbols());
    }
    let symbol =
        |name: &str| -> Option<u64> { found.iter().find(|(n, _)| *n == name).map(|(_, a)| *a) };

    let remote = |e| remote_error(pid, uid, e);
    let from_symtab = match via {
        Some(AddressSource::VmStructs) => None,
        _ => symbol(START_SYMBOL).zip(symbol(END_SYMBOL)),
    };
    let (start_var, end_var, via) = match (from_symtab, via) {
        (Some((s, e)), _) => (s, e, AddressSource::Symtab),
        (None, Some(AddressSource::Symtab)) => {
            return Err(mem_err(format!(
                "{} has no .symtab PerfMemory symbols (stripped)",
                elf_path.display()
            )))
        }
        (None, _) => {
            let table = symbol("gHotSpotVMStructs").ok_or_else(|| {
                mem_err(format!(
                    "{} has neither PerfMemory symbols nor gHotSpotVMStructs",
                    elf_path.display()
                ))
            })?;
            let (s, e) = vm_structs_lookup(pid, table, &symbol).map_err(|err| match err {
                LookupError::Io(e) => remote(e),
                LookupError::Missing(why) => mem_err(why),
            })?;
            (s, e, AddressSource::VmStructs)
        }
    };
    let start = read_u64(pid, start_var).map_err(remote)?;
    let end = read_u64(pid, end_var).map_err(remote)?;
    if start == 0 {
        return Err(Error::PerfDataDisabled { pid });
    }
    if end <= start || end - start > MAX_REGION {
        return Err(mem_err(format!(
            "implausible region {start:#x}..{end:#x}; the JVM may still be starting, retry"
        )));
    }
    Ok(RemoteRegion {
        address: start,
        size: end - start,
        via,
    })
}

fn open_libjvm(pid: u32, libjvm: &Path) -> io::Result<(PathBuf, MappedFile)> {
    let through_root = process::in_process_root(pid, libjvm);
    match MappedFile::open(&through_root) {
        Ok(m) => Ok((through_root, m)),
        // Without access to /proc/<pid>/root, the same path on the host is the best guess.
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            MappedFile::open(libjvm).map(|m| (libjvm.to_path_buf(), m))
        }
        Err(e) => Err(e),
    }
}

enum LookupError {
    Io(io::Error),
    Missing(String),
}

impl From<io::Error> for LookupError {
    fn from(e: io::Error) -> Self {
        LookupError::Io(e)
    }
}

/// Walks the VMStructs table of the target for `PerfMemory::_start` and `_end`, returning
/// the addresses of those two static variables.
fn vm_structs_lookup(
    pid: u32,
    table_var: u64,
    symbol: &dyn Fn(&str) -> Option<u64>,
) -> Result<(u64, u64), LookupError> {
    let layout = |name: &str| -> Result<u64, LookupError> {
        let at = symbol(name)
            .ok_or_else(|| LookupError::Missing(format!("libjvm.so does not export {name}")))?;
        Ok(read_u64(pid, at)?)
    };
    let stride = layout("gHotSpotVMStructEntryArrayStride")?;
    let type_off = layout("gHotSpotVMStructEntryTypeNameOffset")?;
    let field_off = layout("gHotSpotVMStructEntryFieldNameOffset")?;
    let addr_off = layout("gHotSpotVMStructEntryAddressOffset")?;
    if !(8..=256).contains(&stride)
        || [type_off, field_off, addr_off]
            .iter()
            .any(|&o| o + 8 > stride)
    {
        return Err(LookupError::Missing(format!(
            "implausible VMStructs layout (stride {stride})"
        )));
    }
    let table = read_u64(pid, table_var)?;
    if table == 0 {
        return Err(LookupError::Missing(
            "gHotSpotVMStructs is not set yet".into(),
        ));
    }
    const CHUNK: u64 = 128;
    const NAME: &[u8] = b"PerfMemory\0";
    let (mut start, mut end) = (None, None);
    let mut chunk = vec![0u8; (CHUNK * stride) as usize];
    let field = |e: &[u8], off: u64| {
        u64::from_ne_bytes(
            e[off as usize..off as usize + 8]
                .try_into()
                .unwrap_or_default(),
        )
    };
    // The table holds a few thousand entries; stop at the NULL type name that ends it.
    for index in (0..100_000u64).step_by(CHUNK as usize) {
        read_remote(pid, table + index * stride, &mut chunk)?;
        for entry in chunk.chunks_exact(stride as usize) {
            let type_name = field(entry, type_off);
            if type_name == 0 {
                return match (start, end) {
                    (Some(s), Some(e)) => Ok((s, e)),
                    _ => Err(LookupError::Missing(
                        "VMStructs has no PerfMemory::_start/_end".into(),
                    )),
                };
            }
            let mut name = [0u8; NAME.len()];
            if read_remote(pid, type_name, &mut name).is_err() || name != NAME {
                continue;
            }
            let mut field_name = [0u8; 8];
            read_remote(pid, field(entry, field_off), &mut field_name)?;
            let address = field(entry, addr_off);
            match &field_name[..] {
                b"_start\0\0" | [b'_', b's', b't', b'a', b'r', b't', 0, _] => start = Some(address),
                [b'_', b'e', b'n', b'd', 0, ..] => end = Some(address),
                _ => {}
            }
            if let (Some(s), Some(e)) = (start, end) {
                return Ok((s, e));
            }
        }
    }
    Err(LookupError::Missing("VMStructs table has no end".into()))
}
