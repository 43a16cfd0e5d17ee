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

    /// Whether `PauseType::of(name)` is [`PauseType::Full`], without reading the groups:
    /// the analysis asks this of every pause, and a full collection's name starts so.
    pub fn is_full(name: &str) -> bool {
        // Byte patterns: most names (`ParNew`, `Pause Young`) differ within a few bytes.
        let name = match name.as_bytes() {
            [b'y' | b'Y' | b'O', b':', b' ', rest @ ..] => rest,
            name => name,
        };
        match name {
            // The base name ends before the first group that a space precedes.
            [b'P', b'a', b'u', b's', b'e', b' ', b'F', b'u', b'l', b'l', rest @ ..] => {
                matches!(rest, [] | [b' ', b'(', ..])
            }
            [b'F', b'u', b'l', b'l', b' ', b'G', b'C', ..] => true,
            _ => false,
        }
    }

    /// A unified logging pause name after `Pause `.
    fn of_unified(rest: &str) -> PauseType {
        // Looked at byte by byte where a group opens: `str::split` and `str::contains` build
        // a searcher each time, and this runs several times for every pause.
        let text = rest.as_bytes();
        let opens = || (0..text.len()).filter(|&at| text[at] == b'(');
        let has_group = |group: &[u8]| opens().any(|at| text[at..].starts_with(group));
        let base_end = opens()
            .find(|&at| at > 0 && text[at - 1] == b' ')
            .map_or(text.len(), |at| at - 1);
        match &rest[..base_end] {
            "Young" if has_group(b"(Concurrent Start)") || has_group(b"(Initial Mark)") => {
                PauseType::ConcurrentStart
            }
            "Young" if has_group(b"(Mixed)") => PauseType::Mixed,
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
/// The prefixes first: asked for every safepoint, the two searches cost 250 instructions
/// a line of a log of safepoints, most of them a collector's (`G1CollectForAllocation`).
pub fn is_gc_operation(op: &str) -> bool {
    op.starts_with("G1")
        || op.starts_with("Shenandoah")
        || op.starts_with("ZMark")
        || op.starts_with("ZRelocate")
        || op.starts_with("CMS")
        || op.starts_with("Parallel")
        || op.contains("GC")
        || op.contains("Collect")
}

#[cfg(test)]
mod tests {
    use super::PauseType;

    /// The base name and groups of a unified pause name found with `str`'s searchers: what
    /// the byte-by-byte reading must agree with.
    fn of_unified_searched(rest: &str) -> Option<PauseType> {
        let base = rest.split(" (").next().unwrap_or(rest);
        match base {
            "Young" if rest.contains("(Concurrent Start)") || rest.contains("(Initial Mark)") => {
                Some(PauseType::ConcurrentStart)
            }
            "Young" if rest.contains("(Mixed)") => Some(PauseType::Mixed),
            "Young" => Some(PauseType::Young),
            _ => None,
        }
    }

    proptest::proptest! {
        /// A name is full exactly when its type is, whatever precedes or follows `Full`.
        #[test]
        fn full_names_are_told_as_their_type_tells_them(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "Pause ", "Full", "Full GC", " GC", " (", "(", ")", " ", "Y: ", "O: ", "y: ",
                "Young", "System.gc()", "G1 Compaction Pause", "x", "é",
            ]), 0..7),
        ) {
            let name = pieces.concat();
            proptest::prop_assert_eq!(
                PauseType::is_full(&name),
                PauseType::of(&name) == PauseType::Full,
                "{}", name
            );
        }

        /// Names of every shape (groups anywhere, spaces before them or not, text that is
        /// not ASCII) read as the searchers read them.
        #[test]
        fn unified_names_read_as_searched_for(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "Young", "Mixed", " (", "(", ")", "Concurrent Start", "Initial Mark", "Normal",
                "(Mixed)", " ", "é", "G1 Evacuation Pause",
            ]), 0..8),
        ) {
            let rest = pieces.concat();
            if let Some(expected) = of_unified_searched(&rest) {
                proptest::prop_assert_eq!(PauseType::of_unified(&rest), expected, "{}", rest);
            } else {
                let base = rest.split(" (").next().unwrap_or(&rest).to_string();
                proptest::prop_assert_eq!(PauseType::of_unified(&rest), PauseType::of_unified(&base));
            }
        }
    }
}
