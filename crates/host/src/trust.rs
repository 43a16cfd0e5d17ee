//! The trust layer. pauselab runs as root and reads facts from processes any local user can
//! start: a GC log path on a command line, a working directory, the files in a directory a
//! JVM's user writes. Those facts are data, never a path root acts on with its own rights.
//! Everything that opens a path another process chose, or creates or changes a directory,
//! goes through this module:
//!
//! - [`ProcessFiles`]: a path another process names is walked one component at a time
//!   inside that process's root (a chrooted `/../..` stays inside, an absolute link points
//!   inside, a `/proc` magic link is only text) or beneath its working directory, and
//!   opened with its file-system credentials (fsuid, fsgid, supplementary groups, switched
//!   on this thread only), so root reads nothing that process's user could not read.
//!   Without the capabilities to switch, every directory walked and the file read are
//!   checked against the process's ids and their mode bits instead;
//! - [`PrivateDir`]: a directory pauselab creates or hands to another user is walked to and
//!   changed through `O_NOFOLLOW | O_DIRECTORY` descriptors (`mkdirat`, `fchown`,
//!   `fchmod`); a directory others can write, or a link another user planted on the way,
//!   is refused.

use std::fs;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{openat, readlinkat, AtFlags, OFlag};
use nix::sys::stat::{fchmod, fstat, fstatat, mkdirat, FileStat, Mode, SFlag};
use nix::unistd::{faccessat, fchown, unlinkat, AccessFlags, Gid, Uid, UnlinkatFlags};

/// The credentials the kernel checks when a process opens a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    /// File-system uid (the effective uid unless the process changed it).
    pub uid: u32,
    /// File-system gid.
    pub gid: u32,
    /// Supplementary groups.
    pub groups: Vec<u32>,
}

impl Credentials {
    /// The credentials of process `pid`.
    pub fn of_process(pid: u32) -> io::Result<Credentials> {
        Credentials::from_status(&PathBuf::from(format!("/proc/{pid}/status")))
    }

    /// The credentials of the calling thread (they may differ from its process's).
    fn of_this_thread() -> io::Result<Credentials> {
        Credentials::from_status(Path::new("/proc/thread-self/status"))
    }

    fn from_status(path: &Path) -> io::Result<Credentials> {
        let text = fs::read_to_string(path)?;
        let field = |name: &str| text.lines().find_map(|l| l.strip_prefix(name));
        // `Uid:` and `Gid:` list real, effective, saved and file-system ids.
        let fs_id = |name: &str| {
            field(name)
                .and_then(|ids| ids.split_whitespace().nth(3)?.parse().ok())
                .ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("{}: no {name} line", path.display()),
                    )
                })
        };
        Ok(Credentials {
            uid: fs_id("Uid:")?,
            gid: fs_id("Gid:")?,
            groups: field("Groups:")
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|g| g.parse().ok())
                .collect(),
        })
    }
}

/// The files of another process, as it sees them and with its rights.
#[derive(Debug)]
pub struct ProcessFiles {
    /// `/proc/<pid>/root`: what the process calls `/`.
    root: OwnedFd,
    /// `/proc/<pid>/cwd`, for the paths it gives relative to it.
    cwd: Option<OwnedFd>,
    credentials: Credentials,
    access: Access,
}

/// How the process's rights are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    /// This thread has the process's credentials already.
    Same,
    /// This thread takes the process's credentials for each use: the kernel checks
    /// everything (ACLs included) as for the process.
    Switched,
    /// This process cannot take other ids (no `CAP_SETUID`, `CAP_SETGID`, as the systemd
    /// unit and the DaemonSet run it): each directory walked and the file read are checked
    /// against the process's ids and their mode bits (ACLs are not consulted).
    ModeBits,
}

/// Symbolic links followed in one path at most, as the kernel's own limit.
const MAX_LINKS: usize = 40;

impl ProcessFiles {
    /// Takes hold of `pid`'s root, working directory and credentials (needs the right to
    /// trace it, as reading its memory does).
    pub fn of(pid: u32) -> io::Result<ProcessFiles> {
        let proc_dir = |name: &str| {
            let path = format!("/proc/{pid}/{name}");
            openat(
                AT_FDCWD,
                path.as_str(),
                OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
                Mode::empty(),
            )
            .map_err(io::Error::from)
        };
        let root = proc_dir("root")?;
        let cwd = proc_dir("cwd").ok();
        let credentials = Credentials::of_process(pid)?;
        let access = if Credentials::of_this_thread()? == credentials {
            Access::Same
        } else if can_take_other_ids()? {
            Access::Switched
        } else {
            Access::ModeBits
        };
        Ok(ProcessFiles {
            root,
            cwd,
            credentials,
            access,
        })
    }

    /// The process's credentials.
    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    /// Runs `f` on this thread with the process's file-system credentials where this
    /// process can take them, and switches back afterwards (also when `f` panics). What
    /// `f` opens is then opened as that process would. Without that power, `f` runs as it
    /// is: check what it opens with [`ProcessFiles::may_read`].
    pub fn as_process<T>(&self, f: impl FnOnce() -> T) -> io::Result<T> {
        let _switched = match self.access {
            Access::Switched => Switched::to(&self.credentials)?,
            Access::Same | Access::ModeBits => None,
        };
        Ok(f())
    }

    /// Whether the process may read `file` (opened within [`ProcessFiles::as_process`]).
    pub fn may_read(&self, file: &fs::File) -> bool {
        fstat(file).is_ok_and(|s| self.allows(&s, 0o4))
    }

    /// Opens the directory `path` names for the process, with its rights: an absolute path
    /// inside its root (`..` and links never lead out of it), a relative one beneath its
    /// working directory (without `..` above it or absolute links). Each link is followed
    /// by its text, here, never by the kernel: `/proc/*/root` and `/proc/*/fd/*` in the
    /// process's view lead nowhere else.
    pub fn open_dir(&self, path: &Path) -> io::Result<OpenDir> {
        let opened = self.as_process(|| self.walk(path))??;
        Ok(OpenDir(opened))
    }

    /// Like [`ProcessFiles::open_dir`], for a directory the process may also write in:
    /// the place where pauselab may create a file on its behalf (the probe's).
    pub fn open_writable_dir(&self, path: &Path) -> io::Result<OpenDir> {
        let dir = self.open_dir(path)?;
        let writable = self.as_process(|| match self.access {
            Access::ModeBits => fstat(&dir.0).is_ok_and(|s| self.allows(&s, 0o3)),
            // With AT_EACCESS the check is made with this thread's (switched) fsuid.
            Access::Same | Access::Switched => {
                faccessat(&dir.0, ".", AccessFlags::W_OK, AtFlags::AT_EACCESS).is_ok()
            }
        })?;
        if !writable {
            return Err(io::ErrorKind::PermissionDenied.into());
        }
        Ok(dir)
    }

    /// [`ProcessFiles::open_dir`]'s walk: one component at a time, from the directories
    /// walked so far (so `..` goes back along them, and stops at the root).
    fn walk(&self, path: &Path) -> io::Result<OwnedFd> {
        let beneath = !path.is_absolute();
        let start = if beneath {
            self.cwd.as_ref().ok_or(io::ErrorKind::NotFound)?
        } else {
            &self.root
        };
        let escapes = || {
            io::Error::new(
                io::ErrorKind::PermissionDenied,
                "leads out of the process's directory",
            )
        };
        let path_flags = OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let mut walked = vec![openat(start, ".", path_flags, Mode::empty())?];
        let mut pending = Vec::new();
        push_components(&mut pending, path);
        let mut links = 0;
        while let Some(name) = pending.pop() {
            if name == ".." {
                match walked.len() {
                    1 if beneath => return Err(escapes()),
                    1 => {}
                    _ => drop(walked.pop()),
                }
                continue;
            }
            let here = walked.last().ok_or(io::ErrorKind::NotFound)?;
            if !self.allows(&fstat(here)?, 0o1) {
                return Err(io::ErrorKind::PermissionDenied.into());
            }
            let next = openat(here, name.as_os_str(), path_flags, Mode::empty())?;
            let stat = fstat(&next)?;
            if is_kind(&stat, SFlag::S_IFLNK) {
                links += 1;
                if links > MAX_LINKS {
                    return Err(Errno::ELOOP.into());
                }
                let target = PathBuf::from(readlinkat(&next, "")?);
                if target.is_absolute() {
                    if beneath {
                        return Err(escapes());
                    }
                    walked.truncate(1);
                }
                push_components(&mut pending, &target);
            } else if is_kind(&stat, SFlag::S_IFDIR) {
                walked.push(next);
            } else {
                return Err(Errno::ENOTDIR.into());
            }
        }
        let last = walked.last().ok_or(io::ErrorKind::NotFound)?;
        if !self.allows(&fstat(last)?, 0o5) {
            return Err(io::ErrorKind::PermissionDenied.into());
        }
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        Ok(openat(last, ".", flags, Mode::empty())?)
    }

    /// Whether the mode bits of `stat` give the process every permission in `wanted`
    /// (`0o4` read, `0o1` search); always where the kernel checks it itself.
    fn allows(&self, stat: &FileStat, wanted: u32) -> bool {
        let ids = &self.credentials;
        if self.access != Access::ModeBits || ids.uid == 0 {
            return true;
        }
        let mode = stat.st_mode;
        let granted = if stat.st_uid == ids.uid {
            mode >> 6
        } else if stat.st_gid == ids.gid || ids.groups.contains(&stat.st_gid) {
            mode >> 3
        } else {
            mode
        };
        granted & wanted == wanted
    }
}

/// Puts the components of `path` on `pending`, the first one last (it is taken first).
fn push_components(pending: &mut Vec<std::ffi::OsString>, path: &Path) {
    let at = pending.len();
    pending.extend(path.components().filter_map(|c| match c {
        Component::Normal(name) => Some(name.to_os_string()),
        Component::ParentDir => Some("..".into()),
        Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
    }));
    pending[at..].reverse();
}

/// Whether this thread may take other file-system ids (`CAP_SETUID` and `CAP_SETGID` in
/// its effective set).
fn can_take_other_ids() -> io::Result<bool> {
    let text = fs::read_to_string("/proc/thread-self/status")?;
    let effective = text
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .unwrap_or(0);
    // Capability numbers of linux/capability.h: CAP_SETGID 6, CAP_SETUID 7.
    let wanted = (1u64 << 6) | (1u64 << 7);
    Ok(effective & wanted == wanted)
}

/// A directory opened through the trust layer.
#[derive(Debug)]
pub struct OpenDir(OwnedFd);

impl OpenDir {
    /// Opens the directory `path` without following a link as its last component: for a
    /// directory another user owns at a fixed place (`/tmp/hsperfdata_<user>`), whose
    /// parent only root can change or is sticky.
    pub fn no_follow(path: &Path) -> io::Result<OpenDir> {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        Ok(OpenDir(openat(AT_FDCWD, path, flags, Mode::empty())?))
    }

    /// A path to the directory itself (`/proc/self/fd/N`) that stays on it whatever is
    /// renamed or replaced above it, for the code that takes paths; names joined to it are
    /// looked up in this directory. Valid while `self` lives.
    pub fn path(&self) -> PathBuf {
        PathBuf::from(format!("/proc/self/fd/{}", self.0.as_raw_fd()))
    }
}

impl PartialEq for OpenDir {
    /// The same descriptor: the same directory, opened once.
    fn eq(&self, other: &Self) -> bool {
        self.0.as_raw_fd() == other.0.as_raw_fd()
    }
}

impl Eq for OpenDir {}

/// This thread's credentials, switched to another process's until dropped.
struct Switched {
    previous: Credentials,
}

impl Switched {
    /// Nothing to switch when the credentials are already these.
    fn to(target: &Credentials) -> io::Result<Option<Switched>> {
        let previous = Credentials::of_this_thread()?;
        if previous == *target {
            return Ok(None);
        }
        let switched = Switched { previous };
        // Dropped on failure: whatever was switched already is switched back.
        set_thread_credentials(target)?;
        Ok(Some(switched))
    }
}

impl Drop for Switched {
    fn drop(&mut self) {
        if let Err(e) = set_thread_credentials(&self.previous) {
            // Going on with another user's rights (or a mix) is never right: stop.
            eprintln!("pauselab: cannot switch file-system credentials back: {e}");
            std::process::abort();
        }
    }
}

/// Sets this thread's groups, fsgid and fsuid by raw system calls: glibc's `setgroups`
/// changes every thread of the process, and other threads go on with root's rights.
fn set_thread_credentials(to: &Credentials) -> io::Result<()> {
    // SAFETY: plain system calls on integers and a valid slice.
    let set_groups =
        unsafe { libc::syscall(libc::SYS_setgroups, to.groups.len(), to.groups.as_ptr()) };
    if set_groups != 0 {
        return Err(io::Error::last_os_error());
    }
    // setfsuid and setfsgid return the previous id, never an error: an invalid id (-1)
    // changes nothing and tells what is set now.
    for (call, id) in [(libc::SYS_setfsgid, to.gid), (libc::SYS_setfsuid, to.uid)] {
        // SAFETY: as above.
        let now = unsafe {
            libc::syscall(call, id);
            libc::syscall(call, u32::MAX)
        };
        if now as u32 != id {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("cannot take the file-system id {id} (pauselab needs CAP_SETUID and CAP_SETGID to read other users' files as them)"),
            ));
        }
    }
    Ok(())
}

const AT_FDCWD: std::os::fd::BorrowedFd<'static> =
    // SAFETY: AT_FDCWD is a valid "descriptor" for the *at calls for the program's life.
    unsafe { std::os::fd::BorrowedFd::borrow_raw(libc::AT_FDCWD) };

/// Why a directory pauselab was to create or use is refused.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct UnsafeDir {
    pub path: PathBuf,
    pub reason: String,
}

/// A directory only this process's user (root) can change, with every component of its
/// path checked: the place where pauselab creates directories for other users.
#[derive(Debug)]
pub struct PrivateDir {
    fd: OwnedFd,
    path: PathBuf,
}

impl PrivateDir {
    /// Opens the absolute directory `path`, creating what is missing (mode 0755). Each
    /// component must be a directory owned by this user or root and not writable by
    /// others unless sticky (like `/tmp`); a link is followed only when root or this user
    /// made it. `path` itself must be owned by this user and writable by nobody else.
    pub fn open_or_create(path: &Path) -> Result<PrivateDir, UnsafeDir> {
        let refuse = |at: &Path, reason: String| UnsafeDir {
            path: at.to_path_buf(),
            reason,
        };
        let io_error = |at: &Path, e: Errno| refuse(at, io::Error::from(e).to_string());
        if !path.is_absolute() {
            return Err(refuse(path, "not an absolute path".to_string()));
        }
        let me = Uid::effective().as_raw();
        let trusted = |uid: u32| uid == me || uid == 0;
        let mut names = Vec::new();
        for component in path.components() {
            match component {
                Component::RootDir | Component::CurDir => {}
                Component::Normal(name) => names.push(name),
                Component::ParentDir | Component::Prefix(_) => {
                    return Err(refuse(path, "give the path without `..`".to_string()))
                }
            }
        }
        let mut walked = PathBuf::from("/");
        let open_flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let mut dir =
            openat(AT_FDCWD, "/", open_flags, Mode::empty()).map_err(|e| io_error(&walked, e))?;
        for (index, &name) in names.iter().enumerate() {
            let last = index + 1 == names.len();
            walked.push(name);
            let follow = match fstatat(&dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
                Err(Errno::ENOENT) => {
                    match mkdirat(&dir, name, Mode::from_bits_truncate(0o755)) {
                        Ok(()) | Err(Errno::EEXIST) => {}
                        Err(e) => return Err(io_error(&walked, e)),
                    }
                    OFlag::O_NOFOLLOW
                }
                Err(e) => return Err(io_error(&walked, e)),
                Ok(link) if is_kind(&link, SFlag::S_IFLNK) => {
                    if !trusted(link.st_uid) {
                        return Err(refuse(
                            &walked,
                            format!("a symbolic link of uid {}: give the path it points to, or remove it", link.st_uid),
                        ));
                    }
                    OFlag::empty()
                }
                Ok(_) => OFlag::O_NOFOLLOW,
            };
            dir = openat(&dir, name, open_flags | follow, Mode::empty())
                .map_err(|e| io_error(&walked, e))?;
            let stat = fstat(&dir).map_err(|e| io_error(&walked, e))?;
            let others_write = stat.st_mode & 0o022 != 0;
            let sticky = stat.st_mode & 0o1000 != 0;
            if !trusted(stat.st_uid) || (last && stat.st_uid != me) {
                return Err(refuse(
                    &walked,
                    format!(
                        "owned by uid {}, not by uid {me}: pauselab creates directories for other users only in one it alone can change",
                        stat.st_uid
                    ),
                ));
            }
            if others_write && (last || !sticky) {
                return Err(refuse(
                    &walked,
                    format!(
                        "mode {:o} lets other users write in it: give a directory only uid {me} can write (e.g. mode 0755)",
                        stat.st_mode & 0o7777
                    ),
                ));
            }
        }
        Ok(PrivateDir {
            fd: dir,
            path: path.to_path_buf(),
        })
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates the directory `name` in this one for another user: whatever was under that
    /// name before (a leftover, or a link or file someone put there) is removed without
    /// following it, and the new directory gets `uid`, `gid` and `mode` through its own
    /// descriptor. Returns its path.
    pub fn fresh_subdir(&self, name: &str, uid: u32, gid: u32, mode: u32) -> io::Result<PathBuf> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{name:?} is not a directory name"),
            ));
        }
        self.remove(name)?;
        mkdirat(&self.fd, name, Mode::from_bits_truncate(0o700))?;
        let dir = openat(
            &self.fd,
            name,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        fchown(
            dir.as_fd(),
            Some(Uid::from_raw(uid)),
            Some(Gid::from_raw(gid)),
        )?;
        fchmod(dir.as_fd(), Mode::from_bits_truncate(mode))?;
        Ok(self.path.join(name))
    }

    /// Removes `name` in this directory and, if it is a directory, everything in it,
    /// never following a link. Nothing there is not an error.
    pub fn remove(&self, name: &str) -> io::Result<()> {
        match fstatat(&self.fd, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Err(Errno::ENOENT) => Ok(()),
            Err(e) => Err(e.into()),
            // std's remove_dir_all walks by descriptors and unlinks links rather than
            // following them; the name is looked up in this directory's descriptor.
            Ok(stat) if is_kind(&stat, SFlag::S_IFDIR) => {
                let inside = PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd()));
                fs::remove_dir_all(inside.join(name))
            }
            Ok(_) => Ok(unlinkat(&self.fd, name, UnlinkatFlags::NoRemoveDir)?),
        }
    }
}

fn is_kind(stat: &FileStat, kind: SFlag) -> bool {
    SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == kind
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::process::{Child, Command, Stdio};

    use super::*;

    const NOBODY: u32 = 65534;

    /// A scratch directory owned by root, mode 0755, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir =
                std::env::temp_dir().join(format!("pauselab-trust-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir(&dir).unwrap();
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    /// A process of `nobody`, chrooted to `root` when given (by perl, which needs nothing
    /// inside the new root once started), killed when dropped.
    struct Nobody(Child);

    impl Nobody {
        fn start(root: Option<&Path>) -> Nobody {
            let script = match root {
                Some(root) => format!(
                    "chroot(q({})) or die; chdir(q(/)) or die; print qq(ready\\n); sleep 60",
                    root.display()
                ),
                None => "print qq(ready\\n); sleep 60".to_string(),
            };
            // chroot needs root: perl drops to nobody itself afterwards.
            let script = format!(
                "$| = 1; {}",
                script.replacen(
                    "print",
                    &format!("$) = q({NOBODY} {NOBODY}); $> = {NOBODY}; print"),
                    1,
                )
            );
            let mut child = Command::new("perl")
                .args(["-e", &script])
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut ready = [0u8; 6];
            io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut ready).unwrap();
            assert_eq!(&ready, b"ready\n");
            Nobody(child)
        }
    }

    impl Drop for Nobody {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    /// Drops capabilities (by number) from this thread's effective set only.
    fn drop_thread_capabilities(numbers: &[u32]) {
        #[repr(C)]
        struct Header {
            version: u32,
            pid: i32,
        }
        #[repr(C)]
        #[derive(Clone, Copy, Default)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        const VERSION_3: u32 = 0x2008_0522;
        let mut header = Header {
            version: VERSION_3,
            pid: 0,
        };
        let mut data = [Data::default(); 2];
        // SAFETY: capget and capset with a version 3 header and two data words.
        unsafe {
            assert_eq!(
                libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()),
                0
            );
            for &n in numbers {
                data[(n / 32) as usize].effective &= !(1 << (n % 32));
            }
            assert_eq!(libc::syscall(libc::SYS_capset, &header, data.as_ptr()), 0);
        }
    }

    fn as_root() -> bool {
        Uid::effective().is_root()
    }

    #[test]
    fn credentials_of_this_process_are_read() {
        let own = Credentials::of_process(std::process::id()).unwrap();
        assert_eq!(own.uid, Uid::effective().as_raw());
        assert_eq!(own.gid, Gid::effective().as_raw());
        assert_eq!(Credentials::of_this_thread().unwrap(), own);
    }

    #[test]
    fn a_process_of_nobody_opens_only_what_nobody_may_and_stays_in_its_root() {
        assert!(
            as_root(),
            "run as root: the test is about root reading for nobody"
        );
        let scratch = Scratch::new("process-files");
        let secret = scratch.0.join("secret");
        fs::create_dir(&secret).unwrap();
        fs::set_permissions(&secret, fs::Permissions::from_mode(0o700)).unwrap();
        fs::write(scratch.0.join("root-only"), "").unwrap();
        fs::set_permissions(
            scratch.0.join("root-only"),
            fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        let jail = scratch.0.join("jail");
        fs::create_dir_all(jail.join("logs")).unwrap();
        std::os::unix::fs::symlink(&secret, jail.join("logs/through-link")).unwrap();
        std::os::unix::fs::symlink("/proc/self/cwd", jail.join("magic")).unwrap();

        // Not chrooted: a root-only directory is refused, the public one opens.
        let free = Nobody::start(None);
        let files = ProcessFiles::of(free.0.id()).unwrap();
        assert_eq!(files.credentials().uid, NOBODY);
        let refused = files.open_dir(&secret).unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::PermissionDenied, "{refused}");
        let through_link = files.open_dir(&jail.join("logs/through-link")).unwrap_err();
        assert_eq!(through_link.kind(), io::ErrorKind::PermissionDenied);
        let opened = files.open_dir(&jail.join("logs")).unwrap();
        assert_eq!(
            fs::metadata(opened.path()).unwrap().ino(),
            fs::metadata(jail.join("logs")).unwrap().ino()
        );
        // This thread is root again afterwards.
        assert_eq!(Credentials::of_this_thread().unwrap().uid, 0);
        assert!(fs::read_dir(&secret).is_ok());

        // Without CAP_SETUID and CAP_SETGID (as the systemd unit runs it), the mode bits
        // of each directory decide, also through the link.
        let dropped = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    drop_thread_capabilities(&[6, 7]);
                    let files = ProcessFiles::of(free.0.id()).unwrap();
                    assert_eq!(files.access, Access::ModeBits);
                    let kinds = [&secret, &jail.join("logs/through-link")]
                        .map(|dir| files.open_dir(dir).map(|_| ()).map_err(|e| e.kind()));
                    let public = files.open_dir(&jail.join("logs")).is_ok();
                    let file = fs::File::open(scratch.0.join("root-only")).unwrap();
                    (kinds, public, files.may_read(&file))
                })
                .join()
                .unwrap()
        });
        let denied = Err(io::ErrorKind::PermissionDenied);
        assert_eq!(dropped, ([denied, denied], true, false));

        // Chrooted to the jail: `..` and absolute paths stay inside it.
        let jailed = Nobody::start(Some(&jail));
        let files = ProcessFiles::of(jailed.0.id()).unwrap();
        assert_eq!(files.credentials().uid, NOBODY);
        let logs_ino = fs::metadata(jail.join("logs")).unwrap().ino();
        for inside in ["/logs", "/../../logs", "logs", "./logs"] {
            let dir = files.open_dir(Path::new(inside)).unwrap();
            assert_eq!(
                fs::metadata(dir.path()).unwrap().ino(),
                logs_ino,
                "{inside}"
            );
        }
        for outside in ["/../secret", "../secret", "/magic"] {
            assert!(files.open_dir(Path::new(outside)).is_err(), "{outside}");
        }
    }

    #[test]
    fn a_private_dir_refuses_what_others_can_write_or_planted() {
        assert!(
            as_root(),
            "run as root: the test is about other users' directories"
        );
        let scratch = Scratch::new("private-dir");
        let created = scratch.0.join("a/b");
        let dir = PrivateDir::open_or_create(&created).unwrap();
        assert_eq!(dir.path(), created);
        assert_eq!(fs::metadata(&created).unwrap().mode() & 0o7777, 0o755);

        let open = fs::Permissions::from_mode(0o777);
        fs::set_permissions(&created, open.clone()).unwrap();
        let error = PrivateDir::open_or_create(&created).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("mode 777 lets other users write"),
            "{error}"
        );
        // Writable by others above the directory: refused too, unless sticky like /tmp.
        fs::set_permissions(&created, fs::Permissions::from_mode(0o755)).unwrap();
        fs::set_permissions(scratch.0.join("a"), open).unwrap();
        assert!(PrivateDir::open_or_create(&created).is_err());
        fs::set_permissions(scratch.0.join("a"), fs::Permissions::from_mode(0o1777)).unwrap();
        PrivateDir::open_or_create(&created).unwrap();
        assert!(PrivateDir::open_or_create(Path::new("/tmp")).is_err());

        let theirs = scratch.0.join("theirs");
        fs::create_dir(&theirs).unwrap();
        std::os::unix::fs::chown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();
        let error = PrivateDir::open_or_create(&theirs).unwrap_err();
        assert!(error.to_string().contains("owned by uid 65534"), "{error}");
        let link = scratch.0.join("link");
        std::os::unix::fs::symlink(&created, &link).unwrap();
        std::os::unix::fs::lchown(&link, Some(NOBODY), Some(NOBODY)).unwrap();
        let error = PrivateDir::open_or_create(&link.join("c")).unwrap_err();
        assert!(
            error.to_string().contains("a symbolic link of uid 65534"),
            "{error}"
        );
        assert!(!created.join("c").exists());
    }

    #[test]
    fn a_fresh_subdir_replaces_a_planted_link_without_touching_its_target() {
        assert!(
            as_root(),
            "run as root: the test is about root changing owners"
        );
        let scratch = Scratch::new("fresh-subdir");
        let target = scratch.0.join("target");
        fs::write(&target, "root's").unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o600)).unwrap();
        let dir = PrivateDir::open_or_create(&scratch.0.join("logs")).unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("7")).unwrap();
        let made = dir.fresh_subdir("7", NOBODY, NOBODY, 0o750).unwrap();
        let target_meta = fs::metadata(&target).unwrap();
        assert_eq!((target_meta.uid(), target_meta.mode() & 0o7777), (0, 0o600));
        let made_meta = fs::symlink_metadata(&made).unwrap();
        assert!(made_meta.is_dir());
        assert_eq!((made_meta.uid(), made_meta.gid()), (NOBODY, NOBODY));
        assert_eq!(made_meta.mode() & 0o7777, 0o750);
        // A leftover directory holding a link to the target: removed, target kept.
        std::os::unix::fs::symlink(&target, made.join("gc.log")).unwrap();
        dir.fresh_subdir("7", NOBODY, NOBODY, 0o750).unwrap();
        assert!(fs::read_dir(&made).unwrap().next().is_none());
        assert_eq!(fs::read_to_string(&target).unwrap(), "root's");
        assert!(dir.fresh_subdir("../x", NOBODY, NOBODY, 0o750).is_err());
    }
}
