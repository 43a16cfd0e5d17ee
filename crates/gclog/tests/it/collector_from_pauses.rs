//! Logs that do not name their collector (a JDK 8 log without its flags line, a rotated
//! unified log's later file): the pauses name it where only one collector prints them, and
//! stay silent where several do.

use crate::support;

fn collector(log: &str) -> Option<String> {
    support::analyze_text(log).jvm.collector
}

#[test]
fn pauses_only_one_collector_prints_name_it() {
    // A rotated G1 log: no `Using G1` line, a young collection of G1's own kind.
    let g1 = "\
[120.500s][info][gc] GC(300) Pause Young (Allocation Failure) 100M->20M(512M) 5.000ms
[121.500s][info][gc] GC(301) Pause Young (Concurrent Start) (G1 Humongous Allocation) 120M->30M(512M) 6.000ms
";
    assert_eq!(collector(g1).as_deref(), Some("G1"));
    // JDK 8 G1 concurrent cycle pauses.
    let g1_jdk8 = "\
5.100: [GC remark, 0.0020000 secs]
5.200: [GC cleanup 50M->48M(256M), 0.0010000 secs]
";
    assert_eq!(collector(g1_jdk8).as_deref(), Some("G1"));
    // Only CMS fails with a concurrent mode failure.
    let cms = "\
10.000: [GC (Allocation Failure) 10.000: [ParNew (promotion failed): 300K->300K(300K), 0.1000000 secs]10.100: [CMS (concurrent mode failure): 900K->500K(1000K), 2.0000000 secs] 1200K->500K(1300K), 2.1000000 secs]
";
    assert_eq!(collector(cms).as_deref(), Some("CMS"));
}

#[test]
fn par_new_with_serial_old_is_not_cms() {
    // `-XX:+UseParNewGC` alone (JDK 6 to 8): ParNew's young collections, Serial's full ones
    // (`Tenured`), alone or inside a young collection (gctoolkit's `ParNewSerial` line).
    let full = "\
10.000: [GC 10.000: [ParNew: 4680K->224K(4992K), 0.0009052 secs] 15860K->11421K(16440K), 0.0010000 secs] [Times: user=0.01 sys=0.00, real=0.00 secs]
11.000: [Full GC 11.000: [Tenured: 11421K->7456K(11448K), 0.0679043 secs] 15860K->7456K(16440K), [Perm : 10677K->10677K(21248K)], 0.0689327 secs] [Times: user=0.07 sys=0.00, real=0.07 secs]
";
    assert_eq!(collector(full).as_deref(), Some("ParNew + Serial Old"));
    let inside_young = "\
10.000: [GC 10.000: [ParNew: 4680K->224K(4992K), 0.0009052 secs] 15860K->11421K(16440K), 0.0010000 secs] [Times: user=0.01 sys=0.00, real=0.00 secs]
12.008: [GC 12.008: [ParNew: 4680K->224K(4992K), 0.0009052 secs]12.009: [Tenured: 11421K->7456K(11448K), 0.0679043 secs] 15860K->7456K(16440K), [Perm : 10677K->10677K(21248K)], 0.0689327 secs] [Times: user=0.07 sys=0.00, real=0.07 secs]
";
    assert_eq!(
        collector(inside_young).as_deref(),
        Some("ParNew + Serial Old")
    );
    // CMS's young collections are ParNew's too, its old generation `CMS`.
    let cms = "\
10.000: [GC 10.000: [ParNew: 4680K->224K(4992K), 0.0009052 secs] 15860K->11421K(16440K), 0.0010000 secs] [Times: user=0.01 sys=0.00, real=0.00 secs]
11.000: [Full GC 11.000: [CMS: 11421K->7456K(11448K), 0.0679043 secs] 15860K->7456K(16440K), [CMS Perm : 10677K->10677K(21248K)], 0.0689327 secs] [Times: user=0.07 sys=0.00, real=0.07 secs]
";
    assert_eq!(collector(cms).as_deref(), Some("CMS"));
    // Serial's own young collections are `DefNew`.
    let serial = full.replace("ParNew", "DefNew");
    assert_eq!(collector(&serial).as_deref(), Some("Serial"));
}

#[test]
fn pauses_several_collectors_print_name_none() {
    let any = "\
[120.500s][info][gc] GC(300) Pause Young (Allocation Failure) 100M->20M(512M) 5.000ms
[121.500s][info][gc] GC(301) Pause Full (Allocation Failure) 120M->30M(512M) 60.000ms
";
    assert_eq!(collector(any), None);
}
