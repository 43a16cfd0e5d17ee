//! The view of one JVM's counters that the metric model needs, and what identifies a JVM.

use pauselab_hsperf::{JvmProcess, Snapshot, Units, Value, Variability};

/// Units of a numeric counter, as far as the metric model cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CounterUnits {
    /// High-resolution timer ticks: divide by `sun.os.hrt.frequency` for seconds.
    Ticks,
    Bytes,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CounterKind {
    pub units: CounterUnits,
    /// Only ever grows (hsperf variability Monotonic).
    pub monotonic: bool,
}

/// Read access to one consistent snapshot of a JVM's counters.
pub(crate) trait CounterSet {
    fn long(&self, name: &str) -> Option<i64>;
    fn string(&self, name: &str) -> Option<String>;
    /// Ticks per second (`sun.os.hrt.frequency`).
    fn tick_frequency(&self) -> Option<f64>;
    /// Calls `f` for every numeric counter with its value as f64.
    fn each_numeric(&self, f: &mut dyn FnMut(&str, f64, CounterKind));

    /// A Ticks counter in seconds.
    fn seconds(&self, name: &str) -> Option<f64> {
        Some(self.long(name)? as f64 / self.tick_frequency()?)
    }
}

/// What `hotspot_jvm_info` says about a JVM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JvmIdentity {
    pub pid: u32,
    pub main_class: String,
    pub jdk_version: String,
    pub gc: String,
    /// `file` or `memory`: the route the counters were read through.
    pub source: &'static str,
}

impl JvmIdentity {
    /// The main class comes from the command line (it handles `-jar` and modules), the rest
    /// from the counters, so it is the same whichever route read them.
    pub(crate) fn new(jvm: &JvmProcess, source: &'static str, counters: &dyn CounterSet) -> Self {
        JvmIdentity {
            pid: jvm.pid,
            main_class: jvm
                .main_class
                .clone()
                .or_else(|| {
                    counters
                        .string("sun.rt.javaCommand")
                        .map(|c| main_class(&c))
                })
                .unwrap_or_default(),
            jdk_version: counters
                .string("java.property.java.version")
                .or_else(|| counters.string("java.property.java.vm.version"))
                .unwrap_or_default(),
            gc: gc_name(counters),
            source,
        }
    }
}

/// The main class or jar from `sun.rt.javaCommand` ("class args..." or "app.jar args...").
fn main_class(command: &str) -> String {
    command.split_whitespace().next().unwrap_or("").to_string()
}

/// A short collector name (`G1`, `Parallel`, `Serial`, `ZGC`, `Shenandoah`) from
/// `sun.gc.policy.name`, which ZGC and Shenandoah leave out, else from the first
/// collector's name (JDK 17: "Z concurrent cycle pauses", JDK 25: "ZGC minor collection
/// pauses", both: "Shenandoah partial"). Anything else is reported as it is, or "unknown".
fn gc_name(counters: &dyn CounterSet) -> String {
    let policy = counters.string("sun.gc.policy.name").unwrap_or_default();
    let collector0 = counters
        .string("sun.gc.collector.0.name")
        .unwrap_or_default();
    let known = match policy.as_str() {
        "GarbageFirst" => "G1",
        "ParScav:MSC" => "Parallel",
        "Copy:MSC" => "Serial",
        "" if collector0.starts_with("Z ") || collector0.starts_with("ZGC") => "ZGC",
        "" if collector0.starts_with("Shenandoah") => "Shenandoah",
        "" => "unknown",
        other => other,
    };
    known.to_string()
}

impl CounterSet for Snapshot {
    fn long(&self, name: &str) -> Option<i64> {
        self.value_i64(name)
    }

    fn string(&self, name: &str) -> Option<String> {
        self.value_str(name).map(|s| s.into_owned())
    }

    fn tick_frequency(&self) -> Option<f64> {
        Snapshot::tick_frequency(self).map(|f| f as f64)
    }

    fn each_numeric(&self, f: &mut dyn FnMut(&str, f64, CounterKind)) {
        for counter in self.counters() {
            let value = match counter.value {
                Value::Long(v) => v as f64,
                Value::Double(v) => v,
                Value::String(_) | Value::Bytes(_) => continue,
            };
            let units = match counter.units {
                Units::Ticks => CounterUnits::Ticks,
                Units::Bytes => CounterUnits::Bytes,
                _ => CounterUnits::Other,
            };
            let monotonic = counter.variability == Variability::Monotonic;
            f(counter.name, value, CounterKind { units, monotonic });
        }
    }
}
