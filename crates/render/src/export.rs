//! `pauselab export`'s start-up line.

use std::net::SocketAddr;

use pauselab_export::WebConfig;

/// Where the exporter serves, and what a client needs to get in (TLS, basic auth).
pub fn print_serving(addr: SocketAddr, web_config: Option<&WebConfig>) {
    let (scheme, protection) = match web_config {
        Some(web) => (
            if web.tls() { "https" } else { "http" },
            format!(" ({})", web.describe()),
        ),
        None => ("http", String::new()),
    };
    pauselab_pause::eprintln_lossy!(
        "pauselab export: serving {scheme}://{addr}/metrics{protection}"
    );
}
