//! Sizes ("16M", "2G", "4096") and durations ("2m", "90s", "500ms", "1h") as written in
//! experiments and on the command line.

use std::time::Duration;

/// Parses a size with an optional binary unit: K, M, G (also KiB, MiB, GiB). No unit = bytes.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let number: u64 = number.parse().map_err(|_| {
        format!("invalid size {text:?}: expected a number with K, M or G, e.g. 16M")
    })?;
    let factor: u64 = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => {
            return Err(format!(
                "invalid size {text:?}: unknown unit {unit:?} (K, M or G)"
            ))
        }
    };
    number
        .checked_mul(factor)
        .ok_or_else(|| format!("invalid size {text:?}: too large"))
}

/// Parses a duration: a number with ms, s, m or h (a bare number is seconds).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("invalid duration {text:?}: expected e.g. 90s, 2m or 500ms"))?;
    let seconds = match unit.trim() {
        "ms" => number / 1000.0,
        "" | "s" => number,
        "m" | "min" => number * 60.0,
        "h" => number * 3600.0,
        _ => {
            return Err(format!(
                "invalid duration {text:?}: unknown unit {unit:?} (ms, s, m or h)"
            ))
        }
    };
    if !seconds.is_finite() || !(0.0..=7.0 * 86400.0).contains(&seconds) {
        return Err(format!("invalid duration {text:?}: out of range"));
    }
    Ok(Duration::from_secs_f64(seconds))
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
        assert!(parse_duration("").is_err());
    }
}
