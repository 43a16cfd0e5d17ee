//! Transparent huge pages: the host's THP mode, the kernel's THP and compaction counters,
//! and the dynamic THP governor, which turns THP off host-wide while memory pressure is
//! high and back on when it eases.
//!
//! The governor records the THP mode it found in the run's journal before its first
//! write, so the mode is restored on every exit path (end of the variant, Ctrl-C, panic,
//! and `pauselab lab cleanup` after SIGKILL).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::experiment::{GovernorSpec, Thresholds};
use crate::host::journal::{Change, Journal};
use crate::stress::error::StressError;
use crate::LabError;

/// The host's THP mode for anonymous memory: `always`, `madvise` or `never`.
pub const ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// The governor's log in the variant's bundle directory.
pub const GOVERNOR_LOG: &str = "thp-governor.jsonl";

/// The THP mode selected in `path` (`always [madvise] never` -> `madvise`).
pub fn read_mode(path: &Path) -> Result<String, StressError> {
    let text = fs::read_to_string(path).map_err(|source| StressError::ThpUnreadable {
        path: path.to_path_buf(),
        source,
    })?;
    let mode = crate::host::hostsettings::current_value(&text);
    if !["always", "madvise", "never"].contains(&mode.as_str()) {
        return Err(StressError::ThpNoMode {
            path: path.to_path_buf(),
            text: text.trim().to_string(),
        });
    }
    Ok(mode)
}

/// `/proc/vmstat` counters that show what THP cost: huge page faults and their fallbacks,
/// direct compaction stalls, and pages reclaimed directly by allocating tasks.
pub const VMSTAT_COUNTERS: &[&str] = &[
    "thp_fault_alloc",
    "thp_fault_fallback",
    "thp_collapse_alloc",
    "compact_stall",
    "compact_fail",
    "allocstall_normal",
    "allocstall_movable",
];

/// The [`VMSTAT_COUNTERS`] this kernel has, now.
pub fn vmstat() -> Vec<(String, u64)> {
    let text = fs::read_to_string("/proc/vmstat").unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let (name, value) = line.split_once(' ')?;
            VMSTAT_COUNTERS
                .contains(&name)
                .then(|| Some((name.to_string(), value.trim().parse().ok()?)))?
        })
        .collect()
}

/// Counters that grew from `before` to `after` (all of them, zeros included).
pub fn vmstat_delta(before: &[(String, u64)], after: &[(String, u64)]) -> Vec<(String, u64)> {
    after
        .iter()
        .filter_map(|(name, value)| {
            let old = before.iter().find(|(n, _)| n == name)?.1;
            Some((name.clone(), value.saturating_sub(old)))
        })
        .collect()
}

/// Memory pressure as the governor reads it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Reading {
    /// `some avg10` of /proc/pressure/memory (None: no PSI on this kernel).
    pub psi_some_avg10: Option<f64>,
    pub available_bytes: u64,
}

impl Reading {
    pub fn now() -> Reading {
        Reading {
            psi_some_avg10: crate::host::sys::psi("memory", "some"),
            available_bytes: crate::host::sys::mem_available(),
        }
    }

    fn high(&self, t: &Thresholds) -> bool {
        self.psi_some_avg10.is_some_and(|p| p >= t.psi_high)
            || self.available_bytes < t.available_low
    }

    fn eased(&self, t: &Thresholds) -> bool {
        self.psi_some_avg10.is_none_or(|p| p <= t.psi_low)
            && self.available_bytes >= t.available_high
    }
}

/// The governor's state machine, free of time and files so it can be tested alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum State {
    On,
    Off,
    /// Off, and pressure has been low since this instant.
    Easing(Instant),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switch {
    TurnOff,
    TurnOn,
}

/// The next state, and the switch to make, for a reading at `now`.
pub fn decide(
    state: State,
    reading: &Reading,
    t: &Thresholds,
    now: Instant,
) -> (State, Option<Switch>) {
    match state {
        State::On if reading.high(t) => (State::Off, Some(Switch::TurnOff)),
        State::On => (State::On, None),
        State::Off if reading.eased(t) => (State::Easing(now), None),
        State::Off => (State::Off, None),
        State::Easing(_) if !reading.eased(t) => (State::Off, None),
        State::Easing(since) if now.duration_since(since) >= t.hold => {
            (State::On, Some(Switch::TurnOn))
        }
        State::Easing(since) => (State::Easing(since), None),
    }
}

/// What the governor did, for the bundle.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GovernorReport {
    /// The THP mode it switches back to (what the host had when it started).
    pub on_mode: String,
    pub turned_off: u64,
    pub turned_on: u64,
    pub off_s: f64,
    /// Writes that failed (the mode then stays as it was).
    pub errors: Vec<String>,
}

/// A running governor thread.
pub struct Governor {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<GovernorReport>>,
}

impl Governor {
    /// Records the current THP mode in `journal` (restored on every exit path), then
    /// watches memory pressure every `interval`, writing `never` to `enabled` while it is
    /// high and the recorded mode back once it has eased for `hold`. Each switch is a
    /// JSON line in `log`. `enabled` is [`ENABLED`] except in tests.
    pub fn start(
        journal: &mut Journal,
        spec: &GovernorSpec,
        enabled: &Path,
        log: &Path,
    ) -> Result<Governor, LabError> {
        let thresholds = spec.thresholds()?;
        let on_mode = read_mode(enabled)?;
        if on_mode == "never" {
            return Err(LabError::Host(format!(
                "thp governor: {} is already \"never\"; give the variant THP to govern (always or madvise)",
                enabled.display()
            )));
        }
        journal.record(Change::SysfsWrite {
            path: enabled.to_path_buf(),
            previous: on_mode.clone(),
            loop_image: None,
        })?;
        let out =
            pauselab_pause::output::create_file(log).map_err(|e| LabError::io(log, "create", e))?;
        let mut watch = Watch {
            enabled: enabled.to_path_buf(),
            thresholds,
            out,
            state: State::On,
            off_since: None,
            report: GovernorReport {
                on_mode,
                ..GovernorReport::default()
            },
        };
        // The first reading is acted on before the JVM starts.
        watch.tick();
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = stop.clone();
        let handle = std::thread::Builder::new()
            .name("pauselab-thp-governor".into())
            .spawn(move || watch.run(&thread_stop))
            .map_err(|e| LabError::Host(format!("start the thp governor: {e}")))?;
        Ok(Governor {
            stop,
            handle: Some(handle),
        })
    }

    /// Stops watching and puts the recorded mode back (the journal would too).
    pub fn stop(mut self) -> GovernorReport {
        self.finish()
    }

    fn finish(&mut self) -> GovernorReport {
        self.stop.store(true, Ordering::SeqCst);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Governor {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The governor's thread state.
struct Watch {
    enabled: PathBuf,
    thresholds: Thresholds,
    out: fs::File,
    state: State,
    off_since: Option<Instant>,
    report: GovernorReport,
}

impl Watch {
    fn run(mut self, stop: &AtomicBool) -> GovernorReport {
        let interval = self.thresholds.interval;
        loop {
            let deadline = Instant::now() + interval;
            while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20).min(interval));
            }
            if stop.load(Ordering::Relaxed) {
                break;
            }
            self.tick();
        }
        if let Some(since) = self.off_since.take() {
            self.report.off_s += since.elapsed().as_secs_f64();
            let on_mode = self.report.on_mode.clone();
            if let Err(e) = fs::write(&self.enabled, &on_mode) {
                self.report.errors.push(format!(
                    "{}: restore {on_mode}: {e}",
                    self.enabled.display()
                ));
            }
        }
        self.report
    }

    /// One reading, and the switch it calls for.
    fn tick(&mut self) {
        let now = Instant::now();
        let reading = Reading::now();
        let (next, switch) = decide(self.state, &reading, &self.thresholds, now);
        self.state = next;
        let Some(switch) = switch else { return };
        let mode = match switch {
            Switch::TurnOff => "never".to_string(),
            Switch::TurnOn => self.report.on_mode.clone(),
        };
        if let Err(e) = fs::write(&self.enabled, &mode) {
            self.report
                .errors
                .push(format!("{}: write {mode}: {e}", self.enabled.display()));
            // Try again on the next reading.
            self.state = match switch {
                Switch::TurnOff => State::On,
                Switch::TurnOn => State::Off,
            };
            return;
        }
        match switch {
            Switch::TurnOff => {
                self.report.turned_off += 1;
                self.off_since = Some(now);
            }
            Switch::TurnOn => {
                self.report.turned_on += 1;
                if let Some(since) = self.off_since.take() {
                    self.report.off_s += since.elapsed().as_secs_f64();
                }
            }
        }
        let line = serde_json::json!({
            "unix_ms": crate::host::sys::unix_now_ms(),
            "thp": mode,
            "psi_memory_some_avg10": reading.psi_some_avg10,
            "mem_available_bytes": reading.available_bytes,
        });
        let _ = writeln!(self.out, "{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: u64 = 1 << 30;

    fn thresholds() -> Thresholds {
        GovernorSpec {
            psi_high: 10.0,
            psi_low: 1.0,
            available_low: "2G".parse().unwrap(),
            available_high: "4G".parse().unwrap(),
            hold: "5s".parse().unwrap(),
            interval: "250ms".parse().unwrap(),
        }
        .thresholds()
        .unwrap()
    }

    fn reading(psi: Option<f64>, available: u64) -> Reading {
        Reading {
            psi_some_avg10: psi,
            available_bytes: available,
        }
    }

    #[test]
    fn off_on_pressure_by_psi_or_available_memory() {
        let t = thresholds();
        let now = Instant::now();
        let calm = reading(Some(0.0), 10 * G);
        assert_eq!(decide(State::On, &calm, &t, now), (State::On, None));
        let stalled = reading(Some(25.0), 10 * G);
        assert_eq!(
            decide(State::On, &stalled, &t, now),
            (State::Off, Some(Switch::TurnOff))
        );
        // No PSI on this kernel: MemAvailable alone decides.
        let short = reading(None, G);
        assert_eq!(
            decide(State::On, &short, &t, now),
            (State::Off, Some(Switch::TurnOff))
        );
    }

    #[test]
    fn on_again_only_after_pressure_stayed_low_for_hold() {
        let t = thresholds();
        let start = Instant::now();
        let calm = reading(Some(0.5), 5 * G);
        let (state, switch) = decide(State::Off, &calm, &t, start);
        assert_eq!(switch, None);
        let (state, switch) = decide(state, &calm, &t, start + Duration::from_secs(4));
        assert_eq!(switch, None);
        let (state, switch) = decide(state, &calm, &t, start + Duration::from_secs(5));
        assert_eq!((state, switch), (State::On, Some(Switch::TurnOn)));
        // Between the thresholds (3 GiB available) is neither: the hold starts over.
        let between = reading(Some(0.5), 3 * G);
        let (state, _) = decide(State::Easing(start), &between, &t, start);
        assert_eq!(state, State::Off);
    }

    #[test]
    fn modes_and_counters() {
        let dir = std::env::temp_dir().join(format!("pauselab-thp-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("enabled");
        fs::write(&file, "always [madvise] never\n").unwrap();
        assert_eq!(read_mode(&file).unwrap(), "madvise");
        fs::write(&file, "always madvise never\n").unwrap();
        let err = read_mode(&file).unwrap_err().to_string();
        assert!(err.contains(&file.display().to_string()), "{err}");
        fs::remove_dir_all(&dir).unwrap();
        let before = vec![
            ("compact_stall".to_string(), 3),
            ("thp_fault_alloc".to_string(), 10),
        ];
        let after = vec![
            ("compact_stall".to_string(), 3),
            ("thp_fault_alloc".to_string(), 14),
        ];
        assert_eq!(
            vmstat_delta(&before, &after),
            vec![
                ("compact_stall".to_string(), 0),
                ("thp_fault_alloc".to_string(), 4)
            ]
        );
        if Path::new("/proc/vmstat").exists() {
            assert!(vmstat().iter().any(|(n, _)| n == "thp_fault_alloc"));
        }
    }

    /// The real host setting: the governor turns THP off under (simulated) pressure and
    /// the journal restores the mode, also when the governor's thread is left running and
    /// the journal is dropped as on a panic.
    #[test]
    fn real_sysfs_is_switched_and_restored() {
        let enabled = Path::new(ENABLED);
        if !crate::host::sys::is_root() || !enabled.exists() {
            eprintln!("skipped: needs root and {ENABLED}");
            return;
        }
        let original = read_mode(enabled).unwrap();
        if original == "never" {
            eprintln!("skipped: THP is off on this host");
            return;
        }
        let state = std::env::temp_dir().join(format!("pauselab-thp-state-{}", std::process::id()));
        let log = state.join(GOVERNOR_LOG);
        fs::create_dir_all(&state).unwrap();
        // Pressure "high" from the first reading: more available memory than any host has.
        let spec = GovernorSpec {
            psi_high: 1000.0,
            psi_low: 999.0,
            available_low: "1000000G".parse().unwrap(),
            available_high: "2000000G".parse().unwrap(),
            hold: "1s".parse().unwrap(),
            interval: "50ms".parse().unwrap(),
        };
        // Stopped normally, the governor itself puts the mode back.
        let mut journal = Journal::create(&state, "thp-test-stop", "test").unwrap();
        let governor = Governor::start(&mut journal, &spec, enabled, &log).unwrap();
        assert!(crate::host::sys::wait_until(Duration::from_secs(5), || {
            read_mode(enabled).is_ok_and(|mode| mode == "never")
        }));
        let report = governor.stop();
        assert_eq!(report.turned_off, 1, "{report:?}");
        assert_eq!(read_mode(enabled).unwrap(), original);
        drop(journal);
        let result = std::panic::catch_unwind(|| {
            let mut journal = Journal::create(&state, "thp-test", "test").unwrap();
            let governor = Governor::start(&mut journal, &spec, enabled, &log).unwrap();
            assert!(crate::host::sys::wait_until(Duration::from_secs(5), || {
                read_mode(enabled).is_ok_and(|mode| mode == "never")
            }));
            std::mem::forget(governor);
            panic!("as a crash would");
        });
        assert!(result.is_err());
        // The forgotten governor thread may still run: the journal restored the mode, and
        // pressure stays "high", so the thread never writes again.
        assert_eq!(read_mode(enabled).unwrap(), original);
        let text = fs::read_to_string(&log).unwrap();
        assert!(text.contains("\"thp\":\"never\""), "{text}");
        fs::remove_dir_all(&state).unwrap();
    }
}
