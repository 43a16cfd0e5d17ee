//! Durations and sizes as people write them, on the command line, in experiment files and in
//! conditions: `500ms`, `10s`, `2m`, `1.5h`; `16M`, `2G`, `4096`. One syntax and one parser
//! for every pauselab flag and file (docs/units.md).
//!
//! Durations: a number (digits, optionally a fraction: `0.5s`) and a unit, `ns`, `us`, `ms`,
//! `s`, `m` (or `min`) or `h`, with or without a space between them. A number without a unit
//! takes the unit the flag names in its `--help` (milliseconds for `perf -i`, seconds for
//! `probe --duration`); where no unit is implied, it is refused. Digits below a nanosecond are
//! dropped. Not written with `humantime`: its syntax has no bare numbers, no fractions and
//! different unit names, and every flag here must keep accepting what it accepted before.

use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// The unit of a duration, and the unit a bare number takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    /// `ns`
    Nanoseconds,
    /// `us` (also `µs`)
    Microseconds,
    /// `ms`
    Milliseconds,
    /// `s`
    Seconds,
    /// `m` or `min`
    Minutes,
    /// `h`
    Hours,
}

impl TimeUnit {
    const ALL: [TimeUnit; 6] = [
        TimeUnit::Hours,
        TimeUnit::Minutes,
        TimeUnit::Seconds,
        TimeUnit::Milliseconds,
        TimeUnit::Microseconds,
        TimeUnit::Nanoseconds,
    ];

    /// Nanoseconds in one of this unit.
    pub const fn nanos(self) -> u128 {
        match self {
            TimeUnit::Nanoseconds => 1,
            TimeUnit::Microseconds => 1_000,
            TimeUnit::Milliseconds => 1_000_000,
            TimeUnit::Seconds => 1_000_000_000,
            TimeUnit::Minutes => 60_000_000_000,
            TimeUnit::Hours => 3_600_000_000_000,
        }
    }

    /// The symbol written after a number: `ms`, `s`, `m`, ...
    pub const fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Nanoseconds => "ns",
            TimeUnit::Microseconds => "us",
            TimeUnit::Milliseconds => "ms",
            TimeUnit::Seconds => "s",
            TimeUnit::Minutes => "m",
            TimeUnit::Hours => "h",
        }
    }

    fn from_symbol(symbol: &str) -> Option<TimeUnit> {
        Some(match symbol {
            "ns" => TimeUnit::Nanoseconds,
            "us" | "µs" => TimeUnit::Microseconds,
            "ms" => TimeUnit::Milliseconds,
            "s" => TimeUnit::Seconds,
            "m" | "min" => TimeUnit::Minutes,
            "h" => TimeUnit::Hours,
            _ => return None,
        })
    }
}

/// Why a duration was refused; the message quotes the text and says what to write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Nothing was written.
    #[error("empty duration: write a number with a unit, e.g. 500ms, 10s or 2m")]
    Empty,
    /// A minus sign: no duration is negative.
    #[error("{0:?} is negative: a duration is 0 or more")]
    Negative(String),
    /// No number where the number belongs.
    #[error("{0:?} is not a duration: write a number with a unit, e.g. 500ms, 10s or 2m")]
    NotANumber(String),
    /// A unit other than ns, us, ms, s, m, min, h.
    #[error("unknown unit {unit:?} in {text:?}: use ns, us, ms, s, m or h")]
    UnknownUnit {
        /// The whole text.
        text: String,
        /// The unit as written.
        unit: String,
    },
    /// A bare number where a unit is required.
    #[error("{0:?} is not a duration without a unit: add ns, us, ms, s, m or h (e.g. 500ms)")]
    MissingUnit(String),
    /// More than `Duration` holds (about 584 billion years).
    #[error("{0:?} is too long a duration")]
    Overflow(String),
    /// Outside the range the flag or field accepts.
    #[error("{text:?} is out of range: {range}")]
    OutOfRange {
        /// The whole text.
        text: String,
        /// What is accepted: `at least 1ms and at most 24h`.
        range: String,
    },
}

/// Parses a duration. `bare` is the unit of a number written without one; `None` requires a
/// unit. Accepts 0; see [`DurationSyntax`] for a range.
pub fn parse_duration(text: &str, bare: Option<TimeUnit>) -> Result<Duration, DurationError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(DurationError::Empty);
    }
    if t.starts_with('-') {
        return Err(DurationError::Negative(text.to_string()));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.len() + frac.len() == 0 || !all_digits(int) || !all_digits(frac) {
        return Err(DurationError::NotANumber(text.to_string()));
    }
    let unit = match unit.trim() {
        "" => bare.ok_or_else(|| DurationError::MissingUnit(text.to_string()))?,
        symbol => TimeUnit::from_symbol(symbol).ok_or_else(|| DurationError::UnknownUnit {
            text: text.to_string(),
            unit: symbol.to_string(),
        })?,
    };
    let overflow = || DurationError::Overflow(text.to_string());
    // Integer arithmetic on nanoseconds, so that 0.1s is exactly 100 ms.
    let int_part = int.trim_start_matches('0');
    if int_part.len() > 30 {
        return Err(overflow());
    }
    let whole: u128 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().map_err(|_| overflow())?
    };
    // Nanoseconds have at most 13 digits per hour: 20 fraction digits are all that count.
    let frac = &frac[..frac.len().min(20)];
    let fraction_nanos = if frac.is_empty() {
        0
    } else {
        let digits: u128 = frac.parse().map_err(|_| overflow())?;
        digits * unit.nanos() / 10u128.pow(frac.len() as u32)
    };
    let nanos = whole
        .checked_mul(unit.nanos())
        .and_then(|n| n.checked_add(fraction_nanos))
        .ok_or_else(overflow)?;
    let secs = u64::try_from(nanos / 1_000_000_000).map_err(|_| overflow())?;
    Ok(Duration::new(secs, (nanos % 1_000_000_000) as u32))
}

/// Writes `d` with the largest unit that shows it exactly: `1ms`, `90s`, `24h`, `1500us`.
pub fn format_duration(d: Duration) -> String {
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".to_string();
    }
    let unit = TimeUnit::ALL
        .into_iter()
        .find(|u| nanos % u.nanos() == 0)
        .unwrap_or(TimeUnit::Nanoseconds);
    format!("{}{}", nanos / unit.nanos(), unit.symbol())
}

/// The duration syntax of one flag or field: the unit of a bare number and the accepted
/// range. Its [`DurationSyntax::parse`] is what a clap `value_parser` calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DurationSyntax {
    /// The unit of a number written without one.
    pub bare: TimeUnit,
    /// The shortest accepted.
    pub min: Duration,
    /// The longest accepted.
    pub max: Duration,
}

impl DurationSyntax {
    /// Any duration from 0; a bare number is in `bare`.
    pub const fn new(bare: TimeUnit) -> DurationSyntax {
        DurationSyntax {
            bare,
            min: Duration::ZERO,
            max: Duration::MAX,
        }
    }

    /// Refuses durations shorter than `min`.
    pub const fn at_least(self, min: Duration) -> DurationSyntax {
        DurationSyntax { min, ..self }
    }

    /// Refuses durations longer than `max`.
    pub const fn at_most(self, max: Duration) -> DurationSyntax {
        DurationSyntax { max, ..self }
    }

    /// Parses `text` and checks the range.
    pub fn parse(&self, text: &str) -> Result<Duration, DurationError> {
        let d = parse_duration(text, Some(self.bare))?;
        if d < self.min || d > self.max {
            let mut range = format!("at least {}", format_duration(self.min));
            if self.max != Duration::MAX {
                range += &format!(" and at most {}", format_duration(self.max));
            }
            return Err(DurationError::OutOfRange {
                text: text.to_string(),
                range,
            });
        }
        Ok(d)
    }
}

/// A number of bytes, written as a number with an optional binary unit: `4096`, `16M`,
/// `2G`, `512KiB`, `1t` (K, M, G, T = 2^10, 2^20, 2^30, 2^40, any case, also `KB`/`KiB`
/// and a lone `B`), the way the JVM reads `-Xmx`. No fractions, no sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ByteSize(pub u64);

/// Why a size was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// No whole number where the number belongs (also empty text, fractions, signs).
    #[error("invalid size {0:?}: expected a whole number with K, M, G or T, e.g. 16M")]
    NotANumber(String),
    /// A unit other than B, K, M, G, T.
    #[error("invalid size {text:?}: unknown unit {unit:?} (K, M, G or T)")]
    UnknownUnit {
        /// The whole text.
        text: String,
        /// The unit as written.
        unit: String,
    },
    /// More than 2^64 - 1 bytes.
    #[error("invalid size {0:?}: too large")]
    Overflow(String),
}

impl ByteSize {
    /// The number of bytes.
    pub const fn bytes(self) -> u64 {
        self.0
    }

    /// Parses `16M`, `2G`, `4096`, `512KiB`, `1t`.
    pub fn parse(text: &str) -> Result<ByteSize, SizeError> {
        let t = text.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (number, unit) = t.split_at(split);
        if number.is_empty() {
            return Err(SizeError::NotANumber(text.to_string()));
        }
        let shift = match unit.trim().to_ascii_uppercase().as_str() {
            "" | "B" => 0,
            "K" | "KB" | "KIB" => 10,
            "M" | "MB" | "MIB" => 20,
            "G" | "GB" | "GIB" => 30,
            "T" | "TB" | "TIB" => 40,
            _ if unit.starts_with('.') => return Err(SizeError::NotANumber(text.to_string())),
            _ => {
                return Err(SizeError::UnknownUnit {
                    text: text.to_string(),
                    unit: unit.trim().to_string(),
                })
            }
        };
        number
            .parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(1 << shift))
            .map(ByteSize)
            .ok_or_else(|| SizeError::Overflow(text.to_string()))
    }
}

impl std::str::FromStr for ByteSize {
    type Err = SizeError;
    fn from_str(text: &str) -> Result<ByteSize, SizeError> {
        ByteSize::parse(text)
    }
}

impl fmt::Display for ByteSize {
    /// The largest binary unit that shows the size exactly: `16M`, `1536K`, `4097`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        for (shift, unit) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
            if n != 0 && n % (1u64 << shift) == 0 {
                return write!(f, "{}{unit}", n >> shift);
            }
        }
        write!(f, "{n}")
    }
}

/// Written as a number of bytes, so that JSON readers get a number.
impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

/// Read from a string (`"16M"`) or a number of bytes.
impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ByteSize, D::Error> {
        struct SizeVisitor;
        impl Visitor<'_> for SizeVisitor {
            type Value = ByteSize;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size such as \"16M\" or a number of bytes")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ByteSize, E> {
                Ok(ByteSize(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ByteSize, E> {
                u64::try_from(v)
                    .map(ByteSize)
                    .map_err(|_| E::custom(format!("invalid size {v}: negative")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ByteSize, E> {
                ByteSize::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_any(SizeVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Option<TimeUnit> = Some(TimeUnit::Milliseconds);

    #[test]
    fn every_unit_and_a_bare_number() {
        let ms = |n| Duration::from_millis(n);
        assert_eq!(parse_duration("250ns", MS), Ok(Duration::from_nanos(250)));
        assert_eq!(parse_duration("250us", MS), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("250µs", MS), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("500ms", MS), Ok(ms(500)));
        assert_eq!(parse_duration("10s", MS), Ok(ms(10_000)));
        assert_eq!(parse_duration("2m", MS), Ok(ms(120_000)));
        assert_eq!(parse_duration("2min", MS), Ok(ms(120_000)));
        assert_eq!(parse_duration("1h", MS), Ok(ms(3_600_000)));
        assert_eq!(parse_duration(" 10 ms ", MS), Ok(ms(10)));
        assert_eq!(parse_duration("250", MS), Ok(ms(250)));
        assert_eq!(
            parse_duration("250", Some(TimeUnit::Seconds)),
            Ok(ms(250_000))
        );
    }

    #[test]
    fn zero_is_a_duration() {
        assert_eq!(parse_duration("0", MS), Ok(Duration::ZERO));
        assert_eq!(parse_duration("0s", None), Ok(Duration::ZERO));
        assert_eq!(parse_duration("0.0ms", None), Ok(Duration::ZERO));
    }

    #[test]
    fn fractions_are_exact_to_the_nanosecond() {
        assert_eq!(parse_duration("0.1s", None), Ok(Duration::from_millis(100)));
        assert_eq!(parse_duration("1.5h", None), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration(".5s", None), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2.s", None), Ok(Duration::from_secs(2)));
        assert_eq!(
            parse_duration("1.0000000019s", None),
            Ok(Duration::new(1, 1))
        );
        assert_eq!(parse_duration("0.5ns", None), Ok(Duration::ZERO));
        // More fraction digits than count do not overflow.
        let long = format!("1.{}h", "9".repeat(60));
        assert!(parse_duration(&long, None).unwrap() < Duration::from_secs(7200));
    }

    #[test]
    fn refusals_say_why() {
        assert_eq!(parse_duration("", MS), Err(DurationError::Empty));
        assert_eq!(parse_duration("   ", MS), Err(DurationError::Empty));
        assert!(matches!(
            parse_duration("-5s", MS),
            Err(DurationError::Negative(_))
        ));
        for junk in ["s", "ms", ".", "1.2.3s", "+5s", "1e3", "five", "0x10"] {
            assert!(
                matches!(
                    parse_duration(junk, MS),
                    Err(DurationError::NotANumber(_) | DurationError::UnknownUnit { .. })
                ),
                "{junk}"
            );
        }
        assert_eq!(
            parse_duration("2 weeks", MS),
            Err(DurationError::UnknownUnit {
                text: "2 weeks".into(),
                unit: "weeks".into()
            })
        );
        assert!(matches!(
            parse_duration("5", None),
            Err(DurationError::MissingUnit(_))
        ));
        let message = parse_duration("3d", MS).unwrap_err().to_string();
        assert!(message.contains("\"3d\"") && message.contains("ms, s, m or h"));
    }

    #[test]
    fn overflow_is_refused_not_wrapped() {
        let max_secs = u64::MAX.to_string();
        assert_eq!(
            parse_duration(&format!("{max_secs}s"), None),
            Ok(Duration::from_secs(u64::MAX))
        );
        for huge in [
            format!("{max_secs}h"),
            "18446744073709551616s".to_string(),
            "9".repeat(40) + "ns",
            "1".to_string() + &"0".repeat(100),
        ] {
            assert!(
                matches!(parse_duration(&huge, MS), Err(DurationError::Overflow(_))),
                "{huge}"
            );
        }
        // Leading zeros are not digits that overflow.
        assert_eq!(
            parse_duration(&format!("{}1ms", "0".repeat(50)), None),
            Ok(Duration::from_millis(1))
        );
    }

    #[test]
    fn syntax_checks_its_range() {
        let interval = DurationSyntax::new(TimeUnit::Milliseconds)
            .at_least(Duration::from_millis(1))
            .at_most(Duration::from_secs(86_400));
        assert_eq!(interval.parse("1"), Ok(Duration::from_millis(1)));
        assert_eq!(interval.parse("24h"), Ok(Duration::from_secs(86_400)));
        let err = interval.parse("0").unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"0\" is out of range: at least 1ms and at most 24h"
        );
        assert!(interval.parse("0.5ms").is_err());
        assert!(interval.parse("25h").is_err());
        assert_eq!(
            DurationSyntax::new(TimeUnit::Seconds).parse("0"),
            Ok(Duration::ZERO)
        );
    }

    #[test]
    fn durations_are_written_with_their_largest_exact_unit() {
        assert_eq!(format_duration(Duration::from_millis(1)), "1ms");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(format_duration(Duration::from_secs(7 * 86_400)), "168h");
        assert_eq!(format_duration(Duration::ZERO), "0s");
        assert_eq!(format_duration(Duration::from_nanos(1001)), "1001ns");
    }

    #[test]
    fn sizes() {
        let size = |t| ByteSize::parse(t).map(ByteSize::bytes);
        assert_eq!(size("16M"), Ok(16 << 20));
        assert_eq!(size("2G"), Ok(2 << 30));
        assert_eq!(size("4096"), Ok(4096));
        assert_eq!(size("512KiB"), Ok(512 << 10));
        assert_eq!(size("256m"), Ok(256 << 20));
        assert_eq!(size("1t"), Ok(1 << 40));
        assert_eq!(size("0"), Ok(0));
        assert_eq!(size("7 B"), Ok(7));
        for junk in ["", "M", "-1G", "1.5G", "+4"] {
            assert!(
                matches!(ByteSize::parse(junk), Err(SizeError::NotANumber(_))),
                "{junk}"
            );
        }
        assert!(matches!(
            ByteSize::parse("12Q"),
            Err(SizeError::UnknownUnit { .. })
        ));
        assert!(matches!(
            ByteSize::parse("16777216T"),
            Err(SizeError::Overflow(_))
        ));
        assert!(matches!(
            ByteSize::parse("99999999999999999999"),
            Err(SizeError::Overflow(_))
        ));
        assert_eq!(ByteSize(16 << 20).to_string(), "16M");
        assert_eq!(ByteSize(1536 << 10).to_string(), "1536K");
        assert_eq!(ByteSize(4097).to_string(), "4097");
        assert_eq!(ByteSize(0).to_string(), "0");
    }

    #[test]
    fn sizes_from_files_are_strings_or_numbers() {
        let from_json = |j| serde_json::from_str::<ByteSize>(j).map_err(|e| e.to_string());
        assert_eq!(from_json("\"16M\""), Ok(ByteSize(16 << 20)));
        assert_eq!(from_json("4096"), Ok(ByteSize(4096)));
        assert!(from_json("-1").unwrap_err().contains("negative"));
        assert!(from_json("\"12Q\"").unwrap_err().contains("unknown unit"));
        assert_eq!(serde_json::to_string(&ByteSize(1024)).unwrap(), "1024");
    }
}
