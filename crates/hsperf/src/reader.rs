//! Reading a live JVM's counters: from its hsperfdata file or straight from its memory.
//!
//! A [`Reader`] resolves the route once (file descriptor or remote address) and then takes
//! consistent snapshots cheaply: copy the region, re-read the prologue, retry if the JVM
//! added an entry meanwhile.

use std::fs::File;
use std::io::ErrorKind;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::format::{self, Snapshot, MOD_TIME_STAMP_OFFSET, PROLOGUE_V1_SIZE};
use crate::memory::{self, AddressSource};
use crate::process::{self, Follow, ProcessHandle};
use crate::read_at::{ReadAt, RemoteMemory};

/// Attempts before giving up on a region that keeps changing.
const ATTEMPTS: u32 = 8;

/// Where to read the counters from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The file if the JVM shares its perf data, else its memory.
    #[default]
    Auto,
    /// `/tmp/hsperfdata_<user>/<pid>` (through `/proc/<pid>/root` for containers).
    File,
    /// `process_vm_readv` at `PerfMemory::_start` (needs ptrace access).
    Memory,
}

impl std::str::FromStr for Source {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Source::Auto),
            "file" => Ok(Source::File),
            "memory" => Ok(Source::Memory),
            other => Err(format!("unknown source {other:?} (auto, file or memory)")),
        }
    }
}

/// The route a reader resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "source", rename_all = "lowercase")]
pub enum Route {
    /// The hsperfdata file, as a path on this host.
    File { path: PathBuf },
    /// The JVM's memory.
    Memory { address: u64, via: AddressSource },
}

enum Backend {
    File(File),
    Memory {
        address: u64,
    },
    /// A file on its own, not tied to a process (saved copies, tests).
    Detached(File),
}

/// A reader of one JVM's counters that keeps its route open between snapshots.
/// What taking a snapshot costs (`pauselab perf --time-snapshots`, for bench/hsperf.sh).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SnapshotCost {
    /// Microseconds per snapshot, median.
    pub median_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Mean.
    pub mean_us: f64,
    /// How many snapshots were timed.
    pub snapshots: usize,
    /// Counters in each.
    pub counters: usize,
}

pub struct Reader {
    pid: Option<u32>,
    uid: u32,
    handle: Option<ProcessHandle>,
    backend: Backend,
    route: Route,
    capacity: usize,
    origin: String,
}

impl Reader {
    /// Opens a reader on a running JVM.
    ///
    /// Checks that `pid` is alive and maps libjvm.so before touching anything else, so a
    /// pid that is not a JVM gets [`Error::NotJvm`].
    pub fn open(pid: u32, source: Source) -> Result<Reader> {
        let handle = ProcessHandle::open(pid)?;
        let status = process::read_status(pid)?;
        let maps = process::read_maps(pid)?;
        if maps.libjvm.is_none() {
            return Err(Error::NotJvm { pid });
        }
        let origin = format!("pid {pid}");
        let file = || -> Result<(File, PathBuf)> {
            let mapped = maps
                .perf_file
                .as_ref()
                .filter(|_| !maps.perf_file_deleted)
                .ok_or_else(|| Error::NoFile {
                    pid,
                    looked: format!("the mappings of pid {pid}: no hsperfdata file is mapped"),
                })?;
            open_perf_file(pid, status.uid, mapped)
        };
        let (backend, route, capacity) = match source {
            Source::File => {
                let (f, path) = file()?;
                let len = file_len(&f, &path)?;
                (Backend::File(f), Route::File { path }, len)
            }
            Source::Memory => memory_backend(pid, status.uid, &maps)?,
            Source::Auto => match file() {
                Ok((f, path)) => {
                    let len = file_len(&f, &path)?;
                    (Backend::File(f), Route::File { path }, len)
                }
                Err(Error::NoFile { .. }) => memory_backend(pid, status.uid, &maps)?,
                Err(e) => return Err(e),
            },
        };
        Ok(Reader {
            pid: Some(pid),
            uid: status.uid,
            handle: Some(handle),
            backend,
            route,
            capacity,
            origin,
        })
    }

    /// Opens a saved hsperfdata file that is not tied to a running process.
    pub fn open_path(path: &Path) -> Result<Reader> {
        // The user names this file: links are followed, but a FIFO or device is refused.
        let f = process::open_regular_file(path, Follow::Links).map_err(|e| Error::io(path, e))?;
        let capacity = file_len(&f, path)?;
        Ok(Reader {
            pid: None,
            uid: 0,
            handle: None,
            backend: Backend::Detached(f),
            route: Route::File {
                path: path.to_path_buf(),
            },
            capacity,
            origin: path.display().to_string(),
        })
    }

    /// The pid read, if this reader is tied to a process.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The resolved route.
    pub fn route(&self) -> &Route {
        &self.route
    }

    /// Size of the region in bytes.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Takes a new snapshot.
    pub fn snapshot(&mut self) -> Result<Snapshot> {
        let mut snapshot = Snapshot::empty();
        self.snapshot_into(&mut snapshot)?;
        Ok(snapshot)
    }

    /// What taking `n` snapshots (at least one) into a warm snapshot costs in this process.
    pub fn time_snapshots(&mut self, n: usize) -> Result<SnapshotCost> {
        let n = n.max(1);
        let mut snapshot = self.snapshot()?;
        let mut nanos = Vec::with_capacity(n);
        for _ in 0..n {
            let start = std::time::Instant::now();
            self.snapshot_into(&mut snapshot)?;
            nanos.push(start.elapsed().as_nanos() as u64);
        }
        let mean_us = nanos.iter().sum::<u64>() as f64 / n as f64 / 1000.0;
        nanos.sort_unstable();
        let at = |q: f64| nanos[((n - 1) as f64 * q) as usize] as f64 / 1000.0;
        Ok(SnapshotCost {
            median_us: at(0.5),
            p99_us: at(0.99),
            mean_us,
            snapshots: n,
            counters: snapshot.len(),
        })
    }

    /// Takes a new snapshot into `snapshot`, reusing its buffers (no allocation once warm).
    pub fn snapshot_into(&mut self, snapshot: &mut Snapshot) -> Result<()> {
        let mut check = [0u8; PROLOGUE_V1_SIZE];
        for _ in 0..ATTEMPTS {
            // Copy only the bytes in use: the prologue says how many.
            self.read_at(0, &mut check)?;
            let used = used_bytes(&check).clamp(PROLOGUE_V1_SIZE, self.capacity);
            {
                let buf = snapshot.buffer_mut();
                buf.resize(used, 0);
                self.read_at(0, buf)?;
            }
            // Sample the prologue again: if nothing structural changed during the copy,
            // every entry header in the copy is complete.
            self.read_at(0, &mut check)?;
            let copy = &snapshot.buffer_mut()[..PROLOGUE_V1_SIZE];
            let stable = copy[8..12] == check[8..12]
                && copy[MOD_TIME_STAMP_OFFSET..MOD_TIME_STAMP_OFFSET + 8]
                    == check[MOD_TIME_STAMP_OFFSET..MOD_TIME_STAMP_OFFSET + 8];
            if !stable {
                continue;
            }
            if let Some(handle) = &self.handle {
                // A file outlives a killed JVM: only a live process counts.
                handle.check_alive()?;
            }
            snapshot.reparse(self.capacity, &self.origin)?;
            if let (Some(pid), false) = (self.pid, snapshot.prologue().accessible) {
                return Err(Error::NotReady { pid });
            }
            return Ok(());
        }
        Err(Error::Unstable {
            pid: self.pid.unwrap_or(0),
            attempts: ATTEMPTS,
        })
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        match &self.backend {
            Backend::File(f) | Backend::Detached(f) => FileExt::read_exact_at(f, buf, offset)
                .map_err(|e| {
                    if e.kind() == ErrorKind::UnexpectedEof {
                        Error::format(&self.origin, "file is shorter than its region")
                    } else {
                        let Route::File { path } = &self.route else {
                            unreachable!("file backend has a file route")
                        };
                        Error::io(path, e)
                    }
                }),
            Backend::Memory { address } => {
                let pid = self.pid.unwrap_or(0);
                // The region's address and size were checked when the route was resolved.
                RemoteMemory { pid }
                    .read_exact_at(buf, address.saturating_add(offset))
                    .map_err(|e| memory::remote_error(pid, self.uid, e))
            }
        }
    }
}

impl Snapshot {
    /// Takes one snapshot of a running JVM (opens a [`Reader`] and drops it).
    pub fn read(pid: u32, source: Source) -> Result<Snapshot> {
        Reader::open(pid, source)?.snapshot()
    }

    /// Parses a saved hsperfdata file.
    pub fn read_path(path: &Path) -> Result<Snapshot> {
        Reader::open_path(path)?.snapshot()
    }
}

/// `used` from a prologue in either byte order (0 if the bytes make no sense yet).
fn used_bytes(prologue: &[u8]) -> usize {
    let raw: [u8; 4] = prologue[8..12].try_into().unwrap_or_default();
    let used = match prologue[4] {
        0 => i32::from_be_bytes(raw),
        _ => i32::from_le_bytes(raw),
    };
    usize::try_from(used).unwrap_or(0)
}

fn file_len(f: &File, path: &Path) -> Result<usize> {
    let len = f.metadata().map_err(|e| Error::io(path, e))?.len();
    if len < format::PROLOGUE_V1_SIZE as u64 || len > memory::MAX_REGION {
        return Err(Error::format(
            path.display().to_string(),
            format!("{len} bytes is not a plausible region size"),
        ));
    }
    Ok(len as usize)
}

fn memory_backend(pid: u32, uid: u32, maps: &process::JvmMaps) -> Result<(Backend, Route, usize)> {
    let region = memory::locate(pid, uid, maps, None)?;
    Ok((
        Backend::Memory {
            address: region.address,
        },
        Route::Memory {
            address: region.address,
            via: region.via,
        },
        region.size as usize,
    ))
}

/// Opens the hsperfdata file that `pid` maps (`mapped` is its path inside the process's
/// mount namespace), through `/proc/<pid>/root` so private /tmp and containers work.
fn open_perf_file(pid: u32, uid: u32, mapped: &Path) -> Result<(File, PathBuf)> {
    let through_root = process::in_process_root(pid, mapped);
    // The file lives in a directory its owner controls: a link or FIFO planted in its
    // place is refused rather than followed or blocked on.
    let open = |path: &Path| process::open_regular_file(path, Follow::NoLinks);
    let opened = match open(&through_root) {
        Err(e) if e.kind() == ErrorKind::PermissionDenied => {
            // /proc/<pid>/root needs ptrace access; the host path may still be readable.
            open(mapped).map(|f| (f, mapped.to_path_buf()))
        }
        other => other.map(|f| (f, through_root.clone())),
    };
    match opened {
        Ok((f, path)) => {
            let same_owner = f.metadata().map(|m| m.uid() == uid).unwrap_or(true);
            if !same_owner {
                return Err(Error::format(
                    path.display().to_string(),
                    format!("not owned by the JVM's user (uid {uid})"),
                ));
            }
            Ok((f, path))
        }
        Err(e) if e.kind() == ErrorKind::PermissionDenied => Err(Error::Permission {
            pid,
            uid,
            what: mapped.display().to_string(),
        }),
        Err(e) if e.kind() == ErrorKind::NotFound => Err(Error::NoFile {
            pid,
            looked: through_root.display().to_string(),
        }),
        Err(e) => Err(Error::io(&through_root, e)),
    }
}
