//! `pauselab`: find, reproduce and fix JVM stop-the-world pauses.
//!
//! This crate only parses the command line and wires library crates together; every
//! command lives in its own module under `commands/` and exposes `Args` and `run`.

// stdout and stderr may be closed pipes (`| head`): `println!`/`eprintln!` would panic
// there, and a lab run must never die before undoing its host changes. Output goes through
// `writeln!` and `?`, messages through `pauselab_pause::eprintln_lossy!`.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

mod commands;

/// mimalloc rather than glibc's malloc. With two threads or more, `analyze` frees on the
/// analysing thread the records that the reading threads parsed; glibc takes the reading
/// thread's arena lock for each such free, and the threads then wait on each other in the
/// kernel (futex). On the bench's 1 GB logs, two threads took 0.29 to 0.47 s with glibc,
/// and at times 0.9 to 1.4 s, three times one thread's 0.45 to 0.54 s; mimalloc hands a
/// block freed by another thread back without a lock: 0.22 to 0.31 s (docs/analyze.md,
/// "The allocator").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in the `mi_option_e` of mimalloc 2.x's `include/mimalloc.h`
/// (not among the constants `libmimalloc-sys` names): how many milliseconds freed memory is
/// kept before it goes back to the kernel, 10 by default, counted only while the thread
/// that freed it allocates again.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Has the allocator give freed memory back to the kernel as soon as a page of it is
/// free, for a process that runs for weeks. The exporter answers scrapes on four worker
/// threads that then wait for the next one; each kept the pages of the scrape it had
/// answered (a body of 16 MiB with 31 wide JVMs), and the exporter grew from 32 to 51 MB
/// over two scrapes and stayed there. At once, it went back to 15 MB after each
/// (docs/export.md). `analyze`, short and allocating all the time, keeps the default.
pub(crate) fn give_freed_memory_back_at_once() {
    // SAFETY: reads and writes an entry of the allocator's option table, which takes any
    // value at any time; the check that it holds the documented default keeps a renumbered
    // table from having another option changed.
    unsafe {
        if libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) == 10 {
            libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0);
        }
    }
}

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

#[derive(Parser)]
#[command(name = "pauselab", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Turn GC and safepoint logs (JDK 8 to 25) into pause histograms and a diagnosis
    Analyze(commands::analyze::Args),
    /// List every HotSpot JVM on this host, also those with -XX:+PerfDisableSharedMem
    Jvms(commands::jvms::Args),
    /// Print a JVM's perf counters (like `jcmd PID PerfCounter.print`), from file or memory
    Perf(commands::perf::Args),
    /// jstat-compatible statistics (-gcutil, -gc, -gccause, -class, -compiler, -printcompilation)
    Jstat(commands::jstat::Args),
    /// Send a diagnostic command to a JVM through the dynamic attach protocol
    Jcmd(commands::jcmd::Args),
    /// Serve the counters of every JVM on this host to Prometheus
    Export(commands::export::Args),
    /// Reproduce a stall scenario on this host and compare JVM variants side by side
    Lab(commands::lab::Args),
    /// Summarise HdrHistogram interval logs (jHiccup, the pauselab agent, pauselab itself)
    Hlog(commands::hlog::Args),
    /// Percentile and timeline charts and an HTML report from lab bundles, interval logs or GC logs
    Report(commands::report::Args),
    /// Audit this host and its running JVMs for stall risks
    Doctor(commands::doctor::Args),
    /// Watch one JVM live: safepoints, GC and what the host was doing at the same time
    Watch(commands::watch::Args),
    /// Measure stall risks directly (e.g. the latency of stores into a mapped file)
    Probe(commands::probe::Args),
    /// Write the man pages or a shell completion script (for packagers)
    #[command(hide = true)]
    Generate(commands::generate::Args),
}

/// A panic is a bug, not the user's input: one line naming where, instead of Rust's
/// message and backtrace note. Panics the exporter catches per JVM print this too, and the
/// JVM's series says `internal_error`.
fn report_panics_in_one_line() {
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let what = what.replace(['\n', '\r'], " ");
        pauselab_pause::eprintln_lossy!("pauselab: internal error: {what}{at} (a bug: please report it with the command that caused it)");
    }));
}

fn main() -> ExitCode {
    report_panics_in_one_line();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Usage errors, --help and --version: clap's message and exit code.
        Err(usage) => {
            if usage
                .print()
                .is_err_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            {
                return ExitCode::from(commands::EXIT_CLOSED_PIPE);
            }
            return ExitCode::from(u8::try_from(usage.exit_code()).unwrap_or(commands::EXIT_ERROR));
        }
    };
    let result = match cli.command {
        Command::Analyze(args) => commands::analyze::run(args),
        Command::Jvms(args) => commands::jvms::run(args),
        Command::Perf(args) => commands::perf::run(args),
        Command::Jstat(args) => commands::jstat::run(args),
        Command::Jcmd(args) => commands::jcmd::run(args),
        Command::Export(args) => commands::export::run(args),
        Command::Lab(args) => commands::lab::run(args),
        Command::Hlog(args) => commands::hlog::run(args),
        Command::Report(args) => commands::report::run(args),
        Command::Doctor(args) => commands::doctor::run(args),
        Command::Watch(args) => commands::watch::run(args),
        Command::Probe(args) => commands::probe::run(args),
        Command::Generate(args) => commands::generate::run(args, Cli::command()),
    };
    match result {
        Ok(code) => code,
        Err(err) if commands::is_closed_pipe(&err) => ExitCode::from(commands::EXIT_CLOSED_PIPE),
        Err(err) => {
            // One line, the whole cause chain: users grep for it and scripts log it.
            commands::print_error(&err);
            ExitCode::from(commands::EXIT_ERROR)
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_purge_delay_is_the_option_mimalloc_2_documents() {
        // SAFETY: reads an entry of the allocator's option table.
        let delay = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
        assert_eq!(delay, 10, "mimalloc's default purge delay, in ms");
    }
}
