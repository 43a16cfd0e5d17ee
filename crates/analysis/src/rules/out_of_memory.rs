//! `out_of_memory`: the JVM threw `OutOfMemoryError`, which every pause statistic hides: the
//! collections before it may all look short.

use pauselab_pause::record::OutOfMemory;

use crate::evidence::RuleTracker;
use crate::rules::causes::{rank, Candidate};
use crate::rules::finding::{Finding, Severity};
use crate::rules::rule::{Context, Rule, Seen, Watch};

pub(crate) const ID: &str = "out_of_memory";
pub(crate) const WATCHES: &[Watch] = &[Watch::OutOfMemory];

#[derive(Default)]
struct OutOfMemoryRule {
    tracker: RuleTracker,
    /// What ran out, with how many errors said so (at most a few kinds exist).
    what: Vec<(String, u64)>,
    /// The thread of the collector's last `Out Of Memory` line, until its exception comes.
    logged_for: Option<Option<String>>,
}

pub(crate) fn start() -> Box<dyn Rule> {
    Box::<OutOfMemoryRule>::default()
}

impl Rule for OutOfMemoryRule {
    fn out_of_memory(&mut self, seen: &Seen<'_, OutOfMemory>) {
        let error = seen.item;
        // ZGC logs `Out Of Memory (main)`, then the thread throws: one error.
        if error.thrown && self.logged_for.take().is_some_and(|t| t == error.thread) {
            return;
        }
        if !error.thrown {
            self.logged_for = Some(error.thread.clone());
        }
        let what = error.what.as_deref().unwrap_or("heap");
        match self.what.iter().position(|(w, _)| w == what) {
            Some(at) => self.what[at].1 += 1,
            None if self.what.len() < 8 => self.what.push((what.to_string(), 1)),
            None => {}
        }
        // Every error weighs the same: the first ones are the evidence.
        self.tracker.hit(1, seen.keep, || {
            let thread = error
                .thread
                .as_deref()
                .map_or(String::new(), |t| format!(" in thread {t}"));
            seen.evidence("OutOfMemoryError".to_string(), format!("{what}{thread}"), 1)
        });
    }

    fn matched(&self, _ctx: &Context<'_>) -> u64 {
        self.tracker.count
    }

    fn finding(&self, ctx: &Context<'_>) -> Option<Finding> {
        let r = self.tracker.fired()?;
        let what = self
            .what
            .iter()
            .map(|(w, n)| format!("{w} x{n}"))
            .collect::<Vec<_>>()
            .join(", ");
        let title = format!("{} OutOfMemoryErrors ({what}): the application ran out of memory", r.count);
        let mut f = Finding::tracked(ID, r, Severity::Critical, title);
        f.excess_total_ms = 0.0;
        f.confidence = "high: the JVM printed the error";
        let said = |word: &str| self.what.iter().any(|(w, _)| w.contains(word));
        let named = |word: &str| {
            let n: u64 = self.what.iter().filter(|(w, _)| w.contains(word)).map(|(_, n)| n).sum();
            format!("the error says {word} x{n}")
        };
        (f.causes, f.fixes) = rank(
            vec![
                Candidate::new("the live set outgrew the heap: a leak, or a heap too small for the load")
                    .fix("-XX:+HeapDumpOnOutOfMemoryError to see what held the heap, then fix the leak or raise -Xmx")
                    .option("-XX:+HeapDumpOnOutOfMemoryError")
                    .weigh_if(said("Java heap space"), 2, || named("Java heap space")),
                Candidate::new("the collector spent nearly all the time collecting and freed little (GC overhead limit exceeded)")
                    .fix("raise -Xmx, or find what fills the old generation (a heap dump)")
                    .weigh_if(said("GC overhead"), 2, || named("GC overhead")),
                Candidate::new("metaspace or compressed class space is full (class loader leak, many generated classes)")
                    .fix("raise -XX:MaxMetaspaceSize, or find the class loader that leaks (jcmd VM.classloader_stats)")
                    .weigh_if(said("Metaspace") || said("class space"), 2, || named("Metaspace")),
                Candidate::new("native memory: direct buffers, or threads the OS would not create")
                    .fix("-XX:MaxDirectMemorySize, thread limits (ulimit -u), -XX:NativeMemoryTracking=summary")
                    .weigh_if(said("Direct buffer") || said("native thread"), 2, || named("Direct buffer")),
            ],
            ctx.flags,
        );
        Some(f)
    }
}
