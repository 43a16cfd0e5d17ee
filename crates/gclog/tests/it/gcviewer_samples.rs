//! Every log of GCViewer's test corpus (fixtures/reference/gclogs/gcviewer-samples.tar.gz) against
//! the pause counts and sums of tests/data/gcviewer_samples.tsv (taken from GCViewer's own
//! assertions; each row says where its numbers come from), and pause counts against an
//! independent count with grep on the logs that spread events over several lines.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use pauselab_analysis::{Analyzer, Options, Report, Severity};
use pauselab_gclog::{analyze_inputs, input::Input};

/// The field's GC logs in the repository (fixtures/reference/gclogs).
fn gclogs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/reference/gclogs")
}

/// The corpus unpacked into a temporary directory; returns its `logs/` directory.
fn unpack(into: &Path) -> PathBuf {
    let status = Command::new("tar")
        .arg("xzf")
        .arg(gclogs_dir().join("gcviewer-samples.tar.gz"))
        .arg("-C")
        .arg(into)
        .status()
        .expect("tar runs");
    assert!(status.success());
    into.join("gcviewer-samples/logs")
}

struct Expected {
    pauses: u64,
    /// `None` when no reference sum exists; the input is refused when `refused`.
    total_ms: Option<f64>,
    refused: bool,
}

fn expected() -> BTreeMap<String, Expected> {
    let table = include_str!("../data/gcviewer_samples.tsv");
    table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(cols.len(), 4, "bad row: {l}");
            let total_ms = cols[2].parse().ok();
            (
                cols[0].to_string(),
                Expected {
                    pauses: cols[1].parse().unwrap(),
                    total_ms,
                    refused: cols[2] == "error",
                },
            )
        })
        .collect()
}

fn analyze(path: &Path) -> Result<Report, pauselab_gclog::Error> {
    let input = Input {
        name: path.display().to_string(),
        path: Some(path.to_path_buf()),
        zip_entry: None,
    };
    let mut analyzer = Analyzer::new(Options::default());
    analyze_inputs(&[input], &mut analyzer)?;
    Ok(analyzer.finish())
}

fn log_files(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for sub in ["", "unified-jvm-logging/"] {
        for entry in std::fs::read_dir(dir.join(sub)).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_file() {
                files.push(format!("{sub}{}", entry.file_name().to_string_lossy()));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_sample_log_gives_the_reference_pauses() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = unpack(tmp.path());
    let expected = expected();
    let files = log_files(&logs);
    assert!(files.len() >= 110, "{} files", files.len());
    assert_eq!(
        files,
        expected.keys().cloned().collect::<Vec<_>>(),
        "the table and the corpus list the same files"
    );
    let mut wrong = Vec::new();
    for (file, want) in &expected {
        match analyze(&logs.join(file)) {
            Err(e) if want.refused => assert!(!e.to_string().is_empty()),
            Err(e) => wrong.push(format!("{file}: refused: {e}")),
            Ok(_) if want.refused => wrong.push(format!("{file}: accepted, expected refused")),
            Ok(report) => {
                let got = &report.pauses.summary;
                if got.count != want.pauses {
                    wrong.push(format!(
                        "{file}: {} pauses, expected {}",
                        got.count, want.pauses
                    ));
                }
                if let Some(total) = want.total_ms {
                    if (got.total_ms - total).abs() > 0.001 {
                        wrong.push(format!(
                            "{file}: {} ms in pauses, expected {total}",
                            got.total_ms
                        ));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Events counted without the parser: lines where a `[GC` or `[Full GC` event starts after
/// the optional stamps (and `#N: ` GC ids), minus G1's `[GC concurrent-...]` phases.
fn count_event_starts(path: &Path) -> u64 {
    let grep = |pattern: &str| -> u64 {
        let out = Command::new("grep")
            .args(["-cE", pattern])
            .arg(path)
            .output()
            .expect("grep runs");
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    };
    let prefix = "^([0-9T:.,+-]+: )*(#[0-9]+: )?";
    grep(&format!(r"{prefix}\[(GC|Full GC)([ (]|$|[0-9A-Z])"))
        - grep(&format!(r"{prefix}\[GC concurrent"))
}

#[test]
fn events_over_several_lines_match_an_independent_count() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = unpack(tmp.path());
    // Parallel with tenuring distribution and adaptive size policy, CMS with tenuring
    // distribution, FLS statistics, a concurrent phase inside a pause, G1 JDK 6-8 with
    // details, ergonomics and GC ids, Serial JDK 1.3 (with one line of a monitoring tool,
    // "**** Error ... [GC ...]", the only unparsed line).
    for (file, unparsed) in [
        ("SampleSun1_8_0Parallel_Tenuring_PrintGCCause.txt", 0),
        ("SampleSun1_7_0PS_Adaptive_Tenuring_AppStopped.txt", 0),
        (
            "SampleSun1_7_0CMS_PrintTenuringDistributionPromotionFailure.txt",
            0,
        ),
        ("SampleSun1_7_0CmsPrintFlsStats2.txt", 0),
        ("SampleSun1_7_0_40CMS_PrintGCCause.txt", 0),
        ("SampleSun1_6_0G1_gc_verbose.txt", 0),
        ("SampleSun1_7_0_12PrintAdaptiveSizePolicy.txt", 0),
        ("SampleSun1_7_0G1TenuringDistribution.txt", 0),
        ("SampleSun1_8_0G1PrintGCID.txt", 0),
        ("SampleSun1_8_0Series-ManuallyMerged.txt", 0),
        ("SampleSun1_3_1_19SunOS.txt", 1),
    ] {
        let path = logs.join(file);
        let report = analyze(&path).unwrap();
        assert_eq!(
            report.pauses.summary.count,
            count_event_starts(&path),
            "{file}"
        );
        assert_eq!(
            report.unparsed_lines, unparsed,
            "{file}: {:?}",
            report.first_unparsed
        );
    }
}

/// JDK 8 Shenandoah prints its phase statistics after each cycle and at exit, its start-up
/// settings, its cycles' triggers and its free set: none is a pause, and none is left
/// unparsed. The pauses are its `[Pause ..., N ms]` lines, counted by grep.
#[test]
fn jdk8_shenandoahs_statistics_are_read_and_its_pauses_counted() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = unpack(tmp.path());
    let path = logs.join("SampleOpenJdk1_8_0-332.txt");
    let out = Command::new("grep")
        .args(["-cE", r"\[Pause [^]]*, [0-9.]+ ms\]"])
        .arg(&path)
        .output()
        .expect("grep runs");
    let pauses: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("GC STATISTICS:") && text.contains("Pause Init Mark (G)  "));
    let report = analyze(&path).unwrap();
    assert_eq!(report.pauses.summary.count, pauses);
    assert_eq!(report.unparsed_lines, 0, "{:?}", report.first_unparsed);
}

/// Some logs reach a user with G1's detail lines' indentation stripped (a log shipper, an
/// editor; gctoolkit's test data holds one from Solaris): `[Parallel Time: ...]`,
/// `[GC Worker Start (ms): ...]` and `[Eden: ...]` at the start of a line. They read as
/// the indented ones do: the same pauses, heap and allocation, nothing unparsed.
#[test]
fn g1_details_without_their_indentation_read_as_indented() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = unpack(tmp.path());
    for file in [
        "SampleSun1_7_0_12PrintAdaptiveSizePolicy.txt",
        "SampleSun1_8_0G1PrintGCID.txt",
        "SampleSun1_7_0G1TenuringDistribution.txt",
    ] {
        let text = std::fs::read_to_string(logs.join(file)).unwrap();
        let mut stripped_lines = 0;
        let stripped: String = text
            .split_inclusive('\n')
            .map(|line| {
                let trimmed = line.trim_start();
                if trimmed.len() < line.len() && trimmed.starts_with('[') {
                    stripped_lines += 1;
                    trimmed
                } else {
                    line
                }
            })
            .collect();
        assert!(stripped_lines > 10, "{file}: {stripped_lines}");
        let path = tmp.path().join(format!("stripped-{file}"));
        std::fs::write(&path, stripped).unwrap();
        let reference = analyze(&logs.join(file)).unwrap();
        let report = analyze(&path).unwrap();
        let json = |r: &Report| {
            (
                serde_json::to_value(&r.pauses).unwrap(),
                serde_json::to_value(&r.memory).unwrap(),
            )
        };
        assert_eq!(json(&report), json(&reference), "{file}");
        assert!(reference.memory.heap_samples > 0, "{file}");
        assert_eq!(report.unparsed_lines, reference.unparsed_lines, "{file}");
    }
}

/// HotSpot's log rotation cuts a file anywhere, so a rotated JDK 8 log may begin inside an
/// event: with its G1 details (`[Eden: ...]`, `[Times: ...]`), or in the middle of a
/// one-line event. The safepoint line after that tail stopped for the lost collection, and
/// is not a stop without a GC: as many stops are non-GC ones as in the whole log.
#[test]
fn a_log_that_begins_inside_an_event_has_no_stop_without_a_gc_for_it() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = unpack(tmp.path());
    type Cut = fn(&str) -> String;
    let cuts: [(&str, Cut); 2] = [
        // The G1 pause's opening line (and the line before it) lost.
        (
            "SampleSun1_7_0_02PrintApplicationTimeTenuringDistribution.txt",
            |text| text.lines().skip(2).map(|l| format!("{l}\n")).collect(),
        ),
        // The first line cut inside the CMS initial mark's event, after its young
        // generation's `[1 CMS-initial-mark: ` group.
        ("SampleSun1_7_0_51_CMS_PrintApplStoppedTime.txt", |text| {
            let event = text.find("CMS-initial-mark: ").unwrap();
            text[event + 18..].to_string()
        }),
    ];
    for (file, cut) in cuts {
        let text = std::fs::read_to_string(logs.join(file)).unwrap();
        let whole = analyze(&logs.join(file)).unwrap();
        let cut_text = cut(&text);
        let path = tmp.path().join(format!("cut-{file}"));
        std::fs::write(&path, &cut_text).unwrap();
        let report = analyze(&path).unwrap();
        // The cut removed one pause, and no safepoint line.
        assert_eq!(
            report.pauses.summary.count + 1,
            whole.pauses.summary.count,
            "{file}"
        );
        assert_eq!(
            report.safepoints.summary.count, whole.safepoints.summary.count,
            "{file}"
        );
        assert_eq!(
            report.safepoints.non_gc_count, whole.safepoints.non_gc_count,
            "{file}"
        );
        assert!(
            report.unparsed_lines > 0,
            "{file}: the tail is not read as a pause"
        );
    }
}

#[test]
fn cr_and_crlf_line_ends_give_the_same_pauses() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = unpack(tmp.path());
    for file in [
        "SampleSun1_7_0CmsPrintFlsStats2.txt",
        "SampleSun1_8_0G1PrintGCCausePrintTenuringDistribution.txt",
    ] {
        let text = std::fs::read(logs.join(file)).unwrap();
        let reference = analyze(&logs.join(file)).unwrap();
        for (ending, name) in [(&b"\r"[..], "cr.log"), (b"\r\n", "crlf.log")] {
            let converted: Vec<u8> = text.split(|&b| b == b'\n').collect::<Vec<_>>().join(ending);
            let path = tmp.path().join(name);
            std::fs::write(&path, converted).unwrap();
            let report = analyze(&path).unwrap();
            assert_eq!(
                report.pauses.summary.count, reference.pauses.summary.count,
                "{file} {name}"
            );
            assert_eq!(
                report.pauses.summary.total_ms,
                reference.pauses.summary.total_ms
            );
            assert_eq!(
                report.inputs[0].lines, reference.inputs[0].lines,
                "{file} {name}"
            );
        }
    }
}

/// Safepoints around pauses that are now read are GCs: no "safepoints without a GC"
/// warning on logs whose only long stops are GC pauses split over several lines.
#[test]
fn stops_of_joined_pauses_are_not_reported_as_non_gc_safepoints() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = unpack(tmp.path());
    // (file, the longest stopped-time line that follows no GC pause, ms)
    for (file, longest_non_gc_ms) in [
        (
            "SampleSun1_7_0CMS_PrintTenuringDistributionPromotionFailure.txt",
            8.277,
        ),
        (
            "SampleSun1_7_0_51_CMS_PrintApplStoppedTime_TenuringDist.txt",
            0.0,
        ),
        (
            "SampleSun1_7_0G1_AppStopped_TenuringDist_Ergonomics_comma.txt",
            0.306,
        ),
        ("SampleSun1_7_0Parallel_Tenuring_PrintGCCause.txt", 0.0),
    ] {
        let report = analyze(&logs.join(file)).unwrap();
        let non_gc = report
            .safepoints
            .operations
            .iter()
            .filter(|o| o.gc == Some(false))
            .map(|o| o.max_ms)
            .fold(0.0, f64::max);
        assert!(
            (non_gc - longest_non_gc_ms).abs() < 0.001,
            "{file}: {non_gc}"
        );
        assert!(
            report
                .findings
                .iter()
                .all(|f| f.rule != "non_gc_safepoints" || f.severity == Severity::Info),
            "{file}"
        );
    }
}
