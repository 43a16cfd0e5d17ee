//! Each record of the log (a parsed line, or an event of a recording) to the part of the
//! analysis it feeds.

use crate::analyzer::clock::clock_ns;
use crate::analyzer::report::UnparsedLine;
use crate::analyzer::Analyzer;
use crate::rules::rule::{Seen, Series, Watch};
use crate::waiting::PauseRecord;
use pauselab_pause::record::{
    Cpu, Failure, Format, HeapChange, Parsed, Record, Safepoint, Stall, StallKind, Stamp,
};
use pauselab_pause::Collector;

impl Analyzer<'_> {
    /// What every parsed line tells, `record` or not: the log's format and its clock.
    /// `lines`: how many lines of that format and stamp, counted towards the format.
    #[inline(always)]
    pub(super) fn observe(
        &mut self,
        format: Format,
        stamp: &Stamp,
        record: bool,
        line: u64,
        lines: u64,
    ) {
        self.count_format(format, stamp, record, lines);
        // A unified log's record lines of one collection share its stamp: the clocks, the
        // uptime range and the windows are there already, and seeing it again changes none
        // of them, pauses and safepoints counted since or not. (A JDK 6-8 event is one
        // line of its own stamp: no need to look.)
        if format == Format::Unified {
            if self.clocks_at == Some(*stamp) {
                return;
            }
            self.clocks_at = Some(*stamp);
        } else {
            self.clocks_at = None;
        }
        if let Some(clock) = self.clocks.last_mut() {
            clock.observe(stamp, line);
        }
        // Windows of pause time move with the log's clock, pauses or not.
        if let Some(at) = clock_ns(stamp) {
            self.windows.tick(at);
        }
        if let Some(u) = stamp.uptime_ns {
            self.uptime.include(u);
        }
    }

    /// Counts `lines` lines towards their file's format, unless they are blank.
    pub(super) fn count_format(&mut self, format: Format, stamp: &Stamp, record: bool, lines: u64) {
        if record || !format.is_blank(stamp) {
            if let Some(counts) = self.format_counts.last_mut() {
                counts[format as usize] += lines;
            }
        }
    }

    /// `text` is the line's beginning, or empty when it was not kept (an unparsed line was
    /// seen before it).
    pub(super) fn unparsed_line(&mut self, text: &[u8], number: u64) {
        let fi = self.files.len() - 1;
        self.unparsed += 1;
        self.files[fi].unparsed_lines += 1;
        if self.first_unparsed.is_none() {
            let text: String = String::from_utf8_lossy(text)
                .chars()
                .map(|c| if c.is_control() { '?' } else { c })
                .collect();
            self.first_unparsed = Some(UnparsedLine {
                file: self.files[fi].file.clone(),
                line: number,
                text,
            });
        }
    }

    pub(super) fn parsed(&mut self, p: Box<Parsed>, line: u64) {
        let record = !matches!(p.record, Record::Other);
        self.observe(p.format, &p.stamp, record, line, 1);
        if !matches!(p.record, Record::SafepointTimeout(_)) {
            self.timeouts.other_record();
        }
        let mut p = match PauseRecord::of(p) {
            Ok(mut pause) => {
                let failed = self.evacuation_failed_gc_id;
                if pause.gc_id.is_some() && pause.gc_id == failed {
                    pause.failures.add(Failure::Evacuation);
                }
                return self.pause_line(pause, line);
            }
            Err(p) => p,
        };
        let fi = self.files.len() - 1;
        let stamp = p.stamp;
        // The usual records are taken out of the box by their fields: moving the whole
        // record out (232 bytes, sized by a pause's) cost a call to `memcpy` a line.
        match &mut p.record {
            Record::Other => return self.spent.spend(p),
            Record::Cpu { gc_id, cpu } => {
                let (gc_id, cpu) = (*gc_id, *cpu);
                self.spent.spend(p);
                return self.cpu_line(gc_id, cpu);
            }
            Record::DetailsHeap { heap, young } => {
                let (heap, young) = (*heap, *young);
                self.spent.spend(p);
                return self.details_heap(heap, young);
            }
            Record::Safepoint(sp) => {
                let sp = Safepoint {
                    operation: sp.operation.take(),
                    ..*sp
                };
                self.spent.spend(p);
                return self.safepoint_line(sp, stamp, fi, line);
            }
            _ => {}
        }
        let record = std::mem::replace(&mut p.record, Record::Other);
        self.spent.spend(p);
        match record {
            Record::Pause(_) => unreachable!("a pause goes to pause_line"),
            Record::Other
            | Record::Cpu { .. }
            | Record::DetailsHeap { .. }
            | Record::Safepoint(_) => unreachable!("the usual records are taken out above"),
            Record::SafepointTimeout(timeout) => {
                let file = self.files[fi].file.clone();
                self.timeouts
                    .line(timeout, stamp, &file, line, self.opts.evidence);
            }
            Record::PauseStart { gc_id } => {
                self.files_pause_starts[fi] = true;
                self.open_pauses.begin(gc_id);
            }
            Record::SafepointBegin(op) => self.pending_operation = Some(op),
            Record::SafepointStatistics(mut sp) => {
                sp.start = stamp;
                self.safepoint(sp, fi, line, Series::Statistics, None);
            }
            Record::CpuLoad(load) => {
                let keep = self.opts.evidence;
                let at = clock_ns(&stamp);
                self.rules
                    .observe(Watch::CpuLoad, |rule| rule.cpu_load(at, load, keep));
            }
            Record::Stall(stall) => self.stall(stall, stamp, fi, line),
            Record::DroppedMessages(count) => {
                self.first_drop_line.get_or_insert(line);
                self.files[fi].dropped_messages += count;
            }
            Record::OutOfMemory(error) => {
                let seen = Seen {
                    item: &error,
                    start: stamp,
                    file: &self.files[fi].file,
                    line,
                    keep: self.opts.evidence,
                    thresholds: &self.opts.thresholds,
                };
                self.rules
                    .observe(Watch::OutOfMemory, |rule| rule.out_of_memory(&seen));
            }
            Record::Cycle(cycle) => {
                if let Some(heap) = cycle.heap {
                    self.heap_sample(&stamp, heap, &cycle.name, Some(cycle.gc_id));
                }
                if let Some(ns) = cycle.duration_ns {
                    self.memory.cycle(&cycle.name, ns);
                }
            }
            Record::ToSpaceExhausted { gc_id } => {
                self.evacuation_failed_gc_id = Some(gc_id);
            }
            Record::OldGeneration {
                gc_id,
                change,
                collector,
            } => {
                self.jvm.told(Some(collector));
                self.old_generation = Some((gc_id, change));
            }
            header @ (Record::Version(_)
            | Record::Collector(_)
            | Record::Flags(_)
            | Record::RegionSize(_)) => self.header(header, fi),
        }
    }

    /// A safepoint line (stopped time, `Safepoint "..."`) written at `end`. Inlined: most
    /// lines of a log of safepoints are one.
    #[inline(always)]
    fn safepoint_line(&mut self, mut sp: Safepoint, end: Stamp, fi: usize, line: u64) {
        // A safepoint ends every pause inside it: a pause still waiting for the pause it
        // seemed nested in was not nested.
        self.release_nested();
        sp.start = end.minus(sp.total_ns);
        self.clocks[fi].extend(&sp.start, &end);
        if sp.operation.is_none() {
            sp.operation = self.pending_operation.take().map(Into::into);
        }
        self.files[fi].safepoints += 1;
        let held_up_by = self.timeouts.take_for_safepoint(self.opts.evidence);
        self.safepoint(sp, fi, line, Series::Lines, held_up_by);
    }

    /// The JVM's header: version, collector, options, G1's region size.
    fn header(&mut self, record: Record, fi: usize) {
        self.header_lines[fi] += 1;
        match record {
            Record::RegionSize(bytes) => self.region_size = Some(bytes),
            stated => self.jvm.header(stated),
        }
    }

    /// A `gc+cpu` line: the CPU times of the pause of `gc_id` waiting for them.
    fn cpu_line(&mut self, gc_id: Option<u64>, cpu: Cpu) {
        // The nested pause's own CPU line: kept in case its outer pause never ends.
        if let Some(nested) = self.nested.as_mut().filter(|n| n.pause.gc_id == gc_id) {
            nested.pause.cpu.get_or_insert(cpu);
        } else if let Some(pending) = self
            .pending
            .iter_mut()
            .rev()
            // Without GC ids (JDK 8), the line is the last pause's: those before it that
            // wait for their safepoint had their own.
            .take(if gc_id.is_some() { usize::MAX } else { 1 })
            .find(|pp| pp.pause.gc_id == gc_id && pp.pause.cpu.is_none())
        {
            // The pause just before it: G1's `Pause Cleanup` has its own line after its
            // GC id's `Pause Remark` had one.
            pending.pause.cpu = Some(cpu);
        } else if gc_id.is_none() && self.pending.is_empty() {
            // A JDK 8 `[Times: ...]` line with no pause before it.
            self.lost_gc = true;
        }
    }

    /// A JDK 8 detail line after its pause's line: the pause is counted, its heap sample is
    /// taken now.
    fn details_heap(&mut self, heap: HeapChange, young: HeapChange) {
        // Only JDK 7-8 G1 prints `[Eden: ... Survivors: ... Heap: ...]`.
        self.jvm.told(Some(Collector::G1));
        self.lost_gc |= self.pending.is_empty();
        let pause = self
            .pending
            .last_mut()
            .map(|pp| &mut pp.pause)
            .filter(|pause| pause.heap.is_none());
        if let Some(pause) = pause {
            pause.heap = Some(heap);
            pause.young = Some(young);
            let at = clock_ns(&pause.start);
            // A mixed collection frees old regions too: what it promoted is unknown.
            let mixed = pause.name.contains("mixed");
            // `heap_sample`, with the pause's name copied only for a sink: the pause is
            // borrowed where it waits.
            self.memory.heap(at, heap);
            if self.sink.is_some() {
                let (start, name, gc_id) = (pause.start, pause.name.clone(), pause.gc_id);
                self.heap_to_sink(&start, heap, &name, gc_id);
            }
            if !mixed {
                self.memory.young(at, young, heap);
            }
        }
    }

    /// A ZGC stall ending at `end`.
    fn stall(&mut self, stall: Stall, end: Stamp, fi: usize, line: u64) {
        let stats = match stall.kind {
            StallKind::Allocation => &mut self.allocation_stalls,
            StallKind::Relocation => &mut self.relocation_stalls,
        };
        stats.record(&stall.thread, stall.duration_ns);
        let seen = Seen {
            item: &stall,
            start: end.minus(stall.duration_ns),
            file: &self.files[fi].file,
            line,
            keep: self.opts.evidence,
            thresholds: &self.opts.thresholds,
        };
        self.rules.observe(Watch::Stall, |rule| rule.stall(&seen));
    }
}
