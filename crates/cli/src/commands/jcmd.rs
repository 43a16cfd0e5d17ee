//! `pauselab jcmd PID COMMAND...`: a diagnostic command through the HotSpot dynamic attach
//! protocol, without starting a JVM. Prints the JVM's reply; exits 0 if the JVM reports
//! success, else 1 (the reply says why).

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use pauselab_hsperf::attach::{self, AttachOptions, Protocol};
use pauselab_pause::input::escape_control_keeping_lines;
use pauselab_pause::units::{DurationSyntax, TimeUnit};

#[derive(clap::Args)]
pub struct Args {
    /// Pid of the JVM
    pid: u32,
    /// The diagnostic command and its arguments, e.g. `VM.version`, `GC.heap_info`,
    /// `Thread.print -l` (`help` lists them)
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    command: Vec<String>,
    /// Give up after this long, attach listener start-up included: 500ms, 10s, 1m; a bare
    /// number is seconds
    #[arg(long, default_value = "10", value_name = "DURATION",
          value_parser = |text: &str| TIMEOUT.parse(text))]
    timeout: Duration,
    /// Attach protocol version: auto (1 unless the request needs 2), 1 or 2
    #[arg(long, default_value = "auto", hide = true)]
    protocol: String,
}

/// `--timeout`: above 0 and at most an hour (already far beyond any attach); a bare number
/// is seconds.
const TIMEOUT: DurationSyntax = DurationSyntax::new(TimeUnit::Seconds)
    .at_least(Duration::from_millis(1))
    .at_most(Duration::from_secs(3600));

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let protocol = match args.protocol.as_str() {
        "auto" => Protocol::Auto,
        "1" => Protocol::V1,
        "2" => Protocol::V2,
        other => anyhow::bail!("unknown attach protocol {other:?}: use auto, 1 or 2"),
    };
    let options = AttachOptions {
        timeout: args.timeout,
        protocol,
        ..AttachOptions::default()
    };
    let reply = attach::jcmd(args.pid, &args.command.join(" "), options)?;
    // The reply is the process's own text: its lines stand, terminal escapes do not.
    let text = String::from_utf8_lossy(&reply.output);
    let mut out = std::io::stdout().lock();
    out.write_all(escape_control_keeping_lines(&text).as_bytes())
        .and_then(|_| out.flush())
        .context("writing to stdout")?;
    Ok(if reply.status == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::EXIT_ERROR)
    })
}
