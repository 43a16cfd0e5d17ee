//! Boxes of parsed lines filled again rather than freed, so that the thread that analyses
//! a log frees none of the boxes the threads that parse it filled.
//!
//! Several threads parse the chunks of a large log and one thread analyses their lines in
//! order; that thread alone bounds how far more threads can help. A box freed by a thread
//! other than the one that allocated it takes mimalloc's cross-thread path (about 90
//! instructions, an atomic push): a few percent of the analysing thread's work on a JDK 8
//! log. So the analysis [`SpentBoxes::spend`]s a box it is done with into its thread's pool, the
//! chunk reader takes that pool ([`take_pool`]) and gives it to a parsing thread
//! ([`give_pool`]), and that thread fills the boxes again ([`boxed`]), dropping their old
//! contents there.
//! On one thread the pool saves an allocation and a free per record.
//!
//! A box that is never spent is freed as usual: spending is an optimisation, never needed.

use std::cell::RefCell;

use crate::record::Parsed;

/// Most boxes a thread keeps to fill again: about 2.4 MB, besides what their old contents
/// hold. Beyond, spent boxes are freed.
///
/// The bound holds a 1 MiB chunk's records, so that no thread allocates once the pools are
/// full: a chunk of a JDK 7-8 G1 log holds about 2,800 records, one of a unified log of
/// safepoint lines 4,900. With pools of 1,024 boxes, the rest of each chunk's boxes were
/// allocated by a parsing thread and freed by the analysing one, and mimalloc kept the
/// pages of such frees in each parsing thread's heap: with 16 threads, the bench's 1 GB G1
/// log took 66 to 72 MB, a 560 MB log of safepoint lines 91 to 95 MB. With 8,192, 34 MB
/// and 49 to 50 MB (docs/analyze.md, "Pools that hold a chunk").
const MAX_POOL: usize = 8192;

/// Boxes to fill again: the boxes are what is kept, so a vector of them, not of records.
#[allow(clippy::vec_box)]
pub type Pool = Vec<Box<Parsed>>;

std::thread_local! {
    /// Boxes this thread may fill again.
    static POOL: RefCell<Pool> = const { RefCell::new(Vec::new()) };
}

/// `parsed` in a box of this thread's pool, or in a new one when the pool is empty.
#[inline]
pub fn boxed(parsed: Parsed) -> Box<Parsed> {
    let spent = POOL.with_borrow_mut(|pool| {
        let spent = pool.pop();
        if let Some(next) = pool.last() {
            prefetch_for_write(next);
        }
        spent
    });
    match spent {
        Some(mut spent) => {
            *spent = parsed;
            spent
        }
        None => Box::new(parsed),
    }
}

/// Asks the processor for the cache lines of the box filled next, to be written: the
/// thread that analysed its last record holds them.
#[inline(always)]
fn prefetch_for_write(next: &Parsed) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_ET0};
        let start: *const u8 = std::ptr::from_ref(next).cast();
        for line in (0..std::mem::size_of::<Parsed>()).step_by(64) {
            // SAFETY: a prefetch reads nothing and cannot fault.
            unsafe { _mm_prefetch::<_MM_HINT_ET0>(start.wrapping_add(line).cast()) };
        }
    }
}

/// Boxes their user is done with, handed to its thread's pool a batch at a time: spent one
/// by one, each box reached the thread-local pool on its own (40 instructions a record).
/// What is held when the holder is dropped is freed.
#[derive(Default)]
pub struct SpentBoxes(Pool);

impl SpentBoxes {
    /// Boxes held before they are handed over: few, so that the box filled next is one
    /// analysed a few records before, still in the cache (batches of 64 missed the first
    /// level of the data cache 40 % more often on a Parallel log, by `cachegrind`).
    const BATCH: usize = 8;

    /// `parsed`, done with: kept in this thread's pool to be filled again, or freed when the
    /// pool is full, with the batch it joins.
    #[inline]
    pub fn spend(&mut self, parsed: Box<Parsed>) {
        self.0.push(parsed);
        if self.0.len() >= Self::BATCH {
            self.hand_over();
        }
    }

    /// Every box held, into this thread's pool as far as it has room.
    #[inline(never)]
    pub fn hand_over(&mut self) {
        POOL.with_borrow_mut(|pool| {
            let keep = self.0.len().min(MAX_POOL.saturating_sub(pool.len()));
            pool.extend(self.0.drain(..keep));
        });
        // Those the pool has no room for are freed, outside the borrow.
        self.0.clear();
    }
}

/// This thread's pool, emptied: for another thread to fill (see [`give_pool`]).
pub fn take_pool() -> Pool {
    POOL.with_borrow_mut(std::mem::take)
}

/// Adds `boxes` (another thread's pool) to this thread's, up to its bound; the rest are
/// freed.
pub fn give_pool(mut boxes: Pool) {
    let rest = POOL.with_borrow_mut(|pool| {
        if pool.is_empty() {
            // The usual case: the vector itself becomes the pool.
            boxes.truncate(MAX_POOL);
            std::mem::swap(pool, &mut boxes);
        } else {
            let room = MAX_POOL.saturating_sub(pool.len());
            let keep = boxes.len().min(room);
            pool.extend(boxes.drain(..keep));
        }
        boxes
    });
    drop(rest);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Format, Record, Stamp};

    fn line(n: u64) -> Parsed {
        Parsed {
            format: Format::Jdk8,
            stamp: Stamp {
                uptime_ns: Some(n),
                ..Stamp::default()
            },
            record: Record::DroppedMessages(n),
        }
    }

    #[test]
    fn a_spent_box_is_filled_again_with_the_new_record() {
        let first = boxed(line(1));
        let address = &*first as *const Parsed;
        let mut spent = SpentBoxes::default();
        spent.spend(first);
        let third = boxed(line(3));
        assert_ne!(&*third as *const Parsed, address, "held until handed over");
        spent.hand_over();
        let second = boxed(line(2));
        assert_eq!(
            &*second as *const Parsed, address,
            "the spent box is used again"
        );
        assert_eq!(second.stamp.uptime_ns, Some(2));
        assert!(matches!(second.record, Record::DroppedMessages(2)));
    }

    #[test]
    fn a_full_batch_is_handed_over_by_itself() {
        take_pool();
        let mut spent = SpentBoxes::default();
        for n in 0..SpentBoxes::BATCH as u64 - 1 {
            spent.spend(Box::new(line(n)));
        }
        assert!(take_pool().is_empty(), "a batch is held until it is full");
        spent.spend(Box::new(line(0)));
        assert_eq!(
            take_pool().len(),
            SpentBoxes::BATCH,
            "a full batch is in the pool"
        );
    }

    #[test]
    fn a_pool_handed_to_another_thread_is_filled_there_and_stays_bounded() {
        let mut spent = SpentBoxes::default();
        for n in 0..MAX_POOL as u64 + 10 {
            spent.spend(Box::new(line(n)));
        }
        spent.hand_over();
        let pool = take_pool();
        assert_eq!(
            pool.len(),
            MAX_POOL,
            "a full pool frees what it cannot keep"
        );
        let addresses: Vec<*const Parsed> = pool.iter().map(|b| &**b as *const Parsed).collect();
        let filled = std::thread::spawn(move || {
            give_pool(pool);
            give_pool((0..5).map(|n| Box::new(line(n))).collect());
            let again = boxed(line(7));
            (
                &*again as *const Parsed as usize,
                again.stamp.uptime_ns,
                take_pool().len(),
            )
        })
        .join()
        .unwrap();
        assert!(addresses.contains(&(filled.0 as *const Parsed)));
        assert_eq!(filled.1, Some(7));
        assert_eq!(filled.2, MAX_POOL - 1, "the pool keeps its bound");
        assert!(take_pool().is_empty(), "this thread's pool was handed over");
    }
}
