//! Was the host busy with other work? Pressure (PSI) before the run, and the CPU time of
//! processes outside the run before it and every second during it, against the thresholds
//! docs/lab.md states. A busy host makes a verdict `noisy`: the pauses may be the
//! neighbours', not the experiment's.

/// `some avg10` of /proc/pressure/cpu before the run, percent.
pub const CPU_PRESSURE_PCT: f64 = 20.0;
/// `some avg10` of /proc/pressure/io before the run, percent.
pub const IO_PRESSURE_PCT: f64 = 20.0;
/// `some avg10` of /proc/pressure/memory before the run, percent.
pub const MEMORY_PRESSURE_PCT: f64 = 10.0;
/// CPU time of processes outside the run, percent of all CPUs over one second.
pub const OTHER_CPU_PCT: f64 = 25.0;
/// Seconds of the run with other processes above [`OTHER_CPU_PCT`] that make it noisy.
pub const BUSY_SECONDS: usize = 3;

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

/// One line when processes outside the run used more than [`OTHER_CPU_PCT`] of the CPUs
/// in at least [`BUSY_SECONDS`] of the run's per-second samples (`(t_s, percent)`), naming
/// how long, when, and the peak.
pub fn busy_during(samples: &[(f64, f64)]) -> Option<String> {
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
    Some(format!(
        "during the run: other processes used {OTHER_CPU_PCT:.0} % of the CPUs or more in {} of {} s (t = {first:.0}-{last:.0} s, peak {peak:.0} %)",
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
        assert_eq!(busy_during(&samples), None);
        samples[12].1 = 40.0;
        let line = busy_during(&samples).unwrap();
        assert!(
            line.contains("in 3 of 20 s (t = 4-12 s, peak 90 %)"),
            "{line}"
        );
    }
}
