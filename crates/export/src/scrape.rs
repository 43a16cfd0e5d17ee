//! One scrape: find every JVM, take a snapshot of each, build a fresh registry.

use std::collections::{BTreeMap, HashMap};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use pauselab_hsperf::{Error as HsperfError, JvmProcess, PerfData, Reader, Source};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};

use std::path::{Path, PathBuf};

use pauselab_host::cgroup::{container_ids, ContainerIds};
use pauselab_pause::Collector;

use crate::budget::{self, Cost};
use crate::counters::{self, CounterValues, JvmIdentity};
use crate::discovery::{self, Discovery};
use crate::enable::GcLogControl;
use crate::exposition::{self, Format};
use crate::gc_logs::{JvmPauses, PauseFamilies};
use crate::metrics::{AllCounters, JvmMetrics, Labels};
use crate::Error;

/// What a scrape reads and exposes.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Where counters are read from: the file, memory, or the file when there is one.
    pub source: Source,
    /// Also expose every numeric counter as `hsperf_<sanitised name>`.
    pub all_counters: bool,
    /// Also expose the GC pause histogram under OpenTelemetry's semantic-convention name,
    /// `jvm_gc_duration_seconds{jvm_gc_name, jvm_gc_action}`, beside `hotspot_gc_pause_seconds`.
    pub otel_names: bool,
    /// Turn GC and safepoint logging on, into this directory, in JVMs that log neither
    /// (off again at [`Exporter::shutdown`]).
    pub enable_gc_log: Option<PathBuf>,
    /// With `enable_gc_log`: only in JVMs whose main class, jar or module matches this
    /// glob (`*`, `?`); all of them when `None`.
    pub enable_gc_log_for: Option<String>,
}

/// The exporter: owns the open readers and the cumulative self-metrics between scrapes.
pub struct Exporter {
    options: Options,
    state: Mutex<State>,
    /// Logs turned on by `--enable-gc-log`, and what killed exporters left on: shared with
    /// the attach worker, so a scrape never waits for an attach.
    gc_logs: GcLogControl,
}

#[derive(Default)]
struct State {
    /// Which processes are JVMs, remembered between scrapes.
    discovery: Discovery,
    /// Open readers by pid: the memory route resolves its address once, a file stays open.
    /// Each reader holds a pidfd, so a reused pid is never mistaken for the old JVM.
    readers: HashMap<u32, Reader>,
    /// Reads that failed since start, by reason.
    read_errors: BTreeMap<&'static str, u64>,
    scrapes: u64,
    /// What each JVM's GC log said so far, and where it runs, by pid.
    tracked: HashMap<u32, Tracked>,
}

/// What is kept about one JVM between scrapes, besides its counters' reader.
struct Tracked {
    /// Start time of the process: a reused pid is another JVM.
    start_ticks: Option<u64>,
    container: ContainerIds,
    /// The collector, once the counters told (they may not be readable in every scrape).
    collector: Option<Collector>,
    pauses: JvmPauses,
}

/// Every value of the `reason` label, so each read-error series exists (at 0) from the
/// first scrape on and `rate()`/`increase()` see its first error.
const REASONS: [&str; 12] = [
    "attach",
    "corrupt",
    "exited",
    INTERNAL_ERROR,
    "io",
    "memory_route",
    "no_file",
    "not_jvm",
    "perf_data_disabled",
    "permission",
    "starting",
    "unstable",
];

/// The `reason` of a JVM whose reading hit a bug in pauselab (a panic, contained to it).
pub(crate) const INTERNAL_ERROR: &str = "internal_error";

/// Why a JVM could not be read, as the `reason` label says it.
pub(crate) fn reason(error: &HsperfError) -> &'static str {
    match error {
        HsperfError::Format { .. } => "corrupt",
        HsperfError::NoProcess { .. } => "exited",
        HsperfError::NotJvm { .. } => "not_jvm",
        HsperfError::PerfDataDisabled { .. } => "perf_data_disabled",
        HsperfError::NotReady { .. } => "starting",
        HsperfError::Permission { .. } => "permission",
        HsperfError::NoFile { .. } => "no_file",
        HsperfError::Unstable { .. } => "unstable",
        HsperfError::Memory { .. } => "memory_route",
        HsperfError::Attach { .. } => "attach",
        HsperfError::Io { .. } => "io",
    }
}

/// The outcome of one JVM in one scrape.
enum Outcome {
    /// Read through `route` (`file` or `memory`).
    Read(&'static str, CounterValues),
    Failed(&'static str),
}

impl Exporter {
    pub fn new(options: Options) -> Exporter {
        Exporter {
            gc_logs: GcLogControl::new(options.enable_gc_log.clone()),
            options,
            state: Mutex::new(State::default()),
        }
    }

    /// Journals every GC log output turned on (`--enable-gc-log`) in a file under
    /// `state_dir` (created 0700; refused if another user owns it or others can write it),
    /// and takes over what exporters that stopped without undoing it left on: the worker
    /// ([`Exporter::run_gc_log_worker`]) turns those off first.
    ///
    /// Without a journal, a log turned on could outlive a killed exporter: one that turns
    /// logs on fails. One that does not goes on, only leftovers of earlier exporters
    /// unchecked (e.g. an exporter run by a user who may not create the directory); it
    /// warns when `state_dir` exists.
    pub fn open_journal(&self, state_dir: &Path) -> Result<(), Error> {
        let Err(reason) = self.gc_logs.open_journal(state_dir) else {
            return Ok(());
        };
        let error = Error::Journal { reason };
        if self.options.enable_gc_log.is_some() {
            return Err(error);
        }
        if state_dir.exists() {
            pauselab_pause::eprintln_lossy!("pauselab export: {error}");
        }
        Ok(())
    }

    /// The attach worker, on the calling thread: turns off what stopped exporters left on,
    /// turns GC logs on as scrapes ask (`--enable-gc-log`), and once `stop` is set (or
    /// [`Exporter::shutdown`] called) turns off everything within a deadline and returns.
    pub fn run_gc_log_worker(&self, stop: &AtomicBool) {
        self.gc_logs.run(stop);
    }

    /// Makes [`Exporter::run_gc_log_worker`] turn off the GC logs turned on and return;
    /// the files stay.
    pub fn shutdown(&self) {
        self.gc_logs.stop();
    }

    /// Scrapes every JVM and encodes the result. Scrapes run one at a time: two clients
    /// scraping at once wait for each other rather than doubling the load on the host.
    pub fn render(&self, format: Format) -> String {
        exposition::encode(&self.scrape(), format)
    }

    /// Scrapes every JVM into a fresh registry.
    pub fn scrape(&self) -> Registry {
        let started = Instant::now();
        // A panic in an earlier scrape leaves nothing half-updated that matters here.
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.scrapes += 1;

        let found = state.discovery.jvms();
        let jvms = found.jvms;
        *state.read_errors.entry(INTERNAL_ERROR).or_default() += found.failed.len() as u64;
        let mut outcomes = Vec::with_capacity(jvms.len());
        for jvm in &jvms {
            let outcome = read_jvm_isolated(&mut state.readers, jvm, self.options.source);
            if let Outcome::Failed(reason) = outcome {
                *state.read_errors.entry(reason).or_default() += 1;
                if matches!(reason, "exited" | "not_jvm") {
                    state.discovery.forget(jvm.pid);
                }
            }
            outcomes.push((jvm, outcome));
        }
        state
            .readers
            .retain(|pid, _| jvms.iter().any(|j| j.pid == *pid));
        let first_scrape = state.scrapes == 1;
        for jvm in &jvms {
            let enable_for = self.options.enable_gc_log_for.as_deref();
            follow_gc_logs(&mut state, &self.gc_logs, jvm, first_scrape, enable_for);
        }
        let alive = |pid: u32| jvms.iter().any(|j| j.pid == pid);
        state.tracked.retain(|pid, _| alive(*pid));
        self.gc_logs.retain(alive);

        let mut read_by_route: BTreeMap<&'static str, i64> = BTreeMap::new();
        let mut collectors = Vec::with_capacity(outcomes.len());
        for (jvm, outcome) in &outcomes {
            let from_counters = match outcome {
                Outcome::Read(route, counters) => {
                    *read_by_route.entry(route).or_default() += 1;
                    counters::collector(counters)
                }
                Outcome::Failed(_) => None,
            };
            let known = state.tracked.get_mut(&jvm.pid).and_then(|t| {
                t.collector = t.collector.or(from_counters);
                t.collector.or(t.pauses.collector())
            });
            collectors.push(from_counters.or(known));
        }
        let options = &self.options;
        let add = |sink: &mut Sink, index: usize| {
            let (jvm, outcome) = &outcomes[index];
            sink.add(jvm, outcome, state.tracked.get(&jvm.pid), collectors[index]);
        };
        // Each JVM measured on its own first, so that nothing beyond the budget is built.
        let costs: Vec<(u32, Cost)> = (0..outcomes.len())
            .map(|index| {
                let mut alone = Sink::new(options);
                add(&mut alone, index);
                (
                    outcomes[index].0.uid,
                    budget::measure(&alone.into_registry()),
                )
            })
            .collect();
        let keep = budget::fair_share(&costs, budget::JVM_BUDGET);
        let mut sink = Sink::new(options);
        let mut dropped: BTreeMap<u32, Dropped> = BTreeMap::new();
        for (index, kept) in keep.iter().enumerate() {
            if *kept {
                add(&mut sink, index);
            } else {
                let (uid, cost) = costs[index];
                let by_uid = dropped.entry(uid).or_default();
                by_uid.jvms += 1;
                by_uid.series += cost.series;
            }
        }
        for &pid in &found.failed {
            mark_unreadable(&sink.unreadable, pid, INTERNAL_ERROR);
        }
        let mut registry = sink.into_registry();
        register_self_metrics(
            &mut registry,
            &state,
            jvms.len() + found.failed.len(),
            &read_by_route,
            started.elapsed(),
        );
        register_limit_metrics(&mut registry, &dropped, &self.gc_logs.left_on());
        registry
    }
}

/// The series of some JVMs, in a registry of their own.
struct Sink {
    registry: Registry,
    metrics: JvmMetrics,
    unreadable: Family<Labels, Gauge<i64>>,
    all_counters: Option<AllCounters>,
    pauses: PauseFamilies,
}

impl Sink {
    fn new(options: &Options) -> Sink {
        let mut registry = Registry::default();
        let metrics = JvmMetrics::register(&mut registry);
        let unreadable = Family::<Labels, Gauge<i64>>::default();
        registry.register(
            "pauselab_export_unreadable_jvm",
            "A JVM found but not read in this scrape (1), with the reason; JVMs that exited \
             while being read are only counted in pauselab_export_read_errors",
            unreadable.clone(),
        );
        Sink {
            registry,
            metrics,
            unreadable,
            all_counters: options.all_counters.then(AllCounters::default),
            pauses: PauseFamilies::new(options.otel_names),
        }
    }

    /// Adds the series of one JVM; `collector` is its collector as best known.
    fn add(
        &mut self,
        jvm: &JvmProcess,
        outcome: &Outcome,
        tracked: Option<&Tracked>,
        collector: Option<Collector>,
    ) {
        if let Some(tracked) = tracked {
            self.pauses.add(jvm.pid, &tracked.pauses, collector);
        }
        match outcome {
            Outcome::Read(route, counters) => {
                let container = tracked.map(|t| t.container.clone()).unwrap_or_default();
                let identity = JvmIdentity::new(jvm, route, counters, collector, container);
                self.metrics.record(&identity, counters);
                if let Some(all) = self.all_counters.as_mut() {
                    all.record(&mut self.registry, &identity, counters);
                }
            }
            // It is gone: a series for it would outlive it by a scrape for nothing.
            Outcome::Failed("exited") => {}
            Outcome::Failed(reason) => mark_unreadable(&self.unreadable, jvm.pid, reason),
        }
    }

    fn into_registry(mut self) -> Registry {
        self.registry.register_collector(Box::new(self.pauses));
        self.registry
    }
}

/// What the per-host budget left out of a scrape, for one uid.
#[derive(Default)]
struct Dropped {
    jvms: usize,
    series: usize,
}

/// What the per-host budget left out, by uid, and the GC log outputs stopped exporters
/// left on that are not turned off yet.
fn register_limit_metrics(
    registry: &mut Registry,
    dropped: &BTreeMap<u32, Dropped>,
    left_on: &[(u32, String)],
) {
    let jvms = Family::<Labels, Gauge<i64>>::default();
    let series = Family::<Labels, Gauge<i64>>::default();
    for (uid, left_out) in dropped {
        let labels = vec![("uid", uid.to_string())];
        jvms.get_or_create(&labels).set(left_out.jvms as i64);
        series.get_or_create(&labels).set(left_out.series as i64);
    }
    registry.register(
        "pauselab_export_dropped_jvms",
        "JVMs of this uid whose series this scrape left out: the scrape's series or body \
         budget was spent (each uid gets a fair share)",
        jvms,
    );
    registry.register(
        "pauselab_export_dropped_series",
        "Series of this uid's JVMs left out of this scrape by the series or body budget",
        series,
    );
    let left = Family::<Labels, Gauge<i64>>::default();
    for (pid, output) in left_on {
        left.get_or_create(&vec![("pid", pid.to_string()), ("output", output.clone())])
            .set(1);
    }
    registry.register(
        "pauselab_export_gc_log_left_on",
        "A GC log output an exporter that was stopped without undoing it turned on, \
         still on in this JVM (turning it off is retried every minute)",
        left,
    );
}

/// Reads what `jvm`'s GC logs appended since the previous scrape, finding them (or
/// turning one on) the first time. A bug in doing so (a panic) is contained to this JVM:
/// it starts afresh at the next scrape.
fn follow_gc_logs(
    state: &mut State,
    gc_logs: &GcLogControl,
    jvm: &JvmProcess,
    first_scrape: bool,
    enable_for: Option<&str>,
) {
    let start_ticks = discovery::start_ticks(jvm.pid);
    let tracked = &mut state.tracked;
    let followed = panic::catch_unwind(AssertUnwindSafe(|| {
        let entry = tracked.entry(jvm.pid);
        let tracked = match entry {
            std::collections::hash_map::Entry::Occupied(e)
                if e.get().start_ticks == start_ticks =>
            {
                e.into_mut()
            }
            entry => {
                let fresh = Tracked {
                    start_ticks,
                    container: container_ids(jvm.pid),
                    collector: None,
                    pauses: JvmPauses::new(jvm, first_scrape),
                };
                match entry {
                    std::collections::hash_map::Entry::Occupied(mut e) => {
                        e.insert(fresh);
                        e.into_mut()
                    }
                    std::collections::hash_map::Entry::Vacant(e) => e.insert(fresh),
                }
            }
        };
        let wanted = enable_for.is_none_or(|glob| {
            jvm.main_class
                .as_deref()
                .is_some_and(|main| pauselab_hsperf::glob_match(glob, main))
        });
        if wanted && !tracked.pauses.has_log() {
            if let Some(log) = gc_logs.log_for(jvm, start_ticks) {
                tracked.pauses.follow_enabled(&log.shown, &log.on_host);
            }
        }
        tracked.pauses.poll(jvm.ns_pid);
    }));
    if followed.is_err() {
        tracked.remove(&jvm.pid);
    }
}

fn mark_unreadable(unreadable: &Family<Labels, Gauge<i64>>, pid: u32, reason: &str) {
    unreadable
        .get_or_create(&vec![
            ("pid", pid.to_string()),
            ("reason", reason.to_string()),
        ])
        .set(1);
}

/// [`read_jvm`], with a panic in it (a bug, e.g. in parsing a damaged region) reported as
/// this JVM's failure instead of ending the scrape and every other JVM's series with it.
fn read_jvm_isolated(
    readers: &mut HashMap<u32, Reader>,
    jvm: &JvmProcess,
    source: Source,
) -> Outcome {
    match panic::catch_unwind(AssertUnwindSafe(|| read_jvm(readers, jvm, source))) {
        Ok(outcome) => outcome,
        Err(_) => {
            // The reader may be half-way through an update: start afresh next time.
            readers.remove(&jvm.pid);
            Outcome::Failed(INTERNAL_ERROR)
        }
    }
}

/// Takes a snapshot with the cached reader of `jvm`, opening one if needed, and copies the
/// counters the metrics are built from.
fn read_jvm(readers: &mut HashMap<u32, Reader>, jvm: &JvmProcess, source: Source) -> Outcome {
    match &jvm.perf_data {
        PerfData::Disabled => return Outcome::Failed("perf_data_disabled"),
        PerfData::Unknown { .. } => return Outcome::Failed("permission"),
        PerfData::File { .. } | PerfData::MemoryOnly => {}
    }
    // A cached reader may belong to an earlier JVM with the same pid: its snapshot then
    // fails with NoProcess, and one fresh open settles it.
    for attempt in 0..2 {
        let reader = match readers.entry(jvm.pid) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => match Reader::open(jvm.pid, source) {
                Ok(reader) => e.insert(reader),
                Err(error) => return Outcome::Failed(reason(&error)),
            },
        };
        let route = match reader.route() {
            pauselab_hsperf::Route::File { .. } => "file",
            pauselab_hsperf::Route::Memory { .. } => "memory",
        };
        match reader.snapshot() {
            Ok(snapshot) => return Outcome::Read(route, CounterValues::copy(&snapshot)),
            // Still starting: the route is fine, keep the reader for the next scrape.
            Err(error @ HsperfError::NotReady { .. }) => return Outcome::Failed(reason(&error)),
            Err(error) => {
                readers.remove(&jvm.pid);
                let retry = attempt == 0 && matches!(error, HsperfError::NoProcess { .. });
                if !retry {
                    return Outcome::Failed(reason(&error));
                }
            }
        }
    }
    Outcome::Failed("exited")
}

fn register_self_metrics(
    registry: &mut Registry,
    state: &State,
    jvms_seen: usize,
    read_by_route: &BTreeMap<&'static str, i64>,
    elapsed: Duration,
) {
    let duration = Gauge::<f64, AtomicU64>::default();
    duration.set(elapsed.as_secs_f64());
    registry.register_with_unit(
        "pauselab_export_scrape_duration",
        "Time this scrape took to find and read every JVM",
        Unit::Seconds,
        duration,
    );
    let seen = Gauge::<i64>::default();
    seen.set(jvms_seen as i64);
    registry.register(
        "pauselab_export_jvms_seen",
        "HotSpot JVMs found on this host in this scrape, read or not",
        seen,
    );
    let read = Family::<Labels, Gauge<i64>>::default();
    for route in ["file", "memory"] {
        read.get_or_create(&vec![("source", route.to_string())])
            .set(read_by_route.get(route).copied().unwrap_or(0));
    }
    registry.register(
        "pauselab_export_jvms_read",
        "JVMs read in this scrape, by source",
        read,
    );
    let errors = Family::<Labels, Counter<u64>>::default();
    for reason in REASONS {
        let count = state.read_errors.get(reason).copied().unwrap_or(0);
        errors
            .get_or_create(&vec![("reason", reason.to_string())])
            .inc_by(count);
    }
    registry.register(
        "pauselab_export_read_errors",
        "JVMs that could not be read, since the exporter started, by reason",
        errors,
    );
    let scrapes = Counter::<u64>::default();
    scrapes.inc_by(state.scrapes);
    registry.register(
        "pauselab_export_scrapes",
        "Scrapes since the exporter started",
        scrapes,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_exporter_that_turns_logs_on_cannot_go_on_without_its_journal() {
        // Others can write in /tmp: no place for the journal.
        let unusable = Path::new("/tmp");
        Exporter::new(Options::default())
            .open_journal(unusable)
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let enabling = Exporter::new(Options {
            enable_gc_log: Some(dir.path().join("logs")),
            ..Options::default()
        });
        let error = enabling.open_journal(unusable).unwrap_err().to_string();
        assert!(
            error.starts_with("cannot keep the journal of GC logs turned on: "),
            "{error}"
        );
        enabling.open_journal(&dir.path().join("state")).unwrap();
    }
}
