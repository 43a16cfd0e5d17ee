//! Memory pressure on a shared host, made safely: a filler that takes the host's memory
//! down to `leave` bytes available (MemAvailable), in chunks, and hands chunks back as
//! soon as MemAvailable falls under `floor` (someone else needs the memory), so the host
//! sits near its limit without the filler ever being the reason something is OOM-killed.
//!
//! The chunks are anonymous mappings touched page by page with `MADV_NOHUGEPAGE`, so the
//! filler itself takes the same 4 KiB pages whatever the THP mode of the variant, and
//! leaves physical memory as fragmented as ordinary use does. It is a thread of the lab
//! process: its memory goes away with the process, even on SIGKILL.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Bytes of one chunk: filled and released as a unit.
pub const CHUNK: u64 = 64 << 20;

/// How close to its limit the host is taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PressureSpec {
    /// MemAvailable the filler leaves to everything else (the JVM's heap included).
    pub leave: String,
    /// When MemAvailable falls under this, chunks are released until it is above again.
    pub floor: String,
    /// At most this much is held, whatever is available (default: no limit but `leave`).
    #[serde(default)]
    pub max: Option<String>,
}

/// The spec in bytes, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub leave: u64,
    pub floor: u64,
    pub max: u64,
}

impl PressureSpec {
    pub fn bounds(&self) -> Result<Bounds, String> {
        let leave = crate::units::parse_bytes(&self.leave)?;
        let floor = crate::units::parse_bytes(&self.floor)?;
        let max = match &self.max {
            Some(m) => crate::units::parse_bytes(m)?,
            None => u64::MAX,
        };
        // Filling stops at `leave`; releasing starts at `floor`. Without a chunk between
        // them the filler would take and give back the same chunk forever.
        if floor == 0 || leave < floor + CHUNK {
            return Err(format!(
                "memory pressure: leave ({}) must exceed floor ({}) by at least {} MiB, and floor must not be 0",
                self.leave,
                self.floor,
                CHUNK >> 20
            ));
        }
        Ok(Bounds { leave, floor, max })
    }
}

/// What the filler should do next, given MemAvailable and what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Take one more chunk.
    Fill,
    /// Give back this many chunks.
    Release(u64),
    Hold,
}

/// One decision: release under the floor, fill while a whole chunk fits above `leave`.
pub fn step(bounds: &Bounds, available: u64, held: u64) -> Step {
    if available < bounds.floor {
        let short = bounds.floor - available;
        let chunks = short.div_ceil(CHUNK) + 1;
        let have = held / CHUNK;
        return if have == 0 {
            Step::Hold
        } else {
            Step::Release(chunks.min(have))
        };
    }
    if available >= bounds.leave + CHUNK && held + CHUNK <= bounds.max {
        return Step::Fill;
    }
    Step::Hold
}

/// What the filler did, for the bundle.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FillerReport {
    pub peak_bytes: u64,
    /// Chunks handed back because MemAvailable fell under the floor.
    pub released_chunks: u64,
    /// MemAvailable when the filler started and its lowest value while it ran.
    pub available_at_start_bytes: u64,
    pub min_available_bytes: u64,
}

/// A running filler thread.
pub struct Filler {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<FillerReport>>,
    held: Arc<AtomicU64>,
}

impl Filler {
    /// Starts filling. `held` is updated as chunks come and go (the host series shows it).
    pub fn start(bounds: Bounds, held: Arc<AtomicU64>) -> Result<Filler, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = stop.clone();
        let thread_held = held.clone();
        let handle = std::thread::Builder::new()
            .name("pauselab-memory-pressure".into())
            .spawn(move || fill(bounds, &thread_stop, &thread_held))
            .map_err(|e| format!("start the memory filler: {e}"))?;
        Ok(Filler {
            stop,
            handle: Some(handle),
            held,
        })
    }

    /// Bytes held now.
    pub fn held(&self) -> u64 {
        self.held.load(Ordering::Relaxed)
    }

    /// Releases everything and reports.
    pub fn stop(mut self) -> FillerReport {
        self.finish()
    }

    fn finish(&mut self) -> FillerReport {
        self.stop.store(true, Ordering::SeqCst);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Filler {
    fn drop(&mut self) {
        self.finish();
    }
}

/// MemAvailable in bytes (0 when unreadable: the filler then only releases).
pub fn mem_available() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map(|kib| kib * 1024)
        .unwrap_or(0)
}

fn fill(bounds: Bounds, stop: &AtomicBool, held: &AtomicU64) -> FillerReport {
    let mut chunks: Vec<Chunk> = Vec::new();
    let start = mem_available();
    let mut report = FillerReport {
        available_at_start_bytes: start,
        min_available_bytes: start,
        ..FillerReport::default()
    };
    while !stop.load(Ordering::Relaxed) {
        let available = mem_available();
        report.min_available_bytes = report.min_available_bytes.min(available);
        match step(&bounds, available, chunks.len() as u64 * CHUNK) {
            Step::Fill => match Chunk::touched(CHUNK as usize) {
                Some(chunk) => chunks.push(chunk),
                None => std::thread::sleep(Duration::from_millis(100)),
            },
            Step::Release(n) => {
                for _ in 0..n {
                    chunks.pop();
                }
                report.released_chunks += n;
            }
            Step::Hold => std::thread::sleep(Duration::from_millis(100)),
        }
        let bytes = chunks.len() as u64 * CHUNK;
        held.store(bytes, Ordering::Relaxed);
        report.peak_bytes = report.peak_bytes.max(bytes);
    }
    chunks.clear();
    held.store(0, Ordering::Relaxed);
    report
}

/// One anonymous mapping, every page touched; unmapped on drop.
struct Chunk {
    address: *mut libc::c_void,
    length: usize,
}

// SAFETY: the mapping is owned by exactly one Chunk and only unmapped in its Drop.
unsafe impl Send for Chunk {}

impl Chunk {
    fn touched(length: usize) -> Option<Chunk> {
        // SAFETY: a fresh private anonymous mapping; no existing memory is affected.
        let address = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                length,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if address == libc::MAP_FAILED {
            return None;
        }
        let chunk = Chunk { address, length };
        // SAFETY: advice on our own mapping.
        unsafe { libc::madvise(address, length, libc::MADV_NOHUGEPAGE) };
        let bytes = address.cast::<u8>();
        for offset in (0..length).step_by(4096) {
            // SAFETY: offset < length, inside the mapping; a volatile store so the page is
            // really faulted in.
            unsafe { bytes.add(offset).write_volatile(1) };
        }
        Some(chunk)
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping this Chunk owns, once.
        unsafe { libc::munmap(self.address, self.length) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: u64 = 1 << 30;

    fn bounds(leave: u64, floor: u64) -> Bounds {
        Bounds {
            leave,
            floor,
            max: u64::MAX,
        }
    }

    #[test]
    fn fills_down_to_leave_and_no_further() {
        let b = bounds(4 * G, 2 * G);
        assert_eq!(step(&b, 10 * G, 0), Step::Fill);
        assert_eq!(step(&b, 4 * G + CHUNK, 6 * G), Step::Fill);
        assert_eq!(step(&b, 4 * G + CHUNK - 1, 6 * G), Step::Hold);
        assert_eq!(step(&b, 3 * G, 6 * G), Step::Hold);
    }

    #[test]
    fn releases_under_the_floor_enough_to_get_back_above_it() {
        let b = bounds(4 * G, 2 * G);
        // 200 MiB short: 4 chunks of 64 MiB cover it, one more for margin.
        assert_eq!(step(&b, 2 * G - (200 << 20), 6 * G), Step::Release(5));
        // Never more than it holds, and nothing when it holds nothing.
        assert_eq!(step(&b, 0, 2 * CHUNK), Step::Release(2));
        assert_eq!(step(&b, 0, 0), Step::Hold);
    }

    #[test]
    fn max_caps_what_is_held() {
        let b = Bounds {
            leave: 4 * G,
            floor: 2 * G,
            max: 3 * CHUNK,
        };
        assert_eq!(step(&b, 20 * G, 2 * CHUNK), Step::Fill);
        assert_eq!(step(&b, 20 * G, 3 * CHUNK), Step::Hold);
    }

    #[test]
    fn leave_must_clear_the_floor_by_a_chunk() {
        let spec = |leave: &str, floor: &str| PressureSpec {
            leave: leave.into(),
            floor: floor.into(),
            max: None,
        };
        assert!(spec("4G", "2G").bounds().is_ok());
        let err = spec("2G", "2G").bounds().unwrap_err();
        assert!(err.contains("leave (2G) must exceed floor (2G)"), "{err}");
        assert!(spec("4G", "0").bounds().is_err());
        assert!(spec("lots", "1G").bounds().is_err());
    }

    /// A real filler with a small `max`: it takes its memory and gives all of it back.
    #[test]
    fn a_real_filler_holds_memory_and_gives_it_back() {
        let available = mem_available();
        if available < 2 * G {
            eprintln!("skipped: MemAvailable {} MiB", available >> 20);
            return;
        }
        let held = Arc::new(AtomicU64::new(0));
        let filler = Filler::start(
            Bounds {
                leave: available / 4 + CHUNK,
                floor: available / 4,
                max: 4 * CHUNK,
            },
            held.clone(),
        )
        .unwrap();
        assert!(
            crate::journal::wait_until(Duration::from_secs(30), || filler.held() == 4 * CHUNK),
            "held {}",
            filler.held()
        );
        let report = filler.stop();
        assert_eq!(report.peak_bytes, 4 * CHUNK);
        assert_eq!(report.released_chunks, 0);
        assert_eq!(held.load(Ordering::Relaxed), 0);
    }
}
