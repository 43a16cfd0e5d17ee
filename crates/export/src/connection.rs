//! One client connection, plain TCP or TLS (rustls, driven by hand on the server's own
//! non-blocking sockets, so the TLS handshake is read by the same `poll` loop as request
//! heads, under the same head deadline, and never holds a worker).

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::{ServerConfig, ServerConnection};

/// A connection: its socket and, on a TLS port, its TLS state.
pub(crate) struct Connection {
    stream: TcpStream,
    tls: Option<Box<ServerConnection>>,
    /// Whether the client's first bytes were looked at (see [`Connection::read`]).
    first_bytes_seen: bool,
}

/// The client spoke plain HTTP to a TLS port: it gets a plain `400` saying so, as Go's
/// servers (node_exporter) answer, instead of a TLS alert it cannot read.
#[derive(Debug)]
pub(crate) struct PlainHttpOnTls;

impl std::fmt::Display for PlainHttpOnTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("plain HTTP request on a TLS port")
    }
}

impl std::error::Error for PlainHttpOnTls {}

impl Connection {
    /// A connection on a non-blocking socket; TLS when `tls` is given.
    pub(crate) fn new(stream: TcpStream, tls: Option<&Arc<ServerConfig>>) -> io::Result<Self> {
        stream.set_nonblocking(true)?;
        let tls = match tls {
            Some(config) => Some(Box::new(
                ServerConnection::new(Arc::clone(config)).map_err(io::Error::other)?,
            )),
            None => None,
        };
        Ok(Connection {
            stream,
            tls,
            first_bytes_seen: false,
        })
    }

    pub(crate) fn fd(&self) -> RawFd {
        self.stream.as_raw_fd()
    }

    /// Whether TLS records are waiting to be sent (the handshake): poll for writability.
    pub(crate) fn wants_write(&self) -> bool {
        self.tls.as_ref().is_some_and(|tls| tls.wants_write())
    }

    /// Reads request bytes (decrypted on TLS) that have arrived, without blocking:
    /// `WouldBlock` when there are none yet, `Ok(0)` when the client closed. On TLS this
    /// also moves the handshake along, sending what it has to send as far as the socket
    /// takes it now.
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.tls.is_some() && !self.first_bytes_seen && self.starts_plain_http()? {
            self.tls = None;
            // Taken off the socket: closing it with the request unread would reset the
            // connection, and the client would not see the answer.
            let _ = (&self.stream).read(buf);
            return Err(io::Error::other(PlainHttpOnTls));
        }
        let Some(tls) = self.tls.as_mut() else {
            return (&self.stream).read(buf);
        };
        // What the socket did not take before (poll woke us for writability).
        flush_nonblocking(tls, &self.stream);
        loop {
            match tls.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            let received = tls.read_tls(&mut &self.stream)?;
            let processed = tls.process_new_packets();
            // Handshake messages, or the alert for what went wrong.
            flush_nonblocking(tls, &self.stream);
            if let Err(e) = processed {
                return Err(io::Error::new(io::ErrorKind::InvalidData, e));
            }
            if received == 0 {
                return Ok(0);
            }
        }
    }

    /// Whether the first bytes the client sent are a plain HTTP request line.
    fn starts_plain_http(&mut self) -> io::Result<bool> {
        let mut first = [0u8; 3];
        let n = self.stream.peek(&mut first)?;
        self.first_bytes_seen = n > 0;
        // A TLS record starts with its type (22, a handshake); HTTP with a method.
        Ok(n > 0 && first[..n].iter().all(u8::is_ascii_uppercase))
    }

    /// Sends a small response on the non-blocking socket as far as the socket takes it at
    /// once, then closes: a fresh connection's send buffer holds far more than these few
    /// hundred bytes, and a client that does not read gets nothing more.
    pub(crate) fn send_now(mut self, bytes: &[u8]) {
        match self.tls.as_mut() {
            None => {
                let _ = (&self.stream).write(bytes);
            }
            Some(tls) => {
                let _ = tls.writer().write_all(bytes);
                tls.send_close_notify();
                flush_nonblocking(tls, &self.stream);
            }
        }
        let _ = self.stream.shutdown(Shutdown::Write);
    }

    /// Sends `pieces`, one after the other, and closes, giving up once `limit` has passed
    /// however the client trickles, or once it took nothing for `stall`.
    pub(crate) fn send_within<'a>(
        mut self,
        pieces: &'a [Vec<u8>],
        limit: Duration,
        stall: Duration,
    ) {
        let deadline = Instant::now() + limit;
        if self.stream.set_nonblocking(false).is_err() {
            return;
        }
        let stream = &self.stream;
        let write_timed = |write: &mut dyn FnMut(&mut &TcpStream) -> io::Result<usize>| {
            write_within(stream, deadline, stall, write)
        };
        let mut pieces = pieces.iter().map(Vec::as_slice);
        // What is left to send of the piece being sent (empty: the next piece).
        let mut unsent: &'a [u8] = &[];
        let mut next_unsent = |unsent: &mut &'a [u8]| {
            while unsent.is_empty() {
                match pieces.next() {
                    Some(piece) => *unsent = piece,
                    None => return false,
                }
            }
            true
        };
        match self.tls.as_mut() {
            None => {
                while next_unsent(&mut unsent) {
                    let mut write = |s: &mut &TcpStream| {
                        let n = s.write(unsent)?;
                        unsent = &unsent[n..];
                        Ok(n)
                    };
                    if !write_timed(&mut write) {
                        return;
                    }
                }
            }
            Some(tls) => {
                // Encrypted a buffer at a time (rustls takes up to 64 KiB of plaintext
                // while its records wait), so the body is not held twice.
                let mut closed = false;
                loop {
                    while tls.wants_write() {
                        if !write_timed(&mut |s| tls.write_tls(s)) {
                            return;
                        }
                    }
                    if next_unsent(&mut unsent) {
                        match tls.writer().write(unsent) {
                            Ok(n) if n > 0 => unsent = &unsent[n..],
                            _ => return,
                        }
                    } else if !closed {
                        tls.send_close_notify();
                        closed = true;
                    } else {
                        break;
                    }
                }
            }
        }
        let _ = self.stream.shutdown(Shutdown::Write);
    }
}

/// One write, waiting for the socket at most until `deadline` and at most `stall`;
/// whether it wrote anything.
fn write_within(
    stream: &TcpStream,
    deadline: Instant,
    stall: Duration,
    write: &mut dyn FnMut(&mut &TcpStream) -> io::Result<usize>,
) -> bool {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_write_timeout(Some(left.min(stall))).is_err() {
            return false;
        }
        match write(&mut &*stream) {
            Ok(0) => return false,
            Ok(_) => return true,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// Sends what TLS has queued as far as the non-blocking socket takes it now.
fn flush_nonblocking(tls: &mut ServerConnection, stream: &TcpStream) {
    while tls.wants_write() {
        match tls.write_tls(&mut &*stream) {
            Ok(n) if n > 0 => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            _ => return,
        }
    }
}
