//! A GC log read into a sink that takes records only (what `RecordSink` does with a text
//! log's lines by default): each record arrives stamped when its event ended, a JDK 8
//! pause's (stamped at its start in the log) too, and a last line without its newline is
//! warned about at its line.

use pauselab_gclog::analyze_inputs;
use pauselab_pause::{Record, RecordSink, Stamp};

/// The records and warnings fed, in order.
#[derive(Default)]
struct Records {
    records: Vec<(Stamp, Record, u64)>,
    warnings: Vec<(Option<u64>, String)>,
    lines: Option<u64>,
}

impl RecordSink for Records {
    fn begin_input(&mut self, _: &str) {}
    fn record(&mut self, end: Stamp, record: Record, ordinal: u64) {
        self.records.push((end, record, ordinal));
    }
    fn line_count(&mut self, lines: u64) {
        self.lines = Some(lines);
    }
    fn jvm_flags(&mut self, _: &str) {}
    fn close_pauses(&mut self) {}
    fn warn(&mut self, _: &str, line: Option<u64>, message: String) {
        self.warnings.push((line, message));
    }
    fn end_input(&mut self, _: u64) {}
}

#[test]
fn a_logs_records_reach_any_sink_stamped_at_their_end() {
    let log = "2.193: [GC 2.193: [DefNew: 17024K->643K(19136K), 0.0084810 secs] 17024K->643K(260032K), 0.0085510 secs] [Times: user=0.00 sys=0.00, real=0.01 secs]\n\
               not a log line\n\
               [3.058s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 12M->1M(256M) 1.626ms";
    let (_dir, input) = super::support::log_input(log);
    let mut sink = Records::default();
    analyze_inputs(&[input], &mut sink).unwrap();

    let pauses: Vec<(Option<u64>, u64, &str)> = sink
        .records
        .iter()
        .map(|(end, record, line)| match record {
            Record::Pause(pause) => (end.uptime_ns, *line, pause.name.as_ref()),
            other => panic!("not a pause: {other:?}"),
        })
        .collect();
    assert_eq!(
        pauses,
        [
            (Some(2_201_551_000), 1, "DefNew"),
            (Some(3_058_000_000), 3, "Pause Young (Normal)")
        ]
    );
    assert_eq!(sink.lines, Some(3));
    assert_eq!(sink.warnings.len(), 1, "{:?}", sink.warnings);
    assert_eq!(sink.warnings[0].0, Some(3));
    assert!(sink.warnings[0].1.contains("no newline"));
}
