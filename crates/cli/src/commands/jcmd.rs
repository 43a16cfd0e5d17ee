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
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    timeout: f64,
    /// Attach protocol version: auto (1 unless the request needs 2), 1 or 2
    #[arg(long, default_value = "auto", hide = true)]
    protocol: String,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let protocol = match args.protocol.as_str() {
        "auto" => Protocol::Auto,
        "1" => Protocol::V1,
        "2" => Protocol::V2,
        other => anyhow::bail!("unknown attach protocol {other:?}: use auto, 1 or 2"),
    };
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        anyhow::bail!("--timeout must be a positive number of seconds");
    }
    let options = AttachOptions {
        timeout: Duration::from_secs_f64(args.timeout),
        protocol,
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
