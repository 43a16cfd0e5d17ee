//! The names and causes of pauses and the VM operations that HotSpot prints, kept as static
//! strings so that a parsed pause or safepoint holds no allocation of its own.
//!
//! A JDK 8 Parallel log holds a pause every 680 bytes. With its name and cause in `String`s,
//! each pause took two allocations on the thread that parsed it and two frees on whichever
//! thread dropped it, often another one. On the bench's 1 GB Parallel log, two threads took
//! 0.36 s with them and 0.33 s without (docs/analyze.md, "Pause names without allocation").
//! A text not in the tables (a future JDK's cause, a garbled line) is owned as before.

use std::borrow::Cow;
use std::sync::LazyLock;

/// HotSpot's GC causes (`GCCause::to_string` in `gc/shared/gcCause.cpp`, JDK 6 to 25),
/// VM operations, and the names of pauses in JDK 6-25 logs and recordings.
const KNOWN: &[&str] = &[
    // Causes.
    "Allocation Failure",
    "G1 Evacuation Pause",
    "Ergonomics",
    "Metadata GC Threshold",
    "System.gc()",
    "G1 Humongous Allocation",
    "GCLocker Initiated GC",
    "G1 Preventive Collection",
    "G1 Compaction Pause",
    "G1 Periodic Collection",
    "Metadata GC Clear Soft References",
    "Heap Inspection Initiated GC",
    "Heap Dump Initiated GC",
    "Diagnostic Command",
    "CMS Initial Mark",
    "CMS Final Remark",
    "CMS Concurrent Mark",
    "CMS Generation Full",
    "Tenured Generation Full",
    "Permanent Generation Full",
    "Old Generation Expanded On Last Scavenge",
    "Old Generation Too Full To Scavenge",
    "JvmtiEnv ForceGarbageCollection",
    "Update Allocation Context Stats",
    "CodeCache GC Threshold",
    "CodeCache GC Aggressive",
    "Allocation Failure During Evacuation",
    "Allocation Stall",
    "Allocation Rate",
    "Upgrade To Full GC",
    "Concurrent GC",
    "Stopping VM",
    "Proactive",
    "High Usage",
    "Warmup",
    "Timer",
    "No GC",
    "Full GC for -Xshare:dump",
    "WhiteBox Initiated Young GC",
    "WhiteBox Initiated Concurrent Mark",
    "WhiteBox Initiated Full GC",
    "Unknown GCCause",
    "unknown GCCause",
    // VM operations (`VM_OPS_DO` in `runtime/vmOperation.hpp`, JDK 8 to 25), which
    // safepoint lines name.
    "G1CollectForAllocation",
    "G1CollectFull",
    "G1PauseRemark",
    "G1PauseCleanup",
    "G1TryInitiateConcMark",
    "G1Concurrent",
    "CollectForMetadataAllocation",
    "CollectForCodeCacheAllocation",
    "ParallelGCFailedAllocation",
    "ParallelGCSystemGC",
    "ParallelCollectForAllocation",
    "ParallelGCCollect",
    "GenCollectForAllocation",
    "GenCollectFull",
    "GenCollectFullConcurrent",
    "SerialCollectForAllocation",
    "SerialGCCollect",
    "CMS_Initial_Mark",
    "CMS_Final_Remark",
    "ZMarkStart",
    "ZMarkEnd",
    "ZRelocateStart",
    "ZMarkStartYoung",
    "ZMarkStartYoungAndOld",
    "ZMarkEndYoung",
    "ZMarkEndOld",
    "ZRelocateStartYoung",
    "ZRelocateStartOld",
    "ShenandoahInitMark",
    "ShenandoahFinalMarkStartEvac",
    "ShenandoahInitUpdateRefs",
    "ShenandoahFinalUpdateRefs",
    "ShenandoahFinalRoots",
    "ShenandoahFullGC",
    "ShenandoahDegeneratedGC",
    "GC_HeapInspection",
    "HeapDumper",
    "HeapWalkOperation",
    "Cleanup",
    "ThreadDump",
    "PrintThreads",
    "FindDeadlocks",
    "ClassLoaderStatsOperation",
    "ClassLoaderHierarchyOperation",
    "RevokeBias",
    "BulkRevokeBias",
    "EnableBiasedLocking",
    "ICBufferFull",
    "HandshakeAllThreads",
    "HandshakeOneThread",
    "Deoptimize",
    "DeoptimizeFrame",
    "DeoptimizeAll",
    "ForceSafepoint",
    "ForceAsyncSafepoint",
    "RedefineClasses",
    "GetAllStackTraces",
    "GetThreadListStackTraces",
    "ChangeBreakpoints",
    "GetOwnedMonitorInfo",
    "GetCurrentContendedMonitor",
    "GetStackTrace",
    "GetFrameCount",
    "GetFrameLocation",
    "ChangeSingleStep",
    "SetFramePop",
    "JFRCheckpoint",
    "JFROldObject",
    "JFRSafepointClear",
    "JFRSafepointWrite",
    "ReportJavaOutOfMemory",
    "CleanClassLoaderDataMetaspaces",
    "RendezvousGCThreads",
    "PrintMetadata",
    "PrintClassHierarchy",
    "PrintCompileQueue",
    "PrintCodeList",
    "PrintCodeCache",
    "Verify",
    "Exit",
    "no vm operation",
    // Names of JDK 6-8 events.
    "GC",
    "Full GC",
    "GC pause",
    "GC remark",
    "GC cleanup",
    "CMS-initial-mark",
    "CMS-remark",
    "CMS Initial Mark or Remark",
    "GC pause (young)",
    "GC pause (mixed)",
    "GC pause (young) (initial-mark)",
    "GC pause (young) (to-space exhausted)",
    "GC pause (young) (to-space overflow)",
    "GC pause (mixed) (to-space exhausted)",
    "GC pause (young) (initial-mark) (to-space exhausted)",
    "GC pause (partial)",
    "ParNew",
    "ASParNew",
    "DefNew",
    "PSYoungGen",
    // Names of unified logs' pauses.
    "Pause Young (Normal)",
    "Pause Young (Concurrent Start)",
    "Pause Young (Prepare Mixed)",
    "Pause Young (Mixed)",
    "Pause Young (Initial Mark)",
    "Pause Young",
    "Pause Full",
    "Pause Remark",
    "Pause Cleanup",
    "Pause Initial Mark",
    "Pause Mixed",
    "Pause Mark Start",
    "Pause Mark End",
    "Pause Relocate Start",
    "Pause Mark Start (Major)",
    "Pause Mark End (Major)",
    "Pause Relocate Start (Major)",
    "Pause Mark Start (Minor)",
    "Pause Mark End (Minor)",
    "Pause Relocate Start (Minor)",
    "Pause Init Mark",
    "Pause Final Mark",
    "Pause Init Update Refs",
    "Pause Final Update Refs",
    "Pause Final Roots",
    "Pause Degenerated GC",
    "Pause Init Mark (unload classes)",
    "Pause Final Mark (unload classes)",
];

/// `text` as a static string when it is one of the names and causes HotSpot prints,
/// otherwise owned (invalid UTF-8 replaced).
pub fn known_or_owned(text: &[u8]) -> Cow<'static, str> {
    match known(text) {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(String::from_utf8_lossy(text).into_owned()),
    }
}

/// [`known_or_owned`] of a string already read.
pub fn known_or_owned_str(text: &str) -> Cow<'static, str> {
    match known(text.as_bytes()) {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(text.to_owned()),
    }
}

/// A name put together from pieces (`GC pause` and ` (young)`) in a buffer on the stack:
/// [`finish`](Self::finish) allocates only for a text that HotSpot does not print.
pub struct Assembled {
    bytes: [u8; 64],
    len: usize,
    /// The text once it outgrew `bytes` (empty until then).
    spilled: Vec<u8>,
}

impl Assembled {
    /// An empty text.
    #[inline]
    pub fn new() -> Self {
        Assembled {
            bytes: [0; 64],
            len: 0,
            spilled: Vec::new(),
        }
    }

    /// Adds `piece` at the end. Inlined: most pieces are constants, copied in one store.
    #[inline]
    pub fn push(&mut self, piece: &[u8]) {
        if self.spilled.is_empty() {
            if let Some(room) = self.bytes.get_mut(self.len..self.len + piece.len()) {
                room.copy_from_slice(piece);
                self.len += piece.len();
                return;
            }
            self.spilled.extend_from_slice(&self.bytes[..self.len]);
        }
        self.spilled.extend_from_slice(piece);
    }

    /// The text, as [`known_or_owned`] gives it.
    pub fn finish(self) -> Cow<'static, str> {
        if self.spilled.is_empty() {
            known_or_owned(&self.bytes[..self.len])
        } else {
            Cow::Owned(String::from_utf8_lossy(&self.spilled).into_owned())
        }
    }
}

impl Default for Assembled {
    fn default() -> Self {
        Self::new()
    }
}

/// `text` among the names and causes HotSpot prints: compared with the few of its length
/// (the empty text is none of them).
fn known(text: &[u8]) -> Option<&'static str> {
    static BY_LENGTH: LazyLock<Vec<Vec<&'static str>>> = LazyLock::new(|| {
        let longest = KNOWN.iter().map(|known| known.len()).max().unwrap_or(0);
        let mut by_length = vec![Vec::new(); longest + 1];
        for known in KNOWN {
            by_length[known.len()].push(*known);
        }
        by_length
    });
    // The first bytes compared first: a comparison of the whole calls `memcmp`.
    let first = *text.first()?;
    BY_LENGTH
        .get(text.len())?
        .iter()
        .find(|known| known.as_bytes()[0] == first && known.as_bytes() == text)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_text_is_not_allocated_and_another_is_kept_as_it_reads() {
        assert!(matches!(
            known_or_owned(b"Allocation Failure"),
            Cow::Borrowed("Allocation Failure")
        ));
        assert!(matches!(
            known_or_owned_str("Pause Young (Normal)"),
            Cow::Borrowed("Pause Young (Normal)")
        ));
        let other = known_or_owned(b"A cause of JDK 99");
        assert!(matches!(&other, Cow::Owned(text) if text == "A cause of JDK 99"));
        assert_eq!(known_or_owned(b"Allocation \xff"), "Allocation \u{fffd}");
        assert!(matches!(
            known_or_owned(b"Allocation Failur"),
            Cow::Owned(_)
        ));
    }

    #[test]
    fn an_assembled_text_is_its_pieces_put_together() {
        let mut name = Assembled::new();
        for piece in [&b"GC pause"[..], b" (", b"young", b")"] {
            name.push(piece);
        }
        assert!(matches!(name.finish(), Cow::Borrowed("GC pause (young)")));
        let mut long = Assembled::new();
        let pieces = ["Pause ", &"x".repeat(60), " (", "\u{e9}t\u{e9}", ")"];
        for piece in pieces {
            long.push(piece.as_bytes());
        }
        assert_eq!(long.finish(), pieces.concat());
        let mut exact = Assembled::new();
        exact.push(&[b'y'; 64]);
        exact.push(b"");
        assert_eq!(exact.finish(), "y".repeat(64));
    }

    #[test]
    fn no_text_is_listed_twice() {
        let mut sorted = KNOWN.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), KNOWN.len());
    }
}
