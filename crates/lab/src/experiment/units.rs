//! Sizes ("16M", "2G", "4096") and durations ("2m", "90s", "500ms", "1h") as written in
//! experiments and on the command line.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use pauselab_pause::units::{ByteSize, DurationError, DurationSyntax, SizeError, TimeUnit};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why a size or duration of an experiment is not one; the message quotes the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    #[error("{0}")]
    Size(#[from] SizeError),
    #[error("invalid duration: {0}")]
    Duration(#[from] DurationError),
}

/// Parses a size with an optional binary unit: K, M, G, T (also KiB, MiB, ...). No unit = bytes.
pub fn parse_bytes(text: &str) -> Result<u64, ValueError> {
    Ok(ByteSize::parse(text)?.bytes())
}

/// How experiments and `lab run --duration` write durations: a bare number is seconds, and
/// nothing runs longer than a week.
pub const DURATION: DurationSyntax =
    DurationSyntax::new(TimeUnit::Seconds).at_most(Duration::from_secs(7 * 86_400));

/// Parses a duration: a number with ms, s, m or h (a bare number is seconds).
pub fn parse_duration(text: &str) -> Result<Duration, ValueError> {
    Ok(DURATION.parse(text)?)
}

/// A duration or size of an experiment file: checked once, when the file is read, and used
/// as a value from then on; its text is kept as written, because the bundle's copy of the
/// definition (manifest.json) and `lab list` show it so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written<T> {
    value: T,
    text: String,
}

/// A duration as experiments write it (a bare number is seconds, at most a week).
pub type WrittenDuration = Written<Duration>;

/// A size in bytes as experiments write it (`16M`, `2G`).
pub type WrittenSize = Written<u64>;

/// The values an experiment writes as text, and how each is read.
pub trait Parsed: Copy + Sized {
    /// The value of `text`, or why not.
    fn parse(text: &str) -> Result<Self, ValueError>;
}

impl Parsed for Duration {
    fn parse(text: &str) -> Result<Duration, ValueError> {
        parse_duration(text)
    }
}

impl Parsed for u64 {
    fn parse(text: &str) -> Result<u64, ValueError> {
        parse_bytes(text)
    }
}

impl<T: Parsed> Written<T> {
    /// The value.
    pub fn get(&self) -> T {
        self.value
    }

    /// The text as written in the experiment.
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl<T: Parsed> FromStr for Written<T> {
    type Err = ValueError;
    fn from_str(text: &str) -> Result<Written<T>, ValueError> {
        Ok(Written {
            value: T::parse(text)?,
            text: text.to_string(),
        })
    }
}

impl<T> fmt::Display for Written<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl<T> Serialize for Written<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de, T: Parsed> Deserialize<'de> for Written<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Written<T>, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
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
    fn written_values_keep_their_text() {
        let d: WrittenDuration = "1.5m".parse().unwrap();
        assert_eq!((d.get(), d.text()), (Duration::from_secs(90), "1.5m"));
        assert_eq!(serde_json::to_string(&d).unwrap(), "\"1.5m\"");
        let s: WrittenSize = serde_json::from_str("\"16MiB\"").unwrap();
        assert_eq!((s.get(), s.to_string()), (16 << 20, "16MiB".to_string()));
        let err = serde_json::from_str::<WrittenDuration>("\"2 weeks\"").unwrap_err();
        assert!(err.to_string().contains("unknown unit"), "{err}");
        assert!("8d".parse::<WrittenDuration>().is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert!(parse_duration("2 weeks").is_err());
        assert_eq!(
            parse_duration("7d").unwrap_err().to_string(),
            "invalid duration: unknown unit \"d\" in \"7d\": use ns, us, ms, s, m or h"
        );
        assert!(parse_duration("169h").is_err());
        assert!(parse_duration("").is_err());
    }
}
