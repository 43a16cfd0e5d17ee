//! Kernel release, for behaviour that changed between versions.

use serde::Serialize;

use crate::read::{parse_error, read_string};
use crate::Result;

const OSRELEASE: &str = "/proc/sys/kernel/osrelease";

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelVersion {
    /// The full release string, e.g. `6.1.0-18-amd64`.
    pub release: String,
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    pub source: String,
}

impl KernelVersion {
    pub fn parse(release: &str) -> Option<KernelVersion> {
        let release = release.trim();
        let numeric: String = release
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let mut parts = numeric.split('.').filter(|p| !p.is_empty());
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        let patch = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        Some(KernelVersion {
            release: release.to_string(),
            major,
            minor,
            patch,
            source: OSRELEASE.to_string(),
        })
    }

    pub fn at_least(&self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }
}

pub fn kernel_version() -> Result<KernelVersion> {
    let text = read_string(OSRELEASE)?;
    KernelVersion::parse(&text).ok_or_else(|| {
        parse_error(
            OSRELEASE,
            format!("not a kernel release: {:?}", text.trim()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_distribution_suffixes() {
        let v = KernelVersion::parse("3.10.0-1160.el7.x86_64\n").unwrap();
        assert_eq!((v.major, v.minor, v.patch), (3, 10, 0));
        assert!(v.at_least(3, 9));
        let v = KernelVersion::parse("6.18-rc1").unwrap();
        assert_eq!((v.major, v.minor, v.patch), (6, 18, 0));
        assert!(!KernelVersion::parse("3.2.0").unwrap().at_least(3, 9));
        assert!(KernelVersion::parse("linux").is_none());
    }
}
