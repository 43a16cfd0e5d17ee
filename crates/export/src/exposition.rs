//! Exposition formats: content negotiation and encoding of a registry.
//!
//! `prometheus-client` encodes only the OpenMetrics text format. Prometheus itself asks for
//! OpenMetrics, but `curl`, `promtool check metrics`, node_exporter's textfile collector and
//! older scrapers read the Prometheus text format 0.0.4. The two differ in a few mechanical
//! places, handled by [`openmetrics_to_prometheus`] on the library's output:
//! - a counter family is named without `_total` in OpenMetrics and with it in 0.0.4;
//! - `# UNIT` lines and the `# EOF` terminator exist only in OpenMetrics;
//! - the `info` and `unknown` types are `gauge` and `untyped` in 0.0.4.

use std::borrow::Cow;
use std::fmt;
use std::io;

use prometheus_client::encoding::text;
use prometheus_client::registry::Registry;

/// A text exposition format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The Prometheus text format, version 0.0.4.
    Prometheus,
    /// The OpenMetrics text format, version 1.0.0.
    OpenMetrics,
}

impl Format {
    /// The `Content-Type` a response in this format carries.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }

    /// The format an HTTP client asks for with its `Accept` header: OpenMetrics when it is
    /// listed with a quality at least as high as the Prometheus text format (Prometheus
    /// lists it first), else the Prometheus text format, which is also the default.
    pub fn negotiate(accept: Option<&str>) -> Format {
        let Some(accept) = accept else {
            return Format::Prometheus;
        };
        let mut openmetrics_quality: f32 = 0.0;
        let mut text_quality: f32 = 0.0;
        for range in accept.split(',') {
            let mut parts = range.split(';').map(str::trim);
            let media_type = parts.next().unwrap_or("").to_ascii_lowercase();
            let quality = parts
                .filter_map(|p| p.strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            match media_type.as_str() {
                "application/openmetrics-text" => {
                    openmetrics_quality = openmetrics_quality.max(quality)
                }
                "text/plain" | "text/*" | "*/*" => text_quality = text_quality.max(quality),
                _ => {}
            }
        }
        if openmetrics_quality > 0.0 && openmetrics_quality >= text_quality {
            Format::OpenMetrics
        } else {
            Format::Prometheus
        }
    }
}

/// Encodes `registry` in `format`.
pub fn encode(registry: &Registry, format: Format) -> String {
    let bytes = encode_into(registry, format, Vec::with_capacity(16 * 1024))
        .expect("writing into a Vec never fails");
    // The library writes UTF-8, and lines are only rewritten with UTF-8.
    String::from_utf8(bytes).expect("the exposition is UTF-8")
}

/// Encodes `registry` in `format` into `out` a line at a time, and gives `out` back.
///
/// With many wide JVMs a scrape's text reaches the 16 MiB budget; written whole, then
/// rewritten into the Prometheus format, then compressed, it was held three times at once.
/// Here no more than one line is held besides what `out` keeps (a gzip encoder keeps a
/// tenth of it).
pub fn encode_into<W: io::Write>(registry: &Registry, format: Format, out: W) -> io::Result<W> {
    let mut lines = LineRewriter::new(format, out);
    if text::encode(&mut lines, registry).is_err() {
        return Err(lines.failure.take().unwrap_or_else(|| {
            io::Error::other("the metrics library failed to encode the registry")
        }));
    }
    lines.finish()
}

/// Takes OpenMetrics text as the library writes it, in pieces that need not end lines,
/// and writes each whole line to `out` as `format` wants it, with stray control characters
/// replaced (see [`without_controls`]).
struct LineRewriter<W> {
    format: Format,
    out: W,
    /// The start of a line whose end has not come yet.
    partial: String,
    /// A `# HELP` line's family name and text, held until the `# TYPE` line after it says
    /// what the family is called in the Prometheus format.
    pending_help: Option<(String, String)>,
    /// Why writing to `out` failed (`fmt::Write` can only say that it did).
    failure: Option<io::Error>,
}

impl<W: io::Write> LineRewriter<W> {
    fn new(format: Format, out: W) -> LineRewriter<W> {
        LineRewriter {
            format,
            out,
            partial: String::new(),
            pending_help: None,
            failure: None,
        }
    }

    /// Writes what is left (text that did not end with a line feed) and gives `out` back.
    fn finish(mut self) -> io::Result<W> {
        if !self.partial.is_empty() {
            let last = std::mem::take(&mut self.partial);
            self.line(&last)?;
        }
        if let Some(error) = self.failure.take() {
            return Err(error);
        }
        Ok(self.out)
    }

    /// One line, without its line feed.
    fn line(&mut self, line: &str) -> io::Result<()> {
        let line = without_controls(line);
        match self.format {
            Format::OpenMetrics => self.write_line(&[&line]),
            Format::Prometheus => self.prometheus_line(&line),
        }
    }

    /// One line in the Prometheus text format 0.0.4. Samples pass through unchanged; only
    /// family metadata lines differ.
    fn prometheus_line(&mut self, line: &str) -> io::Result<()> {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').unwrap_or((rest, ""));
            self.pending_help = Some((name.to_string(), help.to_string()));
            Ok(())
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, "unknown"));
            let (name, kind) = match kind {
                "counter" => (format!("{name}_total"), "counter"),
                "info" => (format!("{name}_info"), "gauge"),
                "gauge" | "histogram" | "summary" => (name.to_string(), kind),
                _ => (name.to_string(), "untyped"),
            };
            if let Some((_, help)) = self.pending_help.take() {
                self.write_line(&["# HELP ", &name, " ", &help_for_prometheus(&help)])?;
            }
            self.write_line(&["# TYPE ", &name, " ", kind])
        } else if line.starts_with("# UNIT ") || line == "# EOF" {
            Ok(())
        } else {
            self.write_line(&[line])
        }
    }

    fn write_line(&mut self, parts: &[&str]) -> io::Result<()> {
        for part in parts {
            self.out.write_all(part.as_bytes())?;
        }
        self.out.write_all(b"\n")
    }
}

impl<W: io::Write> fmt::Write for LineRewriter<W> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        let mut rest = text;
        while let Some(end) = rest.find('\n') {
            let written = if self.partial.is_empty() {
                self.line(&rest[..end])
            } else {
                self.partial.push_str(&rest[..end]);
                let line = std::mem::take(&mut self.partial);
                let written = self.line(&line);
                // Its capacity serves the next partial line.
                self.partial = line;
                self.partial.clear();
                written
            };
            if let Err(error) = written {
                self.failure = Some(error);
                return Err(fmt::Error);
            }
            rest = &rest[end + 1..];
        }
        self.partial.push_str(rest);
        Ok(())
    }
}

/// `line` with every control character replaced by U+FFFD. Label values come from JVMs and
/// their logs (a main class, a GC cause); the encoder escapes only backslash, double quote
/// and line feed in them, and a raw ESC or BEL would reach whoever reads the output in a
/// terminal.
fn without_controls(line: &str) -> Cow<'_, str> {
    if !line.chars().any(char::is_control) {
        return Cow::Borrowed(line);
    }
    let replaced = line.chars().map(|c| {
        if c.is_control() {
            char::REPLACEMENT_CHARACTER
        } else {
            c
        }
    });
    Cow::Owned(replaced.collect())
}

/// `text` made safe for a `# HELP` line as `prometheus-client` writes it (unchanged):
/// backslash, line feed and double quote escaped as OpenMetrics wants, other control
/// characters replaced. Help text that names something from a JVM must pass through this,
/// or a counter name holding a line feed could add lines of its own to the output.
pub(crate) fn escape_help(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '"' => out.push_str("\\\""),
            c if c.is_control() => out.push(char::REPLACEMENT_CHARACTER),
            c => out.push(c),
        }
    }
    out
}

/// Help text escaped for OpenMetrics (see [`escape_help`]) as the Prometheus text format
/// escapes it: there, only backslash and line feed are escaped.
fn help_for_prometheus(openmetrics_help: &str) -> String {
    openmetrics_help.replace("\\\"", "\"")
}

/// Rewrites OpenMetrics text as produced by `prometheus-client` into the Prometheus text
/// format 0.0.4. Samples pass through unchanged; only family metadata lines differ.
pub fn openmetrics_to_prometheus(openmetrics: &str) -> String {
    let mut lines = LineRewriter::new(Format::Prometheus, Vec::with_capacity(openmetrics.len()));
    fmt::Write::write_str(&mut lines, openmetrics).expect("writing into a Vec never fails");
    let bytes = lines.finish().expect("writing into a Vec never fails");
    String::from_utf8(bytes).expect("rewriting keeps UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::metrics::counter::Counter;
    use prometheus_client::metrics::family::Family;
    use prometheus_client::metrics::gauge::Gauge;
    use prometheus_client::registry::Unit;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn prometheus_asks_for_openmetrics() {
        let prometheus_2_42 = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(
            Format::negotiate(Some(prometheus_2_42)),
            Format::OpenMetrics
        );
    }

    #[test]
    fn control_characters_in_label_values_become_replacement_characters() {
        let mut registry = Registry::default();
        let family = Family::<Vec<(&'static str, String)>, Gauge>::default();
        registry.register("jvm", "A JVM", family.clone());
        let hostile = "a\x1b[2Jb\x07c\x7fd\u{9b}e\tf\rg\nh\\i\"j";
        family
            .get_or_create(&vec![("main_class", hostile.to_string())])
            .set(1);
        for format in [Format::Prometheus, Format::OpenMetrics] {
            let text = encode(&registry, format);
            let expected =
                "main_class=\"a\u{FFFD}[2Jb\u{FFFD}c\u{FFFD}d\u{FFFD}e\u{FFFD}f\u{FFFD}g\\nh\\\\i\\\"j\"";
            assert!(text.contains(expected), "{format:?}: {text:?}");
            assert!(
                !text.chars().any(|c| c.is_control() && c != '\n'),
                "{format:?}: {text:?}"
            );
        }
    }

    #[test]
    fn text_is_the_default() {
        assert_eq!(Format::negotiate(None), Format::Prometheus);
        assert_eq!(Format::negotiate(Some("*/*")), Format::Prometheus);
        assert_eq!(
            Format::negotiate(Some("text/plain;version=0.0.4")),
            Format::Prometheus
        );
        assert_eq!(
            Format::negotiate(Some("text/plain, application/openmetrics-text;q=0.5")),
            Format::Prometheus
        );
        assert_eq!(
            Format::negotiate(Some("application/openmetrics-text;q=0")),
            Format::Prometheus
        );
    }

    #[test]
    fn counters_carry_total_in_their_family_name_in_text_format() {
        let mut registry = Registry::default();
        let time = Family::<Vec<(&'static str, String)>, Counter<f64, AtomicU64>>::default();
        registry.register_with_unit("jvm_time", "Time spent", Unit::Seconds, time.clone());
        time.get_or_create(&vec![("pid", "1".to_string())])
            .inc_by(1.5);
        let used = Gauge::<i64>::default();
        registry.register("used_bytes", "Bytes used", used.clone());
        used.set(42);

        let openmetrics = encode(&registry, Format::OpenMetrics);
        assert!(openmetrics.contains("# TYPE jvm_time_seconds counter\n"));
        assert!(openmetrics.ends_with("# EOF\n"));

        let text = encode(&registry, Format::Prometheus);
        assert_eq!(
            text,
            "# HELP jvm_time_seconds_total Time spent.\n\
             # TYPE jvm_time_seconds_total counter\n\
             jvm_time_seconds_total{pid=\"1\"} 1.5\n\
             # HELP used_bytes Bytes used.\n\
             # TYPE used_bytes gauge\n\
             used_bytes 42\n"
        );
    }

    fn two_families() -> Registry {
        let mut registry = Registry::default();
        let time = Family::<Vec<(&'static str, String)>, Counter<f64, AtomicU64>>::default();
        registry.register_with_unit("jvm_time", "Time \"spent\"", Unit::Seconds, time.clone());
        for pid in ["1", "22", "333"] {
            time.get_or_create(&vec![("pid", pid.to_string())])
                .inc_by(1.5);
        }
        let used = Gauge::<i64>::default();
        registry.register("used_bytes", "Bytes used", used.clone());
        used.set(42);
        registry
    }

    #[test]
    fn text_handed_over_in_pieces_is_rewritten_as_text_handed_over_whole() {
        let openmetrics = encode(&two_families(), Format::OpenMetrics);
        let whole = openmetrics_to_prometheus(&openmetrics);
        assert!(whole.contains("# HELP jvm_time_seconds_total Time \"spent\".\n"));
        for piece in 1..=openmetrics.len() {
            let mut lines = LineRewriter::new(Format::Prometheus, Vec::new());
            for text in openmetrics.as_bytes().chunks(piece) {
                let text = std::str::from_utf8(text).unwrap();
                fmt::Write::write_str(&mut lines, text).unwrap();
            }
            let rewritten = String::from_utf8(lines.finish().unwrap()).unwrap();
            assert_eq!(rewritten, whole, "pieces of {piece} bytes");
        }
    }

    /// Takes `room` bytes, then fails as a full disk or a closed pipe would.
    struct FailsWhenFull {
        room: usize,
    }

    impl io::Write for FailsWhenFull {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            if bytes.len() > self.room {
                return Err(io::Error::other("no room left"));
            }
            self.room -= bytes.len();
            Ok(bytes.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_writer_that_fails_fails_the_encoding_with_its_error() {
        for format in [Format::Prometheus, Format::OpenMetrics] {
            let out = FailsWhenFull { room: 40 };
            let error = encode_into(&two_families(), format, out).err().unwrap();
            assert_eq!(error.to_string(), "no room left", "{format:?}");
        }
    }
}
