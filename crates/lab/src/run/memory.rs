//! Memory around one turn of a run (the variants that run together, or one variant with
//! `schedule = "one-by-one"`): the memory filler and the THP governor a variant asks for
//! as companions, the heap check before its JVMs start, and what the kernel's THP,
//! compaction, swap and reclaim counters did meanwhile, as measurements.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::experiment::PressureSpec;
use crate::experiment::{Companion, Experiment};
use crate::host::journal::Journal;
use crate::measure::instance::Instance;
use crate::measure::Measurement;
use crate::stress::Counters;
use crate::stress::Filler;
use crate::stress::Governor;
use crate::LabError;

/// Why the JVMs of a turn are not started: their heaps (`-Xmx`) plus a margin do not fit
/// in MemAvailable now (docs/experiments/pretouch.md). Memory held by the run's own filler
/// counts as available: it gives way under its floor. None when they fit.
pub fn no_room(run: &RunMemory, instances: &[Instance], turn: &[usize]) -> Option<String> {
    let commands: Vec<&[String]> = turn
        .iter()
        .map(|&i| instances[i].command.as_slice())
        .collect();
    let ours = run.filler.as_ref().map_or(0, |(_, f)| f.held());
    crate::stress::heaps_fit(
        &commands,
        crate::host::sys::mem_available() + ours,
        crate::host::sys::mem_total(),
    )
    .err()
    .map(|e| e.to_string())
}

/// Host-wide swap and reclaim counters of /proc/vmstat measured over each turn as `vm.*`
/// (`allocstall` sums the per-zone counters). The kernel counts reclaim forced by a cgroup's
/// own limit in that cgroup, not in `pgscan_direct` and `allocstall`: those move only when
/// the host as a whole is short of memory.
pub const RECLAIM_COUNTERS: &[&str] = &[
    "pswpin",
    "pswpout",
    "pgmajfault",
    "pgscan_direct",
    "allocstall",
];

/// How long the filler may take to get the host near its limit before the JVM starts.
const FILL_PATIENCE: Duration = Duration::from_secs(90);

/// What outlives a turn: the filler stays while consecutive turns ask for the same
/// pressure (filling 20 GiB took 24-52 s here), and goes as soon as a turn asks for none or
/// another, and with the run.
#[derive(Default)]
pub struct RunMemory {
    filler: Option<(PressureSpec, Filler)>,
}

/// Started before a turn's JVMs, finished after they stopped.
pub struct TurnMemory {
    filler: Option<(PressureSpec, Filler)>,
    governor: Option<Governor>,
    vmstat_before: Vec<(String, u64)>,
    reclaim_before: Option<pauselab_host::vmstat::VmStat>,
    fill_s: f64,
    filled: bool,
}

impl TurnMemory {
    /// For the `memory-pressure` and `thp-governor` companions of the turn's variants (the
    /// first of each: both act on the whole host): takes the host near its limit, waiting
    /// until the filler settles so the JVMs start under pressure, then starts the governor,
    /// which records the THP mode in `journal`, its log in the first instance's directory.
    pub fn start(
        run: &mut RunMemory,
        journal: &mut Journal,
        experiment: &Experiment,
        instances: &[Instance],
        turn: &[usize],
        counters: Arc<Counters>,
        stop: &AtomicBool,
    ) -> Result<TurnMemory, LabError> {
        let companions: Vec<&Companion> = turn
            .iter()
            .filter_map(|&i| {
                experiment
                    .variants
                    .iter()
                    .find(|v| v.name == instances[i].variant)
            })
            .flat_map(|v| v.companions.iter())
            .collect();
        let pressure = companions.iter().find_map(|c| match c {
            Companion::MemoryPressure(spec) => Some(spec),
            _ => None,
        });
        let governor = companions.iter().find_map(|c| match c {
            Companion::ThpGovernor(spec) => Some(spec),
            _ => None,
        });
        let mut memory = TurnMemory {
            filler: None,
            governor: None,
            vmstat_before: Vec::new(),
            reclaim_before: None,
            fill_s: 0.0,
            filled: false,
        };
        let kept = run.filler.take();
        if let Some(spec) = pressure {
            let started = Instant::now();
            let filler = match kept {
                Some((kept_spec, filler)) if kept_spec == *spec => filler,
                other => {
                    drop(other);
                    let bounds = spec.bounds()?;
                    Filler::start(bounds, counters)?
                }
            };
            memory.filled = filler.wait_settled(FILL_PATIENCE, stop);
            memory.fill_s = started.elapsed().as_secs_f64();
            filler.reset_stats();
            memory.filler = Some((spec.clone(), filler));
        }
        if let (Some(spec), Some(&first)) = (governor, turn.first()) {
            memory.governor = Some(Governor::start(
                journal,
                spec,
                Path::new(crate::stress::ENABLED),
                &instances[first].out_dir.join(crate::stress::GOVERNOR_LOG),
            )?);
        }
        memory.vmstat_before = crate::stress::vmstat();
        memory.reclaim_before = pauselab_host::vmstat::VmStat::read().ok();
        Ok(memory)
    }

    /// A note for the bundle when the filler did not get where it was asked to.
    fn note(&self) -> Option<String> {
        let (_, filler) = self.filler.as_ref()?;
        (!self.filled).then(|| {
            format!(
                "memory filler held {} MiB after {:.0} s without reaching its target; the variant ran anyway",
                filler.held() >> 20,
                self.fill_s
            )
        })
    }

    /// Stops the governor (THP mode back) and the filler (memory back), and gives every
    /// instance of the turn the measurements: `thp.<vmstat counter>` growth over the turn
    /// (host-wide), `pressure.*` and `thp.governor_*` for the companions that ran.
    /// The filler is handed back to `run` for the next turn.
    pub fn finish(mut self, run: &mut RunMemory, instances: &mut [Instance], turn: &[usize]) {
        let mut notes: Vec<String> = self.note().into_iter().collect();
        let (measurements, errors) = self.measure();
        run.filler = self.filler.take();
        notes.extend(errors.into_iter().map(|e| format!("thp governor: {e}")));
        for &i in turn {
            instances[i]
                .runner_measurements
                .extend(measurements.iter().cloned());
            instances[i].host_changes.extend(notes.iter().cloned());
        }
    }

    fn measure(&mut self) -> (Vec<Measurement>, Vec<String>) {
        let after = crate::stress::vmstat();
        let mut measurements: Vec<Measurement> =
            crate::stress::vmstat_delta(&self.vmstat_before, &after)
                .into_iter()
                .map(|(name, value)| Measurement::new(&format!("thp.{name}"), value as f64, ""))
                .collect();
        if let (Some(before), Ok(after)) =
            (&self.reclaim_before, pauselab_host::vmstat::VmStat::read())
        {
            for name in RECLAIM_COUNTERS {
                measurements.push(Measurement::new(
                    &format!("vm.{name}"),
                    after.delta(before, name) as f64,
                    "",
                ));
            }
        }
        let mut errors = Vec::new();
        if let Some(governor) = self.governor.take() {
            let report = governor.stop();
            measurements.push(Measurement::new(
                "thp.governor_turned_off",
                report.turned_off as f64,
                "",
            ));
            measurements.push(Measurement::new("thp.governor_off_s", report.off_s, "s"));
            errors.extend(report.errors);
        }
        if let Some((_, filler)) = &self.filler {
            let report = filler.stats();
            let mib = |b: u64| b as f64 / 1048576.0;
            measurements.push(Measurement::new(
                "pressure.held_mib",
                mib(report.peak_bytes),
                "MiB",
            ));
            measurements.push(Measurement::new("pressure.fill_s", self.fill_s, "s"));
            measurements.push(Measurement::new(
                "pressure.min_available_mib",
                mib(report.min_available_bytes),
                "MiB",
            ));
            measurements.push(Measurement::new(
                "pressure.released_chunks",
                report.released_chunks as f64,
                "",
            ));
        }
        (measurements, errors)
    }
}
