//! The writer of a run's bundle (layout in docs/lab.md): what the run, the measurements
//! and the judges made, written as manifest.json, each variant's summary.json and
//! verdict.json. The logs beside them were written while the run ran.

use serde::Serialize;

use crate::experiment::layout::{FORMAT, FORMAT_VERSION, MANIFEST, SUMMARY, VERDICT};
use crate::experiment::Role;
use crate::host::sys;
use crate::judge::Outcome;
use crate::jvm::java::Jdk;
use crate::run::runner::Finished;
use crate::LabError;
use pauselab_bundle::{Manifest, ManifestExperiment, ManifestJdk, RunSettings, VariantEntry};

/// Writes the bundle of `finished` into its directory: each variant's `summary.json` and
/// `verdict.json` (both as `outcome` has them), `manifest.json` and `experiment.toml`.
pub fn write(finished: &Finished, outcome: &Outcome) -> Result<(), LabError> {
    let out = &finished.options.out;
    for (instance, summary) in finished.instances.iter().zip(&outcome.variants) {
        sys::write_json(&instance.out_dir.join(SUMMARY), summary)?;
    }
    sys::write_json(&out.join(MANIFEST), &manifest(finished))?;
    sys::write_json(&out.join(VERDICT), outcome)?;
    sys::write_file(
        &out.join("experiment.toml"),
        finished.experiment_toml.as_bytes(),
    )
}

fn manifest(finished: &Finished) -> Manifest {
    let experiment = &finished.experiment;
    let default_variant = experiment
        .variants
        .iter()
        .find(|v| v.role == Role::Subject)
        .map(|v| v.name.clone());
    let variants = finished
        .instances
        .iter()
        .map(|i| {
            let definition = experiment.variants.iter().find(|v| v.name == i.variant);
            VariantEntry {
                id: i.id(),
                variant: i.variant.clone(),
                jdk: Some(Jdk::id_of(&i.jdk)),
                description: Some(
                    definition
                        .map(|v| v.description.clone())
                        .unwrap_or_default(),
                ),
                jvm_flags: i
                    .command
                    .iter()
                    .skip(1)
                    .take_while(|a| a.as_str() != "-cp")
                    .cloned()
                    .collect(),
                dir: Some(format!("variants/{}", i.id())),
                role: Some(i.role),
                tmp: json_of(&i.tmp).as_str().map(str::to_string),
                tmp_dir: i.tmp_dir.clone(),
                command: i.command.clone(),
                pid: i.pid,
                skipped: i.skipped.clone(),
                early_exit: i.early_exit.clone(),
                exit_code: i.exit_code,
                companions: i.companions.clone(),
                host_changes: i.host_changes.clone(),
                start_time_s: i.started_at().map(crate::host::sys::unix_s),
                elapsed_s: i.elapsed_s,
            }
        })
        .collect();
    let jdks = finished
        .jdks
        .iter()
        .map(|j| ManifestJdk {
            id: Jdk::id_of(&j.label),
            path: Some(j.home.clone()),
            version: Some(j.version.clone()),
            major: Some(j.major),
        })
        .collect();
    Manifest {
        format: FORMAT.to_string(),
        format_version: FORMAT_VERSION,
        tool: Some(format!("pauselab {}", env!("CARGO_PKG_VERSION"))),
        experiment: ManifestExperiment {
            name: experiment.name.clone(),
            description: Some(experiment.description.clone()),
            default_variant,
            baseline_variant: Some(experiment.baseline.clone()),
            definition: Some(json_of(experiment)),
        },
        start_time_s: Some(crate::host::sys::unix_s(finished.started)),
        end_time_s: Some(crate::host::sys::unix_s(finished.ended)),
        fault_injection: Some(finished.fault_injection.clone()),
        interrupted: finished.interrupted,
        options: Some(RunSettings {
            duration_s: finished.duration.as_secs_f64(),
            jdks: finished.options.jdks.clone(),
            disk: finished.options.disk.clone(),
            no_fault: finished.options.no_fault,
        }),
        host: finished.host_facts.clone(),
        jdks,
        variants,
        fault: finished.slow_device.as_ref().map(json_of),
        stressors: finished.stressors.clone(),
        notes: finished.notes.clone(),
        cleanup_failures: finished.cleanup_failures.clone(),
        cell: finished.options.cell.clone(),
    }
}

/// The JSON of a value of the lab's own types (they serialize to plain JSON objects).
fn json_of(value: &impl Serialize) -> serde_json::Value {
    serde_json::to_value(value).expect("lab types serialize")
}
