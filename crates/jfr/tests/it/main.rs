//! The jfr crate's integration tests, one binary: a module per subject
//! (`cargo test -p pauselab-jfr --test it -- hostile::`).

mod support;

mod hostile;
mod real_recordings;
