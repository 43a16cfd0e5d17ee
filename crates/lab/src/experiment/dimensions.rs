//! The values a matrix run varies, parsed once from the command line: the collector, the
//! slow device's filesystem and its mount options.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A HotSpot garbage collector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Gc {
    Serial,
    Parallel,
    G1,
    #[serde(rename = "ZGC")]
    Z,
    Shenandoah,
}

impl Gc {
    pub const ALL: [Gc; 5] = [Gc::Serial, Gc::Parallel, Gc::G1, Gc::Z, Gc::Shenandoah];

    /// The name users write and tables show (`ZGC`).
    pub fn name(self) -> &'static str {
        match self {
            Gc::Serial => "Serial",
            Gc::Parallel => "Parallel",
            Gc::G1 => "G1",
            Gc::Z => "ZGC",
            Gc::Shenandoah => "Shenandoah",
        }
    }

    /// The flag that selects it (`-XX:+UseZGC`).
    pub fn flag(self) -> String {
        let short = if self == Gc::Z { "Z" } else { self.name() };
        format!("-XX:+Use{short}GC")
    }

    /// The collector a `-XX:+Use...GC` flag selects.
    pub fn of_flag(flag: &str) -> Option<Gc> {
        Gc::ALL.into_iter().find(|gc| gc.flag() == flag)
    }
}

/// A collector, filesystem or mount options that is not one; the message quotes the text
/// and lists what is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DimensionError {
    #[error("unknown collector {0:?}: Serial, Parallel, G1, ZGC or Shenandoah")]
    Gc(String),
    #[error("unknown filesystem {0:?}: ext4, xfs or btrfs")]
    Filesystem(String),
    #[error(
        "mount options {0:?}: expected words like noatime or data=writeback separated by commas"
    )]
    MountOptions(String),
}

impl FromStr for Gc {
    type Err = DimensionError;
    fn from_str(text: &str) -> Result<Gc, DimensionError> {
        let wanted = text.trim().to_ascii_lowercase();
        Gc::ALL
            .into_iter()
            .find(|gc| gc.name().to_ascii_lowercase() == wanted || (wanted == "z" && *gc == Gc::Z))
            .ok_or_else(|| DimensionError::Gc(text.to_string()))
    }
}

impl fmt::Display for Gc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A filesystem the slow device can be made with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Filesystem {
    Ext4,
    Xfs,
    Btrfs,
}

impl Filesystem {
    pub const ALL: [Filesystem; 3] = [Filesystem::Ext4, Filesystem::Xfs, Filesystem::Btrfs];

    /// The kernel's name for it (`mount -t`).
    pub fn name(self) -> &'static str {
        match self {
            Filesystem::Ext4 => "ext4",
            Filesystem::Xfs => "xfs",
            Filesystem::Btrfs => "btrfs",
        }
    }

    /// The program that makes it.
    pub fn mkfs(self) -> String {
        format!("mkfs.{}", self.name())
    }
}

impl FromStr for Filesystem {
    type Err = DimensionError;
    fn from_str(text: &str) -> Result<Filesystem, DimensionError> {
        let wanted = text.trim().to_ascii_lowercase();
        Filesystem::ALL
            .into_iter()
            .find(|fs| fs.name() == wanted)
            .ok_or_else(|| DimensionError::Filesystem(text.to_string()))
    }
}

impl fmt::Display for Filesystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Mount options as `mount -o` takes them (`noatime`, `lazytime,data=writeback`): words of
/// letters, digits and `_=.-`, separated by commas. Which are flags of the VFS and which
/// the filesystem's own is the host layer's business (`fault::mount_flags`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct MountOptions(String);

impl MountOptions {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn words(&self) -> impl Iterator<Item = &str> {
        self.0.split(',')
    }
}

impl FromStr for MountOptions {
    type Err = DimensionError;
    fn from_str(text: &str) -> Result<MountOptions, DimensionError> {
        let ok_word = |w: &str| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '=' | '.' | '-'))
        };
        if text.split(',').all(ok_word) {
            Ok(MountOptions(text.to_string()))
        } else {
            Err(DimensionError::MountOptions(text.to_string()))
        }
    }
}

impl TryFrom<String> for MountOptions {
    type Error = DimensionError;
    fn try_from(text: String) -> Result<MountOptions, DimensionError> {
        text.parse()
    }
}

impl From<MountOptions> for String {
    fn from(options: MountOptions) -> String {
        options.0
    }
}

impl fmt::Display for MountOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
