//! Several [`PauseSink`]s behind the one an [`Analyzer`](crate::Analyzer) takes.

use pauselab_pause::record::GcPause;
use pauselab_pause::PauseEvent;

use crate::analyzer::{HeapSample, PauseSink};

/// Hands every pause, heap sample and safepoint to each of its sinks, in the order they
/// were added.
#[derive(Default)]
pub struct Tee<'a> {
    sinks: Vec<&'a mut dyn PauseSink>,
}

impl<'a> Tee<'a> {
    /// Adds `sink` when there is one.
    pub fn with(mut self, sink: Option<&'a mut dyn PauseSink>) -> Self {
        self.sinks.extend(sink);
        self
    }

    /// No sink was added: the analyzer needs none.
    pub fn is_empty(&self) -> bool {
        self.sinks.is_empty()
    }
}

impl PauseSink for Tee<'_> {
    fn pause(&mut self, event: &PauseEvent) {
        self.sinks.iter_mut().for_each(|sink| sink.pause(event));
    }

    fn gc_pause(&mut self, event: &PauseEvent, pause: &GcPause) {
        self.sinks
            .iter_mut()
            .for_each(|sink| sink.gc_pause(event, pause));
    }

    fn heap(&mut self, sample: &HeapSample) {
        self.sinks.iter_mut().for_each(|sink| sink.heap(sample));
    }

    fn safepoint(&mut self, event: &PauseEvent, statistics: bool) {
        self.sinks
            .iter_mut()
            .for_each(|sink| sink.safepoint(event, statistics));
    }
}
