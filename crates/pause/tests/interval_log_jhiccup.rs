//! The reader on real jHiccup logs, against the values Java's HdrHistogram 2.2.2 reports
//! for them (fixtures/reference/jhiccup/expected.json).

use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;
use pauselab_pause::interval_log::{IntervalLogReader, TagFilter};

/// The published jHiccup logs in the repository (fixtures/reference/jhiccup).
fn jhiccup_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/reference/jhiccup")
}

#[test]
fn every_log_matches_java_counts_and_percentiles() {
    let dir = jhiccup_dir();
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let files = expected.as_object().unwrap();
    assert!(files.len() >= 6);
    for (name, want) in files {
        let mut reader = IntervalLogReader::open(&dir.join(name))
            .unwrap()
            .with_tag(TagFilter::Untagged);
        let mut total: Option<Histogram<u64>> = None;
        let mut intervals = 0;
        let mut last_offset = -1.0;
        for interval in reader.by_ref() {
            let interval = interval.unwrap();
            assert!(
                interval.offset_s > last_offset,
                "{name}: intervals in time order"
            );
            last_offset = interval.offset_s;
            intervals += 1;
            let acc = total.get_or_insert_with(|| {
                let mut h = Histogram::new_from(&interval.histogram);
                h.auto(true);
                h
            });
            acc.add(&interval.histogram).unwrap();
        }
        let total = total.unwrap();
        let get = |k: &str| want[k].as_u64().unwrap();
        assert_eq!(intervals as u64, get("intervals"), "{name}");
        assert_eq!(total.len(), get("count"), "{name}");
        assert_eq!(total.value_at_quantile(0.5), get("p50"), "{name}");
        assert_eq!(total.value_at_quantile(0.99), get("p99"), "{name}");
        assert_eq!(total.value_at_quantile(0.999), get("p99_9"), "{name}");
        assert_eq!(total.value_at_quantile(0.9999), get("p99_99"), "{name}");
        assert_eq!(total.max(), get("max"), "{name}");
        // jHiccup's logs carry a StartTime and relative timestamps; the file-mode ones none.
        if name.ends_with(".jHiccup") {
            let start = reader.start_time_header_s().unwrap();
            assert!(start > 1.6e9 && start < 1.7e9, "{name}: {start}");
        } else {
            assert_eq!(reader.start_time_header_s(), None);
        }
    }
}

#[test]
fn gzip_compressed_logs_read_the_same_and_truncation_is_an_error() {
    use std::io::Write;
    let dir = jhiccup_dir();
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let name = expected.as_object().unwrap().keys().next().unwrap().clone();
    let plain = std::fs::read(dir.join(&name)).unwrap();
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(&plain).unwrap();
    let compressed = encoder.finish().unwrap();
    let tmp = std::env::temp_dir().join(format!("pauselab-gz-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let gz = tmp.join("log.hlog.gz");
    std::fs::write(&gz, &compressed).unwrap();
    let totals = |path: &std::path::Path| -> Result<(usize, u64), String> {
        let mut intervals = 0;
        let mut count = 0;
        for interval in IntervalLogReader::open(path).map_err(|e| e.to_string())? {
            let interval = interval.map_err(|e| e.to_string())?;
            intervals += 1;
            count += interval.histogram.len();
        }
        Ok((intervals, count))
    };
    let want = totals(&dir.join(&name)).unwrap();
    assert!(want.0 > 0);
    assert_eq!(totals(&gz).unwrap(), want);
    let truncated = tmp.join("truncated.hlog.gz");
    std::fs::write(&truncated, &compressed[..compressed.len() / 2]).unwrap();
    let err = totals(&truncated).unwrap_err();
    assert!(err.contains("truncated.hlog.gz"), "{err}");
    std::fs::remove_dir_all(&tmp).unwrap();
}
