//! Lab result bundles (docs/bundle-format.md): the manifest, the verdict, the host time series
//! and, per variant, its interval logs read into summaries.

use std::collections::BTreeMap;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use pauselab_pause::interval_log::TagFilter;
use serde::Serialize;

use crate::summary::LogSummary;
use crate::ReportError;

pub use pauselab_bundle::{
    CellEntry, CellVerdict, Host, HostPath, Manifest, ManifestExperiment, ManifestJdk, MatrixRun,
    Measurement, VariantEntry, VariantSummary, VariantVerdict, Verdict, Vulnerable, FORMAT,
    FORMAT_VERSION, GC_LOG, HICCUP_LOG, HOST_SERIES, JFR_RECORDING, MANIFEST, MATRIX,
    MATRIX_FORMAT, SAFEPOINT_LOG, VERDICT,
};

/// The host sampled during the run: column name -> values per row (`None` when empty).
#[derive(Debug, Clone, Default, Serialize)]
pub struct HostSeries {
    pub t_s: Vec<f64>,
    pub columns: BTreeMap<String, Vec<Option<f64>>>,
    /// Samples that were NaN or infinite, left out (a row whose t_s is not finite counts
    /// once): they have no place on a chart.
    pub skipped: usize,
}

/// One variant of a bundle with its logs read.
#[derive(Debug, Clone)]
pub struct Variant {
    pub entry: VariantEntry,
    pub dir: PathBuf,
    pub hiccups: Option<LogSummary>,
    pub safepoints: Option<LogSummary>,
    /// The GC log's path when the variant has one.
    pub gc_log: Option<PathBuf>,
    /// The JFR recording's path when the variant has one (`jfr = true`).
    pub recording: Option<PathBuf>,
    pub verdict: Option<VariantSummary>,
}

impl Variant {
    /// "default" or "default (JDK 17)" when the variant ran on a named JDK.
    pub fn label(&self) -> String {
        match &self.entry.jdk {
            Some(jdk) => format!("{} (JDK {jdk})", self.entry.variant),
            None => self.entry.variant.clone(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Bundle {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub verdict: Option<Verdict>,
    pub host_series: Option<HostSeries>,
    pub variants: Vec<Variant>,
}

/// Whether `path` is a bundle directory (has a manifest).
pub fn is_bundle(path: &Path) -> bool {
    path.is_dir() && path.join(MANIFEST).is_file()
}

/// Most bundles one report reads (a matrix run of every collector, filesystem and mount
/// option on two JDKs, repeated, is a few hundred).
pub const MAX_BUNDLES: usize = 1_000;
/// Most variants one bundle may list (the built-in experiments have up to a dozen per JDK).
pub const MAX_VARIANTS: usize = 256;
/// Most variants one report reads over all its bundles: each keeps its interval logs'
/// histograms in memory.
pub const MAX_REPORT_VARIANTS: usize = 2_000;

fn refuse(path: &Path, message: String) -> ReportError {
    ReportError::Input {
        source_name: path.display().to_string(),
        message,
    }
}

/// The bundles of a matrix run's directory, in the order they ran (as `matrix.json` lists
/// them); `None` when `dir` has no matrix.json. Each must be a directory right in `dir`,
/// not a symbolic link, and listed once.
pub fn matrix_bundles(dir: &Path) -> Result<Option<Vec<PathBuf>>, ReportError> {
    let Some(file) = bundle_file(dir, MATRIX)? else {
        return Ok(None);
    };
    let run: MatrixRun = read_json(&file)?;
    if run.format != MATRIX_FORMAT {
        return Err(refuse(
            &file,
            format!("format {:?} is not {MATRIX_FORMAT:?}", run.format),
        ));
    }
    if run.bundles.is_empty() {
        return Err(refuse(&file, "the matrix run made no bundle yet".into()));
    }
    let mut bundles = Vec::new();
    for name in &run.bundles {
        // Names are directories of the matrix directory, never paths elsewhere.
        if name.is_empty() || name.contains('/') || name == ".." || name == "." {
            return Err(refuse(
                &file,
                format!("bundle name {name:?} is not a directory of the matrix"),
            ));
        }
        let bundle = dir.join(name);
        if std::fs::symlink_metadata(&bundle).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(refuse(&bundle, SYMLINK_IN_BUNDLE.into()));
        }
        bundles.push(bundle);
    }
    check_bundles(&bundles)?;
    Ok(Some(bundles))
}

/// Refuses more than [`MAX_BUNDLES`] bundles, or one bundle given twice (by two names, or
/// listed twice in matrix.json): a matrix counts each run once.
pub fn check_bundles(dirs: &[PathBuf]) -> Result<(), ReportError> {
    use std::os::unix::fs::MetadataExt;
    if dirs.len() > MAX_BUNDLES {
        return Err(refuse(
            &dirs[MAX_BUNDLES],
            format!("more than {MAX_BUNDLES} bundles in one report: report fewer at a time"),
        ));
    }
    let mut seen: std::collections::HashMap<(u64, u64), &Path> = Default::default();
    for dir in dirs {
        let meta = std::fs::metadata(dir).map_err(io_error(dir))?;
        if let Some(first) = seen.insert((meta.dev(), meta.ino()), dir) {
            return Err(refuse(
                dir,
                format!(
                    "the same bundle as {}: give each bundle once",
                    first.display()
                ),
            ));
        }
    }
    Ok(())
}

const SYMLINK_IN_BUNDLE: &str =
    "is a symbolic link: a bundle's files are read only from inside the bundle";

/// `name` (a relative path of plain components) in the bundle `dir`: `None` when it does
/// not exist or is not a regular file (a directory, say); an error when it or a directory on the way is a
/// symbolic link, so a bundle cannot make root read a file elsewhere.
fn bundle_file(dir: &Path, name: &str) -> Result<Option<PathBuf>, ReportError> {
    let mut path = dir.to_path_buf();
    for component in Path::new(name).components() {
        let std::path::Component::Normal(part) = component else {
            return Err(refuse(
                Path::new(&format!("{}/{name}", dir.display())),
                "is not a path inside the bundle (absolute or with ..)".into(),
            ));
        };
        path.push(part);
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error(&path)(e)),
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(refuse(&path, SYMLINK_IN_BUNDLE.into()))
            }
            Ok(_) => {}
        }
    }
    Ok(Some(path).filter(|p| p.is_file()))
}

impl Bundle {
    pub fn open(dir: &Path) -> Result<Bundle, ReportError> {
        let Some(manifest_path) = bundle_file(dir, MANIFEST)? else {
            return Err(ReportError::Input {
                source_name: dir.display().to_string(),
                message: format!(
                    "no {MANIFEST}: not a pauselab lab bundle (see docs/bundle-format.md)"
                ),
            });
        };
        let manifest: Manifest = read_json(&manifest_path)?;
        pauselab_bundle::check_format(
            &manifest_path.display().to_string(),
            &manifest.format,
            manifest.format_version,
        )
        .map_err(ReportError::Bundle)?;
        if manifest.variants.is_empty() {
            return Err(ReportError::Input {
                source_name: manifest_path.display().to_string(),
                message: "the manifest lists no variants".to_string(),
            });
        }
        if manifest.variants.len() > MAX_VARIANTS {
            return Err(refuse(
                &manifest_path,
                format!(
                    "{} variants, more than {MAX_VARIANTS}: not a manifest a lab run writes",
                    manifest.variants.len()
                ),
            ));
        }
        let verdict: Option<Verdict> = match bundle_file(dir, VERDICT)? {
            Some(path) => Some(read_json(&path)?),
            None => None,
        };
        let host_series = match bundle_file(dir, HOST_SERIES)? {
            Some(path) => Some(read_host_series(&path)?),
            None => None,
        };
        let mut variants = Vec::new();
        for entry in &manifest.variants {
            let relative = entry
                .dir
                .clone()
                .unwrap_or_else(|| format!("variants/{}", entry.id));
            // Refuses a variant directory outside the bundle, or linked, by its own name.
            bundle_file(dir, &relative)?;
            let variant_dir = dir.join(&relative);
            let file = |name: &str| bundle_file(dir, &format!("{relative}/{name}"));
            let read_log = |name: &str| -> Result<Option<LogSummary>, ReportError> {
                match file(name)? {
                    Some(path) => {
                        LogSummary::read(&path, TagFilter::Untagged, None, None).map(Some)
                    }
                    None => Ok(None),
                }
            };
            let gc_log = file(GC_LOG)?;
            let recording = file(JFR_RECORDING)?;
            variants.push(Variant {
                hiccups: read_log(HICCUP_LOG)?,
                safepoints: read_log(SAFEPOINT_LOG)?,
                gc_log,
                recording,
                verdict: verdict
                    .as_ref()
                    .and_then(|v| v.variants.iter().find(|x| x.id == entry.id).cloned()),
                entry: entry.clone(),
                dir: variant_dir,
            });
        }
        Ok(Bundle {
            dir: dir.to_path_buf(),
            manifest,
            verdict,
            host_series,
            variants,
        })
    }

    /// A short name: the experiment and the host ("hsperf-mmap on lab1").
    pub fn title(&self) -> String {
        let name = if self.manifest.experiment.name.is_empty() {
            self.dir.display().to_string()
        } else {
            self.manifest.experiment.name.clone()
        };
        match &self.manifest.host.hostname {
            Some(host) => format!("{name} on {host}"),
            None => name,
        }
    }

    fn stressed_path(&self) -> Option<&pauselab_bundle::HostPath> {
        self.manifest
            .host
            .paths
            .iter()
            .find(|p| p.role == "stressed")
    }

    /// What the run stressed, for the matrix's disk column: the slow device with its
    /// throttle and stable pages (the same whatever loop device it got), the user's disk,
    /// or the host's own disk; "filesystem on device" for bundles that do not say.
    pub fn disk(&self) -> Option<String> {
        let stressed = self.stressed_path();
        let device = stressed.and_then(|p| p.device.clone());
        match self.manifest.fault_injection.as_deref() {
            Some("slow-stable-pages") => {
                let spec = self.manifest.fault.as_ref().map(|f| &f["spec"]);
                let mut text = "slow loop device".to_string();
                if let Some(bps) = spec.and_then(|s| s["write_bps"].as_u64()) {
                    text.push_str(&format!(", {:.0} MiB/s", bps as f64 / (1u64 << 20) as f64));
                }
                match spec.and_then(|s| s["stable_writes"].as_bool()) {
                    Some(true) => text.push_str(", stable pages"),
                    Some(false) => text.push_str(", no stable pages"),
                    None => {}
                }
                Some(text)
            }
            Some("disk") => {
                let dir = self
                    .manifest
                    .options
                    .as_ref()
                    .and_then(|o| o.disk.clone())
                    .map(|d| d.display().to_string())
                    .or_else(|| stressed.map(|p| p.path.clone()))?;
                Some(match device {
                    Some(dev) => format!("{dir} on {dev}"),
                    None => dir,
                })
            }
            Some("none") => Some(format!(
                "{}, no fault",
                device.unwrap_or_else(|| "host disk".into())
            )),
            _ => {
                let p = stressed?;
                match (&p.filesystem, &p.device) {
                    (Some(fs), Some(dev)) => Some(format!("{fs} on {dev}")),
                    (Some(fs), None) => Some(fs.clone()),
                    (None, Some(dev)) => Some(dev.clone()),
                    (None, None) => Some(p.path.clone()),
                }
            }
        }
    }

    /// The stressed filesystem: the matrix cell's, else what the host facts found.
    pub fn filesystem(&self) -> Option<String> {
        self.manifest
            .cell
            .as_ref()
            .and_then(|c| c.filesystem.clone())
            .or_else(|| self.stressed_path().and_then(|p| p.filesystem.clone()))
    }

    /// The slow device's mount options (`defaults` when none were given); none without
    /// the slow device.
    pub fn mount_options(&self) -> Option<String> {
        if let Some(options) = self
            .manifest
            .cell
            .as_ref()
            .and_then(|c| c.mount_options.clone())
        {
            return Some(options);
        }
        if self.manifest.fault_injection.as_deref() != Some("slow-stable-pages") {
            return None;
        }
        let spec = self.manifest.fault.as_ref().map(|f| &f["spec"]);
        Some(
            spec.and_then(|s| s["mount_options"].as_str())
                .unwrap_or("defaults")
                .to_string(),
        )
    }
}

/// Largest manifest.json, verdict.json or matrix.json read: what a lab run writes is a
/// few KiB (a variant takes about half a KiB), and parsing holds several times the text.
pub const MAX_JSON_BYTES: u64 = 1 << 20;
/// Most values host.csv may hold: a lab run samples a few columns once a second, so this
/// is weeks of samples, and it keeps the series to a few tens of MiB in memory.
pub const MAX_HOST_VALUES: usize = 4_000_000;
/// Longest host.csv line read (a row is a few hundred bytes).
const MAX_HOST_LINE_BYTES: usize = 64 << 10;

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |error| ReportError::Io {
        path: path.display().to_string(),
        error,
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, ReportError> {
    let file = pauselab_pause::input::open_file(path).map_err(io_error(path))?;
    let mut text = String::new();
    file.take(MAX_JSON_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(io_error(path))?;
    if text.len() as u64 > MAX_JSON_BYTES {
        return Err(ReportError::Input {
            source_name: path.display().to_string(),
            message: format!(
                "larger than {} KiB: not a file a lab run writes",
                MAX_JSON_BYTES >> 10
            ),
        });
    }
    serde_json::from_str(&text).map_err(|e| ReportError::Input {
        source_name: format!("{}:{}", path.display(), e.line()),
        message: format!("invalid JSON: {e}"),
    })
}

fn read_host_series(path: &Path) -> Result<HostSeries, ReportError> {
    let file = pauselab_pause::input::open_file(path).map_err(io_error(path))?;
    HostSeries::read(std::io::BufReader::new(file), &path.display().to_string())
}

impl HostSeries {
    /// Reads a host series (host.csv), line by line: memory is bounded by
    /// [`MAX_HOST_VALUES`], not by the size of the input. Errors name `source_name` and the
    /// line.
    pub fn read(mut input: impl BufRead, source_name: &str) -> Result<HostSeries, ReportError> {
        read_series(&mut input, source_name)
    }
}

fn read_series(input: &mut impl BufRead, source_name: &str) -> Result<HostSeries, ReportError> {
    use pauselab_pause::input::{read_line_limited, LineRead};
    let at = |number: usize, message: String| ReportError::Input {
        source_name: format!("{source_name}:{number}"),
        message,
    };
    let mut buffer = Vec::new();
    let mut number = 0usize;
    let mut next_line = |line: &mut Vec<u8>| -> Result<Option<(usize, String)>, ReportError> {
        loop {
            line.clear();
            number += 1;
            let read = read_line_limited(input, line, MAX_HOST_LINE_BYTES).map_err(|error| {
                ReportError::Io {
                    path: source_name.to_string(),
                    error,
                }
            })?;
            match read {
                LineRead::End => return Ok(None),
                LineRead::TooLong => {
                    return Err(at(
                        number,
                        "a line longer than 64 KiB: not a host series".into(),
                    ))
                }
                LineRead::Line => {}
            }
            let text = std::str::from_utf8(line).map_err(|_| at(number, "not text".into()))?;
            if !text.trim().is_empty() {
                return Ok(Some((
                    number,
                    text.trim_end_matches(['\n', '\r']).to_string(),
                )));
            }
        }
    };
    let Some((_, header)) = next_line(&mut buffer)? else {
        return Ok(HostSeries::default());
    };
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    if names.first() != Some(&"t_s") {
        return Err(at(1, "the first column must be t_s".to_string()));
    }
    let mut series = HostSeries::default();
    for name in &names[1..] {
        series.columns.insert(name.to_string(), Vec::new());
    }
    let mut values = 0usize;
    while let Some((number, line)) = next_line(&mut buffer)? {
        values += names.len();
        if values > MAX_HOST_VALUES {
            return Err(at(
                number,
                format!("more than {MAX_HOST_VALUES} values: larger than any lab run writes"),
            ));
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let bad = |what: String| at(number, what);
        if cells.len() != names.len() {
            return Err(bad(format!(
                "{} fields, the header has {}",
                cells.len(),
                names.len()
            )));
        }
        let t = cells[0]
            .parse::<f64>()
            .map_err(|_| bad(format!("t_s is not a number: {:?}", cells[0])))?;
        if !t.is_finite() {
            series.skipped += 1;
            continue;
        }
        series.t_s.push(t);
        for (name, cell) in names[1..].iter().zip(&cells[1..]) {
            let value = if cell.is_empty() {
                None
            } else {
                Some(
                    cell.parse::<f64>()
                        .map_err(|_| bad(format!("{name} is not a number: {cell:?}")))?,
                )
            };
            let value = match value {
                Some(v) if !v.is_finite() => {
                    series.skipped += 1;
                    None
                }
                other => other,
            };
            if let Some(column) = series.columns.get_mut(*name) {
                column.push(value);
            }
        }
    }
    Ok(series)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Any bytes after a valid header: a series or an error naming a line, never a panic.
        #[test]
        fn arbitrary_host_series_parse_or_fail(body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2000)) {
            let mut input = b"t_s,cpu_user_pct,dirty_kb\n".to_vec();
            input.extend(&body);
            match HostSeries::read(&input[..], "host.csv") {
                Ok(series) => {
                    for column in series.columns.values() {
                        proptest::prop_assert_eq!(column.len(), series.t_s.len());
                    }
                }
                Err(error) => proptest::prop_assert!(error.to_string().starts_with("host.csv:")),
            }
        }
    }

    /// A copy of the committed bundle `lab-kernel6.1` to change, its manifest as JSON.
    fn scratch_bundle(name: &str) -> (PathBuf, serde_json::Value) {
        let from =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/bundles/lab-kernel6.1");
        let to =
            std::env::temp_dir().join(format!("pauselab-bundle-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&to);
        fn copy(from: &Path, to: &Path) {
            std::fs::create_dir_all(to).unwrap();
            for entry in std::fs::read_dir(from).unwrap() {
                let entry = entry.unwrap();
                if entry.file_type().unwrap().is_dir() {
                    copy(&entry.path(), &to.join(entry.file_name()));
                } else {
                    std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
                }
            }
        }
        copy(&from, &to);
        let manifest = std::fs::read_to_string(to.join(MANIFEST)).unwrap();
        (to, serde_json::from_str(&manifest).unwrap())
    }

    fn write_manifest(dir: &Path, manifest: &serde_json::Value) {
        std::fs::write(dir.join(MANIFEST), manifest.to_string()).unwrap();
    }

    /// The one-line error of opening `dir`.
    fn refusal(dir: &Path) -> String {
        let error = Bundle::open(dir).unwrap_err().to_string();
        assert!(!error.contains('\n'), "{error}");
        error
    }

    #[test]
    fn variant_directories_outside_the_bundle_are_refused_naming_the_path() {
        let (dir, mut manifest) = scratch_bundle("escape");
        let outside = dir.with_extension("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::copy(
            dir.join("variants/default-jdk17/hiccups.hlog"),
            outside.join(HICCUP_LOG),
        )
        .unwrap();
        let name = outside.file_name().unwrap().to_str().unwrap().to_string();
        for (variant_dir, named) in [
            (format!("../{name}"), format!("{}/../{name}", dir.display())),
            (
                outside.display().to_string(),
                format!("{}/{}", dir.display(), outside.display()),
            ),
            (
                format!("variants/../../{name}"),
                format!("{}/variants/../../{name}", dir.display()),
            ),
        ] {
            manifest["variants"][0]["dir"] = variant_dir.clone().into();
            write_manifest(&dir, &manifest);
            assert_eq!(
                refusal(&dir),
                format!("{named}: is not a path inside the bundle (absolute or with ..)"),
                "{variant_dir}"
            );
        }
        // A variant directory that is a symbolic link to one outside.
        manifest["variants"][0]["dir"] = "variants/linked".into();
        write_manifest(&dir, &manifest);
        std::os::unix::fs::symlink(&outside, dir.join("variants/linked")).unwrap();
        assert_eq!(
            refusal(&dir),
            format!("{}/variants/linked: {SYMLINK_IN_BUNDLE}", dir.display())
        );
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(&outside).unwrap();
    }

    #[test]
    fn symlinked_files_of_a_bundle_are_refused_naming_the_path() {
        let (dir, _) = scratch_bundle("linked-files");
        let secret = dir.with_extension("secret");
        std::fs::write(&secret, "root only\n").unwrap();
        for file in [
            "variants/default-jdk17/gc.log",
            "variants/no-perfdata-jdk17/hiccups.hlog",
            HOST_SERIES,
            VERDICT,
        ] {
            let path = dir.join(file);
            let kept = std::fs::read(&path).unwrap();
            std::fs::remove_file(&path).unwrap();
            std::os::unix::fs::symlink(&secret, &path).unwrap();
            assert_eq!(
                refusal(&dir),
                format!("{}: {SYMLINK_IN_BUNDLE}", path.display())
            );
            std::fs::remove_file(&path).unwrap();
            std::fs::write(&path, kept).unwrap();
        }
        assert_eq!(Bundle::open(&dir).unwrap().variants.len(), 3);
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_file(&secret).unwrap();
    }

    #[test]
    fn manifests_of_too_many_variants_or_bytes_are_refused() {
        let (dir, mut manifest) = scratch_bundle("large");
        let first = manifest["variants"][0].clone();
        manifest["variants"] = (0..4000)
            .map(|i| {
                let mut v = first.clone();
                v["id"] = format!("v{i}").into();
                v["dir"] = format!("variants/v{i}").into();
                v
            })
            .collect();
        write_manifest(&dir, &manifest);
        let path = dir.join(MANIFEST);
        assert_eq!(
            refusal(&dir),
            format!(
                "{}: 4000 variants, more than {MAX_VARIANTS}: not a manifest a lab run writes",
                path.display()
            )
        );
        // 10 MiB: a valid manifest padded with spaces.
        manifest["variants"] = serde_json::Value::Array(vec![first]);
        let mut text = manifest.to_string();
        text.push_str(&" ".repeat(10 << 20));
        std::fs::write(&path, text).unwrap();
        assert_eq!(
            refusal(&dir),
            format!(
                "{}: larger than 1024 KiB: not a file a lab run writes",
                path.display()
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_matrix_naming_one_bundle_many_times_is_refused() {
        let (dir, _) = scratch_bundle("matrix");
        let matrix = dir.with_extension("matrix");
        let _ = std::fs::remove_dir_all(&matrix);
        std::fs::create_dir_all(&matrix).unwrap();
        std::fs::rename(&dir, matrix.join("b1")).unwrap();
        let write = |bundles: Vec<&str>| {
            let doc = serde_json::json!({
                "format": MATRIX_FORMAT, "experiment": "x", "cells": [], "repeats": 1,
                "duration_s": 1.0, "expected_duration_s": 1.0, "bundles": bundles,
            });
            std::fs::write(matrix.join(MATRIX), doc.to_string()).unwrap();
        };
        write(vec!["b1"; 20_000]);
        assert_eq!(
            matrix_bundles(&matrix).unwrap_err().to_string(),
            format!(
                "{}/b1: more than {MAX_BUNDLES} bundles in one report: report fewer at a time",
                matrix.display()
            )
        );
        write(vec!["b1", "b1"]);
        assert_eq!(
            matrix_bundles(&matrix).unwrap_err().to_string(),
            format!(
                "{0}/b1: the same bundle as {0}/b1: give each bundle once",
                matrix.display()
            )
        );
        std::os::unix::fs::symlink(matrix.join("b1"), matrix.join("b2")).unwrap();
        write(vec!["b1", "b2"]);
        assert_eq!(
            matrix_bundles(&matrix).unwrap_err().to_string(),
            format!("{}/b2: {SYMLINK_IN_BUNDLE}", matrix.display())
        );
        write(vec!["b1"]);
        assert_eq!(
            matrix_bundles(&matrix).unwrap().unwrap(),
            [matrix.join("b1")]
        );
        std::fs::remove_dir_all(&matrix).unwrap();
    }

    #[test]
    fn non_finite_host_samples_never_reach_a_chart() {
        let (dir, _) = scratch_bundle("nan");
        let csv = dir.join(HOST_SERIES);
        let mut text = std::fs::read_to_string(&csv).unwrap();
        let columns = text.lines().next().unwrap().split(',').count();
        for (t, value) in [("1e9", "NaN"), ("inf", "1"), ("2e9", "-inf")] {
            let row: Vec<&str> = (0..columns)
                .map(|i| if i == 0 { t } else { value })
                .collect();
            text.push_str(&row.join(","));
            text.push('\n');
        }
        std::fs::write(&csv, text).unwrap();
        let bundle = Bundle::open(&dir).unwrap();
        let section = crate::model::Section::from_bundle(&bundle);
        let charts = crate::html::charts(&section, None, 1e6);
        assert!(!charts.host.is_empty());
        for svg in &charts.host {
            assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
        }
        let skipped = 1 + 2 * (columns - 1);
        assert!(
            section.facts.contains(&(
                "host series".to_string(),
                format!("{skipped} samples not finite (NaN or infinite), left out")
            )),
            "{:?}",
            section.facts
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn non_finite_host_samples_are_skipped_and_counted() {
        let input = "t_s,dirty_kb,cpu_iowait_pct\n0,1,2\n1,NaN,inf\nnan,5,6\n3,-inf,4\n";
        let series = HostSeries::read(input.as_bytes(), "host.csv").unwrap();
        assert_eq!(series.t_s, [0.0, 1.0, 3.0]);
        assert_eq!(series.columns["dirty_kb"], [Some(1.0), None, None]);
        assert_eq!(
            series.columns["cpu_iowait_pct"],
            [Some(2.0), None, Some(4.0)]
        );
        assert_eq!(series.skipped, 4);
    }

    #[test]
    fn host_series_are_capped() {
        let row = "1,2,3\n";
        let rows = MAX_HOST_VALUES / 3 + 1;
        let input = format!("t_s,a,b\n{}", row.repeat(rows));
        let error = HostSeries::read(input.as_bytes(), "host.csv").unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "host.csv:{}: more than {MAX_HOST_VALUES} values: larger than any lab run writes",
                rows + 1
            )
        );
    }
}
