//! The HTTP endpoint: `/metrics`, `/` and `/healthz`, nothing else, all read-only.

use std::net::SocketAddr;
use std::sync::Arc;
use std::thread;

use tiny_http::{Header, Method, Request, Response};

use crate::exposition::Format;
use crate::{Error, Exporter};

/// Requests are served by this many threads; scrapes themselves run one at a time (the
/// exporter serialises them), so more threads would only queue.
const WORKERS: usize = 2;

/// A bound HTTP server for an [`Exporter`].
pub struct Server {
    http: Arc<tiny_http::Server>,
    exporter: Arc<Exporter>,
    local_addr: SocketAddr,
}

impl Server {
    /// Binds `addr` (port 0 picks a free port). Nothing is served before [`Server::run`].
    pub fn bind(addr: SocketAddr, exporter: Exporter) -> Result<Server, Error> {
        let http = tiny_http::Server::http(addr).map_err(|source| Error::Bind {
            addr,
            reason: source.to_string(),
        })?;
        let local_addr = http.server_addr().to_ip().ok_or_else(|| Error::Bind {
            addr,
            reason: "not an IP socket".to_string(),
        })?;
        Ok(Server {
            http: Arc::new(http),
            exporter: Arc::new(exporter),
            local_addr,
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Serves requests until the process ends.
    pub fn run(self) {
        let workers: Vec<_> = (0..WORKERS)
            .map(|_| {
                let http = Arc::clone(&self.http);
                let exporter = Arc::clone(&self.exporter);
                thread::spawn(move || {
                    for request in http.incoming_requests() {
                        handle(&exporter, request);
                    }
                })
            })
            .collect();
        for worker in workers {
            // A worker only ends when the listener is closed; a panic is a bug to surface.
            if let Err(panic) = worker.join() {
                std::panic::resume_unwind(panic);
            }
        }
    }
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes())
        .expect("header names and values are ASCII constants")
}

fn handle(exporter: &Exporter, request: Request) {
    if !matches!(request.method(), Method::Get | Method::Head) {
        let response =
            Response::from_string("only GET and HEAD are served: this endpoint is read-only\n")
                .with_status_code(405)
                .with_header(header("Allow", "GET, HEAD"))
                .with_header(header("Content-Type", "text/plain; charset=utf-8"));
        let _ = request.respond(response);
        return;
    }
    let path = request.url().split('?').next().unwrap_or("");
    let gzip = path == "/metrics"
        && request
            .headers()
            .iter()
            .filter(|h| h.field.equiv("Accept-Encoding"))
            .any(|h| accepts_gzip(h.value.as_str()));
    let (status, content_type, body) = match path {
        "/metrics" => {
            let accept = request
                .headers()
                .iter()
                .find(|h| h.field.equiv("Accept"))
                .map(|h| h.value.as_str().to_string());
            let format = Format::negotiate(accept.as_deref());
            (200, format.content_type(), exporter.render(format))
        }
        "/healthz" => (200, "text/plain; charset=utf-8", "ok\n".to_string()),
        "/" => (200, "text/html; charset=utf-8", index_page()),
        _ => (
            404,
            "text/plain; charset=utf-8",
            "not found: try /metrics, /healthz or /\n".to_string(),
        ),
    };
    // Prometheus asks for gzip; with many JVMs the text compresses about tenfold.
    let compressed = if gzip {
        gzip_bytes(body.as_bytes())
    } else {
        None
    };
    let gzipped = compressed.is_some();
    // tiny_http sends no body for HEAD requests.
    let mut response = Response::from_data(compressed.unwrap_or_else(|| body.into_bytes()))
        .with_status_code(status)
        .with_header(header("Content-Type", content_type));
    if gzip {
        response = response.with_header(header("Vary", "Accept-Encoding"));
    }
    if gzipped {
        response = response.with_header(header("Content-Encoding", "gzip"));
    }
    // The client may have gone away; there is nobody left to tell.
    let _ = request.respond(response);
}

/// Whether an `Accept-Encoding` value admits gzip (`gzip` or `*` without `q=0`).
fn accepts_gzip(value: &str) -> bool {
    value.split(',').any(|item| {
        let mut parts = item.split(';').map(str::trim);
        let coding = parts.next().unwrap_or_default();
        let refused = parts.any(|p| {
            p.strip_prefix("q=")
                .and_then(|q| q.parse::<f64>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        (coding.eq_ignore_ascii_case("gzip") || coding == "*") && !refused
    })
}

/// The body gzip-compressed; None if compression fails (the plain body is sent then).
fn gzip_bytes(body: &[u8]) -> Option<Vec<u8>> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(body).ok()?;
    encoder.finish().ok()
}

fn index_page() -> String {
    format!(
        "<!DOCTYPE html>\n<html><head><title>pauselab export</title></head><body>\n\
         <h1>pauselab export {}</h1>\n\
         <p>Counters of every HotSpot JVM on this host, read from hsperf data \
         (file or process memory), no agent, no JMX.</p>\n\
         <ul><li><a href=\"/metrics\">/metrics</a>: Prometheus text format, OpenMetrics \
         when the Accept header asks for it</li>\n\
         <li><a href=\"/healthz\">/healthz</a>: liveness</li></ul>\n\
         </body></html>\n",
        env!("CARGO_PKG_VERSION")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_encoding_values() {
        assert!(accepts_gzip("gzip"));
        assert!(accepts_gzip("deflate, GZIP;q=0.5"));
        assert!(accepts_gzip("*"));
        assert!(!accepts_gzip("gzip;q=0"));
        assert!(!accepts_gzip("identity"));
        assert!(!accepts_gzip("br, deflate"));
    }
}
