//! One module per command. Each exposes `Args` (clap) and `run(Args) -> Result<ExitCode>`.
//!
//! Exit codes shared by every command:
//! - 0: success;
//! - 1 ([`EXIT_ERROR`]): the command could not do its job (the message says why);
//! - 2: bad usage (clap's own code);
//! - 3 ([`EXIT_CONDITION`]): the command worked and the condition the user asked about
//!   holds (`analyze --fail-on`, a lab verdict of "vulnerable", ...);
//! - 141 ([`EXIT_CLOSED_PIPE`]): standard output was closed by its reader (`| head`), the
//!   status `cat` and `grep` end with; nothing is printed.

pub mod analyze;
pub mod doctor;
pub mod export;
pub mod generate;
pub mod hlog;
pub mod jcmd;
pub mod jstat;
pub mod jvms;
pub mod lab;
pub mod perf;
mod perf_pages;
pub mod probe;
pub mod report;
pub mod watch;

pub const EXIT_ERROR: u8 = 1;
/// 128 + SIGPIPE: what a shell reports for a command whose reader went away.
pub const EXIT_CLOSED_PIPE: u8 = 141;
#[allow(dead_code)] // used by commands that gate on a condition
pub const EXIT_CONDITION: u8 = 3;

/// Whether `error` comes from writing to a pipe whose reader has gone (`pauselab ... | head`).
/// Every command writes its output with `write!`/`writeln!` and `?`, so this one check in
/// `main` turns a closed pipe into a quiet exit for all of them.
/// A broken pipe elsewhere (a JVM closing its attach socket) stays an error.
pub fn is_closed_pipe(error: &anyhow::Error) -> bool {
    let broken_pipe = error.chain().any(|cause| {
        let kind = match cause.downcast_ref::<std::io::Error>() {
            Some(io) => Some(io.kind()),
            // serde_json keeps the io error inside rather than as its source.
            None => cause
                .downcast_ref::<serde_json::Error>()
                .and_then(serde_json::Error::io_error_kind),
        };
        kind == Some(std::io::ErrorKind::BrokenPipe)
    });
    broken_pipe && stdout_reader_gone()
}

/// Whether standard output is a pipe without a reader: poll(2) reports POLLERR then.
fn stdout_reader_gone() -> bool {
    let mut stdout = libc::pollfd {
        fd: libc::STDOUT_FILENO,
        events: 0,
        revents: 0,
    };
    // SAFETY: one pollfd, no waiting.
    let ready = unsafe { libc::poll(&mut stdout, 1, 0) };
    ready > 0 && stdout.revents & libc::POLLERR != 0
}

/// An error as one line on stderr: its causes joined by `: `, a cause already spelled out by
/// the message before it left out, control characters escaped.
/// For a command that reads a large input once and exits: freed memory is kept for the
/// next allocations instead of being handed back to the kernel. Reading a recording or a
/// log in chunks allocates and frees buffers of megabytes per chunk; glibc returned them
/// and the next chunk faulted every page in again (64,000 page faults and a tenth of the
/// wall time for a 1 GB recording). Peak memory is unchanged: only what was freed stays.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets two of glibc's allocator parameters, before any thread
    // of the command is started.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 64 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 512 << 20);
    }
}

pub fn print_error(error: &anyhow::Error) {
    pauselab_pause::eprintln_lossy!("pauselab: error: {}", one_line(error));
}

fn one_line(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue; // an error whose message already includes its source
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    pauselab_pause::input::escape_control(&line).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_is_printed_once() {
        let io = std::io::Error::from_raw_os_error(libc::ELOOP);
        let wrapped = anyhow::Error::new(pauselab_gclog::Error::Io("gc.log".into(), io))
            .context("reading logs");
        assert_eq!(
            one_line(&wrapped),
            "reading logs: gc.log: Too many levels of symbolic links (os error 40)"
        );
        let named = anyhow::anyhow!("bad\nname\u{1b}[31m");
        assert_eq!(one_line(&named), "bad\\nname\\u{1b}[31m");
    }
}
