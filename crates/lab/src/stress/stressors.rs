//! Native stressors, run as threads of the lab process (so they die with it, even on
//! SIGKILL): a disk writer keeping a write backlog, a writeback forcer, a memory hog and a
//! CPU hog. Each is bounded in size, writes only inside the run's scratch area, and stops
//! when the shared stop flag is set.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::experiment::units::WrittenSize;
use crate::experiment::StressorSpec;
use crate::stress::error::StressError;

/// Throughput counters the host sampler reads every second.
#[derive(Debug, Default)]
pub struct Counters {
    pub disk_bytes: AtomicU64,
    pub writeback_calls: AtomicU64,
    pub memory_bytes: AtomicU64,
    pub cpu_spins: AtomicU64,
}

/// Running stressor threads.
pub struct Stressors {
    stop: Arc<AtomicBool>,
    threads: Vec<(String, JoinHandle<()>)>,
    pub counters: Arc<Counters>,
}

/// Where the stressors may act.
pub struct Targets {
    /// Directory for the disk writer's file (on the stressed filesystem).
    pub disk_dir: Option<PathBuf>,
    /// Directories whose files the writeback forcer syncs.
    pub victim_dirs: Vec<PathBuf>,
}

pub const LOAD_FILE: &str = "pauselab-load";

impl Stressors {
    pub fn start(specs: &[StressorSpec], targets: &Targets) -> Result<Stressors, StressError> {
        let stop = Arc::new(AtomicBool::new(false));
        let counters = Arc::new(Counters::default());
        let mut stressors = Stressors {
            stop: stop.clone(),
            threads: Vec::new(),
            counters: counters.clone(),
        };
        for spec in specs {
            let stop = stop.clone();
            let counters = counters.clone();
            match spec {
                StressorSpec::DiskWriter { chunk, max_rate } => {
                    let Some(dir) = targets.disk_dir.clone() else {
                        continue;
                    };
                    let chunk = chunk.get();
                    let max_rate = max_rate.as_ref().map(WrittenSize::get);
                    let free = crate::host::sys::free_bytes(&dir)?;
                    if free < chunk * 2 {
                        return Err(StressError::DiskFull {
                            dir,
                            free,
                            needed: chunk * 2,
                        });
                    }
                    stressors.spawn("disk-writer", move || {
                        disk_writer(&dir, chunk, max_rate, &stop, &counters)
                    })?;
                }
                StressorSpec::WritebackForcer { interval } => {
                    let interval = interval.get();
                    let dirs = targets.victim_dirs.clone();
                    if dirs.is_empty() {
                        continue;
                    }
                    stressors.spawn("writeback-forcer", move || {
                        writeback_forcer(&dirs, interval, &stop, &counters)
                    })?;
                }
                StressorSpec::MemoryHog { size } => {
                    let wanted = size.get();
                    let bytes = wanted.min(crate::host::sys::mem_available() / 4);
                    stressors.spawn("memory-hog", move || memory_hog(bytes, &stop, &counters))?;
                }
                StressorSpec::CpuHog { threads, duty } => {
                    let duty = (*duty).min(100);
                    for _ in 0..*threads {
                        let stop = stop.clone();
                        let counters = counters.clone();
                        stressors.spawn("cpu-hog", move || cpu_hog(duty, &stop, &counters))?;
                    }
                }
            }
        }
        Ok(stressors)
    }

    fn spawn(
        &mut self,
        name: &str,
        body: impl FnOnce() + Send + 'static,
    ) -> Result<(), StressError> {
        let handle = std::thread::Builder::new()
            .name(format!("pauselab-{name}"))
            .spawn(body)
            .map_err(|source| StressError::Thread {
                what: name.to_string(),
                source,
            })?;
        self.threads.push((name.to_string(), handle));
        Ok(())
    }

    pub fn names(&self) -> Vec<String> {
        self.threads.iter().map(|(n, _)| n.clone()).collect()
    }

    /// Stops every stressor and waits for it (the disk writer finishes its current write).
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for (_, handle) in self.threads.drain(..) {
            let _ = handle.join();
        }
    }
}

impl Drop for Stressors {
    fn drop(&mut self) {
        self.stop();
    }
}

fn disk_writer(
    dir: &Path,
    chunk: u64,
    max_rate: Option<u64>,
    stop: &AtomicBool,
    counters: &Counters,
) {
    const BLOCK: usize = 1 << 20;
    let buffer = vec![0x5au8; BLOCK];
    let path = dir.join(LOAD_FILE);
    while !stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        let Ok(mut file) = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .open(&path)
        else {
            std::thread::sleep(Duration::from_millis(500));
            continue;
        };
        let mut written = 0u64;
        while written < chunk && !stop.load(Ordering::Relaxed) {
            let n = BLOCK.min((chunk - written) as usize);
            if file.write_all(&buffer[..n]).is_err() {
                break;
            }
            written += n as u64;
        }
        let _ = file.sync_data();
        counters.disk_bytes.fetch_add(written, Ordering::Relaxed);
        if let Some(rate) = max_rate.filter(|r| *r > 0) {
            let budget = Duration::from_secs_f64(written as f64 / rate as f64);
            sleep_unless_stopped(budget.saturating_sub(started.elapsed()), stop);
        }
    }
    let _ = fs::remove_file(&path);
}

fn writeback_forcer(dirs: &[PathBuf], interval: Duration, stop: &AtomicBool, counters: &Counters) {
    while !stop.load(Ordering::Relaxed) {
        let mut files = Vec::new();
        for dir in dirs {
            collect_files(dir, 3, &mut files);
        }
        for path in files {
            if path.file_name().is_some_and(|n| n == LOAD_FILE) {
                continue;
            }
            if let Ok(file) = File::open(&path) {
                crate::host::sys::start_writeback(&file);
                counters.writeback_calls.fetch_add(1, Ordering::Relaxed);
            }
        }
        sleep_unless_stopped(interval, stop);
    }
}

fn collect_files(dir: &Path, depth: u32, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_file() {
            out.push(entry.path());
        } else if kind.is_dir() && depth > 0 {
            collect_files(&entry.path(), depth - 1, out);
        }
    }
}

fn memory_hog(bytes: u64, stop: &AtomicBool, counters: &Counters) {
    let mut memory = vec![0u8; bytes as usize];
    counters.memory_bytes.store(bytes, Ordering::Relaxed);
    let mut round = 0u8;
    while !stop.load(Ordering::Relaxed) {
        round = round.wrapping_add(1);
        for page in memory.chunks_mut(4096) {
            page[0] = round;
        }
        sleep_unless_stopped(Duration::from_secs(1), stop);
    }
    counters.memory_bytes.store(0, Ordering::Relaxed);
}

fn cpu_hog(duty: u32, stop: &AtomicBool, counters: &Counters) {
    let period = Duration::from_millis(100);
    let busy = period * duty / 100;
    while !stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        let mut spins = 0u64;
        while started.elapsed() < busy {
            spins = std::hint::black_box(spins + 1);
        }
        counters.cpu_spins.fetch_add(spins, Ordering::Relaxed);
        std::thread::sleep(period.saturating_sub(started.elapsed()));
    }
}

fn sleep_unless_stopped(total: Duration, stop: &AtomicBool) {
    let deadline = Instant::now() + total;
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(100)));
    }
}
