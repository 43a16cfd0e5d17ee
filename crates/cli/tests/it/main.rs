//! The CLI's integration tests, one binary: a module per command or subject, run as
//! `cargo test -p pauselab --test it -- lab_cli::`. Tests that change the host (loop
//! devices, mounts, cgroups) or time a slow device take `host_lock::exclusive()` so that
//! no other such test runs beside them.

mod analyze_support;
mod contrib_support;
mod host_lock;
mod java_tools;
#[path = "../../../jfr/tests/it/support/mod.rs"]
mod jfr_support;
mod lab_support;
mod probe_slowdev;
mod process_support;

mod analyze_collectors;
mod analyze_findings;
mod analyze_fixtures;
mod analyze_hlog;
mod analyze_inputs;
mod analyze_jfr;
mod analyze_reference;
mod analyze_safepoint_timeout;
mod closed_pipe;
mod contrib;
mod doctor;
mod doctor_ttsp;
mod duration_flags;
mod export;
mod hlog_cli;
mod hostile_inputs;
mod hsperf_jvm;
mod lab_acceptance;
mod lab_cds;
mod lab_cleanup;
mod lab_cli;
mod lab_experiments;
mod lab_jfr_overhead;
mod lab_memory;
mod lab_memory_acceptance;
mod lab_swap;
mod package;
mod probe;
mod report_chromium;
mod report_cli;
mod watch;
