//! HdrHistogram interval logs: the files jHiccup, the hiccup agent and pauselab write, and
//! that Java's `HistogramLogProcessor` and `HistogramLogAnalyzer` read.
//!
//! A log is a few header comments followed by one line per interval:
//!
//! ```text
//! #[Histogram log format version 1.3]
//! #[StartTime: 1678178742.226 (seconds since epoch), Tue Mar 07 08:45:42 UTC 2023]
//! #[BaseTime: 1678178742.226 (seconds since epoch)]
//! "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//! Tag=safepoint,0.166,5.004,3.768,HISTFAAAAGd42pNpmSzMwMAQwAABTBDKT4GB0zST3...
//! ```
//!
//! [`IntervalLogReader`] turns such a file into [`Interval`]s, one at a time (a day of
//! one-second intervals does not fit in memory decoded), with timestamps resolved exactly as
//! Java's `HistogramLogReader` (HdrHistogram 2.2.2) resolves them:
//!
//! - with a `BaseTime` header, absolute start = timestamp + BaseTime;
//! - with only a `StartTime` header, timestamps more than a year below StartTime are taken as
//!   relative to it, others as absolute (seconds since the epoch);
//! - with neither, timestamps are absolute and the first one is the log's start.
//!
//! Offsets (what `--start`/`--end` select on, like `HistogramLogProcessor -start/-end`) are
//! seconds since the log's start: StartTime when present, else the first interval's absolute
//! start. Java takes the first *raw* timestamp as the start of a log that has BaseTime but no
//! StartTime, which makes its offsets meaningless there; this reader uses the first
//! interval's absolute start instead, and agrees with Java everywhere else.
//!
//! Like `HistogramLogProcessor`, the reader selects untagged intervals unless told otherwise,
//! skips intervals that start before the range and stops at the first one that starts after
//! it (logs are in time order). Unlike it, a malformed line is an error naming the file and
//! line, never a silently shortened result.
//!
//! [`IntervalLogWriter`] writes the V2 compressed format (`HISTFAAAA...`) with the headers
//! Java's tools expect.

use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

use crate::input::{self, LineRead};

/// The legend line every log carries after its headers.
pub const LEGEND: &str =
    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"";

/// The log format version this writer produces.
pub const FORMAT_VERSION: &str = "1.3";

/// Divisor applied to an interval's max in the text column when values are nanoseconds, so
/// the column reads in milliseconds (jHiccup and Java's `HistogramLogWriter` convention).
pub const NANOS_PER_MILLI: f64 = 1e6;

/// Longest line the reader accepts. Real interval lines are a few hundred bytes to a few KiB
/// (the payload of a dense 3-digit histogram); a longer one is not an interval log, and
/// reading it whole would let a file without line breaks take all memory.
pub const MAX_LINE_BYTES: usize = 4 << 20;

/// Java's heuristic: a timestamp more than a year below StartTime is relative to it.
const RELATIVE_TIMESTAMP_MARGIN_S: f64 = 365.0 * 24.0 * 3600.0;

/// One interval histogram of a log.
#[derive(Debug, Clone)]
pub struct Interval {
    /// `Tag=...` of the line, `None` for an untagged line.
    pub tag: Option<String>,
    /// Absolute start, seconds since the epoch (or since whatever origin the log's writer
    /// used when the log has no StartTime/BaseTime and relative timestamps).
    pub start_s: f64,
    /// Start in seconds since the log's start (see the module documentation).
    pub offset_s: f64,
    /// Interval length in seconds.
    pub length_s: f64,
    /// The `Interval_Max` column as written (usually ms); [`Interval::histogram`]'s max is
    /// the exact value.
    pub logged_max: f64,
    pub histogram: Histogram<u64>,
    /// 1-based line number in the log.
    pub line: usize,
}

/// Which tags a reader selects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum TagFilter {
    /// Untagged lines only (what `HistogramLogProcessor` does without `-tag`).
    #[default]
    Untagged,
    /// Lines with exactly this tag.
    Tag(String),
    /// Every line, whatever its tag.
    Any,
}

impl TagFilter {
    /// `None` selects untagged lines, `Some(tag)` that tag.
    pub fn from_option(tag: Option<&str>) -> TagFilter {
        match tag {
            Some(t) => TagFilter::Tag(t.to_string()),
            None => TagFilter::Untagged,
        }
    }

    pub fn matches(&self, tag: Option<&str>) -> bool {
        match self {
            TagFilter::Untagged => tag.is_none(),
            TagFilter::Tag(wanted) => tag == Some(wanted.as_str()),
            TagFilter::Any => true,
        }
    }
}

/// An error reading or writing an interval log. Display names the file and line.
#[derive(Debug, thiserror::Error)]
pub enum IntervalLogError {
    // The io error is part of the message, not a `source`: printing the chain would
    // repeat it.
    #[error("{source_name}: {error}")]
    Io {
        source_name: String,
        error: io::Error,
    },
    #[error("{source_name}:{line}: {message}")]
    Parse {
        source_name: String,
        line: usize,
        message: String,
    },
    #[error("invalid tag {tag:?}: a tag may not be empty or contain ',', spaces or line breaks")]
    InvalidTag { tag: String },
    #[error("cannot encode histogram: {0}")]
    Encode(String),
}

/// Reads an interval log one interval at a time. See the module documentation.
pub struct IntervalLogReader<R> {
    input: R,
    source_name: String,
    tag_filter: TagFilter,
    range_start_s: f64,
    range_end_s: f64,
    line_no: usize,
    line: String,
    start_time_s: Option<f64>,
    base_time_s: Option<f64>,
    /// Absolute start of the first interval (any tag), the log's start without StartTime.
    first_start_s: Option<f64>,
    /// Base added to raw timestamps, fixed at the first interval when no BaseTime was seen.
    effective_base_s: Option<f64>,
    tags_seen: Vec<Option<String>>,
    intervals_seen: usize,
    done: bool,
}

/// What [`IntervalLogReader::open`] reads from: a file, plain or gzip-compressed, or stdin.
pub type LogInput = Box<dyn BufRead>;

/// The name [`IntervalLogReader::open`] gives standard input (`-`).
pub const STDIN_NAME: &str = "<stdin>";

/// Whether a file (plain or gzip-compressed) starts like an interval log: a format header,
/// jHiccup's legend, or V2 histogram payloads within its first 4 KiB.
pub fn looks_like_interval_log(path: &Path) -> Result<bool, IntervalLogError> {
    let io_error = |error| IntervalLogError::Io {
        source_name: path.display().to_string(),
        error,
    };
    let mut input = open_input(path, false).map_err(io_error)?;
    let mut head = Vec::with_capacity(4096);
    // A compressed file cut short still has a readable beginning.
    let _ = io::Read::take(&mut input, 4096).read_to_end(&mut head);
    let head = String::from_utf8_lossy(&head);
    Ok(head.contains("#[Histogram log format")
        || head.contains("\"StartTimestamp\"")
        || head.contains(",HISTFAAA")
        || head.contains(",HISTIgAA"))
}

/// A file (or stdin), decompressed when it starts with the gzip magic. Devices and named
/// pipes without a writer are refused (see [`crate::input::open_file`]).
fn open_input(path: &Path, is_stdin: bool) -> io::Result<LogInput> {
    let raw: Box<dyn Read> = if is_stdin {
        Box::new(io::stdin())
    } else {
        Box::new(input::open_file(path)?)
    };
    Ok(Box::new(BufReader::new(input::gunzip_if_compressed(raw)?)))
}

impl IntervalLogReader<LogInput> {
    /// Opens a log file (`-` for standard input); gzip-compressed input (`.hlog.gz`, or
    /// any input starting with the gzip magic) is decompressed on the fly. Errors name
    /// the path.
    pub fn open(path: &Path) -> Result<Self, IntervalLogError> {
        let is_stdin = path == Path::new("-");
        let name = if is_stdin {
            STDIN_NAME.to_string()
        } else {
            path.display().to_string()
        };
        let input = open_input(path, is_stdin).map_err(|error| IntervalLogError::Io {
            source_name: name.clone(),
            error,
        })?;
        Ok(IntervalLogReader::new(input, &name))
    }
}

impl<R: BufRead> IntervalLogReader<R> {
    /// Reads from any buffered input; `source_name` is used in error messages.
    pub fn new(input: R, source_name: &str) -> Self {
        IntervalLogReader {
            input,
            source_name: source_name.to_string(),
            tag_filter: TagFilter::Untagged,
            range_start_s: 0.0,
            range_end_s: f64::MAX,
            line_no: 0,
            line: String::new(),
            start_time_s: None,
            base_time_s: None,
            first_start_s: None,
            effective_base_s: None,
            tags_seen: Vec::new(),
            intervals_seen: 0,
            done: false,
        }
    }

    /// Selects intervals by tag (default: untagged only).
    pub fn with_tag(mut self, filter: TagFilter) -> Self {
        self.tag_filter = filter;
        self
    }

    /// Selects intervals whose offset (seconds since the log's start) lies in
    /// `[start_s, end_s]`, like `HistogramLogProcessor -start -end`.
    pub fn with_range(mut self, start_s: Option<f64>, end_s: Option<f64>) -> Self {
        self.range_start_s = start_s.unwrap_or(0.0);
        self.range_end_s = end_s.unwrap_or(f64::MAX);
        self
    }

    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    /// The log's StartTime header (latest seen so far), seconds since the epoch.
    pub fn start_time_header_s(&self) -> Option<f64> {
        self.start_time_s
    }

    /// The log's BaseTime header (latest seen so far), seconds since the epoch.
    pub fn base_time_header_s(&self) -> Option<f64> {
        self.base_time_s
    }

    /// What offsets are measured from: StartTime, else the first interval's absolute start.
    /// `None` before the first interval of a log without StartTime.
    pub fn start_s(&self) -> Option<f64> {
        self.start_time_s.or(self.first_start_s)
    }

    /// The start as Java's `HistogramLogReader.getStartTimeSec()` reports it: StartTime, else
    /// the first interval's raw timestamp (0.0 before any).
    pub fn java_start_time_s(&self) -> f64 {
        match (self.start_time_s, self.base_time_s) {
            (Some(s), _) => s,
            (None, Some(base)) => self.first_start_s.map(|f| f - base).unwrap_or(0.0),
            (None, None) => self.first_start_s.unwrap_or(0.0),
        }
    }

    /// Every distinct tag seen on interval lines so far (`None` = untagged), in order of
    /// first appearance.
    pub fn tags_seen(&self) -> &[Option<String>] {
        &self.tags_seen
    }

    /// Interval lines read so far, whatever their tag or time.
    pub fn intervals_seen(&self) -> usize {
        self.intervals_seen
    }

    fn parse_error(&self, message: impl Into<String>) -> IntervalLogError {
        IntervalLogError::Parse {
            source_name: self.source_name.clone(),
            line: self.line_no,
            message: message.into(),
        }
    }

    /// Reads the next selected interval, `Ok(None)` at the end of the log or of the range.
    pub fn next_interval(&mut self) -> Result<Option<Interval>, IntervalLogError> {
        while !self.done {
            let mut bytes = std::mem::take(&mut self.line).into_bytes();
            bytes.clear();
            let read = input::read_line_limited(&mut self.input, &mut bytes, MAX_LINE_BYTES);
            self.line_no += 1;
            let failure = match read {
                Ok(LineRead::End) => {
                    self.done = true;
                    return Ok(None);
                }
                Ok(LineRead::Line) => None,
                Ok(LineRead::TooLong) => Some(self.parse_error(format!(
                    "a line longer than {} MiB: not an interval log",
                    MAX_LINE_BYTES >> 20
                ))),
                Err(error) => Some(IntervalLogError::Io {
                    source_name: self.source_name.clone(),
                    error,
                }),
            };
            if let Some(error) = failure {
                self.done = true;
                return Err(error);
            }
            let line = match String::from_utf8(bytes) {
                Ok(line) => line,
                Err(_) => {
                    self.done = true;
                    return Err(self.parse_error("not text (is this an interval log?)"));
                }
            };
            let complete = line.ends_with('\n');
            let result = self.parse_line(line.trim_end_matches(['\n', '\r']), complete);
            self.line = line;
            match result {
                Ok(Some(interval)) => return Ok(Some(interval)),
                Ok(None) => continue,
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            }
        }
        Ok(None)
    }

    fn parse_line(
        &mut self,
        line: &str,
        complete: bool,
    ) -> Result<Option<Interval>, IntervalLogError> {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            return Ok(None);
        }
        if let Some(comment) = trimmed.strip_prefix('#') {
            if let Some(rest) = comment.strip_prefix("[StartTime:") {
                self.start_time_s = Some(self.header_seconds(rest, "StartTime")?);
            } else if let Some(rest) = comment.strip_prefix("[BaseTime:") {
                self.base_time_s = Some(self.header_seconds(rest, "BaseTime")?);
            }
            return Ok(None);
        }
        if trimmed.starts_with("\"StartTimestamp\"") {
            return Ok(None);
        }
        self.parse_interval(trimmed, complete)
    }

    fn header_seconds(&self, rest: &str, name: &str) -> Result<f64, IntervalLogError> {
        rest.split_whitespace()
            .next()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| s.is_finite())
            .ok_or_else(|| self.parse_error(format!("{name} header without a number of seconds")))
    }

    fn parse_interval(
        &mut self,
        line: &str,
        complete: bool,
    ) -> Result<Option<Interval>, IntervalLogError> {
        let truncated_hint = if complete {
            ""
        } else {
            " (the last line is cut short: is the log still being written?)"
        };
        let mut fields = line.split(',').map(str::trim);
        let mut first = fields.next().unwrap_or("");
        let tag = match first.strip_prefix("Tag=") {
            Some(t) => {
                first = fields.next().unwrap_or("");
                Some(t.to_string())
            }
            None => None,
        };
        let number = |text: &str, what: &str| -> Result<f64, IntervalLogError> {
            text.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| {
                    self.parse_error(format!(
                        "expected {what} (a number of seconds), found {:?}: not an interval line{truncated_hint}",
                        shorten(text)
                    ))
                })
        };
        let timestamp = number(first, "the interval start")?;
        let length_s = number(fields.next().unwrap_or(""), "the interval length")?;
        let logged_max = number(fields.next().unwrap_or(""), "the interval max")?;
        let payload = fields.next().unwrap_or("");
        if payload.is_empty() {
            return Err(
                self.parse_error(format!("interval line without a histogram{truncated_hint}"))
            );
        }

        self.intervals_seen += 1;
        if !self.tags_seen.contains(&tag) {
            self.tags_seen.push(tag.clone());
        }
        // As HistogramLogReader: the base is fixed by the first interval of any tag.
        let base = match (self.base_time_s, self.effective_base_s) {
            (Some(base), _) => base,
            (None, Some(base)) => base,
            (None, None) => {
                let base = match self.start_time_s {
                    Some(start) if timestamp < start - RELATIVE_TIMESTAMP_MARGIN_S => start,
                    _ => 0.0,
                };
                self.effective_base_s = Some(base);
                base
            }
        };
        let start_s = timestamp + base;
        if self.first_start_s.is_none() {
            self.first_start_s = Some(start_s);
        }
        let offset_s = start_s - self.start_s().unwrap_or(start_s);
        if offset_s < self.range_start_s {
            return Ok(None);
        }
        if offset_s > self.range_end_s {
            self.done = true;
            return Ok(None);
        }
        if !self.tag_filter.matches(tag.as_deref()) {
            return Ok(None);
        }
        let histogram = decode_histogram(payload).map_err(|why| {
            self.parse_error(format!(
                "cannot decode the histogram: {why}{truncated_hint}"
            ))
        })?;
        Ok(Some(Interval {
            tag,
            start_s,
            offset_s,
            length_s,
            logged_max,
            histogram,
            line: self.line_no,
        }))
    }
}

impl<R: BufRead> Iterator for IntervalLogReader<R> {
    type Item = Result<Interval, IntervalLogError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_interval().transpose()
    }
}

fn shorten(text: &str) -> String {
    if text.chars().count() > 40 {
        let head: String = text.chars().take(40).collect();
        format!("{head}...")
    } else {
        text.to_string()
    }
}

/// V2 histogram cookies (HdrHistogram's encoding, with the word size bits Java writes).
const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9304 | 0x10;
const DOUBLE_HISTOGRAM_COOKIE: [u8; 4] = [0x1c, 0x84, 0x93, 0x15];
/// Bytes of a V2 header before the counts: cookie, payload length, normalizing offset,
/// significant digits, lowest and highest value, integer-to-double ratio.
const V2_HEADER_BYTES: usize = 40;
/// A count is a zig-zag LEB128 varint of at most 9 bytes.
const MAX_VARINT_BYTES: usize = 9;

/// Decodes one base64 V2 (compressed or not) histogram as found in a log line.
///
/// The declared lengths are checked before anything is allocated: a payload cannot hold more
/// counts than its histogram has buckets, so the decompressed size is capped by what its own
/// header (lowest, highest value, digits) allows, and a declared length beyond the bytes
/// present is an error, not an allocation.
pub fn decode_histogram(payload: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(payload.trim())
        .map_err(|e| format!("bad base64 ({e})"))?;
    if bytes.starts_with(&DOUBLE_HISTOGRAM_COOKIE) {
        return Err("DoubleHistogram intervals are not supported".to_string());
    }
    let be32 = |b: &[u8], at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
    };
    let plain = match be32(&bytes, 0) {
        Some(V2_COMPRESSED_COOKIE) => {
            let declared = be32(&bytes, 4).ok_or("truncated header")? as usize;
            let compressed = &bytes[8..];
            if declared > compressed.len() {
                return Err(format!(
                    "the payload claims {declared} compressed bytes, {} are present",
                    compressed.len()
                ));
            }
            inflate_v2(&compressed[..declared])?
        }
        Some(V2_COOKIE) => bytes,
        Some(_) => return Err("not a V2 histogram (unknown cookie)".to_string()),
        None => return Err("truncated header".to_string()),
    };
    let declared = be32(&plain, 4).ok_or("truncated header")? as usize;
    let present = plain.len().saturating_sub(V2_HEADER_BYTES);
    if declared > present {
        return Err(format!(
            "the payload claims {declared} bytes of counts, {present} are present"
        ));
    }
    Deserializer::new()
        .deserialize::<u64, _>(&mut io::Cursor::new(&plain))
        .map_err(|e| e.to_string())
}

/// Inflates a compressed V2 payload, stopping as soon as it is longer than the histogram its
/// header describes can be.
fn inflate_v2(compressed: &[u8]) -> Result<Vec<u8>, String> {
    let mut inflater = flate2::read::ZlibDecoder::new(compressed);
    let mut plain = Vec::with_capacity(V2_HEADER_BYTES);
    (&mut inflater)
        .take(V2_HEADER_BYTES as u64)
        .read_to_end(&mut plain)
        .map_err(|e| format!("cannot inflate ({e})"))?;
    if plain.len() < V2_HEADER_BYTES {
        return Err("truncated header".to_string());
    }
    let be = |at: usize, len: usize| {
        plain[at..at + len]
            .iter()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
    };
    let (digits, low, high) = (be(12, 4), be(16, 8), be(24, 8));
    let counts = counts_len(low, high, digits).ok_or_else(|| {
        format!("invalid histogram bounds (lowest {low}, highest {high}, {digits} digits)")
    })?;
    let limit = V2_HEADER_BYTES + counts * MAX_VARINT_BYTES;
    (&mut inflater)
        .take((limit - V2_HEADER_BYTES + 1) as u64)
        .read_to_end(&mut plain)
        .map_err(|e| format!("cannot inflate ({e})"))?;
    if plain.len() > limit {
        return Err(format!(
            "the payload inflates to more than the {limit} bytes its histogram can hold"
        ));
    }
    Ok(plain)
}

/// Length of the counts array of a histogram with these bounds, as HdrHistogram sizes it;
/// `None` for bounds it refuses.
fn counts_len(low: u64, high: u64, digits: u64) -> Option<usize> {
    if low == 0 || low > u64::MAX / 2 || high < 2 * low || digits > 5 {
        return None;
    }
    // Unit resolution up to 2 * 10^digits, in a power-of-two number of sub-buckets.
    let largest_unit_value = 2 * 10u64.pow(digits as u32);
    let sub_bucket_magnitude = u64::BITS - (largest_unit_value - 1).leading_zeros();
    let unit_magnitude = u64::BITS - 1 - low.leading_zeros();
    if unit_magnitude + sub_bucket_magnitude > 63 {
        return None;
    }
    let mut smallest_untrackable = 1u64 << (unit_magnitude + sub_bucket_magnitude);
    let mut buckets = 1usize;
    while smallest_untrackable <= high {
        if smallest_untrackable > u64::MAX / 2 {
            buckets += 1;
            break;
        }
        smallest_untrackable <<= 1;
        buckets += 1;
    }
    Some((buckets + 1) << (sub_bucket_magnitude - 1))
}

/// Encodes a histogram as V2 compressed base64, the form of a log line's last field.
pub fn encode_histogram(histogram: &Histogram<u64>) -> Result<String, IntervalLogError> {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(histogram, &mut bytes)
        .map_err(|e| IntervalLogError::Encode(format!("{e:?}")))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(&bytes))
}

fn valid_tag(tag: &str) -> bool {
    !tag.is_empty() && !tag.contains([',', ' ', '\t', '\r', '\n'])
}

/// Writes an interval log in the V2 compressed format that Java's `HistogramLogProcessor`
/// and `HistogramLogAnalyzer` read.
///
/// Timestamps are written relative to the start time given at creation, which is recorded
/// as both StartTime and BaseTime, so every reader (Java's included) resolves them the same.
///
/// ```
/// use hdrhistogram::Histogram;
/// use pauselab_pause::interval_log::{IntervalLogReader, IntervalLogWriter, TagFilter};
///
/// let mut out = Vec::new();
/// let mut writer = IntervalLogWriter::new(&mut out, 1_700_000_000.0, Some("safepoint")).unwrap();
/// let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
/// h.record(12_000_000).unwrap(); // 12 ms in ns
/// writer.write_interval(0.0, 5.0, &h).unwrap();
/// writer.finish().unwrap();
///
/// let reader = IntervalLogReader::new(&out[..], "mem").with_tag(TagFilter::Any);
/// let intervals: Vec<_> = reader.collect::<Result<_, _>>().unwrap();
/// assert_eq!(intervals[0].start_s, 1_700_000_000.0);
/// assert_eq!(intervals[0].histogram.max(), h.max());
/// ```
pub struct IntervalLogWriter<W: Write> {
    out: W,
    tag: Option<String>,
    max_value_divisor: f64,
}

impl<W: Write> IntervalLogWriter<W> {
    /// Starts a log: writes the headers with `start_time_epoch_s` as StartTime and BaseTime.
    /// Values are taken to be nanoseconds (the max column is written in ms); see
    /// [`IntervalLogWriter::with_options`] for other units and extra header comments.
    pub fn new(
        out: W,
        start_time_epoch_s: f64,
        tag: Option<&str>,
    ) -> Result<Self, IntervalLogError> {
        Self::with_options(out, start_time_epoch_s, tag, NANOS_PER_MILLI, &[])
    }

    /// Like [`IntervalLogWriter::new`] with the max-column divisor and header comments
    /// (e.g. `"Logged with pauselab 0.1.0"`, written as `#[...]`) chosen by the caller.
    pub fn with_options(
        mut out: W,
        start_time_epoch_s: f64,
        tag: Option<&str>,
        max_value_divisor: f64,
        comments: &[&str],
    ) -> Result<Self, IntervalLogError> {
        if let Some(t) = tag {
            if !valid_tag(t) {
                return Err(IntervalLogError::InvalidTag { tag: t.to_string() });
            }
        }
        let io_err = |error| IntervalLogError::Io {
            source_name: "interval log".to_string(),
            error,
        };
        let mut header = String::new();
        for comment in comments {
            for line in comment.lines() {
                header.push_str(&format!("#[{line}]\n"));
            }
        }
        header.push_str(&format!(
            "#[Histogram log format version {FORMAT_VERSION}]\n"
        ));
        header.push_str(&format!(
            "#[StartTime: {start_time_epoch_s:.3} (seconds since epoch), {}]\n",
            java_date_utc(start_time_epoch_s)
        ));
        header.push_str(&format!(
            "#[BaseTime: {start_time_epoch_s:.3} (seconds since epoch)]\n"
        ));
        header.push_str(LEGEND);
        header.push('\n');
        out.write_all(header.as_bytes()).map_err(io_err)?;
        Ok(IntervalLogWriter {
            out,
            tag: tag.map(str::to_string),
            max_value_divisor,
        })
    }

    /// Appends one interval: `start_offset_s` seconds after the log's start time, lasting
    /// `length_s` seconds.
    pub fn write_interval(
        &mut self,
        start_offset_s: f64,
        length_s: f64,
        histogram: &Histogram<u64>,
    ) -> Result<(), IntervalLogError> {
        let payload = encode_histogram(histogram)?;
        let mut line = String::with_capacity(payload.len() + 48);
        if let Some(tag) = &self.tag {
            line.push_str("Tag=");
            line.push_str(tag);
            line.push(',');
        }
        line.push_str(&format!(
            "{:.3},{:.3},{:.3},{payload}\n",
            start_offset_s,
            length_s,
            histogram.max() as f64 / self.max_value_divisor
        ));
        self.out
            .write_all(line.as_bytes())
            .map_err(|error| IntervalLogError::Io {
                source_name: "interval log".to_string(),
                error,
            })
    }

    /// Flushes and returns the underlying writer.
    pub fn finish(mut self) -> Result<W, IntervalLogError> {
        self.out.flush().map_err(|error| IntervalLogError::Io {
            source_name: "interval log".to_string(),
            error,
        })?;
        Ok(self.out)
    }
}

/// Reads every selected interval of a file into memory (convenient for short logs; use
/// [`IntervalLogReader`] to stream long ones).
pub fn read_intervals(
    path: &Path,
    tag: TagFilter,
    start_s: Option<f64>,
    end_s: Option<f64>,
) -> Result<Vec<Interval>, IntervalLogError> {
    IntervalLogReader::open(path)?
        .with_tag(tag)
        .with_range(start_s, end_s)
        .collect()
}

/// `seconds` since the epoch as Java's `Date.toString()` prints it in UTC:
/// `Tue Mar 07 08:45:42 UTC 2023`.
pub fn java_date_utc(seconds: f64) -> String {
    let millis = (seconds * 1000.0) as i64; // Java truncates to long millis as well
    let t = crate::civil::UtcTime::from_epoch_ms(millis);
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} UTC {}",
        t.weekday_abbrev(),
        t.month_abbrev(),
        t.day,
        t.hour,
        t.minute,
        t.second,
        t.year
    )
}

impl fmt::Display for TagFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TagFilter::Untagged => write!(f, "untagged"),
            TagFilter::Tag(t) => write!(f, "tag {t}"),
            TagFilter::Any => write!(f, "any tag"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(values: &[u64]) -> Histogram<u64> {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 2).unwrap();
        for v in values {
            h.record(*v).unwrap();
        }
        h
    }

    fn read_all(text: &str, tag: TagFilter) -> Result<Vec<Interval>, IntervalLogError> {
        IntervalLogReader::new(text.as_bytes(), "test.hlog")
            .with_tag(tag)
            .collect()
    }

    fn line(tag: Option<&str>, ts: f64, h: &Histogram<u64>) -> String {
        let prefix = tag.map(|t| format!("Tag={t},")).unwrap_or_default();
        format!(
            "{prefix}{ts:.3},1.000,{:.3},{}\n",
            h.max() as f64 / 1e6,
            encode_histogram(h).unwrap()
        )
    }

    #[test]
    fn writer_output_reads_back_with_absolute_times() {
        let mut out = Vec::new();
        let mut w = IntervalLogWriter::new(&mut out, 1_678_178_742.226, Some("gc")).unwrap();
        let a = hist(&[1_000_000, 2_000_000]);
        let b = hist(&[50_000_000]);
        w.write_interval(0.0, 1.0, &a).unwrap();
        w.write_interval(1.0, 1.0, &b).unwrap();
        w.finish().unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("#[Histogram log format version 1.3]\n#[StartTime: 1678178742.226 (seconds since epoch), Tue Mar 07 08:45:42 UTC 2023]\n#[BaseTime: 1678178742.226 (seconds since epoch)]\n"));
        assert!(text.contains(LEGEND));
        assert!(
            text.contains("Tag=gc,1.000,1.000,50.070,HISTFAAAA"),
            "{text}"
        );

        let got = read_all(&text, TagFilter::Tag("gc".into())).unwrap();
        assert_eq!(got.len(), 2);
        assert!((got[1].start_s - 1_678_178_743.226).abs() < 1e-6);
        assert!((got[1].offset_s - 1.0).abs() < 1e-6);
        assert_eq!(got[0].histogram, a);
        assert_eq!(got[1].histogram, b);
        assert_eq!(got[1].line, 6);
        // Untagged by default, as HistogramLogProcessor: nothing here.
        assert!(read_all(&text, TagFilter::Untagged).unwrap().is_empty());
    }

    #[test]
    fn start_time_only_relative_and_absolute_timestamps() {
        let h = hist(&[1_000]);
        let start = 1_600_000_000.0;
        let relative = format!(
            "#[StartTime: {start:.3} (seconds since epoch), x]\n{}",
            line(None, 2.5, &h)
        );
        let got = read_all(&relative, TagFilter::Untagged).unwrap();
        assert!((got[0].start_s - (start + 2.5)).abs() < 1e-6);
        assert!((got[0].offset_s - 2.5).abs() < 1e-6);

        let absolute = format!(
            "#[StartTime: {start:.3} (seconds since epoch), x]\n{}",
            line(None, start + 7.0, &h)
        );
        let got = read_all(&absolute, TagFilter::Untagged).unwrap();
        assert!((got[0].start_s - (start + 7.0)).abs() < 1e-6);
        assert!((got[0].offset_s - 7.0).abs() < 1e-6);
    }

    #[test]
    fn neither_header_first_interval_is_the_start() {
        let h = hist(&[1_000]);
        let text = format!("{}{}", line(None, 100.0, &h), line(None, 105.0, &h));
        let got = read_all(&text, TagFilter::Untagged).unwrap();
        assert_eq!(got[0].start_s, 100.0);
        assert_eq!(got[1].offset_s, 5.0);
    }

    #[test]
    fn base_time_is_added_to_timestamps() {
        let h = hist(&[1_000]);
        let text = format!(
            "#[BaseTime: 1000.000 (seconds since epoch)]\n{}{}",
            line(None, 10.0, &h),
            line(None, 15.0, &h)
        );
        let got = read_all(&text, TagFilter::Untagged).unwrap();
        assert_eq!(got[0].start_s, 1010.0);
        assert_eq!(got[1].offset_s, 5.0);
    }

    #[test]
    fn range_skips_before_and_stops_after() {
        let h = hist(&[1_000]);
        let text: String = (0..10).map(|i| line(None, f64::from(i), &h)).collect();
        let got: Vec<_> = IntervalLogReader::new(text.as_bytes(), "t")
            .with_range(Some(2.0), Some(5.0))
            .collect::<Result<_, _>>()
            .unwrap();
        let offsets: Vec<f64> = got.iter().map(|i| i.offset_s).collect();
        assert_eq!(offsets, vec![2.0, 3.0, 4.0, 5.0]);
    }

    #[test]
    fn tags_are_filtered_and_listed() {
        let h = hist(&[1_000]);
        let text = format!(
            "{}{}{}",
            line(Some("a"), 0.0, &h),
            line(None, 1.0, &h),
            line(Some("b"), 2.0, &h)
        );
        let mut reader =
            IntervalLogReader::new(text.as_bytes(), "t").with_tag(TagFilter::Tag("b".into()));
        let got: Vec<_> = reader.by_ref().collect::<Result<_, _>>().unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].tag.as_deref(), Some("b"));
        assert_eq!(
            reader.tags_seen(),
            &[Some("a".to_string()), None, Some("b".to_string())]
        );
        assert_eq!(read_all(&text, TagFilter::Any).unwrap().len(), 3);
    }

    #[test]
    fn garbage_names_file_and_line() {
        let h = hist(&[1_000]);
        let text = format!(
            "#[Histogram log format version 1.3]\n{}hello world\n",
            line(None, 0.0, &h)
        );
        let err = read_all(&text, TagFilter::Untagged)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("test.hlog:3: expected the interval start"),
            "{err}"
        );

        let bad_payload = "0.000,1.000,1.000,HISTFAAAAnotbase64!\n";
        let err = read_all(bad_payload, TagFilter::Untagged)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("test.hlog:1: cannot decode the histogram"),
            "{err}"
        );
    }

    #[test]
    fn truncated_last_line_is_an_error_not_a_partial_result() {
        let h = hist(&[1_000, 5_000_000]);
        let full = format!("{}{}", line(None, 0.0, &h), line(None, 1.0, &h));
        let cut = &full[..full.len() - 10];
        let err = read_all(cut, TagFilter::Untagged).unwrap_err().to_string();
        assert!(
            err.contains("test.hlog:2:") && err.contains("cut short"),
            "{err}"
        );
    }

    #[test]
    fn binary_input_is_rejected() {
        let err = IntervalLogReader::new(&[0xff_u8, 0xfe, 0x00, b'\n'][..], "x.bin")
            .collect::<Result<Vec<_>, _>>()
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("x.bin:1:"), "{err}");
    }

    /// A real compressed payload with its inner V2 header rewritten by `edit`.
    fn tampered_payload(edit: impl Fn(&mut Vec<u8>)) -> String {
        use base64::Engine as _;
        let payload = encode_histogram(&hist(&[1_000, 2_000_000])).unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(payload)
            .unwrap();
        let mut inner = Vec::new();
        flate2::read::ZlibDecoder::new(&bytes[8..])
            .read_to_end(&mut inner)
            .unwrap();
        edit(&mut inner);
        let mut deflater =
            flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        deflater.write_all(&inner).unwrap();
        let compressed = deflater.finish().unwrap();
        let mut out = bytes[..4].to_vec();
        out.extend((compressed.len() as u32).to_be_bytes());
        out.extend(compressed);
        base64::engine::general_purpose::STANDARD.encode(out)
    }

    #[test]
    fn declared_lengths_beyond_the_data_are_errors_not_allocations() {
        let claims_4_gib = tampered_payload(|inner| inner[4..8].copy_from_slice(&[0xff; 4]));
        let err = decode_histogram(&claims_4_gib).unwrap_err();
        assert!(err.contains("claims 4294967295 bytes of counts"), "{err}");

        // 16 MiB of zero counts for a histogram with a few thousand buckets.
        let inflates_too_far = tampered_payload(|inner| {
            let counts = 16 << 20;
            inner[4..8].copy_from_slice(&(counts as u32).to_be_bytes());
            inner.truncate(V2_HEADER_BYTES);
            inner.resize(V2_HEADER_BYTES + counts, 0);
        });
        let err = decode_histogram(&inflates_too_far).unwrap_err();
        let buckets = hist(&[]).distinct_values();
        let limit = V2_HEADER_BYTES + buckets * MAX_VARINT_BYTES;
        assert!(
            err.contains(&format!("more than the {limit} bytes")),
            "{err}"
        );

        let line = format!("0.000,1.000,1.000,{claims_4_gib}\n");
        let err = read_all(&line, TagFilter::Untagged)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("test.hlog:1: cannot decode the histogram"),
            "{err}"
        );
        assert!(!err.contains('\n'), "{err}");
    }

    #[test]
    fn counts_length_matches_hdrhistogram() {
        for (low, high, digits) in [
            (1, 3_600_000_000_000, 3),
            (1000, 1 << 40, 2),
            (1, u64::MAX, 5),
            (7, 15, 0),
        ] {
            let h = Histogram::<u64>::new_with_bounds(low, high, digits as u8).unwrap();
            assert_eq!(
                counts_len(low, high, digits),
                Some(h.distinct_values()),
                "{low} {high} {digits}"
            );
        }
        assert_eq!(counts_len(0, 10, 3), None);
        assert_eq!(counts_len(1, 10, 6), None);
    }

    #[test]
    fn a_line_without_end_is_cut_at_the_limit() {
        let endless = io::Read::take(io::repeat(b'1'), 64 << 20);
        let err = IntervalLogReader::new(BufReader::new(endless), "zeros")
            .collect::<Result<Vec<_>, _>>()
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "zeros:1: a line longer than 4 MiB: not an interval log"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Any byte of a real payload changed: decoding ends in a histogram or an error,
        /// never a panic or an allocation the payload cannot justify.
        #[test]
        fn flipped_payload_bytes_decode_or_fail(at in 0usize..200, value in proptest::prelude::any::<u8>()) {
            use base64::Engine as _;
            let payload = encode_histogram(&hist(&[1_000, 2_000_000, 90_000_000])).unwrap();
            let mut bytes = base64::engine::general_purpose::STANDARD.decode(payload).unwrap();
            let at = at % bytes.len();
            bytes[at] = value;
            let _ = decode_histogram(&base64::engine::general_purpose::STANDARD.encode(&bytes));
            let _ = decode_histogram(&tampered_payload(|inner| {
                let at = at % inner.len();
                inner[at] = value;
            }));
        }
    }

    #[test]
    fn invalid_tags_are_refused() {
        assert!(IntervalLogWriter::new(Vec::new(), 0.0, Some("a,b")).is_err());
        assert!(IntervalLogWriter::new(Vec::new(), 0.0, Some("")).is_err());
    }

    #[test]
    fn java_date_matches_known_values() {
        assert_eq!(
            java_date_utc(1_678_178_742.226),
            "Tue Mar 07 08:45:42 UTC 2023"
        );
        assert_eq!(java_date_utc(0.0), "Thu Jan 01 00:00:00 UTC 1970");
        assert_eq!(java_date_utc(951_782_400.0), "Tue Feb 29 00:00:00 UTC 2000");
    }
}
