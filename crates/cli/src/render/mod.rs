//! What a person reads in the terminal, one file per subject (as hyperfine's `export/` holds
//! one file per format): a command gathers its facts and hands them to its renderer here.

pub mod doctor;
pub mod jvms;
pub mod perf;
pub mod probe;
pub mod report;
pub mod table;
pub mod watch;
