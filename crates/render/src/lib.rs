//! What pauselab's commands print: the terminal text and the `--json` documents, one module
//! per subject (as hyperfine's `export/` holds one file per format). A command gathers its
//! facts and hands them to its renderer here; the modules are private and the list below is
//! everything the commands call.

#![deny(missing_docs)]
// stdout and stderr may be closed pipes (`| head`): `println!`/`eprintln!` would panic
// there. Text goes to the writer a command hands over, messages through
// `pauselab_pause::eprintln_lossy!`.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

mod analyze;
mod doctor;
mod export;
mod hlog;
mod jfr;
mod jstat;
mod jvms;
mod lab_conclusions;
mod lab_list;
mod lab_matrix;
mod lab_plan;
mod lab_progress;
mod lab_table;
mod perf;
mod perf_pages;
mod probe;
mod report;
mod table;
mod watch;

pub use analyze::{print_analysis_warnings, print_condition_holds, write_analysis, AnalyzedJvms};
pub use doctor::{render_doctor, DoctorReport};
pub use export::print_serving;
pub use hlog::{write_hlog_hgrm, write_hlog_json, write_hlog_table, HlogShown};
pub use jstat::{write_jstat_json, write_jstat_row};
pub use jvms::{render_jvms, ListedJvm};
pub use lab_list::{print_cleanup, print_experiments, ListedExperiment};
pub use lab_matrix::{print_matrix, MatrixLines};
pub use lab_plan::print_plan;
pub use lab_progress::Bars;
pub use lab_table::print_run;
pub use perf::{write_perf_cost, write_perf_json, write_perf_text};
pub use perf_pages::{write_pages_json, write_pages_text};
pub use probe::{describe_pattern, render_probe, ProbeReport};
pub use report::{report_json, report_text, write_pngs, ReportFiles};
pub use watch::{watch_line, watch_table, write_watch_json};
