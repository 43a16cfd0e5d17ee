//! What a person reads in the terminal, one file per subject (as hyperfine's `export/` holds
//! one file per format): a command gathers its facts and hands them to its renderer here.

pub mod analyze;
pub mod doctor;
pub mod export;
pub mod hlog;
pub mod jfr;
pub mod jvms;
pub mod lab_conclusions;
pub mod lab_list;
pub mod lab_matrix;
pub mod lab_plan;
pub mod lab_progress;
pub mod lab_table;
pub mod perf;
pub mod probe;
pub mod report;
pub mod table;
pub mod watch;
