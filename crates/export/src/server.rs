//! The HTTP endpoint: `/metrics`, `/` and `/healthz`, nothing else, all read-only.
//!
//! A fixed set of threads whatever the clients do: one thread accepts connections and reads
//! request heads from all of them at once (non-blocking sockets and `poll`), two workers
//! answer `/metrics`. Every resource a client can make the server hold is bounded: open
//! connections, bytes and time per request head, queued scrapes, time to send a response.
//! With `--web.config.file`, connections are TLS (the handshake read by the same `poll`
//! loop, under the head deadline) and requests need a password.
//! A general-purpose HTTP stack would bring an async runtime or a thread per connection for
//! three read-only paths; docs/export.md says why this one is written out.

use std::collections::VecDeque;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::connection::{Connection, PlainHttpOnTls};
use crate::exposition::{encode_into, Format};
use crate::http::{self, Body, Parsed, Request, Response, MAX_HEAD_BYTES};
use crate::web_config::{BasicAuth, Remembered, WebConfig, WebSettings};
use crate::{Error, Exporter};

/// Connections still sending their request head. One more evicts the oldest, so a client
/// holding many idle connections cannot lock out a scraper, and file descriptors stay far
/// below the usual limit of 1,024.
const MAX_CONNECTIONS: usize = 256;
/// A request head must be complete this long after the connection was accepted (with TLS,
/// the handshake too).
const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// Threads answering `/metrics`. Scrapes run one at a time (the exporter serialises them),
/// so more would only wait; the second one sends a finished response while the next
/// scrape runs.
const WORKERS: usize = 2;
/// `/metrics` requests waiting for a worker; more get 503.
const QUEUED_SCRAPES: usize = 16;
/// A response must be sent within this long, however slowly the client reads.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// A client that takes none of the response for this long is cut off: a client that never
/// reads holds a worker no longer than this (the socket buffers hold a few MiB of a body
/// of up to 16 MiB), so two of them cannot keep both workers from other clients.
const SEND_STALL_TIMEOUT: Duration = Duration::from_secs(1);
/// Connections accepted per wake-up before reading heads again.
const ACCEPT_BATCH: usize = 64;
/// After an `accept` failure (e.g. out of file descriptors), wait this long before the next.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);
/// `accept` failing for this long without a success stops the server with an error, so
/// that a service manager restarts it rather than leaving a process that serves nothing.
const ACCEPT_FAILING_LIMIT: Duration = Duration::from_secs(5);

/// A bound HTTP server for an [`Exporter`].
pub struct Server {
    listener: TcpListener,
    exporter: Arc<Exporter>,
    local_addr: SocketAddr,
    web: Option<Arc<WebConfig>>,
}

impl Server {
    /// Binds `addr` (port 0 picks a free port). Nothing is served before [`Server::run`].
    pub fn bind(addr: SocketAddr, exporter: Exporter) -> Result<Server, Error> {
        Server::bind_shared(addr, Arc::new(exporter))
    }

    /// [`Server::bind`] for an exporter also used elsewhere (e.g. to shut it down on a
    /// signal).
    pub fn bind_shared(addr: SocketAddr, exporter: Arc<Exporter>) -> Result<Server, Error> {
        let bind_error = |source: io::Error| Error::Bind {
            addr,
            reason: source.to_string(),
        };
        let listener = TcpListener::bind(addr).map_err(bind_error)?;
        listener.set_nonblocking(true).map_err(bind_error)?;
        let local_addr = listener.local_addr().map_err(bind_error)?;
        Ok(Server {
            listener,
            exporter,
            local_addr,
            web: None,
        })
    }

    /// Serves with TLS and/or basic authentication as `--web.config.file` says.
    pub fn with_web_config(mut self, config: WebConfig) -> Server {
        self.web = Some(Arc::new(config));
        self
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Serves requests. Returns only when the server cannot go on: connections could not be
    /// accepted for 5 s (`ACCEPT_FAILING_LIMIT`; e.g. out of file descriptors).
    pub fn run(self) -> Result<(), Error> {
        let (scrapes, queue) = mpsc::sync_channel::<Scrape>(QUEUED_SCRAPES);
        let queue = Arc::new(Mutex::new(queue));
        for n in 0..WORKERS {
            let queue = Arc::clone(&queue);
            let exporter = Arc::clone(&self.exporter);
            thread::Builder::new()
                .name(format!("export-worker-{n}"))
                .spawn(move || answer_scrapes(&queue, &exporter))
                .map_err(|e| self.listener_error(format!("cannot start a worker thread: {e}")))?;
        }
        let mut heads = Heads {
            pending: VecDeque::new(),
            poll_fds: Vec::new(),
        };
        let mut accept_failing_since: Option<Instant> = None;
        let mut accept_paused_until: Option<Instant> = None;
        loop {
            let now = Instant::now();
            let listening = accept_paused_until.is_none_or(|until| now >= until);
            let wake_at = heads
                .oldest_deadline()
                .into_iter()
                .chain(accept_paused_until.filter(|_| !listening))
                .min();
            let ready = heads.wait(&self.listener, listening, wake_at);
            let listener_ready = ready.map_err(|e| self.listener_error(format!("poll: {e}")))?;

            heads.read_ready(&scrapes);
            heads.expire(Instant::now());

            if listening {
                accept_paused_until = None;
            }
            if !(listening && listener_ready) {
                continue;
            }
            for _ in 0..ACCEPT_BATCH {
                match self.listener.accept() {
                    Ok((stream, _)) => {
                        accept_failing_since = None;
                        // The settings in force when the connection came: its handshake
                        // and its request are judged by them.
                        let settings = self.web.as_ref().map(|web| web.current());
                        heads.admit(stream, settings);
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    // The client gave up before it was accepted: nothing to do.
                    Err(e) if is_passing_accept_error(&e) => {}
                    Err(e) => {
                        // Most likely out of file descriptors: free one, wait a little, and
                        // give up if it lasts.
                        let since = *accept_failing_since.get_or_insert_with(Instant::now);
                        if since.elapsed() >= ACCEPT_FAILING_LIMIT {
                            return Err(self.listener_error(format!(
                                "accepting connections failed for {} s: {e}",
                                ACCEPT_FAILING_LIMIT.as_secs()
                            )));
                        }
                        heads.evict_oldest();
                        accept_paused_until = Some(Instant::now() + ACCEPT_BACKOFF);
                        break;
                    }
                }
            }
        }
    }

    fn listener_error(&self, reason: String) -> Error {
        Error::Listener {
            addr: self.local_addr,
            reason,
        }
    }
}

fn is_passing_accept_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
    )
}

fn basic_auth(settings: &Option<Arc<WebSettings>>) -> Option<&BasicAuth> {
    settings.as_ref().and_then(|web| web.basic_auth.as_ref())
}

/// A request handed to a worker: `/metrics`, or any request whose password needs bcrypt.
struct Scrape {
    connection: Connection,
    request: Request,
    /// The credentials were not verified yet.
    verify: bool,
    /// `--web.config.file`'s settings when the connection came.
    settings: Option<Arc<WebSettings>>,
}

/// A connection whose request head is still arriving.
struct PendingHead {
    connection: Connection,
    settings: Option<Arc<WebSettings>>,
    deadline: Instant,
    received: Vec<u8>,
}

/// Every connection still sending its head, oldest first.
struct Heads {
    pending: VecDeque<PendingHead>,
    /// Reused between wake-ups: one entry per pending connection, then the listener.
    poll_fds: Vec<libc::pollfd>,
}

impl Heads {
    fn oldest_deadline(&self) -> Option<Instant> {
        // Deadlines grow with the accept order.
        self.pending.front().map(|c| c.deadline)
    }

    /// Waits until a pending connection or (if `listening`) the listener is readable, or
    /// until `wake_at`. Returns whether the listener is readable.
    fn wait(
        &mut self,
        listener: &TcpListener,
        listening: bool,
        wake_at: Option<Instant>,
    ) -> io::Result<bool> {
        let readable = |fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // A TLS handshake may have records the socket did not take yet.
        let waited_for = |c: &PendingHead| libc::pollfd {
            events: libc::POLLIN
                | if c.connection.wants_write() {
                    libc::POLLOUT
                } else {
                    0
                },
            ..readable(c.connection.fd())
        };
        self.poll_fds.clear();
        self.poll_fds.extend(self.pending.iter().map(waited_for));
        // A negative descriptor is skipped by poll: the listener waits out its back-off.
        let listener_fd = if listening { listener.as_raw_fd() } else { -1 };
        self.poll_fds.push(readable(listener_fd));
        let timeout_ms = wake_at.map_or(1_000, |at| {
            let left = at.saturating_duration_since(Instant::now());
            // Round up so that a deadline is past when poll returns.
            (left.as_millis() as i32).saturating_add(1).min(1_000)
        });
        // SAFETY: poll_fds is a valid, exclusively borrowed array of pollfd of this length.
        let ready = unsafe {
            libc::poll(
                self.poll_fds.as_mut_ptr(),
                self.poll_fds.len() as libc::nfds_t,
                timeout_ms,
            )
        };
        if ready < 0 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                return Ok(false);
            }
            return Err(error);
        }
        Ok(self.poll_fds.last().is_some_and(|p| p.revents != 0))
    }

    /// Reads from every connection `wait` found readable; a complete head is answered or
    /// handed to a worker, and the connection leaves the pending set.
    fn read_ready(&mut self, scrapes: &SyncSender<Scrape>) {
        let mut index = 0;
        let mut kept = VecDeque::with_capacity(self.pending.len());
        while let Some(mut connection) = self.pending.pop_front() {
            let was_ready = self.poll_fds.get(index).is_some_and(|p| p.revents != 0);
            index += 1;
            if !was_ready {
                kept.push_back(connection);
                continue;
            }
            match connection.read_head() {
                HeadState::Incomplete => kept.push_back(connection),
                HeadState::Closed => {}
                HeadState::Complete(Parsed::Partial) => kept.push_back(connection),
                HeadState::Complete(Parsed::Refused(response)) => {
                    connection.connection.send_now(&response.into_bytes(false))
                }
                HeadState::Complete(Parsed::Request(request)) => {
                    route(connection.connection, request, scrapes, connection.settings)
                }
            }
        }
        self.pending = kept;
    }

    /// Answers and closes every connection whose head did not arrive in time.
    fn expire(&mut self, now: Instant) {
        while self.pending.front().is_some_and(|c| c.deadline <= now) {
            if let Some(late) = self.pending.pop_front() {
                let response = Response::text(408, "request head not received in time\n");
                late.connection.send_now(&response.into_bytes(false));
            }
        }
    }

    fn admit(&mut self, stream: TcpStream, settings: Option<Arc<WebSettings>>) {
        let tls = settings.as_ref().and_then(|web| web.tls.as_ref());
        let Ok(connection) = Connection::new(stream, tls) else {
            return;
        };
        if self.pending.len() >= MAX_CONNECTIONS {
            self.evict_oldest();
        }
        self.pending.push_back(PendingHead {
            connection,
            settings,
            deadline: Instant::now() + HEAD_TIMEOUT,
            received: Vec::new(),
        });
    }

    fn evict_oldest(&mut self) {
        self.pending.pop_front();
    }
}

enum HeadState {
    /// Nothing more to read now.
    Incomplete,
    /// The client closed the connection or it failed.
    Closed,
    /// Enough was read to decide (which may still be that more is needed).
    Complete(Parsed),
}

impl PendingHead {
    /// Reads what has arrived, never more than [`MAX_HEAD_BYTES`] in all.
    fn read_head(&mut self) -> HeadState {
        const CHUNK: usize = 2048;
        let mut chunk = [0u8; CHUNK];
        loop {
            let room = MAX_HEAD_BYTES - self.received.len();
            match self.connection.read(&mut chunk[..room.min(CHUNK)]) {
                Ok(0) => return HeadState::Closed,
                Ok(n) => {
                    self.received.extend_from_slice(&chunk[..n]);
                    // A head ends with a line feed: parsing only then keeps a client that
                    // trickles bytes from costing a parse per byte.
                    let full = self.received.len() >= MAX_HEAD_BYTES;
                    if !full && !chunk[..n].contains(&b'\n') {
                        continue;
                    }
                    match http::parse(&self.received) {
                        Parsed::Partial if self.received.len() < MAX_HEAD_BYTES => continue,
                        parsed => return HeadState::Complete(parsed),
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return HeadState::Incomplete,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.get_ref().is_some_and(|e| e.is::<PlainHttpOnTls>()) => {
                    let response =
                        Response::text(400, "Client sent an HTTP request to an HTTPS server.\n");
                    return HeadState::Complete(Parsed::Refused(response));
                }
                Err(_) => return HeadState::Closed,
            }
        }
    }
}

/// Answers a complete request: `/metrics` goes to a worker, and so does a password that
/// needs bcrypt (tens of milliseconds: this thread reads every client's request); the rest
/// is answered at once.
fn route(
    connection: Connection,
    request: Request,
    scrapes: &SyncSender<Scrape>,
    settings: Option<Arc<WebSettings>>,
) {
    let verify = match (basic_auth(&settings), &request.credentials) {
        (None, _) => false,
        (Some(_), None) => {
            connection.send_now(&unauthorized().into_bytes(request.head_only));
            return;
        }
        (Some(auth), Some(sent)) => {
            auth.remembered(&sent.user, &sent.password) == Remembered::Unknown
        }
    };
    if verify || request.path == "/metrics" {
        let scrape = Scrape {
            connection,
            request,
            verify,
            settings,
        };
        if let Err(TrySendError::Full(scrape) | TrySendError::Disconnected(scrape)) =
            scrapes.try_send(scrape)
        {
            let busy = Response::text(503, "too many scrapes waiting; retry later\n")
                .with_header("Retry-After", "1");
            let bytes = busy.into_bytes(scrape.request.head_only);
            scrape.connection.send_now(&bytes);
        }
        return;
    }
    connection.send_now(&page(&request.path).into_bytes(request.head_only));
}

/// What every path but `/metrics` answers.
fn page(path: &str) -> Response {
    match path {
        "/healthz" => Response::text(200, "ok\n"),
        "/" => Response::new(200, "text/html; charset=utf-8", index_page().into_bytes()),
        _ => Response::text(404, "not found: try /metrics, /healthz or /\n"),
    }
}

/// No credentials, or wrong ones: the same answer, so it does not tell which was wrong.
fn unauthorized() -> Response {
    Response::text(401, "Unauthorized\n").with_header("WWW-Authenticate", "Basic")
}

/// A worker: verifies passwords, runs scrapes from the queue and sends their responses.
fn answer_scrapes(queue: &Mutex<Receiver<Scrape>>, exporter: &Exporter) {
    loop {
        let next = queue.lock().unwrap_or_else(|p| p.into_inner()).recv();
        let Ok(Scrape {
            connection,
            request,
            verify,
            settings,
        }) = next
        else {
            return; // The server stopped.
        };
        let allowed = match (verify, basic_auth(&settings), &request.credentials) {
            (false, _, _) => true,
            (true, Some(auth), Some(sent)) => auth.verify(&sent.user, &sent.password),
            (true, _, _) => false,
        };
        let response = if !allowed {
            unauthorized()
        } else if request.path == "/metrics" {
            // A bug in one scrape must not stop the server: that request gets a 500.
            panic::catch_unwind(AssertUnwindSafe(|| metrics(exporter, &request))).unwrap_or_else(
                |_| Response::text(500, "the scrape failed; the exporter's log says why\n"),
            )
        } else {
            page(&request.path)
        };
        let pieces = response.into_pieces(request.head_only);
        connection.send_within(&pieces, SEND_TIMEOUT, SEND_STALL_TIMEOUT);
    }
}

fn metrics(exporter: &Exporter, request: &Request) -> Response {
    let format = Format::negotiate(request.accept.as_deref());
    let registry = exporter.scrape();
    let plain = || {
        let body = encode_into(&registry, format, Body::default());
        Response::new(
            200,
            format.content_type(),
            body.expect("writing into a Body never fails"),
        )
    };
    if !request.accepts_gzip {
        return plain();
    }
    // Prometheus asks for gzip; with many JVMs the text compresses about tenfold. Encoded
    // straight into the compressor, the plain text is never held whole.
    let vary = |response: Response| response.with_header("Vary", "Accept-Encoding");
    let encoder = flate2::write::GzEncoder::new(Body::default(), flate2::Compression::fast());
    match encode_into(&registry, format, encoder).and_then(|encoder| encoder.finish()) {
        Ok(compressed) => vary(Response::new(200, format.content_type(), compressed))
            .with_header("Content-Encoding", "gzip"),
        // Compression failed: the plain body is sent.
        Err(_) => vary(plain()),
    }
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
