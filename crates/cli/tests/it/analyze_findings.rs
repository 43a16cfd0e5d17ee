//! Findings that only a rare log shows, on logs shaped as HotSpot writes them.

use crate::analyze_support;

use analyze_support::{analyze_json, fresh_dir};

/// JDK 6 and 7 time a collection from after its event's first words are written, and its
/// CPU times from before. A write of `100.000: [GC ` that a busy disk held 4.5 s leaves
/// the young generation's stamp 4.5 s after the event's, `real` 4.5 s over the duration,
/// and the GC threads' CPU time over the collection's own: the stop outside the
/// collection is `real_gt_gc`, not GC threads off-CPU. The other events' real time is
/// their duration rounded to 10 ms, which is no stop outside.
#[test]
fn a_stop_before_the_collection_began_is_real_gt_gc_not_real_gt_cpu() {
    let dir = fresh_dir("analyze-findings", "real-gt-gc");
    let log = dir.join("gc.log");
    let event = |at: f64, young_at: f64, young_s: f64, total_s: f64, real: &str| {
        format!(
            "{at:.3}: [GC {young_at:.3}: [ParNew: 503700K->15616K(516864K), {young_s:.7} secs] \
             503700K->23381K(7848704K), {total_s:.7} secs] [Times: user=2.63 sys=0.26, real={real} secs] \n"
        )
    };
    let text = [
        event(90.0, 90.0, 0.2016233, 0.2024517, "0.20"),
        event(100.0, 104.5, 0.2115259, 0.2125976, "4.72"),
        event(110.0, 110.0, 0.2455401, 0.2461144, "0.25"),
    ]
    .concat();
    std::fs::write(&log, text).unwrap();
    let json = analyze_json(&[log]);
    assert_eq!(json["pauses"]["count"], 3, "{json}");
    // The pause is what the collector measured.
    assert_eq!(json["pauses"]["max_ms"], 246.1144, "{json}");
    let findings = json["findings"].as_array().unwrap();
    let rule = |id: &str| findings.iter().find(|f| f["rule"] == id);
    let outside = rule("real_gt_gc").expect("real_gt_gc");
    assert_eq!(outside["count"], 1, "{outside}");
    assert_eq!(outside["severity"], "critical", "{outside}");
    assert_eq!(outside["evidence"][0]["uptime_s"], 100.0, "{outside}");
    assert_eq!(
        outside["evidence"][0]["detail"],
        "real 4720 ms, the collection 212.6 ms: 4.507 s stopped outside it"
    );
    assert!(rule("real_gt_cpu").is_none(), "{json}");
}
