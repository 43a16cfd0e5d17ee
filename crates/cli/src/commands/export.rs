//! `pauselab export`: serve the counters of every JVM on this host to Prometheus.

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;

use anyhow::Context;
use pauselab_export::{Exporter, Format, Options, Server, Source};

#[derive(clap::Args)]
pub struct Args {
    /// Address to listen on; loopback unless another address is asked for (e.g. 0.0.0.0:9404)
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:9404")]
    listen: SocketAddr,
    /// Where to read counters: the shared file, the JVM's memory, or the file when there is one
    #[arg(long, value_name = "auto|file|memory", default_value = "auto")]
    source: Source,
    /// Also expose every numeric hsperf counter as hsperf_<name>
    #[arg(long)]
    all_counters: bool,
    /// Print one scrape to standard output and exit (e.g. for node_exporter's textfile collector)
    #[arg(long)]
    once: bool,
    /// With --once: print OpenMetrics instead of the Prometheus text format
    #[arg(long, requires = "once")]
    openmetrics: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let exporter = Exporter::new(Options {
        source: args.source,
        all_counters: args.all_counters,
    });
    if args.once {
        let format = if args.openmetrics {
            Format::OpenMetrics
        } else {
            Format::Prometheus
        };
        let text = exporter.render(format);
        let mut stdout = std::io::stdout().lock();
        // A closed pipe goes up as it is: main ends quietly with status 141.
        stdout
            .write_all(text.as_bytes())
            .and_then(|_| stdout.flush())?;
        return Ok(ExitCode::SUCCESS);
    }
    let server = Server::bind(args.listen, exporter).context("pauselab export")?;
    eprintln!(
        "pauselab export: serving http://{}/metrics",
        server.local_addr()
    );
    // It only returns when it cannot serve any more: exit non-zero so that it is restarted.
    server.run().context("pauselab export")?;
    Ok(ExitCode::SUCCESS)
}
