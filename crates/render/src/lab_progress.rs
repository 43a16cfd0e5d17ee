//! A lab run's progress on stderr: bars on a terminal, plain lines every 10 s otherwise;
//! a matrix's runs one line each.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use pauselab_lab::runner::{Observer, Progress, RunState, VariantProgress};

/// Progress bars on a terminal, plain lines every 10 s otherwise.
pub struct Bars {
    multi: MultiProgress,
    main: Option<ProgressBar>,
    rows: Vec<ProgressBar>,
    tty: bool,
    last_line: Duration,
}

impl Default for Bars {
    fn default() -> Bars {
        Bars {
            multi: MultiProgress::new(),
            main: None,
            rows: Vec::new(),
            tty: std::io::stderr().is_terminal(),
            last_line: Duration::ZERO,
        }
    }
}

impl Observer for Bars {
    fn note(&mut self, message: &str) {
        pauselab_pause::eprintln_lossy!("{message}");
    }

    fn started(&mut self, total: Duration, labels: &[String]) {
        // A matrix shows each of its runs with the same bars.
        self.last_line = Duration::ZERO;
        if !self.tty {
            pauselab_pause::eprintln_lossy!(
                "running {} variant(s) for up to {}s",
                labels.len(),
                total.as_secs()
            );
            return;
        }
        let bar = self.multi.add(ProgressBar::new(total.as_secs()));
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {elapsed_precise} elapsed, {msg} remaining")
                .expect("valid template"),
        );
        self.main = Some(bar);
        for label in labels {
            let row = self.multi.add(ProgressBar::new_spinner());
            row.set_style(ProgressStyle::with_template("  {msg}").expect("valid template"));
            row.set_message(format!("{label:<24} starting"));
            self.rows.push(row);
        }
    }

    fn tick(&mut self, progress: &Progress) {
        let remaining = progress.total.saturating_sub(progress.elapsed).as_secs();
        if let Some(bar) = &self.main {
            bar.set_position(progress.elapsed.as_secs());
            bar.set_message(format!("{}:{:02}", remaining / 60, remaining % 60));
            for (row, v) in self.rows.iter().zip(&progress.variants) {
                row.set_message(describe(v));
            }
        } else if progress.elapsed >= self.last_line + Duration::from_secs(10) {
            self.last_line = progress.elapsed;
            pauselab_pause::eprintln_lossy!(
                "{}s/{}s",
                progress.elapsed.as_secs(),
                progress.total.as_secs()
            );
            for v in &progress.variants {
                pauselab_pause::eprintln_lossy!("  {}", describe(v));
            }
        }
    }

    fn finished(&mut self) {
        if let Some(bar) = self.main.take() {
            bar.finish_and_clear();
        }
        for row in self.rows.drain(..) {
            row.finish_and_clear();
        }
    }
}

/// One variant's line: max hiccup and max safepoint so far, and the workload's longest gap
/// between allocations when it prints one (just its state when the experiment records
/// none of them, e.g. JMH).
fn describe(v: &VariantProgress) -> String {
    if v.max_hiccup_ms.is_none() && v.max_safepoint_ms.is_none() {
        let state = match v.state {
            RunState::Waiting => "waiting for its turn",
            RunState::Running => "running",
            RunState::Exited => "exited",
        };
        return format!("{:<24} {state}", v.label);
    }
    let show = |x: Option<f64>| {
        x.map(|x| format!("{x:>8.1} ms"))
            .unwrap_or_else(|| "       -   ".into())
    };
    let gap = v
        .max_gap_ms
        .map(|g| format!("  max gap {}", show(Some(g))))
        .unwrap_or_default();
    format!(
        "{:<24} max hiccup {}  max safepoint {}{gap}{}",
        v.label,
        show(v.max_hiccup_ms),
        show(v.max_safepoint_ms),
        match v.state {
            RunState::Waiting => "  (waiting for its turn)",
            RunState::Running => "",
            RunState::Exited => "  (exited)",
        }
    )
}
