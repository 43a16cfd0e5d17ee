//! Recordings of real JVMs (JDK 17 and 25; G1, Parallel, ZGC), each read by pauselab and
//! by the JDK's own `jfr print --json`, must agree on every GC pause, safepoint and
//! allocation stall; and the GC log written alongside must show the same GC pauses.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use pauselab_jfr::{Assembler, EventData, Item, Recording};
use serde_json::Value;

use crate::support;

use support::{cached_jdk, instant_ns, iso_ns, record_with, Run, JDK17, JDK25};

#[derive(Debug, Default, PartialEq)]
struct Totals {
    count: u64,
    total_ns: u64,
}

impl Totals {
    fn add(&mut self, ns: u64) {
        self.count += 1;
        self.total_ns += ns;
    }

    /// Same count, and sums within 1 us per event (the JSON rounds to whole ns of its
    /// own tick conversion).
    fn assert_matches(&self, reference: &Totals, what: &str) {
        assert_eq!(self.count, reference.count, "{what}: count");
        let slack = 1000 * self.count.max(1);
        assert!(
            self.total_ns.abs_diff(reference.total_ns) <= slack,
            "{what}: total {} ns, jfr print says {} ns",
            self.total_ns,
            reference.total_ns
        );
    }
}

struct Reference {
    pauses: Totals,
    gc_ids: BTreeSet<u64>,
    safepoints: Totals,
    ttsp: Totals,
    stalls: Totals,
}

/// What the JDK's `jfr print --json` says, computed here from its JSON alone.
fn reference(run: &Run) -> Reference {
    let out = Command::new(run.jdk.join("bin/jfr"))
        .args(["print", "--json", "--events"])
        .arg("jdk.GCPhasePause,jdk.SafepointBegin,jdk.SafepointStateSynchronization,jdk.SafepointEnd,jdk.ExecuteVMOperation,jdk.ZAllocationStall")
        .arg(&run.jfr)
        .output()
        .unwrap();
    assert!(out.status.success());
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut r = Reference {
        pauses: Totals::default(),
        gc_ids: BTreeSet::new(),
        safepoints: Totals::default(),
        ttsp: Totals::default(),
        stalls: Totals::default(),
    };
    // Safepoint id -> (begin start, latest end seen) over its events.
    let mut spans: BTreeMap<u64, (Option<i64>, i64)> = BTreeMap::new();
    // Safepoint id -> time to safepoint: its synchronization event's duration, else its
    // begin event's (which lasts until the threads stopped and the cleanup ran).
    let mut reaching: BTreeMap<u64, (Option<u64>, Option<u64>)> = BTreeMap::new();
    for ev in json["recording"]["events"].as_array().unwrap() {
        let v = &ev["values"];
        let start = instant_ns(v["startTime"].as_str().unwrap());
        let dur = iso_ns(v["duration"].as_str().unwrap());
        let end = start + dur as i64;
        let id = v["safepointId"].as_u64();
        match ev["type"].as_str().unwrap() {
            "jdk.GCPhasePause" => {
                r.pauses.add(dur);
                r.gc_ids.insert(v["gcId"].as_u64().unwrap());
            }
            "jdk.ZAllocationStall" => r.stalls.add(dur),
            "jdk.SafepointStateSynchronization" => {
                reaching.entry(id.unwrap()).or_default().0 = Some(dur);
            }
            "jdk.SafepointBegin" => {
                reaching.entry(id.unwrap()).or_default().1 = Some(dur);
                let e = spans.entry(id.unwrap()).or_insert((None, end));
                e.0 = Some(start);
                e.1 = e.1.max(end);
            }
            "jdk.SafepointEnd" => {
                let e = spans.entry(id.unwrap()).or_insert((None, end));
                e.1 = e.1.max(end);
            }
            "jdk.ExecuteVMOperation" if v["safepoint"].as_bool() == Some(true) => {
                let e = spans.entry(id.unwrap()).or_insert((None, end));
                e.1 = e.1.max(end);
            }
            _ => {}
        }
    }
    for (sync, begin) in reaching.values() {
        if let Some(t) = sync.or(*begin) {
            r.ttsp.add(t);
        }
    }
    for (begin, end) in spans.values() {
        if let Some(b) = begin {
            r.safepoints.add((end - b) as u64);
        }
    }
    r
}

/// GC pause lines of the unified GC log for the given GC ids (`GC(7) Pause Young ...
/// 3.2ms`, `GC(3) y: Pause Mark Start 0.01ms`), counted from the text.
fn log_pauses(log: &Path, gc_ids: &BTreeSet<u64>) -> u64 {
    let text = std::fs::read_to_string(log).unwrap();
    text.lines()
        .filter(|l| l.trim_end().ends_with("ms"))
        .filter_map(|l| {
            let at = l.find("] GC(")? + 5;
            let close = l[at..].find(')')? + at;
            let id: u64 = l[at..close].parse().ok()?;
            let rest = l[close + 1..].trim_start();
            // Generational ZGC: `Y:`/`O:` (major) and `y:` (minor) generation prefixes.
            let rest = match rest.as_bytes() {
                [g, b':', b' ', ..] if b"YyOo".contains(g) => &rest[3..],
                _ => rest,
            };
            (rest.starts_with("Pause ") && gc_ids.contains(&id)).then_some(())
        })
        .count() as u64
}

struct Ours {
    pauses: Totals,
    safepoints: Totals,
    ttsp: Totals,
    stalls: Totals,
}

fn ours(path: &Path) -> Ours {
    let mut rec = Recording::open(path).unwrap();
    let mut asm = Assembler::new();
    let mut items = Vec::new();
    let mut stalls = Totals::default();
    while let Some(chunk) = rec.next_chunk().unwrap() {
        for ev in &chunk.events {
            if let EventData::ZAllocationStall { .. } = ev.data {
                stalls.add(ev.duration_ns);
            }
        }
        items.extend(asm.chunk(chunk));
    }
    let (rest, extras) = asm.finish();
    items.extend(rest);
    assert_pauses_placed(&items);
    let mut o = Ours {
        pauses: Totals::default(),
        safepoints: Totals::default(),
        ttsp: Totals::default(),
        stalls,
    };
    let mut item_stalls = Totals::default();
    for item in items {
        match item {
            Item::Pause(p) => o.pauses.add(p.duration_ns),
            Item::AllocationStall { duration_ns, .. } => item_stalls.add(duration_ns),
            Item::Safepoint(s) => {
                o.safepoints.add(s.total_ns);
                if let Some(t) = s.ttsp_ns {
                    o.ttsp.add(t);
                }
            }
            _ => {}
        }
    }
    let summary = extras
        .allocation_stalls
        .map(|s| s.summary.count)
        .unwrap_or(0);
    assert_eq!(summary, o.stalls.count, "stall summary");
    item_stalls.assert_matches(&o.stalls, "allocation stall items");
    o
}

/// Each pause comes after the safepoint before it and before the one it ran in, which it
/// names and whose span holds its start; a pause that names none started in no recorded
/// safepoint. The analysis gives a pause its safepoint by this order.
fn assert_pauses_placed(items: &[Item]) {
    let safepoints: Vec<(usize, &pauselab_jfr::Safepoint)> = items
        .iter()
        .enumerate()
        .filter_map(|(at, item)| match item {
            Item::Safepoint(s) => Some((at, s)),
            _ => None,
        })
        .collect();
    for (at, item) in items.iter().enumerate() {
        let Item::Pause(p) = item else { continue };
        let holds = |s: &pauselab_jfr::Safepoint| {
            s.start_epoch_ns <= p.start_epoch_ns && p.start_epoch_ns <= s.end_epoch_ns()
        };
        match p.in_safepoint {
            Some(id) => {
                let next = safepoints.iter().find(|(sat, _)| *sat > at);
                let (_, s) = next.unwrap_or_else(|| panic!("no safepoint after {p:?}"));
                assert_eq!(
                    s.id, id,
                    "{p:?} is not followed by its safepoint, but {s:?}"
                );
                assert!(holds(s), "{p:?} did not start in {s:?}");
            }
            None => {
                let around = safepoints.iter().find(|(_, s)| holds(s));
                assert!(around.is_none(), "{p:?} started in {around:?}");
            }
        }
    }
}

/// With the settings the JDK uses when none are given, most safepoints are not recorded
/// and the last second's are written after the pauses: each pause is still placed in the
/// safepoint it ran in, and every pause is read.
fn check_default_settings(jdk: &Path, gc: &str) {
    let Some(run) = support::record_default(jdk, &[gc], 1500) else {
        return;
    };
    let r = reference(&run);
    let o = ours(&run.jfr);
    assert!(r.pauses.count > 0, "{gc}: the workload made no GC pause");
    o.pauses.assert_matches(&r.pauses, "GC pauses");
}

#[test]
fn jdk17_parallel_default_settings() {
    check_default_settings(Path::new(JDK17), "-XX:+UseParallelGC");
}

#[test]
fn jdk25_g1_default_settings() {
    check_default_settings(Path::new(JDK25), "-XX:+UseG1GC");
}

fn check(jdk: &Path, gc: &str) {
    check_with(jdk, &[gc]);
}

fn check_with(jdk: &Path, flags: &[&str]) {
    let Some(run) = record_with(jdk, flags) else {
        return;
    };
    let (jdk, gc) = (jdk.display(), flags.join(" "));
    let r = reference(&run);
    let o = ours(&run.jfr);
    assert!(
        r.pauses.count > 0,
        "{jdk} {gc}: the workload made no GC pause"
    );
    assert!(r.safepoints.count > 0, "{jdk} {gc}: no safepoint recorded");
    o.pauses.assert_matches(&r.pauses, "GC pauses");
    o.safepoints.assert_matches(&r.safepoints, "safepoints");
    o.ttsp.assert_matches(&r.ttsp, "time to safepoint");
    o.stalls.assert_matches(&r.stalls, "allocation stalls");
    assert_eq!(
        log_pauses(&run.log, &r.gc_ids),
        o.pauses.count,
        "{jdk} {gc}: the GC log and the recording disagree on the pauses"
    );
}

#[test]
fn jdk11_g1() {
    if let Some(jdk) = cached_jdk(11) {
        check(&jdk, "-XX:+UseG1GC");
    }
}

#[test]
fn jdk11_parallel() {
    if let Some(jdk) = cached_jdk(11) {
        check(&jdk, "-XX:+UseParallelGC");
    }
}

#[test]
fn jdk11_zgc() {
    if let Some(jdk) = cached_jdk(11) {
        check_with(&jdk, &["-XX:+UnlockExperimentalVMOptions", "-XX:+UseZGC"]);
    }
}

#[test]
fn jdk17_g1() {
    check(Path::new(JDK17), "-XX:+UseG1GC");
}

#[test]
fn jdk17_parallel() {
    check(Path::new(JDK17), "-XX:+UseParallelGC");
}

#[test]
fn jdk17_zgc() {
    check(Path::new(JDK17), "-XX:+UseZGC");
}

#[test]
fn jdk21_g1() {
    if let Some(jdk) = cached_jdk(21) {
        check(&jdk, "-XX:+UseG1GC");
    }
}

#[test]
fn jdk21_parallel() {
    if let Some(jdk) = cached_jdk(21) {
        check(&jdk, "-XX:+UseParallelGC");
    }
}

#[test]
fn jdk21_zgc() {
    if let Some(jdk) = cached_jdk(21) {
        check(&jdk, "-XX:+UseZGC");
    }
}

#[test]
fn jdk21_generational_zgc() {
    if let Some(jdk) = cached_jdk(21) {
        check_with(&jdk, &["-XX:+UseZGC", "-XX:+ZGenerational"]);
    }
}

#[test]
fn jdk25_g1() {
    check(Path::new(JDK25), "-XX:+UseG1GC");
}

#[test]
fn jdk25_parallel() {
    check(Path::new(JDK25), "-XX:+UseParallelGC");
}

#[test]
fn jdk25_generational_zgc() {
    check(Path::new(JDK25), "-XX:+UseZGC");
}
