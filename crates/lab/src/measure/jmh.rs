//! JMH results: the JSON file JMH writes with `-rf json -rff FILE` (an array with one entry
//! per benchmark and parameter combination), read into a variant's measurements.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::experiment::Experiment;
use crate::measure::Measurement;

/// Where a JMH variant writes its results: `-rff {out_dir}/jmh.json`.
pub const RESULT_FILE: &str = "jmh.json";

/// JMH's own entry point: a workload with this main class must leave a result file.
pub const JMH_MAIN: &str = "org.openjdk.jmh.Main";

/// The result file of a variant to read, if any: always for JMH's own main class (a
/// missing file is then an error), otherwise when the workload wrote one.
pub fn result_file(experiment: &Experiment, out_dir: &Path) -> Option<std::path::PathBuf> {
    let path = out_dir.join(RESULT_FILE);
    (experiment.workload.main == JMH_MAIN || path.exists()).then_some(path)
}

/// Why a JMH result file could not be read, in one line naming the file.
#[derive(Debug, thiserror::Error)]
pub enum JmhError {
    #[error("{}: cannot read the JMH result: {source} (JMH writes it when it finishes: did it finish within the run's duration? see workload.out)", path.display())]
    Read {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {error}", path.display())]
    Invalid {
        path: std::path::PathBuf,
        error: JmhFormatError,
    },
}

/// What is wrong with the text of a JMH result.
#[derive(Debug, thiserror::Error)]
pub enum JmhFormatError {
    #[error("empty JMH result file (the run did not finish)")]
    Empty,
    #[error("not a complete JMH JSON result: {0}")]
    Truncated(serde_json::Error),
    #[error("not a JMH JSON result: expected an array of benchmark results")]
    NotAnArray,
    #[error("no benchmark results (every benchmark failed? see workload.out)")]
    NoResults,
    /// Result `index` (from 1) of the array.
    #[error("result {index}: {error}")]
    Entry { index: usize, error: EntryError },
}

/// What is wrong with one benchmark's entry.
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    #[error("no \"benchmark\" name")]
    NoName,
    #[error("{benchmark}: \"params\" is not an object")]
    Params { benchmark: String },
    /// `metric` is `primaryMetric` or the allocation metric.
    #[error("{benchmark}: {metric}: {error}")]
    Metric {
        benchmark: String,
        metric: &'static str,
        error: ScoreError,
    },
}

/// What is wrong with a metric of an entry.
#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    #[error("missing")]
    Missing,
    /// The JSON found in its place.
    #[error("no finite \"score\" (found {0})")]
    NotFinite(String),
    #[error("no \"scoreUnit\"")]
    NoUnit,
}

/// The measurements of a variant's result file (names below).
pub fn measurements(path: &Path) -> Result<Vec<Measurement>, JmhError> {
    read(path).map(|results| readings(&results))
}

/// The secondary metric of JMH's GC profiler (`-prof gc`): bytes allocated per operation.
pub const ALLOC_NORM: &str = "gc.alloc.rate.norm";

/// A score with its error (half the 99.9% confidence interval; None when JMH could not
/// compute it, e.g. from fewer than three iterations) and unit, as JMH reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Score {
    pub value: f64,
    pub error: Option<f64>,
    pub unit: String,
}

/// One benchmark and parameter combination of a JMH run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchmarkResult {
    /// Fully qualified method, e.g. `pauselab.bench.SocketWriteBenchmark.writeOneByte`.
    pub benchmark: String,
    /// `avgt`, `thrpt`, `sample`, `ss`.
    pub mode: String,
    pub params: BTreeMap<String, String>,
    pub forks: Option<u64>,
    pub jdk_version: Option<String>,
    pub primary: Score,
    /// Bytes per operation from the GC profiler, when it ran.
    pub alloc_norm: Option<Score>,
}

/// Reads a JMH JSON result file. Errors are one line naming the file.
pub fn read(path: &Path) -> Result<Vec<BenchmarkResult>, JmhError> {
    let text = std::fs::read_to_string(path).map_err(|source| JmhError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text).map_err(|error| JmhError::Invalid {
        path: path.to_path_buf(),
        error,
    })
}

/// Parses the text of a JMH JSON result file.
pub fn parse(text: &str) -> Result<Vec<BenchmarkResult>, JmhFormatError> {
    if text.trim().is_empty() {
        return Err(JmhFormatError::Empty);
    }
    let document: Value = serde_json::from_str(text).map_err(JmhFormatError::Truncated)?;
    let entries = document.as_array().ok_or(JmhFormatError::NotAnArray)?;
    if entries.is_empty() {
        return Err(JmhFormatError::NoResults);
    }
    entries
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            parse_entry(entry).map_err(|error| JmhFormatError::Entry {
                index: i + 1,
                error,
            })
        })
        .collect()
}

fn parse_entry(entry: &Value) -> Result<BenchmarkResult, EntryError> {
    let benchmark = entry["benchmark"]
        .as_str()
        .ok_or(EntryError::NoName)?
        .to_string();
    let mode = entry["mode"].as_str().unwrap_or_default().to_string();
    let params = match &entry["params"] {
        Value::Null => BTreeMap::new(),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| {
                let value = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), value)
            })
            .collect(),
        _ => return Err(EntryError::Params { benchmark }),
    };
    let metric_error = |metric, error| EntryError::Metric {
        benchmark: benchmark.clone(),
        metric,
        error,
    };
    let primary = score(&entry["primaryMetric"]).map_err(|e| metric_error("primaryMetric", e))?;
    let alloc_norm = match &entry["secondaryMetrics"][ALLOC_NORM] {
        Value::Null => None,
        metric => Some(score(metric).map_err(|e| metric_error(ALLOC_NORM, e))?),
    };
    Ok(BenchmarkResult {
        benchmark,
        mode,
        params,
        forks: entry["forks"].as_u64(),
        jdk_version: entry["jdkVersion"].as_str().map(str::to_string),
        primary,
        alloc_norm,
    })
}

fn score(metric: &Value) -> Result<Score, ScoreError> {
    if !metric.is_object() {
        return Err(ScoreError::Missing);
    }
    let value = number(&metric["score"])
        .filter(|v| v.is_finite())
        .ok_or_else(|| ScoreError::NotFinite(metric["score"].to_string()))?;
    let unit = metric["scoreUnit"]
        .as_str()
        .filter(|u| !u.is_empty())
        .ok_or(ScoreError::NoUnit)?
        .to_string();
    Ok(Score {
        value,
        error: number(&metric["scoreError"]).filter(|e| e.is_finite()),
        unit,
    })
}

/// JMH writes non-finite numbers as the strings "NaN", "Infinity" and "-Infinity".
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

impl BenchmarkResult {
    /// `writeOneByte` or `writeOneByte(jfr=off)`: the method name and its parameters.
    pub fn short_name(&self) -> String {
        let method = self.benchmark.rsplit('.').next().unwrap_or(&self.benchmark);
        if self.params.is_empty() {
            return method.to_string();
        }
        let params: Vec<String> = self
            .params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        format!("{method}({})", params.join(","))
    }
}

/// Measurement names: `jmh.score`, `jmh.score_error` and, when the GC profiler ran,
/// `jmh.gc.alloc.rate.norm` (B/op). With several results in one file the result's short
/// name comes between: `jmh.writeOneByte(jfr=off).score`.
pub const SCORE: &str = "jmh.score";
pub const SCORE_ERROR: &str = "jmh.score_error";
pub const ALLOC_NORM_MEASUREMENT: &str = "jmh.gc.alloc.rate.norm";

/// The readings of a run (names above).
pub fn readings(results: &[BenchmarkResult]) -> Vec<Measurement> {
    let mut readings = Vec::new();
    for result in results {
        let prefix = if results.len() > 1 {
            format!("jmh.{}.", result.short_name())
        } else {
            "jmh.".to_string()
        };
        let mut push = |name: &str, value: f64, unit: &str| {
            readings.push(Measurement::new(&format!("{prefix}{name}"), value, unit))
        };
        push("score", result.primary.value, &result.primary.unit);
        if let Some(error) = result.primary.error {
            push("score_error", error, &result.primary.unit);
        }
        if let Some(alloc) = &result.alloc_norm {
            push(ALLOC_NORM, alloc.value, &alloc.unit);
        }
    }
    readings
}

/// A variant's primary JMH score, from its measurements (`jmh.score`, `jmh.score_error`).
pub fn score_of(measurements: &[Measurement]) -> Option<Score> {
    let score = measurements.iter().find(|m| m.name == SCORE)?;
    Some(Score {
        value: score.value,
        error: measurements
            .iter()
            .find(|m| m.name == SCORE_ERROR)
            .map(|m| m.value),
        unit: score.unit.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/jmh")
            .join(name)
    }

    #[test]
    fn reads_one_result_with_the_gc_profiler() {
        let results = read(&fixture("socket-write-enabled-jdk25.json")).unwrap();
        assert_eq!(results.len(), 1);
        let r = &results[0];
        assert_eq!(
            r.benchmark,
            "pauselab.bench.SocketWriteBenchmark.writeOneByte"
        );
        assert_eq!(r.mode, "avgt");
        assert_eq!(r.params["jfr"], "socket-write-enabled");
        assert_eq!(r.forks, Some(1));
        assert_eq!(r.jdk_version.as_deref(), Some("25.0.3"));
        assert_eq!(r.primary.unit, "us/op");
        // The fixture's primary score is the mean of its rawData; check against that, not
        // a copied constant.
        let text = std::fs::read_to_string(fixture("socket-write-enabled-jdk25.json")).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        let raw: Vec<f64> = doc[0]["primaryMetric"]["rawData"][0]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let mean = raw.iter().sum::<f64>() / raw.len() as f64;
        assert!((r.primary.value - mean).abs() < 1e-9 * mean);
        assert!(r.primary.error.unwrap() > 0.0);
        let alloc = r.alloc_norm.as_ref().unwrap();
        assert_eq!(alloc.unit, "B/op");
        // Every write emits an event: about a hundred bytes each.
        assert!(alloc.value > 50.0 && alloc.value < 500.0, "{alloc:?}");

        let readings = readings(&results);
        let names: Vec<&str> = readings.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, [SCORE, SCORE_ERROR, ALLOC_NORM_MEASUREMENT]);
        assert_eq!(readings[0].unit, "us/op");
        assert_eq!(readings[2].unit, "B/op");
        assert_eq!(readings[2].value, alloc.value);
    }

    #[test]
    fn several_results_are_prefixed_and_nan_errors_are_left_out() {
        let results = read(&fixture("socket-write-all-jdk17.json")).unwrap();
        let setups: Vec<&str> = results.iter().map(|r| r.params["jfr"].as_str()).collect();
        assert_eq!(
            setups,
            ["off", "socket-write-disabled", "socket-write-enabled"]
        );
        // Two iterations: JMH gives no error ("NaN").
        assert!(results.iter().all(|r| r.primary.error.is_none()));
        let readings = readings(&results);
        let names: Vec<&str> = readings.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "jmh.writeOneByte(jfr=off).score",
                "jmh.writeOneByte(jfr=off).gc.alloc.rate.norm",
                "jmh.writeOneByte(jfr=socket-write-disabled).score",
                "jmh.writeOneByte(jfr=socket-write-disabled).gc.alloc.rate.norm",
                "jmh.writeOneByte(jfr=socket-write-enabled).score",
                "jmh.writeOneByte(jfr=socket-write-enabled).gc.alloc.rate.norm",
            ]
        );
        // With the event on, writes allocate; with JFR off they do not (below 1 B/op: the
        // profiler's own noise).
        let off = results[0].alloc_norm.as_ref().unwrap().value;
        let on = results[2].alloc_norm.as_ref().unwrap().value;
        assert!(off < 1.0 && on > 50.0, "off {off} on {on}");
    }

    #[test]
    fn bad_files_give_one_line_naming_the_file() {
        let dir = std::env::temp_dir().join(format!("pauselab-jmh-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = std::fs::read_to_string(fixture("socket-write-off-jdk17.json")).unwrap();
        let cases: Vec<(&str, String, &str)> = vec![
            ("empty.json", String::new(), "empty"),
            (
                "truncated.json",
                good[..good.len() / 2].to_string(),
                "not a complete",
            ),
            (
                "garbage.json",
                "\u{1}\u{2}binary junk".into(),
                "not a complete",
            ),
            (
                "object.json",
                "{\"benchmark\":\"x\"}".into(),
                "expected an array",
            ),
            ("none.json", "[]".into(), "no benchmark results"),
            (
                "noscore.json",
                good.replace("\"score\" :", "\"scor\" :"),
                "score",
            ),
            ("nanscore.json", nan_primary(&good), "no finite"),
            (
                "nounit.json",
                good.replace("\"scoreUnit\" : \"us/op\"", "\"x\" : 1"),
                "scoreUnit",
            ),
        ];
        for (name, text, expected) in cases {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            let err = read(&path).unwrap_err().to_string();
            assert!(err.contains(&path.display().to_string()), "{name}: {err}");
            assert!(err.contains(expected), "{name}: {err}");
            assert!(!err.contains('\n'), "{name}: {err}");
        }
        let err = read(&dir.join("missing.json")).unwrap_err().to_string();
        assert!(
            err.contains("missing.json") && err.contains("cannot read"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn what_is_wrong_is_typed() {
        assert!(matches!(parse(" "), Err(JmhFormatError::Empty)));
        assert!(matches!(parse("[]"), Err(JmhFormatError::NoResults)));
        assert!(matches!(parse("{}"), Err(JmhFormatError::NotAnArray)));
        assert!(matches!(parse("[{"), Err(JmhFormatError::Truncated(_))));
        let unnamed = parse(r#"[{"benchmark": "b", "primaryMetric": {"score": 1}}, {}]"#);
        assert!(matches!(
            unnamed,
            Err(JmhFormatError::Entry {
                index: 1,
                error: EntryError::Metric {
                    metric: "primaryMetric",
                    error: ScoreError::NoUnit,
                    ..
                }
            })
        ));
    }

    fn nan_primary(good: &str) -> String {
        let mut doc: Value = serde_json::from_str(good).unwrap();
        doc[0]["primaryMetric"]["score"] = Value::String("NaN".into());
        doc.to_string()
    }

    #[test]
    fn truncation_at_every_point_is_an_error_or_a_complete_result() {
        let good = std::fs::read_to_string(fixture("socket-write-off-jdk17.json")).unwrap();
        let complete = parse(&good).unwrap();
        for cut in 0..good.len() {
            if !good.is_char_boundary(cut) {
                continue;
            }
            match parse(&good[..cut]) {
                Ok(results) => assert_eq!(results, complete, "cut at {cut}"),
                Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
            }
        }
    }
}
