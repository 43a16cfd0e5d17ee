//! Lines classified without the analysis state, so that one thread can parse while another
//! analyses, and fed to a [`RecordSink`] in order.

use pauselab_pause::{recycle, LogLine, RecordSink};

use crate::parse::{Format, LeadingStamps, LineParser, Parsed, Record, Stamp, Unparsed};

/// Longest beginning of an unparsed line kept for the report.
const UNPARSED_TEXT: usize = 200;

/// One log line as the parser understood it, decided without the analysis state: lines can
/// be classified on one thread while another feeds them to [`LineFeed::apply`], in order.
pub(crate) struct ClassifiedLine {
    outcome: Outcome,
    /// The input's last line had no newline and ended this line's text.
    unterminated: Option<Unterminated>,
}

/// A line (or a JDK 8 event) that the input's last line, without its newline, ended.
#[derive(Clone, Copy)]
struct Unterminated {
    /// How many lines after the line's (or the event's) first that last line is.
    lines_on: u64,
    /// It parsed completely and was counted all the same.
    counted: bool,
}

/// How many lines ahead of the one analysed a record parsed on another thread is brought
/// into the cache (see [`ClassifiedLine::prefetch_record`]).
pub(crate) const PREFETCH_AHEAD: usize = 8;

enum Outcome {
    /// Nothing but NUL bytes.
    Nothing,
    /// A line of the log that carries no record (most lines): only its clock counts.
    Other { format: Format, stamp: Stamp },
    /// Boxed: few lines are records, and lines move between threads in batches.
    Record(Box<Parsed>),
    /// Not understood; the line's beginning, when asked to keep it, and whether it is
    /// a GC log's line all the same (a JDK 8 event that never closes, a pause whose
    /// numbers do not read): it counts for [`LineFeed::recognised`].
    Unparsed {
        text: Box<[u8]>,
        gc_line: bool,
        /// Part of a collection's event (see [`LogLine::Unparsed`]).
        partial_event: bool,
    },
}

impl ClassifiedLine {
    /// Parses one line with `parser` (the one the input's lines before were parsed with).
    /// `unterminated`: the input's last line has no newline and ends this text, so many
    /// lines after its first. `overlong`: it was cut at the line reader's limit (never
    /// trusted). `keep_text`: keep an unparsed line's beginning for the report (only the
    /// first one is shown, so callers stop asking once they have one).
    pub(crate) fn new(
        parser: &mut LineParser,
        bytes: &[u8],
        unterminated: Option<u64>,
        overlong: bool,
        keep_text: bool,
    ) -> Self {
        Self::after_stamps(parser, bytes, None, unterminated, overlong, keep_text)
    }

    /// [`ClassifiedLine::new`] of a line whose leading stamps may have been read already
    /// (`stamps`: the stitcher's, of an event's first line; see
    /// [`crate::stitch::Piece::Event`]).
    #[inline]
    pub(crate) fn after_stamps(
        parser: &mut LineParser,
        bytes: &[u8],
        stamps: Option<&LeadingStamps>,
        unterminated: Option<u64>,
        overlong: bool,
        keep_text: bool,
    ) -> Self {
        let ended = |counted| unterminated.map(|lines_on| Unterminated { lines_on, counted });
        let unparsed_as = |bytes: &[u8], why: Unparsed| Outcome::Unparsed {
            text: if keep_text {
                bytes[..bytes.len().min(UNPARSED_TEXT)].into()
            } else {
                Box::default()
            },
            // A log whose only event never closes (it was cut, or is being written) is a
            // GC log all the same, not "no GC log lines".
            gc_line: why != Unparsed::Unknown,
            partial_event: why == Unparsed::Incomplete,
        };
        let unparsed = |bytes: &[u8]| unparsed_as(bytes, Unparsed::Unknown);
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
        // Stamps read start with a digit: they are never behind NUL bytes.
        let result = match stamps {
            Some(stamps) => parser.parse_after_stamps(bytes, *stamps),
            None => parser.parse(bytes),
        };
        // Most lines carry no record: keep their format and stamp, looked at in place
        // (moving the whole `Parsed`, 280 bytes, out of the result first cost a copy per
        // line, a tenth of the time of reading a unified log).
        if let (
            Ok(Parsed {
                format,
                stamp,
                record: Record::Other,
            }),
            None,
        ) = (&result, unterminated)
        {
            let line = ClassifiedLine {
                outcome: Outcome::Other {
                    format: *format,
                    stamp: *stamp,
                },
                unterminated: None,
            };
            // A `Record::Other` owns nothing: no drop to run (its call, on every line,
            // cost 1 % of reading a unified log).
            std::mem::forget(result);
            return line;
        }
        match result {
            // A line without its newline may be cut anywhere: trust it only when it parsed
            // into a record with values (a pause line cut before its duration reads as the
            // pause's start line).
            Ok(p)
                if unterminated.is_some()
                    && matches!(p.record, Record::Other | Record::PauseStart { .. }) =>
            {
                ClassifiedLine {
                    outcome: unparsed(bytes),
                    unterminated: ended(false),
                }
            }
            Ok(p) => ClassifiedLine {
                outcome: match p.record {
                    Record::Other => Outcome::Other {
                        format: p.format,
                        stamp: p.stamp,
                    },
                    _ => Outcome::Record(recycle::boxed(p)),
                },
                unterminated: ended(true),
            },
            Err(why) => ClassifiedLine {
                outcome: unparsed_as(bytes, why),
                unterminated: ended(false),
            },
        }
    }

    /// The line was recognised as a line of a GC or safepoint log (it counts for
    /// [`LineFeed::recognised`]).
    /// What the parser makes of a line that [`crate::parse::is_plain_indented_line`]:
    /// a JDK 8 line without a record nor a stamp.
    pub(crate) fn plain_indented() -> Self {
        ClassifiedLine {
            outcome: Outcome::Other {
                format: Format::Jdk8,
                stamp: Stamp::default(),
            },
            unterminated: None,
        }
    }

    pub(crate) fn recognised(&self) -> bool {
        match &self.outcome {
            Outcome::Other { format, stamp } => !format.is_blank(stamp),
            Outcome::Record(_) => true,
            Outcome::Unparsed { gc_line, .. } => *gc_line,
            Outcome::Nothing => false,
        }
    }

    /// The format and stamp of a line that carries no record (and ended in a newline).
    pub(crate) fn without_record(&self) -> Option<(Format, Stamp)> {
        match (&self.outcome, self.unterminated) {
            (Outcome::Other { format, stamp }, None) => Some((*format, *stamp)),
            _ => None,
        }
    }

    /// Asks the processor to bring this line's record into the cache, when it has one: the
    /// thread that analyses a chunk's records did not parse them, and would otherwise wait
    /// for each box from the other core's cache in turn.
    #[inline(always)]
    pub(crate) fn prefetch_record(&self) {
        #[cfg(target_arch = "x86_64")]
        if let Outcome::Record(parsed) = &self.outcome {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let start: *const u8 = std::ptr::from_ref::<Parsed>(parsed).cast();
            for line in (0..std::mem::size_of::<Parsed>()).step_by(64) {
                // SAFETY: a prefetch reads nothing and cannot fault; the addresses are
                // within the box.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(line).cast()) };
            }
        }
    }

    /// An unparsed line whose beginning was kept.
    pub(crate) fn has_unparsed_text(&self) -> bool {
        matches!(&self.outcome, Outcome::Unparsed { text, .. } if !text.is_empty())
    }
}

/// Feeds one input's lines to a [`RecordSink`] (the analysis) in order, as
/// [`RecordSink::line`]s, warning about a last line without its newline, and counts the
/// lines recognised as a GC or safepoint log's.
pub struct LineFeed<'a> {
    sink: &'a mut dyn RecordSink,
    input: &'a str,
    recognised: u64,
    /// Keep an unparsed line's beginning: only the first one is shown.
    keep_text: bool,
    /// Lines without a record that share a format and stamp, held until a line that
    /// differs: handed to the sink as one ([`RecordSink::other_lines`]), not one by one.
    run: Option<OtherLines>,
    parser: LineParser,
}

/// The lines held back reach the sink however the feed ends (so the sink cannot be used
/// again before the feed is finished or dropped: the borrow checker sees to it).
impl Drop for LineFeed<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// `count` lines from number `number` on, without a record, of `format` and stamped `stamp`.
struct OtherLines {
    format: Format,
    stamp: Stamp,
    number: u64,
    count: u64,
}

impl<'a> LineFeed<'a> {
    /// Feeds the lines of input `input` (already begun with [`RecordSink::begin_input`])
    /// to `sink`.
    pub fn new(sink: &'a mut dyn RecordSink, input: &'a str) -> Self {
        LineFeed {
            sink,
            input,
            recognised: 0,
            keep_text: true,
            run: None,
            parser: LineParser::default(),
        }
    }

    /// Parses and feeds one line. `unterminated`: the input's last line has no newline
    /// and ends this text, so many lines after its first; `overlong`: it was cut at the
    /// line reader's limit (never trusted).
    pub fn line(&mut self, bytes: &[u8], number: u64, unterminated: Option<u64>, overlong: bool) {
        self.line_after_stamps(bytes, None, number, unterminated, overlong);
    }

    /// [`LineFeed::line`] of a line whose leading stamps may have been read already (see
    /// [`ClassifiedLine::after_stamps`]).
    #[inline]
    pub(crate) fn line_after_stamps(
        &mut self,
        bytes: &[u8],
        stamps: Option<&LeadingStamps>,
        number: u64,
        unterminated: Option<u64>,
        overlong: bool,
    ) {
        let line = ClassifiedLine::after_stamps(
            &mut self.parser,
            bytes,
            stamps,
            unterminated,
            overlong,
            self.keep_text,
        );
        self.apply(line, number);
    }

    /// Feeds one line already classified (see [`ClassifiedLine`]).
    pub(crate) fn apply(&mut self, line: ClassifiedLine, number: u64) {
        self.apply_run(line, number, 1);
    }

    /// Feeds `count` lines from number `number` on that `line` stands for: itself when
    /// `count` is 1, else lines without a record that share its format and stamp (see
    /// [`ClassifiedLine::without_record`]).
    pub(crate) fn apply_run(&mut self, line: ClassifiedLine, number: u64, count: u64) {
        if let Some((format, stamp)) = line.without_record() {
            match &mut self.run {
                Some(run)
                    if run.format == format
                        && run.stamp == stamp
                        && run.number + run.count == number =>
                {
                    run.count += count;
                }
                _ => {
                    self.flush();
                    self.run = Some(OtherLines {
                        format,
                        stamp,
                        number,
                        count,
                    });
                }
            }
            return;
        }
        self.flush();
        if let Some(ended) = line.unterminated {
            // A JDK 8 event is numbered by its first line: say which one the last ends.
            let what = if ended.lines_on == 0 {
                "it".to_string()
            } else {
                format!("the event from line {number} that it ends")
            };
            let message = if ended.counted {
                format!("the last line has no newline (the log was still being written); {what} parsed completely and was counted")
            } else {
                format!("the last line is cut off (no newline at the end): the log was still being written or was truncated; {what} was not counted")
            };
            self.sink
                .warn(self.input, Some(number + ended.lines_on), message);
        }
        // What `recognised` and `has_unparsed_text` say, told by the same match.
        let line = match line.outcome {
            Outcome::Nothing => LogLine::Nothing,
            Outcome::Other { format, stamp } => {
                self.recognised += u64::from(!format.is_blank(&stamp));
                LogLine::Other { format, stamp }
            }
            Outcome::Record(parsed) => {
                self.recognised += 1;
                LogLine::Record(parsed)
            }
            Outcome::Unparsed {
                ref text,
                gc_line,
                partial_event,
            } => {
                self.recognised += u64::from(gc_line);
                // JDK 9-16's stopped-time lines read without decorations (JDK 8 writes
                // them alike): the rest of such a log is not understood, and says why.
                if self.keep_text && crate::is_undecorated_unified(text) {
                    self.sink.warn(
                        self.input,
                        Some(number),
                        "unified logging without decorations (`-Xlog:...:none`): only the stopped-time lines of such a log are read, without their time; log with the default decorations, or at least `uptime`".to_string(),
                    );
                }
                self.keep_text &= text.is_empty();
                LogLine::Unparsed {
                    text,
                    partial_event,
                }
            }
        };
        self.sink.line(line, number);
    }

    /// Hands the lines held back to the sink.
    fn flush(&mut self) {
        if let Some(run) = self.run.take() {
            self.recognised += run.count * u64::from(!run.format.is_blank(&run.stamp));
            self.sink
                .other_lines(run.format, run.stamp, run.number, run.count);
        }
    }

    /// The sink the lines are fed to, every line fed so far handed to it.
    pub(crate) fn sink(&mut self) -> &mut dyn RecordSink {
        self.flush();
        self.sink
    }

    /// Hands every line fed so far to the sink; the lines that were recognised as a GC or
    /// safepoint log's.
    pub fn finish(mut self) -> u64 {
        self.flush();
        self.recognised
    }
}
