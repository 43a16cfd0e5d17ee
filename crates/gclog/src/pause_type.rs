//! The type of a stop-the-world GC pause, from its name in any collector's log: a short,
//! fixed vocabulary to group pauses by (metric labels, per-type maxima), where the names
//! themselves differ by collector and JDK (`Pause Young (Normal)`, `GC pause (young)`,
//! `PSYoungGen`, `DefNew` are all young collections).

/// What kind of pause a GC pause was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PauseType {
    /// A young collection (every collector's).
    Young,
    /// A G1 young collection that starts a concurrent marking cycle (`Concurrent Start`,
    /// JDK 8 `initial-mark`).
    ConcurrentStart,
    /// A G1 mixed collection (young and some old regions).
    Mixed,
    /// A full, stop-the-world collection of the whole heap.
    Full,
    /// The end of concurrent marking (G1, CMS).
    Remark,
    /// G1's cleanup pause after marking.
    Cleanup,
    /// CMS's initial mark (and unified logging's `Pause Initial Mark`).
    InitialMark,
    /// Shenandoah's pauses.
    InitMark,
    FinalMark,
    InitUpdateRefs,
    FinalUpdateRefs,
    /// Shenandoah gave up on concurrent collection and finished it stopped.
    Degenerated,
    /// ZGC's pauses (young and old generations of generational ZGC alike).
    MarkStart,
    MarkEnd,
    RelocateStart,
    /// A name none of the above fit.
    Other,
}

impl PauseType {
    /// Classifies a pause by the name the parser gives it.
    pub fn of(name: &str) -> PauseType {
        // Generational ZGC's generation prefix: `y: `, `Y: `, `O: `.
        let name = match name.as_bytes() {
            [b'y' | b'Y' | b'O', b':', b' ', ..] => &name[3..],
            _ => name,
        };
        if let Some(rest) = name.strip_prefix("Pause ") {
            return Self::of_unified(rest);
        }
        match name {
            "Full GC" => PauseType::Full,
            "GC remark" | "CMS Final Remark" => PauseType::Remark,
            "GC cleanup" => PauseType::Cleanup,
            "CMS Initial Mark" => PauseType::InitialMark,
            "DefNew" | "ParNew" | "PSYoungGen" | "ASParNew" | "GC" => PauseType::Young,
            n if n.starts_with("GC pause") => {
                if n.contains("initial-mark") {
                    PauseType::ConcurrentStart
                } else if n.contains("(mixed)") || n.contains("(partial)") {
                    // Early G1 (JDK 6, JDK 7 before 7u4) called its mixed collections partial.
                    PauseType::Mixed
                } else {
                    PauseType::Young
                }
            }
            n if n.starts_with("Full GC") => PauseType::Full,
            _ => PauseType::Other,
        }
    }

    /// A unified logging pause name after `Pause `.
    fn of_unified(rest: &str) -> PauseType {
        let base = rest.split(" (").next().unwrap_or(rest);
        match base {
            "Young" if rest.contains("(Concurrent Start)") || rest.contains("(Initial Mark)") => {
                PauseType::ConcurrentStart
            }
            "Young" if rest.contains("(Mixed)") => PauseType::Mixed,
            "Young" => PauseType::Young,
            "Mixed" => PauseType::Mixed,
            "Full" => PauseType::Full,
            "Remark" => PauseType::Remark,
            "Cleanup" => PauseType::Cleanup,
            "Initial Mark" => PauseType::InitialMark,
            "Init Mark" => PauseType::InitMark,
            "Final Mark" => PauseType::FinalMark,
            "Init Update Refs" => PauseType::InitUpdateRefs,
            "Final Update Refs" => PauseType::FinalUpdateRefs,
            "Degenerated GC" => PauseType::Degenerated,
            "Mark Start" => PauseType::MarkStart,
            "Mark End" => PauseType::MarkEnd,
            "Relocate Start" => PauseType::RelocateStart,
            _ => PauseType::Other,
        }
    }

    /// The type's name in reports and metric labels.
    pub fn as_str(self) -> &'static str {
        match self {
            PauseType::Young => "young",
            PauseType::ConcurrentStart => "concurrent_start",
            PauseType::Mixed => "mixed",
            PauseType::Full => "full",
            PauseType::Remark => "remark",
            PauseType::Cleanup => "cleanup",
            PauseType::InitialMark => "initial_mark",
            PauseType::InitMark => "init_mark",
            PauseType::FinalMark => "final_mark",
            PauseType::InitUpdateRefs => "init_update_refs",
            PauseType::FinalUpdateRefs => "final_update_refs",
            PauseType::Degenerated => "degenerated",
            PauseType::MarkStart => "mark_start",
            PauseType::MarkEnd => "mark_end",
            PauseType::RelocateStart => "relocate_start",
            PauseType::Other => "other",
        }
    }

    /// Young collections, G1's mixed and concurrent-start ones included.
    pub fn is_young(self) -> bool {
        matches!(
            self,
            PauseType::Young | PauseType::ConcurrentStart | PauseType::Mixed
        )
    }
}

/// VM operations that are garbage collections (names as in HotSpot's VM_Operation types).
pub fn is_gc_operation(op: &str) -> bool {
    op.contains("GC")
        || op.contains("Collect")
        || op.starts_with("G1")
        || op.starts_with("Shenandoah")
        || op.starts_with("ZMark")
        || op.starts_with("ZRelocate")
        || op.starts_with("CMS")
        || op.starts_with("Parallel")
        || op == "GC_HeapInspection"
}

#[cfg(test)]
mod tests {
    use super::PauseType::{self, *};
    use crate::parse::{parse_line, Record};

    /// Names as the parser makes them from real log lines of each collector.
    #[test]
    fn every_collectors_pause_lines_get_their_type() {
        let cases = [
            ("[1.0s][info][gc] GC(3) Pause Young (Normal) (G1 Evacuation Pause) 24M->4M(256M) 3.1ms", Young),
            ("[1.0s][info][gc] GC(4) Pause Young (Concurrent Start) (G1 Humongous Allocation) 24M->4M(256M) 3.1ms", ConcurrentStart),
            ("[1.0s][info][gc] GC(5) Pause Young (Mixed) (G1 Evacuation Pause) 24M->4M(256M) 3.1ms", Mixed),
            ("[1.0s][info][gc] GC(6) Pause Young (Prepare Mixed) (G1 Evacuation Pause) 24M->4M(256M) 3.1ms", Young),
            ("[1.0s][info][gc] GC(7) Pause Remark 30M->30M(256M) 1.2ms", Remark),
            ("[1.0s][info][gc] GC(7) Pause Cleanup 30M->30M(256M) 0.1ms", Cleanup),
            ("[1.0s][info][gc] GC(8) Pause Full (System.gc()) 30M->3M(256M) 12.0ms", Full),
            ("[1.0s][info][gc] GC(9) Pause Young (Allocation Failure) 30M->3M(256M) 2.0ms", Young),
            ("[1.0s][info][gc] GC(2) Pause Mark Start 0.011ms", MarkStart),
            ("[1.0s][info][gc] GC(2) y: Pause Mark End 0.011ms", MarkEnd),
            ("[1.0s][info][gc] GC(2) O: Pause Relocate Start 0.011ms", RelocateStart),
            ("[1.0s][info][gc] GC(2) Pause Init Mark 0.2ms", InitMark),
            ("[1.0s][info][gc] GC(2) Pause Final Mark 0.3ms", FinalMark),
            ("[1.0s][info][gc] GC(2) Pause Degenerated GC (Mark) 30M->3M(256M) 40.0ms", Degenerated),
            ("2021-01-01T00:00:00.000+0000: 1.000: [GC pause (G1 Evacuation Pause) (young), 0.0030000 secs]", Young),
            ("2021-01-01T00:00:00.000+0000: 1.000: [GC pause (G1 Evacuation Pause) (mixed), 0.0030000 secs]", Mixed),
            ("2021-01-01T00:00:00.000+0000: 1.000: [GC pause (G1 Humongous Allocation) (young) (initial-mark), 0.0030000 secs]", ConcurrentStart),
            // JDK 6 and 7 print G1 kinds without a cause.
            ("1.000: [GC pause (young), 0.0030000 secs]", Young),
            ("1.000: [GC pause (mixed), 0.0030000 secs]", Mixed),
            ("1.000: [GC pause (partial), 0.0030000 secs]", Mixed),
            ("1.000: [GC pause (young) (initial-mark), 0.0030000 secs]", ConcurrentStart),
            // CMS phases without -XX:+PrintGCDetails.
            ("1.000: [GC (CMS Initial Mark)  3K(8K), 0.0010000 secs]", InitialMark),
            ("1.000: [GC (CMS Final Remark)  3K(8K), 0.0010000 secs]", Remark),
            ("1.000: [GC (Allocation Failure) [PSYoungGen: 1K->1K(2K)] 3K->2K(8K), 0.0010000 secs]", Young),
            ("1.000: [Full GC (Ergonomics) [PSYoungGen: 1K->0K(2K)] 3K->2K(8K), 0.0100000 secs]", Full),
        ];
        for (line, expected) in cases {
            let Ok(parsed) = parse_line(line.as_bytes()) else {
                panic!("not parsed: {line}");
            };
            let Record::Pause(pause) = parsed.record else {
                panic!("not a pause: {line}");
            };
            assert_eq!(
                PauseType::of(&pause.name),
                expected,
                "{line} -> {}",
                pause.name
            );
        }
        assert_eq!(PauseType::of("something new").as_str(), "other");
    }
}
