//! A run made into its bundle: the variants summarised, judged, written; and the
//! executor that does it for each run of a matrix with real JVMs.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::experiment::Experiment;
use crate::judge::{judge_run, Outcome, RunFacts};
use crate::measure::summarise;
use crate::run::runner::{self, Finished, Observer, RunOptions};
use crate::run::{Executed, Executor};
use crate::LabError;

/// Summarises every variant of `finished`, judges them and writes the bundle; the verdict.
pub fn finish(finished: &Finished) -> Result<Outcome, LabError> {
    let summaries = finished
        .instances
        .iter()
        .map(|i| summarise(i, &finished.experiment, finished.started, finished.ended))
        .collect();
    let jdks: Vec<String> = finished.jdks.iter().map(|j| j.label.clone()).collect();
    let facts = RunFacts {
        jdks: &jdks,
        interrupted: finished.interrupted,
        notes: &finished.notes,
        noise: &finished.noise,
    };
    let outcome = judge_run(&finished.experiment, &facts, summaries);
    crate::bundle::write::write(finished, &outcome)?;
    Ok(outcome)
}

/// Runs each run of a matrix on this host ([`runner::run`]) and writes its bundle,
/// showing its progress to `observer`.
pub struct JvmExecutor<'a> {
    pub observer: &'a mut dyn Observer,
}

impl Executor for JvmExecutor<'_> {
    fn execute(
        &mut self,
        experiment: Experiment,
        text: &str,
        options: RunOptions,
        stop: &Arc<AtomicBool>,
    ) -> Result<Executed, LabError> {
        let finished = runner::run(
            experiment,
            text.to_string(),
            options,
            stop.clone(),
            self.observer,
        )?;
        let outcome = finish(&finished)?;
        Ok(Executed {
            result: outcome.result,
            interrupted: finished.interrupted,
            cleanup_failures: finished.cleanup_failures,
        })
    }
}
