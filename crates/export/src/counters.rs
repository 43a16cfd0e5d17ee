//! The view of one JVM's counters that the metric model needs, and what identifies a JVM.

use std::collections::HashMap;

use pauselab_host::cgroup::ContainerIds;
use pauselab_hsperf::{JvmProcess, Snapshot, Units, Value, Variability};
use pauselab_pause::Collector;

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
    /// The container it runs in, as far as its cgroup path tells.
    pub container: ContainerIds,
}

impl JvmIdentity {
    /// The main class comes from the command line (it handles `-jar` and modules), the rest
    /// from the counters, so it is the same whichever route read them.
    /// `collector` is the JVM's collector as best known (the counters, else its GC log).
    pub(crate) fn new(
        jvm: &JvmProcess,
        source: &'static str,
        counters: &dyn CounterSet,
        collector: Option<Collector>,
        container: ContainerIds,
    ) -> Self {
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
            gc: collector.map_or("unknown", Collector::name).to_string(),
            source,
            container,
        }
    }
}

/// The main class or jar from `sun.rt.javaCommand` ("class args..." or "app.jar args...").
fn main_class(command: &str) -> String {
    command.split_whitespace().next().unwrap_or("").to_string()
}

/// The collector from the counters (see [`Collector::from_perf_counters`]).
pub(crate) fn collector(counters: &dyn CounterSet) -> Option<Collector> {
    Collector::from_perf_counters(
        counters.string("sun.gc.policy.name").as_deref(),
        counters.string("sun.gc.collector.0.name").as_deref(),
    )
}

/// An owned copy of what the metric model reads from one snapshot. Copying is where the
/// hsperf parser runs for the last time, so a fault in it is contained to the JVM being
/// copied; building metrics from the copy runs only this crate's code.
pub(crate) struct CounterValues {
    counters: Vec<OwnedCounter>,
    by_name: HashMap<String, usize>,
    tick_frequency: Option<f64>,
}

struct OwnedCounter {
    name: String,
    value: OwnedValue,
    kind: CounterKind,
}

enum OwnedValue {
    Long(i64),
    Double(f64),
    Text(String),
}

impl CounterValues {
    pub(crate) fn copy(snapshot: &Snapshot) -> CounterValues {
        let mut counters = Vec::new();
        for counter in snapshot.counters() {
            let value = match counter.value {
                Value::Long(v) => OwnedValue::Long(v),
                Value::Double(v) => OwnedValue::Double(v),
                Value::String(s) => OwnedValue::Text(s.into_owned()),
                Value::Bytes(_) => continue,
            };
            let units = match counter.units {
                Units::Ticks => CounterUnits::Ticks,
                Units::Bytes => CounterUnits::Bytes,
                _ => CounterUnits::Other,
            };
            let monotonic = counter.variability == Variability::Monotonic;
            counters.push(OwnedCounter {
                name: counter.name.to_string(),
                value,
                kind: CounterKind { units, monotonic },
            });
        }
        let mut by_name = HashMap::with_capacity(counters.len());
        for (index, counter) in counters.iter().enumerate() {
            // The first of two counters with one name wins, as in Snapshot::get.
            by_name.entry(counter.name.clone()).or_insert(index);
        }
        CounterValues {
            counters,
            by_name,
            tick_frequency: snapshot.tick_frequency().map(|f| f as f64),
        }
    }

    fn get(&self, name: &str) -> Option<&OwnedValue> {
        Some(&self.counters[*self.by_name.get(name)?].value)
    }
}

impl CounterSet for CounterValues {
    fn long(&self, name: &str) -> Option<i64> {
        match self.get(name)? {
            OwnedValue::Long(v) => Some(*v),
            _ => None,
        }
    }

    fn string(&self, name: &str) -> Option<String> {
        match self.get(name)? {
            OwnedValue::Text(s) => Some(s.clone()),
            _ => None,
        }
    }

    fn tick_frequency(&self) -> Option<f64> {
        self.tick_frequency
    }

    fn each_numeric(&self, f: &mut dyn FnMut(&str, f64, CounterKind)) {
        for counter in &self.counters {
            let value = match counter.value {
                OwnedValue::Long(v) => v as f64,
                OwnedValue::Double(v) => v,
                OwnedValue::Text(_) => continue,
            };
            f(&counter.name, value, counter.kind);
        }
    }
}
