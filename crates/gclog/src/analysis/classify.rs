//! Lines classified without the analysis state, so that one thread can parse while another
//! analyses.

use crate::parse::{parse_line, Format, Parsed, Record, Stamp};

/// Longest beginning of an unparsed line kept for the report.
const UNPARSED_TEXT: usize = 200;

/// One log line as the parser understood it, decided without the analysis state: lines can
/// be classified on one thread while another feeds them to [`Analyzer::apply`], in order.
pub struct ClassifiedLine {
    pub(super) outcome: Outcome,
    /// The line had no newline at the end of the input: whether it was counted all the same.
    pub(super) unterminated: Option<bool>,
}

pub(super) enum Outcome {
    /// Nothing but NUL bytes.
    Nothing,
    /// A line of the log that carries no record (most lines): only its clock counts.
    Other { format: Format, stamp: Stamp },
    /// Boxed: few lines are records, and lines move between threads in batches.
    Record(Box<Parsed>),
    /// Not understood; the line's beginning, when asked to keep it.
    Unparsed(Box<[u8]>),
}

impl ClassifiedLine {
    /// Parses one line. `overlong`: it was cut at the line reader's limit (never trusted).
    /// `keep_text`: keep an unparsed line's beginning for the report (only the first one
    /// is shown, so callers stop asking once they have one).
    pub fn new(bytes: &[u8], unterminated: bool, overlong: bool, keep_text: bool) -> Self {
        let unparsed = |bytes: &[u8]| {
            Outcome::Unparsed(if keep_text {
                bytes[..bytes.len().min(UNPARSED_TEXT)].into()
            } else {
                Box::default()
            })
        };
        if overlong {
            return ClassifiedLine {
                outcome: unparsed(bytes),
                unterminated: None,
            };
        }
        // A file truncated while the JVM was writing it (logrotate copytruncate) starts
        // with NUL bytes; the text after them is still a log line.
        let bytes = if bytes.first() == Some(&0) {
            let skip = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
            if skip == bytes.len() {
                return ClassifiedLine {
                    outcome: Outcome::Nothing,
                    unterminated: None,
                };
            }
            &bytes[skip..]
        } else {
            bytes
        };
        match parse_line(bytes) {
            // A line without its newline may be cut anywhere: trust it only when it parsed
            // into a record with values (a pause line cut before its duration reads as the
            // pause's start line).
            Ok(p)
                if unterminated
                    && matches!(p.record, Record::Other | Record::PauseStart { .. }) =>
            {
                ClassifiedLine {
                    outcome: unparsed(bytes),
                    unterminated: Some(false),
                }
            }
            Ok(p) => ClassifiedLine {
                outcome: match p.record {
                    Record::Other => Outcome::Other {
                        format: p.format,
                        stamp: p.stamp,
                    },
                    _ => Outcome::Record(Box::new(p)),
                },
                unterminated: unterminated.then_some(true),
            },
            Err(_) => ClassifiedLine {
                outcome: unparsed(bytes),
                unterminated: unterminated.then_some(false),
            },
        }
    }

    /// The line was recognised as a line of a GC or safepoint log (it counts for
    /// [`Analyzer::recognised_lines`]).
    pub fn recognised(&self) -> bool {
        match &self.outcome {
            Outcome::Other { format, stamp } => !is_blank(*format, stamp, false),
            Outcome::Record(_) => true,
            Outcome::Nothing | Outcome::Unparsed(_) => false,
        }
    }

    /// An unparsed line whose beginning was kept.
    pub fn has_unparsed_text(&self) -> bool {
        matches!(&self.outcome, Outcome::Unparsed(text) if !text.is_empty())
    }
}

/// An empty JDK 8 line (no record, no stamp): parsed, but says nothing about the log's
/// format.
pub(super) fn is_blank(format: Format, stamp: &Stamp, record: bool) -> bool {
    !record && *stamp == Stamp::default() && format == Format::Jdk8
}
