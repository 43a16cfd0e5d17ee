//! Chunks read on several threads: a recording is a sequence of self-contained chunks
//! (each has its own metadata and constant pools), so any thread can read any chunk once
//! its header says where it is. The calling thread reads the headers in order (68 bytes
//! each), hands the chunks out, and passes their results on in chunk order, a bounded
//! number of chunks ahead, so what the caller sees is what one thread would give.

use std::collections::{BTreeMap, VecDeque};
use std::ops::ControlFlow;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread;

use crate::chunk::Scratch;
use crate::{chunk_header, read_whole, Chunk, ChunkAt, Error, ReadAt, Recording};

/// Chunks read ahead of the caller per thread: enough to keep every thread busy while the
/// caller takes one, few enough that their events stay a few MB.
const AHEAD_PER_THREAD: u64 = 2;

/// Threads reading chunks at most, whatever `--threads` says: each holds its chunk's
/// buffers and pools, and the chunks it read ahead (about 5 MB each for the 1 MB chunks of
/// a JDK 25 `profile` recording), which bounds memory. On 300 such chunks: max RSS 35 MB
/// with 2 threads, 55 to 59 MB with 3, 70 MB with 4, 127 to 147 MB with 8 (the goal is
/// 64 MB, for any recording). The caller analyses the chunks in order, and takes half the
/// time of reading them: with two threads it is busy all the time.
const MAX_THREADS: usize = 2;

/// A chunk read, or the panic of the thread reading it (passed on to the caller).
type Read = thread::Result<Result<Chunk, Error>>;

struct State {
    /// Chunks whose header was read, not yet taken by a thread.
    queue: VecDeque<ChunkAt>,
    /// Chunks read, by number, until the caller takes them.
    done: BTreeMap<u64, Read>,
    stop: bool,
}

struct Shared<'r, R> {
    input: &'r R,
    name: &'r str,
    state: Mutex<State>,
    changed: Condvar,
}

impl<R: ReadAt> Shared<'_, R> {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn read(&self, at: ChunkAt, scratch: &mut Scratch) {
        let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            read_whole(self.input, self.name, at, scratch)
        }));
        self.lock().done.insert(at.number, read);
        self.changed.notify_all();
    }

    /// A reading thread: takes chunks until told to stop.
    fn work(&self) {
        let mut scratch = Scratch::default();
        loop {
            let mut state = self.lock();
            let at = loop {
                if state.stop {
                    return;
                }
                if let Some(at) = state.queue.pop_front() {
                    break at;
                }
                state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
            };
            drop(state);
            self.read(at, &mut scratch);
        }
    }

    /// Chunk `number` once read; the calling thread reads queued chunks while it waits.
    fn take(&self, number: u64, scratch: &mut Scratch) -> Result<Chunk, Error> {
        let mut state = self.lock();
        loop {
            if let Some(read) = state.done.remove(&number) {
                return read.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            }
            if let Some(at) = state.queue.pop_front() {
                drop(state);
                self.read(at, scratch);
                state = self.lock();
                continue;
            }
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Stops the reading threads however the caller leaves (an error, a break, a panic).
struct StopOnDrop<'s, 'r, R: ReadAt>(&'s Shared<'r, R>);

impl<R: ReadAt> Drop for StopOnDrop<'_, '_, R> {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.stop = true;
        state.queue.clear();
        drop(state);
        self.0.changed.notify_all();
    }
}

/// [`Recording::each_chunk`] with `threads` (2 or more) threads, the caller's one of them.
pub(crate) fn each_chunk<R: ReadAt>(
    rec: &mut Recording<R>,
    threads: usize,
    mut each: impl FnMut(u64, Result<Chunk, Error>) -> ControlFlow<()>,
) {
    let Recording {
        input,
        name,
        len,
        offset,
        chunk,
        scratch,
    } = rec;
    let shared = Shared {
        input: &*input,
        name: name.as_str(),
        state: Mutex::new(State {
            queue: VecDeque::new(),
            done: BTreeMap::new(),
            stop: false,
        }),
        changed: Condvar::new(),
    };
    let threads = threads.min(MAX_THREADS);
    let ahead = AHEAD_PER_THREAD * threads as u64;
    thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(|| shared.work());
        }
        let _stop = StopOnDrop(&shared);
        // Chunks whose header was read, and the error that ended the headers, if any.
        let mut headers = *chunk;
        let mut headers_end: Option<Option<Error>> = None;
        loop {
            while headers_end.is_none() && headers < *chunk + 1 + ahead {
                if *offset >= *len {
                    headers_end = Some(None);
                    break;
                }
                let number = headers + 1;
                match chunk_header(shared.input, name, *len, offset, number) {
                    Ok(at) => {
                        headers = number;
                        shared.lock().queue.push_back(at);
                        shared.changed.notify_one();
                    }
                    Err(e) => headers_end = Some(Some(e)),
                }
            }
            *chunk += 1;
            let read = if *chunk <= headers {
                shared.take(*chunk, scratch)
            } else {
                match headers_end.take().flatten() {
                    Some(e) => Err(e),
                    None => {
                        // No more chunks: as many read as there are.
                        *chunk -= 1;
                        return;
                    }
                }
            };
            let failed = read.is_err();
            if each(*chunk, read).is_break() || failed {
                return;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;
    use std::path::Path;
    use std::process::Command;

    use proptest::prelude::*;

    use super::*;

    /// A real recording of 1.5 s of JDK 17 running the allocating workload (tests/Alloc.java),
    /// with the events analysed on; `None` without the JDK.
    fn recording() -> Option<Vec<u8>> {
        let java = Path::new("/usr/lib/jvm/java-17-openjdk-amd64/bin/java");
        if !java.exists() {
            eprintln!("skipped: no JDK 17 at {}", java.display());
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let jfr = dir.path().join("rec.jfr");
        let status = Command::new(java)
            .args(["-Xmx64m", "-XX:TieredStopAtLevel=1", "-XX:+UseG1GC"])
            .arg(format!(
                "-XX:StartFlightRecording:filename={},settings=profile,+jdk.SafepointEnd#enabled=true",
                jfr.display()
            ))
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/Alloc.java"))
            .arg("1500")
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        Some(std::fs::read(jfr).unwrap())
    }

    /// What `each_chunk` hands out with `threads`: each chunk's number and events, or the
    /// error, in order; `stop_after` breaks after that many chunks.
    fn chunks(bytes: &[u8], threads: usize, stop_after: u64) -> Result<Vec<String>, String> {
        let mut rec =
            Recording::new(Cursor::new(bytes), "rec.jfr".to_string()).map_err(|e| e.to_string())?;
        let mut seen = Vec::new();
        rec.each_chunk(threads, |number, chunk| {
            seen.push(match chunk {
                Ok(c) => format!(
                    "{number}: {} {} {:?} {:?}",
                    c.start_epoch_ns, c.duration_ns, c.limits_hit, c.events
                ),
                Err(e) => format!("{number}: {e}"),
            });
            if number == stop_after {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        seen.push(format!("read {}", rec.chunks_read()));
        Ok(seen)
    }

    #[test]
    fn chunks_read_on_several_threads_are_those_of_one_thread_cut_or_garbled() {
        let Some(one) = recording() else {
            return;
        };
        // Several chunks: the recording's copies back to back.
        let bytes = one.repeat(5);
        let whole = chunks(&bytes, 1, u64::MAX).unwrap();
        assert_eq!(whole.len(), 6, "{:?}", &whole[5]);
        assert!(whole[4].starts_with("5: ") && whole[4].contains("GcPhasePause"));
        for threads in [2, 3, 8] {
            assert_eq!(chunks(&bytes, threads, u64::MAX).unwrap(), whole);
            assert_eq!(chunks(&bytes, threads, 2), chunks(&bytes, 1, 2));
        }
        let cfg = ProptestConfig {
            cases: 32,
            failure_persistence: None,
            ..ProptestConfig::default()
        };
        proptest!(cfg, |(cut in 0..bytes.len(), threads in 2..6usize, flips in prop::collection::vec((0..bytes.len(), any::<u8>()), 1..8))| {
            prop_assert_eq!(chunks(&bytes[..cut], threads, u64::MAX), chunks(&bytes[..cut], 1, u64::MAX));
            let mut flipped = bytes.clone();
            for (at, value) in flips {
                flipped[at] = value;
            }
            prop_assert_eq!(chunks(&flipped, threads, u64::MAX), chunks(&flipped, 1, u64::MAX));
        });
    }
}
