//! The gclog crate's integration tests, one binary: a module per subject
//! (`cargo test -p pauselab-gclog --test it -- pause_accounting::`).

mod support;

mod collector_from_pauses;
mod gcviewer_samples;
mod jdk8_g1_details_heap;
mod jdk8_interleaved_output;
mod pause_accounting;
mod pause_types;
mod random_input;
mod record_sink;
