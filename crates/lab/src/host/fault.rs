//! Fault injection: the slow stable-pages device (a throttled loop device whose queue
//! requires stable pages), and tmpfs mounts. Every step goes through the journal first.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

// Kept on this path for callers that set up a slow device directly.
pub use crate::experiment::SlowDeviceSpec;
use crate::experiment::{Filesystem, MountOptions};
use crate::host::journal::{Change, Journal};
use crate::host::sys;
use crate::LabError;

/// Where the blkio throttle rules live (cgroup v1, root group).
pub const BLKIO_WRITE_BPS: &str = "/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device";

/// A slow device, set up and mounted.
#[derive(Debug, Clone, Serialize)]
pub struct SlowDevice {
    pub image: PathBuf,
    pub device: String,
    pub dev_numbers: String,
    pub mount_point: PathBuf,
    pub spec: SlowDeviceSpec,
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
    if !Path::new(BLKIO_WRITE_BPS).exists() {
        return Err(fail(
            "blkio throttle",
            format!("{BLKIO_WRITE_BPS} not found (needs the cgroup v1 blkio controller); pass --no-fault"),
        ));
    }
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
    journal.record(Change::BlkioThrottle {
        control: BLKIO_WRITE_BPS.into(),
        device: dev_numbers.clone(),
    })?;
    fs::write(
        BLKIO_WRITE_BPS,
        format!("{dev_numbers} {}\n", spec.write_bps),
    )
    .map_err(|e| LabError::io(Path::new(BLKIO_WRITE_BPS), "write the throttle", e))?;

    Ok(SlowDevice {
        image,
        device,
        dev_numbers,
        mount_point,
        spec: spec.clone(),
    })
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
