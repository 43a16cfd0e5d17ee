//! The part of HTTP/1.x this exporter speaks: one `GET` or `HEAD` per connection, no
//! request bodies, a bounded request head, `Connection: close` on every response.
//!
//! The request head is parsed by `httparse` (the parser hyper uses); everything a client
//! may send that would make the server read or hold more than one small head is refused
//! here, before any work is done for it.

use std::fmt::Write as _;
use std::io;

/// Request line and headers together may not exceed this (nginx' default header buffer).
pub(crate) const MAX_HEAD_BYTES: usize = 8 * 1024;
/// Headers beyond this many are refused (Prometheus sends fewer than ten).
const MAX_HEADERS: usize = 32;

/// What the bytes received so far on a connection amount to.
pub(crate) enum Parsed {
    /// The head is not complete yet: read more.
    Partial,
    /// A request to serve.
    Request(Request),
    /// A request refused before any work: send this and close.
    Refused(Response),
}

/// A `GET` or `HEAD` request with what the responses depend on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Request {
    /// `HEAD`: the response carries headers only.
    pub head_only: bool,
    /// The path, without the query string.
    pub path: String,
    /// The `Accept` header, if it is text.
    pub accept: Option<String>,
    /// Whether `Accept-Encoding` admits gzip.
    pub accepts_gzip: bool,
    /// `Authorization: Basic` user and password, if sent and well-formed.
    pub credentials: Option<Credentials>,
}

/// The user and password of an `Authorization: Basic` header (RFC 7617).
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Credentials {
    pub user: String,
    pub password: Vec<u8>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Credentials({:?}, password hidden)", self.user)
    }
}

/// `Basic <base64 of user:password>`; None for another scheme or a malformed value.
fn basic_credentials(value: &str) -> Option<Credentials> {
    use base64::Engine as _;
    let (scheme, encoded) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("Basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let colon = decoded.iter().position(|&b| b == b':')?;
    let user = String::from_utf8(decoded[..colon].to_vec()).ok()?;
    Some(Credentials {
        user,
        password: decoded[colon + 1..].to_vec(),
    })
}

/// Parses the bytes received so far on a connection.
pub(crate) fn parse(head: &[u8]) -> Parsed {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(head) {
        Ok(httparse::Status::Partial) if head.len() >= MAX_HEAD_BYTES => {
            Parsed::Refused(head_too_large())
        }
        Ok(httparse::Status::Partial) => Parsed::Partial,
        Err(httparse::Error::TooManyHeaders) => Parsed::Refused(head_too_large()),
        Err(_) => Parsed::Refused(Response::text(400, "malformed HTTP request\n")),
        Ok(httparse::Status::Complete(_)) => {
            let mut accept = None;
            let mut accepts_gzip = false;
            let mut credentials = None;
            for header in request.headers.iter() {
                let name = header.name;
                if name.eq_ignore_ascii_case("Transfer-Encoding") {
                    return Parsed::Refused(Response::text(400, NO_BODIES));
                }
                if name.eq_ignore_ascii_case("Content-Length") {
                    let length = std::str::from_utf8(header.value)
                        .ok()
                        .and_then(|v| v.trim().parse::<u64>().ok());
                    match length {
                        Some(0) => {}
                        Some(_) => return Parsed::Refused(Response::text(413, NO_BODIES)),
                        None => {
                            return Parsed::Refused(Response::text(400, "bad Content-Length\n"))
                        }
                    }
                }
                let Ok(value) = std::str::from_utf8(header.value) else {
                    continue;
                };
                if name.eq_ignore_ascii_case("Accept") {
                    accept = Some(value.to_string());
                } else if name.eq_ignore_ascii_case("Accept-Encoding") {
                    accepts_gzip |= admits_gzip(value);
                } else if name.eq_ignore_ascii_case("Authorization") {
                    credentials = basic_credentials(value);
                }
            }
            let head_only = match request.method {
                Some("GET") => false,
                Some("HEAD") => true,
                _ => {
                    return Parsed::Refused(
                        Response::text(
                            405,
                            "only GET and HEAD are served: this endpoint is read-only\n",
                        )
                        .with_header("Allow", "GET, HEAD"),
                    )
                }
            };
            let target = request.path.unwrap_or("");
            let path = target.split('?').next().unwrap_or("").to_string();
            Parsed::Request(Request {
                head_only,
                path,
                accept,
                accepts_gzip,
                credentials,
            })
        }
    }
}

const NO_BODIES: &str = "request bodies are not accepted: this endpoint is read-only\n";

fn head_too_large() -> Response {
    Response::text(
        431,
        "request head too large: at most 8 KiB of request line and headers\n",
    )
}

/// Whether an `Accept-Encoding` value admits gzip (RFC 9110 section 12.5.3): the weight of
/// `gzip` (or its alias `x-gzip`) when listed, else that of `*`, must be above 0. An
/// explicit `gzip;q=0` wins over `*`; a weight that is not a valid qvalue (`q=NaN`,
/// `q=2`) admits nothing.
fn admits_gzip(value: &str) -> bool {
    let mut gzip = None;
    let mut any = None;
    for item in value.split(',') {
        let mut parts = item.split(';').map(str::trim);
        let coding = parts.next().unwrap_or_default();
        let weight = parts
            .find_map(|p| p.strip_prefix("q=").or_else(|| p.strip_prefix("Q=")))
            .map_or(Some(1.0), qvalue)
            .unwrap_or(0.0);
        let slot = if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
            &mut gzip
        } else if coding == "*" {
            &mut any
        } else {
            continue;
        };
        // Listed twice: the lower weight is taken, so a refusal is never overridden.
        *slot = Some(slot.map_or(weight, |w: f64| w.min(weight)));
    }
    gzip.or(any).is_some_and(|w| w > 0.0)
}

/// A qvalue: `0` to `1` with at most three decimals, nothing else.
fn qvalue(text: &str) -> Option<f64> {
    let (whole, decimals) = text.split_once('.').unwrap_or((text, ""));
    let valid = matches!(whole, "0" | "1")
        && decimals.len() <= 3
        && decimals.bytes().all(|b| b.is_ascii_digit())
        && (whole == "0" || decimals.bytes().all(|b| b == b'0'));
    valid.then(|| text.parse().ok()).flatten()
}

/// A complete response; every connection is closed after its response.
#[derive(Debug)]
pub(crate) struct Response {
    pub status: u16,
    content_type: &'static str,
    headers: Vec<(&'static str, &'static str)>,
    body: Body,
}

impl Response {
    pub(crate) fn new(status: u16, content_type: &'static str, body: impl Into<Body>) -> Response {
        Response {
            status,
            content_type,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// A `text/plain` response.
    pub(crate) fn text(status: u16, body: &str) -> Response {
        Response::new(
            status,
            "text/plain; charset=utf-8",
            body.as_bytes().to_vec(),
        )
    }

    pub(crate) fn with_header(mut self, name: &'static str, value: &'static str) -> Response {
        self.headers.push((name, value));
        self
    }

    /// The bytes on the wire in one buffer: for the small responses sent at once.
    pub(crate) fn into_bytes(self, head_only: bool) -> Vec<u8> {
        self.into_pieces(head_only).concat()
    }

    /// The bytes on the wire, in order: status line and headers, then, unless `head_only`,
    /// the body's segments as they were written.
    pub(crate) fn into_pieces(self, head_only: bool) -> Vec<Vec<u8>> {
        let mut head = String::with_capacity(256);
        // Writing into a String cannot fail.
        let _ = write!(
            head,
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.status,
            reason_phrase(self.status),
            self.content_type,
            self.body.len()
        );
        for (name, value) in &self.headers {
            let _ = write!(head, "{name}: {value}\r\n");
        }
        head.push_str("\r\n");
        let mut pieces = vec![head.into_bytes()];
        if !head_only {
            pieces.extend(self.body.segments);
        }
        pieces
    }
}

/// A response body kept in segments of at most [`Body::SEGMENT`] bytes.
///
/// A scrape's body reaches 16 MiB with many wide JVMs. One growing buffer would be copied
/// at each doubling (the allocator held the old and the new at once: 8 and 16 MiB), and
/// again to put the head in front; segments are written once and sent as they are.
#[derive(Debug, Default)]
pub(crate) struct Body {
    segments: Vec<Vec<u8>>,
    len: usize,
}

impl Body {
    const SEGMENT: usize = 64 * 1024;

    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl From<Vec<u8>> for Body {
    fn from(bytes: Vec<u8>) -> Body {
        Body {
            len: bytes.len(),
            segments: vec![bytes],
        }
    }
}

impl io::Write for Body {
    fn write(&mut self, mut bytes: &[u8]) -> io::Result<usize> {
        let written = bytes.len();
        while !bytes.is_empty() {
            let last = match self.segments.last_mut() {
                Some(last) if last.len() < last.capacity() => last,
                _ => {
                    self.segments.push(Vec::with_capacity(Body::SEGMENT));
                    self.segments.last_mut().expect("just pushed")
                }
            };
            let room = last.capacity() - last.len();
            let (now, later) = bytes.split_at(room.min(bytes.len()));
            last.extend_from_slice(now);
            bytes = later;
        }
        self.len += written;
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        401 => "Unauthorized",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused_status(head: &[u8]) -> Option<u16> {
        match parse(head) {
            Parsed::Refused(response) => Some(response.status),
            _ => None,
        }
    }

    #[test]
    fn prometheus_request_is_understood() {
        let head = b"GET /metrics?x=1 HTTP/1.1\r\nHost: a:9404\r\nAccept: application/openmetrics-text\r\nAccept-Encoding: gzip\r\nContent-Length: 0\r\n\r\n";
        let Parsed::Request(request) = parse(head) else {
            panic!("not parsed");
        };
        assert_eq!(
            request,
            Request {
                head_only: false,
                path: "/metrics".to_string(),
                accept: Some("application/openmetrics-text".to_string()),
                accepts_gzip: true,
                credentials: None,
            }
        );
        assert!(matches!(parse(&head[..20]), Parsed::Partial));
    }

    #[test]
    fn bodies_and_big_heads_are_refused_unread() {
        let with = |header: &str| format!("GET /healthz HTTP/1.1\r\n{header}\r\n\r\n");
        assert_eq!(
            refused_status(with("Content-Length: 99999999999999").as_bytes()),
            Some(413)
        );
        assert_eq!(
            refused_status(with("Content-Length: 99999999999999999999999").as_bytes()),
            Some(400)
        );
        assert_eq!(
            refused_status(with("Transfer-Encoding: chunked").as_bytes()),
            Some(400)
        );
        assert_eq!(refused_status(b"POST /metrics HTTP/1.1\r\n\r\n"), Some(405));
        let long = format!("GET /{} HTTP/1.1\r\n", "a".repeat(MAX_HEAD_BYTES));
        assert_eq!(refused_status(long.as_bytes()), Some(431));
        let many: String = (0..MAX_HEADERS + 1)
            .map(|i| format!("X-{i}: y\r\n"))
            .collect();
        assert_eq!(refused_status(with(&many).as_bytes()), Some(431));
        assert_eq!(refused_status(b"\x16\x03\x01\x02\x00\x01\x00"), Some(400));
    }

    #[test]
    fn basic_credentials_are_decoded() {
        // "prometheus:pa:ss" (a password may hold colons)
        let sent = basic_credentials("Basic cHJvbWV0aGV1czpwYTpzcw==").unwrap();
        assert_eq!(sent.user, "prometheus");
        assert_eq!(sent.password, b"pa:ss");
        assert!(!format!("{sent:?}").contains("pa:ss"));
        assert!(basic_credentials("Bearer cHJvbWV0aGV1czpwYTpzcw==").is_none());
        assert!(basic_credentials("Basic !!!").is_none());
        // no colon
        assert!(basic_credentials("Basic cHJvbWV0aGV1cw==").is_none());
    }

    #[test]
    fn accept_encoding_values() {
        assert!(admits_gzip("gzip"));
        assert!(admits_gzip("deflate, GZIP;q=0.5"));
        assert!(admits_gzip("*"));
        assert!(!admits_gzip("gzip;q=0"));
        assert!(!admits_gzip("identity"));
        assert!(!admits_gzip("br, deflate"));
        assert!(admits_gzip("x-gzip"));
        assert!(admits_gzip("gzip;q=0.001"));
        assert!(admits_gzip("br, *;q=0.5"));
    }

    #[test]
    fn an_explicit_refusal_of_gzip_wins_over_any() {
        for value in [
            "gzip;q=0, *",
            "*, gzip;q=0",
            "gzip;q=0.000, *;q=1",
            "*;q=0",
            "gzip, gzip;q=0",
            "x-gzip;q=0, *",
        ] {
            assert!(!admits_gzip(value), "{value}");
        }
    }

    #[test]
    fn invalid_weights_admit_nothing() {
        for value in [
            "gzip;q=NaN",
            "gzip;q=nan, *",
            "gzip;q=inf",
            "gzip;q=2",
            "gzip;q=1.5",
            "gzip;q=-1",
            "gzip;q=0.0001",
            "gzip;q=",
            "gzip;q=1e0",
            "*;q=NaN",
        ] {
            assert!(!admits_gzip(value), "{value}");
        }
    }

    #[test]
    fn head_responses_keep_the_length_and_drop_the_body() {
        let response = || Response::text(200, "ok\n").with_header("Vary", "Accept-Encoding");
        let full = String::from_utf8(response().into_bytes(false)).unwrap();
        assert_eq!(
            full,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 3\r\n\
             Connection: close\r\nVary: Accept-Encoding\r\n\r\nok\n"
        );
        let head = String::from_utf8(response().into_bytes(true)).unwrap();
        assert!(head.ends_with("Accept-Encoding\r\n\r\n"));
    }

    #[test]
    fn a_body_keeps_what_is_written_in_segments_it_never_grows() {
        use std::io::Write;
        let text: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        for piece in [
            1,
            7,
            4096,
            Body::SEGMENT - 1,
            Body::SEGMENT,
            Body::SEGMENT + 3,
            text.len(),
        ] {
            let mut body = Body::default();
            for bytes in text.chunks(piece) {
                body.write_all(bytes).unwrap();
            }
            assert_eq!(body.len(), text.len(), "pieces of {piece}");
            assert!(body.segments.iter().all(|s| s.capacity() == Body::SEGMENT));
            let response = Response::new(200, "text/plain", body);
            let pieces = response.into_pieces(false);
            assert!(String::from_utf8_lossy(&pieces[0]).contains("Content-Length: 200000\r\n"));
            assert_eq!(pieces[1..].concat(), text, "pieces of {piece}");
        }
    }
}
