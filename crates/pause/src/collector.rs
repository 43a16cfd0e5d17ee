//! One name per garbage collector, whichever source told which collector a JVM runs: the
//! perf counters, the GC log, a JFR recording or a pause's name. Every command prints these
//! names, so `jvms`, `doctor`, `analyze` and `export` never disagree on what a JVM runs.

use std::fmt;

use serde::{Serialize, Serializer};

/// A HotSpot garbage collector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Collector {
    G1,
    Parallel,
    Serial,
    Zgc,
    Shenandoah,
    /// Concurrent Mark Sweep (JDK 8 to 13).
    Cms,
    /// ParNew's young collections with Serial's old generation: `-XX:+UseParNewGC`
    /// without CMS (JDK 6 to 8).
    ParNew,
    /// The no-op collector.
    Epsilon,
}

impl Collector {
    /// Every collector, in the order the docs list them.
    pub const ALL: [Collector; 8] = [
        Collector::G1,
        Collector::Parallel,
        Collector::Serial,
        Collector::Zgc,
        Collector::Shenandoah,
        Collector::Cms,
        Collector::ParNew,
        Collector::Epsilon,
    ];

    /// The name every pauselab command prints.
    pub fn name(self) -> &'static str {
        match self {
            Collector::G1 => "G1",
            Collector::Parallel => "Parallel",
            Collector::Serial => "Serial",
            Collector::Zgc => "ZGC",
            Collector::Shenandoah => "Shenandoah",
            Collector::Cms => "CMS",
            Collector::ParNew => "ParNew + Serial Old",
            Collector::Epsilon => "Epsilon",
        }
    }

    /// The collector the JVM's options select, if they name one (`-XX:+UseG1GC`...).
    pub fn from_flags(flags: &str) -> Option<Self> {
        [
            ("-XX:+UseG1GC", Collector::G1),
            ("-XX:+UseConcMarkSweepGC", Collector::Cms),
            ("-XX:+UseParallelOldGC", Collector::Parallel),
            ("-XX:+UseParallelGC", Collector::Parallel),
            ("-XX:+UseSerialGC", Collector::Serial),
            ("-XX:+UseShenandoahGC", Collector::Shenandoah),
            ("-XX:+UseZGC", Collector::Zgc),
            // After CMS: JDK 8 lists `-XX:+UseParNewGC` with `-XX:+UseConcMarkSweepGC` too.
            ("-XX:+UseParNewGC", Collector::ParNew),
        ]
        .into_iter()
        .find(|(flag, _)| flags.split_whitespace().any(|f| f == *flag))
        .map(|(_, collector)| collector)
    }

    /// From the perf counters: `sun.gc.policy.name` (`GarbageFirst`, `ParScav:MSC`,
    /// `Copy:MSC`, `ParNew:CMS`), which ZGC, Shenandoah and Epsilon leave out, and else the
    /// first collector's name `sun.gc.collector.0.name` (JDK 17: "Z concurrent cycle
    /// pauses", JDK 25: "ZGC minor collection pauses", "Shenandoah partial").
    pub fn from_perf_counters(policy: Option<&str>, collector0: Option<&str>) -> Option<Self> {
        let collector0 = collector0.unwrap_or_default();
        Some(match policy.unwrap_or_default() {
            "GarbageFirst" => Collector::G1,
            "ParScav:MSC" | "PSScavenge" => Collector::Parallel,
            "Copy:MSC" => Collector::Serial,
            "ParNew:CMS" | "Copy:CMS" => Collector::Cms,
            "ParNew:MSC" => Collector::ParNew,
            "" if collector0.starts_with("Z ") || collector0.starts_with("ZGC") => Collector::Zgc,
            "" if collector0.starts_with("Shenandoah") => Collector::Shenandoah,
            _ => return None,
        })
    }

    /// From the GC log's `Using ...` line (unified logging, `gc` or `gc+init`).
    pub fn from_log_announcement(using: &str) -> Option<Self> {
        Some(match using {
            "G1" => Collector::G1,
            "Parallel" => Collector::Parallel,
            "Serial" => Collector::Serial,
            "The Z Garbage Collector" => Collector::Zgc,
            "Shenandoah" => Collector::Shenandoah,
            "Concurrent Mark Sweep" => Collector::Cms,
            "Epsilon" => Collector::Epsilon,
            _ => return None,
        })
    }

    /// From a pause's name in a log that never says `Using ...` (JDK 8, or a rotated
    /// unified log whose first file had the line): the young generation's name or a
    /// collector's own pause names. `DefNew` is Serial's young generation (CMS can use it
    /// too, but then its own `CMS` pauses tell). Names several collectors print
    /// (`Pause Young (Allocation Failure)`, `Pause Remark`) tell nothing.
    pub fn from_pause_name(name: &str) -> Option<Self> {
        Some(match name {
            "DefNew" => Collector::Serial,
            "ParNew" | "CMS Initial Mark" | "CMS Final Remark" => Collector::Cms,
            "PSYoungGen" => Collector::Parallel,
            n if n.starts_with("GC pause") => Collector::G1,
            // JDK 7/8 G1's concurrent cycle pauses.
            "GC remark" | "GC cleanup" => Collector::G1,
            // G1's own kinds of young collection, and its cleanup pause.
            "Pause Young (Normal)"
            | "Pause Young (Concurrent Start)"
            | "Pause Young (Prepare Mixed)"
            | "Pause Young (Mixed)"
            | "Pause Mixed"
            | "Pause Cleanup" => Collector::G1,
            n if n.starts_with("Pause Init Mark") || n.starts_with("Pause Final Mark") => {
                Collector::Shenandoah
            }
            n if n.contains("Pause Mark Start") || n.contains("Pause Relocate Start") => {
                Collector::Zgc
            }
            _ => return None,
        })
    }

    /// From a generation's name in a JDK 6-8 event (`[CMS: ...]`, `[PSYoungGen: ...]`,
    /// G1's `[Eden: ...]`). `DefNew` and `Tenured` are Serial's (CMS may use `DefNew` too,
    /// but then names its old generation `CMS`).
    pub fn from_generation(name: &str) -> Option<Self> {
        Some(match name {
            "Eden" => Collector::G1,
            "CMS" | "ASCMS" | "ParNew" | "ASParNew" | "CMS Perm " => Collector::Cms,
            "PSYoungGen" | "ParOldGen" | "PSOldGen" | "PSPermGen" => Collector::Parallel,
            "DefNew" | "Tenured" => Collector::Serial,
            _ => return None,
        })
    }

    /// From a pause's cause, when only one collector gives it (`G1 Evacuation Pause`;
    /// `Ergonomics`, Parallel's adaptive sizing).
    pub fn from_pause_cause(cause: &str) -> Option<Self> {
        if cause.starts_with("G1 ") {
            Some(Collector::G1)
        } else if cause == "Ergonomics" {
            Some(Collector::Parallel)
        } else {
            None
        }
    }

    /// From the VM operation of a collection's safepoint (`-Xlog:safepoint`, JDK 8's
    /// safepoint statistics): `ParallelGCFailedAllocation`, `SerialCollectForAllocation`
    /// (JDK 21+), `G1CollectForAllocation`, `CMS_Final_Remark`, `ShenandoahInitMark`,
    /// `ZMarkStart`. Serial's and CMS's `GenCollectForAllocation` tells neither.
    pub fn from_vm_operation(op: &str) -> Option<Self> {
        let starts = |prefix: &str| op.starts_with(prefix);
        Some(if starts("Parallel") {
            Collector::Parallel
        } else if starts("Serial") {
            Collector::Serial
        } else if starts("G1") {
            Collector::G1
        } else if starts("CMS") {
            Collector::Cms
        } else if starts("Shenandoah") {
            Collector::Shenandoah
        } else if starts("ZMark") || starts("ZRelocate") {
            Collector::Zgc
        } else {
            return None;
        })
    }

    /// From a JFR recording's `jdk.GCConfiguration` young and old collector names.
    pub fn from_jfr_configuration(young: Option<&str>, old: Option<&str>) -> Option<Self> {
        Some(match (young?, old.unwrap_or_default()) {
            ("G1New", _) => Collector::G1,
            ("ParallelScavenge", _) => Collector::Parallel,
            ("ParNew", "SerialOld") => Collector::ParNew,
            ("ParNew", _) | (_, "ConcurrentMarkSweep") => Collector::Cms,
            ("DefNew", _) => Collector::Serial,
            ("Z", _) | ("ZGC Minor", _) | (_, "ZGC Major") => Collector::Zgc,
            ("Shenandoah", _) => Collector::Shenandoah,
            ("Epsilon", _) => Collector::Epsilon,
            _ => return None,
        })
    }
}

impl fmt::Display for Collector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Collector {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_source_names_a_collector_the_same_way() {
        let g1 = [
            Collector::from_perf_counters(Some("GarbageFirst"), Some("G1 young collection pauses")),
            Collector::from_log_announcement("G1"),
            Collector::from_pause_name("GC pause (G1 Evacuation Pause) (young)"),
            Collector::from_pause_name("Pause Young (Concurrent Start)"),
            Collector::from_jfr_configuration(Some("G1New"), Some("G1Old")),
        ];
        assert!(g1.iter().all(|c| *c == Some(Collector::G1)));
        assert_eq!(
            Collector::from_perf_counters(Some("ParScav:MSC"), None).map(Collector::name),
            Some("Parallel")
        );
        assert_eq!(
            Collector::from_perf_counters(None, Some("Z concurrent cycle pauses")),
            Some(Collector::Zgc)
        );
        assert_eq!(
            Collector::from_perf_counters(None, Some("ZGC minor collection pauses")),
            Some(Collector::Zgc)
        );
        assert_eq!(Collector::from_perf_counters(None, None), None);
        // Serial, Parallel and CMS all print these.
        assert_eq!(
            Collector::from_pause_name("Pause Young (Allocation Failure)"),
            None
        );
        assert_eq!(Collector::from_pause_name("Pause Remark"), None);
        assert_eq!(
            Collector::from_log_announcement("The Z Garbage Collector"),
            Some(Collector::Zgc)
        );
        let names: Vec<&str> = Collector::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(
            names,
            [
                "G1",
                "Parallel",
                "Serial",
                "ZGC",
                "Shenandoah",
                "CMS",
                "ParNew + Serial Old",
                "Epsilon"
            ]
        );
        // ParNew is CMS's young collector too: with Serial's old generation it is not CMS.
        let par_new = [
            Collector::from_perf_counters(Some("ParNew:MSC"), Some("PCopy")),
            Collector::from_flags("-XX:+UseParNewGC -XX:+PrintGCDetails"),
            Collector::from_jfr_configuration(Some("ParNew"), Some("SerialOld")),
        ];
        assert!(par_new.iter().all(|c| *c == Some(Collector::ParNew)));
        let cms = [
            Collector::from_perf_counters(Some("ParNew:CMS"), Some("PCopy")),
            Collector::from_flags("-XX:+UseConcMarkSweepGC -XX:+UseParNewGC"),
            Collector::from_flags("-XX:+UseParNewGC -XX:+UseConcMarkSweepGC"),
            Collector::from_jfr_configuration(Some("ParNew"), Some("ConcurrentMarkSweep")),
        ];
        assert!(cms.iter().all(|c| *c == Some(Collector::Cms)), "{cms:?}");
    }
}
