//! A cell of a matrix run: one combination of the dimensions (`dimensions`) and the user's
//! disk; [`Experiment::for_cell`] is the experiment as that cell runs it.

use std::path::PathBuf;

use crate::experiment::dimensions::{Filesystem, Gc, MountOptions};
use crate::experiment::parts::PartError;
use crate::experiment::{Experiment, Fault};

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
    pub fn for_cell(&self, cell: &Cell) -> Result<Experiment, PartError> {
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
                return Err(PartError::NoSlowDevice(e.name));
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
            .to_string()
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
        let spec = changed.fault.as_ref().unwrap().slow_device_spec();
        assert_eq!(spec.fstype, Filesystem::Xfs);
        assert_eq!(spec.mount_options.unwrap().as_str(), "noatime");
        let (no_device, _) = Experiment::load("pretouch").unwrap();
        assert!(no_device
            .for_cell(&Cell {
                filesystem: Some(Filesystem::Ext4),
                ..Cell::default()
            })
            .unwrap_err()
            .to_string()
            .contains("no slow device"));
    }
}
