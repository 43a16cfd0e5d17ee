//! GC and safepoint logs of HotSpot JVMs (JDK 8 to 25) into pause events, summaries and a
//! diagnosis. Streaming throughout: memory does not grow with the length of the log.
//!
//! - [`lines`]: block reader handing out borrowed lines;
//! - [`stitch`]: joins the lines of a JDK 6-8 event the JVM spread over several lines;
//! - [`parse`]: stateless line parser (JDK 8 PrintGCDetails and unified logging);
//! - [`analysis`]: pairs pauses with CPU times and safepoints, keeps histograms;
//! - [`findings`]: diagnosis rules with evidence, causes and fixes (OS causes and the
//!   collector's health);
//! - `health`: worst windows of pause time, heap and allocation rate, ZGC stalls;
//! - `jvms`: which inputs one JVM wrote ([`group_by_jvm`]), so JVMs are never merged;
//! - [`input`]: files, rotated sets, gzip, zip, stdin.

pub mod analysis;
pub mod condition;
pub mod findings;
mod health;
pub mod hlog;
pub mod input;
mod jvms;
pub mod lines;
pub mod num;
pub mod parse;
pub mod render;
pub mod stitch;

pub use analysis::{Analyzer, HeapSample, Options, PauseSink, Report};
pub use health::{MemorySection, StallSection, WindowShare};
pub use jvms::{ensure_one_jvm, group_by_jvm, JvmInputs};

use std::io;
use std::sync::mpsc;

use analysis::ClassifiedLine;

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
    #[error("{file}: no GC or safepoint log lines; line {line} reads: {text}")]
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

fn join_errors(errors: &[Error]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Reads every input and analyzes them as one log (a rotated set, or several files of one
/// service), warning about empty inputs. An input that cannot be read or is not a GC log
/// does not stop the others: the analysis covers the readable ones and the result is
/// [`Error::InputsFailed`] listing the others (a single failed input is its own error).
pub fn analyze_inputs(inputs: &[input::Input], analyzer: &mut Analyzer<'_>) -> Result<(), Error> {
    let mut empty = Vec::new();
    let mut failed = Vec::new();
    for input in inputs {
        match analyze_input(input, analyzer) {
            Ok(Content::Lines) => {}
            Ok(Content::Empty) => empty.push(input.name.clone()),
            Err(error) => failed.push(error),
        }
    }
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

/// Lines handed from the reading thread to the analysis at a time.
const BATCH_LINES: usize = 2048;
/// Batches in flight: bounds how far (and with how much memory) reading runs ahead.
const BATCHES_IN_FLIGHT: usize = 4;

/// What reading one input found besides its lines.
struct ReadSummary {
    lines: u64,
    bytes: u64,
    binary_lines: u64,
    /// The first line with text, for the "not a GC log" error.
    first_text: Option<(u64, String)>,
    /// Events too long to join (see [`stitch::MAX_PENDING`]).
    overflows: u64,
}

fn analyze_input(input: &input::Input, analyzer: &mut Analyzer<'_>) -> Result<Content, Error> {
    let reader = input::open(input)?;
    analyzer.begin_file(&input.name);
    let recognised_before = analyzer.recognised_lines();
    // One thread reads, joins and parses the lines while this one analyses them, in order:
    // the two halves cost about the same, so a big log takes about half the time.
    let summary = std::thread::scope(|scope| {
        let (send, received) = mpsc::sync_channel(BATCHES_IN_FLIGHT);
        let reading = scope.spawn(|| read_lines(reader, &input.name, send));
        for batch in received {
            for (number, line) in batch {
                analyzer.apply(line, number);
            }
        }
        reading
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })?;
    let count = summary.lines;
    analyzer.set_line_count(count);
    if summary.overflows > 0 {
        analyzer.warn(
            &input.name,
            None,
            format!(
                "{} event(s) spread over more than {} KiB of lines were not joined (counted as unparsed)",
                summary.overflows,
                stitch::MAX_PENDING / 1024
            ),
        );
    }
    analyzer.end_file(summary.bytes);
    if count == 0 {
        analyzer.warn(&input.name, None, "empty file".to_string());
        return Ok(Content::Empty);
    }
    if analyzer.recognised_lines() == recognised_before {
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
        analyzer.warn(
            &input.name,
            None,
            "no log lines (only blank lines)".to_string(),
        );
        return Ok(Content::Empty);
    }
    Ok(Content::Lines)
}

/// Reads one input's lines, joins the lines of JDK 8 events and classifies them, sending them
/// on in batches. Stops at the first I/O error, or when the input turns out to be binary data.
fn read_lines(
    reader: input::Reader,
    name: &str,
    send: mpsc::SyncSender<Vec<(u64, ClassifiedLine)>>,
) -> Result<ReadSummary, Error> {
    let mut lines = lines::LineReader::new(reader);
    let mut stitcher = stitch::Stitcher::new();
    let mut first_text: Option<(u64, String)> = None;
    let mut binary_lines = 0u64;
    let mut count = 0u64;
    let mut batch = Batch::new();
    loop {
        let line = lines
            .next_line()
            .map_err(|e| Error::Io(name.to_string(), e))?;
        let Some(line) = line else { break };
        count += 1;
        // Binary data matters only while nothing of this input was recognised (see
        // `analyze_input`): once it is known to be a log, skip the check, it costs as much
        // as parsing.
        let unknown = batch.recognised == 0;
        let looks_binary = line.truncated || (unknown && is_binary(line.bytes));
        if looks_binary {
            binary_lines += 1;
            if binary_lines >= 3 && unknown {
                return Err(Error::Binary {
                    file: name.to_string(),
                    line: line.number,
                });
            }
        }
        if first_text.is_none() && !line.bytes.is_empty() {
            first_text = Some((line.number, printable(line.bytes)));
        }
        let (unterminated, truncated) = (line.unterminated, line.truncated);
        let mut feed = |bytes: &[u8], number: u64| {
            batch.push(bytes, number, unterminated, truncated);
        };
        if truncated {
            stitcher.finish(&mut feed);
            feed(line.bytes, line.number);
        } else {
            stitcher.push(line.bytes, line.number, &mut feed);
        }
        // A closed channel means the analysis stopped (it panicked; that is what gets
        // reported).
        if batch.lines.len() >= BATCH_LINES && send.send(batch.take()).is_err() {
            break;
        }
    }
    stitcher.finish(&mut |bytes, number| batch.push(bytes, number, false, false));
    // An error here means the analysis stopped; its panic is what gets reported.
    let _ = send.send(batch.take());
    Ok(ReadSummary {
        lines: count,
        bytes: lines.bytes_read(),
        binary_lines,
        first_text,
        overflows: stitcher.overflows(),
    })
}

/// Classified lines on their way to the analysis, and what the reading side needs to know of
/// them.
struct Batch {
    lines: Vec<(u64, ClassifiedLine)>,
    /// Lines of this input recognised so far.
    recognised: u64,
    /// Only the first unparsed line is shown: keep the text of one.
    keep_text: bool,
}

impl Batch {
    fn new() -> Self {
        Batch {
            lines: Vec::with_capacity(BATCH_LINES),
            recognised: 0,
            keep_text: true,
        }
    }

    fn push(&mut self, bytes: &[u8], number: u64, unterminated: bool, truncated: bool) {
        let line = ClassifiedLine::new(bytes, unterminated, truncated, self.keep_text);
        self.recognised += u64::from(line.recognised());
        self.keep_text &= !line.has_unparsed_text();
        self.lines.push((number, line));
    }

    fn take(&mut self) -> Vec<(u64, ClassifiedLine)> {
        std::mem::replace(&mut self.lines, Vec::with_capacity(BATCH_LINES))
    }
}

/// A line with control bytes other than tab, or invalid UTF-8 in most of it.
fn is_binary(line: &[u8]) -> bool {
    let control = line
        .iter()
        .filter(|&&b| (b < 0x20 && b != b'\t' && b != 0) || b == 0x7f)
        .count();
    let nul_inside = line.iter().skip_while(|&&b| b == 0).any(|&b| b == 0);
    control * 10 > line.len().max(1) || nul_inside || std::str::from_utf8(line).is_err()
}

fn printable(line: &[u8]) -> String {
    String::from_utf8_lossy(&line[..line.len().min(120)])
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}
