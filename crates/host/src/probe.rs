//! The mmap store-latency probe: how long does an 8-byte store into a `MAP_SHARED` file page
//! take on a given filesystem?
//!
//! This is the operation the JVM performs on its hsperf file at every safepoint and in GC
//! threads. If the page is under writeback and the device asks for stable pages, the store
//! waits for the write to finish, and so does the safepoint. Each target gets its own thread
//! so one stalled store does not delay the others; anonymous memory and tmpfs serve as
//! controls that never wait for a disk.

use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::mounts::{filesystem_of, PathFilesystem};
use crate::trust::OpenDir;
use crate::{HostError, Result};

/// File names start with this; the creator's pid follows so stale files of a killed probe
/// can be recognised and removed.
const FILE_PREFIX: &str = ".pauselab-probe.";

/// Same size as the default hsperf file.
pub const DEFAULT_FILE_SIZE: usize = 32 * 1024;

/// Stores slower than this are remembered individually (with the time they happened).
pub const DEFAULT_STALL_THRESHOLD: Duration = Duration::from_millis(10);

/// Individual stalls kept per target; beyond that only the count grows.
const MAX_STALLS_KEPT: usize = 1000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeTarget {
    /// A file created in this directory (on the filesystem under test).
    Directory(PathBuf),
    /// A directory another user controls (a JVM's log directory, opened as its user inside
    /// its root; a `/tmp/hsperfdata_<user>`), reached through its descriptor
    /// ([`crate::trust`]); `shown` is its path as the user sees it.
    Opened {
        shown: PathBuf,
        dir: std::sync::Arc<OpenDir>,
    },
    /// Anonymous memory: the floor of what a store costs on this host (timer, scheduling).
    Anonymous,
}

impl ProbeTarget {
    pub fn label(&self) -> String {
        match self {
            ProbeTarget::Directory(dir) => dir.display().to_string(),
            ProbeTarget::Opened { shown, .. } => shown.display().to_string(),
            ProbeTarget::Anonymous => "anonymous".to_string(),
        }
    }

    /// Where the probe file goes; an opened directory through its descriptor, so nothing
    /// above it is looked up again.
    fn directory(&self) -> Option<PathBuf> {
        match self {
            ProbeTarget::Directory(dir) => Some(dir.clone()),
            ProbeTarget::Opened { dir, .. } => Some(dir.path()),
            ProbeTarget::Anonymous => None,
        }
    }
}

/// Which pages each tick of the probe stores into. A tick is what one safepoint does to
/// the hsperf file: its latency is the time of all its stores together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorePattern {
    /// One store per tick, each tick on the next page of the file.
    Rotate,
    /// Per tick, one store into each of the first `pages` pages: counters laid out over
    /// several pages, as a GC updates them (`perf --pages` shows three on JDK 17 and 25).
    Spread {
        /// Distinct pages stored into per tick.
        pages: usize,
    },
    /// Per tick, `stores` stores at distinct offsets of the first page: the same counters
    /// packed together.
    Packed {
        /// Stores per tick.
        stores: usize,
    },
}

impl StorePattern {
    /// The offsets one tick stores into, for a file of `pages` pages of `page` bytes.
    fn offsets(self, tick: u64, pages: usize, page: usize, out: &mut Vec<usize>) {
        out.clear();
        match self {
            StorePattern::Rotate => out.push((tick as usize % pages) * page),
            StorePattern::Spread { pages: n } => out.extend((0..n.min(pages)).map(|p| p * page)),
            StorePattern::Packed { stores } => {
                out.extend((0..stores.min(page / 8)).map(|i| i * 8));
            }
        }
    }
}

impl std::str::FromStr for StorePattern {
    type Err = String;

    /// `rotate`, `spread:N`, `packed:N` (N from 1 to the pages or slots there are).
    fn from_str(text: &str) -> std::result::Result<StorePattern, String> {
        let usage = || {
            format!("`{text}`: give rotate, spread:N (pages per tick) or packed:N (stores per tick in one page)")
        };
        let (kind, count) = text.split_once(':').unwrap_or((text, ""));
        let count = || -> std::result::Result<usize, String> {
            count
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=512).contains(n))
                .ok_or_else(usage)
        };
        match kind {
            "rotate" if text == "rotate" => Ok(StorePattern::Rotate),
            "spread" => Ok(StorePattern::Spread { pages: count()? }),
            "packed" => Ok(StorePattern::Packed { stores: count()? }),
            _ => Err(usage()),
        }
    }
}

#[derive(Debug, Clone)]
pub struct ProbeConfig {
    pub duration: Duration,
    /// Time between two stores into the same target.
    pub interval: Duration,
    pub stall_threshold: Duration,
    pub file_size: usize,
    /// Start writeback of each probe file this often (`sync_file_range`, asynchronous), as
    /// the kernel's flusher would after `vm.dirty_expire_centisecs`. Makes a short probe
    /// meet pages under writeback; `None` leaves it to the kernel.
    pub force_writeback: Option<Duration>,
    /// Which pages each tick stores into.
    pub pattern: StorePattern,
}

impl Default for ProbeConfig {
    fn default() -> Self {
        ProbeConfig {
            duration: Duration::from_secs(10),
            interval: Duration::from_millis(1),
            stall_threshold: DEFAULT_STALL_THRESHOLD,
            file_size: DEFAULT_FILE_SIZE,
            force_writeback: Some(Duration::from_secs(1)),
            pattern: StorePattern::Rotate,
        }
    }
}

/// One store that took longer than the stall threshold.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Stall {
    /// When the store started, in nanoseconds since the probe started.
    pub offset_ns: u64,
    /// When the store started, in milliseconds since the Unix epoch.
    pub unix_ms: u64,
    pub latency_ns: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProbeResult {
    pub target: String,
    /// The probe file (removed again); `None` for anonymous memory.
    pub file: Option<PathBuf>,
    pub filesystem: Option<PathFilesystem>,
    /// Stores performed.
    pub stores: u64,
    /// Ticks performed (one or more stores each, by the pattern); latencies are per tick.
    pub ticks: u64,
    /// Time spent in ticks at or above the stall threshold, per minute of probing.
    pub stalled_ms_per_minute: f64,
    /// Writebacks started on the probe file.
    pub writebacks: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
    /// Stores at or above the stall threshold.
    pub stall_count: u64,
    /// The first of them (at most 1000), in time order.
    pub stalls: Vec<Stall>,
    /// Every store's latency in ns, corrected for coordinated omission at the interval:
    /// a store that stalled for 100 intervals also stands for the 99 stores that could not
    /// happen meanwhile (as jHiccup does), so percentiles are shares of time.
    #[serde(skip)]
    pub histogram: Histogram<u64>,
}

/// A mapped region plus, for files, what is needed to remove it again.
struct Mapping {
    ptr: *mut u8,
    len: usize,
    file: Option<(std::fs::File, PathBuf)>,
}

// SAFETY: after creation only one thread stores into a mapping; the writeback thread uses
// only the file descriptor.
unsafe impl Send for Mapping {}
unsafe impl Sync for Mapping {}

impl Mapping {
    fn anonymous(len: usize) -> Result<Mapping> {
        // SAFETY: fresh private anonymous mapping; checked for MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(HostError::Probe {
                path: PathBuf::from("anonymous memory"),
                what: format!("mmap failed: {}", std::io::Error::last_os_error()),
            });
        }
        Ok(Mapping {
            ptr: ptr.cast(),
            len,
            file: None,
        })
    }

    fn file(dir: &Path, index: usize, len: usize) -> Result<Mapping> {
        let path = dir.join(format!("{FILE_PREFIX}{}.{index}", std::process::id()));
        let probe_error = |what: String| HostError::Probe {
            path: path.clone(),
            what,
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(|err| {
                probe_error(format!(
                    "cannot create the probe file ({err}); give a directory you can write to"
                ))
            })?;
        // From here on the file exists: the Mapping's Drop removes it on every path.
        let mut mapping = Mapping {
            ptr: std::ptr::null_mut(),
            len,
            file: Some((file, path.clone())),
        };
        let fd = mapping
            .file
            .as_ref()
            .map(|(f, _)| f.as_raw_fd())
            .unwrap_or(-1);
        mapping
            .file
            .as_ref()
            .map(|(f, _)| f.set_len(len as u64))
            .transpose()
            .map_err(|err| probe_error(format!("cannot size the probe file: {err}")))?;
        // SAFETY: fd is open read-write and the file is `len` bytes long.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(probe_error(format!(
                "mmap failed: {}",
                std::io::Error::last_os_error()
            )));
        }
        mapping.ptr = ptr.cast();
        Ok(mapping)
    }

    fn fd(&self) -> Option<i32> {
        self.file.as_ref().map(|(f, _)| f.as_raw_fd())
    }

    /// One aligned 8-byte store, as the JVM updates a counter.
    fn store(&self, offset: usize, value: u64) {
        debug_assert!(offset + 8 <= self.len && offset % 8 == 0);
        // SAFETY: offset is in bounds and 8-byte aligned inside a live read-write mapping.
        unsafe { std::ptr::write_volatile(self.ptr.add(offset).cast::<u64>(), value) };
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: ptr/len come from a successful mmap and are unmapped once.
            unsafe { libc::munmap(self.ptr.cast(), self.len) };
        }
        if let Some((_, path)) = &self.file {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Removes probe files left in `dir` by probes that were killed (their pid is gone).
pub fn remove_stale_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(FILE_PREFIX)) else {
            continue;
        };
        let Some(pid) = rest.split('.').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

fn unix_ms(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Sleeps until `deadline`, waking early when `stop` is set.
fn sleep_until(deadline: Instant, stop: &AtomicBool) {
    const SLICE: Duration = Duration::from_millis(50);
    loop {
        let now = Instant::now();
        if now >= deadline || stop.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep((deadline - now).min(SLICE));
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 {
        size as usize
    } else {
        4096
    }
}

/// Stores into `mapping` every `interval` until `until` or `stop`.
fn measure(
    mapping: &Mapping,
    config: &ProbeConfig,
    started: Instant,
    wall_started: SystemTime,
    stop: &AtomicBool,
) -> Measured {
    let interval_ns = config.interval.as_nanos().max(1) as u64;
    let mut histogram = Histogram::<u64>::new(3).expect("3 significant digits is valid");
    let page = page_size();
    let pages = (mapping.len / page).max(1);
    let mut measured = Measured {
        histogram: Histogram::new(3).expect("valid"),
        stores: 0,
        ticks: 0,
        stalled_ns: 0,
        stall_count: 0,
        stalls: Vec::new(),
    };
    let mut offsets = Vec::new();
    // Fault the pages in first: the probe measures writeback waits, not first-touch faults.
    for p in 0..pages {
        mapping.store((p * page).min(mapping.len - 8), 0);
    }
    let mut next = Instant::now();
    let end = started + config.duration;
    while !stop.load(Ordering::Relaxed) && Instant::now() < end {
        config
            .pattern
            .offsets(measured.ticks, pages, page, &mut offsets);
        let before = Instant::now();
        for &offset in &offsets {
            mapping.store(offset.min(mapping.len - 8), measured.stores);
            measured.stores += 1;
        }
        let latency = before.elapsed();
        let latency_ns = (latency.as_nanos() as u64).max(1);
        // Recording never fails: the histogram resizes itself.
        let _ = histogram.record_correct(latency_ns, interval_ns);
        measured.ticks += 1;
        if latency >= config.stall_threshold {
            measured.stall_count += 1;
            measured.stalled_ns += latency_ns;
            if measured.stalls.len() < MAX_STALLS_KEPT {
                let offset = before.duration_since(started);
                measured.stalls.push(Stall {
                    offset_ns: offset.as_nanos() as u64,
                    unix_ms: unix_ms(wall_started + offset),
                    latency_ns,
                });
            }
        }
        next += config.interval;
        let now = Instant::now();
        if next < now {
            // Missed ticks during a stall are accounted for by the correction above.
            next = now;
        }
        sleep_until(next.min(end), stop);
    }
    measured.histogram = histogram;
    measured
}

struct Measured {
    histogram: Histogram<u64>,
    stores: u64,
    ticks: u64,
    stalled_ns: u64,
    stall_count: u64,
    stalls: Vec<Stall>,
}

/// Starts writeback of the file every `every` until `done` or `stop`; returns the count.
fn force_writeback(
    fd: i32,
    every: Duration,
    end: Instant,
    done: &AtomicBool,
    stop: &AtomicBool,
) -> u64 {
    let mut count = 0;
    let mut next = Instant::now() + every;
    loop {
        sleep_until(next.min(end), stop);
        if done.load(Ordering::Relaxed) || stop.load(Ordering::Relaxed) || Instant::now() >= end {
            return count;
        }
        // SAFETY: fd stays open until the measuring thread has finished.
        if unsafe { libc::sync_file_range(fd, 0, 0, libc::SYNC_FILE_RANGE_WRITE) } == 0 {
            count += 1;
        }
        next += every;
    }
}

/// Runs the probe on every target at once and returns one result per target, in order.
/// `stop` ends it early (e.g. Ctrl-C); files are removed in every case.
pub fn run_mmap_probe(
    targets: &[ProbeTarget],
    config: &ProbeConfig,
    stop: &AtomicBool,
) -> Result<Vec<ProbeResult>> {
    if config.file_size < 8 {
        return Err(HostError::Probe {
            path: PathBuf::from("probe"),
            what: "file size must be at least 8 bytes".to_string(),
        });
    }
    // Create everything first so a bad directory fails before any measuring starts.
    let mut prepared = Vec::new();
    for (index, target) in targets.iter().enumerate() {
        let (mapping, filesystem) = match target.directory() {
            Some(dir) => {
                remove_stale_files(&dir);
                let filesystem = filesystem_of(&dir).ok();
                (Mapping::file(&dir, index, config.file_size)?, filesystem)
            }
            None => (Mapping::anonymous(config.file_size)?, None),
        };
        prepared.push((target, mapping, filesystem));
    }
    let started = Instant::now();
    let wall_started = SystemTime::now();
    let end = started + config.duration;
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = prepared
            .iter()
            .map(|(target, mapping, filesystem)| {
                scope.spawn(move || {
                    let done = AtomicBool::new(false);
                    let (measured, writebacks) = std::thread::scope(|inner| {
                        let done = &done;
                        let writer = match (mapping.fd(), config.force_writeback) {
                            (Some(fd), Some(every)) => Some(
                                inner.spawn(move || force_writeback(fd, every, end, done, stop)),
                            ),
                            _ => None,
                        };
                        let measured = measure(mapping, config, started, wall_started, stop);
                        done.store(true, Ordering::Relaxed);
                        let writebacks = writer.map(|w| w.join().unwrap_or(0)).unwrap_or(0);
                        (measured, writebacks)
                    });
                    let h = &measured.histogram;
                    ProbeResult {
                        target: target.label(),
                        file: mapping.file.as_ref().map(|(_, p)| p.clone()),
                        filesystem: filesystem.clone(),
                        stores: measured.stores,
                        ticks: measured.ticks,
                        stalled_ms_per_minute: measured.stalled_ns as f64
                            / 1e6
                            / started.elapsed().as_secs_f64().max(1e-9)
                            * 60.0,
                        writebacks,
                        p50_ns: h.value_at_quantile(0.5),
                        p99_ns: h.value_at_quantile(0.99),
                        p999_ns: h.value_at_quantile(0.999),
                        max_ns: h.max(),
                        stall_count: measured.stall_count,
                        stalls: measured.stalls,
                        histogram: measured.histogram,
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("probe thread does not panic"))
            .collect::<Vec<_>>()
    });
    drop(prepared); // unmaps and removes the files
    Ok(results)
}

/// The directory the JVMs of user `user` put their hsperf files in.
pub fn hsperf_dir(user: &str) -> PathBuf {
    PathBuf::from(format!("/tmp/hsperfdata_{user}"))
}

/// Name of the effective user, for [`hsperf_dir`].
pub fn effective_user_name() -> String {
    // SAFETY: getpwuid returns a pointer to static storage or null; read at once.
    unsafe {
        let pw = libc::getpwuid(libc::geteuid());
        if pw.is_null() || (*pw).pw_name.is_null() {
            return libc::geteuid().to_string();
        }
        std::ffi::CStr::from_ptr((*pw).pw_name)
            .to_string_lossy()
            .into_owned()
    }
}

/// The default targets: the filesystem of this user's hsperf directory (the directory itself
/// if it exists, so a separate mount there counts, else `/tmp`), `/dev/shm` (tmpfs) and
/// anonymous memory.
pub fn default_targets() -> Vec<ProbeTarget> {
    let hsperf = hsperf_dir(&effective_user_name());
    let mut targets = vec![ProbeTarget::Directory(if hsperf.is_dir() {
        hsperf
    } else {
        PathBuf::from("/tmp")
    })];
    if Path::new("/dev/shm").is_dir() {
        targets.push(ProbeTarget::Directory(PathBuf::from("/dev/shm")));
    }
    targets.push(ProbeTarget::Anonymous);
    targets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_on_tmpfs_and_anonymous_counts_stores_and_removes_its_file() {
        let dir = PathBuf::from("/dev/shm");
        let config = ProbeConfig {
            duration: Duration::from_millis(300),
            interval: Duration::from_millis(1),
            force_writeback: Some(Duration::from_millis(100)),
            ..ProbeConfig::default()
        };
        let stop = AtomicBool::new(false);
        let results = run_mmap_probe(
            &[ProbeTarget::Directory(dir.clone()), ProbeTarget::Anonymous],
            &config,
            &stop,
        )
        .unwrap();
        assert_eq!(results.len(), 2);
        for result in &results {
            assert!(result.stores > 10, "{result:?}");
            assert!(result.p50_ns <= result.p99_ns && result.p99_ns <= result.max_ns);
            assert!(result.histogram.len() >= result.stores);
        }
        let file = results[0].file.clone().unwrap();
        assert!(!file.exists(), "{} left behind", file.display());
        assert!(results[0].filesystem.as_ref().unwrap().is_memory_backed());
    }

    #[test]
    fn unwritable_directory_is_an_error_naming_it() {
        let stop = AtomicBool::new(false);
        let err = run_mmap_probe(
            &[ProbeTarget::Directory(PathBuf::from("/proc"))],
            &ProbeConfig::default(),
            &stop,
        )
        .unwrap_err();
        assert!(err.to_string().contains("/proc/.pauselab-probe."), "{err}");
    }

    #[test]
    fn stale_files_of_dead_probes_are_removed_live_ones_kept() {
        let dir = std::env::temp_dir().join(format!("pauselab-stale-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dead = dir.join(format!("{FILE_PREFIX}{}.0", u32::MAX - 1));
        let live = dir.join(format!("{FILE_PREFIX}{}.0", std::process::id()));
        std::fs::write(&dead, b"x").unwrap();
        std::fs::write(&live, b"x").unwrap();
        remove_stale_files(&dir);
        assert!(!dead.exists());
        assert!(live.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
