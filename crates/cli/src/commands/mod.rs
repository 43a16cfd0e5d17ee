//! One module per command. Each exposes `Args` (clap) and `run(Args) -> Result<ExitCode>`.
//!
//! Exit codes shared by every command:
//! - 0: success;
//! - 1 ([`EXIT_ERROR`]): the command could not do its job (the message says why);
//! - 2: bad usage (clap's own code);
//! - 3 ([`EXIT_CONDITION`]): the command worked and the condition the user asked about
//!   holds (`analyze --fail-on`, a lab verdict of "vulnerable", ...).

pub mod analyze;
pub mod analyze_jfr;
pub mod doctor;
pub mod export;
pub mod hlog;
pub mod jcmd;
pub mod jstat;
pub mod jvms;
pub mod lab;
pub mod perf;
pub mod probe;
pub mod report;
pub mod watch;

pub const EXIT_ERROR: u8 = 1;
#[allow(dead_code)] // used by commands that gate on a condition
pub const EXIT_CONDITION: u8 = 3;
