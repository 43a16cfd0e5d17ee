//! Creating the files pauselab writes (reports, charts, interval logs, a lab run's bundle)
//! without writing through anything another user put under that name. pauselab often runs
//! as root in directories other users can reach (`/tmp`, a shared results directory), where
//! a planted symbolic link, hard link or FIFO named like an output would otherwise make root
//! overwrite a file of its choice:
//!
//! - the last component is opened with `O_NOFOLLOW`: a symbolic link is refused, never
//!   followed;
//! - what was opened must be a regular file with one link that belongs to pauselab's user,
//!   checked on the open descriptor before a byte is truncated or written (a FIFO is opened
//!   non-blocking, so it cannot hang the check);
//! - a directory for outputs ([`create_dir`]) must not be a symbolic link, must belong to
//!   pauselab's user (or root) and must not be writable by others, so nobody else can plant
//!   a name in it between runs.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

fn refused(why: String) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, why)
}

/// Creates `path`, or truncates the file already there, for writing. Refuses (the message
/// says why; callers prefix the path) a symbolic link, a hard link, anything but a regular
/// file, and a file of another user.
pub fn create_file(path: &Path) -> io::Result<File> {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(|error| {
            // ELOOP, or EACCES from some kernels for a link in a sticky directory.
            if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
                return refused(
                    "is a symbolic link: pauselab does not write through one (remove it or choose another name)"
                        .to_string(),
                );
            }
            match error.raw_os_error() {
                // O_NONBLOCK on a FIFO without a reader.
                Some(libc::ENXIO) => refused("is not a regular file".to_string()),
                _ => error,
            }
        })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(refused("is not a regular file".to_string()));
    }
    if meta.nlink() > 1 {
        return Err(refused(format!(
            "has {} hard links: pauselab does not write through one (remove it or choose another name)",
            meta.nlink()
        )));
    }
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(refused(format!(
            "belongs to uid {}: pauselab does not write into another user's file (remove it or choose another name)",
            meta.uid()
        )));
    }
    file.set_len(0)?;
    Ok(file)
}

/// Writes `bytes` as the whole content of `path`, created as [`create_file`] does.
pub fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = create_file(path)?;
    file.write_all(bytes)?;
    file.flush()
}

/// Creates the directory `path` (and its parents) for outputs, or checks the one already
/// there: not a symbolic link, owned by pauselab's user or root, writable by nobody else.
/// Files in it are then created with [`create_file`].
pub fn create_dir(path: &Path) -> io::Result<()> {
    std::fs::create_dir_all(path)?;
    let meta = std::fs::symlink_metadata(path)?;
    if meta.file_type().is_symlink() {
        return Err(refused(
            "is a symbolic link: give the directory itself for outputs".to_string(),
        ));
    }
    if !meta.is_dir() {
        return Err(refused("is not a directory".to_string()));
    }
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me && meta.uid() != 0 {
        return Err(refused(format!(
            "belongs to uid {}: pauselab writes outputs only into its own user's directories",
            meta.uid()
        )));
    }
    let mode = meta.permissions().mode();
    if mode & 0o022 != 0 {
        return Err(refused(format!(
            "is writable by other users (mode {:o}): give a directory only you can write",
            mode & 0o7777
        )));
    }
    Ok(())
}

/// Writes one line to stderr, as `eprintln!` does, but never panics: a message that cannot
/// be shown is dropped. `eprintln!` panics when stderr is a closed pipe
/// (`pauselab lab run 2>&1 | head`), and a panic whose own message cannot be written
/// aborts the process, so a lab run would die before undoing what it changed on the host.
#[macro_export]
macro_rules! eprintln_lossy {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stderr(), $($arg)*);
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("pauselab-output-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        dir
    }

    #[test]
    fn a_new_or_own_file_is_written_and_truncated() {
        let dir = scratch("own");
        let path = dir.join("out.html");
        write_file(&path, b"a longer first text").unwrap();
        write_file(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn symlinks_hard_links_and_fifos_are_refused_and_left_alone() {
        let dir = scratch("planted");
        let target = dir.join("target");
        std::fs::write(&target, "keep").unwrap();
        let link = dir.join("chart.png");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let error = write_file(&link, b"x").unwrap_err();
        assert!(
            error.to_string().starts_with("is a symbolic link"),
            "{error}"
        );
        let hard = dir.join("hard.png");
        std::fs::hard_link(&target, &hard).unwrap();
        let error = write_file(&hard, b"x").unwrap_err();
        assert!(error.to_string().starts_with("has 2 hard links"), "{error}");
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        let fifo = dir.join("fifo.png");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
        let error = write_file(&fifo, b"x").unwrap_err();
        assert_eq!(error.to_string(), "is not a regular file");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn output_directories_others_can_write_or_symlinked_are_refused() {
        let dir = scratch("dirs");
        let shared = dir.join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let error = create_dir(&shared).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("is writable by other users (mode 1777)"),
            "{error}"
        );
        let link = dir.join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        let error = create_dir(&link).unwrap_err();
        assert!(
            error.to_string().starts_with("is a symbolic link"),
            "{error}"
        );
        create_dir(&dir.join("new/charts")).unwrap();
        std::fs::remove_dir_all(dir).unwrap();
    }
}
