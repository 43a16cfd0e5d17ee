//! The hsperf crate's integration tests, one binary: a module per subject
//! (`cargo test -p pauselab-hsperf --test it -- format::`).

mod format;
mod untrusted_input;
