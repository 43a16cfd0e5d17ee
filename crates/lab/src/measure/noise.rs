//! Was the host busy with other work? Pressure (PSI) before the run, and the CPU time of
//! processes outside the run before it and every second during it, against the thresholds
//! docs/lab.md states. A busy host makes a verdict `noisy`: the pauses may be the
//! neighbours', not the experiment's.

use std::collections::HashMap;
use std::fs;

pub use pauselab_bundle::noise::{
    BUSY_SECONDS, CPU_PRESSURE_PCT, IO_PRESSURE_PCT, MEMORY_PRESSURE_PCT, OTHER_CPU_PCT,
};

/// What the host was doing before the run started (pressure is host-wide, and the run's
/// own JVMs and stressors raise it once they start, so it is judged only here).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Before {
    pub psi_cpu_some_avg10: Option<f64>,
    pub psi_io_some_avg10: Option<f64>,
    pub psi_memory_some_avg10: Option<f64>,
    pub other_cpu_pct: Option<f64>,
}

impl Before {
    /// Pressure now, and the CPU time of processes other than this one over the next half
    /// second.
    pub fn measure() -> Before {
        let counters = crate::stress::Counters::default();
        let mut sampler = crate::measure::hostseries::Sampler::default();
        sampler.sample(0.0, &counters, &[]);
        std::thread::sleep(std::time::Duration::from_millis(500));
        let sample = sampler.sample(0.5, &counters, &[]);
        Before {
            psi_cpu_some_avg10: sample.psi_cpu_some_avg10,
            psi_io_some_avg10: sample.psi_io_some_avg10,
            psi_memory_some_avg10: sample.psi_memory_some_avg10,
            other_cpu_pct: sample.other_cpu_pct,
        }
    }
}

/// One line per threshold the host was above before the run.
pub fn busy_before(before: &Before) -> Vec<String> {
    let checks = [
        ("CPU pressure", before.psi_cpu_some_avg10, CPU_PRESSURE_PCT),
        ("I/O pressure", before.psi_io_some_avg10, IO_PRESSURE_PCT),
        (
            "memory pressure",
            before.psi_memory_some_avg10,
            MEMORY_PRESSURE_PCT,
        ),
    ];
    let mut busy: Vec<String> = checks
        .iter()
        .filter_map(|(what, value, limit)| {
            let value = (*value)?;
            (value >= *limit).then(|| {
                format!("before the run: {what} {value:.0} % (some avg10, limit {limit:.0} %)")
            })
        })
        .collect();
    if let Some(other) = before.other_cpu_pct.filter(|v| *v >= OTHER_CPU_PCT) {
        busy.push(format!(
            "before the run: other processes used {other:.0} % of the CPUs (limit {OTHER_CPU_PCT:.0} %)"
        ));
    }
    busy
}

/// How many commands a noisy line names.
const BUSIEST_NAMED: usize = 3;

/// Every process's CPU time at one moment, and the host's: two readings name the commands
/// that kept the host busy in between.
#[derive(Debug, Clone, Default)]
pub struct ProcessTimes {
    /// All CPUs' ticks, busy and idle.
    all_ticks: u64,
    /// (pid, start time) -> (command, parent pid, utime + stime).
    processes: HashMap<(u32, u64), (String, u32, u64)>,
}

impl ProcessTimes {
    /// Now, from /proc/stat and every /proc/PID/stat.
    pub fn read() -> ProcessTimes {
        let mut processes = HashMap::new();
        for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
                continue;
            };
            if let Some((comm, stat)) = fs::read_to_string(entry.path().join("stat"))
                .ok()
                .and_then(|s| parse_stat(&s))
            {
                processes.insert((pid, stat.started), (comm, stat.parent, stat.ticks));
            }
        }
        ProcessTimes {
            all_ticks: crate::measure::hostseries::all_cpu_ticks().unwrap_or(0),
            processes,
        }
    }
}

struct Stat {
    parent: u32,
    ticks: u64,
    started: u64,
}

/// The command and the fields of /proc/PID/stat used here.
fn parse_stat(text: &str) -> Option<(String, Stat)> {
    let (head, tail) = text.rsplit_once(')')?;
    let comm = head.split_once('(')?.1.to_string();
    let fields: Vec<&str> = tail.split_whitespace().collect();
    let number = |i: usize| -> Option<u64> { fields.get(i)?.parse().ok() };
    Some((
        comm,
        Stat {
            parent: number(1)? as u32,
            ticks: number(11)? + number(12)?,
            started: number(19)?,
        },
    ))
}

/// A command outside the run that used CPU between two readings.
#[derive(Debug, Clone, PartialEq)]
pub struct Busy {
    pub command: String,
    pub processes: usize,
    /// Percent of all CPUs.
    pub cpu_pct: f64,
}

/// The commands that used the most CPU between `before` and `after`, by name (four busy
/// `yes` are one entry), leaving out `run` (the lab's process) and its children; a
/// process that started in between counts with all its time. At most [`BUSIEST_NAMED`],
/// each with at least 1 % of the CPUs.
pub fn busiest(before: &ProcessTimes, after: &ProcessTimes, run: u32) -> Vec<Busy> {
    let all = after.all_ticks.saturating_sub(before.all_ticks);
    if all == 0 {
        return Vec::new();
    }
    let mut by_command: HashMap<&str, (usize, u64)> = HashMap::new();
    for ((pid, started), (comm, parent, ticks)) in &after.processes {
        if *pid == run || *parent == run {
            continue;
        }
        let earlier = before
            .processes
            .get(&(*pid, *started))
            .map_or(0, |(_, _, t)| *t);
        let used = ticks.saturating_sub(earlier);
        if used > 0 {
            let entry = by_command.entry(comm).or_default();
            entry.0 += 1;
            entry.1 += used;
        }
    }
    let mut busy: Vec<Busy> = by_command
        .into_iter()
        .map(|(command, (processes, ticks))| Busy {
            command: command.to_string(),
            processes,
            cpu_pct: 100.0 * ticks as f64 / all as f64,
        })
        .filter(|b| b.cpu_pct >= 1.0)
        .collect();
    busy.sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct));
    busy.truncate(BUSIEST_NAMED);
    busy
}

/// One line when processes outside the run used more than [`OTHER_CPU_PCT`] of the CPUs
/// in at least [`BUSY_SECONDS`] of the run's per-second samples (`(t_s, percent)`), naming
/// how long, when, the peak, and the `busiest` commands.
pub fn busy_during(samples: &[(f64, f64)], busiest: &[Busy]) -> Option<String> {
    let busy: Vec<&(f64, f64)> = samples
        .iter()
        .filter(|(_, pct)| *pct >= OTHER_CPU_PCT)
        .collect();
    if busy.len() < BUSY_SECONDS {
        return None;
    }
    let first = busy.first()?.0;
    let last = busy.last()?.0;
    let peak = busy.iter().map(|(_, pct)| *pct).fold(0.0, f64::max);
    let named: Vec<String> = busiest
        .iter()
        .map(|b| match b.processes {
            1 => format!("{} {:.0} %", b.command, b.cpu_pct),
            n => format!("{} {:.0} % ({n} processes)", b.command, b.cpu_pct),
        })
        .collect();
    let named = if named.is_empty() {
        String::new()
    } else {
        format!("; busiest: {}", named.join(", "))
    };
    Some(format!(
        "during the run: other processes used {OTHER_CPU_PCT:.0} % of the CPUs or more in {} of {} s (t = {first:.0}-{last:.0} s, peak {peak:.0} %){named}",
        busy.len(),
        samples.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pressure_and_other_cpu_above_the_thresholds_are_named() {
        let quiet = Before {
            psi_cpu_some_avg10: Some(3.0),
            psi_io_some_avg10: Some(19.9),
            psi_memory_some_avg10: None,
            other_cpu_pct: Some(10.0),
        };
        assert!(busy_before(&quiet).is_empty());
        let busy = Before {
            psi_cpu_some_avg10: Some(91.0),
            other_cpu_pct: Some(97.0),
            ..quiet
        };
        let lines = busy_before(&busy);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].contains("CPU pressure 91 %"), "{lines:?}");
        assert!(lines[1].contains("other processes used 97 %"), "{lines:?}");
    }

    #[test]
    fn a_run_is_busy_after_three_busy_seconds() {
        let mut samples: Vec<(f64, f64)> = (0..20).map(|t| (t as f64, 5.0)).collect();
        samples[4].1 = 80.0;
        samples[5].1 = 90.0;
        assert_eq!(busy_during(&samples, &[]), None);
        samples[12].1 = 40.0;
        let line = busy_during(&samples, &[]).unwrap();
        assert!(
            line.ends_with("in 3 of 20 s (t = 4-12 s, peak 90 %)"),
            "{line}"
        );
    }

    /// Real processes: two busy children of this test between two readings are named
    /// as one command with their share of the CPUs; this process and its own threads are
    /// not, when this process is the run.
    #[test]
    fn the_busiest_commands_outside_the_run_are_named() {
        let before = ProcessTimes::read();
        let loops: Vec<std::process::Child> = (0..2)
            .map(|_| {
                std::process::Command::new("sh")
                    .args(["-c", "exec yes > /dev/null"])
                    .spawn()
                    .unwrap()
            })
            .collect();
        let spin = std::time::Instant::now();
        while spin.elapsed() < std::time::Duration::from_millis(700) {
            std::hint::black_box(0u64);
        }
        let after = ProcessTimes::read();
        for mut child in loops {
            let _ = child.kill();
            let _ = child.wait();
        }
        // Seen from outside (the run is some other process): both children under one name.
        let outside = busiest(&before, &after, 1);
        let yes = outside.iter().find(|b| b.command == "yes");
        if let Some(yes) = yes {
            assert_eq!(yes.processes, 2, "{outside:?}");
        }
        // This test as the run: its children are the run's, so `yes` is never named.
        let me = std::process::id();
        let inside = busiest(&before, &after, me);
        assert!(inside.iter().all(|b| b.command != "yes"), "{inside:?}");
        let line = busy_during(&[(1.0, 90.0), (2.0, 90.0), (3.0, 90.0)], &outside).unwrap();
        for b in &outside {
            assert!(
                line.contains(&format!("{} {:.0} %", b.command, b.cpu_pct)),
                "{line}"
            );
        }
        assert!(
            busiest(&ProcessTimes::default(), &ProcessTimes::default(), me).is_empty(),
            "no time passed: nothing to name"
        );
    }
}
