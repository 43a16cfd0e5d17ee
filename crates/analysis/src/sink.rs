//! The analysis as a [`RecordSink`]: what every source feeds it (a GC log's lines, read by
//! pauselab-gclog; a JFR recording's events, read by pauselab-jfr).

use pauselab_pause::{Format, LogLine, Record, RecordSink, Stamp};

use crate::Analyzer;

impl RecordSink for Analyzer<'_> {
    fn begin_input(&mut self, name: &str) {
        self.begin_file(name);
    }

    fn record(&mut self, end: Stamp, record: Record, ordinal: u64) {
        Analyzer::record(self, end, record, ordinal);
    }

    fn line(&mut self, line: LogLine<'_>, number: u64) {
        Analyzer::line(self, line, number);
    }

    fn other_lines(&mut self, format: Format, stamp: Stamp, number: u64, count: u64) {
        Analyzer::other_lines(self, format, stamp, number, count);
    }

    fn line_count(&mut self, lines: u64) {
        self.set_line_count(lines);
    }

    fn jvm_flags(&mut self, options: &str) {
        Analyzer::jvm_flags(self, options);
    }

    fn close_pauses(&mut self) {
        Analyzer::close_pauses(self);
    }

    fn warn(&mut self, input: &str, line: Option<u64>, message: String) {
        Analyzer::warn(self, input, line, message);
    }

    fn end_input(&mut self, bytes: u64) {
        self.end_file(bytes);
    }
}
