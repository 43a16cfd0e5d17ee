//! Opening inputs the same way for every reader (GC logs, interval logs, bundles):
//!
//! - regular files, pipes and process substitution (`<(zcat gc.log.gz)`, `/dev/fd/N`) are
//!   read; character and block devices (`/dev/zero`), sockets and directories are refused
//!   with a one-line reason, as they never end or are not logs;
//! - a named pipe (`mkfifo`) must deliver its first byte within [`NAMED_PIPE_TIMEOUT`]: one
//!   without a writer would otherwise block forever;
//! - formats are recognised by peeking at the first bytes ([`Peeked`]), which stay part of
//!   the stream: an input is opened once, so a pipe loses nothing to probing;
//! - lines are read with a length limit ([`read_line_limited`]) so that a file without line
//!   breaks cannot grow memory.

use std::fs::File;
use std::io::{self, BufRead, Read};
use std::path::Path;
use std::time::Duration;

/// How long a named pipe may stay silent before its first byte: a pipe nobody writes to is
/// refused after this instead of blocking forever.
pub const NAMED_PIPE_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens a file or pipe for reading, refusing inputs that never end or are not files. The
/// error's message says why (callers prefix the file name).
pub fn open_file(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let kind = std::fs::metadata(path)?.file_type();
    let refuse = |what: &str| {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("is {what}, not a log file (give a file, a pipe or - for standard input)"),
        ))
    };
    if kind.is_dir() {
        return refuse("a directory");
    }
    if kind.is_char_device() {
        return refuse("a character device");
    }
    if kind.is_block_device() {
        return refuse("a block device");
    }
    if kind.is_socket() {
        return refuse("a socket");
    }
    if !kind.is_fifo() {
        return File::open(path);
    }
    // A named pipe blocks in open() until a writer comes: open it without waiting and give
    // the writer a time limit. Anonymous pipes (process substitution) always have theirs.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !is_anonymous_pipe(&file) {
        wait_readable(&file, NAMED_PIPE_TIMEOUT)?;
    }
    set_blocking(&file)?;
    Ok(file)
}

/// Opens a file that another user may control (named by a JVM's command line, in a
/// directory a JVM's user may write), for reading only: never blocks on a FIFO or device
/// planted under that name, and fails unless it is a regular file. With `follow_links`
/// false, a symbolic link as the last component is refused (`ELOOP`) too.
pub fn open_regular_file(path: &Path, follow_links: bool) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
    if !follow_links {
        flags |= libc::O_NOFOLLOW;
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(file)
}

/// Whether `file` is a pipe made by pipe(2) (shell pipes, process substitution) rather than
/// a named pipe on a filesystem.
fn is_anonymous_pipe(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    const PIPEFS_MAGIC: libc::c_long = 0x5049_5045;
    let mut stats: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor and a buffer of the right type.
    let rc = unsafe { libc::fstatfs(file.as_raw_fd(), &mut stats) };
    rc == 0 && stats.f_type as libc::c_long == PIPEFS_MAGIC
}

fn wait_readable(file: &File, timeout: Duration) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let mut poll = libc::pollfd {
        fd: file.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut poll, 1, left.as_millis() as libc::c_int) };
        match ready {
            0 => {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "named pipe without data for {} s: is anything writing to it?",
                        timeout.as_secs()
                    ),
                ))
            }
            n if n > 0 => return Ok(()),
            _ => {
                let error = io::Error::last_os_error();
                if error.kind() != io::ErrorKind::Interrupted {
                    return Err(error);
                }
            }
        }
    }
}

fn set_blocking(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A reader whose first bytes have been looked at but not consumed: reading it yields the
/// whole input, those bytes included.
pub struct Peeked<R> {
    head: Vec<u8>,
    position: usize,
    rest: R,
}

impl<R: Read> Peeked<R> {
    /// Reads up to `len` bytes (fewer only at the end of the input; a pipe handing them out
    /// in pieces is read until `len` are there).
    pub fn new(mut rest: R, len: usize) -> io::Result<Peeked<R>> {
        let mut head = Vec::with_capacity(len);
        (&mut rest).take(len as u64).read_to_end(&mut head)?;
        Ok(Peeked {
            head,
            position: 0,
            rest,
        })
    }

    /// The peeked bytes.
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// Whether the input starts with the gzip magic.
    pub fn is_gzip(&self) -> bool {
        self.head.starts_with(&[0x1f, 0x8b])
    }
}

impl<R: Read> Read for Peeked<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.position < self.head.len() {
            let n = out.len().min(self.head.len() - self.position);
            out[..n].copy_from_slice(&self.head[self.position..self.position + n]);
            self.position += n;
            return Ok(n);
        }
        self.rest.read(out)
    }
}

/// `reader`, decompressed when it starts with the gzip magic (several concatenated members
/// are read as one stream, as `zcat` does).
pub fn gunzip_if_compressed<'a, R: Read + 'a>(reader: R) -> io::Result<Box<dyn Read + 'a>> {
    let peeked = Peeked::new(reader, 2)?;
    Ok(if peeked.is_gzip() {
        Box::new(flate2::read::MultiGzDecoder::new(peeked))
    } else {
        Box::new(peeked)
    })
}

/// What [`read_line_limited`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineRead {
    /// The end of the input: nothing was read.
    End,
    /// A line, with its `\n` when it had one.
    Line,
    /// More than the limit without a line break; `line` holds the first `limit` bytes.
    TooLong,
}

/// Appends the next line (with its `\n`) to `line`, reading at most `limit` bytes of it.
pub fn read_line_limited(
    input: &mut impl BufRead,
    line: &mut Vec<u8>,
    limit: usize,
) -> io::Result<LineRead> {
    let before = line.len();
    input.take(limit as u64).read_until(b'\n', line)?;
    let read = line.len() - before;
    Ok(if read == 0 {
        LineRead::End
    } else if read == limit && line.last() != Some(&b'\n') {
        LineRead::TooLong
    } else {
        LineRead::Line
    })
}

/// `text` with control characters (C0, DEL and C1: terminal escapes, line breaks) written
/// as escapes (`\n`, `\u{1b}`), so a file or JVM name prints on one line and cannot
/// drive the terminal. Every command prints text another process or file supplied
/// (command lines, paths, thread and counter names) through this or
/// [`escape_control_keeping_lines`].
pub fn escape_control(text: &str) -> std::borrow::Cow<'_, str> {
    escape_where(text, char::is_control)
}

/// [`escape_control`] for text whose lines and tabs are its own (a JVM's `jcmd` reply):
/// `\n` and `\t` stay, every other control character is escaped.
pub fn escape_control_keeping_lines(text: &str) -> std::borrow::Cow<'_, str> {
    escape_where(text, |c| c.is_control() && c != '\n' && c != '\t')
}

fn escape_where(text: &str, escaped: impl Fn(char) -> bool) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(&escaped) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escaped(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peeked_bytes_are_not_lost() {
        // A reader handing out one byte at a time, as a slow pipe may.
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(1).min(out.len());
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut peeked = Peeked::new(Trickle(b"\x1f\x8b and the rest"), 4).unwrap();
        assert!(peeked.is_gzip());
        assert_eq!(peeked.head(), b"\x1f\x8b a");
        let mut all = Vec::new();
        peeked.read_to_end(&mut all).unwrap();
        assert_eq!(all, b"\x1f\x8b and the rest");
    }

    #[test]
    fn gzip_is_recognised_by_content() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"line one\nline two\n").unwrap();
        let compressed = gz.finish().unwrap();
        for input in [&compressed[..], b"line one\nline two\n"] {
            let mut text = String::new();
            gunzip_if_compressed(input)
                .unwrap()
                .read_to_string(&mut text)
                .unwrap();
            assert_eq!(text, "line one\nline two\n");
        }
    }

    #[test]
    fn lines_are_limited() {
        let mut input = io::BufReader::new(&b"short\nabcdefghij\nlast"[..]);
        let mut line = Vec::new();
        let mut next = |line: &mut Vec<u8>| {
            line.clear();
            read_line_limited(&mut input, line, 8).unwrap()
        };
        assert_eq!(next(&mut line), LineRead::Line);
        assert_eq!(line, b"short\n");
        assert_eq!(next(&mut line), LineRead::TooLong);
        assert_eq!(line, b"abcdefgh");
    }

    #[test]
    fn devices_are_refused_and_anonymous_pipes_read() {
        let error = open_file(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(error.starts_with("is a character device"), "{error}");
        let error = open_file(Path::new("/")).unwrap_err().to_string();
        assert!(error.starts_with("is a directory"), "{error}");

        use std::os::fd::FromRawFd;
        let mut ends = [0; 2];
        // SAFETY: a two-descriptor array for pipe(2).
        assert_eq!(unsafe { libc::pipe(ends.as_mut_ptr()) }, 0);
        // SAFETY: both descriptors are fresh and owned here.
        let (reader, mut writer) =
            unsafe { (File::from_raw_fd(ends[0]), File::from_raw_fd(ends[1])) };
        let path = format!("/proc/self/fd/{}", ends[0]);
        std::io::Write::write_all(&mut writer, b"through a pipe\n").unwrap();
        drop(writer);
        let mut text = String::new();
        open_file(Path::new(&path))
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "through a pipe\n");
        drop(reader);
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(escape_control("gc.log"), "gc.log");
        assert_eq!(
            escape_control("gc\u{1b}[31m\nx.log"),
            "gc\\u{1b}[31m\\nx.log"
        );
        // C1 controls too (U+009B is a one-character CSI on some terminals).
        assert_eq!(escape_control("a\u{9b}2Jb\t"), "a\\u{9b}2Jb\\t");
        assert_eq!(
            escape_control_keeping_lines("\tat x\n\u{1b}]0;title\u{7}\r\n"),
            "\tat x\n\\u{1b}]0;title\\u{7}\\r\n"
        );
    }
}
