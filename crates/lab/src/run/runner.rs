//! Running an experiment: set up the host (through the journal), start every variant on
//! every JDK at the same time under the same stress, sample, stop, undo, and judge.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::experiment::layout::{GC_LOG, HICCUP_LOG, HOST_SERIES, LATENCY_LOG, WORKLOAD_OUT};
use crate::experiment::{
    Companion, Experiment, GcLogLocation, Role, Schedule, TmpLocation, Variant,
};
use crate::host::fault::{self, SlowDevice};
use crate::host::hostsettings;
use crate::host::isolation;
use crate::host::journal::{self, Change, Journal};
use crate::host::sys;
use crate::jvm::java::{self, Jdk};
use crate::measure::follow::IntervalLogFollower;
use crate::measure::hostseries::Sampler;
use crate::measure::instance::{Follow, Instance};
use crate::stress::{Stressors, Targets};
use crate::LabError;

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub duration: Option<Duration>,
    /// JDK homes; empty = the default `java`.
    pub jdks: Vec<PathBuf>,
    /// Bundle directory (must not exist or be empty).
    pub out: PathBuf,
    /// Stress this directory instead of injecting the slow device.
    pub disk: Option<PathBuf>,
    pub no_fault: bool,
    /// Where journals and scratch areas live.
    pub state_dir: PathBuf,
    /// The matrix cell and repeat this run is (`run::matrix`), recorded in the manifest.
    pub cell: Option<pauselab_bundle::CellEntry>,
}

/// Live progress, once a second.
#[derive(Debug, Clone)]
pub struct Progress {
    pub elapsed: Duration,
    pub total: Duration,
    pub variants: Vec<VariantProgress>,
}

#[derive(Debug, Clone)]
pub struct VariantProgress {
    /// `jdk17/default`.
    pub label: String,
    /// Max so far, ms (None: not recorded by this experiment).
    pub max_hiccup_ms: Option<f64>,
    pub max_safepoint_ms: Option<f64>,
    /// The workload's longest gap between two allocations so far (workloads that print
    /// interval lines).
    pub max_gap_ms: Option<f64>,
    pub state: RunState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    /// Its turn has not come yet (`schedule = "one-by-one"`).
    Waiting,
    Running,
    Exited,
}

/// Receives what the run is doing (the CLI shows a progress bar).
pub trait Observer {
    fn note(&mut self, message: &str);
    fn started(&mut self, total: Duration, labels: &[String]);
    fn tick(&mut self, progress: &Progress);
    fn finished(&mut self);
}

/// Everything a finished run knows; the bundle and the verdict are made from it.
pub struct Finished {
    pub experiment: Experiment,
    pub experiment_toml: String,
    pub options: RunOptions,
    pub jdks: Vec<Jdk>,
    pub instances: Vec<Instance>,
    pub slow_device: Option<SlowDevice>,
    pub stressed_dir: Option<PathBuf>,
    pub notes: Vec<String>,
    pub started: SystemTime,
    pub ended: SystemTime,
    pub interrupted: bool,
    pub cleanup_failures: Vec<String>,
    pub stressors: Vec<String>,
    pub host_facts: pauselab_bundle::Host,
    /// `slow-stable-pages`, `none`, or `disk` (`--disk DIR`).
    pub fault_injection: String,
    pub duration: Duration,
    /// What was busy on the host, and when (empty: a quiet host); the verdict is `noisy`.
    pub noise: Vec<String>,
}

/// Registers SIGINT, SIGTERM and SIGHUP to set the returned flag (the run then stops and
/// undoes its changes instead of dying).
pub fn interrupt_flag() -> Result<Arc<AtomicBool>, LabError> {
    let flag = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(signal, flag.clone())
            .map_err(|e| LabError::Host(format!("signal handler: {e}")))?;
    }
    Ok(flag)
}

pub fn run(
    experiment: Experiment,
    experiment_toml: String,
    options: RunOptions,
    stop: Arc<AtomicBool>,
    observer: &mut dyn Observer,
) -> Result<Finished, LabError> {
    let duration = match options.duration {
        Some(d) => d,
        None => experiment.duration.get(),
    };
    let jdks = java::resolve_jdks(&options.jdks)?;
    let jars = java::find_jars(&experiment)?;
    // A host that cannot throttle the slow device is refused before anything changes.
    let mut notes = Vec::new();
    if sys::is_root() && options.disk.is_none() && !options.no_fault && experiment.fault.is_some() {
        let (_, hybrid) = fault::WriteThrottle::for_this_host()?;
        if let Some(line) = hybrid {
            observer.note(&line);
            notes.push(line);
        }
    }

    prepare_out_dir(&options.out)?;
    let out =
        fs::canonicalize(&options.out).map_err(|e| LabError::io(&options.out, "resolve", e))?;

    let stale = journal::stale_journals(&options.state_dir);
    if !stale.is_empty() {
        observer.note(&format!(
            "warning: {} journal(s) of earlier runs were not cleaned up; run `pauselab lab cleanup`",
            stale.len()
        ));
    }

    let root = sys::is_root();
    let run_id = format!(
        "{}-{}-{}",
        experiment.name,
        sys::unix_now_s(),
        std::process::id()
    );
    let started = SystemTime::now();
    // Declared before the stressors so that, on every exit path (panics included), the
    // stressors stop first and the journal undoes the host changes after them.
    let mut journal = Journal::create(
        &options.state_dir,
        &run_id,
        &format!("pauselab lab run {}", experiment.name),
    )?;
    let scratch_parent = options.state_dir.join("lab/scratch");
    fs::create_dir_all(&scratch_parent).map_err(|e| LabError::io(&scratch_parent, "create", e))?;
    let scratch = scratch_parent.join(&run_id);
    fault::create_dir(&mut journal, &scratch)?;
    crate::run::testpoint::hit("scratch", &stop);
    check_stop(&stop)?;
    let prepared = crate::jvm::run_preparation(
        &experiment.prepare,
        &jdks,
        &jars,
        &scratch,
        &out,
        &mut journal,
        &run_id,
        &stop,
        &mut |step| observer.note(step),
    )?;
    notes.extend(prepared.notes());

    // Where the stressed /tmp directories go.
    let mut slow_device = None;
    let mut fault_injection = "none".to_string();
    let stressed_root: PathBuf = if let Some(disk) = &options.disk {
        let dir = disk.join(format!("pauselab-{run_id}"));
        fault::create_dir(&mut journal, &dir)?;
        fault_injection = "disk".into();
        notes.push(format!(
            "stressed filesystem: {} (--disk), disk stressor only",
            disk.display()
        ));
        dir
    } else if options.no_fault {
        notes.push(
            "fault injection skipped (--no-fault): the stressors run on the host's own disk".into(),
        );
        plain_stressed_dir(&mut journal, &scratch)?
    } else if let Some(fault) = &experiment.fault {
        if !root {
            notes.push(
                "fault injection skipped: the slow device needs root (loop device, mount, blkio)"
                    .into(),
            );
            plain_stressed_dir(&mut journal, &scratch)?
        } else {
            let spec = fault.slow_device_spec();
            let device = fault::setup_slow_device(&mut journal, &scratch, &spec)?;
            notes.push(format!(
                "fault injected: /dev/{} ({}{}, stable_writes={}, {} B/s write throttle, {}) on {}",
                device.device,
                spec.fstype,
                spec.mount_options
                    .as_ref()
                    .map(|o| format!(" -o {o}"))
                    .unwrap_or_default(),
                u8::from(spec.stable_writes),
                spec.write_bps,
                match &device.throttle {
                    fault::WriteThrottle::BlkioV1 { .. } => "cgroup v1 blkio",
                    fault::WriteThrottle::IoMaxV2 { .. } => "cgroup v2 io.max",
                },
                device.mount_point.display()
            ));
            let root_dir = device.mount_point.join("variants");
            slow_device = Some(device);
            fault_injection = "slow-stable-pages".into();
            fault::create_dir(&mut journal, &root_dir)?;
            root_dir
        }
    } else {
        plain_stressed_dir(&mut journal, &scratch)?
    };
    crate::run::testpoint::hit("fault", &stop);
    check_stop(&stop)?;
    if let Some(spec) = &experiment.swap {
        if root {
            let bytes = spec.bytes()?;
            let swap = crate::host::swap::create_swap_file(&mut journal, &stressed_root, bytes)?;
            notes.push(format!(
                "swap on: {} ({} MiB), off again after the run",
                swap.path.display(),
                swap.bytes >> 20
            ));
        } else {
            notes.push("swap file skipped: swapon needs root".into());
        }
        crate::run::testpoint::hit("swap", &stop);
        check_stop(&stop)?;
    }

    let tmpfs_root = scratch.join("tmpfs");
    let wants_tmpfs = experiment
        .variants
        .iter()
        .any(|v| v.tmp == TmpLocation::Tmpfs);
    let tmpfs_ok = wants_tmpfs && root;
    if tmpfs_ok {
        fault::mount_tmpfs(&mut journal, &tmpfs_root, 256 << 20)?;
    }
    let scratch_tmp_root = scratch.join("private");
    fault::create_dir(&mut journal, &scratch_tmp_root)?;

    // Plan every instance.
    let mut instances = Vec::new();
    let mut host_hsperf_ready = false;
    for jdk in &jdks {
        for variant in &experiment.variants {
            let out_dir = out
                .join("variants")
                .join(format!("{}-{}", variant.name, jdk.label));
            fs::create_dir_all(&out_dir).map_err(|e| LabError::io(&out_dir, "create", e))?;
            let mut instance = Instance {
                jdk: jdk.label.clone(),
                variant: variant.name.clone(),
                role: if variant.name == experiment.baseline {
                    Role::Baseline
                } else {
                    variant.role
                },
                tmp: variant.tmp,
                tmp_dir: None,
                gc_log: None,
                out_dir,
                command: Vec::new(),
                pid: None,
                skipped: None,
                early_exit: None,
                elapsed_s: None,
                companions: Vec::new(),
                exit_code: None,
                host_changes: Vec::new(),
                runner_measurements: Vec::new(),
                started_at: None,
                follow: Follow::default(),
            };
            let dir_name = format!("{}-{}", jdk.label, variant.name);
            let tmp_dir = match variant.tmp {
                TmpLocation::Host => None,
                _ if !root => {
                    instance.skipped = Some(
                        "a private hsperf directory needs a mount namespace, which needs root"
                            .into(),
                    );
                    None
                }
                TmpLocation::Tmpfs if !tmpfs_ok => None,
                TmpLocation::Stressed => Some(stressed_root.join(&dir_name)),
                TmpLocation::Tmpfs => Some(tmpfs_root.join(&dir_name)),
                TmpLocation::Scratch => Some(scratch_tmp_root.join(&dir_name)),
            };
            if let Some(dir) = &tmp_dir {
                fault::create_dir(&mut journal, dir)?;
                isolation::variant_hsperf_dir(dir)?;
                if !host_hsperf_ready {
                    isolation::ensure_host_hsperf_dir(&mut journal)?;
                    host_hsperf_ready = true;
                }
            }
            if let Some(min) = variant.min_jdk.filter(|m| jdk.major < *m) {
                instance.skipped = Some(format!("needs JDK {min} or later"));
            }
            if !root
                && (variant.cpu_quota.is_some()
                    || variant.memory_cgroup.is_some()
                    || !variant.host.is_empty())
            {
                instance
                    .skipped
                    .get_or_insert_with(|| "cgroups and host settings need root".to_string());
            }
            let gc_log = match (variant.gc_log_on, &tmp_dir) {
                (GcLogLocation::Tmp, Some(dir)) => dir.join(GC_LOG),
                _ => instance.out_dir.join(GC_LOG),
            };
            instance.tmp_dir = tmp_dir;
            instance.command = java::command_line(
                jdk,
                &jars,
                &experiment,
                variant,
                &instance.out_dir,
                &gc_log,
                duration,
            );
            instance.gc_log = Some(gc_log);
            prepared.expand_command(&jdk.label, &jars, &mut instance.command);
            if let Some(why) = prepared.failure(&jdk.label) {
                instance
                    .skipped
                    .get_or_insert(format!("preparation failed: {why}"));
            }
            instances.push(instance);
        }
    }
    for i in instances.iter().filter(|i| i.skipped.is_some()) {
        notes.push(format!(
            "skipped {}/{}: {}",
            i.jdk,
            i.variant,
            i.skipped.as_deref().unwrap_or_default()
        ));
    }

    let mut fact_paths: Vec<(&str, &Path)> = vec![
        ("stressed", &stressed_root),
        ("out", &out),
        ("scratch", &scratch),
    ];
    if tmpfs_ok {
        fact_paths.push(("tmpfs", &tmpfs_root));
    }
    let host_facts = crate::measure::hostfacts::collect(&fact_paths);

    if !experiment.host.is_empty() {
        if root {
            notes.extend(hostsettings::apply(&mut journal, &experiment.host)?);
        } else {
            notes.push("host settings skipped: they need root".into());
        }
    }

    // Stressors first, so every JVM starts under the same stress.
    let stressed_dirs: Vec<PathBuf> = instances
        .iter()
        .filter(|i| i.tmp == TmpLocation::Stressed)
        .filter_map(|i| i.tmp_dir.clone())
        .collect();
    let specs: Vec<_> = experiment
        .stressors
        .iter()
        .filter(|s| {
            options.disk.is_none()
                || matches!(s, crate::experiment::StressorSpec::DiskWriter { .. })
        })
        .cloned()
        .collect();
    // Busy before anything of the run starts: warned now, named in the verdict.
    let mut noise = crate::measure::noise::busy_before(&crate::measure::noise::Before::measure());
    for line in &noise {
        observer.note(&format!(
            "warning: the host is busy ({line}); the verdict may be noise (docs/lab.md, \"Noise\")"
        ));
    }
    let mut stressors = Stressors::start(
        &specs,
        &Targets {
            disk_dir: Some(stressed_root.clone()),
            victim_dirs: stressed_dirs,
        },
    )?;
    let stressor_names = stressors.names();

    journal.record(Change::Processes {
        run_id: run_id.clone(),
    })?;

    let turns = turns(&experiment, &instances);
    let labels: Vec<String> = instances
        .iter()
        .filter(|i| i.skipped.is_none())
        .map(|i| format!("{}/{}", i.jdk, i.variant))
        .collect();
    let total = duration * turns.len() as u32;
    observer.started(total, &labels);
    let series_path = out.join(HOST_SERIES);
    let mut series = file_for(&series_path)?;
    let _ = writeln!(series, "{}", crate::measure::hostseries::CSV_HEADER);
    let mut watch = Watch {
        experiment: &experiment,
        sampler: Sampler::default(),
        series,
        begin: Instant::now(),
        total,
        stop: &stop,
        warmup_s: experiment.warmup.get().as_secs_f64(),
        other_cpu: Vec::new(),
        processes_at_start: crate::measure::noise::ProcessTimes::read(),
    };
    let mut interrupted = false;
    let mut cleanup_failures = Vec::new();
    let mut run_memory = crate::run::memory::RunMemory::default();
    for (number, turn) in turns.iter().enumerate() {
        if number > 0 {
            crate::run::testpoint::hit("next-turn", &stop);
        }
        // Everything recorded from here on belongs to this turn and is undone after it.
        let mark = journal.mark();
        let outcome = run_turn(
            &mut journal,
            &mut run_memory,
            &run_id,
            &mut instances,
            turn,
            duration,
            &mut watch,
            &stressors,
            observer,
        );
        match outcome {
            Ok(TurnEnd::Completed) => {}
            Ok(TurnEnd::Interrupted) => interrupted = true,
            Err(e) => {
                // The run's changes are undone when `journal` drops.
                stressors.stop();
                return Err(e);
            }
        }
        cleanup_failures.extend(journal.undo_to(mark));
        if interrupted {
            break;
        }
    }
    observer.finished();
    let busiest = crate::measure::noise::busiest(
        &watch.processes_at_start,
        &crate::measure::noise::ProcessTimes::read(),
        std::process::id(),
    );
    noise.extend(crate::measure::noise::busy_during(
        &watch.other_cpu,
        &busiest,
    ));
    crate::run::testpoint::hit("stopping", &stop);
    stressors.stop();
    drop(stressors);
    cleanup_failures.extend(journal.undo_all());
    drop(journal);

    Ok(Finished {
        experiment,
        experiment_toml,
        options,
        jdks,
        instances,
        slow_device,
        stressed_dir: Some(stressed_root),
        notes,
        started,
        ended: SystemTime::now(),
        interrupted,
        cleanup_failures,
        stressors: stressor_names,
        host_facts,
        fault_injection,
        duration,
        noise,
    })
}

/// A group of instances that run at the same time.
struct Turn {
    instances: Vec<usize>,
    /// Host settings while this turn runs.
    host: crate::experiment::HostSettings,
}

/// `together`: one turn with every instance of every JDK. `one-by-one`: one turn per
/// instance, JDK by JDK in variant order.
fn turns(experiment: &Experiment, instances: &[Instance]) -> Vec<Turn> {
    let runnable: Vec<usize> = (0..instances.len())
        .filter(|&i| instances[i].skipped.is_none())
        .collect();
    match experiment.schedule {
        Schedule::Together => vec![Turn {
            instances: runnable,
            host: Default::default(),
        }],
        Schedule::OneByOne => runnable
            .into_iter()
            .map(|i| Turn {
                instances: vec![i],
                host: experiment
                    .variants
                    .iter()
                    .find(|v| v.name == instances[i].variant)
                    .map(|v| v.host.clone())
                    .unwrap_or_default(),
            })
            .collect(),
    }
}

/// What every turn shares: the host sampler, the progress clock, the stop flag.
struct Watch<'a> {
    experiment: &'a Experiment,
    sampler: Sampler,
    series: fs::File,
    begin: Instant,
    total: Duration,
    stop: &'a Arc<AtomicBool>,
    /// Hiccups and safepoints before this much of a JVM's run are left out of its verdict.
    warmup_s: f64,
    /// Every second: (seconds since the start, CPU of processes outside the run, percent).
    other_cpu: Vec<(f64, f64)>,
    /// Every process's CPU time when the run started: names the busiest other commands.
    processes_at_start: crate::measure::noise::ProcessTimes,
}

enum TurnEnd {
    Completed,
    Interrupted,
}

/// Runs one turn: host settings and cgroups, the JVMs and their companions, until the
/// duration is over, every JVM has exited, or the run is stopped; then stops the JVMs and
/// moves GC logs kept in a variant's /tmp into the bundle. The caller undoes the turn's
/// host changes.
#[allow(clippy::too_many_arguments)]
fn run_turn(
    journal: &mut Journal,
    run_memory: &mut crate::run::memory::RunMemory,
    run_id: &str,
    instances: &mut [Instance],
    turn: &Turn,
    duration: Duration,
    watch: &mut Watch<'_>,
    stressors: &Stressors,
    observer: &mut dyn Observer,
) -> Result<TurnEnd, LabError> {
    let stop = watch.stop;
    if let Some(reason) = crate::run::memory::no_room(run_memory, instances, &turn.instances) {
        for &index in &turn.instances {
            instances[index].skipped = Some(reason.clone());
        }
        return Ok(TurnEnd::Completed);
    }
    let host_notes = if turn.host.is_empty() {
        Vec::new()
    } else {
        hostsettings::apply(journal, &turn.host)?
    };
    for &index in &turn.instances {
        instances[index]
            .host_changes
            .extend(host_notes.iter().cloned());
    }
    let memory = crate::run::memory::TurnMemory::start(
        run_memory,
        journal,
        watch.experiment,
        instances,
        &turn.instances,
        stressors.counters.clone(),
        stop,
    )?;
    let mut children: Vec<(usize, Child)> = Vec::new();
    let mut cgroups: Vec<(usize, PathBuf)> = Vec::new();
    let mut memory_watches: Vec<(usize, crate::measure::memcg::MemoryWatch)> = Vec::new();
    // Killed when dropped: at the end of the turn, and on every early return.
    let mut fillers: Vec<crate::host::cgroup_filler::CgroupFiller> = Vec::new();
    for &index in &turn.instances {
        let instance = &mut instances[index];
        let variant = watch
            .experiment
            .variants
            .iter()
            .find(|v| v.name == instance.variant)
            .cloned();
        let Some(variant) = variant else { continue };
        let name = format!("{}-{}", instance.jdk, instance.variant);
        let cgroup_procs = match variant.cpu_quota {
            Some(cpus) => {
                let procs = crate::host::cgroup::create_cpu_limited(journal, run_id, &name, cpus)?;
                instance
                    .host_changes
                    .push(format!("CPU cgroup {} limited to {cpus} CPU", name));
                Some(procs)
            }
            None => None,
        };
        let memory = match &variant.memory_cgroup {
            Some(spec) => {
                let limits = spec.resolve()?;
                let groups =
                    crate::host::cgroup::create_memory_limited(journal, run_id, &name, &limits)?;
                instance
                    .host_changes
                    .push(describe_memory_cgroup(&groups, &limits));
                Some((limits, groups))
            }
            None => None,
        };
        let joined: Vec<PathBuf> = cgroup_procs
            .iter()
            .cloned()
            .chain(memory.iter().map(|(_, groups)| groups.jvm_procs()))
            .collect();
        if variant.thp_disabled {
            instance.host_changes.push(
                "transparent huge pages disabled for this process (PR_SET_THP_DISABLE)".into(),
            );
        }
        let output = file_for(&instance.out_dir.join(WORKLOAD_OUT))?;
        let mut command = Command::new(&instance.command[0]);
        command
            .args(&instance.command[1..])
            .current_dir(&instance.out_dir)
            .stdin(Stdio::null())
            .stdout(
                output
                    .try_clone()
                    .map_err(|e| LabError::io(&instance.out_dir, "open workload.out", e))?,
            )
            .stderr(output);
        let hsperf_source = instance
            .tmp_dir
            .as_ref()
            .map(|dir| dir.join(isolation::hsperf_dir_name()));
        let hsperf_target = isolation::host_hsperf_path();
        isolation::isolate(
            &mut command,
            run_id,
            isolation::Isolation {
                hsperf: hsperf_source
                    .as_deref()
                    .map(|source| isolation::HsperfBind {
                        source,
                        target: &hsperf_target,
                    }),
                cgroups: &joined,
                thp_disabled: variant.thp_disabled,
            },
        )?;
        let child = command.spawn().map_err(|e| {
            LabError::Host(format!("start {}/{}: {e}", instance.jdk, instance.variant))
        })?;
        let child_pid = child.id();
        instance.pid = Some(child_pid);
        let started_at = SystemTime::now();
        instance.started_at = Some(started_at);
        let after_warmup_s = crate::host::sys::unix_s(started_at) + watch.warmup_s;
        let workload = &watch.experiment.workload;
        instance.follow = Follow {
            safepoints: workload
                .gc_log
                .as_ref()
                .and(instance.gc_log.as_deref())
                .map(crate::measure::follow::SafepointFollower::new),
            hiccups: workload.hiccup_agent.then(|| {
                IntervalLogFollower::new(&instance.out_dir.join(HICCUP_LOG), after_warmup_s)
            }),
            latency: workload.latency_log.then(|| {
                IntervalLogFollower::new(&instance.out_dir.join(LATENCY_LOG), after_warmup_s)
            }),
            gaps: Some(crate::measure::follow::GapFollower::new(
                &instance.out_dir.join(WORKLOAD_OUT),
                watch.warmup_s,
            )),
        };
        children.push((index, child));
        if let Some(procs) = cgroup_procs {
            cgroups.push((index, procs));
        }
        let watched = memory
            .as_ref()
            .map(|(_, groups)| (groups.variant.clone(), groups.jvm.clone()));
        memory_watches.push((
            index,
            crate::measure::memcg::MemoryWatch::new(child_pid, watched),
        ));
        if let Some((limits, groups)) = memory {
            if let Some((bytes, after)) = limits.filler {
                let filler = crate::host::cgroup_filler::CgroupFiller::start(
                    journal,
                    &groups.filler_procs(),
                    bytes,
                    after,
                )?;
                instances[index].companions.push(format!(
                    "cgroup filler (pid {}): {} MiB after {:?}",
                    filler.pid(),
                    bytes >> 20,
                    after
                ));
                fillers.push(filler);
            }
        }
    }
    crate::run::testpoint::hit("started", stop);
    if stop.load(Ordering::SeqCst) {
        stop_children(instances, &mut children);
        return Ok(TurnEnd::Interrupted);
    }
    let readers = start_companions(watch.experiment, instances, &turn.instances, stop);

    let turn_begin = Instant::now();
    let mut next_tick = turn_begin;
    let mut end = TurnEnd::Completed;
    loop {
        if stop.load(Ordering::SeqCst) {
            end = TurnEnd::Interrupted;
            break;
        }
        let now = Instant::now();
        if now >= next_tick {
            next_tick += Duration::from_secs(1);
            let elapsed = now - watch.begin;
            let run_pids: Vec<u32> = children
                .iter()
                .map(|(_, child)| child.id())
                .chain(fillers.iter().map(|f| f.pid()))
                .collect();
            let sample =
                watch
                    .sampler
                    .sample(elapsed.as_secs_f64(), &stressors.counters, &run_pids);
            if let Some(other) = sample.other_cpu_pct {
                watch.other_cpu.push((sample.t_s, other));
            }
            let _ = writeln!(watch.series, "{}", sample.csv_row());
            for (_, memory_watch) in memory_watches.iter_mut() {
                memory_watch.sample();
            }
            let mut any_running = false;
            for (index, child) in children.iter_mut() {
                let instance = &mut instances[*index];
                if instance.exit_code.is_some() || instance.early_exit.is_some() {
                    continue;
                }
                match child.try_wait() {
                    Ok(None) => any_running = true,
                    Ok(Some(status)) => {
                        instance.exit_code = status.code();
                        instance.elapsed_s = instance
                            .started_at
                            .and_then(|t| t.elapsed().ok())
                            .map(|d| d.as_secs_f64());
                        if !status.success() {
                            instance.early_exit = Some(format!("exited early: {status}"));
                        }
                    }
                    Err(e) => instance.early_exit = Some(format!("lost: {e}")),
                }
            }
            let progress = Progress {
                elapsed,
                total: watch.total,
                variants: instances
                    .iter_mut()
                    .filter(|i| i.skipped.is_none())
                    .map(progress_of)
                    .collect(),
            };
            observer.tick(&progress);
            if now - turn_begin >= duration || !any_running {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    for (_, memory_watch) in memory_watches.iter_mut() {
        memory_watch.sample();
    }
    stop_children(instances, &mut children);
    drop(fillers);
    for &index in &turn.instances {
        instances[index].follow.poll(true);
    }
    readers.stop();
    for (index, procs) in &cgroups {
        instances[*index].runner_measurements = crate::measure::throttling::throttling(procs);
    }
    for (index, memory_watch) in &memory_watches {
        instances[*index]
            .runner_measurements
            .extend(memory_watch.measurements());
    }
    memory.finish(run_memory, instances, &turn.instances);
    // GC logs kept on the variant's own /tmp go into the bundle before that /tmp goes away.
    for &index in &turn.instances {
        let instance = &mut instances[index];
        let target = instance.out_dir.join(GC_LOG);
        if let Some(log) = instance.gc_log.clone().filter(|l| *l != target) {
            if log.exists() {
                let mut from =
                    fs::File::open(&log).map_err(|e| LabError::io(&log, "copy the GC log", e))?;
                std::io::copy(&mut from, &mut file_for(&target)?)
                    .map_err(|e| LabError::io(&log, "copy the GC log", e))?;
            }
        }
    }
    Ok(end)
}

/// One line for the bundle: what the variant's memory cgroup allows.
fn describe_memory_cgroup(
    groups: &crate::host::cgroup::MemoryGroups,
    limits: &crate::experiment::MemoryCgroup,
) -> String {
    let swap = match limits.swap {
        None => "swap unlimited".to_string(),
        Some(0) => "no swap".to_string(),
        Some(bytes) => format!("{} MiB of swap", bytes >> 20),
    };
    let jvm = if limits.jvm_swap {
        ""
    } else {
        ", the JVM's pages kept out of swap"
    };
    let swappiness = limits
        .swappiness
        .map(|s| format!(", swappiness {s}"))
        .unwrap_or_default();
    let neighbour = limits
        .filler_limit
        .map(|own| format!(", the filler limited to {} MiB of its own", own >> 20))
        .unwrap_or_default();
    format!(
        "memory cgroup {} limited to {} MiB, {swap}{swappiness}{jvm}{neighbour}",
        groups.variant.display(),
        limits.limit >> 20
    )
}

/// Stops a turn's JVMs politely (they flush their logs), killing those that do not stop
/// within 15 s.
fn stop_children(instances: &mut [Instance], children: &mut [(usize, Child)]) {
    for (index, child) in children.iter() {
        if instances[*index].exit_code.is_none() {
            sys::signal_group(child, libc::SIGTERM);
        }
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    for (index, child) in children.iter_mut() {
        let instance = &mut instances[*index];
        loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    if instance.exit_code.is_none() {
                        instance.exit_code = status.code();
                    }
                    break;
                }
                Err(_) => break,
                Ok(None) if Instant::now() >= deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    instance
                        .early_exit
                        .get_or_insert_with(|| "did not stop on SIGTERM; killed".into());
                    break;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }
}

/// One instance's progress line: its maxima so far, from what its logs gained since the
/// last tick.
fn progress_of(instance: &mut Instance) -> VariantProgress {
    let started = instance.pid.is_some();
    let running = instance.exit_code.is_none() && instance.early_exit.is_none();
    if started && running {
        instance.follow.poll(false);
    }
    let max_hiccup_ms = instance
        .follow
        .hiccups
        .as_ref()
        .map(IntervalLogFollower::max_ms);
    let max_safepoint_ms = instance
        .follow
        .safepoints
        .as_ref()
        .map(crate::measure::follow::SafepointFollower::max_ms);
    let max_gap_ms = instance.follow.gaps.as_ref().and_then(|g| g.max_ms());
    VariantProgress {
        label: format!("{}/{}", instance.jdk, instance.variant),
        max_hiccup_ms,
        max_safepoint_ms,
        max_gap_ms,
        state: if !started {
            RunState::Waiting
        } else if !running {
            RunState::Exited
        } else {
            RunState::Running
        },
    }
}

fn check_stop(stop: &AtomicBool) -> Result<(), LabError> {
    if stop.load(Ordering::SeqCst) {
        return Err(LabError::Interrupted);
    }
    Ok(())
}

fn plain_stressed_dir(journal: &mut Journal, scratch: &Path) -> Result<PathBuf, LabError> {
    let dir = scratch.join("stressed");
    fault::create_dir(journal, &dir)?;
    Ok(dir)
}

fn file_for(path: &Path) -> Result<fs::File, LabError> {
    pauselab_pause::output::create_file(path).map_err(|e| LabError::io(path, "create", e))
}

/// Companion threads (the hsperf reader) of every running instance.
struct Companions {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Companions {
    fn stop(self) {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads {
            let _ = t.join();
        }
    }
}

fn start_companions(
    experiment: &Experiment,
    instances: &mut [Instance],
    turn: &[usize],
    run_stop: &Arc<AtomicBool>,
) -> Companions {
    let stop = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    for &index in turn {
        let instance = &mut instances[index];
        let Some(pid) = instance.pid else { continue };
        let variant: &Variant = match experiment
            .variants
            .iter()
            .find(|v| v.name == instance.variant)
        {
            Some(v) => v,
            None => continue,
        };
        for companion in &variant.companions {
            let Companion::HsperfReader { interval } = companion else {
                continue;
            };
            let interval = interval.get();
            let log = instance.out_dir.join(crate::stress::READER_LOG);
            let stop = stop.clone();
            let run_stop = run_stop.clone();
            instance
                .companions
                .push(format!("hsperf-reader every {interval:?}"));
            threads.push(std::thread::spawn(move || {
                crate::stress::hsperf_reader(pid, interval, &log, &stop, &run_stop)
            }));
        }
    }
    Companions { stop, threads }
}

/// Creates the bundle directory; refuses a non-empty one (results are never mixed).
fn prepare_out_dir(out: &Path) -> Result<(), LabError> {
    let text = out.to_string_lossy();
    if text.contains(',') || text.contains(':') {
        return Err(LabError::Experiment(format!(
            "{text}: the output directory may not contain ',' or ':' (JVM option syntax); choose another --out"
        )));
    }
    create_empty_dir(out)
}

/// Creates the output directory `out`, or takes it when it exists and is empty.
pub(crate) fn create_empty_dir(out: &Path) -> Result<(), LabError> {
    if out.exists() {
        let mut entries =
            fs::read_dir(out).map_err(|e| LabError::io(out, "read the output directory", e))?;
        if entries.next().is_some() {
            return Err(LabError::Experiment(format!(
                "{}: output directory is not empty; choose another --out",
                out.display()
            )));
        }
    }
    pauselab_pause::output::create_dir(out)
        .map_err(|e| LabError::io(out, "create the output directory", e))
}
