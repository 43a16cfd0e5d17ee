//! Safepoint pauses from the GC log the lab asks every variant to write
//! (`-Xlog:...safepoint:file=gc.log:uptime,level,tags`), parsed by pauselab-gclog's line
//! parser: JDK 17+ `Safepoint "..."` lines and JDK 9-16 "Total time for which application
//! threads were stopped" lines alike.

use pauselab_gclog::parse::parse_line as parse_gc_line;
use pauselab_pause::Record;

/// One safepoint: start (seconds of JVM uptime) and total duration (ms).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Safepoint {
    pub uptime_s: f64,
    pub total_ms: f64,
}

/// The safepoint a GC log line reports, if it reports one.
pub fn parse(line: &[u8]) -> Option<Safepoint> {
    let parsed = parse_gc_line(line).ok()?;
    let Record::Safepoint(safepoint) = parsed.record else {
        return None;
    };
    // The line is written when the safepoint ends.
    let start_ns = parsed.stamp.minus(safepoint.total_ns).uptime_ns?;
    Some(Safepoint {
        uptime_s: start_ns as f64 / 1e9,
        total_ms: safepoint.total_ns as f64 / 1e6,
    })
}

#[cfg(test)]
fn parse_line(line: &str) -> Option<Safepoint> {
    parse(line.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jdk17_and_25_lines() {
        let l17 = "[2.345s][info][safepoint] Safepoint \"ParallelGCFailedAllocation\", Time since last: 1002 ns, Reaching safepoint: 3100 ns, At safepoint: 2500000000 ns, Total: 2500003100 ns";
        let s = parse_line(l17).unwrap();
        assert!((s.total_ms - 2500.0031).abs() < 1e-6);
        assert!((s.uptime_s - (2.345 - 2.5000031)).abs() < 1e-3 || s.uptime_s == 0.0);
        let l25 = "[10.000s][info][safepoint] Safepoint \"Cleanup\", Time since last: 1000000 ns, Reaching safepoint: 2000 ns, Cleanup: 1000 ns, At safepoint: 3000 ns, Leaving safepoint: 500 ns, Total: 6500 ns";
        let s = parse_line(l25).unwrap();
        assert!((s.total_ms - 0.0065).abs() < 1e-9);
        assert!((s.uptime_s - 10.0).abs() < 1e-3);
        assert!(parse_line("[1.0s][info][gc] GC(1) Pause Young 10M->2M(256M) 3.2ms").is_none());
        assert!(parse_line("[1.0s][info][safepoint] Safepoint \"X\", Total: garbage").is_none());
    }

    #[test]
    fn jdk11_lines() {
        let l11 = "[3.000s][info][safepoint    ] Total time for which application threads were stopped: 0.5001773 seconds, Stopping threads took: 0.0000417 seconds";
        let s = parse_line(l11).unwrap();
        assert!((s.total_ms - 500.1773).abs() < 1e-6);
        assert!((s.uptime_s - (3.0 - 0.5001773)).abs() < 1e-6);
        assert!(parse_line(
            "[0.720s][info][safepoint    ] Entering safepoint region: EnableBiasedLocking"
        )
        .is_none());
        assert!(parse_line("[0.720s][info][safepoint    ] Leaving safepoint region").is_none());
    }
}
