//! Prometheus exporter for the counters of every HotSpot JVM on the host.
//!
//! No agent, no JMX, no JVM started per scrape: each scrape finds every JVM (also those
//! running with `-XX:+PerfDisableSharedMem`), takes a consistent snapshot of its hsperf
//! counters (from the shared file or straight from the JVM's memory) and turns them into
//! metrics with base units. Each JVM's own GC and safepoint log, followed as it grows,
//! gives the distributions of its pauses (histograms). Metric names and labels are listed
//! in docs/export.md.
//!
//! ```no_run
//! use pauselab_export::{Exporter, Format, Options, Server};
//!
//! let exporter = Exporter::new(Options::default());
//! print!("{}", exporter.render(Format::Prometheus)); // one scrape
//! let server = Server::bind("127.0.0.1:9404".parse().unwrap(), exporter).unwrap();
//! server.run().unwrap(); // serves /metrics, / and /healthz until the listener fails
//! ```

mod budget;
mod connection;
mod counters;
mod discovery;
mod enable;
mod exposition;
mod gc_logs;
mod http;
mod journal;
mod metrics;
mod scrape;
mod server;
mod web_config;

use std::net::SocketAddr;

pub use enable::gc_log_root;
pub use exposition::{encode, openmetrics_to_prometheus, Format};
pub use pauselab_hsperf::Source;
pub use scrape::{Exporter, Options};
pub use server::Server;
pub use web_config::WebConfig;

/// Errors of the exporter itself (a JVM that cannot be read is a metric, not an error).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot listen on {addr}: {reason} (is another exporter already running? pick another port with --listen)")]
    Bind { addr: SocketAddr, reason: String },
    /// The server could not go on accepting connections (e.g. out of file descriptors):
    /// a service manager should restart it.
    #[error("stopped serving on {addr}: {reason} (raise the open file limit, e.g. LimitNOFILE= in the systemd unit)")]
    Listener { addr: SocketAddr, reason: String },
    /// The state directory for the journal of GC logs turned on is not usable.
    /// `--web.config.file` cannot be read or is not valid.
    #[error("--web.config.file {}: {reason}", path.display())]
    WebConfig {
        path: std::path::PathBuf,
        reason: String,
    },
    #[error("cannot keep the journal of GC logs turned on: {reason}")]
    Journal { reason: String },
    /// The directory of `--enable-gc-log` cannot hold other users' log directories.
    #[error("--enable-gc-log {0}")]
    GcLogRoot(String),
}
