//! The memory route: find `PerfMemory::_start` in a running JVM and copy the region with
//! `process_vm_readv`. Works with -XX:+PerfDisableSharedMem, where no file exists.
//!
//! The address comes from libjvm.so's `.symtab` (local symbols `PerfMemory::_start` and
//! `_end`) when the library is not stripped, else from the exported `gHotSpotVMStructs`
//! table that the serviceability agent uses. The ELF file is the one mapped
//! (`/proc/<pid>/map_files`), else reached through `/proc/<pid>/root`, so a JVM in a
//! container is read with its own libjvm.so.
//!
//! The file and the memory belong to whoever runs the process, who may craft or truncate
//! them: the file is copied with `pread` (see `elf`), and every value read from the
//! process (entry layout, table pointer, region bounds) is checked before it is used.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use crate::elf::{ElfFile, Table};
use crate::error::{Error, Result};
use crate::process::{self, JvmMaps};
use crate::read_at::{ReadAt, RemoteMemory};

const START_SYMBOL: &str = "_ZN10PerfMemory6_startE";
const END_SYMBOL: &str = "_ZN10PerfMemory4_endE";
/// Every symbol either route needs.
pub(crate) const WANTED_SYMBOLS: [&str; 7] = [
    START_SYMBOL,
    END_SYMBOL,
    "gHotSpotVMStructs",
    "gHotSpotVMStructEntryArrayStride",
    "gHotSpotVMStructEntryTypeNameOffset",
    "gHotSpotVMStructEntryFieldNameOffset",
    "gHotSpotVMStructEntryAddressOffset",
];
/// Largest region accepted. HotSpot accepts `-XX:PerfDataMemorySize` up to 2 MiB (32 KiB
/// by default), rounded up to pages; anything larger is not a JVM's.
pub(crate) const MAX_REGION: u64 = 4 << 20;

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

/// Finds the perf data region of a running JVM, by `via` only if given (both routes are
/// tested against each other; callers normally use [`crate::Reader`]).
pub fn locate_region(pid: u32, via: Option<AddressSource>) -> Result<RemoteRegion> {
    let status = process::read_status(pid)?;
    let maps = process::read_maps(pid)?;
    locate(pid, status.uid, &maps, via)
}

/// Finds the perf data region of a JVM. `maps` must come from the same pid.
///
/// Everything read here comes from a process and a file that another user may control:
/// every failure is an error naming the pid, never a panic.
pub(crate) fn locate(
    pid: u32,
    uid: u32,
    maps: &JvmMaps,
    via: Option<AddressSource>,
) -> Result<RemoteRegion> {
    let libjvm = maps.libjvm.as_ref().ok_or(Error::NotJvm { pid })?;
    let mem_err = |reason: String| Error::Memory { pid, reason };
    let (elf_path, file) = open_libjvm(pid, maps, libjvm)
        .map_err(|e| mem_err(format!("cannot open {}: {e}", libjvm.display())))?;
    let unusable = |why: String| {
        mem_err(format!(
            "{} is not a usable libjvm.so ({why}); is this a HotSpot JVM?",
            elf_path.display()
        ))
    };
    let elf = ElfFile::read(&file).map_err(unusable)?;
    // Load bias: where the first loadable segment ended up (addresses only go to
    // process_vm_readv, which refuses bad ones, hence wrapping arithmetic).
    let bias = maps.libjvm_base.wrapping_sub(elf.first_load_address);

    // One pass over each symbol table (.symtab has ~70,000 entries): the exported
    // table first, the local PerfMemory symbols only if the route may use them.
    let mut found: Vec<(&str, u64)> = Vec::new();
    let mut record = |name: &'static str, value: u64| {
        if !found.iter().any(|(n, _)| *n == name) {
            found.push((name, value.wrapping_add(bias)));
        }
    };
    elf.find_symbols(Table::Dynamic, &WANTED_SYMBOLS, &mut record)
        .map_err(unusable)?;
    if via != Some(AddressSource::VmStructs) {
        elf.find_symbols(Table::Full, &WANTED_SYMBOLS, &mut record)
            .map_err(unusable)?;
    }
    let symbol =
        |name: &str| -> Option<u64> { found.iter().find(|(n, _)| *n == name).map(|(_, a)| *a) };

    let memory = RemoteMemory { pid };
    let remote = |e| remote_error(pid, uid, e);
    let from_symtab = match via {
        Some(AddressSource::VmStructs) => None,
        _ => symbol(START_SYMBOL).zip(symbol(END_SYMBOL)),
    };
    let (start_var, end_var, via) = match (from_symtab, via) {
        (Some((s, e)), _) => (s, e, AddressSource::Symtab),
        (None, Some(AddressSource::Symtab)) => {
            let why = if elf.has_table(Table::Full) {
                "has no PerfMemory symbols in .symtab"
            } else {
                "has no .symtab (stripped)"
            };
            return Err(mem_err(format!("{} {why}", elf_path.display())));
        }
        (None, _) => {
            let table = symbol("gHotSpotVMStructs").ok_or_else(|| {
                mem_err(format!(
                    "{} has neither PerfMemory symbols nor gHotSpotVMStructs",
                    elf_path.display()
                ))
            })?;
            let (s, e) = find_perf_memory(&memory, table, &symbol).map_err(|err| match err {
                LookupError::Io(e) => remote(e),
                LookupError::Invalid(why) => mem_err(format!(
                    "{why}; the process may not be a HotSpot JVM, or is still starting: retry"
                )),
            })?;
            (s, e, AddressSource::VmStructs)
        }
    };
    let start = memory.read_u64(start_var).map_err(remote)?;
    let end = memory.read_u64(end_var).map_err(remote)?;
    if start == 0 {
        return Err(Error::PerfDataDisabled { pid });
    }
    match end.checked_sub(start) {
        Some(size) if size > 0 && size <= MAX_REGION => Ok(RemoteRegion {
            address: start,
            size,
            via,
        }),
        _ => Err(mem_err(format!(
            "implausible region {start:#x}..{end:#x} (at most {} MiB); the JVM may still be starting, retry",
            MAX_REGION >> 20
        ))),
    }
}

/// Opens the libjvm.so that `pid` maps, without following the owner's tricks:
/// `/proc/<pid>/map_files/<range>` is the very file mapped (root only), then the path
/// through `/proc/<pid>/root` (the container's own file), then the path on this host.
fn open_libjvm(pid: u32, maps: &JvmMaps, libjvm: &Path) -> io::Result<(PathBuf, File)> {
    let (start, end) = maps.libjvm_range;
    let candidates = [
        process::proc_path(pid, &format!("map_files/{start:x}-{end:x}")),
        process::in_process_root(pid, libjvm),
        libjvm.to_path_buf(),
    ];
    let mut last_error = None;
    for path in candidates {
        match process::open_regular_file(&path, process::Follow::Links) {
            Ok(file) => return Ok((path, file)),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::PermissionDenied | io::ErrorKind::NotFound
                ) =>
            {
                last_error = Some(e)
            }
            Err(e) => return Err(e),
        }
    }
    Err(last_error.unwrap_or_else(|| io::ErrorKind::NotFound.into()))
}

/// Why the VMStructs walk failed.
#[derive(Debug)]
pub(crate) enum LookupError {
    /// The target's memory could not be read.
    Io(io::Error),
    /// What was read makes no sense for a HotSpot JVM.
    Invalid(String),
}

impl From<io::Error> for LookupError {
    fn from(e: io::Error) -> Self {
        LookupError::Io(e)
    }
}

impl std::fmt::Display for LookupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LookupError::Io(e) => write!(f, "reading memory: {e}"),
            LookupError::Invalid(why) => f.write_str(why),
        }
    }
}

/// The layout of one VMStructs entry, as the JVM exports it. All offsets are checked to
/// lie inside an entry, so reading a field of an entry cannot go out of bounds.
#[derive(Debug, Clone, Copy)]
struct EntryLayout {
    stride: u64,
    type_name: u64,
    field_name: u64,
    address: u64,
}

/// Entries in HotSpot's table: a few thousand; past this the table has no end.
const MAX_VM_STRUCTS_ENTRIES: u64 = 100_000;
/// Largest entry accepted (HotSpot's is 48 bytes on 64-bit).
const MAX_ENTRY_STRIDE: u64 = 256;

impl EntryLayout {
    fn read(
        memory: &(impl ReadAt + ?Sized),
        symbol: &dyn Fn(&str) -> Option<u64>,
    ) -> Result<EntryLayout, LookupError> {
        let value = |name: &str| -> Result<u64, LookupError> {
            let at = symbol(name)
                .ok_or_else(|| LookupError::Invalid(format!("libjvm.so does not export {name}")))?;
            Ok(memory.read_u64(at)?)
        };
        let layout = EntryLayout {
            stride: value("gHotSpotVMStructEntryArrayStride")?,
            type_name: value("gHotSpotVMStructEntryTypeNameOffset")?,
            field_name: value("gHotSpotVMStructEntryFieldNameOffset")?,
            address: value("gHotSpotVMStructEntryAddressOffset")?,
        };
        let inside = |offset: u64| {
            offset
                .checked_add(8)
                .is_some_and(|end| end <= layout.stride)
        };
        if !(8..=MAX_ENTRY_STRIDE).contains(&layout.stride)
            || ![layout.type_name, layout.field_name, layout.address]
                .into_iter()
                .all(inside)
        {
            return Err(LookupError::Invalid(format!(
                "implausible VMStructs layout (entry size {}, field offsets {:#x}, {:#x}, {:#x})",
                layout.stride, layout.type_name, layout.field_name, layout.address
            )));
        }
        Ok(layout)
    }

    /// The pointer-sized field at `offset` of one entry.
    fn field(&self, entry: &[u8], offset: u64) -> Option<u64> {
        let start = usize::try_from(offset).ok()?;
        let bytes = entry.get(start..start.checked_add(8)?)?;
        Some(u64::from_ne_bytes(bytes.try_into().ok()?))
    }
}

/// Walks the VMStructs table (`gHotSpotVMStructs` is at `table_var`) for
/// `PerfMemory::_start` and `_end`, returning the addresses of those two static variables.
/// `symbol` gives the run-time address of an exported symbol.
pub(crate) fn find_perf_memory(
    memory: &(impl ReadAt + ?Sized),
    table_var: u64,
    symbol: &dyn Fn(&str) -> Option<u64>,
) -> Result<(u64, u64), LookupError> {
    let layout = EntryLayout::read(memory, symbol)?;
    let table = memory.read_u64(table_var)?;
    if table == 0 {
        return Err(LookupError::Invalid(
            "gHotSpotVMStructs is not set yet".into(),
        ));
    }
    const ENTRIES_PER_READ: u64 = 128;
    const TYPE: &[u8] = b"PerfMemory\0";
    let (mut start, mut end) = (None, None);
    let mut chunk = vec![0u8; (ENTRIES_PER_READ * layout.stride) as usize];
    let past_end = || LookupError::Invalid("VMStructs table runs past the address space".into());
    // Stop at the entry with a NULL type name that ends the table.
    for first in (0..MAX_VM_STRUCTS_ENTRIES).step_by(ENTRIES_PER_READ as usize) {
        let at = table
            .checked_add(first * layout.stride)
            .ok_or_else(past_end)?;
        // A short read means the table reached the end of its mapping: use whole entries.
        let got = memory.read_at(&mut chunk, at)?;
        let whole = &chunk[..got - got % layout.stride as usize];
        if whole.is_empty() {
            return Err(past_end());
        }
        for entry in whole.chunks_exact(layout.stride as usize) {
            let pointer = |offset| layout.field(entry, offset).ok_or_else(past_end);
            let type_name = pointer(layout.type_name)?;
            if type_name == 0 {
                return match (start, end) {
                    (Some(s), Some(e)) => Ok((s, e)),
                    _ => Err(LookupError::Invalid(
                        "VMStructs has no PerfMemory::_start/_end".into(),
                    )),
                };
            }
            let mut name = [0u8; TYPE.len()];
            if memory.read_exact_at(&mut name, type_name).is_err() || name != TYPE {
                continue;
            }
            // "_start\0" at most; a shorter name may end right at the end of a mapping.
            let mut field_name = [0u8; 7];
            let got = memory.read_at(&mut field_name, pointer(layout.field_name)?)?;
            let field = field_name[..got]
                .iter()
                .position(|&b| b == 0)
                .map(|len| &field_name[..len]);
            let address = pointer(layout.address)?;
            match field {
                Some(b"_start") => start = Some(address),
                Some(b"_end") => end = Some(address),
                _ => {}
            }
            if let (Some(s), Some(e)) = (start, end) {
                return Ok((s, e));
            }
        }
    }
    Err(LookupError::Invalid("VMStructs table has no end".into()))
}
