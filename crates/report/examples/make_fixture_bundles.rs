//! Builds the small lab-like bundles under fixtures/bundles/ from the published jHiccup logs
//! (fixtures/reference/jhiccup): 5-minute windows cut from the real runs, written back with
//! pauselab's interval log writer, plus a manifest, a verdict and a host series.
//!
//!     cargo run -p pauselab-report --example make_fixture_bundles -- fixtures/reference/jhiccup fixtures/bundles
//!
//! The verdicts follow the lab's rule (p99.9 or max at least 10x the baseline's and above
//! 100 ms); the host series is synthetic (the published runs recorded none).

use std::path::{Path, PathBuf};

use pauselab_pause::interval_log::{IntervalLogReader, IntervalLogWriter, NANOS_PER_MILLI};
use pauselab_report::bundle::{VariantVerdict, Vulnerable, FORMAT, FORMAT_VERSION};
use serde_json::json;

const WINDOW_S: f64 = 300.0;

struct Source {
    file: &'static str,
    /// Where the window starts: around the log's largest interval max, or at this offset.
    around_max: bool,
    offset_s: f64,
}

struct VariantSpec {
    variant: &'static str,
    jdk: &'static str,
    description: &'static str,
    flags: &'static [&'static str],
    hiccups: Source,
    safepoints: Option<Source>,
    gc_log: bool,
}

/// Cuts a window out of `source` and writes it as `out` (offsets from the window start).
/// Returns (p99.9 ms, max ms) of the window.
fn cut(data: &Path, source: &Source, out: &Path, run_start_s: f64) -> (f64, f64) {
    let path = data.join(source.file);
    let from = if source.around_max {
        let mut best = (0.0, 0);
        for interval in IntervalLogReader::open(&path).unwrap() {
            let interval = interval.unwrap();
            if interval.histogram.max() > best.1 {
                best = (interval.offset_s, interval.histogram.max());
            }
        }
        (best.0 - WINDOW_S / 2.0).max(0.0)
    } else {
        source.offset_s
    };
    let reader = IntervalLogReader::open(&path)
        .unwrap()
        .with_range(Some(from), Some(from + WINDOW_S));
    let file = std::fs::File::create(out).unwrap();
    let mut writer = IntervalLogWriter::with_options(
        file,
        run_start_s,
        None,
        NANOS_PER_MILLI,
        &[&format!(
            "Cut from {} at {from:.0} s for pauselab's report tests",
            source.file
        )],
    )
    .unwrap();
    let mut total: Option<hdrhistogram::Histogram<u64>> = None;
    let mut first = None;
    for interval in reader {
        let interval = interval.unwrap();
        let first = *first.get_or_insert(interval.offset_s);
        writer
            .write_interval(
                interval.offset_s - first,
                interval.length_s,
                &interval.histogram,
            )
            .unwrap();
        total
            .get_or_insert_with(|| {
                let mut h = hdrhistogram::Histogram::new_from(&interval.histogram);
                h.auto(true);
                h
            })
            .add(&interval.histogram)
            .unwrap();
    }
    writer.finish().unwrap();
    let total = total.unwrap();
    (
        total.value_at_quantile(0.999) as f64 / 1e6,
        total.max() as f64 / 1e6,
    )
}

struct BundleSpec {
    name: &'static str,
    hostname: &'static str,
    kernel: &'static str,
    distribution: &'static str,
    cpu: &'static str,
    cpus: u32,
    device: &'static str,
    start_s: f64,
    variants: Vec<VariantSpec>,
    iowait_burst: bool,
}

fn write_bundle(data: &Path, gc_demo: &Path, out_root: &Path, spec: &BundleSpec) {
    let dir = out_root.join(spec.name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut entries = Vec::new();
    let mut numbers = Vec::new();
    let mut jdks: Vec<&str> = Vec::new();
    for v in &spec.variants {
        let id = format!("{}-jdk{}", v.variant, v.jdk);
        let vdir = dir.join("variants").join(&id);
        std::fs::create_dir_all(&vdir).unwrap();
        let (p999, max) = cut(data, &v.hiccups, &vdir.join("hiccups.hlog"), spec.start_s);
        let mut summary = json!({ "hiccups": { "p99_9_ms": p999, "max_ms": max }, "exit_code": 0 });
        if let Some(sp) = &v.safepoints {
            let (sp999, spmax) = cut(data, sp, &vdir.join("safepoints.hlog"), spec.start_s);
            summary["safepoints"] = json!({ "p99_9_ms": sp999, "max_ms": spmax });
        }
        if v.gc_log {
            std::fs::copy(gc_demo, vdir.join("gc.log")).unwrap();
        }
        std::fs::write(
            vdir.join("summary.json"),
            serde_json::to_string_pretty(&summary).unwrap() + "\n",
        )
        .unwrap();
        if !jdks.contains(&v.jdk) {
            jdks.push(v.jdk);
        }
        entries.push(json!({
            "id": id, "variant": v.variant, "jdk": v.jdk, "description": v.description,
            "jvm_flags": v.flags, "dir": format!("variants/{id}")
        }));
        numbers.push((id, v.variant, v.jdk, p999, max));
    }
    // Verdicts per JDK against that JDK's baseline.
    let mut verdicts = Vec::new();
    let mut vulnerable = false;
    for (id, variant, jdk, p999, max) in &numbers {
        let baseline = numbers.iter().find(|n| n.1 == "no-perfdata" && n.2 == *jdk);
        let (verdict, evidence) = match baseline {
            _ if *variant == "no-perfdata" => {
                (VariantVerdict::Baseline, format!("max {max:.1} ms"))
            }
            Some((_, _, _, b999, bmax)) => {
                let stalls = (*p999 >= 10.0 * b999 || *max >= 10.0 * bmax) && *max >= 100.0;
                vulnerable |= stalls && *variant == "default";
                (
                    if stalls {
                        VariantVerdict::Stalls
                    } else {
                        VariantVerdict::NoStalls
                    },
                    format!("p99.9 {p999:.1} ms and max {max:.1} ms vs baseline {b999:.1} ms and {bmax:.1} ms"),
                )
            }
            None => (
                VariantVerdict::NoStalls,
                format!("max {max:.1} ms (no baseline on this JDK)"),
            ),
        };
        verdicts.push(json!({ "id": id, "verdict": verdict, "evidence": evidence }));
    }
    let baseline_max = numbers
        .iter()
        .filter(|n| n.1 == "no-perfdata")
        .map(|n| n.4)
        .fold(0.0, f64::max);
    let verdict = json!({
        "result": if vulnerable { Vulnerable::Yes } else { Vulnerable::No },
        "rule": { "margin": 10.0, "floor_ms": 100.0 },
        "baseline_max_ms": baseline_max,
        "variants": verdicts,
    });
    let manifest = json!({
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "experiment": {
            "name": "hsperf-mmap",
            "description": "GC blocked on writeback of the hsperf mmap file",
            "default_variant": "default",
            "baseline_variant": "no-perfdata",
        },
        "start_time_s": spec.start_s,
        "end_time_s": spec.start_s + WINDOW_S,
        "fault_injection": if spec.iowait_burst { "slow-stable-pages" } else { "none" },
        "note": "fixture: windows of published jHiccup runs; host series synthetic",
        "host": {
            "hostname": spec.hostname, "kernel": spec.kernel, "distribution": spec.distribution,
            "cpu": spec.cpu, "cpus": spec.cpus, "memory_bytes": 32_212_254_720_u64, "thp": "madvise",
            "swap_bytes": 0,
            "dirty": { "dirty_ratio": 20, "dirty_background_ratio": 10, "dirty_expire_centisecs": 3000 },
            "paths": [
                { "role": "stressed", "path": "/tmp", "filesystem": "ext4", "device": spec.device,
                  "stable_writes": spec.iowait_burst },
                { "role": "gc-logs", "path": "/var/tmp/pauselab", "filesystem": "tmpfs", "device": "tmpfs",
                  "stable_writes": false }
            ]
        },
        "jdks": jdks.iter().map(|j| json!({ "id": j, "version": if *j == "8" { "1.8.0_362" } else { "17.0.6" } })).collect::<Vec<_>>(),
        "variants": entries,
    });
    std::fs::write(
        dir.join("manifest.json"),
        serde_json::to_string_pretty(&manifest).unwrap() + "\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("verdict.json"),
        serde_json::to_string_pretty(&verdict).unwrap() + "\n",
    )
    .unwrap();
    // A synthetic host series: writeback bursts every 30 s on the vulnerable host.
    let mut csv = String::from(
        "t_s,cpu_user_pct,cpu_sys_pct,cpu_iowait_pct,dirty_kb,writeback_kb,psi_io_some_avg10\n",
    );
    for t in 0..WINDOW_S as u32 {
        let burst = spec.iowait_burst && t % 30 >= 25;
        csv.push_str(&format!(
            "{t},{:.1},{:.1},{:.1},{},{},{:.2}\n",
            40.0 + f64::from(t % 7),
            6.0 + f64::from(t % 3),
            if burst { 35.0 + f64::from(t % 5) } else { 0.5 },
            if burst {
                180_000
            } else {
                20_000 + (t % 30) * 5_000
            },
            if burst { 90_000 } else { 0 },
            if burst { 42.0 } else { 0.1 }
        ));
    }
    std::fs::write(dir.join("host.csv"), csv).unwrap();
}

fn main() {
    let args: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    let [data, out] = args.as_slice() else {
        eprintln!("usage: make_fixture_bundles JHICCUP_DATA_DIR OUT_DIR");
        std::process::exit(2);
    };
    let gc_demo =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/gclogs/demo-g1-jdk17.log");
    let src = |file, around_max, offset_s| Source {
        file,
        around_max,
        offset_s,
    };
    let vulnerable = BundleSpec {
        name: "c4-kernel3.2",
        hostname: "c4-4xlarge-1",
        kernel: "3.2.0-4-amd64",
        distribution: "Amazon Linux AMI 2012.09",
        cpu: "Intel(R) Xeon(R) CPU E5-2666 v3 @ 2.90GHz",
        cpus: 16,
        device: "/dev/xvdb (HDD)",
        start_s: 1_678_178_742.226,
        iowait_burst: true,
        variants: vec![
            VariantSpec {
                variant: "default",
                jdk: "17",
                description: "hsperf file on the stressed filesystem",
                flags: &["-Xlog:gc*,safepoint:file=gc.log"],
                hiccups: src("java17x4-async-off_c4_1.jHiccup", true, 0.0),
                safepoints: None,
                gc_log: false,
            },
            VariantSpec {
                variant: "no-perfdata",
                jdk: "17",
                description: "-XX:-UsePerfData (baseline)",
                flags: &["-XX:-UsePerfData"],
                hiccups: src("java17x4_jh-no-perf_c4_1.hlog", false, 6000.0),
                safepoints: None,
                gc_log: false,
            },
            VariantSpec {
                variant: "perf-disable-shared-mem",
                jdk: "17",
                description: "-XX:+PerfDisableSharedMem",
                flags: &["-XX:+PerfDisableSharedMem"],
                hiccups: src("java17x4-no-mmap_c4_1.jHiccup", true, 0.0),
                safepoints: None,
                gc_log: false,
            },
            VariantSpec {
                variant: "default",
                jdk: "8",
                description: "hsperf file on the stressed filesystem",
                flags: &["-XX:+PrintGCApplicationStoppedTime"],
                hiccups: src("java8x4-async-off_c4_2.jHiccup", true, 0.0),
                safepoints: Some(src("java8x4_jh-async-on_c4_2.hlog", true, 0.0)),
                gc_log: false,
            },
            VariantSpec {
                variant: "no-perfdata",
                jdk: "8",
                description: "-XX:-UsePerfData (baseline)",
                flags: &["-XX:-UsePerfData"],
                hiccups: src("java8x4-no-perf_c4_2.jHiccup", true, 0.0),
                safepoints: None,
                gc_log: false,
            },
        ],
    };
    let quiet = BundleSpec {
        name: "lab-kernel6.1",
        hostname: "lab1",
        kernel: "6.1.0-26-amd64",
        distribution: "Debian GNU/Linux 12 (bookworm)",
        cpu: "Intel(R) Xeon(R) CPU @ 2.20GHz",
        cpus: 2,
        device: "/dev/vda1 (SSD)",
        start_s: 1_795_300_962.968,
        iowait_burst: false,
        variants: vec![
            VariantSpec {
                variant: "default",
                jdk: "17",
                description: "hsperf file on the stressed filesystem",
                flags: &["-Xlog:gc*,safepoint:file=gc.log"],
                hiccups: src("java17x4-no-mmap_c4_1.jHiccup", false, 1000.0),
                safepoints: None,
                gc_log: true,
            },
            VariantSpec {
                variant: "no-perfdata",
                jdk: "17",
                description: "-XX:-UsePerfData (baseline)",
                flags: &["-XX:-UsePerfData"],
                hiccups: src("java17x4-no-mmap_c4_1.jHiccup", false, 5000.0),
                safepoints: None,
                gc_log: false,
            },
            VariantSpec {
                variant: "perf-disable-shared-mem",
                jdk: "17",
                description: "-XX:+PerfDisableSharedMem",
                flags: &["-XX:+PerfDisableSharedMem"],
                hiccups: src("java17x4-no-mmap_c4_1.jHiccup", false, 9000.0),
                safepoints: None,
                gc_log: false,
            },
        ],
    };
    for spec in [&vulnerable, &quiet] {
        write_bundle(data, &gc_demo, out, spec);
    }
}
