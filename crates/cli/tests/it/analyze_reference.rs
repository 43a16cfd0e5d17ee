//! The reference logs (a public GC-log corpus, values asserted by GCToolKit's own tests and
//! confirmed by GCViewer): pause counts per kind and pause sums must match exactly.

use crate::analyze_support;

use analyze_support::{analyze_json, shared_gclogs};

fn by_name(json: &serde_json::Value, name: &str) -> u64 {
    json["pauses"]["by_name"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == name)
        .map_or(0, |n| n["count"].as_u64().unwrap())
}

#[test]
fn jdk8_cms_with_defnew() {
    let json = analyze_json(&[shared_gclogs().join("defnew.log.gz")]);
    assert_eq!(by_name(&json, "DefNew"), 19114);
    assert_eq!(by_name(&json, "CMS Initial Mark"), 26);
    assert_eq!(by_name(&json, "CMS Final Remark"), 26);
    assert_eq!(json["pauses"]["count"], 19166);
    let total_s = json["pauses"]["total_ms"].as_f64().unwrap() / 1000.0;
    assert!((total_s - 208.922).abs() < 0.0005, "total {total_s}");
    assert_eq!(json["unparsed_lines"], 0);
    assert_eq!(json["jvm"]["collector"], "CMS");
    // JDK 8 rounds [Times:] to 10 ms: the off-CPU rule must not fire on rounding.
    let off_cpu = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "real_gt_cpu")
        .map_or(0, |f| f["count"].as_u64().unwrap());
    assert!(
        off_cpu < 10,
        "real_gt_cpu fired {off_cpu} times on 10 ms rounding"
    );
}

#[test]
fn jdk11_g1_unified_from_zip() {
    let json = analyze_json(&[shared_gclogs().join("jdk11_details.log.zip")]);
    let young =
        by_name(&json, "Pause Young (Normal)") + by_name(&json, "Pause Young (Prepare Mixed)");
    assert_eq!(young, 9969);
    assert_eq!(by_name(&json, "Pause Young (Mixed)"), 40);
    assert_eq!(by_name(&json, "Pause Young (Concurrent Start)"), 194);
    assert_eq!(by_name(&json, "Pause Full"), 42);
    assert_eq!(by_name(&json, "Pause Remark"), 156);
    assert_eq!(by_name(&json, "Pause Cleanup"), 152);
    assert_eq!(json["pauses"]["count"], 10553);
    let total_s = json["pauses"]["total_ms"].as_f64().unwrap() / 1000.0;
    assert!((total_s - 16.715).abs() < 0.0005, "total {total_s}");
    assert_eq!(json["unparsed_lines"], 0);
    assert_eq!(json["jvm"]["collector"], "G1");
}

#[test]
fn unified_parallel_from_gzip() {
    let json = analyze_json(&[shared_gclogs().join("parallelgc.log.gz")]);
    assert_eq!(by_name(&json, "Pause Young"), 4638);
    assert_eq!(by_name(&json, "Pause Full"), 28);
    assert_eq!(json["pauses"]["count"], 4666);
    let total_s = json["pauses"]["total_ms"].as_f64().unwrap() / 1000.0;
    assert!((total_s - 5.864).abs() < 0.0005, "total {total_s}");
    assert_eq!(json["unparsed_lines"], 0);
}
