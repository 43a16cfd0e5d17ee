//! The metric model: which hsperf counters become which Prometheus metrics.
//!
//! A fresh [`Registry`] is built for every scrape, so a JVM that exited since the last
//! scrape simply has no series any more (no stale series, no unbounded growth).

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicU64;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};

use crate::counters::{CounterKind, CounterSet, JvmIdentity};
use crate::exposition::escape_help;

/// Label pairs of one series. Keys are fixed names; values come from the JVM.
pub(crate) type Labels = Vec<(&'static str, String)>;
type CounterSeconds = Family<Labels, Counter<f64, AtomicU64>>;
type CounterCount = Family<Labels, Counter<u64>>;
type GaugeInt = Family<Labels, Gauge<i64>>;
type GaugeFloat = Family<Labels, Gauge<f64, AtomicU64>>;

const MAX_SPACES_PER_GENERATION: i64 = 16;

/// Curated per-JVM metrics, all named `hotspot_*`, all labelled with `pid`.
pub(crate) struct JvmMetrics {
    info: GaugeInt,
    start_time: GaugeFloat,
    safepoints: CounterCount,
    safepoint_time: CounterSeconds,
    safepoint_sync_time: CounterSeconds,
    application_time: CounterSeconds,
    gc_collections: CounterCount,
    gc_time: CounterSeconds,
    heap_used: GaugeInt,
    heap_capacity: GaugeInt,
    heap_max: GaugeInt,
    metaspace_used: GaugeInt,
    metaspace_capacity: GaugeInt,
    metaspace_max: GaugeInt,
    classes_loaded: CounterCount,
    classes_unloaded: CounterCount,
    class_load_time: CounterSeconds,
    jit_compilations: CounterCount,
    jit_time: CounterSeconds,
    threads_live: GaugeInt,
    threads_daemon: GaugeInt,
    threads_started: CounterCount,
}

impl JvmMetrics {
    /// Creates every curated family and registers it in `registry`.
    pub(crate) fn register(registry: &mut Registry) -> JvmMetrics {
        let m = JvmMetrics {
            info: Family::default(),
            start_time: Family::default(),
            safepoints: Family::default(),
            safepoint_time: Family::default(),
            safepoint_sync_time: Family::default(),
            application_time: Family::default(),
            gc_collections: Family::default(),
            gc_time: Family::default(),
            heap_used: Family::default(),
            heap_capacity: Family::default(),
            heap_max: Family::default(),
            metaspace_used: Family::default(),
            metaspace_capacity: Family::default(),
            metaspace_max: Family::default(),
            classes_loaded: Family::default(),
            classes_unloaded: Family::default(),
            class_load_time: Family::default(),
            jit_compilations: Family::default(),
            jit_time: Family::default(),
            threads_live: Family::default(),
            threads_daemon: Family::default(),
            threads_started: Family::default(),
        };
        let r = registry;
        r.register(
            "hotspot_jvm_info",
            "A JVM found on this host: always 1, the labels describe it",
            m.info.clone(),
        );
        r.register_with_unit(
            "hotspot_jvm_start_time",
            "When the JVM started (sun.rt.createVmBeginTime), seconds since the Unix epoch",
            Unit::Seconds,
            m.start_time.clone(),
        );
        r.register(
            "hotspot_safepoints",
            "Safepoints reached (sun.rt.safepoints)",
            m.safepoints.clone(),
        );
        r.register_with_unit(
            "hotspot_safepoint_time",
            "Time application threads were stopped at safepoints (sun.rt.safepointTime)",
            Unit::Seconds,
            m.safepoint_time.clone(),
        );
        r.register_with_unit(
            "hotspot_safepoint_sync_time",
            "Time to safepoint: time spent bringing threads to safepoints (sun.rt.safepointSyncTime)",
            Unit::Seconds,
            m.safepoint_sync_time.clone(),
        );
        r.register_with_unit(
            "hotspot_application_time",
            "Time application threads ran between safepoints (sun.rt.applicationTime)",
            Unit::Seconds,
            m.application_time.clone(),
        );
        r.register(
            "hotspot_gc_collections",
            "Collections per collector (sun.gc.collector.N.invocations)",
            m.gc_collections.clone(),
        );
        r.register_with_unit(
            "hotspot_gc_time",
            "Time spent in collections per collector (sun.gc.collector.N.time)",
            Unit::Seconds,
            m.gc_time.clone(),
        );
        r.register_with_unit(
            "hotspot_heap_space_used",
            "Bytes used in a heap space (sun.gc.generation.N.space.M.used)",
            Unit::Bytes,
            m.heap_used.clone(),
        );
        r.register_with_unit(
            "hotspot_heap_space_capacity",
            "Bytes committed to a heap space (sun.gc.generation.N.space.M.capacity)",
            Unit::Bytes,
            m.heap_capacity.clone(),
        );
        r.register_with_unit(
            "hotspot_heap_space_max",
            "Bytes a heap space may grow to (sun.gc.generation.N.space.M.maxCapacity)",
            Unit::Bytes,
            m.heap_max.clone(),
        );
        r.register_with_unit(
            "hotspot_metaspace_used",
            "Bytes used in metaspace and its compressed class space (sun.gc.metaspace.used)",
            Unit::Bytes,
            m.metaspace_used.clone(),
        );
        r.register_with_unit(
            "hotspot_metaspace_capacity",
            "Bytes committed to metaspace and its compressed class space (sun.gc.metaspace.capacity)",
            Unit::Bytes,
            m.metaspace_capacity.clone(),
        );
        r.register_with_unit(
            "hotspot_metaspace_max",
            "Bytes metaspace and its compressed class space may grow to (sun.gc.metaspace.maxCapacity)",
            Unit::Bytes,
            m.metaspace_max.clone(),
        );
        r.register(
            "hotspot_classes_loaded",
            "Classes loaded since the JVM started (java.cls.loadedClasses)",
            m.classes_loaded.clone(),
        );
        r.register(
            "hotspot_classes_unloaded",
            "Classes unloaded since the JVM started (java.cls.unloadedClasses)",
            m.classes_unloaded.clone(),
        );
        r.register_with_unit(
            "hotspot_class_load_time",
            "Time spent loading classes (sun.cls.time)",
            Unit::Seconds,
            m.class_load_time.clone(),
        );
        r.register(
            "hotspot_jit_compilations",
            "Methods compiled by the JIT compilers (sun.ci.totalCompiles)",
            m.jit_compilations.clone(),
        );
        r.register_with_unit(
            "hotspot_jit_compilation_time",
            "Time spent by the JIT compiler threads compiling (java.ci.totalTime)",
            Unit::Seconds,
            m.jit_time.clone(),
        );
        r.register(
            "hotspot_threads_live",
            "Live Java threads (java.threads.live)",
            m.threads_live.clone(),
        );
        r.register(
            "hotspot_threads_daemon",
            "Live daemon Java threads (java.threads.daemon)",
            m.threads_daemon.clone(),
        );
        r.register(
            "hotspot_threads_started",
            "Java threads started since the JVM started (java.threads.started)",
            m.threads_started.clone(),
        );
        m
    }

    /// Adds the series of one JVM. Counters the JVM does not have are left out.
    pub(crate) fn record(&self, identity: &JvmIdentity, counters: &dyn CounterSet) {
        let pid = identity.pid.to_string();
        let labels = || vec![("pid", pid.clone())];

        let mut info = vec![
            ("pid", pid.clone()),
            ("main_class", identity.main_class.clone()),
            ("jdk_version", identity.jdk_version.clone()),
            ("gc", identity.gc.clone()),
            ("source", identity.source.to_string()),
        ];
        let container = &identity.container;
        let fleet = [
            ("container_id", container.container_id.clone()),
            ("container_runtime", container.runtime.map(str::to_string)),
            ("pod_uid", container.pod_uid.clone()),
        ];
        info.extend(fleet.into_iter().filter_map(|(k, v)| Some((k, v?))));
        self.info.get_or_create(&info).set(1);
        if let Some(ms) = counters.long("sun.rt.createVmBeginTime") {
            self.start_time
                .get_or_create(&labels())
                .set(ms as f64 / 1000.0);
        }

        count(
            &self.safepoints,
            labels(),
            counters.long("sun.rt.safepoints"),
        );
        seconds(
            &self.safepoint_time,
            labels(),
            counters.seconds("sun.rt.safepointTime"),
        );
        seconds(
            &self.safepoint_sync_time,
            labels(),
            counters.seconds("sun.rt.safepointSyncTime"),
        );
        seconds(
            &self.application_time,
            labels(),
            counters.seconds("sun.rt.applicationTime"),
        );

        for n in 0.. {
            let prefix = format!("sun.gc.collector.{n}");
            let Some(name) = counters.string(&format!("{prefix}.name")) else {
                break;
            };
            let l = vec![("pid", pid.clone()), ("collector", name)];
            count(
                &self.gc_collections,
                l.clone(),
                counters.long(&format!("{prefix}.invocations")),
            );
            seconds(
                &self.gc_time,
                l,
                counters.seconds(&format!("{prefix}.time")),
            );
        }

        for g in 0.. {
            let generation_prefix = format!("sun.gc.generation.{g}");
            let Some(generation) = counters.string(&format!("{generation_prefix}.name")) else {
                break;
            };
            // HotSpot has at most three spaces per generation; the bound keeps a damaged
            // count from turning one scrape into billions of lookups.
            let spaces = counters
                .long(&format!("{generation_prefix}.spaces"))
                .unwrap_or(0)
                .clamp(0, MAX_SPACES_PER_GENERATION);
            for s in 0..spaces {
                let prefix = format!("{generation_prefix}.space.{s}");
                let Some(space) = counters.string(&format!("{prefix}.name")) else {
                    continue;
                };
                let l = vec![
                    ("pid", pid.clone()),
                    ("generation", generation.clone()),
                    ("space", space),
                ];
                gauge(
                    &self.heap_used,
                    l.clone(),
                    counters.long(&format!("{prefix}.used")),
                );
                gauge(
                    &self.heap_capacity,
                    l.clone(),
                    counters.long(&format!("{prefix}.capacity")),
                );
                gauge(
                    &self.heap_max,
                    l,
                    counters.long(&format!("{prefix}.maxCapacity")),
                );
            }
        }

        for (space, prefix) in [
            ("metaspace", "sun.gc.metaspace"),
            ("compressed_class_space", "sun.gc.compressedclassspace"),
        ] {
            let l = || vec![("pid", pid.clone()), ("space", space.to_string())];
            gauge(
                &self.metaspace_used,
                l(),
                counters.long(&format!("{prefix}.used")),
            );
            gauge(
                &self.metaspace_capacity,
                l(),
                counters.long(&format!("{prefix}.capacity")),
            );
            gauge(
                &self.metaspace_max,
                l(),
                counters.long(&format!("{prefix}.maxCapacity")),
            );
        }

        count(
            &self.classes_loaded,
            labels(),
            counters.long("java.cls.loadedClasses"),
        );
        count(
            &self.classes_unloaded,
            labels(),
            counters.long("java.cls.unloadedClasses"),
        );
        seconds(
            &self.class_load_time,
            labels(),
            counters.seconds("sun.cls.time"),
        );
        count(
            &self.jit_compilations,
            labels(),
            counters.long("sun.ci.totalCompiles"),
        );
        seconds(
            &self.jit_time,
            labels(),
            counters.seconds("java.ci.totalTime"),
        );
        gauge(
            &self.threads_live,
            labels(),
            counters.long("java.threads.live"),
        );
        gauge(
            &self.threads_daemon,
            labels(),
            counters.long("java.threads.daemon"),
        );
        count(
            &self.threads_started,
            labels(),
            counters.long("java.threads.started"),
        );
    }
}

fn count(family: &CounterCount, labels: Labels, value: Option<i64>) {
    // hsperf values are signed; a negative event count would be a JVM bug, not a value.
    if let Some(v) = value.and_then(|v| u64::try_from(v).ok()) {
        family.get_or_create(&labels).inc_by(v);
    }
}

fn seconds(family: &CounterSeconds, labels: Labels, value: Option<f64>) {
    if let Some(v) = value.filter(|v| v.is_finite() && *v >= 0.0) {
        family.get_or_create(&labels).inc_by(v);
    }
}

fn gauge(family: &GaugeInt, labels: Labels, value: Option<i64>) {
    if let Some(v) = value {
        family.get_or_create(&labels).set(v);
    }
}

/// `--all-counters`: every numeric counter as `hsperf_<sanitised name>`.
///
/// Ticks counters are converted to seconds (suffix `_seconds`), Bytes counters get the
/// suffix `_bytes`; Monotonic counters are Prometheus counters (sample suffix `_total`),
/// the others gauges. String counters are left out (they are labels, not values; the
/// useful ones are on `hotspot_jvm_info`).
#[derive(Default)]
pub(crate) struct AllCounters {
    /// By family name as exposed (with its unit suffix).
    families: HashMap<String, RawFamily>,
    /// Every family and sample name in use: two families exposing one name would make the
    /// whole scrape invalid, and counter names come from the JVMs, any user's included.
    taken: HashSet<String>,
}

enum RawFamily {
    Counter(CounterSeconds),
    Gauge(GaugeFloat),
}

impl AllCounters {
    pub(crate) fn record(
        &mut self,
        registry: &mut Registry,
        identity: &JvmIdentity,
        counters: &dyn CounterSet,
    ) {
        let pid = identity.pid.to_string();
        let frequency = counters.tick_frequency();
        let mut recorded = HashSet::new();
        counters.each_numeric(&mut |name, value, kind| {
            let (value, unit) = match kind.units {
                crate::counters::CounterUnits::Ticks => match frequency {
                    Some(f) => (value / f, Some(Unit::Seconds)),
                    // Without a frequency a tick count has no meaning in seconds.
                    None => return,
                },
                crate::counters::CounterUnits::Bytes => (value, Some(Unit::Bytes)),
                crate::counters::CounterUnits::Other => (value, None),
            };
            let base = sanitise(name);
            let family_name = match &unit {
                Some(unit) => format!("{base}_{}", unit.as_str()),
                None => base.clone(),
            };
            // Two counters of one JVM that sanitise alike: the first one is exposed.
            if !recorded.insert(family_name.clone()) {
                return;
            }
            let family = match self.families.entry(family_name) {
                Entry::Occupied(known) => known.into_mut(),
                Entry::Vacant(new) => {
                    let mut names = vec![new.key().clone()];
                    if kind.monotonic {
                        names.push(format!("{}_total", new.key()));
                    }
                    if names.iter().any(|n| self.taken.contains(n)) {
                        return;
                    }
                    self.taken.extend(names);
                    new.insert(new_raw_family(registry, &base, name, kind, unit))
                }
            };
            let labels = vec![("pid", pid.clone())];
            match family {
                RawFamily::Counter(f) if kind.monotonic && value >= 0.0 => {
                    f.get_or_create(&labels).inc_by(value);
                }
                RawFamily::Gauge(f) if !kind.monotonic => {
                    f.get_or_create(&labels).set(value);
                }
                // Same sanitised name, different kind in another JVM (another JDK, or two
                // names that sanitise alike): the first one seen owns the name.
                _ => {}
            }
        });
    }
}

fn new_raw_family(
    registry: &mut Registry,
    base: &str,
    original: &str,
    kind: CounterKind,
    unit: Option<Unit>,
) -> RawFamily {
    let help = format!("hsperf counter {}", escape_help(original));
    if kind.monotonic {
        let family = CounterSeconds::default();
        match unit {
            Some(u) => registry.register_with_unit(base, help, u, family.clone()),
            None => registry.register(base, help, family.clone()),
        }
        RawFamily::Counter(family)
    } else {
        let family = GaugeFloat::default();
        match unit {
            Some(u) => registry.register_with_unit(base, help, u, family.clone()),
            None => registry.register(base, help, family.clone()),
        }
        RawFamily::Gauge(family)
    }
}

/// `sun.gc.collector.0.time` -> `hsperf_sun_gc_collector_0_time`,
/// `sun.rt.safepointSyncTime` -> `hsperf_sun_rt_safepoint_sync_time`: camelCase becomes
/// snake_case (the Prometheus convention), anything else that may not appear in a metric
/// name becomes `_`, and runs of `_` collapse into one.
pub(crate) fn sanitise(counter_name: &str) -> String {
    let mut out = String::with_capacity(counter_name.len() + 16);
    out.push_str("hsperf");
    let mut previous = '.';
    for c in counter_name.chars() {
        let word_starts =
            c.is_ascii_uppercase() && (previous.is_ascii_lowercase() || previous.is_ascii_digit());
        let separator = !c.is_ascii_alphanumeric();
        if (word_starts || separator || previous == '.') && !out.ends_with('_') {
            out.push('_');
        }
        if !separator {
            out.push(c.to_ascii_lowercase());
        }
        previous = if separator { '_' } else { c };
    }
    out.truncate(out.trim_end_matches('_').len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitised_names_are_valid_metric_names() {
        assert_eq!(
            sanitise("sun.gc.collector.0.time"),
            "hsperf_sun_gc_collector_0_time"
        );
        assert_eq!(
            sanitise("sun.rt._sync_Inflations"),
            "hsperf_sun_rt_sync_inflations"
        );
        assert_eq!(
            sanitise("sun.rt.safepointSyncTime"),
            "hsperf_sun_rt_safepoint_sync_time"
        );
        assert_eq!(sanitise("java.ci.totalTime"), "hsperf_java_ci_total_time");
        assert_eq!(
            sanitise("sun.gc.tlab.gc1Waste"),
            "hsperf_sun_gc_tlab_gc1_waste"
        );
        assert_eq!(
            sanitise("sun.os.hrt.HRTFrequency"),
            "hsperf_sun_os_hrt_hrtfrequency"
        );
        assert_eq!(sanitise("a-b:c/é."), "hsperf_a_b_c");
    }

    /// A version 2.0 little-endian region as HotSpot lays it out: (name, type, units,
    /// variability, data). Built here rather than read from a JVM because a JVM does not
    /// let its users pick counter names, and hostile names are the point.
    fn region(counters: &[(&str, u8, u8, u8, Vec<u8>)]) -> Vec<u8> {
        const HEADER: usize = 20;
        let mut entries = Vec::new();
        for (name, type_code, units, variability, data) in counters {
            let data_offset = (HEADER + name.len() + 1).div_ceil(8) * 8;
            let length = (data_offset + data.len()).div_ceil(8) * 8;
            let vector_length = if *type_code == b'B' { data.len() } else { 0 };
            let start = entries.len();
            for field in [length, HEADER, vector_length] {
                entries.extend_from_slice(&(field as i32).to_le_bytes());
            }
            entries.extend_from_slice(&[*type_code, 1, *units, *variability]);
            entries.extend_from_slice(&(data_offset as i32).to_le_bytes());
            entries.extend_from_slice(name.as_bytes());
            entries.resize(start + data_offset, 0);
            entries.extend_from_slice(data);
            entries.resize(start + length, 0);
        }
        let mut out = vec![0xCA, 0xFE, 0xC0, 0xC0, 1, 2, 0, 1];
        out.extend_from_slice(&((32 + entries.len()) as i32).to_le_bytes());
        out.extend_from_slice(&0i32.to_le_bytes());
        out.extend_from_slice(&0i64.to_le_bytes());
        out.extend_from_slice(&32i32.to_le_bytes());
        out.extend_from_slice(&(counters.len() as i32).to_le_bytes());
        out.extend_from_slice(&entries);
        out
    }

    fn long(name: &str, units: u8, variability: u8, v: i64) -> (&str, u8, u8, u8, Vec<u8>) {
        (name, b'J', units, variability, v.to_le_bytes().to_vec())
    }

    fn text(name: &str, value: &str) -> (&'static str, u8, u8, u8, Vec<u8>) {
        let mut data = value.as_bytes().to_vec();
        data.resize(value.len() + 8, 0);
        (name.to_string().leak(), b'B', 5, 1, data)
    }

    /// Checks every line of a text exposition against the format's grammar: metadata
    /// lines, or `name{label="escaped value",...} value`.
    fn assert_well_formed(exposition: &str) {
        let is_name_start = |c: char| c.is_ascii_alphabetic() || c == '_' || c == ':';
        let is_name_char = |c: char| is_name_start(c) || c.is_ascii_digit();
        let mut families = HashSet::new();
        for line in exposition.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let name = rest.split(' ').next().unwrap();
                assert!(families.insert(name.to_string()), "family {name} twice");
                continue;
            }
            if line.starts_with("# HELP ") || line.starts_with("# UNIT ") || line == "# EOF" {
                continue;
            }
            let mut chars = line.chars().peekable();
            let name: String = std::iter::from_fn(|| chars.next_if(|&c| is_name_char(c))).collect();
            assert!(
                name.starts_with(is_name_start),
                "bad metric name in {line:?}"
            );
            if chars.next_if_eq(&'{').is_some() {
                loop {
                    let label: String =
                        std::iter::from_fn(|| chars.next_if(|&c| is_name_char(c))).collect();
                    assert!(!label.is_empty(), "bad label in {line:?}");
                    assert_eq!(chars.next(), Some('='), "{line:?}");
                    assert_eq!(chars.next(), Some('"'), "{line:?}");
                    loop {
                        match chars.next() {
                            Some('"') => break,
                            Some('\\') => assert!(
                                matches!(chars.next(), Some('\\' | '"' | 'n')),
                                "bad escape in {line:?}"
                            ),
                            Some(_) => {}
                            None => panic!("unterminated label value in {line:?}"),
                        }
                    }
                    match chars.next() {
                        Some(',') => continue,
                        Some('}') => break,
                        other => panic!("unexpected {other:?} in {line:?}"),
                    }
                }
            }
            assert_eq!(chars.next(), Some(' '), "{line:?}");
            let value: String = chars.collect();
            assert!(value.parse::<f64>().is_ok(), "bad value in {line:?}");
        }
    }

    #[test]
    fn hostile_counter_names_and_strings_cannot_add_lines_or_break_the_scrape() {
        const NONE: u8 = 1;
        const BYTES: u8 = 2;
        const EVENTS: u8 = 4;
        const HERTZ: u8 = 6;
        const CONSTANT: u8 = 1;
        const MONOTONIC: u8 = 2;
        const VARIABLE: u8 = 3;
        let injection = "x\nevil_injected_metric{pid=\"1\"} 42";
        let bytes = region(&[
            long("sun.os.hrt.frequency", HERTZ, CONSTANT, 1_000_000_000),
            long("sun.rt.safepoints", EVENTS, MONOTONIC, 5),
            long(injection, NONE, MONOTONIC, 7),
            long("back\\slash\"quote\rcr", NONE, VARIABLE, 8),
            // Two counters whose metric families would both be exposed as hsperf_foo_bytes,
            // and two whose samples would both be hsperf_bar_total.
            long("foo.bytes", NONE, VARIABLE, 1),
            long("foo", BYTES, VARIABLE, 2),
            long("bar.total", NONE, VARIABLE, 3),
            long("bar", NONE, MONOTONIC, 4),
            text("sun.gc.collector.0.name", "G1 \"young\"\nevil 1 \\"),
            long("sun.gc.collector.0.invocations", EVENTS, MONOTONIC, 3),
            text("sun.gc.generation.0.name", "young\n"),
            // A count of spaces no JVM has: the scrape must not loop over it.
            long("sun.gc.generation.0.spaces", NONE, CONSTANT, i64::MAX),
        ]);
        let capacity = bytes.len();
        let snapshot = pauselab_hsperf::Snapshot::parse(bytes, capacity, "crafted").unwrap();
        assert_eq!(
            snapshot.value_i64(injection),
            Some(7),
            "the region is not as meant"
        );
        let counters = crate::counters::CounterValues::copy(&snapshot);
        let identity = JvmIdentity {
            pid: 4242,
            main_class: "Main\n\"x\" \\".to_string(),
            jdk_version: "17\nevil 1".to_string(),
            gc: "G1".to_string(),
            source: "file",
            container: Default::default(),
        };

        let mut registry = Registry::default();
        let metrics = JvmMetrics::register(&mut registry);
        metrics.record(&identity, &counters);
        let mut all = AllCounters::default();
        all.record(&mut registry, &identity, &counters);

        let openmetrics =
            crate::exposition::encode(&registry, crate::exposition::Format::OpenMetrics);
        let text = crate::exposition::encode(&registry, crate::exposition::Format::Prometheus);
        for exposition in [&openmetrics, &text] {
            assert_well_formed(exposition);
            assert!(
                !exposition.lines().any(|l| l.starts_with("evil")),
                "injected line in:\n{exposition}"
            );
        }
        let contains = |exposition: &str, wanted: &str| {
            assert!(
                exposition.contains(wanted),
                "no {wanted:?} in:\n{exposition}"
            )
        };
        // The hostile name is in the help text, escaped as each format wants it.
        contains(&text, "# HELP hsperf_x_evil_injected_metric_pid_1_42_total hsperf counter x\\nevil_injected_metric{pid=\"1\"} 42.\n");
        contains(&openmetrics, "# HELP hsperf_x_evil_injected_metric_pid_1_42 hsperf counter x\\nevil_injected_metric{pid=\\\"1\\\"} 42.\n");
        contains(&text, "hsperf counter back\\\\slash\"quote\u{FFFD}cr.");
        contains(&text, "hotspot_gc_collections_total{pid=\"4242\",collector=\"G1 \\\"young\\\"\\nevil 1 \\\\\"} 3\n");
        contains(&text, "main_class=\"Main\\n\\\"x\\\" \\\\\"");
        // Of two counters exposed under one name, the first is kept.
        contains(&text, "hsperf_foo_bytes{pid=\"4242\"} 1.0\n");
        contains(&text, "hsperf_bar_total{pid=\"4242\"} 3.0\n");
    }
}
