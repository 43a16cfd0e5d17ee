//! The event types pauselab reads, decoded by field name from the chunk's metadata (so
//! field order and added fields of later JDKs do not matter).

use crate::cursor::{Cursor, RawStr};
use crate::header::Header;
use crate::metadata::{Field, Metadata, Value};
use crate::pools::Pools;
use crate::Malformed;
use pauselab_pause::record::Failure;

/// Which event this is; the JDK's event names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    GarbageCollection,
    G1GarbageCollection,
    GcPhasePause,
    SafepointBegin,
    SafepointStateSynchronization,
    SafepointEnd,
    ExecuteVmOperation,
    ZAllocationStall,
    GcHeapSummary,
    CpuLoad,
    PhysicalMemory,
    GcCpuTime,
    EvacuationFailed,
    PromotionFailed,
    ConcurrentModeFailure,
    JvmInformation,
    GcConfiguration,
}

impl Kind {
    fn of(class_name: &str) -> Option<Kind> {
        Some(match class_name {
            "jdk.GarbageCollection" => Kind::GarbageCollection,
            "jdk.G1GarbageCollection" => Kind::G1GarbageCollection,
            "jdk.GCPhasePause" => Kind::GcPhasePause,
            "jdk.SafepointBegin" => Kind::SafepointBegin,
            "jdk.SafepointStateSynchronization" => Kind::SafepointStateSynchronization,
            "jdk.SafepointEnd" => Kind::SafepointEnd,
            "jdk.ExecuteVMOperation" => Kind::ExecuteVmOperation,
            "jdk.ZAllocationStall" => Kind::ZAllocationStall,
            "jdk.GCHeapSummary" => Kind::GcHeapSummary,
            "jdk.CPULoad" => Kind::CpuLoad,
            "jdk.PhysicalMemory" => Kind::PhysicalMemory,
            "jdk.GCCPUTime" => Kind::GcCpuTime,
            "jdk.EvacuationFailed" => Kind::EvacuationFailed,
            "jdk.PromotionFailed" => Kind::PromotionFailed,
            "jdk.ConcurrentModeFailure" => Kind::ConcurrentModeFailure,
            "jdk.JVMInformation" => Kind::JvmInformation,
            "jdk.GCConfiguration" => Kind::GcConfiguration,
            _ => return None,
        })
    }
}

/// One event read from a recording, with times in nanoseconds since the Unix epoch and
/// names resolved from the chunk's constant pools.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Start, nanoseconds since the Unix epoch.
    pub start_epoch_ns: i64,
    /// Duration in nanoseconds (0 for instant events).
    pub duration_ns: u64,
    /// What the event says.
    pub data: EventData,
}

/// The fields pauselab uses of each event type it reads.
#[derive(Debug, Clone, PartialEq)]
pub enum EventData {
    /// `jdk.GarbageCollection`: one collection, written when it ends.
    GarbageCollection {
        /// The collection's id, shared with its pause and heap events.
        gc_id: u64,
        /// Collector name (`G1New`, `ParallelOld`, `ZGC Minor`, ...).
        name: Option<String>,
        /// Why it ran (`G1 Evacuation Pause`, `System.gc()`, ...).
        cause: Option<String>,
        /// Total stop-the-world time of the collection, ns.
        sum_of_pauses_ns: u64,
        /// Longest single pause of the collection, ns.
        longest_pause_ns: u64,
    },
    /// `jdk.G1GarbageCollection`: the kind of a G1 young collection, written with its
    /// `jdk.GarbageCollection`.
    G1GarbageCollection {
        /// The collection's id.
        gc_id: u64,
        /// `type`: `Normal`, `Concurrent Start` (`Initial Mark` on JDK 11), `During Mark`,
        /// `Mixed`.
        young_kind: Option<String>,
    },
    /// `jdk.GCPhasePause`: one stop-the-world pause of a collection.
    GcPhasePause {
        /// The collection it belongs to.
        gc_id: u64,
        /// `GC Pause` (G1, Parallel, Serial), `Pause Remark`, `Pause Mark Start`, ...
        name: Option<String>,
    },
    /// `jdk.SafepointBegin`: from the safepoint request until all threads stopped.
    SafepointBegin {
        /// Safepoint id, shared by the events of one safepoint.
        safepoint_id: u64,
    },
    /// `jdk.SafepointStateSynchronization`: bringing the threads to the safepoint.
    SafepointStateSynchronization {
        /// Safepoint id.
        safepoint_id: u64,
    },
    /// `jdk.SafepointEnd`: resuming the threads.
    SafepointEnd {
        /// Safepoint id.
        safepoint_id: u64,
    },
    /// `jdk.ExecuteVMOperation`: one VM operation, at a safepoint or not.
    ExecuteVmOperation {
        /// The operation (`G1CollectForAllocation`, `RevokeBias`, `HandshakeAllThreads`, ...).
        operation: Option<String>,
        /// Whether it ran at a safepoint.
        at_safepoint: bool,
        /// The safepoint it ran in (0 when not at a safepoint).
        safepoint_id: u64,
    },
    /// `jdk.ZAllocationStall`: a thread waited for ZGC to free memory.
    ZAllocationStall {
        /// Page type (`Small`, `Medium`, `Large`).
        page_type: Option<String>,
        /// Bytes the thread asked for.
        size: u64,
        /// The thread that waited (its Java name).
        thread: Option<String>,
    },
    /// `jdk.GCHeapSummary`: heap use before or after a collection.
    GcHeapSummary {
        /// The collection.
        gc_id: u64,
        /// Before (`true`) or after (`false`) the collection.
        before: bool,
        /// Heap in use, bytes.
        heap_used: u64,
        /// Committed heap, bytes.
        committed: u64,
    },
    /// `jdk.CPULoad`: CPU use over the last period, fractions 0..1 of the machine.
    CpuLoad {
        /// JVM user time.
        jvm_user: f64,
        /// JVM system time.
        jvm_system: f64,
        /// Whole machine.
        machine_total: f64,
    },
    /// `jdk.PhysicalMemory`: the machine's memory (or the container's limit), sampled.
    PhysicalMemory {
        /// Total, bytes.
        total: u64,
        /// In use, bytes.
        used: u64,
    },
    /// `jdk.EvacuationFailed` (G1), `jdk.PromotionFailed` (a young collection), or
    /// `jdk.ConcurrentModeFailure` (CMS): what went wrong in collection `gc_id`.
    CollectionFailed {
        /// The collection's id.
        gc_id: u64,
        /// Which failure.
        failure: Failure,
    },
    /// `jdk.GCCPUTime` (JDK 23+): CPU time a collection's threads used.
    GcCpuTime {
        /// The collection.
        gc_id: u64,
        /// User CPU, ns.
        user_ns: u64,
        /// System CPU, ns.
        system_ns: u64,
        /// Wall clock, ns.
        real_ns: u64,
    },
    /// `jdk.JVMInformation`: version and start time of the JVM.
    JvmInformation {
        /// `jvmVersion`, e.g. `OpenJDK 64-Bit Server VM (17.0.9+9) ...`.
        version: Option<String>,
        /// `jvmArguments`: the options the JVM was started with.
        arguments: Option<String>,
        /// JVM start, ms since the Unix epoch.
        start_epoch_ms: i64,
    },
    /// `jdk.GCConfiguration`: the collectors in use.
    GcConfiguration {
        /// Young collector name (`G1New`, `ParallelScavenge`, `Z`, ...).
        young: Option<String>,
        /// Old collector name.
        old: Option<String>,
    },
}

/// A text field before the chunk's constant pools are known.
#[derive(Debug, Clone)]
enum Text {
    Raw(RawStr),
    Pooled(u64, u64),
    Missing,
}

/// A decoded event whose texts still point into constant pools (which can come later in
/// the chunk than the events using them).
pub(crate) struct RawEvent {
    kind: Kind,
    start_ticks: i64,
    duration_ticks: i64,
    ints: [i64; 4],
    floats: [f64; 3],
    texts: [Text; 2],
}

/// Field names read per kind, in the slots `RawEvent` keeps them in.
fn slots(
    kind: Kind,
) -> (
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
) {
    match kind {
        Kind::GarbageCollection => (
            &["gcId", "sumOfPauses", "longestPause"],
            &[],
            &["name", "cause"],
        ),
        Kind::G1GarbageCollection => (&["gcId"], &[], &["type"]),
        Kind::GcPhasePause => (&["gcId"], &[], &["name"]),
        Kind::SafepointBegin | Kind::SafepointStateSynchronization | Kind::SafepointEnd => {
            (&["safepointId"], &[], &[])
        }
        Kind::ExecuteVmOperation => (&["safepointId", "safepoint"], &[], &["operation"]),
        Kind::ZAllocationStall => (&["size"], &[], &["type", "eventThread"]),
        Kind::GcHeapSummary => (&["gcId", "heapUsed"], &[], &["when"]),
        Kind::CpuLoad => (&[], &["jvmUser", "jvmSystem", "machineTotal"], &[]),
        Kind::PhysicalMemory => (&["totalSize", "usedSize"], &[], &[]),
        Kind::GcCpuTime => (&["gcId", "userTime", "systemTime", "realTime"], &[], &[]),
        Kind::EvacuationFailed | Kind::PromotionFailed | Kind::ConcurrentModeFailure => {
            (&["gcId"], &[], &[])
        }
        Kind::JvmInformation => (&["jvmStartTime"], &[], &["jvmVersion", "jvmArguments"]),
        Kind::GcConfiguration => (&[], &[], &["youngCollector", "oldCollector"]),
    }
}

/// Where a top-level field's value goes.
#[derive(Clone, Copy)]
enum Slot {
    Start,
    Duration,
    Int(usize),
    Float(usize),
    Text(usize),
    /// `heapSpace.committedSize` of GCHeapSummary is inside a struct: read it from there.
    HeapSpace,
    Ignore,
}

/// How to decode one event type read.
pub(crate) struct Plan<'m> {
    type_id: u64,
    kind: Kind,
    fields: Vec<(&'m Field, Slot)>,
}

/// Decodes the events of the kinds pauselab reads, per the chunk's metadata.
pub(crate) struct Decoder<'m> {
    meta: &'m Metadata,
    /// A dozen types at most: looked up by a scan, which costs less than hashing the
    /// type id of every event in the chunk.
    plans: Vec<Plan<'m>>,
    /// Bit `id % 64` set for the type ids of `plans`: most events of a type not read are
    /// told apart by one test.
    maybe: u64,
}

impl<'m> Decoder<'m> {
    pub(crate) fn new(meta: &'m Metadata) -> Self {
        let mut plans: Vec<Plan<'m>> = Vec::new();
        for class in &meta.classes {
            let id = class.id;
            let Some(kind) = Kind::of(&class.name) else {
                continue;
            };
            let (ints, floats, texts) = slots(kind);
            let fields = class
                .fields
                .iter()
                .map(|f| {
                    let n = f.name.as_str();
                    let slot = if n == "startTime" {
                        Slot::Start
                    } else if n == "duration" {
                        Slot::Duration
                    } else if let Some(i) = ints.iter().position(|x| *x == n) {
                        Slot::Int(i)
                    } else if let Some(i) = floats.iter().position(|x| *x == n) {
                        Slot::Float(i)
                    } else if let Some(i) = texts.iter().position(|x| *x == n) {
                        Slot::Text(i)
                    } else if kind == Kind::GcHeapSummary && n == "heapSpace" && !f.constant_pool {
                        Slot::HeapSpace
                    } else {
                        Slot::Ignore
                    };
                    (f, slot)
                })
                .collect();
            plans.push(Plan {
                type_id: id,
                kind,
                fields,
            });
        }
        let maybe = plans.iter().fold(0, |m, p| m | 1 << (p.type_id % 64));
        Decoder { meta, plans, maybe }
    }

    /// How to decode events of `type_id`, when it is a type read (asked of every event
    /// of a chunk: inlined into the loop over them).
    #[inline]
    pub(crate) fn plan(&self, type_id: u64) -> Option<&Plan<'m>> {
        if self.maybe & 1 << (type_id % 64) == 0 {
            return None;
        }
        self.plans.iter().find(|p| p.type_id == type_id)
    }

    pub(crate) fn decode(
        &self,
        plan: &Plan<'m>,
        c: &mut Cursor<'_>,
    ) -> Result<RawEvent, Malformed> {
        let mut ev = RawEvent {
            kind: plan.kind,
            start_ticks: 0,
            duration_ticks: 0,
            ints: [0; 4],
            floats: [0.0; 3],
            texts: [Text::Missing, Text::Missing],
        };
        for (field, slot) in &plan.fields {
            if let Slot::HeapSpace = slot {
                ev.floats[0] = self.committed_size(c, field)? as f64;
                continue;
            }
            if let Slot::Ignore = slot {
                self.meta.skip(c, field)?;
                continue;
            }
            let value = self.meta.value(c, field)?;
            match (slot, value) {
                (Slot::Start, Value::Int(v)) => ev.start_ticks = v,
                (Slot::Duration, Value::Int(v)) => ev.duration_ticks = v,
                (Slot::Int(i), Value::Int(v)) => ev.ints[*i] = v,
                (Slot::Int(i), Value::Bool(v)) => ev.ints[*i] = i64::from(v),
                (Slot::Float(i), Value::Float(v)) => ev.floats[*i] = v,
                (Slot::Text(i), Value::Str(s)) => ev.texts[*i] = Text::Raw(s),
                (Slot::Text(i), Value::Constant(index)) => {
                    ev.texts[*i] = Text::Pooled(field.type_id, index)
                }
                _ => {}
            }
        }
        Ok(ev)
    }

    /// `committedSize` of an inline `VirtualSpace` struct, reading past the rest of it.
    fn committed_size(&self, c: &mut Cursor<'_>, field: &Field) -> Result<i64, Malformed> {
        if field.array {
            self.meta.value(c, field)?;
            return Ok(0);
        }
        let mut committed = 0;
        for f in &self.meta.class(field.type_id)?.fields {
            if let (Value::Int(v), "committedSize") = (self.meta.value(c, f)?, f.name.as_str()) {
                committed = v;
            }
        }
        Ok(committed)
    }
}

impl RawEvent {
    /// Resolves times against the chunk header and names against the chunk's pools.
    pub(crate) fn finish(self, header: &Header, pools: &Pools) -> Event {
        let text = |i: usize| match &self.texts[i] {
            Text::Raw(s) => pools.resolve_string(s),
            Text::Pooled(class, index) => pools.resolve(*class, *index).map(str::to_string),
            Text::Missing => None,
        };
        let uint = |i: usize| self.ints[i].max(0) as u64;
        let span = |i: usize| header.span_ns(self.ints[i]);
        let data = match self.kind {
            Kind::GarbageCollection => EventData::GarbageCollection {
                gc_id: uint(0),
                name: text(0),
                cause: text(1),
                sum_of_pauses_ns: span(1),
                longest_pause_ns: span(2),
            },
            Kind::G1GarbageCollection => EventData::G1GarbageCollection {
                gc_id: uint(0),
                young_kind: text(0),
            },
            Kind::GcPhasePause => EventData::GcPhasePause {
                gc_id: uint(0),
                name: text(0),
            },
            Kind::SafepointBegin => EventData::SafepointBegin {
                safepoint_id: uint(0),
            },
            Kind::SafepointStateSynchronization => EventData::SafepointStateSynchronization {
                safepoint_id: uint(0),
            },
            Kind::SafepointEnd => EventData::SafepointEnd {
                safepoint_id: uint(0),
            },
            Kind::ExecuteVmOperation => EventData::ExecuteVmOperation {
                operation: text(0),
                at_safepoint: self.ints[1] != 0,
                safepoint_id: uint(0),
            },
            Kind::ZAllocationStall => EventData::ZAllocationStall {
                page_type: text(0),
                size: uint(0),
                thread: text(1),
            },
            Kind::GcHeapSummary => EventData::GcHeapSummary {
                gc_id: uint(0),
                before: text(0).is_some_and(|w| w.starts_with("Before")),
                heap_used: uint(1),
                committed: self.floats[0].max(0.0) as u64,
            },
            Kind::CpuLoad => EventData::CpuLoad {
                jvm_user: self.floats[0],
                jvm_system: self.floats[1],
                machine_total: self.floats[2],
            },
            Kind::PhysicalMemory => EventData::PhysicalMemory {
                total: uint(0),
                used: uint(1),
            },
            Kind::GcCpuTime => EventData::GcCpuTime {
                gc_id: uint(0),
                user_ns: uint(1),
                system_ns: uint(2),
                real_ns: uint(3),
            },
            Kind::EvacuationFailed => EventData::CollectionFailed {
                gc_id: uint(0),
                failure: Failure::Evacuation,
            },
            Kind::PromotionFailed => EventData::CollectionFailed {
                gc_id: uint(0),
                failure: Failure::Promotion,
            },
            Kind::ConcurrentModeFailure => EventData::CollectionFailed {
                gc_id: uint(0),
                failure: Failure::ConcurrentMode,
            },
            Kind::JvmInformation => EventData::JvmInformation {
                version: text(0),
                arguments: text(1),
                start_epoch_ms: self.ints[0],
            },
            Kind::GcConfiguration => EventData::GcConfiguration {
                young: text(0),
                old: text(1),
            },
        };
        Event {
            start_epoch_ns: header.epoch_ns(self.start_ticks),
            duration_ns: header.span_ns(self.duration_ticks),
            data,
        }
    }
}
