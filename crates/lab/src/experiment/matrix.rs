//! The dimensions of a matrix run, as typed values parsed once from the command line: the
//! collector, the slow device's filesystem and mount options, the user's disk. A [`Cell`]
//! is one combination; [`Experiment::for_cell`] is the experiment as that cell runs it.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::experiment::{Experiment, Fault};

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

impl FromStr for Gc {
    type Err = String;
    fn from_str(text: &str) -> Result<Gc, String> {
        let wanted = text.trim().to_ascii_lowercase();
        Gc::ALL
            .into_iter()
            .find(|gc| gc.name().to_ascii_lowercase() == wanted || (wanted == "z" && *gc == Gc::Z))
            .ok_or_else(|| {
                format!("unknown collector {text:?}: Serial, Parallel, G1, ZGC or Shenandoah")
            })
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
    type Err = String;
    fn from_str(text: &str) -> Result<Filesystem, String> {
        let wanted = text.trim().to_ascii_lowercase();
        Filesystem::ALL
            .into_iter()
            .find(|fs| fs.name() == wanted)
            .ok_or_else(|| format!("unknown filesystem {text:?}: ext4, xfs or btrfs"))
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
    type Err = String;
    fn from_str(text: &str) -> Result<MountOptions, String> {
        let ok_word = |w: &str| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '=' | '.' | '-'))
        };
        if text.split(',').all(ok_word) {
            Ok(MountOptions(text.to_string()))
        } else {
            Err(format!(
                "mount options {text:?}: expected words like noatime or data=writeback separated by commas"
            ))
        }
    }
}

impl TryFrom<String> for MountOptions {
    type Error = String;
    fn try_from(text: String) -> Result<MountOptions, String> {
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

/// One combination of a matrix: what differs from the experiment as written. `None` keeps
/// the experiment's own choice.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cell {
    pub gc: Option<Gc>,
    pub filesystem: Option<Filesystem>,
    pub mount_options: Option<MountOptions>,
    /// Stress this directory instead of the slow device.
    pub disk: Option<PathBuf>,
}

impl Cell {
    /// Names the cell in directory names and tables: its values joined by `-`
    /// (`G1-xfs-lazytime`), `default` when it changes nothing.
    pub fn label(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        parts.extend(self.gc.map(|gc| gc.name().to_string()));
        parts.extend(self.filesystem.map(|fs| fs.name().to_string()));
        parts.extend(
            self.mount_options
                .as_ref()
                .map(|o| o.as_str().replace(',', "+")),
        );
        parts.extend(self.disk.as_ref().map(|d| {
            let text = d.display().to_string();
            let slug: String = text
                .trim_matches('/')
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            format!("disk_{slug}")
        }));
        if parts.is_empty() {
            "default".into()
        } else {
            // `=` is legal in a directory name but not in a JVM option's path (`-Xlog:...:file=`).
            parts.join("-").replace(['=', ','], "_")
        }
    }
}

impl Experiment {
    /// The experiment as `cell` runs it: every `-XX:+Use...GC` flag of the workload and the
    /// variants replaced by the cell's collector, the slow device made with its filesystem
    /// and mounted with its options. The slow device must exist for those two (the plan
    /// checks).
    pub fn for_cell(&self, cell: &Cell) -> Result<Experiment, String> {
        let mut e = self.clone();
        if let Some(gc) = cell.gc {
            let replace = |flags: &mut Vec<String>| flags.retain(|f| Gc::of_flag(f).is_none());
            replace(&mut e.workload.jvm_flags);
            for variant in &mut e.variants {
                replace(&mut variant.flags);
            }
            e.workload.jvm_flags.push(gc.flag());
        }
        if cell.filesystem.is_some() || cell.mount_options.is_some() {
            let Some(Fault::SlowStablePages {
                fstype,
                mount_options,
                ..
            }) = &mut e.fault
            else {
                return Err(format!(
                    "experiment {} has no slow device, so --fs and --mount-options have nothing to change",
                    e.name
                ));
            };
            if let Some(fs) = cell.filesystem {
                *fstype = fs;
            }
            if let Some(options) = &cell.mount_options {
                *mount_options = Some(options.clone());
            }
        }
        Ok(e)
    }

    /// The collector the experiment's flags select for every variant, when they agree.
    pub fn gc(&self) -> Option<Gc> {
        let of = |flags: &[String]| flags.iter().rev().find_map(|f| Gc::of_flag(f));
        let common = of(&self.workload.jvm_flags);
        let mut each = self.variants.iter().map(|v| of(&v.flags).or(common));
        let first = each.next()?;
        each.all(|gc| gc == first).then_some(first)?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_once_and_name_themselves() {
        assert_eq!("zgc".parse::<Gc>().unwrap(), Gc::Z);
        assert_eq!(Gc::Z.flag(), "-XX:+UseZGC");
        assert_eq!("G1".parse::<Gc>().unwrap().flag(), "-XX:+UseG1GC");
        assert_eq!(Gc::of_flag("-XX:+UseShenandoahGC"), Some(Gc::Shenandoah));
        assert!("CMS"
            .parse::<Gc>()
            .unwrap_err()
            .contains("Serial, Parallel"));
        assert_eq!("XFS".parse::<Filesystem>().unwrap().mkfs(), "mkfs.xfs");
        assert!("zfs".parse::<Filesystem>().is_err());
        assert!("noatime,data=writeback".parse::<MountOptions>().is_ok());
        assert!("noatime,,x".parse::<MountOptions>().is_err());
        assert!("a b".parse::<MountOptions>().is_err());
        let cell = Cell {
            gc: Some(Gc::G1),
            filesystem: Some(Filesystem::Xfs),
            mount_options: Some("lazytime,data=writeback".parse().unwrap()),
            disk: None,
        };
        assert_eq!(cell.label(), "G1-xfs-lazytime+data_writeback");
        assert_eq!(Cell::default().label(), "default");
    }

    #[test]
    fn a_cell_replaces_the_collector_and_the_device() {
        let (e, _) = Experiment::load("hsperf-mmap").unwrap();
        assert_eq!(e.gc(), Some(Gc::Parallel));
        let cell = Cell {
            gc: Some(Gc::G1),
            filesystem: Some(Filesystem::Xfs),
            mount_options: Some("noatime".parse().unwrap()),
            disk: None,
        };
        let changed = e.for_cell(&cell).unwrap();
        assert_eq!(changed.gc(), Some(Gc::G1));
        let gc_flags: Vec<&String> = changed
            .workload
            .jvm_flags
            .iter()
            .filter(|f| Gc::of_flag(f).is_some())
            .collect();
        assert_eq!(gc_flags, ["-XX:+UseG1GC"]);
        let spec = changed.fault.as_ref().unwrap().slow_device_spec().unwrap();
        assert_eq!(spec.fstype, Filesystem::Xfs);
        assert_eq!(spec.mount_options.unwrap().as_str(), "noatime");
        let (no_device, _) = Experiment::load("pretouch").unwrap();
        assert!(no_device
            .for_cell(&Cell {
                filesystem: Some(Filesystem::Ext4),
                ..Cell::default()
            })
            .unwrap_err()
            .contains("no slow device"));
    }
}
