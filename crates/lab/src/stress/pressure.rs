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

use serde::Serialize;

use crate::experiment::{Bounds, CHUNK};
use crate::host::sys::{mem_available, TouchedMemory};
use crate::stress::error::StressError;
use crate::stress::Counters;

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

/// What the filler did since it started or since [`Filler::reset_stats`] (one turn).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct FillerStats {
    pub peak_bytes: u64,
    /// Chunks handed back because MemAvailable fell under the floor.
    pub released_chunks: u64,
    /// The lowest MemAvailable seen.
    pub min_available_bytes: u64,
}

/// The filler thread's live statistics.
#[derive(Debug)]
struct Shared {
    stop: AtomicBool,
    /// Set once the filler first had nothing more to take (or could not map more).
    settled: AtomicBool,
    peak_bytes: AtomicU64,
    released_chunks: AtomicU64,
    min_available_bytes: AtomicU64,
}

/// A running filler thread.
pub struct Filler {
    shared: Arc<Shared>,
    handle: Option<JoinHandle<()>>,
    counters: Arc<Counters>,
}

impl Filler {
    /// Starts filling. The counters' `memory_bytes` follow the chunks as they come and go
    /// (the host series shows them).
    pub fn start(bounds: Bounds, counters: Arc<Counters>) -> Result<Filler, StressError> {
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            settled: AtomicBool::new(false),
            peak_bytes: AtomicU64::new(0),
            released_chunks: AtomicU64::new(0),
            min_available_bytes: AtomicU64::new(u64::MAX),
        });
        let thread_shared = shared.clone();
        let thread_counters = counters.clone();
        let handle = std::thread::Builder::new()
            .name("pauselab-memory-pressure".into())
            .spawn(move || fill(bounds, &thread_shared, &thread_counters))
            .map_err(|source| StressError::Thread {
                what: "the memory filler".into(),
                source,
            })?;
        Ok(Filler {
            shared,
            handle: Some(handle),
            counters,
        })
    }

    /// Waits until the filler has taken what it may (or `timeout` passes, or `stop`).
    pub fn wait_settled(&self, timeout: Duration, stop: &AtomicBool) -> bool {
        let settled = &self.shared.settled;
        crate::host::sys::wait_until(timeout, || {
            settled.load(Ordering::SeqCst) || stop.load(Ordering::SeqCst)
        }) && settled.load(Ordering::SeqCst)
    }

    /// Bytes held now.
    pub fn held(&self) -> u64 {
        self.counters.memory_bytes.load(Ordering::Relaxed)
    }

    /// Statistics so far.
    pub fn stats(&self) -> FillerStats {
        let min = self.shared.min_available_bytes.load(Ordering::Relaxed);
        FillerStats {
            peak_bytes: self.shared.peak_bytes.load(Ordering::Relaxed),
            released_chunks: self.shared.released_chunks.load(Ordering::Relaxed),
            min_available_bytes: if min == u64::MAX { 0 } else { min },
        }
    }

    /// Starts the statistics over (a new turn), from what is held now.
    pub fn reset_stats(&self) {
        self.shared.peak_bytes.store(self.held(), Ordering::Relaxed);
        self.shared.released_chunks.store(0, Ordering::Relaxed);
        self.shared
            .min_available_bytes
            .store(u64::MAX, Ordering::Relaxed);
    }

    fn finish(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

impl Drop for Filler {
    fn drop(&mut self) {
        self.finish();
    }
}

fn fill(bounds: Bounds, shared: &Shared, counters: &Counters) {
    let held = &counters.memory_bytes;
    let mut chunks: Vec<TouchedMemory> = Vec::new();
    while !shared.stop.load(Ordering::Relaxed) {
        let available = mem_available();
        shared
            .min_available_bytes
            .fetch_min(available, Ordering::Relaxed);
        match step(&bounds, available, chunks.len() as u64 * CHUNK) {
            Step::Fill => match TouchedMemory::new(CHUNK as usize) {
                Some(chunk) => chunks.push(chunk),
                None => {
                    shared.settled.store(true, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(100));
                }
            },
            Step::Release(n) => {
                for _ in 0..n {
                    chunks.pop();
                }
                shared.released_chunks.fetch_add(n, Ordering::Relaxed);
            }
            Step::Hold => {
                shared.settled.store(true, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        let bytes = chunks.len() as u64 * CHUNK;
        held.store(bytes, Ordering::Relaxed);
        shared.peak_bytes.fetch_max(bytes, Ordering::Relaxed);
    }
    chunks.clear();
    held.store(0, Ordering::Relaxed);
}

/// Memory every JVM of a turn may need besides its heap, and at least this much for the
/// rest of the host: a heap is only started when `-Xmx` plus the margin fits in
/// MemAvailable (a pre-touched heap is committed at once).
pub fn heap_margin(mem_total: u64) -> u64 {
    (mem_total / 10).max(2 << 30)
}

/// The heap a JVM command line asks for: the last `-Xmx` (the JVM takes the last one),
/// else the last `-Xms`; None when neither is given.
pub fn max_heap(command: &[String]) -> Option<u64> {
    let options = pauselab_host::jvm_options::JvmOptions::parse(command);
    options.max_heap.or(options.initial_heap)
}

/// Whether the heaps of JVMs about to start together fit in `available` with the margin;
/// Err says by how much they do not.
pub fn heaps_fit(
    commands: &[&[String]],
    available: u64,
    mem_total: u64,
) -> Result<(), StressError> {
    let heaps: u64 = commands.iter().filter_map(|c| max_heap(c)).sum();
    if heaps == 0 {
        return Ok(());
    }
    let margin = heap_margin(mem_total);
    if heaps + margin > available {
        return Err(StressError::HeapsDoNotFit {
            heaps,
            margin,
            available,
        });
    }
    Ok(())
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
    fn heaps_must_fit_with_the_margin() {
        let cmd = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        let eight = cmd(&["java", "-Xms8g", "-Xmx8g", "-XX:+AlwaysPreTouch"]);
        assert_eq!(max_heap(&eight), Some(8 * G));
        assert_eq!(max_heap(&cmd(&["java", "-Xmx1g", "-Xmx2g"])), Some(2 * G));
        assert_eq!(max_heap(&cmd(&["java", "-Xms512m"])), Some(512 << 20));
        assert_eq!(max_heap(&cmd(&["java", "-cp", "x"])), None);
        // 24 GiB host: margin 2.4 GiB.
        assert!(heaps_fit(&[&eight], 11 * G, 24 * G).is_ok());
        let err = heaps_fit(&[&eight], 10 * G, 24 * G)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("8192 MiB of heap") && err.contains("10240 MiB"),
            "{err}"
        );
        assert!(heaps_fit(&[&eight, &eight], 17 * G, 24 * G).is_err());
        assert!(heaps_fit(&[&cmd(&["java"])], 0, 24 * G).is_ok());
    }

    /// A real filler with a small `max`: it takes its memory and gives all of it back.
    #[test]
    fn a_real_filler_holds_memory_and_gives_it_back() {
        let available = mem_available();
        if available < 2 * G {
            eprintln!("skipped: MemAvailable {} MiB", available >> 20);
            return;
        }
        let counters = Arc::new(Counters::default());
        let filler = Filler::start(
            Bounds {
                leave: available / 4 + CHUNK,
                floor: available / 4,
                max: 4 * CHUNK,
            },
            counters.clone(),
        )
        .unwrap();
        assert!(filler.wait_settled(Duration::from_secs(30), &AtomicBool::new(false)));
        assert_eq!(filler.held(), 4 * CHUNK);
        let report = filler.stats();
        drop(filler);
        assert_eq!(report.peak_bytes, 4 * CHUNK);
        assert_eq!(report.released_chunks, 0);
        assert_eq!(counters.memory_bytes.load(Ordering::Relaxed), 0);
    }
}
