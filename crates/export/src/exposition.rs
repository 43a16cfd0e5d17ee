//! Exposition formats: content negotiation and encoding of a registry.
//!
//! `prometheus-client` encodes only the OpenMetrics text format. Prometheus itself asks for
//! OpenMetrics, but `curl`, `promtool check metrics`, node_exporter's textfile collector and
//! older scrapers read the Prometheus text format 0.0.4. The two differ in a few mechanical
//! places, handled by [`openmetrics_to_prometheus`] on the library's output:
//! - a counter family is named without `_total` in OpenMetrics and with it in 0.0.4;
//! - `# UNIT` lines and the `# EOF` terminator exist only in OpenMetrics;
//! - the `info` and `unknown` types are `gauge` and `untyped` in 0.0.4.

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
    let mut openmetrics = String::with_capacity(16 * 1024);
    // Writing into a String cannot fail; an error here would be a bug in an encoder.
    text::encode(&mut openmetrics, registry).expect("encoding into a String never fails");
    let text = match format {
        Format::OpenMetrics => openmetrics,
        Format::Prometheus => openmetrics_to_prometheus(&openmetrics),
    };
    without_controls(text)
}

/// `text` with every control character but the line feeds ending its lines replaced by
/// U+FFFD. Label values come from JVMs and their logs (a main class, a GC cause); the
/// encoder escapes only backslash, double quote and line feed in them, and a raw ESC or
/// BEL would reach whoever reads the output in a terminal.
fn without_controls(text: String) -> String {
    let is_stray = |c: char| c.is_control() && c != '\n';
    if !text.chars().any(is_stray) {
        return text;
    }
    text.chars()
        .map(|c| {
            if is_stray(c) {
                char::REPLACEMENT_CHARACTER
            } else {
                c
            }
        })
        .collect()
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
    let mut out = String::with_capacity(openmetrics.len());
    // HELP comes before TYPE, but its family name depends on the type: hold it back.
    let mut pending_help: Option<(&str, &str)> = None;
    for line in openmetrics.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').unwrap_or((rest, ""));
            pending_help = Some((name, help));
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, "unknown"));
            let (name, kind) = match kind {
                "counter" => (format!("{name}_total"), "counter"),
                "info" => (format!("{name}_info"), "gauge"),
                "gauge" | "histogram" | "summary" => (name.to_string(), kind),
                _ => (name.to_string(), "untyped"),
            };
            if let Some((_, help)) = pending_help.take() {
                out.push_str("# HELP ");
                out.push_str(&name);
                out.push(' ');
                out.push_str(&help_for_prometheus(help));
                out.push('\n');
            }
            out.push_str("# TYPE ");
            out.push_str(&name);
            out.push(' ');
            out.push_str(kind);
            out.push('\n');
        } else if line.starts_with("# UNIT ") || line == "# EOF" {
            continue;
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
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
}
