//! The analysis as a [`RecordSink`]: what a source other than a GC log (a JFR recording,
//! read by pauselab-jfr) feeds it.

use pauselab_pause::{Record, RecordSink, Stamp};

use crate::Analyzer;

impl RecordSink for Analyzer<'_> {
    fn begin_input(&mut self, name: &str) {
        self.begin_file(name);
    }

    fn record(&mut self, end: Stamp, record: Record, ordinal: u64) {
        Analyzer::record(self, end, record, ordinal);
    }

    fn jvm_flags(&mut self, options: &str) {
        Analyzer::jvm_flags(self, options);
    }

    fn close_pauses(&mut self) {
        Analyzer::close_pauses(self);
    }

    fn warn(&mut self, input: &str, message: String) {
        Analyzer::warn(self, input, None, message);
    }

    fn end_input(&mut self, bytes: u64) {
        self.end_file(bytes);
    }
}
