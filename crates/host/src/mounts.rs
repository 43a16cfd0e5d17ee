//! Which filesystem and block device hold a path, as the kernel sees it.
//!
//! Read from `mountinfo`, so bind mounts resolve to the device they really live on. A path
//! under `/proc/<pid>/root/` is looked up in that process's own mount table
//! (`/proc/<pid>/mountinfo`): a JVM in a container or a private mount namespace sees other
//! mounts than we do.

use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::read::{parse_error, read_optional, read_string};
use crate::Result;

/// Filesystem types whose pages live only in memory: a store into a mapped page never waits
/// for a disk.
const MEMORY_FILESYSTEMS: &[&str] = &["tmpfs", "ramfs", "hugetlbfs", "devtmpfs"];

/// A device number `major:minor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DeviceNumber {
    pub major: u32,
    pub minor: u32,
}

impl DeviceNumber {
    pub fn from_dev_t(dev: u64) -> Self {
        DeviceNumber {
            major: libc::major(dev),
            minor: libc::minor(dev),
        }
    }
}

impl std::fmt::Display for DeviceNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.major, self.minor)
    }
}

/// One line of a `mountinfo` file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MountEntry {
    pub mount_id: u32,
    pub parent_id: u32,
    pub device: DeviceNumber,
    /// The directory of the filesystem that is mounted here (not `/` for bind mounts).
    pub root: PathBuf,
    pub mount_point: PathBuf,
    pub mount_options: String,
    pub fs_type: String,
    pub source: String,
    pub super_options: String,
}

/// Parses a whole `mountinfo` file (`path` only names it in errors).
pub fn parse_mountinfo(path: &Path, text: &str) -> Result<Vec<MountEntry>> {
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            parse_mountinfo_line(line)
                .ok_or_else(|| parse_error(path, format!("bad mountinfo line {line:?}")))
        })
        .collect()
}

fn parse_mountinfo_line(line: &str) -> Option<MountEntry> {
    let (left, right) = line.split_once(" - ")?;
    let mut fields = left.split(' ');
    let mount_id = fields.next()?.parse().ok()?;
    let parent_id = fields.next()?.parse().ok()?;
    let (major, minor) = fields.next()?.split_once(':')?;
    let device = DeviceNumber {
        major: major.parse().ok()?,
        minor: minor.parse().ok()?,
    };
    let root = PathBuf::from(unescape(fields.next()?));
    let mount_point = PathBuf::from(unescape(fields.next()?));
    let mount_options = fields.next()?.to_string();
    let mut right = right.split(' ');
    let fs_type = right.next()?.to_string();
    let source = unescape(right.next()?);
    let super_options = right.next().unwrap_or("").to_string();
    Some(MountEntry {
        mount_id,
        parent_id,
        device,
        root,
        mount_point,
        mount_options,
        fs_type,
        source,
        super_options,
    })
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let value = (bytes[i + 1] - b'0') as u32 * 64
                + (bytes[i + 2] - b'0') as u32 * 8
                + (bytes[i + 3] - b'0') as u32;
            out.push(value as u8);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The block device under a filesystem, with the queue settings that decide whether stores
/// into mapped pages wait for writeback.
#[derive(Debug, Clone, Serialize)]
pub struct BlockDevice {
    /// Kernel name, e.g. `vda1`, `loop0`, `dm-0`.
    pub name: String,
    pub device: DeviceNumber,
    /// The whole disk when `name` is a partition (queue settings live there), else `name`.
    pub disk: String,
    /// `true`: the device asks for stable pages, so a store into a page under writeback
    /// waits until the write completes. `None`: the kernel exposes no such setting.
    pub stable_writes: Option<bool>,
    /// Where `stable_writes` was read.
    pub stable_writes_source: Option<PathBuf>,
    pub rotational: Option<bool>,
}

/// Where a path lives: its mount, filesystem and device.
#[derive(Debug, Clone, Serialize)]
pub struct PathFilesystem {
    /// The path as asked.
    pub path: PathBuf,
    /// The mount table that was read (`/proc/self/mountinfo` or `/proc/<pid>/mountinfo`).
    pub mountinfo: PathBuf,
    pub mount_point: PathBuf,
    /// Directory of the filesystem mounted at `mount_point` (not `/` for a bind mount).
    pub mount_root: PathBuf,
    pub fs_type: String,
    pub source: String,
    pub device: DeviceNumber,
    pub mount_options: String,
    /// tmpfs and friends: mapped stores never wait for a disk.
    pub memory_backed: bool,
    pub block_device: Option<BlockDevice>,
    /// For overlayfs: the filesystem holding the upper (writable) directory.
    pub overlay_upper: Option<Box<PathFilesystem>>,
}

impl PathFilesystem {
    /// `stable_writes` of the device that really holds the data (following overlayfs).
    pub fn stable_writes(&self) -> Option<bool> {
        match (&self.block_device, &self.overlay_upper) {
            (Some(dev), _) => dev.stable_writes,
            (None, Some(upper)) => upper.stable_writes(),
            (None, None) => None,
        }
    }

    /// Whether the data is in memory only (following overlayfs to its upper directory).
    pub fn is_memory_backed(&self) -> bool {
        match &self.overlay_upper {
            Some(upper) => upper.is_memory_backed(),
            None => self.memory_backed,
        }
    }

    /// One human line: `ext4 on /dev/vda (254:0), mounted at /`.
    pub fn describe(&self) -> String {
        let mut text = format!("{} on {} ({})", self.fs_type, self.source, self.device);
        if let Some(dev) = &self.block_device {
            if dev.disk != dev.name {
                text.push_str(&format!(", partition of {}", dev.disk));
            }
        }
        text.push_str(&format!(", mounted at {}", self.mount_point.display()));
        if self.mount_root != Path::new("/") {
            text.push_str(&format!(" (bind of {})", self.mount_root.display()));
        }
        text
    }
}

/// Splits `/proc/<pid>/root/rest` into (`pid`, `/rest`).
fn split_proc_root(path: &Path) -> Option<(u32, PathBuf)> {
    let mut components = path.components();
    if components.next() != Some(Component::RootDir) {
        return None;
    }
    if components.next()?.as_os_str() != "proc" {
        return None;
    }
    let pid: u32 = components.next()?.as_os_str().to_str()?.parse().ok()?;
    if components.next()?.as_os_str() != "root" {
        return None;
    }
    Some((pid, Path::new("/").join(components.as_path())))
}

/// Removes `.` and resolves `..` without touching the filesystem.
fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// The deepest existing ancestor of `path` (the path itself if it exists): a GC log or
/// hsperf directory that does not exist yet would be created on that filesystem.
fn existing_ancestor(path: &Path) -> Option<(PathBuf, std::fs::Metadata)> {
    let mut candidate = path.to_path_buf();
    loop {
        if let Ok(meta) = std::fs::metadata(&candidate) {
            return Some((candidate, meta));
        }
        if !candidate.pop() {
            return None;
        }
    }
}

/// Filesystem and device of `path` (which need not exist yet: its nearest existing parent
/// decides).
pub fn filesystem_of(path: &Path) -> Result<PathFilesystem> {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|source| crate::HostError::Read {
                path: PathBuf::from("."),
                source,
            })?
            .join(path)
    };
    let (mountinfo, root_prefix, inner) = match split_proc_root(&absolute) {
        Some((pid, rest)) => (
            PathBuf::from(format!("/proc/{pid}/mountinfo")),
            PathBuf::from(format!("/proc/{pid}/root")),
            normalize_lexically(&rest),
        ),
        None => (
            PathBuf::from("/proc/self/mountinfo"),
            PathBuf::from("/"),
            absolute.clone(),
        ),
    };
    let (existing, meta) =
        existing_ancestor(&root_prefix.join(inner.strip_prefix("/").unwrap_or(&inner)))
            .ok_or_else(|| parse_error(&absolute, "no part of this path exists"))?;
    // In our own namespace symlinks may move the path to another mount: resolve them.
    let inner = if root_prefix == Path::new("/") {
        let resolved = std::fs::canonicalize(&existing).unwrap_or(existing.clone());
        let rest = absolute.strip_prefix(&existing).unwrap_or(Path::new(""));
        resolved.join(rest)
    } else {
        inner
    };
    let entries = parse_mountinfo(&mountinfo, &read_string(&mountinfo)?)?;
    let device = DeviceNumber::from_dev_t(meta.dev());
    let entry = best_mount(&entries, &inner, device)
        .ok_or_else(|| parse_error(&mountinfo, format!("no mount holds {}", inner.display())))?;
    Ok(describe_mount(path, &mountinfo, &root_prefix, entry))
}

/// The mount that holds `inner`: the longest matching mount point, the last (topmost) one
/// when mounts are stacked, preferring entries whose device matches what `stat` said.
fn best_mount<'a>(
    entries: &'a [MountEntry],
    inner: &Path,
    device: DeviceNumber,
) -> Option<&'a MountEntry> {
    let holds = |entry: &&MountEntry| inner.starts_with(&entry.mount_point);
    let pick = |candidates: Vec<&'a MountEntry>| {
        let longest = candidates
            .iter()
            .map(|e| e.mount_point.components().count())
            .max()?;
        candidates
            .into_iter()
            .rev()
            .find(|e| e.mount_point.components().count() == longest)
    };
    let matching: Vec<_> = entries
        .iter()
        .filter(holds)
        .filter(|e| e.device == device)
        .collect();
    if matching.is_empty() {
        pick(entries.iter().filter(holds).collect())
    } else {
        pick(matching)
    }
}

fn describe_mount(
    path: &Path,
    mountinfo: &Path,
    root_prefix: &Path,
    entry: &MountEntry,
) -> PathFilesystem {
    let memory_backed = MEMORY_FILESYSTEMS.contains(&entry.fs_type.as_str());
    let block_device = if memory_backed {
        None
    } else {
        block_device_number(entry, root_prefix).and_then(|dev| block_device(dev).ok().flatten())
    };
    let overlay_upper = if entry.fs_type == "overlay" {
        entry
            .super_options
            .split(',')
            .find_map(|option| option.strip_prefix("upperdir="))
            .map(|upper| root_prefix.join(upper.trim_start_matches('/')))
            // The upper directory is often not visible here (a container's root overlay,
            // a root switched away from it): describing its nearest existing parent would
            // describe the overlay itself, again and again.
            .filter(|upper| upper.is_dir())
            .and_then(|upper| filesystem_of(&upper).ok())
            .filter(|upper| upper.mount_point != entry.mount_point || upper.fs_type != "overlay")
            .map(Box::new)
    } else {
        None
    };
    PathFilesystem {
        path: path.to_path_buf(),
        mountinfo: mountinfo.to_path_buf(),
        mount_point: entry.mount_point.clone(),
        mount_root: entry.root.clone(),
        fs_type: entry.fs_type.clone(),
        source: entry.source.clone(),
        device: entry.device,
        mount_options: entry.mount_options.clone(),
        memory_backed,
        block_device,
        overlay_upper,
    }
}

/// The block device behind a mount. btrfs and others report an anonymous device number
/// (major 0) in mountinfo; their source names the real device.
fn block_device_number(entry: &MountEntry, root_prefix: &Path) -> Option<DeviceNumber> {
    if entry.device.major != 0 {
        return Some(entry.device);
    }
    let source = entry.source.strip_prefix('/')?;
    let meta = std::fs::metadata(root_prefix.join(source)).ok()?;
    use std::os::unix::fs::FileTypeExt;
    meta.file_type()
        .is_block_device()
        .then(|| DeviceNumber::from_dev_t(meta.rdev()))
}

/// Facts about block device `device` from sysfs; `None` if it is not a block device.
pub fn block_device(device: DeviceNumber) -> Result<Option<BlockDevice>> {
    let link = PathBuf::from(format!("/sys/dev/block/{device}"));
    let Ok(sysfs) = std::fs::canonicalize(&link) else {
        return Ok(None);
    };
    let name = sysfs
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Queue settings live on the whole disk, not on its partitions.
    let disk_dir = if sysfs.join("partition").exists() {
        sysfs
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or(sysfs.clone())
    } else {
        sysfs.clone()
    };
    let disk = disk_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let queue = disk_dir.join("queue");
    let mut stable_writes = None;
    let mut stable_writes_source = None;
    // `queue/stable_writes` since 5.9; `bdi/stable_pages_required` on older kernels.
    for candidate in [
        queue.join("stable_writes"),
        PathBuf::from(format!("/sys/class/bdi/{device}/stable_pages_required")),
    ] {
        if let Some(text) = read_optional(&candidate)? {
            stable_writes = Some(text.trim() == "1");
            stable_writes_source = Some(candidate);
            break;
        }
    }
    let rotational = read_optional(queue.join("rotational"))?.map(|t| t.trim() == "1");
    Ok(Some(BlockDevice {
        name,
        device,
        disk,
        stable_writes,
        stable_writes_source,
        rotational,
    }))
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_overlay_whose_upper_directory_is_not_visible_has_no_upper() {
        let entry = super::MountEntry {
            mount_id: 1,
            parent_id: 0,
            device: super::DeviceNumber::from_dev_t(0),
            root: "/".into(),
            mount_point: "/".into(),
            mount_options: "rw".into(),
            fs_type: "overlay".into(),
            source: "overlay".into(),
            super_options: "rw,lowerdir=/l,upperdir=/no-such-dir/upper,workdir=/no-such-dir/w"
                .into(),
        };
        let described = super::describe_mount(
            std::path::Path::new("/"),
            std::path::Path::new("/proc/self/mountinfo"),
            std::path::Path::new("/"),
            &entry,
        );
        assert!(described.overlay_upper.is_none(), "{described:?}");
    }

    use super::*;

    const SAMPLE: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684084k
41 27 254:0 /var/slow /tmp rw,relatime shared:1 - ext4 /dev/vda rw
42 27 0:40 / /my\\040dir rw - tmpfs tmpfs rw
";

    #[test]
    fn parses_fields_optional_tags_and_escapes() {
        let entries = parse_mountinfo(Path::new("x"), SAMPLE).unwrap();
        assert_eq!(entries.len(), 5);
        assert_eq!(entries[3].root, Path::new("/var/slow"));
        assert_eq!(entries[3].mount_point, Path::new("/tmp"));
        assert_eq!(entries[3].fs_type, "ext4");
        assert_eq!(entries[4].mount_point, Path::new("/my dir"));
        assert_eq!(
            entries[1].device,
            DeviceNumber {
                major: 254,
                minor: 0
            }
        );
    }

    #[test]
    fn garbage_line_is_an_error_naming_the_file() {
        let err = parse_mountinfo(Path::new("/proc/9/mountinfo"), "garbage\n").unwrap_err();
        assert!(err.to_string().contains("/proc/9/mountinfo"), "{err}");
    }

    #[test]
    fn longest_mount_point_wins_and_bind_mounts_keep_their_device() {
        let entries = parse_mountinfo(Path::new("x"), SAMPLE).unwrap();
        let vda = DeviceNumber {
            major: 254,
            minor: 0,
        };
        let tmp = best_mount(&entries, Path::new("/tmp/hsperfdata_root"), vda).unwrap();
        assert_eq!(tmp.mount_point, Path::new("/tmp"));
        assert_eq!(tmp.root, Path::new("/var/slow"));
        let shm = best_mount(
            &entries,
            Path::new("/dev/shm/x"),
            DeviceNumber {
                major: 0,
                minor: 27,
            },
        )
        .unwrap();
        assert_eq!(shm.fs_type, "tmpfs");
        // `/procfoo` is not under `/proc`: components, not string prefixes.
        let root = best_mount(&entries, Path::new("/procfoo"), vda).unwrap();
        assert_eq!(root.mount_point, Path::new("/"));
    }

    #[test]
    fn proc_root_paths_are_split() {
        assert_eq!(
            split_proc_root(Path::new("/proc/42/root/tmp/x")),
            Some((42, PathBuf::from("/tmp/x")))
        );
        assert_eq!(split_proc_root(Path::new("/proc/self/root/tmp")), None);
        assert_eq!(split_proc_root(Path::new("/tmp")), None);
    }

    #[test]
    fn real_filesystems_resolve() {
        let shm = filesystem_of(Path::new("/dev/shm")).unwrap();
        assert!(shm.is_memory_backed(), "{shm:?}");
        assert!(shm.block_device.is_none());
        let root = filesystem_of(Path::new("/")).unwrap();
        assert!(!root.is_memory_backed());
        // A path that does not exist yet resolves through its parent.
        let missing = filesystem_of(Path::new("/dev/shm/does/not/exist")).unwrap();
        assert_eq!(missing.fs_type, shm.fs_type);
        // Our own namespace seen through /proc/<pid>/root gives the same answer.
        let own = filesystem_of(Path::new(&format!(
            "/proc/{}/root/dev/shm",
            std::process::id()
        )))
        .unwrap();
        assert_eq!(own.device, shm.device);
        assert_eq!(
            own.mountinfo,
            PathBuf::from(format!("/proc/{}/mountinfo", std::process::id()))
        );
    }
}
