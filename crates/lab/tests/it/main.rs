//! The lab crate's integration tests, one binary: a module per subject
//! (`cargo test -p pauselab-lab --test it -- layers::`).

mod jmh_result;
mod latency_log;
mod layers;
