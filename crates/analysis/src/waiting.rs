//! GC pauses waiting for the stop they ran in: the box a pause line's record stays in
//! until it is committed, and the view the rules get of the pauses of one stop. Below both
//! the analyzer, which keeps them, and the rules, which read them.

use std::ops::{Deref, DerefMut};

use pauselab_pause::record::{Format, GcPause, Parsed, Record, Stamp};
use pauselab_pause::recycle;

/// A pause line's record, kept in the box it was read into: a pause is a few hundred bytes,
/// and it goes from its line through the nesting check to the pauses waiting for their
/// safepoint, where moving the box moves a pointer.
pub(crate) struct PauseRecord(Box<Parsed>);

impl PauseRecord {
    /// `parsed` as a pause record, or back as it was when its record is no pause.
    pub(crate) fn of(parsed: Box<Parsed>) -> Result<Self, Box<Parsed>> {
        match parsed.record {
            Record::Pause(_) => Ok(PauseRecord(parsed)),
            _ => Err(parsed),
        }
    }

    /// The stamp of its line.
    pub(crate) fn stamp(&self) -> Stamp {
        self.0.stamp
    }

    pub(crate) fn format(&self) -> Format {
        self.0.format
    }

    /// Done with: its box goes back to be filled again (see [`recycle`]).
    pub(crate) fn spend(self, spent: &mut recycle::SpentBoxes) {
        spent.spend(self.0);
    }
}

impl Deref for PauseRecord {
    type Target = GcPause;

    fn deref(&self) -> &GcPause {
        match &self.0.record {
            Record::Pause(pause) => pause,
            _ => unreachable!("PauseRecord::of keeps pauses only"),
        }
    }
}

impl DerefMut for PauseRecord {
    fn deref_mut(&mut self) -> &mut GcPause {
        match &mut self.0.record {
            Record::Pause(pause) => pause,
            _ => unreachable!("PauseRecord::of keeps pauses only"),
        }
    }
}

/// A GC pause waiting for its `gc+cpu` line or its safepoint line.
pub(crate) struct Pending {
    pub(crate) pause: PauseRecord,
    pub(crate) file: usize,
    pub(crate) line: u64,
    pub(crate) ttsp_ns: Option<u64>,
    pub(crate) stopped_ns: Option<u64>,
}

/// The GC pauses that ran in one stop, as the rules see them: the pauses that waited for
/// its safepoint, read where they wait.
#[derive(Clone, Copy)]
pub(crate) struct StopPauses<'a>(&'a [Pending]);

impl<'a> StopPauses<'a> {
    /// The pauses waiting in `pending`.
    pub(crate) fn of(pending: &'a [Pending]) -> Self {
        StopPauses(pending)
    }

    pub(crate) fn is_empty(self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn iter(self) -> impl Iterator<Item = &'a GcPause> {
        self.0.iter().map(|pp| &*pp.pause)
    }
}
