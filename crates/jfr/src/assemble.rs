//! Joins the events of one pause or one safepoint (written separately, tied by a GC id or
//! a safepoint id) into the records a pause analysis wants, and sums up the rest.

// By integer ids (GC, safepoint) for every event read: foldhash, as the pools use it.
use foldhash::HashMap;

use pauselab_pause::record::Failures;
use pauselab_pause::{Collector, DurationStats, Summary};
use serde::Serialize;

use crate::event::{Event, EventData};
use crate::Chunk;

/// Pauses waiting for their collection's `jdk.GarbageCollection` event (written when the
/// collection ends, possibly in the next chunk); more than this are handed out unnamed.
const MAX_CARRIED_PAUSES: usize = 10_000;
/// `jdk.GCPhasePause` names meaning "the collection's one pause": the collection's name
/// says more.
const GENERIC_PAUSE_NAMES: &[&str] = &["GC Pause"];

/// A stop-the-world GC pause.
#[derive(Debug, Clone, PartialEq)]
pub struct GcPause {
    /// The collection's id.
    pub gc_id: u64,
    /// Start, ns since the Unix epoch.
    pub start_epoch_ns: i64,
    /// Duration, ns.
    pub duration_ns: u64,
    /// `Pause Remark`, `Pause Mark Start`, or the collector's name (`G1New`, `ParallelOld`)
    /// for the single pause of a young or full collection.
    pub name: String,
    /// The collection's cause.
    pub cause: Option<String>,
    /// CPU time of the collection (`jdk.GCCPUTime`, JDK 23+), only for a collection with
    /// one pause: (user, system, real) ns.
    pub cpu_ns: Option<(u64, u64, u64)>,
    /// What failed in the collection (`jdk.EvacuationFailed`, `jdk.PromotionFailed`,
    /// `jdk.ConcurrentModeFailure`), given to its first pause.
    pub failures: Failures,
    /// The id of the recorded safepoint it ran in (it starts inside that one's span);
    /// `None` when the recording holds none around it (the `default` settings keep only
    /// safepoints of 10 ms or more).
    pub in_safepoint: Option<u64>,
}

/// One safepoint: from the request until the threads resume.
#[derive(Debug, Clone, PartialEq)]
pub struct Safepoint {
    /// Safepoint id.
    pub id: u64,
    /// Start, ns since the Unix epoch.
    pub start_epoch_ns: i64,
    /// Application threads stopped, ns (from `jdk.SafepointBegin` to the end of
    /// `jdk.SafepointEnd` or of the VM operation; the operation alone without them).
    pub total_ns: u64,
    /// Time to safepoint (`jdk.SafepointStateSynchronization`), ns.
    pub ttsp_ns: Option<u64>,
    /// The VM operation (`jdk.ExecuteVMOperation`).
    pub operation: Option<String>,
}

impl Safepoint {
    /// End, ns since the Unix epoch.
    pub fn end_epoch_ns(&self) -> i64 {
        self.start_epoch_ns.saturating_add_unsigned(self.total_ns)
    }
}

/// What the recording says, in the order an analysis consumes it.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// The JVM's version and start (`jdk.JVMInformation`).
    Jvm {
        /// Version string.
        version: Option<String>,
        /// The options the JVM was started with (`jvmArguments`).
        arguments: Option<String>,
        /// Start, ms since the Unix epoch.
        start_epoch_ms: i64,
    },
    /// Collector in use, from `jdk.GCConfiguration` (`G1`, `Parallel`, `ZGC`, ...).
    Collector(String),
    /// A GC pause; comes before the safepoint it ran in.
    Pause(GcPause),
    /// A safepoint; comes after the pauses inside it.
    Safepoint(Safepoint),
    /// The heap around one collection (`jdk.GCHeapSummary` before and after it).
    Heap(HeapChange),
    /// A sample of the CPU load (`jdk.CPULoad`) over the period ending at `at_epoch_ns`.
    CpuLoad {
        /// End of the period the sample covers, ns since the Unix epoch.
        at_epoch_ns: i64,
        /// The whole machine's load, 0..1.
        machine: f64,
        /// The JVM's own load (user + system), 0..1 of the machine.
        jvm: f64,
    },
    /// A ZGC allocation stall (`jdk.ZAllocationStall`): one thread waited for memory.
    AllocationStall {
        /// End of the stall, ns since the Unix epoch.
        end_epoch_ns: i64,
        /// How long the thread waited.
        duration_ns: u64,
        /// The thread that waited (its Java name), when the recording names it.
        thread: Option<String>,
    },
}

/// Heap in use before and after a collection, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapChange {
    /// The collection's GC id.
    pub gc_id: u64,
    /// When the heap was measured after the collection, ns since the Unix epoch.
    pub at_epoch_ns: i64,
    /// Heap in use before the collection.
    pub before: u64,
    /// Heap in use after it.
    pub after: u64,
    /// Committed heap after it.
    pub committed: u64,
}

impl Item {
    /// Pauses by start, safepoints by end: each pause precedes the safepoint it ran in.
    fn order_key(&self) -> i64 {
        match self {
            Item::Jvm { .. } | Item::Collector(_) => i64::MIN,
            Item::Pause(p) => p.start_epoch_ns,
            Item::Safepoint(s) => s.end_epoch_ns(),
            Item::Heap(h) => h.at_epoch_ns,
            Item::AllocationStall { end_epoch_ns, .. } => *end_epoch_ns,
            Item::CpuLoad { at_epoch_ns, .. } => *at_epoch_ns,
        }
    }
}

/// ZGC allocation stalls: application threads waiting for memory, not at a safepoint.
#[derive(Debug, Clone, Serialize)]
pub struct StallSummary {
    /// Durations of the stalls.
    #[serde(flatten)]
    pub summary: Summary,
    /// Stalls per page type (`Small`, `Medium`, `Large`).
    pub by_page_type: Vec<PageTypeCount>,
}

/// Allocation stalls of one ZGC page type.
#[derive(Debug, Clone, Serialize)]
pub struct PageTypeCount {
    /// `Small`, `Medium`, `Large` (`?` when the recording does not say).
    pub page_type: String,
    /// Stalls.
    pub count: u64,
}

/// Heap use around collections (`jdk.GCHeapSummary`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct HeapSummary {
    /// Collections with both a before and an after summary.
    pub collections: u64,
    /// Largest heap in use before a collection, MB.
    pub max_before_mb: f64,
    /// Largest heap in use after a collection (the live set at its peak), MB.
    pub max_after_mb: f64,
    /// Mean heap in use after a collection, MB.
    pub mean_after_mb: f64,
    /// Largest committed heap, MB.
    pub max_committed_mb: f64,
}

/// CPU load samples (`jdk.CPULoad`), percent of the machine.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CpuLoadSummary {
    /// Samples (one per period, 1 s by default).
    pub samples: u64,
    /// Mean whole-machine load.
    pub machine_total_mean_pct: f64,
    /// Highest whole-machine load.
    pub machine_total_max_pct: f64,
    /// Mean JVM user load.
    pub jvm_user_mean_pct: f64,
    /// Mean JVM system load.
    pub jvm_system_mean_pct: f64,
}

/// Physical memory samples (`jdk.PhysicalMemory`: the host's, or the container's limit).
#[derive(Debug, Clone, Default, Serialize)]
pub struct PhysicalMemorySummary {
    /// Samples.
    pub samples: u64,
    /// The largest total seen, bytes.
    pub total_bytes: u64,
    /// The most in use at once, bytes.
    pub max_used_bytes: u64,
    /// The least free at once (total - used), bytes.
    pub min_free_bytes: u64,
}

/// What a recording holds besides pauses and safepoints.
#[derive(Debug, Clone, Serialize)]
pub struct Extras {
    /// Chunks read.
    pub chunks: u64,
    /// Events of the read types.
    pub events: u64,
    /// Recording start and end, ns since the Unix epoch.
    pub start_epoch_ns: Option<i64>,
    /// End of the last chunk, ns since the Unix epoch.
    pub end_epoch_ns: Option<i64>,
    /// `jdk.ZAllocationStall`; null when the recording has none.
    pub allocation_stalls: Option<StallSummary>,
    /// `jdk.GCHeapSummary`; null when the recording has none.
    pub heap: Option<HeapSummary>,
    /// `jdk.CPULoad`; null when not recorded.
    pub cpu_load: Option<CpuLoadSummary>,
    /// `jdk.PhysicalMemory`; null when not recorded.
    pub physical_memory: Option<PhysicalMemorySummary>,
    /// Event types the recording lacks that the analysis needs (off in its settings).
    pub missing_events: Vec<&'static str>,
}

#[derive(Default)]
struct SafepointParts {
    begin: Option<(i64, u64)>,
    sync_ns: Option<u64>,
    end: Option<(i64, u64)>,
    operation: Option<(i64, u64, Option<String>)>,
    /// Carried over from the previous chunk once already.
    carried: bool,
}

impl SafepointParts {
    /// Recorded by its `jdk.SafepointBegin` alone: its VM operation and its end are not.
    fn begun_only(&self) -> bool {
        self.begin.is_some() && self.end.is_none() && self.operation.is_none()
    }

    /// Whether the rest of this safepoint may be in the next chunk: the JVM rotates
    /// chunks at a safepoint, so a safepoint's `SafepointBegin` can be the last event of
    /// one chunk and its `ExecuteVMOperation` in the next. Only a safepoint at the chunk's
    /// end, with its begin: the VM thread writes a safepoint's events in their order, so a
    /// begin is never in a later chunk than its operation (one missing at the recording's
    /// start began before it; the default settings keep only begins of 10 ms or more).
    /// A carried safepoint reaches the analysis after the pauses of its chunk's end, so
    /// carrying one that is whole would cost those pauses their safepoints.
    fn continues_after(&self, chunk_end_ns: i64, operations_recorded: bool) -> bool {
        let incomplete = self.begin.is_some() && operations_recorded && self.operation.is_none();
        let last_seen = [
            self.begin,
            self.end,
            self.operation.as_ref().map(|o| (o.0, o.1)),
        ]
        .into_iter()
        .flatten()
        .map(|(start, dur)| start.saturating_add_unsigned(dur))
        .max();
        incomplete && last_seen.is_some_and(|t| t >= chunk_end_ns.saturating_sub(CHUNK_EDGE_NS))
    }

    /// Takes the parts `earlier` (the same id, carried from the previous chunk) has and
    /// these lack; `false`, taking nothing, when both have the same part: then they are
    /// two safepoints (a recording's chunks repeated, or another JVM's).
    fn absorb(&mut self, earlier: &mut SafepointParts) -> bool {
        let clash = (self.begin.is_some() && earlier.begin.is_some())
            || (self.operation.is_some() && earlier.operation.is_some());
        if clash {
            return false;
        }
        self.begin = self.begin.or(earlier.begin);
        self.sync_ns = self.sync_ns.or(earlier.sync_ns);
        self.end = self.end.or(earlier.end);
        self.operation = self.operation.take().or(earlier.operation.take());
        self.carried = true;
        true
    }
}

/// How close to a chunk's end a safepoint must be to continue in the next chunk: the
/// rotation's own safepoint, whose threads are stopped until the chunk ends.
const CHUNK_EDGE_NS: i64 = 100_000_000;

/// Safepoints carried into the next chunk at most (each is carried once).
const MAX_CARRIED_SAFEPOINTS: usize = 1_000;

/// Turns chunks into [`Item`]s and accumulates [`Extras`].
pub struct Assembler {
    carried: Vec<Event>,
    carried_safepoints: HashMap<u64, SafepointParts>,
    seen_operation_events: bool,
    /// Whether the settings record what a safepoint recorded by its begin alone lacks:
    /// `jdk.SafepointEnd`, or VM operations under [`UNRECORDED_OPERATION_NS`]. Then such
    /// a safepoint was cut by the recording's start or end, not by a threshold.
    records_whole_safepoints: bool,
    stalls: DurationStats,
    stall_pages: Vec<PageTypeCount>,
    heap_before: HashMap<u64, u64>,
    heap: HeapSummary,
    heap_after_total: f64,
    cpu: CpuLoadSummary,
    memory: PhysicalMemorySummary,
    chunks: u64,
    events: u64,
    start: Option<i64>,
    end: Option<i64>,
    seen_pause_events: bool,
    seen_safepoint_events: bool,
    seen_gc_events: bool,
    jvm_seen: bool,
    collector_seen: bool,
}

impl Default for Assembler {
    fn default() -> Self {
        Self::new()
    }
}

impl Assembler {
    /// An assembler with nothing read yet.
    pub fn new() -> Self {
        Assembler {
            carried: Vec::new(),
            carried_safepoints: HashMap::default(),
            seen_operation_events: false,
            records_whole_safepoints: false,
            stalls: DurationStats::new(),
            stall_pages: Vec::new(),
            heap_before: HashMap::default(),
            heap: HeapSummary::default(),
            heap_after_total: 0.0,
            cpu: CpuLoadSummary::default(),
            memory: PhysicalMemorySummary::default(),
            chunks: 0,
            events: 0,
            start: None,
            end: None,
            seen_pause_events: false,
            seen_safepoint_events: false,
            seen_gc_events: false,
            jvm_seen: false,
            collector_seen: false,
        }
    }

    /// The items of one chunk (plus pauses carried from the previous one), in order.
    pub fn chunk(&mut self, chunk: Chunk) -> Vec<Item> {
        self.chunks += 1;
        self.events += chunk.events.len() as u64;
        self.start.get_or_insert(chunk.start_epoch_ns);
        let end = chunk
            .start_epoch_ns
            .saturating_add_unsigned(chunk.duration_ns);
        self.end = Some(self.end.map_or(end, |e| e.max(end)));

        let mut items = Vec::new();
        let mut collections: HashMap<u64, (Option<String>, Option<String>)> = HashMap::default();
        let mut gc_cpu: HashMap<u64, (u64, u64, u64)> = HashMap::default();
        let mut failed: HashMap<u64, Failures> = HashMap::default();
        let mut pauses_per_gc: HashMap<u64, u32> = HashMap::default();
        let mut safepoints: HashMap<u64, SafepointParts> = HashMap::default();
        let mut pauses = std::mem::take(&mut self.carried);
        // The last event's end: a chunk still being written has no duration in its header.
        let mut last_event_ns = i64::MIN;
        for ev in chunk.events {
            let (start, dur) = (ev.start_epoch_ns, ev.duration_ns);
            last_event_ns = last_event_ns.max(start.saturating_add_unsigned(dur));
            match &ev.data {
                EventData::GarbageCollection {
                    gc_id, name, cause, ..
                } => {
                    self.seen_gc_events = true;
                    collections.insert(*gc_id, (name.clone(), cause.clone()));
                }
                EventData::GcPhasePause { gc_id, .. } => {
                    self.seen_pause_events = true;
                    *pauses_per_gc.entry(*gc_id).or_default() += 1;
                    pauses.push(ev);
                }
                EventData::SafepointBegin { safepoint_id } => {
                    self.seen_safepoint_events = true;
                    safepoints.entry(*safepoint_id).or_default().begin = Some((start, dur));
                }
                EventData::SafepointStateSynchronization { safepoint_id } => {
                    safepoints.entry(*safepoint_id).or_default().sync_ns = Some(dur);
                }
                EventData::SafepointEnd { safepoint_id } => {
                    self.records_whole_safepoints = true;
                    safepoints.entry(*safepoint_id).or_default().end = Some((start, dur));
                }
                EventData::ExecuteVmOperation {
                    operation,
                    at_safepoint: true,
                    safepoint_id,
                } => {
                    // Not `seen_safepoint_events`: without `jdk.SafepointBegin`, only the
                    // operations over the settings' threshold are here, not every stop.
                    self.seen_operation_events = true;
                    self.records_whole_safepoints |= dur < UNRECORDED_OPERATION_NS;
                    safepoints.entry(*safepoint_id).or_default().operation =
                        Some((start, dur, operation.clone()));
                }
                EventData::ExecuteVmOperation { .. } => {}
                // The kind of a G1 young collection names its pause (`feed::LogNames`).
                EventData::G1GarbageCollection { .. } => {}
                EventData::ZAllocationStall {
                    page_type, thread, ..
                } => {
                    self.stalls.record(dur);
                    items.push(Item::AllocationStall {
                        end_epoch_ns: start.saturating_add_unsigned(dur),
                        duration_ns: dur,
                        thread: thread.clone(),
                    });
                    let page = page_type.clone().unwrap_or_else(|| "?".to_string());
                    let known = self.stall_pages.iter_mut().find(|p| p.page_type == page);
                    if let Some(p) = known {
                        p.count += 1;
                    } else if self.stall_pages.len() < 16 {
                        self.stall_pages.push(PageTypeCount {
                            page_type: page,
                            count: 1,
                        });
                    }
                }
                EventData::GcHeapSummary {
                    gc_id,
                    before,
                    heap_used,
                    committed,
                } => {
                    items.extend(self.heap_summary(*gc_id, *before, *heap_used, *committed, start))
                }
                EventData::CpuLoad {
                    jvm_user,
                    jvm_system,
                    machine_total,
                } => {
                    let c = &mut self.cpu;
                    c.samples += 1;
                    c.machine_total_mean_pct += machine_total * 100.0;
                    c.machine_total_max_pct = c.machine_total_max_pct.max(machine_total * 100.0);
                    c.jvm_user_mean_pct += jvm_user * 100.0;
                    c.jvm_system_mean_pct += jvm_system * 100.0;
                    items.push(Item::CpuLoad {
                        at_epoch_ns: start,
                        machine: *machine_total,
                        jvm: jvm_user + jvm_system,
                    });
                }
                EventData::PhysicalMemory { total, used } => {
                    let m = &mut self.memory;
                    let free = total.saturating_sub(*used);
                    m.min_free_bytes = if m.samples == 0 {
                        free
                    } else {
                        m.min_free_bytes.min(free)
                    };
                    m.samples += 1;
                    m.total_bytes = m.total_bytes.max(*total);
                    m.max_used_bytes = m.max_used_bytes.max(*used);
                }
                EventData::GcCpuTime {
                    gc_id,
                    user_ns,
                    system_ns,
                    real_ns,
                } => {
                    gc_cpu.insert(*gc_id, (*user_ns, *system_ns, *real_ns));
                }
                EventData::CollectionFailed { gc_id, failure } => {
                    failed.entry(*gc_id).or_default().add(*failure);
                }
                EventData::JvmInformation {
                    version,
                    arguments,
                    start_epoch_ms,
                } => {
                    if !std::mem::replace(&mut self.jvm_seen, true) {
                        items.push(Item::Jvm {
                            version: version.clone(),
                            arguments: arguments.clone(),
                            start_epoch_ms: *start_epoch_ms,
                        });
                    }
                }
                EventData::GcConfiguration { young, old } => {
                    if let Some(c) =
                        Collector::from_jfr_configuration(young.as_deref(), old.as_deref())
                    {
                        if !std::mem::replace(&mut self.collector_seen, true) {
                            items.push(Item::Collector(c.name().to_string()));
                        }
                    }
                }
            }
        }
        for ev in pauses {
            let EventData::GcPhasePause { gc_id, name } = &ev.data else {
                continue;
            };
            let Some((gc_name, cause)) = collections.get(gc_id) else {
                if self.carried.len() < MAX_CARRIED_PAUSES {
                    self.carried.push(ev);
                    continue;
                }
                items.push(Item::Pause(pause(&ev, *gc_id, name, &None, None, None)));
                continue;
            };
            let cpu = gc_cpu
                .get(gc_id)
                .filter(|_| pauses_per_gc.get(gc_id) == Some(&1))
                .copied();
            let mut p = pause(&ev, *gc_id, name, gc_name, cause.clone(), cpu);
            // Once per collection: its first pause (a young collection has one).
            p.failures = failed.remove(gc_id).unwrap_or_default();
            items.push(Item::Pause(p));
        }
        let mut begun_only = Vec::new();
        for (id, mut earlier) in std::mem::take(&mut self.carried_safepoints) {
            let completed = safepoints
                .get_mut(&id)
                .is_some_and(|now| now.absorb(&mut earlier));
            if !completed {
                if let Some(sp) = safepoint(id, &earlier) {
                    if earlier.begun_only() {
                        begun_only.push(items.len());
                    }
                    items.push(Item::Safepoint(sp));
                }
            }
        }
        for (id, mut parts) in safepoints {
            let carry = !parts.carried
                && parts.continues_after(last_event_ns, self.seen_operation_events)
                && self.carried_safepoints.len() < MAX_CARRIED_SAFEPOINTS;
            if carry {
                parts.carried = true;
                self.carried_safepoints.insert(id, parts);
            } else if let Some(sp) = safepoint(id, &parts) {
                if parts.begun_only() {
                    begun_only.push(items.len());
                }
                items.push(Item::Safepoint(sp));
            }
        }
        if !self.records_whole_safepoints {
            stretch_to_their_pauses(&mut items, &begun_only);
        }
        items.sort_by_key(Item::order_key);
        place_pauses_in_safepoints(&mut items);
        items
    }

    /// Counts one `jdk.GCHeapSummary`; the one after a collection whose "before" was seen
    /// gives the collection's heap change.
    fn heap_summary(
        &mut self,
        gc_id: u64,
        before: bool,
        used: u64,
        committed: u64,
        at_epoch_ns: i64,
    ) -> Option<Item> {
        let mb = |b: u64| b as f64 / (1024.0 * 1024.0);
        self.heap.max_committed_mb = self.heap.max_committed_mb.max(mb(committed));
        if before {
            if self.heap_before.len() < 10_000 {
                self.heap_before.insert(gc_id, used);
            }
            return None;
        }
        let b = self.heap_before.remove(&gc_id)?;
        self.heap.collections += 1;
        self.heap.max_before_mb = self.heap.max_before_mb.max(mb(b));
        self.heap.max_after_mb = self.heap.max_after_mb.max(mb(used));
        self.heap_after_total += mb(used);
        Some(Item::Heap(HeapChange {
            gc_id,
            at_epoch_ns,
            before: b,
            after: used,
            committed,
        }))
    }

    /// Pauses still waiting for their collection, and the summaries.
    pub fn finish(mut self) -> (Vec<Item>, Extras) {
        let mut items: Vec<Item> = std::mem::take(&mut self.carried)
            .into_iter()
            .filter_map(|ev| match &ev.data {
                EventData::GcPhasePause { gc_id, name } => {
                    Some(Item::Pause(pause(&ev, *gc_id, name, &None, None, None)))
                }
                _ => None,
            })
            .collect();
        items.extend(
            std::mem::take(&mut self.carried_safepoints)
                .into_iter()
                .filter_map(|(id, parts)| safepoint(id, &parts))
                .map(Item::Safepoint),
        );
        items.sort_by_key(Item::order_key);
        let mut missing = Vec::new();
        if !self.seen_pause_events {
            missing.push("jdk.GCPhasePause");
        }
        if !self.seen_gc_events {
            missing.push("jdk.GarbageCollection");
        }
        if !self.seen_safepoint_events {
            missing.push("jdk.SafepointBegin");
        }
        let cpu = (self.cpu.samples > 0).then(|| {
            let n = self.cpu.samples as f64;
            CpuLoadSummary {
                machine_total_mean_pct: self.cpu.machine_total_mean_pct / n,
                jvm_user_mean_pct: self.cpu.jvm_user_mean_pct / n,
                jvm_system_mean_pct: self.cpu.jvm_system_mean_pct / n,
                ..self.cpu
            }
        });
        let heap = (self.heap.collections > 0).then(|| HeapSummary {
            mean_after_mb: self.heap_after_total / self.heap.collections as f64,
            ..self.heap
        });
        let stalls = (self.stalls.count() > 0).then(|| StallSummary {
            summary: self.stalls.summary(),
            by_page_type: self.stall_pages,
        });
        let extras = Extras {
            chunks: self.chunks,
            events: self.events,
            start_epoch_ns: self.start,
            end_epoch_ns: self.end,
            allocation_stalls: stalls,
            heap,
            cpu_load: cpu,
            physical_memory: (self.memory.samples > 0).then_some(self.memory),
            missing_events: missing,
        };
        (items, extras)
    }
}

fn pause(
    ev: &Event,
    gc_id: u64,
    phase_name: &Option<String>,
    gc_name: &Option<String>,
    cause: Option<String>,
    cpu_ns: Option<(u64, u64, u64)>,
) -> GcPause {
    let name = match (phase_name.as_deref(), gc_name.as_deref()) {
        (Some(p), Some(g)) if GENERIC_PAUSE_NAMES.contains(&p) => g.to_string(),
        (Some(p), _) => p.to_string(),
        (None, Some(g)) => g.to_string(),
        (None, None) => "GC Pause".to_string(),
    };
    GcPause {
        gc_id,
        start_epoch_ns: ev.start_epoch_ns,
        duration_ns: ev.duration_ns,
        name,
        cause,
        cpu_ns,
        failures: Failures::default(),
        in_safepoint: None,
    }
}

/// A VM operation shorter than this is not recorded with the `default` settings (nor is
/// `jdk.SafepointEnd`), so a safepoint recorded by its begin alone seems to end when its
/// threads stopped, before its operation ran. (`jdk.ActiveSetting` would give the
/// threshold; the events recorded tell whether one applies, which is all that is needed.)
const UNRECORDED_OPERATION_NS: u64 = 10_000_000;

/// Gives each pause of `items` (in order) the safepoint it started in: the first one
/// after it whose span holds its start. Pauses come by start, safepoints by end, so the
/// pauses since the last safepoint either started in the next one or in none recorded.
fn place_pauses_in_safepoints(items: &mut [Item]) {
    let mut since_last_safepoint: Vec<usize> = Vec::new();
    for at in 0..items.len() {
        match &items[at] {
            Item::Pause(_) => since_last_safepoint.push(at),
            Item::Safepoint(sp) => {
                let (id, start) = (sp.id, sp.start_epoch_ns);
                for &p in &since_last_safepoint {
                    if let Item::Pause(pause) = &mut items[p] {
                        if pause.start_epoch_ns >= start {
                            pause.in_safepoint = Some(id);
                        }
                    }
                }
                since_last_safepoint.clear();
            }
            _ => {}
        }
    }
}

/// How soon after a begin event's end the GC pause of the same safepoint starts: the VM
/// thread writes the begin, then runs the operation, whose first act is the pause.
/// Measured on JDK 11, 17, 21 and 25 with every collector (the `default` settings and a
/// thread in a loop without safepoint polls): 5 to 91 us (Serial 61 to 91 us); a pause of
/// the next safepoint came 550 us or more after, that safepoint's own reaching and
/// cleanup in between. Also the most between two pauses of one safepoint (Parallel's
/// young collection and the full one after it).
const SAME_SAFEPOINT_NS: i64 = 250_000;

/// Stretches each safepoint of `begun_only` (indices into `items`) over the GC pause that
/// started right after its begin event (see [`SAME_SAFEPOINT_NS`]) and the pauses that
/// followed that one back to back. The pause is then counted in its own safepoint; else
/// it waited for the next one, and this one counted as a stop without a GC.
fn stretch_to_their_pauses(items: &mut [Item], begun_only: &[usize]) {
    if begun_only.is_empty() {
        return;
    }
    let mut pauses: Vec<(i64, i64)> = items
        .iter()
        .filter_map(|item| match item {
            Item::Pause(p) => Some((
                p.start_epoch_ns,
                p.start_epoch_ns.saturating_add_unsigned(p.duration_ns),
            )),
            _ => None,
        })
        .collect();
    pauses.sort_unstable();
    for &at in begun_only {
        let Item::Safepoint(sp) = &mut items[at] else {
            continue;
        };
        let first = pauses.partition_point(|&(start, _)| start < sp.start_epoch_ns);
        let mut end = sp.end_epoch_ns();
        for &(start, pause_end) in &pauses[first..] {
            if start > end.saturating_add(SAME_SAFEPOINT_NS) {
                break;
            }
            end = end.max(pause_end);
        }
        sp.total_ns = end.saturating_sub(sp.start_epoch_ns).max(0) as u64;
    }
}

fn safepoint(id: u64, p: &SafepointParts) -> Option<Safepoint> {
    let end_of = |(start, dur): (i64, u64)| start.saturating_add_unsigned(dur);
    let operation = p.operation.as_ref().and_then(|o| o.2.clone());
    let (start, total_ns) = match p.begin {
        Some(begin) => {
            let end = [Some(begin), p.end, p.operation.as_ref().map(|o| (o.0, o.1))]
                .into_iter()
                .flatten()
                .map(end_of)
                .max()
                .unwrap_or(begin.0);
            (begin.0, end.saturating_sub(begin.0).max(0) as u64)
        }
        None => {
            let (start, dur, _) = p.operation.as_ref()?;
            (*start, *dur)
        }
    };
    Some(Safepoint {
        id,
        start_epoch_ns: start,
        total_ns,
        // Without `jdk.SafepointStateSynchronization` (off in both settings the JDK ships),
        // the begin event's duration: it lasts from the request until every thread stopped
        // and the safepoint's cleanup ran (microseconds on JDK 17 and later).
        ttsp_ns: p.sync_ns.or(p.begin.map(|(_, dur)| dur)),
        operation,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pauselab_pause::record::Failure;

    fn event(start: i64, duration_ns: u64, data: EventData) -> Event {
        Event {
            start_epoch_ns: start,
            duration_ns,
            data,
        }
    }

    /// A recorded failure is the collection's, by GC id, and goes to its pause: one
    /// collection failed to evacuate, the other did not.
    #[test]
    fn a_collection_failure_goes_to_the_pause_of_its_gc_id() {
        let collection = |gc_id| EventData::GarbageCollection {
            gc_id,
            name: Some("G1New".to_string()),
            cause: Some("G1 Evacuation Pause".to_string()),
            sum_of_pauses_ns: 1_000_000,
            longest_pause_ns: 1_000_000,
        };
        let pause = |gc_id| EventData::GcPhasePause {
            gc_id,
            name: Some("GC Pause".to_string()),
        };
        let events = vec![
            event(1_000, 1_000_000, pause(1)),
            event(
                1_500,
                0,
                EventData::CollectionFailed {
                    gc_id: 1,
                    failure: Failure::Evacuation,
                },
            ),
            event(1_000, 1_000_000, collection(1)),
            event(5_000_000, 1_000_000, pause(2)),
            event(5_000_000, 1_000_000, collection(2)),
        ];
        let items = Assembler::new().chunk(Chunk {
            start_epoch_ns: 0,
            duration_ns: 10_000_000,
            events,
            limits_hit: Vec::new(),
        });
        let failed: Vec<(u64, bool)> = items
            .iter()
            .filter_map(|i| match i {
                Item::Pause(p) => Some((p.gc_id, p.failures.has(Failure::Evacuation))),
                _ => None,
            })
            .collect();
        assert_eq!(failed, [(1, true), (2, false)]);
    }
}
