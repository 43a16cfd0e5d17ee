//! A JDK 8 G1 log with -XX:+PrintGCDetails gives its heap on a detail line after the pause
//! (`[Eden: ... Survivors: ... Heap: before(cap)->after(cap)]`): each young collection is a
//! heap sample, and what it promoted is eden + survivors freed minus heap freed.

use crate::support;

const LOG: &str = "\
CommandLine flags: -XX:+PrintGCDetails -XX:+PrintGCTimeStamps -XX:+UseG1GC
3.100: [GC pause (G1 Evacuation Pause) (young), 0.0100000 secs]
   [Parallel Time: 9.5 ms, GC Workers: 2]
      [GC Worker Start (ms): Min: 3100.0, Avg: 3100.0, Max: 3100.0, Diff: 0.0]
   [Code Root Fixup: 0.0 ms]
   [Eden: 64.0M(64.0M)->0.0B(56.0M) Survivors: 0.0B->8192.0K Heap: 64.0M(512.0M)->12.0M(512.0M)]
 [Times: user=0.02 sys=0.00, real=0.01 secs]
5.200: [GC pause (G1 Evacuation Pause) (young), 0.0200000 secs]
   [Eden: 56.0M(56.0M)->0.0B(56.0M) Survivors: 8192.0K->8192.0K Heap: 68.0M(512.0M)->20.0M(512.0M)]
 [Times: user=0.04 sys=0.00, real=0.02 secs]
7.300: [GC pause (G1 Evacuation Pause) (mixed), 0.0300000 secs]
   [Eden: 56.0M(56.0M)->0.0B(56.0M) Survivors: 8192.0K->8192.0K Heap: 76.0M(512.0M)->16.0M(512.0M)]
 [Times: user=0.06 sys=0.00, real=0.03 secs]
";

#[test]
fn each_collection_is_a_heap_sample_and_young_ones_give_promotion() {
    let report = support::analyze_text(LOG);
    assert_eq!(report.pauses.summary.count, 3);
    assert_eq!(report.unparsed_lines, 0);
    let memory = serde_json::to_value(&report.memory).unwrap();
    assert_eq!(memory["heap_samples"], 3);
    assert_eq!(memory["heap_after_gc_max_bytes"], 20u64 << 20);
    assert_eq!(memory["heap_after_gc_last_bytes"], 16u64 << 20);
    assert_eq!(memory["heap_capacity_max_bytes"], 512u64 << 20);
    // Young 1: young 64M -> 8M (56M freed), heap 64M -> 12M (52M freed): 4M promoted.
    // Young 2: young 64M -> 8M (56M freed), heap 68M -> 20M (48M freed): 8M promoted.
    // The mixed collection frees old regions too, so it gives no promotion.
    assert_eq!(memory["promoted_bytes"], 12u64 << 20);
}
