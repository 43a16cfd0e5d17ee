//! The VMStructs walk of the memory route on an arbitrary address space (the bytes stand
//! for a process's memory: layout variables, table pointer, entries, strings): an error or
//! two addresses, never a panic or an endless loop.
//! Run: `cargo +nightly fuzz run vm_structs` in fuzz/.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|memory: &[u8]| {
    let _ = pauselab_hsperf::fuzzing::vm_structs(memory);
});
