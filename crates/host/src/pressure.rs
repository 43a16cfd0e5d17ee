//! Pressure stall information: the share of time tasks waited for CPU, I/O or memory.

use std::path::Path;

use serde::Serialize;

use crate::read::{parse_error, read_optional};
use crate::Result;

/// One `some` or `full` line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct PressureLine {
    pub avg10: f64,
    pub avg60: f64,
    pub avg300: f64,
    /// Total stall time in microseconds since boot.
    pub total_us: u64,
}

/// One resource: `some` = at least one task stalled, `full` = all non-idle tasks stalled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Pressure {
    pub some: PressureLine,
    pub full: Option<PressureLine>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct HostPressure {
    pub cpu: Pressure,
    pub io: Pressure,
    pub memory: Pressure,
}

impl HostPressure {
    /// Microseconds of stall per resource (`some`) between two snapshots.
    pub fn stalled_us_since(&self, earlier: &HostPressure) -> PressureDelta {
        let delta =
            |now: &Pressure, then: &Pressure| now.some.total_us.saturating_sub(then.some.total_us);
        PressureDelta {
            cpu_some_us: delta(&self.cpu, &earlier.cpu),
            io_some_us: delta(&self.io, &earlier.io),
            memory_some_us: delta(&self.memory, &earlier.memory),
            io_full_us: self
                .io
                .full
                .zip(earlier.io.full)
                .map(|(now, then)| now.total_us.saturating_sub(then.total_us))
                .unwrap_or(0),
            memory_full_us: self
                .memory
                .full
                .zip(earlier.memory.full)
                .map(|(now, then)| now.total_us.saturating_sub(then.total_us))
                .unwrap_or(0),
        }
    }
}

/// Stall time accumulated between two snapshots, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PressureDelta {
    pub cpu_some_us: u64,
    pub io_some_us: u64,
    pub io_full_us: u64,
    pub memory_some_us: u64,
    pub memory_full_us: u64,
}

pub fn parse_pressure(path: &Path, text: &str) -> Result<Pressure> {
    let mut some = None;
    let mut full = None;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut words = line.split_whitespace();
        let kind = words.next().unwrap_or("");
        let mut parsed = PressureLine::default();
        for word in words {
            let (key, value) = word
                .split_once('=')
                .ok_or_else(|| parse_error(path, format!("bad field {word:?}")))?;
            let bad = || parse_error(path, format!("bad value {word:?}"));
            match key {
                "avg10" => parsed.avg10 = value.parse().map_err(|_| bad())?,
                "avg60" => parsed.avg60 = value.parse().map_err(|_| bad())?,
                "avg300" => parsed.avg300 = value.parse().map_err(|_| bad())?,
                "total" => parsed.total_us = value.parse().map_err(|_| bad())?,
                _ => {}
            }
        }
        match kind {
            "some" => some = Some(parsed),
            "full" => full = Some(parsed),
            other => return Err(parse_error(path, format!("unknown line kind {other:?}"))),
        }
    }
    Ok(Pressure {
        some: some.ok_or_else(|| parse_error(path, "no `some` line"))?,
        full,
    })
}

/// `None` when the kernel has no PSI (built without it, or booted with `psi=0`).
pub fn host_pressure() -> Result<Option<HostPressure>> {
    let read = |name: &str| -> Result<Option<Pressure>> {
        let path = Path::new("/proc/pressure").join(name);
        match read_optional(&path) {
            Ok(Some(text)) => parse_pressure(&path, &text).map(Some),
            Ok(None) => Ok(None),
            // psi=0 leaves the files but reading them fails with EOPNOTSUPP.
            Err(crate::HostError::Read { source, .. })
                if source.raw_os_error() == Some(libc::EOPNOTSUPP) =>
            {
                Ok(None)
            }
            Err(err) => Err(err),
        }
    };
    let (Some(cpu), Some(io), Some(memory)) = (read("cpu")?, read("io")?, read("memory")?) else {
        return Ok(None);
    };
    Ok(Some(HostPressure { cpu, io, memory }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_some_and_full() {
        let text = "some avg10=0.47 avg60=0.13 avg300=0.31 total=2952076\nfull avg10=0.40 avg60=0.10 avg300=0.29 total=2762214\n";
        let p = parse_pressure(Path::new("io"), text).unwrap();
        assert_eq!(p.some.total_us, 2952076);
        assert_eq!(p.full.unwrap().avg10, 0.40);
        assert!(parse_pressure(Path::new("io"), "some avg10=x\n").is_err());
        assert!(parse_pressure(Path::new("io"), "").is_err());
    }
}
