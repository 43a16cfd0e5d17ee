//! The names and causes of pauses and the VM operations that HotSpot prints, kept as static
//! strings so that a parsed pause or safepoint holds no allocation of its own.
//!
//! A JDK 8 Parallel log holds a pause every 680 bytes. With its name and cause in `String`s,
//! each pause took two allocations on the thread that parsed it and two frees on whichever
//! thread dropped it, often another one. On the bench's 1 GB Parallel log, two threads took
//! 0.36 s with them and 0.33 s without (docs/analyze.md, "Pause names without allocation").
//! A text not in the tables (a future JDK's cause, a garbled line) is owned as before.

use std::borrow::Cow;
use std::cell::Cell;
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

/// `text` among the names and causes HotSpot prints (the empty text is none of them).
///
/// Looked up by a hash of its length and its first and last eight bytes, then compared
/// eight bytes at a time: a VM operation is read on every line of a log of safepoints, and
/// the search among the texts of its length, with `memcmp`, cost 160 instructions a line.
fn known(text: &[u8]) -> Option<&'static str> {
    std::thread_local! {
        /// The text this thread found last: a log of safepoints names one VM operation
        /// line after line, which the table's search cost 80 instructions a line to find.
        static LAST: Cell<&'static str> = const { Cell::new("") };
    }
    let last = LAST.get();
    if !last.is_empty() && same_bytes(last.as_bytes(), text) {
        return Some(last);
    }
    static TABLE: LazyLock<KnownTable> = LazyLock::new(KnownTable::new);
    let found = TABLE.find(text);
    if let Some(found) = found {
        LAST.set(found);
    }
    found
}

/// Open addressing over [`KNOWN`]: each slot holds an index into it plus one, or 0 when
/// empty. A quarter full at most, so a miss ends at the first or second slot.
struct KnownTable {
    slots: Vec<u16>,
    mask: usize,
}

impl KnownTable {
    fn new() -> Self {
        let size = (KNOWN.len() * 4).next_power_of_two();
        let mut table = KnownTable {
            slots: vec![0; size],
            mask: size - 1,
        };
        for (index, known) in KNOWN.iter().enumerate() {
            let mut at = table.home(known.as_bytes());
            while table.slots[at] != 0 {
                at = (at + 1) & table.mask;
            }
            table.slots[at] = u16::try_from(index + 1).expect("fewer known texts than u16::MAX");
        }
        table
    }

    #[inline]
    fn find(&self, text: &[u8]) -> Option<&'static str> {
        if text.is_empty() {
            return None;
        }
        let mut at = self.home(text);
        loop {
            let index = usize::from(self.slots[at].checked_sub(1)?);
            let known = KNOWN[index];
            if same_bytes(known.as_bytes(), text) {
                return Some(known);
            }
            at = (at + 1) & self.mask;
        }
    }

    /// The slot where `text`'s search starts.
    #[inline]
    fn home(&self, text: &[u8]) -> usize {
        let (first, last) = (first_eight(text), last_eight(text));
        let mixed =
            (first ^ last.rotate_left(23) ^ text.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (mixed >> 32) as usize & self.mask
    }
}

/// Up to eight bytes from the start of `text`, zero-padded.
#[inline]
fn first_eight(text: &[u8]) -> u64 {
    match text.first_chunk::<8>() {
        Some(eight) => u64::from_le_bytes(*eight),
        None => padded(text),
    }
}

/// Up to eight bytes from the end of `text`, zero-padded.
#[inline]
fn last_eight(text: &[u8]) -> u64 {
    match text.last_chunk::<8>() {
        Some(eight) => u64::from_le_bytes(*eight),
        None => padded(text),
    }
}

#[inline]
fn padded(short: &[u8]) -> u64 {
    let mut eight = [0; 8];
    eight[..short.len()].copy_from_slice(short);
    u64::from_le_bytes(eight)
}

/// `a == b`, eight bytes at a time, the last eight overlapping those before (a slice
/// comparison calls `memcmp`).
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut at = 0;
    while at + 8 < a.len() {
        if a[at..].first_chunk::<8>() != b[at..].first_chunk::<8>() {
            return false;
        }
        at += 8;
    }
    last_eight(a) == last_eight(b)
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
    fn the_text_found_last_is_found_again_and_no_other() {
        // Every known text after each other one, and texts it might be taken for.
        for last in KNOWN {
            assert_eq!(known(last.as_bytes()), Some(*last));
            for text in KNOWN {
                assert_eq!(known(text.as_bytes()), Some(*text));
                assert_eq!(known(last.as_bytes()), Some(*last));
            }
            let mut longer = last.as_bytes().to_vec();
            longer.push(b' ');
            assert_eq!(known(&longer), None, "{last}");
            assert_eq!(known(&last.as_bytes()[..last.len() - 1]), None, "{last}");
            assert_eq!(known(b""), None);
        }
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
    fn every_known_text_is_found_and_a_text_one_byte_off_is_not() {
        for known in KNOWN {
            assert_eq!(super::known(known.as_bytes()), Some(*known));
            let bytes = known.as_bytes();
            for at in [0, bytes.len() / 2, bytes.len() - 1] {
                let mut changed = bytes.to_vec();
                changed[at] ^= 0x20;
                if !KNOWN.contains(&String::from_utf8_lossy(&changed).as_ref()) {
                    assert_eq!(super::known(&changed), None, "{known} changed at {at}");
                }
            }
            let listed = |text: &[u8]| KNOWN.iter().copied().find(|k| k.as_bytes() == text);
            let shorter = &bytes[..bytes.len() - 1];
            assert_eq!(super::known(shorter), listed(shorter));
            let longer = [bytes, b" "].concat();
            assert_eq!(super::known(&longer), listed(&longer));
        }
        assert_eq!(super::known(b""), None);
    }

    #[test]
    fn no_text_is_listed_twice() {
        let mut sorted = KNOWN.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), KNOWN.len());
    }
}
