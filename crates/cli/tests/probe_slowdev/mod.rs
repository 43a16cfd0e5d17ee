//! A slow block device that requires stable pages, for tests that need real writeback
//! stalls (recipe: a loop device with `stable_writes=1`, ext4 without lazy init, a cgroup v1
//! blkio write throttle and a write backlog).
//!
//! Everything it changes is undone in `Drop`, also when the test fails; a test process that
//! was killed leaves devices behind that the next `SlowDevice::start` removes (their names
//! carry the pid of the process that created them).

#![allow(dead_code)] // each test binary uses a different part

pub mod jvm;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const THROTTLE: &str = "/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device";
const NAME_PREFIX: &str = "pauselab-slowdev-";
/// Write bandwidth of the slow device: 4 MB/s.
pub const BYTES_PER_SECOND: u64 = 4 * 1024 * 1024;

/// Why this host cannot build the slow device, if it cannot.
pub fn unavailable() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("needs root (loop devices, mounts, blkio throttle)".into());
    }
    if !Path::new(THROTTLE).exists() {
        return Some(format!("needs the cgroup v1 blkio throttle ({THROTTLE})"));
    }
    for tool in ["losetup", "mkfs.ext4", "mount", "umount"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            return Some(format!("needs `{tool}`"));
        }
    }
    None
}

fn run(program: &str, args: &[&str]) -> Result<String, String> {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

fn write_sysfs(path: &str, value: &str) -> Result<(), String> {
    std::fs::write(path, value).map_err(|e| format!("write {value:?} to {path}: {e}"))
}

pub struct SlowDevice {
    work: PathBuf,
    mount: PathBuf,
    loop_device: Option<String>,
    mounted: bool,
    throttled: Option<String>,
    load: Option<Child>,
}

impl SlowDevice {
    /// Builds the device and starts a backlog of `chunk_mib` MiB writes with fdatasync
    /// (a stalled store waits about chunk / 4 MB/s). Panics with the reason on failure,
    /// after undoing what was already set up.
    pub fn start(name: &str, chunk_mib: u32) -> SlowDevice {
        remove_stale_devices();
        let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("{NAME_PREFIX}{}-{name}", std::process::id()));
        let mut device = SlowDevice {
            mount: work.join("mnt"),
            work,
            loop_device: None,
            mounted: false,
            throttled: None,
            load: None,
        };
        if let Err(err) = device.set_up(chunk_mib) {
            panic!("cannot build the slow device: {err}");
        }
        device
    }

    fn set_up(&mut self, chunk_mib: u32) -> Result<(), String> {
        std::fs::create_dir_all(&self.mount)
            .map_err(|e| format!("{}: {e}", self.mount.display()))?;
        let image = self.work.join("slow.img");
        let file =
            std::fs::File::create(&image).map_err(|e| format!("{}: {e}", image.display()))?;
        file.set_len(1 << 30)
            .map_err(|e| format!("{}: {e}", image.display()))?;
        let loop_device = run("losetup", &["-f", "--show", image.to_str().unwrap()])?;
        self.loop_device = Some(loop_device.clone());
        let kernel_name = loop_device.trim_start_matches("/dev/");
        // Before mkfs and mount: set later it has no effect.
        write_sysfs(
            &format!("/sys/block/{kernel_name}/queue/stable_writes"),
            "1",
        )?;
        run(
            "mkfs.ext4",
            &[
                "-q",
                "-F",
                "-E",
                "lazy_itable_init=0,lazy_journal_init=0",
                &loop_device,
            ],
        )?;
        run("mount", &[&loop_device, self.mount.to_str().unwrap()])?;
        self.mounted = true;
        let dev = std::fs::read_to_string(format!("/sys/block/{kernel_name}/dev"))
            .map_err(|e| e.to_string())?;
        let dev = dev.trim().to_string();
        write_sysfs(THROTTLE, &format!("{dev} {BYTES_PER_SECOND}"))?;
        self.throttled = Some(dev);
        let script = format!(
            "while :; do dd if=/dev/zero of={}/load bs=1M count={chunk_mib} conv=fdatasync 2>/dev/null; done",
            self.mount.display()
        );
        let mut command = Command::new("sh");
        command
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .process_group(0);
        // SAFETY: prctl is async-signal-safe; the load dies with the test thread.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        self.load = Some(command.spawn().map_err(|e| format!("write load: {e}"))?);
        Ok(())
    }

    pub fn mount_point(&self) -> &Path {
        &self.mount
    }
}

impl Drop for SlowDevice {
    fn drop(&mut self) {
        if let Some(mut load) = self.load.take() {
            // The whole process group: the shell loop and its current dd.
            // SAFETY: kill on the group we created.
            unsafe { libc::kill(-(load.id() as i32), libc::SIGKILL) };
            let _ = load.wait();
        }
        // Lift the throttle before unmounting, or the final flush crawls at 4 MB/s.
        if let Some(dev) = self.throttled.take() {
            let _ = write_sysfs(THROTTLE, &format!("{dev} 0"));
        }
        if self.mounted {
            unmount(&self.mount);
        }
        if let Some(loop_device) = self.loop_device.take() {
            let _ = run("losetup", &["-d", &loop_device]);
        }
        let _ = std::fs::remove_dir_all(&self.work);
    }
}

fn unmount(mount: &Path) {
    let target = mount.to_str().unwrap_or_default();
    for _ in 0..20 {
        if run("umount", &[target]).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = run("umount", &["-l", target]);
}

/// Removes loop devices (and their mounts and throttles) left by killed test processes.
fn remove_stale_devices() {
    let Ok(listing) = run("losetup", &["-l", "-n", "-O", "NAME,BACK-FILE"]) else {
        return;
    };
    for line in listing.lines() {
        let mut fields = line.split_whitespace();
        let (Some(device), Some(backing)) = (fields.next(), fields.next()) else {
            continue;
        };
        let Some(rest) = backing.split(NAME_PREFIX).nth(1) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let kernel_name = device.trim_start_matches("/dev/");
        if let Ok(dev) = std::fs::read_to_string(format!("/sys/block/{kernel_name}/dev")) {
            let _ = write_sysfs(THROTTLE, &format!("{} 0", dev.trim()));
        }
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        for line in mountinfo.lines() {
            let fields: Vec<&str> = line.split(' ').collect();
            let source = line.split(" - ").nth(1).and_then(|r| r.split(' ').nth(1));
            if source == Some(device) && fields.len() > 4 {
                unmount(Path::new(fields[4]));
            }
        }
        let _ = run("losetup", &["-d", device]);
        if let Some(work) = Path::new(backing).parent() {
            let _ = std::fs::remove_dir_all(work);
        }
    }
}
