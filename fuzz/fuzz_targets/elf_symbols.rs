//! libjvm.so symbol lookup on arbitrary bytes standing for the file (which its owner may
//! rewrite at will): an error or symbol values, never a panic or an unbounded allocation.
//! Seed with a real libjvm.so's first and last pages for quick coverage.
//! Run: `cargo +nightly fuzz run elf_symbols` in fuzz/.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|file: &[u8]| {
    let _ = pauselab_hsperf::fuzzing::elf_symbols(file);
});
