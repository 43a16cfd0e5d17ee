//! Entry points for fuzz targets and property tests: the readers of bytes that other users
//! control, run on arbitrary input. Not a stable API.

use crate::elf::{ElfFile, Table};
use crate::memory::{self, WANTED_SYMBOLS};

/// The symbols the memory route looks for in libjvm.so, read from the bytes of an ELF
/// file as they would be read from disk: `(name, value)` in table order, `.dynsym` first.
pub fn elf_symbols(file: &[u8]) -> Result<Vec<(&'static str, u64)>, String> {
    let elf = ElfFile::read(file)?;
    let mut found = Vec::new();
    for table in [Table::Dynamic, Table::Full] {
        elf.find_symbols(table, &WANTED_SYMBOLS, &mut |name, value| {
            found.push((name, value))
        })?;
    }
    Ok(found)
}

/// Where the exported VMStructs variables sit in the address space given to
/// [`vm_structs`]: the entry size, the three field offsets, then `gHotSpotVMStructs`.
pub const VM_STRUCTS_VARIABLES: [(&str, u64); 5] = [
    ("gHotSpotVMStructEntryArrayStride", 0),
    ("gHotSpotVMStructEntryTypeNameOffset", 8),
    ("gHotSpotVMStructEntryFieldNameOffset", 16),
    ("gHotSpotVMStructEntryAddressOffset", 24),
    ("gHotSpotVMStructs", 32),
];

/// Walks a VMStructs table in `memory`, an address space in which address N is byte N,
/// with the exported variables at the addresses of [`VM_STRUCTS_VARIABLES`]. Returns the
/// addresses of `PerfMemory::_start` and `_end`, as the memory route does in a process.
pub fn vm_structs(memory: &[u8]) -> Result<(u64, u64), String> {
    let symbol = |name: &str| {
        VM_STRUCTS_VARIABLES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, at)| *at)
    };
    let table_var = symbol("gHotSpotVMStructs").unwrap_or_default();
    memory::find_perf_memory(memory, table_var, &symbol).map_err(|e| e.to_string())
}
