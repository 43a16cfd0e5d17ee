//! The host during a run, sampled every second: CPU user/sys/iowait, dirty and writeback
//! pages, PSI (where the kernel has it), swap-ins, swap-outs, major faults and direct
//! reclaim (/proc/vmstat, per second) and the stressors' throughput.

use std::fs;
use std::sync::atomic::Ordering;

use serde::Serialize;

use crate::stress::Counters;

#[derive(Debug, Clone, Serialize)]
pub struct HostSample {
    /// Seconds since the run started.
    pub t_s: f64,
    pub unix_ms: f64,
    /// Percent of all CPUs over the last second.
    pub cpu_user_pct: f64,
    pub cpu_sys_pct: f64,
    pub cpu_iowait_pct: f64,
    pub dirty_kib: u64,
    pub writeback_kib: u64,
    /// `some avg10` of /proc/pressure/{cpu,io,memory}; absent without PSI.
    pub psi_cpu_some_avg10: Option<f64>,
    pub psi_io_some_avg10: Option<f64>,
    pub psi_io_full_avg10: Option<f64>,
    pub psi_memory_some_avg10: Option<f64>,
    /// Stressors over the last second.
    pub disk_writer_bytes_per_s: u64,
    pub writeback_calls_per_s: u64,
    pub memory_hog_bytes: u64,
    /// /proc/vmstat over the last second: pages swapped in and out, major faults, pages
    /// scanned by direct reclaim (None on the first sample).
    pub swap_in_pages_per_s: Option<u64>,
    pub swap_out_pages_per_s: Option<u64>,
    pub major_faults_per_s: Option<u64>,
    pub direct_scan_pages_per_s: Option<u64>,
    /// CPU time of processes outside the run over the last second, percent of all CPUs
    /// (None on the first sample).
    pub other_cpu_pct: Option<f64>,
}

/// The /proc/vmstat counters of the series, in column order.
const VMSTAT_RATES: [&str; 4] = ["pswpin", "pswpout", "pgmajfault", "pgscan_direct"];

/// Columns of `host.csv` (docs/bundle-format.md); empty cells where the kernel lacks a value.
pub const CSV_HEADER: &str = "t_s,cpu_user_pct,cpu_sys_pct,cpu_iowait_pct,dirty_kb,writeback_kb,psi_io_some_avg10,psi_io_full_avg10,psi_memory_some_avg10,psi_cpu_some_avg10,stress_write_mb_s,writeback_calls_per_s,memory_hog_mb,unix_ms,swap_in_pages_per_s,swap_out_pages_per_s,major_faults_per_s,direct_scan_pages_per_s,other_cpu_pct";

impl HostSample {
    pub fn csv_row(&self) -> String {
        let opt = |v: Option<f64>| v.map(|v| format!("{v:.2}")).unwrap_or_default();
        let count = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
        format!(
            "{:.0},{:.1},{:.1},{:.1},{},{},{},{},{},{},{:.2},{},{:.0},{:.0},{},{},{},{},{}",
            self.t_s,
            self.cpu_user_pct,
            self.cpu_sys_pct,
            self.cpu_iowait_pct,
            self.dirty_kib,
            self.writeback_kib,
            opt(self.psi_io_some_avg10),
            opt(self.psi_io_full_avg10),
            opt(self.psi_memory_some_avg10),
            opt(self.psi_cpu_some_avg10),
            self.disk_writer_bytes_per_s as f64 / 1048576.0,
            self.writeback_calls_per_s,
            self.memory_hog_bytes as f64 / 1048576.0,
            self.unix_ms,
            count(self.swap_in_pages_per_s),
            count(self.swap_out_pages_per_s),
            count(self.major_faults_per_s),
            count(self.direct_scan_pages_per_s),
            opt(self.other_cpu_pct),
        )
    }
}

#[derive(Default)]
pub struct Sampler {
    last_cpu: Option<[u64; 8]>,
    last_disk: u64,
    last_calls: u64,
    last_vmstat: Option<pauselab_host::vmstat::VmStat>,
    /// CPU ticks of the run's processes (this one included) at the last sample.
    last_run_ticks: std::collections::HashMap<u32, u64>,
}

impl Sampler {
    /// A sample; `run_pids` are the run's processes besides this one (JVMs, fillers), whose
    /// CPU time is not "other processes".
    pub fn sample(&mut self, t_s: f64, counters: &Counters, run_pids: &[u32]) -> HostSample {
        let cpu = read_cpu();
        let other_cpu_pct = self.other_cpu_pct(cpu, run_pids);
        let (user, sys, iowait) = match (self.last_cpu, cpu) {
            (Some(a), Some(b)) => {
                let delta: Vec<f64> = a
                    .iter()
                    .zip(b.iter())
                    .map(|(x, y)| y.saturating_sub(*x) as f64)
                    .collect();
                let total: f64 = delta.iter().sum::<f64>().max(1.0);
                (
                    100.0 * (delta[0] + delta[1]) / total,
                    100.0 * (delta[2] + delta[5] + delta[6]) / total,
                    100.0 * delta[4] / total,
                )
            }
            _ => (0.0, 0.0, 0.0),
        };
        self.last_cpu = cpu;
        let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let disk = counters.disk_bytes.load(Ordering::Relaxed);
        let calls = counters.writeback_calls.load(Ordering::Relaxed);
        let vmstat = pauselab_host::vmstat::VmStat::read().ok();
        let rates: [Option<u64>; 4] = std::array::from_fn(|i| match (&self.last_vmstat, &vmstat) {
            (Some(before), Some(now)) => Some(now.delta(before, VMSTAT_RATES[i])),
            _ => None,
        });
        self.last_vmstat = vmstat;
        let sample = HostSample {
            t_s,
            unix_ms: crate::host::sys::unix_now_ms(),
            cpu_user_pct: user,
            cpu_sys_pct: sys,
            cpu_iowait_pct: iowait,
            dirty_kib: meminfo_kib(&meminfo, "Dirty:"),
            writeback_kib: meminfo_kib(&meminfo, "Writeback:"),
            psi_cpu_some_avg10: crate::host::sys::psi("cpu", "some"),
            psi_io_some_avg10: crate::host::sys::psi("io", "some"),
            psi_io_full_avg10: crate::host::sys::psi("io", "full"),
            psi_memory_some_avg10: crate::host::sys::psi("memory", "some"),
            disk_writer_bytes_per_s: disk - self.last_disk,
            writeback_calls_per_s: calls - self.last_calls,
            memory_hog_bytes: counters.memory_bytes.load(Ordering::Relaxed),
            swap_in_pages_per_s: rates[0],
            swap_out_pages_per_s: rates[1],
            major_faults_per_s: rates[2],
            direct_scan_pages_per_s: rates[3],
            other_cpu_pct,
        };
        self.last_disk = disk;
        self.last_calls = calls;
        sample
    }
}

impl Sampler {
    /// Busy CPU time of the host since the last sample minus that of the run's processes,
    /// in percent of all CPUs.
    fn other_cpu_pct(&mut self, cpu: Option<[u64; 8]>, run_pids: &[u32]) -> Option<f64> {
        let mut ticks = std::collections::HashMap::new();
        for pid in run_pids.iter().copied().chain([std::process::id()]) {
            if let Some(t) = process_ticks(pid) {
                ticks.insert(pid, t);
            }
        }
        // A process new since the last sample counts with all its time (it started within).
        let run_delta: u64 = ticks
            .iter()
            .map(|(pid, t)| t.saturating_sub(*self.last_run_ticks.get(pid).unwrap_or(&0)))
            .sum();
        self.last_run_ticks = ticks;
        let (before, now) = (self.last_cpu?, cpu?);
        let delta: Vec<u64> = before
            .iter()
            .zip(now.iter())
            .map(|(a, b)| b.saturating_sub(*a))
            .collect();
        let total: u64 = delta.iter().sum();
        if total == 0 {
            return None;
        }
        let busy = delta[0] + delta[1] + delta[2] + delta[5] + delta[6] + delta[7];
        Some(100.0 * busy.saturating_sub(run_delta) as f64 / total as f64)
    }
}

/// utime + stime of process `pid`, clock ticks.
fn process_ticks(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(user + system)
}

/// Every tick of every CPU so far (busy and idle), from /proc/stat: the whole of the
/// host's CPU time, in the unit of a process's utime and stime.
pub(crate) fn all_cpu_ticks() -> Option<u64> {
    read_cpu().map(|cpu| cpu.iter().sum())
}

/// user, nice, system, idle, iowait, irq, softirq, steal (jiffies, all CPUs).
fn read_cpu() -> Option<[u64; 8]> {
    let text = fs::read_to_string("/proc/stat").ok()?;
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let mut out = [0u64; 8];
    for (slot, field) in out.iter_mut().zip(line.split_whitespace().skip(1)) {
        *slot = field.parse().ok()?;
    }
    Some(out)
}

fn meminfo_kib(text: &str, key: &str) -> u64 {
    text.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_match_the_header_and_rates_start_with_the_second_sample() {
        let counters = Counters::default();
        let mut sampler = Sampler::default();
        let first = sampler.sample(0.0, &counters, &[]);
        assert_eq!(first.swap_in_pages_per_s, None);
        let columns = CSV_HEADER.split(',').count();
        assert_eq!(first.csv_row().split(',').count(), columns);
        // A process spinning outside the run counts as other processes' CPU.
        let mut spinner = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1000));
        let second = sampler.sample(1.0, &counters, &[]);
        let _ = spinner.kill();
        let _ = spinner.wait();
        let cpus = std::thread::available_parallelism().unwrap().get() as f64;
        let outside = second.other_cpu_pct.unwrap();
        // At least a third of one CPU, even on a host busy with other work.
        assert!(
            outside >= 33.0 / cpus,
            "a spinning process is {outside} % of {cpus} CPUs"
        );
        assert!(second.swap_in_pages_per_s.is_some());
        assert!(second.direct_scan_pages_per_s.is_some());
        assert_eq!(second.csv_row().split(',').count(), columns);
    }
}
