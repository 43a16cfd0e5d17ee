//! What every source says about a JVM's pauses, as records: a GC log line parsed
//! (pauselab-gclog), a JFR event read (pauselab-jfr). Each source feeds its records to a
//! [`RecordSink`] (the analysis), so no source depends on the analysis and the analysis
//! on no source.

#![deny(missing_docs)]

use std::borrow::Cow;

/// When a line was written, as far as the line says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stamp {
    /// Time since JVM start (unified `uptime*` decorations, JDK 8 time stamps).
    pub uptime_ns: Option<u64>,
    /// Wall clock, ms since the Unix epoch (`time`, `utctime`, `timemillis`, JDK 8 date stamps).
    pub wall_ms: Option<i64>,
    /// Process id decoration, when present (tells interleaved JVMs apart).
    pub pid: Option<u64>,
}

impl Stamp {
    /// This stamp moved back by `ns` (a unified pause line is written at the pause's end).
    pub fn minus(self, ns: u64) -> Stamp {
        Stamp {
            uptime_ns: self.uptime_ns.map(|u| u.saturating_sub(ns)),
            wall_ms: self.wall_ms.map(|w| w - (ns / 1_000_000) as i64),
            pid: self.pid,
        }
    }

    /// This stamp moved forward by `ns` (a JDK 8 event is stamped at the pause's start).
    pub fn plus(self, ns: u64) -> Stamp {
        Stamp {
            uptime_ns: self.uptime_ns.map(|u| u.saturating_add(ns)),
            wall_ms: self
                .wall_ms
                .map(|w| w.saturating_add((ns / 1_000_000) as i64)),
            pid: self.pid,
        }
    }
}

/// A collection's CPU times (`[Times: user=... sys=..., real=...]`, a recording's
/// `jdk.GCPhasePause` has none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cpu {
    /// User time of the collector's threads.
    pub user_ns: u64,
    /// System time of the collector's threads.
    pub sys_ns: u64,
    /// Elapsed time.
    pub real_ns: u64,
}

/// A stop-the-world GC pause.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GcPause {
    /// `GC(N)` of unified logging.
    pub gc_id: Option<u64>,
    /// Start of the pause.
    pub start: Stamp,
    /// How long the JVM was stopped.
    pub duration_ns: u64,
    /// `Pause Young`, `Pause Full`, `GC`, `Full GC`... Static when HotSpot's
    /// ([`known_or_owned`](crate::known_text::known_or_owned)).
    pub name: Cow<'static, str>,
    /// `G1 Evacuation Pause`, `Allocation Failure`... when the source names it. Static when
    /// HotSpot's.
    pub cause: Option<Cow<'static, str>>,
    /// CPU times, when on the same line.
    pub cpu: Option<Cpu>,
    /// Heap occupancy before and after, when the line gives it.
    pub heap: Option<HeapChange>,
    /// The young generation's occupancy before and after (JDK 8 one-line events).
    pub young: Option<HeapChange>,
    /// What went wrong in this collection, when the line says.
    pub failures: Failures,
    /// A young collection that the JVM turned into a full collection of the old generation
    /// (JDK 8 `(promotion failed)` or `(concurrent mode failure)` with the old generation
    /// collected in the same event; unified logs: a `Pause Full` nested in it).
    pub upgraded_to_full: bool,
    /// The collector that a JDK 6-8 event's text tells, where its name (`Full GC`, `GC`)
    /// does not: the generations a full collection prints (`[CMS:`, `[Tenured:`,
    /// `[PSYoungGen:`), or the occupancy alone that CMS's phases print with `-verbose:gc`.
    pub collector: Option<crate::Collector>,
    /// What a JDK 6-8 full collection prints of its generations: which of them had filled.
    /// Boxed: most pauses are not full collections.
    pub generations: Option<Box<Generations>>,
    /// CMS's incremental mode (`-XX:+CMSIncrementalMode`, JDK 5-8): the duty cycle a JDK
    /// 6-8 event prints before its duration (`... icms_dc=18 , 0.0103660 secs]`), the share
    /// of the time between two young collections that the concurrent work may run, %.
    pub icms_duty_cycle: Option<u8>,
}

/// The generations a JDK 6-8 full collection prints, read for what had filled up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Generations {
    /// The old generation: `[ParOldGen:`, `[PSOldGen:`, `[CMS:`, `[Tenured:`.
    pub old: Option<HeapChange>,
    /// The permanent generation of JDK 7 and earlier: `[PSPermGen:`, `[CMS Perm :`,
    /// `[Perm :`.
    pub perm: Option<HeapChange>,
    /// Whether it prints `[Metaspace:` (JDK 8), whose capacity is a reservation and so
    /// does not tell whether it filled.
    pub metaspace: bool,
}

impl Generations {
    /// Whether any generation was read.
    pub fn is_empty(&self) -> bool {
        self.old.is_none() && self.perm.is_none() && !self.metaspace
    }
}

impl GcPause {
    /// The pause as evidence names it: `Pause Young (G1 Evacuation Pause)`.
    pub fn described(&self) -> String {
        match &self.cause {
            Some(c) => format!("{} ({c})", self.name),
            None => self.name.to_string(),
        }
    }
}

/// Heap occupancy around a collection, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapChange {
    /// Before the collection.
    pub before: u64,
    /// After the collection.
    pub after: u64,
    /// The committed size, when given.
    pub capacity: Option<u64>,
}

/// How a unified log states the old generation's occupancy around a collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OldChange {
    /// Serial `Tenured:`, Parallel `ParOldGen:`, CMS `CMS:` transitions.
    Bytes(HeapChange),
    /// G1 `Old regions: 1->3`, in regions of the log's region size.
    Regions {
        /// Before the collection.
        before: u64,
        /// After the collection.
        after: u64,
    },
}

/// Failures a collection line reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// G1 could not copy live objects: `(Evacuation Failure...)`, `To-space exhausted`,
    /// JDK 8 `(to-space exhausted)` / `(to-space overflow)`.
    Evacuation,
    /// CMS fell back to a stop-the-world collection of the old generation.
    ConcurrentMode,
    /// A young collection could not promote into the old generation.
    Promotion,
}

/// The failures one collection reports (a CMS collection can report two).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Failures {
    /// [`Failure::Evacuation`].
    pub evacuation: bool,
    /// [`Failure::ConcurrentMode`].
    pub concurrent_mode: bool,
    /// [`Failure::Promotion`].
    pub promotion: bool,
}

impl Failures {
    /// Whether `failure` is among them.
    pub fn has(&self, failure: Failure) -> bool {
        match failure {
            Failure::Evacuation => self.evacuation,
            Failure::ConcurrentMode => self.concurrent_mode,
            Failure::Promotion => self.promotion,
        }
    }

    /// Adds `failure`.
    pub fn add(&mut self, failure: Failure) {
        match failure {
            Failure::Evacuation => self.evacuation = true,
            Failure::ConcurrentMode => self.concurrent_mode = true,
            Failure::Promotion => self.promotion = true,
        }
    }
}

/// A thread that waited for memory (ZGC): not a safepoint, only that thread stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stall {
    /// What the thread waited for.
    pub kind: StallKind,
    /// The thread's name.
    pub thread: String,
    /// How long it waited.
    pub duration_ns: u64,
}

/// The JVM threw an `OutOfMemoryError` (the exception printed where the GC log goes, JDK 8's
/// `-verbose:gc` to standard output; ZGC's `Out Of Memory (main)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutOfMemory {
    /// The thread that got it, when the line says.
    pub thread: Option<String>,
    /// What ran out (`Java heap space`, `GC overhead limit exceeded`, `Metaspace`), when
    /// the line says.
    pub what: Option<String>,
    /// The exception as printed; else the collector's line about it (ZGC's), which the
    /// exception follows when both go to the same file.
    pub thrown: bool,
}

/// The CPU load over a sampling period that ends at the record's stamp (a JFR recording's
/// `jdk.CPULoad`, 1 s by default), in thousandths of the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuLoad {
    /// The whole machine.
    pub machine_per_mille: u32,
    /// This JVM, user + system.
    pub jvm_per_mille: u32,
}

/// What a stalled thread waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StallKind {
    /// `Allocation Stall`: the heap was full, the thread waited for a collection.
    Allocation,
    /// `Relocation Stall`: the thread waited for an object to be relocated.
    Relocation,
}

/// The end of a collection cycle (mostly concurrent): its duration and the heap around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcCycle {
    /// `GC(N)`.
    pub gc_id: u64,
    /// The cycle's name (`Concurrent Mark Cycle`, `Garbage Collection`...).
    pub name: String,
    /// Its cause, when given.
    pub cause: Option<String>,
    /// The heap around it, when given.
    pub heap: Option<HeapChange>,
    /// How long it ran, when given.
    pub duration_ns: Option<u64>,
}

/// A safepoint or "application threads were stopped" interval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Safepoint {
    /// Start of the stopped interval.
    pub start: Stamp,
    /// How long the application threads were stopped.
    pub total_ns: u64,
    /// Time to safepoint: "Reaching safepoint", "Stopping threads took", `sync`.
    pub ttsp_ns: Option<u64>,
    /// The VM operation, when the line names it (JDK 17+, safepoint statistics). Static
    /// when HotSpot's ([`known_or_owned`](crate::known_text::known_or_owned)).
    pub operation: Option<Cow<'static, str>>,
}

/// One thing a source says about the JVM: a pause, a safepoint, a stall, a setting...
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// A stop-the-world GC pause.
    Pause(GcPause),
    /// CPU times printed on their own line (`gc+cpu`, a JDK 8 G1 `[Times: ...]` line).
    Cpu {
        /// The collection they belong to, when the line says.
        gc_id: Option<u64>,
        /// The times.
        cpu: Cpu,
    },
    /// A "Total time for which application threads were stopped" line or a JDK 17+
    /// `Safepoint "..."` line.
    Safepoint(Safepoint),
    /// A `-XX:+PrintSafepointStatistics` row (JDK 8): a second view of the same safepoints.
    SafepointStatistics(Safepoint),
    /// "Entering safepoint region: OP" (JDK 9-16): names the next stopped-time line.
    SafepointBegin(String),
    /// The collector in use (`Using G1`, a recording's `jdk.GarbageCollection` name).
    Collector(String),
    /// The JVM's options: JDK 6-8 `CommandLine flags: ...`, unified `jvm_args: ...` and
    /// `jvm_flags: ...` (`-Xlog:arguments`). Names the collector when they select one.
    Flags(String),
    /// The JDK version (`17.0.9+9`).
    Version(String),
    /// A ZGC allocation or relocation stall.
    Stall(Stall),
    /// An `OutOfMemoryError`.
    OutOfMemory(OutOfMemory),
    /// HotSpot's asynchronous logging (`-Xlog:async`) dropped this many messages, its
    /// buffer full: `105 messages dropped due to async logging`.
    DroppedMessages(u64),
    /// A collection cycle ended (G1 concurrent mark, ZGC and Shenandoah cycles).
    Cycle(GcCycle),
    /// `GC(N) To-space exhausted` (G1, JDK 9-16): evacuation failed in that collection.
    ToSpaceExhausted {
        /// `GC(N)`.
        gc_id: u64,
    },
    /// The old generation before and after collection `gc_id` (unified `gc,heap` lines,
    /// written before that collection's pause line).
    OldGeneration {
        /// `GC(N)`.
        gc_id: u64,
        /// Before and after.
        change: OldChange,
        /// Whose old generation it is: `Tenured` is Serial's, `ParOldGen` Parallel's,
        /// `CMS` CMS's, `Old regions` G1's.
        collector: crate::Collector,
    },
    /// G1's region size (`Heap region size: 1M`; JDK 17+ `Heap Region Size: 1M`).
    RegionSize(u64),
    /// A pause began (unified `gc,start` line, `GC(N) Pause Young (Allocation Failure)`):
    /// tells a pause nested in another's (Serial and Parallel upgrading a young collection
    /// to a full one) from one after it.
    PauseStart {
        /// `GC(N)`.
        gc_id: u64,
    },
    /// A line of HotSpot's report of a safepoint that timed out (`-XX:+SafepointTimeout`):
    /// it names the threads that held the safepoint up.
    SafepointTimeout(TimeoutLine),
    /// The heap and young generation around the pause just before, from a detail line of
    /// it (JDK 7/8 G1 `[Eden: ... Survivors: ... Heap: ...]`).
    DetailsHeap {
        /// The whole heap.
        heap: HeapChange,
        /// The young generation.
        young: HeapChange,
    },
    /// A sample of the machine's CPU load (recordings only: GC logs do not have it).
    CpuLoad(CpuLoad),
    /// A log line carrying nothing the analysis uses (heap sizes, phases, concurrent work).
    Other,
}

/// One line of a safepoint timeout report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeoutLine {
    /// `# SafepointSynchronize::begin: Timeout detected:`
    Start,
    /// A thread that had not reached the safepoint, with the OS-level state HotSpot prints
    /// after its `nid` (`runnable`, `waiting on condition`...).
    Thread {
        /// The thread's name.
        name: String,
        /// Its OS-level state, when printed.
        os_state: Option<String>,
    },
    /// `java.lang.Thread.State: RUNNABLE`: the Java state of the thread on the line before
    /// (also printed in every thread dump: only the analysis knows which it is).
    JavaState(String),
    /// `# SafepointSynchronize::begin: (End of list)`
    End,
}

/// The format a text log is written in. It says what a pause line's stamp marks, so the
/// analysis needs it with each line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// JDK 8 and earlier `-XX:+PrintGC*` output: a pause line is stamped at the pause's start.
    Jdk8,
    /// Unified logging, `-Xlog` (JDK 9+): every line is stamped when it is written.
    Unified,
}

impl Format {
    /// Whether a line of this format stamped `stamp` that carries no record is blank: an
    /// empty JDK 8 line parses, but says nothing about the log (its format, or whether it is
    /// a GC log at all).
    #[inline]
    pub fn is_blank(self, stamp: &Stamp) -> bool {
        self == Format::Jdk8 && *stamp == Stamp::default()
    }
}

/// A line of a text log as the parser understood it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The format it is written in.
    pub format: Format,
    /// Its decorations (unified) or time stamps (JDK 8).
    pub stamp: Stamp,
    /// What it says; [`Record::Other`] for a line of the log that carries nothing the
    /// analysis uses.
    pub record: Record,
}

impl Parsed {
    /// When the line's event ended: a JDK 8 pause line and a safepoint statistics row are
    /// stamped when their stop began, every other line when it was written.
    pub fn end(&self) -> Stamp {
        match (&self.record, self.format) {
            (Record::Pause(pause), Format::Jdk8) => self.stamp.plus(pause.duration_ns),
            (Record::SafepointStatistics(safepoint), _) => self.stamp.plus(safepoint.total_ns),
            _ => self.stamp,
        }
    }
}

/// One line of a text log (a GC log), as [`RecordSink::line`] receives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogLine<'a> {
    /// A line that says what happened: its record (never [`Record::Other`]), stamp and
    /// format. Boxed: few lines are records, and lines cross threads in batches.
    Record(Box<Parsed>),
    /// A line of the log that carries no record (most lines): its stamp still moves the
    /// log's clock.
    Other {
        /// The format it is written in.
        format: Format,
        /// Its stamp.
        stamp: Stamp,
    },
    /// A line not understood.
    Unparsed {
        /// Its beginning, or empty when the reader did not keep it (the report shows the
        /// first such line only, so readers stop keeping text once they kept one).
        text: &'a [u8],
        /// It is part of a JDK 6-8 collection's event whose other part was lost (a
        /// rotated file begins inside the event: `, 0.0784501 secs]`), or that never
        /// closed: a collection ran all the same.
        partial_event: bool,
    },
    /// Nothing but NUL bytes (a log truncated while the JVM wrote it starts so).
    Nothing,
}

/// What every source feeds its records to, one input at a time: `begin_input`, then the
/// input's records (or a text log's lines) in order, then `end_input`.
pub trait RecordSink {
    /// A new input (a file, a recording) begins; later records belong to it.
    fn begin_input(&mut self, name: &str);
    /// One record. `end` is when its event ended (as a unified log line is stamped);
    /// `ordinal` locates it in the input (a line number, an event's ordinal).
    fn record(&mut self, end: Stamp, record: Record, ordinal: u64);
    /// One line of a text log, `number` its line number (the lines of a JDK 6-8 event
    /// joined arrive as one, numbered by the first). A text log's reader feeds every line
    /// here, so the analysis counts lines of each format, follows the log's clock on lines
    /// without records and shows the first line not understood. Sources without lines never
    /// call it; by default a line's record is fed to [`RecordSink::record`].
    fn line(&mut self, line: LogLine<'_>, number: u64) {
        if let LogLine::Record(parsed) = line {
            self.record(parsed.end(), parsed.record, number);
        }
    }
    /// `count` lines in a row numbered from `number`, none with a record, all of `format`
    /// and stamped `stamp` (most lines of a `gc*` log share their collection's stamp):
    /// what as many [`RecordSink::line`]s of [`LogLine::Other`] say, which is what it
    /// does by default.
    fn other_lines(&mut self, format: Format, stamp: Stamp, number: u64, count: u64) {
        for next in number..number + count {
            self.line(LogLine::Other { format, stamp }, next);
        }
    }
    /// How many lines the current text input has, once it is read (joined lines count
    /// each). Sources without lines never call it.
    fn line_count(&mut self, _lines: u64) {}
    /// The JVM's options, from a source other than a log line (a recording's
    /// `jdk.JVMInformation`).
    fn jvm_flags(&mut self, options: &str);
    /// The pauses waiting for their safepoint are closed: the next safepoint fed is not
    /// theirs (for sources that know which safepoint a pause ran in).
    fn close_pauses(&mut self);
    /// Something about input `input` the user should know (it does not stop the input),
    /// about its line `line` when it is a text log's line.
    fn warn(&mut self, input: &str, line: Option<u64>, message: String);
    /// The current input ended; `bytes` is how much was read from it.
    fn end_input(&mut self, bytes: u64);
}
