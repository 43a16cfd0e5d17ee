//! One large uncompressed log read by several threads, with the same result as one thread.
//!
//! The file is cut into chunks of [`CHUNK`] bytes; a chunk holds the lines that start in
//! it. Each thread reads, joins ([`Stitcher`]) and parses whole chunks; the calling thread
//! feeds the chunks' lines to the analysis in order (and reads chunks itself while the next
//! one is not ready).
//!
//! A chunk's stitcher starts empty, but the log's stitcher may hold an open JDK 8 event
//! there. So the calling thread carries the log's stitcher over each chunk edge: it
//! stitches the chunk's first lines again with it until, after some line, both stitchers
//! are idle ([`Stitcher::is_idle`]); from there on they hand on the same lines, so the rest
//! is the chunk's own (usually after its first line). Should they never meet, the whole
//! chunk is stitched again: slower, never different.
//!
//! Whether an input is a log at all is decided on its first chunk as on one thread; when
//! it holds no recognised line, [`read`] gives up before anything was analysed and the
//! input is read by one thread.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use pauselab_pause::recycle;

use crate::classify::{ClassifiedLine, LineFeed, PREFETCH_AHEAD};
use crate::lines::LineReader;
use crate::parse::LineParser;
use crate::reading::{
    pass_indented_lines, pass_printouts, stitch_line_and_stamps, ReadSummary, Sniff,
};
use crate::stitch::Stitcher;
use crate::Error;

/// Bytes per chunk: large enough that the edges cost nothing, small enough that the
/// chunks in flight keep memory flat.
pub(crate) const CHUNK: u64 = 1 << 20;
/// Chunks read ahead of the one being analysed, besides one per thread.
const AHEAD: usize = 2;
/// Most chunks read and not yet analysed (each holds its lines parsed: up to 2 MiB for a
/// unified log of short lines), whatever the number of threads: what bounds memory.
const MAX_IN_FLIGHT: usize = 12;
/// Idle points a chunk remembers for meeting the log's stitcher (a real log meets on its
/// first lines).
const MAX_IDLE_POINTS: usize = 4096;

std::thread_local! {
    /// The line reader's buffer of this thread's previous chunk.
    static BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Where a chunk's stitcher was idle: after `lines` of its lines, having handed on
/// `emitted` runs, the last of them then `last_count` lines long, and counted `overflows`.
#[derive(Clone, Copy)]
struct IdlePoint {
    lines: u64,
    emitted: usize,
    last_count: u64,
    overflows: u64,
}

/// A logical line parsed, its number, and how many lines in a row, itself included, say
/// the same: no record, the same format and stamp (most lines of a `gc*` log share their
/// collection's stamp). The thread that analyses gets one entry for them, not twenty.
struct Run {
    line: ClassifiedLine,
    number: u64,
    count: u64,
}

impl Run {
    /// Adds `count` lines from the one numbered `number` on, which `line` stands for, to
    /// the last run of `runs` when they say what its lines say and follow them, or as a
    /// run of their own.
    fn push(runs: &mut Vec<Run>, line: ClassifiedLine, number: u64, count: u64) {
        if let Some(last) = runs.last_mut() {
            let same = number == last.number + last.count
                && line
                    .without_record()
                    .is_some_and(|l| Some(l) == last.line.without_record());
            if same {
                last.count += count;
                return;
            }
        }
        runs.push(Run {
            line,
            number,
            count,
        });
    }

    /// Feeds the run's lines from its `skip + 1`th on to the analysis, numbered after
    /// `before` lines.
    fn apply(self, skip: u64, before: u64, analyzer: &mut LineFeed<'_>) {
        if skip < self.count {
            analyzer.apply_run(self.line, before + self.number + skip, self.count - skip);
        }
    }
}

/// A chunk read and parsed.
struct Chunk {
    /// Offset of its first line (None: no line starts in it).
    start: Option<u64>,
    /// Its logical lines, parsed, numbered from 1 at the chunk's first line.
    lines: Vec<Run>,
    idle: Vec<IdlePoint>,
    /// Physical lines.
    count: u64,
    /// How far the input was read (the input's size when this chunk reached its end).
    read_to: u64,
    stitcher: Stitcher,
    sniff: Sniff,
    /// The first chunk only: it held a recognised line, so the input is a log.
    recognised: bool,
}

/// What the threads that read chunks allocated and leave for the next input of the run:
/// vectors of lines, line buffers, boxes of records. A thread per input reads its chunks,
/// and the allocator gives back the memory of a thread that ended only as far as it was
/// freed before the end: blocks freed later stay with the ended thread's heap. Allocated
/// again for each input, 16 threads held 76 to 83 MB of a rotated set of twenty 30 MB logs
/// of safepoint lines that they read in 50 MB when it is one file (docs/analyze.md, "What
/// the reading threads leave for the next input").
pub(crate) struct Kept {
    /// Most of each kept: as many as chunks are in flight.
    most: usize,
    /// Vectors of analysed chunks, emptied, for the next chunks' lines and idle points
    /// (allocating them anew costs page faults on every chunk, and growing the idle points
    /// twelve copies of up to 128 KiB).
    spare: Mutex<Vec<(Vec<Run>, Vec<IdlePoint>)>>,
    /// Line buffers of the threads that ended.
    buffers: Mutex<Vec<Vec<u8>>>,
    /// Boxes of records the analysis is done with, one pool per chunk analysed (and those
    /// of the threads that ended), for the threads that parse to fill again (see
    /// [`recycle`]): the analysing thread frees none.
    spent_boxes: Mutex<Vec<recycle::Pool>>,
}

impl Kept {
    /// Nothing kept yet, for chunks read by up to `threads` threads.
    pub(crate) fn new(threads: usize) -> Self {
        Kept {
            most: in_flight(threads),
            spare: Mutex::default(),
            buffers: Mutex::default(),
            spent_boxes: Mutex::default(),
        }
    }

    /// Keeps `item` in `kept`, unless as many as chunks in flight are kept already.
    fn keep<T>(&self, kept: &Mutex<Vec<T>>, item: T) {
        let mut kept = lock(kept);
        if kept.len() < self.most {
            kept.push(item);
        }
    }
}

/// Chunks read and not yet analysed, at most, with `threads` threads.
fn in_flight(threads: usize) -> usize {
    (threads.min(MAX_IN_FLIGHT) + AHEAD).min(MAX_IN_FLIGHT)
}

/// Reads `file` (`size` bytes when opened) in chunks of `chunk` bytes with up to `threads`
/// threads into `analyzer`, with what earlier inputs left in `kept`. `Ok(None)`: the first
/// chunk holds no recognised line (or is binary data); nothing was analysed, read the input
/// on one thread.
pub(crate) fn read(
    file: &File,
    size: u64,
    chunk: u64,
    name: &str,
    (threads, kept): (usize, &Kept),
    analyzer: &mut LineFeed<'_>,
) -> Result<Option<ReadSummary>, Error> {
    let chunks = size.div_ceil(chunk).max(1) as usize;
    let threads = threads.min(MAX_IN_FLIGHT);
    let shared = Shared {
        file,
        chunk,
        chunks,
        name,
        next: AtomicUsize::new(0),
        applied: AtomicUsize::new(0),
        window: in_flight(threads),
        stop: AtomicBool::new(false),
        done: Mutex::new(BTreeMap::new()),
        kept,
        ready: Condvar::new(),
    };
    std::thread::scope(|scope| {
        for _ in 1..threads.min(chunks) {
            scope.spawn(|| {
                BUFFER.set(lock(&kept.buffers).pop().unwrap_or_default());
                while shared.work_one(true) {}
                // A thread that read no chunk has no buffer to leave.
                let buffer = BUFFER.take();
                if buffer.capacity() > 0 {
                    kept.keep(&kept.buffers, buffer);
                }
                kept.keep(&kept.spent_boxes, recycle::take_pool());
            });
        }
        // The other threads stop however this one leaves, also by a panic.
        let _stop = StopOnDrop(&shared);
        merge(&shared, analyzer)
    })
}

/// Chunks read, by index.
type Done = BTreeMap<usize, std::thread::Result<io::Result<Chunk>>>;

/// What the threads share: which chunk is next, and the chunks read.
struct Shared<'a> {
    file: &'a File,
    /// Bytes per chunk.
    chunk: u64,
    chunks: usize,
    name: &'a str,
    next: AtomicUsize,
    /// Chunks analysed so far: no chunk further than `window` ahead is read.
    applied: AtomicUsize,
    window: usize,
    stop: AtomicBool,
    /// Chunks read (or the panic of the thread that read one, passed on to the caller).
    done: Mutex<Done>,
    /// What the threads allocated for this input and the next ones.
    kept: &'a Kept,
    ready: Condvar,
}

impl Shared<'_> {
    /// Reads the next chunk when there is one within the window; `wait`: wait until there
    /// is. False when there is nothing more to read.
    fn work_one(&self, wait: bool) -> bool {
        let mut done = self.lock();
        loop {
            if self.stop.load(Ordering::SeqCst) {
                return false;
            }
            let next = self.next.load(Ordering::SeqCst);
            if next >= self.chunks {
                return false;
            }
            if next < self.applied.load(Ordering::SeqCst) + self.window {
                self.next.store(next + 1, Ordering::SeqCst);
                drop(done);
                let chunk = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    read_chunk(self, next)
                }));
                self.lock().insert(next, chunk);
                self.ready.notify_all();
                return true;
            }
            if !wait {
                return true;
            }
            done = self.ready.wait(done).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Chunk `index` (the next to analyse) once read; this thread reads chunks while it
    /// waits for it.
    fn take(&self, index: usize) -> io::Result<Chunk> {
        loop {
            let done = self.lock();
            let next = self.next.load(Ordering::SeqCst);
            let mut done = done;
            if let Some(chunk) = done.remove(&index) {
                return chunk.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            }
            let nothing_to_read =
                next >= self.chunks || next >= self.applied.load(Ordering::SeqCst) + self.window;
            if next > index && nothing_to_read {
                // Another thread reads it and there is nothing else to read (waiting rather
                // than asking again and again, which kept this thread busy while the last
                // chunks were read).
                let _unused = self.ready.wait(done).unwrap_or_else(|e| e.into_inner());
                continue;
            }
            drop(done);
            self.work_one(false);
        }
    }

    /// Where chunk `index`'s lines stop starting.
    fn chunk_end(&self, index: usize) -> u64 {
        if index + 1 == self.chunks {
            u64::MAX
        } else {
            (index as u64 + 1) * self.chunk
        }
    }

    /// Chunk `index` was analysed: the threads may read further.
    fn applied(&self, index: usize) {
        let _done = self.lock();
        self.applied.store(index + 1, Ordering::SeqCst);
        self.ready.notify_all();
    }

    fn stop(&self) {
        let _done = self.lock();
        self.stop.store(true, Ordering::SeqCst);
        self.ready.notify_all();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Done> {
        lock(&self.done)
    }
}

/// A lock that a panic elsewhere does not poison for good (the panic is passed on anyway).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Stops the reading threads when dropped.
struct StopOnDrop<'a, 'b>(&'a Shared<'b>);

impl Drop for StopOnDrop<'_, '_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Feeds the chunks to the analysis in order, carrying the log's stitcher over their edges.
fn merge(shared: &Shared<'_>, analyzer: &mut LineFeed<'_>) -> Result<Option<ReadSummary>, Error> {
    let io_error = |e| Error::Io(shared.name.to_string(), e);
    let mut summary = ReadSummary::default();
    // The log's stitcher, numbering lines from the start of the input.
    let mut stitcher = Stitcher::new();
    // Parses the lines the log's stitcher joins again.
    let mut parser = LineParser::default();
    for index in 0..shared.chunks {
        let chunk = shared.take(index).map_err(io_error)?;
        if index == 0 {
            if !chunk.recognised {
                return Ok(None);
            }
            summary.first_text = chunk.sniff.first_text.clone();
        }
        summary.binary_lines += chunk.sniff.binary_lines;
        summary.bytes = summary.bytes.max(chunk.read_to);
        let count = chunk.count;
        let joining = (&mut stitcher, &mut parser);
        join(shared, index, chunk, joining, &mut summary, analyzer).map_err(io_error)?;
        summary.lines += count;
        let spent = recycle::take_pool();
        if !spent.is_empty() {
            shared.kept.keep(&shared.kept.spent_boxes, spent);
        }
        shared.applied(index);
    }
    stitcher.finish(&mut |bytes, number, _| {
        analyzer.apply(
            ClassifiedLine::new(&mut parser, bytes, None, false, true),
            number,
        );
    });
    summary.overflows += stitcher.overflows();
    Ok(Some(summary))
}

/// Feeds one chunk's lines to the analysis after `summary.lines` lines: the log's
/// stitcher stitches its first lines again (parsed by the log's parser) until both
/// stitchers are idle after the same line, and is then the chunk's stitcher.
fn join(
    shared: &Shared<'_>,
    index: usize,
    chunk: Chunk,
    (stitcher, parser): (&mut Stitcher, &mut LineParser),
    summary: &mut ReadSummary,
    analyzer: &mut LineFeed<'_>,
) -> io::Result<()> {
    let Some(start) = chunk.start else {
        return Ok(());
    };
    let before = summary.lines;
    let mut meet = chunk
        .idle
        .first()
        .filter(|p| p.lines == 0 && stitcher.is_idle())
        .copied();
    if meet.is_none() {
        let end = shared.chunk_end(index);
        // This thread's buffer: it reads chunks too, never while it joins one.
        let mut reader =
            LineReader::continuing(At::first_lines(shared.file, start, end), BUFFER.take());
        let mut idle = chunk.idle.iter().peekable();
        while let Some(line) = reader.next_line()? {
            if start + line.offset >= end {
                break;
            }
            stitch_line_and_stamps(
                stitcher,
                &line,
                before + line.number,
                &mut |bytes, stamps, number, u, t| {
                    analyzer.apply(
                        ClassifiedLine::after_stamps(parser, bytes, stamps, u, t, true),
                        number,
                    );
                },
            );
            let number = line.number;
            pass_printouts(&mut reader, stitcher, end - start);
            if stitcher.is_idle() {
                while idle.next_if(|p| p.lines < number).is_some() {}
                if let Some(point) = idle.next_if(|p| p.lines == number) {
                    meet = Some(*point);
                    break;
                }
            }
        }
        BUFFER.set(reader.into_buffer());
    }
    // Not met: the log's stitcher stitched the whole chunk and goes on.
    let (mut lines, mut idle) = (chunk.lines, chunk.idle);
    if let Some(point) = meet {
        let mut runs = lines.drain(..);
        // The run handed on last before the point may have grown after it: the lines it
        // gained are the chunk's own.
        if let Some(last) = point.emitted.checked_sub(1).and_then(|at| runs.nth(at)) {
            last.apply(point.last_count, before, analyzer);
        }
        while let Some(run) = runs.next() {
            if let Some(ahead) = runs.as_slice().get(PREFETCH_AHEAD) {
                ahead.line.prefetch_record();
            }
            run.apply(0, before, analyzer);
        }
        summary.overflows += stitcher.overflows();
        *stitcher = chunk.stitcher;
        stitcher.rebase(before, point.overflows);
    }
    lines.clear();
    idle.clear();
    shared.kept.keep(&shared.kept.spare, (lines, idle));
    Ok(())
}

/// Reads and parses the lines that start in chunk `index`.
fn read_chunk(shared: &Shared<'_>, index: usize) -> io::Result<Chunk> {
    let (file, name) = (shared.file, shared.name);
    let begin = index as u64 * shared.chunk;
    let end = shared.chunk_end(index);
    let start = if index == 0 {
        Some(0)
    } else {
        first_line_start(file, begin, end)?
    };
    if let Some(pool) = lock(&shared.kept.spent_boxes).pop() {
        recycle::give_pool(pool);
    }
    let (lines, mut idle) = lock(&shared.kept.spare).pop().unwrap_or_else(|| {
        (
            Vec::with_capacity((shared.chunk / 128) as usize),
            Vec::new(),
        )
    });
    idle.push(IdlePoint {
        lines: 0,
        emitted: 0,
        last_count: 0,
        overflows: 0,
    });
    let mut chunk = Chunk {
        start,
        lines,
        idle,
        count: 0,
        read_to: 0,
        stitcher: Stitcher::new(),
        sniff: Sniff::default(),
        recognised: false,
    };
    let Some(start) = start else {
        return Ok(chunk);
    };
    let at = At::whole(file, start, end);
    // The first chunk decides the line terminator as one thread does; the others continue.
    let mut reader = if index == 0 {
        LineReader::new(at)
    } else {
        LineReader::continuing(at, BUFFER.take())
    };
    let mut recognised = 0u64;
    let mut parser = LineParser::default();
    while let Some(line) = reader.next_line()? {
        if start + line.offset >= end {
            break;
        }
        chunk.count += 1;
        if index == 0 {
            if chunk.sniff.check(&line, recognised == 0, name).is_err() {
                // Binary data: one thread reads it again and says so.
                return Ok(chunk);
            }
        } else if line.truncated {
            chunk.sniff.binary_lines += 1;
        }
        let lines = &mut chunk.lines;
        stitch_line_and_stamps(
            &mut chunk.stitcher,
            &line,
            line.number,
            &mut |bytes, stamps, number, u, t| {
                let parsed = ClassifiedLine::after_stamps(&mut parser, bytes, stamps, u, t, true);
                recognised += u64::from(parsed.recognised());
                Run::push(lines, parsed, number, 1);
            },
        );
        if index > 0 || recognised > 0 {
            // Known to be a log, or a chunk the first decided on: no binary-data check.
            chunk.count += pass_printouts(&mut reader, &chunk.stitcher, end - start);
            let indented = pass_indented_lines(&mut reader, &chunk.stitcher, end - start);
            if indented > 0 {
                let plain = ClassifiedLine::plain_indented();
                Run::push(&mut chunk.lines, plain, chunk.count + 1, indented);
                chunk.count += indented;
            }
        }
        if chunk.stitcher.is_idle() && chunk.idle.len() < MAX_IDLE_POINTS {
            chunk.idle.push(IdlePoint {
                lines: chunk.count,
                emitted: chunk.lines.len(),
                last_count: chunk.lines.last().map_or(0, |run| run.count),
                overflows: chunk.stitcher.overflows(),
            });
        }
    }
    chunk.read_to = start + reader.bytes_read();
    chunk.recognised = recognised > 0;
    BUFFER.set(reader.into_buffer());
    Ok(chunk)
}

/// The first line that starts in `begin..end` (after a newline at `begin - 1` or later).
fn first_line_start(file: &File, begin: u64, end: u64) -> io::Result<Option<u64>> {
    // The line before is usually short: read a little at a time.
    let mut buf = [0; PAST_END_READ];
    let mut pos = begin - 1;
    while pos + 1 < end {
        let want = buf.len().min((end - 1 - pos) as usize);
        let n = file.read_at(&mut buf[..want], pos)?;
        if n == 0 {
            return Ok(None);
        }
        if let Some(newline) = memchr::memchr(b'\n', &buf[..n]) {
            let start = pos + newline as u64 + 1;
            return Ok((start < end).then_some(start));
        }
        pos += n as u64;
    }
    Ok(None)
}

/// Bytes read at a time past a chunk's end, where only the rest of its last line is wanted.
const PAST_END_READ: usize = 4096;

/// A chunk's part of a file, read from an offset on without moving a shared file position:
/// up to `end` in whole reads, then a little at a time to finish the last line (a whole
/// block read past the end would copy up to a quarter of the next chunk for nothing).
struct At<'a> {
    file: &'a File,
    pos: u64,
    end: u64,
    /// Most bytes the next read takes (it doubles after each): small for the log's
    /// stitcher, which reads a chunk's first lines again only until it meets the chunk's
    /// (a few KiB of the event open at its edge), unbounded for reading a whole chunk.
    next_read: usize,
}

impl<'a> At<'a> {
    /// `file` from `pos`, a chunk ending at `end`, read whole.
    fn whole(file: &'a File, pos: u64, end: u64) -> Self {
        At {
            file,
            pos,
            end,
            next_read: usize::MAX,
        }
    }

    /// `file` from `pos`, a chunk ending at `end`, of which the first lines are wanted.
    fn first_lines(file: &'a File, pos: u64, end: u64) -> Self {
        At {
            next_read: PAST_END_READ,
            ..At::whole(file, pos, end)
        }
    }
}

impl Read for At<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = match self.end.checked_sub(self.pos) {
            Some(before_end) if before_end > 0 => buf.len().min(before_end as usize),
            _ => buf.len().min(PAST_END_READ),
        }
        .min(self.next_read);
        self.next_read = self.next_read.saturating_mul(2);
        let n = self.file.read_at(&mut buf[..want], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use pauselab_analysis::{Analyzer, Options};
    use proptest::prelude::*;

    use crate::input::Input;

    /// Lines besides the pieces of JDK 8 events (tests/data/event_pieces.txt): unified
    /// lines, whole events, printouts, lines that are not a log's.
    const OTHER_LINES: [&str; 8] = [
        "[0.058s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 12M->1M(256M) 1.626ms",
        "[0.058s][info][gc,phases] GC(0)   Pre Evacuate Collection Set: 0.0ms",
        "[0.058s][info][gc,phases] GC(0)   Post Evacuate Collection Set: 0.1ms",
        "[0.060s][info][safepoint] Safepoint \"G1CollectForAllocation\", Time since last: 27495667 ns, Reaching safepoint: 5127 ns, Cleanup: 6776 ns, At safepoint: 1756058 ns, Total: 1767961 ns",
        "2.193: [GC 2.193: [DefNew: 17024K->643K(19136K), 0.0084810 secs] 17024K->643K(260032K), 0.0085510 secs] [Times: user=0.00 sys=0.00, real=0.01 secs]",
        "Statistics for BinaryTreeDictionary:",
        "not a log line",
        "\0\0 0.5: [GC",
    ];

    fn pieces() -> Vec<&'static str> {
        let events = include_str!("../tests/data/event_pieces.txt").lines();
        OTHER_LINES.into_iter().chain(events).collect()
    }

    /// The report of one analysis of `path`, as `--json` prints it (or its error).
    fn report(path: &std::path::Path, threads: usize, chunk: u64) -> String {
        let kept = super::Kept::new(threads);
        report_keeping(path, (threads, &kept), chunk)
    }

    /// [`report`] with what earlier inputs left in `kept`.
    fn report_keeping(
        path: &std::path::Path,
        (threads, kept): (usize, &super::Kept),
        chunk: u64,
    ) -> String {
        let input = Input {
            name: "log".to_string(),
            path: Some(path.to_path_buf()),
            zip_entry: None,
        };
        let mut analyzer = Analyzer::new(Options::default());
        match crate::analyze_input_in(&input, &mut analyzer, (threads, kept), chunk, None) {
            Ok(_) => serde_json::to_string(&analyzer.finish()).unwrap(),
            Err(error) => error.to_string(),
        }
    }

    /// The threads of the next input read with what those of the input before left: their
    /// line buffers, vectors of lines and boxes of records, as many as chunks in flight.
    #[test]
    fn the_next_input_is_read_with_what_the_threads_before_left() {
        let mut log = Vec::new();
        for _ in 0..2000 {
            log.extend_from_slice(OTHER_LINES[0].as_bytes());
            log.push(b'\n');
            log.extend_from_slice(OTHER_LINES[3].as_bytes());
            log.push(b'\n');
        }
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(&log).unwrap();
        // One reading thread besides this one: which buffer it leaves does not depend on
        // which thread ends first.
        let (threads, chunk) = (2, 4096);
        let kept = super::Kept::new(threads);
        let buffers = |kept: &super::Kept| -> Vec<usize> {
            let buffers = super::lock(&kept.buffers);
            buffers.iter().map(|b| b.as_ptr() as usize).collect()
        };
        let first = report_keeping(file.path(), (threads, &kept), chunk);
        let before = buffers(&kept);
        // None when the other thread read no chunk (a busy host may not run it in time).
        assert!(before.len() <= 1, "{before:?}");
        let most = super::in_flight(threads);
        let spare = super::lock(&kept.spare).len();
        let pools = super::lock(&kept.spent_boxes).len();
        assert!(spare > 0 && spare <= most, "{spare}");
        assert!(pools > 0 && pools <= most, "{pools}");
        let second = report_keeping(file.path(), (threads, &kept), chunk);
        assert_eq!(first, second);
        if !before.is_empty() {
            assert_eq!(buffers(&kept), before, "the same buffer, none new");
        }
        assert!(super::lock(&kept.spare).len() <= most);
        assert!(super::lock(&kept.spent_boxes).len() <= most);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// A log cut into chunks anywhere and read by several threads reads as on one.
        #[test]
        fn chunks_cut_anywhere_read_as_one_thread_reads(
            // Pieces repeated: runs of lines that say the same reach the analysis as one.
            pieces in proptest::collection::vec((proptest::sample::select(pieces()), 1..4usize), 1..300),
            chunk in 16u64..600,
            threads in 2usize..4,
            unterminated in any::<bool>(),
        ) {
            let mut log = Vec::new();
            // The first chunk holds a recognised line, so the log is read in chunks.
            log.extend_from_slice(OTHER_LINES[0].as_bytes());
            for (piece, times) in &pieces {
                for _ in 0..*times {
                    log.push(b'\n');
                    log.extend_from_slice(piece.as_bytes());
                }
            }
            if !unterminated {
                log.push(b'\n');
            }
            let mut file = tempfile::NamedTempFile::new().unwrap();
            file.write_all(&log).unwrap();
            let one = report(file.path(), 1, super::CHUNK);
            let many = report(file.path(), threads, chunk);
            prop_assert_eq!(one, many);
        }
    }
}
