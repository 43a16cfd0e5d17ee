//! The readers of what other users control, on crafted and damaged input: libjvm.so's
//! symbols (an ELF file its owner may rewrite) and the VMStructs table (a process's memory).
//! Damage must give an error, never a panic, a hang or an unbounded allocation; intact
//! input must give the right answer, checked against `nm` for real libjvm.so files.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use pauselab_hsperf::fuzzing::{elf_symbols, vm_structs, VM_STRUCTS_VARIABLES};
use proptest::prelude::*;

const LIBJVMS: [&str; 2] = [
    "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so",
    "/usr/lib/jvm/temurin-25-jdk-amd64/lib/server/libjvm.so",
];
/// A small real shared library of the JDK, damaged below.
const SMALL_ELF: &str = "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjsig.so";

/// Symbol values as `nm` lists them (dynamic table, then the full one).
fn nm(path: &str, dynamic: bool) -> BTreeMap<String, u64> {
    let mut cmd = Command::new("nm");
    if dynamic {
        cmd.arg("-D");
    }
    let out = cmd
        .arg("--defined-only")
        .arg(path)
        .output()
        .expect("nm runs");
    assert!(out.status.success(), "nm {path} failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let mut f = line.split_whitespace();
            let value = u64::from_str_radix(f.next()?, 16).ok()?;
            let name = f.nth(1)?.split('@').next()?;
            Some((name.to_string(), value))
        })
        .collect()
}

#[test]
fn symbols_of_real_libjvm_match_nm() {
    let mut checked = 0;
    for path in LIBJVMS.iter().filter(|p| Path::new(p).exists()) {
        let bytes = std::fs::read(path).unwrap();
        let found = elf_symbols(&bytes).unwrap();
        let (exported, all) = (nm(path, true), nm(path, false));
        assert!(found.len() >= 7, "{path}: only {found:?}");
        for (name, value) in &found {
            let expected = exported.get(*name).or_else(|| all.get(*name));
            assert_eq!(expected, Some(value), "{path}: {name}");
        }
        checked += 1;
    }
    assert!(checked > 0, "no JDK found");
}

#[test]
fn truncated_libjvm_is_an_error_at_every_table() {
    let bytes = std::fs::read(LIBJVMS[0]).unwrap();
    // Cut inside the headers, the program headers, .dynsym and at the end (section headers).
    for cut in [0, 10, 63, 64, 200, 0x1000, bytes.len() / 2, bytes.len() - 1] {
        let err = elf_symbols(&bytes[..cut]).unwrap_err();
        assert!(!err.is_empty());
    }
}

#[test]
fn oversized_tables_are_refused_before_allocation() {
    let mut bytes = std::fs::read(SMALL_ELF).unwrap();
    // Every section claims a terabyte: the reader must refuse, not try to allocate.
    let shoff = u64::from_le_bytes(bytes[0x28..0x30].try_into().unwrap()) as usize;
    let shnum = u16::from_le_bytes(bytes[0x3c..0x3e].try_into().unwrap()) as usize;
    for i in 0..shnum {
        let size_at = shoff + i * 64 + 0x20;
        bytes[size_at..size_at + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    }
    let err = elf_symbols(&bytes).unwrap_err();
    assert!(err.contains("more than"), "{err}");
}

#[test]
fn string_table_without_terminators_is_scanned_in_bounded_time() {
    // Every byte of every string table becomes 'x': no name ends, so none matches, and a
    // lookup that scanned to the end of the table for each symbol would take minutes on
    // JDK 17's 2.7 MB .strtab and 88,000 symbols.
    let mut bytes = std::fs::read(LIBJVMS[0]).unwrap();
    let shoff = u64::from_le_bytes(bytes[0x28..0x30].try_into().unwrap()) as usize;
    let shnum = u16::from_le_bytes(bytes[0x3c..0x3e].try_into().unwrap()) as usize;
    for i in 0..shnum {
        let header = shoff + i * 64;
        let kind = u32::from_le_bytes(bytes[header + 4..header + 8].try_into().unwrap());
        if kind == 3 {
            // SHT_STRTAB
            let at = u64::from_le_bytes(bytes[header + 0x18..header + 0x20].try_into().unwrap());
            let size = u64::from_le_bytes(bytes[header + 0x20..header + 0x28].try_into().unwrap());
            bytes[at as usize..(at + size) as usize].fill(b'x');
        }
    }
    let started = std::time::Instant::now();
    assert_eq!(elf_symbols(&bytes), Ok(vec![]));
    assert!(
        started.elapsed().as_secs() < 10,
        "took {:?}",
        started.elapsed()
    );
}

/// HotSpot's VMStructs entry on 64-bit: typeName, fieldName, typeString, isStatic, offset,
/// address.
const STRIDE: u64 = 48;
const TABLE: u64 = 64;

/// Stores a native-endian u64 (a pointer or size of the target) at address `at`.
fn put(memory: &mut [u8], at: u64, v: u64) {
    memory[at as usize..at as usize + 8].copy_from_slice(&v.to_ne_bytes())
}

/// An address space holding the exported variables, a table of `entries` (type, field,
/// address) ended by a NULL entry, and the strings they point to.
fn image(layout: [u64; 4], entries: &[(&str, &str, u64)]) -> Vec<u8> {
    let strings_at = TABLE + STRIDE * (entries.len() as u64 + 1);
    let mut memory = vec![0u8; strings_at as usize];
    for (i, value) in layout.iter().enumerate() {
        put(&mut memory, VM_STRUCTS_VARIABLES[i].1, *value);
    }
    put(&mut memory, VM_STRUCTS_VARIABLES[4].1, TABLE);
    for (i, (type_name, field_name, address)) in entries.iter().enumerate() {
        let entry = TABLE + i as u64 * STRIDE;
        for (offset, text) in [(0, type_name), (8, field_name)] {
            let at = memory.len() as u64;
            memory.extend_from_slice(text.as_bytes());
            memory.push(0);
            put(&mut memory, entry + offset, at);
        }
        put(&mut memory, entry + 40, *address);
    }
    memory
}

const HOTSPOT_LAYOUT: [u64; 4] = [STRIDE, 0, 8, 40];
const ENTRIES: [(&str, &str, u64); 4] = [
    ("Universe", "_collectedHeap", 0x1111),
    ("PerfMemory", "_top", 0x4444),
    ("PerfMemory", "_start", 0x2222),
    ("PerfMemory", "_end", 0x3333),
];

#[test]
fn vm_structs_table_gives_perf_memory_addresses() {
    assert_eq!(
        vm_structs(&image(HOTSPOT_LAYOUT, &ENTRIES)),
        Ok((0x2222, 0x3333))
    );
    // Without PerfMemory::_end the walk ends at the NULL entry with an error.
    let err = vm_structs(&image(HOTSPOT_LAYOUT, &ENTRIES[..3])).unwrap_err();
    assert!(err.contains("no PerfMemory"), "{err}");
}

#[test]
fn hostile_vm_structs_layouts_are_refused() {
    // The layout seen in a fake libjvm.so: a type name offset of -4.
    let minus_four = [STRIDE, 0xFFFF_FFFF_FFFF_FFFC, 8, 40];
    for layout in [
        minus_four,
        [0, 0, 8, 40],
        [u64::MAX, 0, 8, 40],
        [STRIDE, 0, u64::MAX, 40],
        [STRIDE, 0, 8, STRIDE - 7],
        [1 << 40, 0, 8, 40],
    ] {
        let err = vm_structs(&image(layout, &ENTRIES)).unwrap_err();
        assert!(
            err.contains("implausible VMStructs layout"),
            "{layout:?}: {err}"
        );
    }
    // A table pointer past the end of memory.
    let mut memory = image(HOTSPOT_LAYOUT, &ENTRIES);
    memory[32..40].copy_from_slice(&u64::MAX.to_ne_bytes());
    assert!(vm_structs(&memory).is_err());
    // More entries than any HotSpot has, none of them PerfMemory: the walk gives up.
    let endless = image(HOTSPOT_LAYOUT, &vec![("Universe", "_x", 1); 101_000]);
    let err = vm_structs(&endless).unwrap_err();
    assert!(err.contains("has no end"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_vm_structs_layout_is_answered_without_panic(
        layout in proptest::array::uniform4(prop_oneof![
            0u64..64,
            Just(u64::MAX),
            Just(0xFFFF_FFFF_FFFF_FFFC),
            any::<u64>(),
        ]),
        flips in proptest::collection::vec((0usize..400, any::<u8>()), 0..6),
    ) {
        let mut memory = image(layout, &ENTRIES);
        let len = memory.len();
        for (at, byte) in flips {
            memory[at % len] = byte;
        }
        let _ = vm_structs(&memory);
    }

    #[test]
    fn intact_tables_are_read_under_any_valid_layout(
        stride_words in 3u64..8,
        order in Just([0u64, 1, 2]).prop_shuffle(),
    ) {
        // Fields at any distinct word offsets of an entry of any size.
        let stride = stride_words * 8;
        let [type_name, field_name, address] = order.map(|w| w * 8);
        let mut memory = vec![0u8; 64];
        let mut strings = Vec::new();
        let table_len = stride * (ENTRIES.len() as u64 + 1);
        let strings_at = TABLE + table_len;
        memory.resize(strings_at as usize, 0);
        for (i, v) in [stride, type_name, field_name, address, TABLE].into_iter().enumerate() {
            put(&mut memory, VM_STRUCTS_VARIABLES[i].1, v);
        }
        for (i, (t, f, a)) in ENTRIES.iter().enumerate() {
            let entry = TABLE + i as u64 * stride;
            for (offset, text) in [(type_name, t), (field_name, f)] {
                put(&mut memory, entry + offset, strings_at + strings.len() as u64);
                strings.extend_from_slice(text.as_bytes());
                strings.push(0);
            }
            put(&mut memory, entry + address, *a);
        }
        memory.extend_from_slice(&strings);
        prop_assert_eq!(vm_structs(&memory), Ok((0x2222, 0x3333)));
    }

    #[test]
    fn damaged_elf_files_are_answered_without_panic(
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..12),
        cut in any::<usize>(),
        in_headers in any::<bool>(),
    ) {
        let mut bytes = std::fs::read(SMALL_ELF).unwrap();
        let len = bytes.len();
        let shoff = u64::from_le_bytes(bytes[0x28..0x30].try_into().unwrap()) as usize;
        for (at, byte) in flips {
            // Half the cases aim at the file and section headers, where the offsets are.
            let at = if in_headers {
                if at % 2 == 0 { at % 64 } else { shoff + at % (len - shoff) }
            } else {
                at % len
            };
            bytes[at] = byte;
        }
        bytes.truncate(cut % (len + 1));
        let _ = elf_symbols(&bytes);
    }

    #[test]
    fn random_bytes_after_an_elf_header_are_answered_without_panic(
        tail in proptest::collection::vec(any::<u8>(), 0..4096),
    ) {
        let mut bytes = std::fs::read(SMALL_ELF).unwrap()[..64].to_vec();
        bytes.extend_from_slice(&tail);
        let _ = elf_symbols(&bytes);
    }
}
