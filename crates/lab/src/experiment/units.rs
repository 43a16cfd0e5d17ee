//! Sizes ("16M", "2G", "4096") and durations ("2m", "90s", "500ms", "1h") as written in
//! experiments and on the command line.

use std::time::Duration;

use pauselab_pause::units::{ByteSize, DurationSyntax, TimeUnit};

/// Parses a size with an optional binary unit: K, M, G, T (also KiB, MiB, ...). No unit = bytes.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    ByteSize::parse(text)
        .map(ByteSize::bytes)
        .map_err(|e| e.to_string())
}

/// How experiments and `lab run --duration` write durations: a bare number is seconds, and
/// nothing runs longer than a week.
pub const DURATION: DurationSyntax =
    DurationSyntax::new(TimeUnit::Seconds).at_most(Duration::from_secs(7 * 86_400));

/// Parses a duration: a number with ms, s, m or h (a bare number is seconds).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    DURATION
        .parse(text)
        .map_err(|e| format!("invalid duration: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("16M").unwrap(), 16 << 20);
        assert_eq!(parse_bytes("2G").unwrap(), 2 << 30);
        assert_eq!(parse_bytes("4096").unwrap(), 4096);
        assert_eq!(parse_bytes("512KiB").unwrap(), 512 << 10);
        assert!(parse_bytes("12Q").is_err());
        assert!(parse_bytes("M").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert!(parse_duration("2 weeks").is_err());
        assert_eq!(
            parse_duration("7d").unwrap_err(),
            "invalid duration: unknown unit \"d\" in \"7d\": use ns, us, ms, s, m or h"
        );
        assert!(parse_duration("169h").is_err());
        assert!(parse_duration("").is_err());
    }
}
