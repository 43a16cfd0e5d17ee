//! GC and safepoint logs of HotSpot JVMs (JDK 8 to 25) into records, fed to any
//! [`RecordSink`] (the analysis, pauselab-analysis, is one). Streaming throughout: memory
//! does not grow with the length of the log.
//!
//! - [`lines`]: block reader handing out borrowed lines;
//! - [`stitch`]: joins the lines of a JDK 6-8 event the JVM spread over several lines;
//! - `reading`: reads an input on a thread of its own, sharing the parsing with the thread
//!   that feeds the sink;
//! - `chunks`: reads one large file with several threads, with the same result;
//! - [`parse`]: stateless line parser (JDK 8 PrintGCDetails and unified logging);
//! - `classify`: a line parsed without the sink's state, and [`LineFeed`], which feeds an
//!   input's lines to the sink in order;
//! - `jvms`: which inputs one JVM wrote ([`group_by_jvm`]), so JVMs are never merged;
//! - [`input`]: files, rotated sets, gzip, zip, stdin;
//! - [`follow`]: a log the JVM is still writing, read as it grows and through rotation.

mod chunks;
mod classify;
pub mod follow;
pub mod input;
mod jvms;
pub mod lines;
pub mod num;
pub mod parse;
mod reading;
mod scan;
pub mod stitch;

pub use classify::LineFeed;
pub use jvms::{ensure_one_jvm, group_by_jvm, jvm_groups, JvmInputs, JvmRead};

use std::io;

use pauselab_pause::RecordSink;
// The parser names pause types `crate::PauseType` (the type is the pause model's).
pub(crate) use pauselab_pause::PauseType;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}: no such file (nor a rotated set {0}.0, {0}.1, ...)")]
    NotFound(String),
    #[error("{0}: is a directory; give the log files in it, e.g. {0}/gc.log")]
    IsDirectory(String),
    #[error("{0}: {1}")]
    Io(String, #[source] io::Error),
    #[error("{0}: not a readable zip archive: {1}")]
    Zip(String, String),
    #[error("{file}: binary data at line {line}, not a GC log (is it compressed in a format other than gzip or zip?)")]
    Binary { file: String, line: u64 },
    #[error("{file}: no GC or safepoint log lines; line {line} reads: {text}{}", foreign_log_hint(.text))]
    NotAGcLog {
        file: String,
        line: u64,
        text: String,
    },
    #[error("the inputs come from {count} different JVMs ({why}): {groups}; give the files of one JVM (pauselab analyze reports each JVM on its own)")]
    SeveralJvms {
        count: usize,
        why: String,
        groups: String,
    },
    #[error("no input contains GC or safepoint log lines ({0})")]
    NothingToAnalyze(String),
    /// Some inputs could not be read; `read` others were analyzed.
    #[error("{}", join_errors(.failed))]
    InputsFailed { failed: Vec<Error>, read: usize },
}

/// What a first line that is not HotSpot's says about the log, for the error message.
fn foreign_log_hint(first_line: &str) -> &'static str {
    if first_line.starts_with("<?xml") || first_line.contains("<verbosegc") {
        " (an XML verbose GC log, as OpenJ9 and IBM J9 write; pauselab reads HotSpot's GC logs)"
    } else if is_undecorated_unified(first_line.as_bytes()) {
        UNDECORATED_HINT
    } else {
        ""
    }
}

/// Why a log of [`is_undecorated_unified`] lines cannot be read.
pub(crate) const UNDECORATED_HINT: &str = " (unified logging without decorations, \
    `-Xlog:...:none`: pauselab needs the time of each line; log with the default \
    decorations, or at least `uptime`)";

/// A line that unified logging (JDK 9-25) writes first, or on most lines, under `gc`,
/// `gc*` and `safepoint`, without its decorations.
pub(crate) fn is_undecorated_unified(line: &[u8]) -> bool {
    const STARTS: [&[u8]; 10] = [
        b"Using ",
        b"GC(",
        b"Safepoint \"",
        b"Version: ",
        b"Initializing The Z Garbage Collector",
        b"CardTable entry size: ",
        b"Min heap equals to max heap",
        b"Heap region size: ",
        b"Heap Region Size: ",
        b"Heuristics ergonomically sets",
    ];
    STARTS.iter().any(|s| line.starts_with(s))
}

fn join_errors(errors: &[Error]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Reads every input and feeds them to `sink` as one log (a rotated set, or several files of one
/// service), warning about empty inputs, with as many threads as the machine has cores.
/// An input that cannot be read or is not a GC log does not stop the others: the analysis
/// covers the readable ones and the result is [`Error::InputsFailed`] listing the others (a
/// single failed input is its own error).
pub fn analyze_inputs(inputs: &[input::Input], sink: &mut dyn RecordSink) -> Result<(), Error> {
    analyze_inputs_with(inputs, sink, default_threads())
}

/// The machine's cores (what `--threads` defaults to).
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// [`analyze_inputs`] with at most `threads` threads (at least one). The result is the
/// same whatever the number.
pub fn analyze_inputs_with(
    inputs: &[input::Input],
    sink: &mut dyn RecordSink,
    threads: usize,
) -> Result<(), Error> {
    let threads = threads.max(1);
    let mut empty = Vec::new();
    let mut failed = Vec::new();
    std::thread::scope(|scope| {
        let mut ahead = reading::ReadAhead::new(scope, inputs, threads);
        let kept = chunks::Kept::new(threads);
        for (index, input) in inputs.iter().enumerate() {
            let started = ahead.take(index);
            ahead.start_after(index);
            match analyze_input_in(input, sink, (threads, &kept), chunks::CHUNK, started) {
                Ok(Content::Lines) => {}
                Ok(Content::Empty) => empty.push(input.name.clone()),
                Err(error) => failed.push(error),
            }
        }
    });
    if failed.len() == 1 && inputs.len() == 1 {
        return Err(failed.remove(0));
    }
    if !failed.is_empty() {
        return Err(Error::InputsFailed {
            read: inputs.len() - failed.len() - empty.len(),
            failed,
        });
    }
    if !inputs.is_empty() && empty.len() == inputs.len() {
        return Err(Error::NothingToAnalyze(format!(
            "empty: {}",
            empty.join(", ")
        )));
    }
    Ok(())
}

/// What a readable input held.
enum Content {
    Lines,
    /// No lines, or only blank ones (warned about).
    Empty,
}

/// Reads one input into `sink`; a file of at least two `chunk`s is read in chunks by
/// `threads` threads, with what the inputs before left in `kept`. `started`: the input is
/// already being read on a thread of its own (see [`reading::ReadAhead`]), or could not be
/// opened.
fn analyze_input_in(
    input: &input::Input,
    sink: &mut dyn RecordSink,
    (threads, kept): (usize, &chunks::Kept),
    chunk: u64,
    started: Option<Result<reading::Reading<'_>, Error>>,
) -> Result<Content, Error> {
    let split = (threads > 1 && started.is_none())
        .then(|| input::open_splittable(input, 2 * chunk))
        .flatten();
    let mut summary = None;
    if split.is_some() {
        sink.begin_input(&input.name);
    }
    let mut feed = LineFeed::new(sink, &input.name);
    if let Some((file, size)) = &split {
        summary = chunks::read(file, *size, chunk, &input.name, (threads, kept), &mut feed)?;
    }
    let summary = match (summary, started) {
        (Some(summary), _) => summary,
        (None, Some(reading)) => {
            let reading = reading?;
            feed.sink().begin_input(&input.name);
            reading.analyse(&mut feed)?
        }
        (None, None) => {
            let reader = input::open_for_reading(input, threads)?;
            if split.is_none() {
                feed.sink().begin_input(&input.name);
            }
            read_sequentially(reader, &input.name, threads, &mut feed)?
        }
    };
    // Counted per input, from `begin_input` on.
    let recognised = feed.finish();
    let count = summary.lines;
    sink.line_count(count);
    if summary.overflows > 0 {
        sink.warn(
            &input.name,
            None,
            format!(
                "{} event(s) spread over more than {} KiB of lines were not joined (counted as unparsed)",
                summary.overflows,
                stitch::MAX_PENDING / 1024
            ),
        );
    }
    sink.end_input(summary.bytes);
    if count == 0 {
        sink.warn(&input.name, None, "empty file".to_string());
        return Ok(Content::Empty);
    }
    if recognised == 0 {
        if summary.binary_lines > 0 {
            return Err(Error::Binary {
                file: input.name.clone(),
                line: 1,
            });
        }
        if let Some((line, text)) = summary.first_text {
            return Err(Error::NotAGcLog {
                file: input.name.clone(),
                line,
                text,
            });
        }
        sink.warn(
            &input.name,
            None,
            "no log lines (only blank lines)".to_string(),
        );
        return Ok(Content::Empty);
    }
    Ok(Content::Lines)
}

/// Reads an input front to back: on this thread alone, or with a second one reading lines
/// while this one analyses them, in order (both parse).
fn read_sequentially(
    reader: input::Reader,
    name: &str,
    threads: usize,
    feed: &mut LineFeed<'_>,
) -> Result<reading::ReadSummary, Error> {
    if threads == 1 {
        return reading::read_lines(reader, name, reading::Destination::Here(feed));
    }
    std::thread::scope(|scope| reading::Reading::spawn(scope, reader, name).analyse(feed))
}
