//! Fault injection: the slow stable-pages device (a throttled loop device whose queue
//! requires stable pages), and tmpfs mounts. Every step goes through the journal first.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

// Kept on this path for callers that set up a slow device directly.
pub use crate::experiment::SlowDeviceSpec;
use crate::experiment::{Filesystem, MountOptions};
use crate::host::cgroup;
use crate::host::journal::{Change, Journal};
use crate::host::sys;
use crate::LabError;

/// The blkio throttle rules of a cgroup v1 hierarchy's root group.
const BLKIO_WRITE_BPS: &str = "blkio.throttle.write_bps_device";

/// How writes to the slow device are throttled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum WriteThrottle {
    /// cgroup v1: a rule in the root group's `blkio.throttle.write_bps_device`, which
    /// throttles every writer of the device, the kernel's flusher threads included.
    BlkioV1 { control: PathBuf },
    /// cgroup v2: `io.max` on a cgroup of the run holding every process of the run (the
    /// JVMs and the lab with its disk writer). Writeback is charged to the cgroup that
    /// dirtied the page only when the memory controller is on v2 too (`memory`).
    IoMaxV2 { root: PathBuf, memory: bool },
}

impl WriteThrottle {
    /// The throttle this host offers, and for a hybrid host one line saying what it cannot
    /// do; or one line naming what is missing.
    pub fn choose(
        hierarchies: &cgroup::Hierarchies,
    ) -> Result<(WriteThrottle, Option<String>), cgroup::CgroupError> {
        let v2_memory = hierarchies.v2_with("memory").is_some();
        if let Some(root) = hierarchies.v1("blkio") {
            let control = root.join(BLKIO_WRITE_BPS);
            if control.exists() {
                // The v1 rule throttles every writer, flusher threads included: a hybrid
                // host then lacks nothing the run needs, so there is nothing to say.
                return Ok((WriteThrottle::BlkioV1 { control }, None));
            }
        }
        if let Some(root) = hierarchies.v2_with("io") {
            let throttle = WriteThrottle::IoMaxV2 {
                root: root.to_path_buf(),
                memory: v2_memory,
            };
            let note = (!v2_memory).then(|| {
                "cgroup hybrid host: the memory controller is not on cgroup v2, so writeback the kernel's flusher threads start is not charged to the run's cgroup and escapes io.max; only writes the run issues itself (the disk writer's fdatasync, the writeback forcer) are throttled".to_string()
            });
            return Ok((throttle, note));
        }
        Err(cgroup::CgroupError::NoWriteThrottle {
            v2: hierarchies
                .v2
                .as_ref()
                .map(|v2| (v2.root.clone(), v2.available.clone())),
        })
    }

    /// [`WriteThrottle::choose`] on this host.
    pub fn for_this_host() -> Result<(WriteThrottle, Option<String>), cgroup::CgroupError> {
        WriteThrottle::choose(&cgroup::Hierarchies::read())
    }
}

/// A slow device, set up and mounted.
#[derive(Debug, Clone, Serialize)]
pub struct SlowDevice {
    pub image: PathBuf,
    pub device: String,
    pub dev_numbers: String,
    pub mount_point: PathBuf,
    pub spec: SlowDeviceSpec,
    pub throttle: WriteThrottle,
}

fn fail(step: &str, detail: impl std::fmt::Display) -> LabError {
    LabError::Host(format!("{step}: {detail}"))
}

/// Creates the image in `scratch`, attaches it to a loop device, sets `stable_writes`
/// before mkfs, makes the filesystem without lazy init, mounts it on `scratch/slowfs` and
/// throttles writes to it.
pub fn setup_slow_device(
    journal: &mut Journal,
    scratch: &Path,
    spec: &SlowDeviceSpec,
) -> Result<SlowDevice, LabError> {
    let free = sys::free_bytes(scratch).map_err(|e| fail("free space", e))?;
    // The image is sparse, but the disk writer and the JVMs fill part of it.
    let needed = spec.size_bytes / 2 + (256 << 20);
    if free < needed {
        return Err(fail(
            "free space",
            format!(
                "{} has {} MiB free, the slow device needs {} MiB; free space or pass --no-fault",
                scratch.display(),
                free >> 20,
                needed >> 20
            ),
        ));
    }
    let (throttle, _) = WriteThrottle::for_this_host().map_err(|e| fail("write throttle", e))?;
    let image = scratch.join("slow.img");
    journal.record(Change::File {
        path: image.clone(),
    })?;
    let file = pauselab_pause::output::create_file(&image)
        .map_err(|e| LabError::io(&image, "create the device image", e))?;
    file.set_len(spec.size_bytes)
        .map_err(|e| LabError::io(&image, "size the device image", e))?;
    drop(file);

    journal.record(Change::LoopDevice {
        image: image.clone(),
    })?;
    let image_arg = image.to_string_lossy().into_owned();
    let dev_path = sys::run_tool("losetup", &["-f", "--show", &image_arg])
        .map_err(|e| fail("loop device", e))?;
    let device = dev_path.trim_start_matches("/dev/").to_string();

    let stable = PathBuf::from(format!("/sys/block/{device}/queue/stable_writes"));
    let previous = fs::read_to_string(&stable).map_err(|e| LabError::io(&stable, "read", e))?;
    let wanted = if spec.stable_writes { "1" } else { "0" };
    if previous.trim() != wanted {
        journal.record(Change::SysfsWrite {
            path: stable.clone(),
            previous: previous.trim().to_string(),
            loop_image: Some(image.clone()),
        })?;
        fs::write(&stable, wanted).map_err(|e| LabError::io(&stable, "write", e))?;
    }

    let mkfs = spec.fstype.mkfs();
    match spec.fstype {
        Filesystem::Ext4 => sys::run_tool(
            &mkfs,
            &[
                "-q",
                "-F",
                "-E",
                "lazy_itable_init=0,lazy_journal_init=0",
                &dev_path,
            ],
        ),
        Filesystem::Xfs | Filesystem::Btrfs => sys::run_tool(&mkfs, &["-q", "-f", &dev_path]),
    }
    .map_err(|e| fail("mkfs", e))?;

    let mount_point = scratch.join("slowfs");
    journal.record(Change::Dir {
        path: mount_point.clone(),
    })?;
    fs::create_dir(&mount_point).map_err(|e| LabError::io(&mount_point, "create", e))?;
    journal.record(Change::Mount {
        target: mount_point.clone(),
    })?;
    let (flags, data) = mount_flags(spec.mount_options.as_ref());
    sys::mount(&dev_path, &mount_point, spec.fstype.name(), flags, &data)
        .map_err(|e| fail("mount", e))?;
    // JVMs of any user create their hsperfdata directory here, as in /tmp.
    set_sticky_world_writable(&mount_point)?;

    let dev_numbers = sys::block_dev_numbers(&device).map_err(|e| fail("device numbers", e))?;
    throttle_writes(journal, &throttle, &dev_numbers, spec.write_bps)?;

    Ok(SlowDevice {
        image,
        device,
        dev_numbers,
        mount_point,
        spec: spec.clone(),
        throttle,
    })
}

/// Limits writes to `device` (MAJ:MIN) to `bytes_per_s`. On cgroup v2 this process joins
/// the run's cgroup (`<root>/pauselab-<run>/runner`) first, so that the disk writer, the
/// writeback forcer and every JVM started afterwards are inside the throttled cgroup.
fn throttle_writes(
    journal: &mut Journal,
    throttle: &WriteThrottle,
    device: &str,
    bytes_per_s: u64,
) -> Result<(), LabError> {
    match throttle {
        WriteThrottle::BlkioV1 { control } => {
            journal.record(Change::BlkioThrottle {
                control: control.clone(),
                device: device.to_string(),
            })?;
            fs::write(control, format!("{device} {bytes_per_s}\n"))
                .map_err(|e| LabError::io(control, "write the throttle", e))
        }
        WriteThrottle::IoMaxV2 { root, memory } => {
            let controllers: &[&str] = if *memory { &["io", "memory"] } else { &["io"] };
            let run_id = journal.run_id().to_string();
            let group = cgroup::v2_run_group(journal, root, &run_id, controllers)?;
            let runner = group.join(cgroup::RUNNER_GROUP);
            cgroup::make_group(journal, &runner)?;
            cgroup::join(journal, root, &runner, std::process::id())?;
            cgroup::limit_writes(journal, &group, device, bytes_per_s)
        }
    }
}

/// Splits mount options as `mount -o` takes them into the flags of mount(2) (the options
/// of every filesystem, which `mount` itself translates) and the filesystem's own options,
/// passed on as text for the kernel to accept or refuse.
pub fn mount_flags(options: Option<&MountOptions>) -> (libc::c_ulong, String) {
    let mut flags: libc::c_ulong = 0;
    let mut data: Vec<&str> = Vec::new();
    for word in options.into_iter().flat_map(MountOptions::words) {
        let flag = match word {
            "noatime" => libc::MS_NOATIME,
            "nodiratime" => libc::MS_NODIRATIME,
            "relatime" => libc::MS_RELATIME,
            "strictatime" => libc::MS_STRICTATIME,
            "lazytime" => libc::MS_LAZYTIME,
            "sync" => libc::MS_SYNCHRONOUS,
            "dirsync" => libc::MS_DIRSYNC,
            "nosuid" => libc::MS_NOSUID,
            "nodev" => libc::MS_NODEV,
            "noexec" => libc::MS_NOEXEC,
            // The defaults of mount(2) already.
            "async" | "atime" | "diratime" | "nolazytime" | "defaults" | "rw" => 0,
            other => {
                data.push(other);
                0
            }
        };
        flags |= flag;
    }
    (flags, data.join(","))
}

/// Mounts a tmpfs of `size_bytes` on `target` (created).
pub fn mount_tmpfs(journal: &mut Journal, target: &Path, size_bytes: u64) -> Result<(), LabError> {
    journal.record(Change::Dir {
        path: target.to_path_buf(),
    })?;
    fs::create_dir(target).map_err(|e| LabError::io(target, "create", e))?;
    journal.record(Change::Mount {
        target: target.to_path_buf(),
    })?;
    sys::mount(
        "pauselab-tmpfs",
        target,
        "tmpfs",
        libc::MS_NOSUID | libc::MS_NODEV,
        &format!("size={size_bytes},mode=1777"),
    )
    .map_err(|e| fail("tmpfs", e))
}

/// Creates a directory (journaled), sticky and writable by all like /tmp.
pub fn create_dir(journal: &mut Journal, path: &Path) -> Result<(), LabError> {
    journal.record(Change::Dir {
        path: path.to_path_buf(),
    })?;
    fs::create_dir(path).map_err(|e| LabError::io(path, "create", e))?;
    set_sticky_world_writable(path)
}

fn set_sticky_world_writable(path: &Path) -> Result<(), LabError> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o1777))
        .map_err(|e| LabError::io(path, "chmod", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_throttle_fits_the_host_or_names_what_is_missing() {
        use cgroup::Hierarchies;
        let v1 = "38 31 0:35 / /sys/fs/cgroup/blkio rw - cgroup cgroup rw,blkio\n";
        let v2 = "41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let offers = |list: &'static str| {
            move |_: &Path| {
                list.split_whitespace()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            }
        };
        let pure_v2 = Hierarchies::parse(v2, offers("cpu io memory"));
        assert_eq!(
            WriteThrottle::choose(&pure_v2),
            Ok((
                WriteThrottle::IoMaxV2 {
                    root: "/sys/fs/cgroup".into(),
                    memory: true
                },
                None
            ))
        );
        let (throttle, note) =
            WriteThrottle::choose(&Hierarchies::parse(v2, offers("io"))).unwrap();
        assert_eq!(
            throttle,
            WriteThrottle::IoMaxV2 {
                root: "/sys/fs/cgroup".into(),
                memory: false
            }
        );
        assert!(note.unwrap().contains("escapes io.max"));
        let err = WriteThrottle::choose(&Hierarchies::parse(v2, offers("cpu memory")))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no cgroup v1 blkio controller")
                && err.contains("cpu memory")
                && err.contains("--no-fault"),
            "{err}"
        );
        let err = WriteThrottle::choose(&Hierarchies::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("no cgroup v2 is mounted"), "{err}");
        // v1 blkio is chosen when its control file exists (this host's, when it has one).
        let hybrid = Hierarchies::parse(&format!("{v1}{v2}"), offers("hugetlb"));
        if Path::new("/sys/fs/cgroup/blkio")
            .join(BLKIO_WRITE_BPS)
            .exists()
        {
            let (throttle, note) = WriteThrottle::choose(&hybrid).unwrap();
            assert!(matches!(throttle, WriteThrottle::BlkioV1 { .. }));
            assert_eq!(
                note, None,
                "the v1 throttle lacks nothing: no line on every run"
            );
        }
    }

    #[test]
    fn vfs_options_become_flags_the_rest_goes_to_the_filesystem() {
        let options: MountOptions = "noatime,lazytime,data=writeback,async".parse().unwrap();
        assert_eq!(
            mount_flags(Some(&options)),
            (
                libc::MS_NOATIME | libc::MS_LAZYTIME,
                "data=writeback".into()
            )
        );
        assert_eq!(mount_flags(None), (0, String::new()));
    }
}
