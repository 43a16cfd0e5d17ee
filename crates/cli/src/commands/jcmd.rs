//! `pauselab jcmd PID COMMAND...`: a diagnostic command through the HotSpot dynamic attach
//! protocol, without starting a JVM. Prints the JVM's reply; exits 0 if the JVM reports
//! success, else 1 (the reply says why).

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use pauselab_hsperf::attach::{self, AttachOptions, Protocol};

#[derive(clap::Args)]
pub struct Args {
    /// Pid of the JVM
    pid: u32,
    /// The diagnostic command and its arguments, e.g. `VM.version`, `GC.heap_info`,
    /// `Thread.print -l` (`help` lists them)
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    command: Vec<String>,
    /// Give up after this many seconds (attach listener start-up included)
    #[arg(long, default_value = "10", value_name = "SECONDS", value_parser = parse_timeout)]
    timeout: Duration,
    /// Attach protocol version: auto (1 unless the request needs 2), 1 or 2
    #[arg(long, default_value = "auto", hide = true)]
    protocol: String,
}

/// Longest `--timeout` accepted: an hour is already far beyond any attach.
const MAX_TIMEOUT_SECONDS: f64 = 3600.0;

fn parse_timeout(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0 && *s <= MAX_TIMEOUT_SECONDS)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| {
            format!("must be a number of seconds above 0 and at most {MAX_TIMEOUT_SECONDS}")
        })
}

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
    let mut out = std::io::stdout().lock();
    out.write_all(&reply.output)
        .and_then(|_| out.flush())
        .context("writing to stdout")?;
    Ok(if reply.status == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::EXIT_ERROR)
    })
}
