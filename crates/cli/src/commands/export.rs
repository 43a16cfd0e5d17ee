//! `pauselab export`: serve the counters of every JVM on this host to Prometheus.
//!
//! The flags, the threads and the signals; the exporter, its journal and the
//! `--enable-gc-log` directory are pauselab-export's, the start-up line pauselab-render's.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use anyhow::Context;
use pauselab_export::{gc_log_root, Exporter, Format, Options, Server, Source, WebConfig};
use pauselab_render::print_serving;

use super::probe::stop_on_signals;

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
    /// Metric names: hotspot (pauselab's own), or otel to add the GC pause histogram under
    /// OpenTelemetry's name too (jvm_gc_duration_seconds{jvm_gc_name, jvm_gc_action})
    #[arg(long, value_name = "hotspot|otel", default_value = "hotspot")]
    names: Names,
    /// Print one scrape to standard output and exit (e.g. for node_exporter's textfile collector)
    #[arg(long)]
    once: bool,
    /// With --once: print OpenMetrics instead of the Prometheus text format
    #[arg(long, requires = "once")]
    openmetrics: bool,
    /// Turn GC and safepoint logging on (attach, VM.log) in JVMs that log neither, into
    /// DIR/<pid>/gc.log (4 files of 8 MiB at most), and off again on exit
    #[arg(long, value_name = "DIR", conflicts_with = "once")]
    enable_gc_log: Option<PathBuf>,
    /// With --enable-gc-log: only in JVMs whose main class, jar or module matches this glob
    #[arg(long, value_name = "GLOB", requires = "enable_gc_log")]
    enable_gc_log_for: Option<String>,
    /// Directory (root's, mode 0700) of the journal of GC logs turned on, so that the next
    /// start turns off what an exporter that was killed left on
    #[arg(
        long,
        value_name = "DIR",
        default_value = "/run/pauselab",
        conflicts_with = "once"
    )]
    state_dir: PathBuf,
    /// TLS and basic auth, in the Prometheus exporter-toolkit's web configuration format
    /// (YAML: tls_server_config, basic_auth_users), as node_exporter's --web.config.file
    #[arg(long = "web.config.file", value_name = "FILE", conflicts_with = "once")]
    web_config_file: Option<PathBuf>,
}

/// Which naming conventions the metrics follow; pauselab's own names are always there.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Names {
    /// pauselab's names only (`hotspot_*`, `pauselab_export_*`).
    Hotspot,
    /// Also OpenTelemetry's semantic-convention names where pauselab has the data.
    Otel,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    crate::give_freed_memory_back_at_once();
    // Read before anything else happens: a file that is wrong stops the start, never
    // leaves an exporter serving plain HTTP to anyone.
    let web_config = match &args.web_config_file {
        Some(path) => Some(WebConfig::load(path).context("pauselab export")?),
        None => None,
    };
    let enable_gc_log = args.enable_gc_log.as_deref().map(gc_log_root).transpose()?;
    let exporter = Exporter::new(Options {
        source: args.source,
        all_counters: args.all_counters,
        otel_names: args.names == Names::Otel,
        enable_gc_log,
        enable_gc_log_for: args.enable_gc_log_for,
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
    exporter
        .open_journal(&args.state_dir)
        .context("pauselab export")?;
    let exporter = Arc::new(exporter);
    let mut server =
        Server::bind_shared(args.listen, Arc::clone(&exporter)).context("pauselab export")?;
    print_serving(server.local_addr(), web_config.as_ref());
    if let Some(web) = web_config {
        server = server.with_web_config(web);
    }
    // The attach worker also watches for SIGTERM and SIGINT: it undoes what the exporter
    // did to JVMs (--enable-gc-log) within its deadline, then the process exits.
    let stop = stop_on_signals();
    let worker = Arc::clone(&exporter);
    let attach = std::thread::Builder::new()
        .name("export-attach".to_string())
        .spawn(move || {
            worker.run_gc_log_worker(stop);
            if stop.load(Ordering::Relaxed) {
                std::process::exit(0);
            }
        })
        .context("pauselab export: cannot start the attach thread")?;
    // It only returns when it cannot serve any more: exit non-zero so that it is restarted.
    let served = server.run().context("pauselab export");
    exporter.shutdown();
    let _ = attach.join();
    served?;
    Ok(ExitCode::SUCCESS)
}
