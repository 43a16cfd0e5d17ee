//! The few facts the memory route needs from libjvm.so: where its first loadable segment
//! starts and the values of a handful of symbols.
//!
//! The file belongs to whoever runs the JVM and may be rewritten or truncated while it is
//! read, so it is never mapped: the headers and symbol tables are copied with `pread` into
//! buffers of capped size, and every offset, count and index from the file is checked.
//! The `object` crate supplies the ELF layouts; its own readers want the whole file in
//! memory (or cache reads without bound), hence this small walk over its types.

use std::mem::size_of;

use object::elf::{
    FileHeader64, ProgramHeader64, SectionHeader64, Sym64, ELFCLASS64, ELFDATA2LSB, ELFDATA2MSB,
    ELFMAG, PN_XNUM, PT_LOAD, SHT_DYNSYM, SHT_SYMTAB,
};
use object::pod::{self, Pod};
use object::Endianness;

use crate::read_at::ReadAt;

/// Largest symbol or string table read (libjvm.so of JDK 25: `.strtab` 3.3 MB, `.symtab`
/// 1.7 MB; a build with full debug symbols stays well below).
pub(crate) const MAX_TABLE_BYTES: u64 = 32 << 20;
/// Symbols copied per read while scanning a table.
const SYMBOLS_PER_READ: u64 = 4096;

/// Which symbol table to scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Table {
    /// `.dynsym`, the exported symbols (always present in a shared library).
    Dynamic,
    /// `.symtab`, all symbols including local ones (absent when stripped).
    Full,
}

/// An ELF64 file of this host's byte order, its headers copied.
pub(crate) struct ElfFile<'a, R: ReadAt + ?Sized> {
    file: &'a R,
    endian: Endianness,
    /// Lowest virtual address of a loadable segment, rounded down to a page.
    pub first_load_address: u64,
    sections: Vec<SectionHeader64<Endianness>>,
}

/// A reason the file cannot be used, for a message (the caller names the file).
pub(crate) type ElfError = String;

impl<'a, R: ReadAt + ?Sized> ElfFile<'a, R> {
    /// Reads and checks the file header, program headers and section headers.
    pub fn read(file: &'a R) -> Result<Self, ElfError> {
        let header: FileHeader64<Endianness> = read_one(file, 0, "ELF header")?;
        let ident = header.e_ident;
        if ident.magic != ELFMAG {
            return Err("not an ELF file".into());
        }
        if ident.class != ELFCLASS64 {
            return Err("not a 64-bit ELF file".into());
        }
        let endian = match ident.data {
            ELFDATA2LSB => Endianness::Little,
            ELFDATA2MSB => Endianness::Big,
            other => return Err(format!("unknown ELF byte order {other}")),
        };
        if endian != Endianness::default() {
            return Err("ELF byte order differs from this host's".into());
        }

        let phnum = header.e_phnum.get(endian);
        check_entry_size::<ProgramHeader64<Endianness>>(
            header.e_phentsize.get(endian),
            "program header",
        )?;
        if phnum == PN_XNUM {
            return Err("more program headers than this reader accepts".into());
        }
        let segments: Vec<ProgramHeader64<Endianness>> = read_many(
            file,
            header.e_phoff.get(endian),
            phnum.into(),
            "program headers",
        )?;
        let first_load_address = segments
            .iter()
            .filter(|s| s.p_type.get(endian) == PT_LOAD)
            .map(|s| s.p_vaddr.get(endian) & !0xfff)
            .min()
            .ok_or("no loadable segment")?;

        let shnum = header.e_shnum.get(endian);
        if shnum == 0 {
            return Err("no section headers (or more than this reader accepts)".into());
        }
        check_entry_size::<SectionHeader64<Endianness>>(
            header.e_shentsize.get(endian),
            "section header",
        )?;
        let sections = read_many(
            file,
            header.e_shoff.get(endian),
            shnum.into(),
            "section headers",
        )?;
        Ok(ElfFile {
            file,
            endian,
            first_load_address,
            sections,
        })
    }

    /// True if the file has this symbol table.
    pub fn has_table(&self, table: Table) -> bool {
        self.section_of(table).is_some()
    }

    fn section_of(&self, table: Table) -> Option<&SectionHeader64<Endianness>> {
        let wanted = match table {
            Table::Dynamic => SHT_DYNSYM,
            Table::Full => SHT_SYMTAB,
        };
        self.sections
            .iter()
            .find(|s| s.sh_type.get(self.endian) == wanted)
    }

    /// Calls `found(name, value)` for each symbol of `table` whose name is in `wanted`
    /// (the first definition of each name only). A missing table finds nothing.
    pub fn find_symbols(
        &self,
        table: Table,
        wanted: &[&'static str],
        found: &mut dyn FnMut(&'static str, u64),
    ) -> Result<(), ElfError> {
        let e = self.endian;
        let Some(symtab) = self.section_of(table) else {
            return Ok(());
        };
        let what = match table {
            Table::Dynamic => ".dynsym",
            Table::Full => ".symtab",
        };
        let entry_size = symtab.sh_entsize.get(e);
        if entry_size != size_of::<Sym64<Endianness>>() as u64 {
            return Err(format!("{what} has entries of {entry_size} bytes"));
        }
        let table_size = symtab.sh_size.get(e);
        check_table_size(table_size, what)?;
        let strtab = usize::try_from(symtab.sh_link.get(e))
            .ok()
            .and_then(|i| self.sections.get(i))
            .ok_or_else(|| format!("{what} names a string table that does not exist"))?;
        let strings_size = strtab.sh_size.get(e);
        check_table_size(strings_size, "its string table")?;
        let strings: Vec<u8> = read_bytes(
            self.file,
            strtab.sh_offset.get(e),
            strings_size,
            "string table",
        )?;

        let mut seen = vec![false; wanted.len()];
        let longest = wanted.iter().map(|w| w.len()).max().unwrap_or(0);
        let count = table_size / entry_size;
        let start = symtab.sh_offset.get(e);
        let mut index = 0;
        while index < count {
            let batch = (count - index).min(SYMBOLS_PER_READ);
            let offset = start
                .checked_add(index * entry_size)
                .ok_or_else(|| format!("{what} lies beyond the end of any file"))?;
            let symbols: Vec<Sym64<Endianness>> = read_many(self.file, offset, batch, what)?;
            for symbol in &symbols {
                let Some(name) = string_at(&strings, symbol.st_name.get(e), longest) else {
                    continue;
                };
                if let Some(i) = wanted.iter().position(|w| w.as_bytes() == name) {
                    if !seen[i] {
                        seen[i] = true;
                        found(wanted[i], symbol.st_value.get(e));
                    }
                }
            }
            index += batch;
        }
        Ok(())
    }
}

/// The NUL-terminated string at `offset` of a string table, if it is terminated within
/// `max_len` bytes. The bound keeps a table without NULs from costing a scan to its end
/// for every symbol.
fn string_at(strings: &[u8], offset: u32, max_len: usize) -> Option<&[u8]> {
    let rest = strings.get(usize::try_from(offset).ok()?..)?;
    let window = &rest[..rest.len().min(max_len.saturating_add(1))];
    let len = window.iter().position(|&b| b == 0)?;
    Some(&window[..len])
}

fn check_entry_size<T>(declared: u16, what: &str) -> Result<(), ElfError> {
    if usize::from(declared) == size_of::<T>() {
        Ok(())
    } else {
        Err(format!(
            "{what} entries of {declared} bytes (expected {})",
            size_of::<T>()
        ))
    }
}

fn check_table_size(size: u64, what: &str) -> Result<(), ElfError> {
    if size > MAX_TABLE_BYTES {
        Err(format!(
            "{what} is {size} bytes, more than the {} MiB this reader accepts",
            MAX_TABLE_BYTES >> 20
        ))
    } else {
        Ok(())
    }
}

fn read_bytes<R: ReadAt + ?Sized>(
    file: &R,
    offset: u64,
    len: u64,
    what: &str,
) -> Result<Vec<u8>, ElfError> {
    check_table_size(len, what)?;
    let mut buf = vec![0u8; len as usize];
    file.read_exact_at(&mut buf, offset)
        .map_err(|e| format!("reading the {what} ({len} bytes at {offset:#x}): {e}"))?;
    Ok(buf)
}

/// Copies `count` records of type `T` at `offset`. The bytes go into 8-aligned storage so
/// that `object`'s aligned record types can be viewed in place, then are copied out.
fn read_many<T: Pod, R: ReadAt + ?Sized>(
    file: &R,
    offset: u64,
    count: u64,
    what: &str,
) -> Result<Vec<T>, ElfError> {
    let len = count
        .checked_mul(size_of::<T>() as u64)
        .filter(|&l| l <= MAX_TABLE_BYTES)
        .ok_or_else(|| format!("{what}: {count} entries is more than this reader accepts"))?;
    let mut words = vec![0u64; (len as usize).div_ceil(8)];
    let bytes = &mut pod::bytes_of_slice_mut(&mut words)[..len as usize];
    file.read_exact_at(bytes, offset)
        .map_err(|e| format!("reading the {what} ({len} bytes at {offset:#x}): {e}"))?;
    let (records, _) =
        pod::slice_from_bytes::<T>(&pod::bytes_of_slice(&words)[..len as usize], count as usize)
            .map_err(|()| format!("{what}: misaligned records"))?;
    Ok(records.to_vec())
}

fn read_one<T: Pod, R: ReadAt + ?Sized>(file: &R, offset: u64, what: &str) -> Result<T, ElfError> {
    read_many::<T, R>(file, offset, 1, what)?
        .pop()
        .ok_or_else(|| format!("{what}: nothing read"))
}
