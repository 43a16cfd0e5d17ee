//! The deployment files of contrib/: the Prometheus alert rules through promtool (Debian's
//! `prometheus` package; `make test` installs it), the Kubernetes DaemonSet's structure, and
//! its capability set against real JVMs of another user.

use crate::contrib_support;
use crate::process_support;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use contrib_support::{contrib, dashboard_expressions, documented, metric_families};
use process_support::{pauselab_version, stdout_of, Running};
use yaml_rust2::{Yaml, YamlLoader};

const JDK17: &str = "/usr/lib/jvm/java-17-openjdk-amd64";

fn yaml_documents(path: &Path) -> Vec<Yaml> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

fn strings(list: &Yaml) -> Vec<&str> {
    list.as_vec()
        .unwrap_or_else(|| panic!("not a list: {list:?}"))
        .iter()
        .map(|item| item.as_str().unwrap())
        .collect()
}

fn promtool(args: &[&str], file: &Path) -> String {
    let out = Command::new("promtool")
        .args(args)
        .arg(file)
        .current_dir(file.parent().unwrap())
        .output()
        .expect("promtool (Debian package prometheus; `make test` installs it)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "promtool {args:?} {file:?}:\n{text}");
    text
}

#[test]
fn alert_rules_pass_promtool_and_each_alert_is_tested_firing_and_silent() {
    let rules = contrib("prometheus/pauselab-alerts.yml");
    let checked = promtool(&["check", "rules"], &rules);
    promtool(
        &["test", "rules"],
        &contrib("prometheus/pauselab-alerts.test.yml"),
    );

    let rules_file = yaml_documents(&rules);
    let all_rules: Vec<&Yaml> = rules_file[0]["groups"]
        .as_vec()
        .unwrap()
        .iter()
        .flat_map(|group| group["rules"].as_vec().unwrap())
        .collect();
    let alerts: Vec<&str> = all_rules
        .iter()
        .map(|rule| rule["alert"].as_str().unwrap())
        .collect();
    assert!(
        checked.contains(&format!("SUCCESS: {} rules found", alerts.len())),
        "{checked}"
    );
    let tests = yaml_documents(&contrib("prometheus/pauselab-alerts.test.yml"));
    let evaluations: Vec<&Yaml> = tests[0]["tests"]
        .as_vec()
        .unwrap()
        .iter()
        .flat_map(|test| test["alert_rule_test"].as_vec().unwrap())
        .collect();
    // Every metric the rules read is one export documents (and so serves).
    for family in all_rules
        .iter()
        .flat_map(|rule| metric_families(rule["expr"].as_str().unwrap()))
    {
        assert!(documented(&family), "{family}: not in docs/export.md");
    }
    for alert in &alerts {
        let of_alert = || {
            evaluations
                .iter()
                .filter(|e| e["alertname"].as_str() == Some(*alert))
                .map(|e| e["exp_alerts"].as_vec().unwrap().len())
        };
        assert!(of_alert().any(|n| n > 0), "{alert}: no input that fires it");
        assert!(
            of_alert().any(|n| n == 0),
            "{alert}: no input that leaves it silent"
        );
    }
}

fn daemonset() -> Yaml {
    yaml_documents(&contrib("kubernetes/daemonset.yaml"))
        .into_iter()
        .find(|doc| doc["kind"].as_str() == Some("DaemonSet"))
        .expect("a DaemonSet in contrib/kubernetes/daemonset.yaml")
}

#[test]
fn the_daemonset_runs_read_only_in_the_host_pid_namespace_with_two_capabilities() {
    let documents = yaml_documents(&contrib("kubernetes/daemonset.yaml"));
    let kinds: Vec<&str> = documents
        .iter()
        .map(|doc| doc["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["Namespace", "ServiceAccount", "DaemonSet"]);
    let account = &documents[1];
    assert_eq!(
        account["automountServiceAccountToken"].as_bool(),
        Some(false)
    );

    let daemonset = daemonset();
    assert_eq!(daemonset["apiVersion"].as_str(), Some("apps/v1"));
    let template = &daemonset["spec"]["template"];
    assert_eq!(
        daemonset["spec"]["selector"]["matchLabels"],
        template["metadata"]["labels"]
    );
    let pod = &template["spec"];
    assert_eq!(
        pod["serviceAccountName"].as_str(),
        account["metadata"]["name"].as_str()
    );
    assert_eq!(pod["hostPID"].as_bool(), Some(true));
    assert_eq!(pod["hostNetwork"].as_bool(), Some(false));
    assert_eq!(pod["hostIPC"].as_bool(), Some(false));
    assert_eq!(pod["automountServiceAccountToken"].as_bool(), Some(false));
    assert!(
        pod["volumes"].is_badvalue(),
        "no volumes: {:?}",
        pod["volumes"]
    );
    assert_eq!(pod["securityContext"]["runAsUser"].as_i64(), Some(0));
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"].as_str(),
        Some("RuntimeDefault")
    );

    let containers = pod["containers"].as_vec().unwrap();
    assert_eq!(containers.len(), 1);
    let container = &containers[0];
    assert!(container["volumeMounts"].is_badvalue());
    let security = &container["securityContext"];
    assert_eq!(security["privileged"].as_bool(), Some(false));
    assert_eq!(security["allowPrivilegeEscalation"].as_bool(), Some(false));
    assert_eq!(security["readOnlyRootFilesystem"].as_bool(), Some(true));
    assert_eq!(strings(&security["capabilities"]["drop"]), ["ALL"]);
    assert_eq!(
        strings(&security["capabilities"]["add"]),
        ["SYS_PTRACE", "DAC_READ_SEARCH"]
    );

    // The command line is one the binary accepts, and serves on the declared port,
    // which the probes and the scrape annotation use.
    assert_eq!(strings(&container["command"]), ["/usr/bin/pauselab"]);
    let args = strings(&container["args"]);
    assert_eq!(args, ["export", "--listen", "0.0.0.0:9404"]);
    let once = stdout_of(
        Command::new(env!("CARGO_BIN_EXE_pauselab"))
            .args(&args)
            .arg("--once"),
    );
    assert!(once.contains("pauselab_export_scrapes_total"));
    let port = &container["ports"][0];
    assert_eq!(port["containerPort"].as_i64(), Some(9404));
    assert_eq!(
        template["metadata"]["annotations"]["prometheus.io/port"].as_str(),
        Some("9404")
    );
    for probe in ["livenessProbe", "readinessProbe"] {
        assert_eq!(
            container[probe]["httpGet"]["path"].as_str(),
            Some("/healthz")
        );
        assert_eq!(
            container[probe]["httpGet"]["port"].as_str(),
            port["name"].as_str()
        );
    }
    assert!(container["resources"]["limits"]["memory"]
        .as_str()
        .is_some());
}

/// A program that sleeps for two minutes, in a directory of its own readable by `nobody`.
fn sleep_source() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let source = dir.path().join("Sleep.java");
    std::fs::write(
        &source,
        "public class Sleep { public static void main(String[] a) throws Exception { Thread.sleep(120_000); } }",
    )
    .unwrap();
    (dir, source)
}

/// A JVM of user `nobody` that sleeps (run from source: no class file to share with it).
fn jvm_of_nobody(source: &Path, flags: &[&str]) -> Running {
    let child = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(format!("{JDK17}/bin/java"))
        .args(["-Xmx32m", "-XX:TieredStopAtLevel=1"])
        .args(flags)
        .arg(source)
        .stdin(Stdio::null())
        .spawn()
        .expect("setpriv and JDK 17");
    Running(child)
}

/// One scrape by an exporter running as user 0 with only `capabilities` (setpriv names).
fn scrape_with_capabilities(capabilities: &[String]) -> String {
    let bounding: String = std::iter::once("-all".to_string())
        .chain(capabilities.iter().map(|c| format!("+{c}")))
        .collect::<Vec<_>>()
        .join(",");
    stdout_of(
        Command::new("setpriv")
            .args(["--inh-caps=-all", "--ambient-caps=-all"])
            .arg(format!("--bounding-set={bounding}"))
            .arg("--")
            .arg(env!("CARGO_BIN_EXE_pauselab"))
            .args(["export", "--once"]),
    )
}

/// The `source` label of a JVM's info line, if it was read.
fn source_of(metrics: &str, pid: u32) -> Option<String> {
    let prefix = format!("hotspot_jvm_info{{pid=\"{pid}\"");
    let line = metrics.lines().find(|l| l.starts_with(&prefix))?;
    let value = line.split("source=\"").nth(1)?;
    Some(value.split('"').next()?.to_string())
}

fn unreadable_for_permission(metrics: &str, pid: u32) -> bool {
    metrics.contains(&format!(
        "pauselab_export_unreadable_jvm{{pid=\"{pid}\",reason=\"permission\"}} 1"
    ))
}

#[test]
fn the_daemonsets_capabilities_read_other_users_jvms_and_each_one_is_needed() {
    let security = &daemonset()["spec"]["template"]["spec"]["containers"][0]["securityContext"];
    let capabilities: Vec<String> = strings(&security["capabilities"]["add"])
        .iter()
        .map(|c| c.to_lowercase())
        .collect();

    let (_dir, source) = sleep_source();
    let file_jvm = jvm_of_nobody(&source, &[]);
    let memory_jvm = jvm_of_nobody(&source, &["-XX:+PerfDisableSharedMem"]);
    let (file_pid, memory_pid) = (file_jvm.0.id(), memory_jvm.0.id());

    // With the manifest's two: both JVMs, each by its own route.
    let deadline = Instant::now() + Duration::from_secs(30);
    let granted = loop {
        let metrics = scrape_with_capabilities(&capabilities);
        if source_of(&metrics, file_pid).is_some() && source_of(&metrics, memory_pid).is_some() {
            break metrics;
        }
        assert!(Instant::now() < deadline, "JVMs never read:\n{metrics}");
        std::thread::sleep(Duration::from_millis(300));
    };
    assert_eq!(source_of(&granted, file_pid).as_deref(), Some("file"));
    assert_eq!(source_of(&granted, memory_pid).as_deref(), Some("memory"));

    for missing in &capabilities {
        let fewer: Vec<String> = capabilities
            .iter()
            .filter(|c| *c != missing)
            .cloned()
            .collect();
        let metrics = scrape_with_capabilities(&fewer);
        match missing.as_str() {
            // The perf data file (mode 0600) stays closed: at best read from memory.
            "dac_read_search" => assert_ne!(
                source_of(&metrics, file_pid).as_deref(),
                Some("file"),
                "{metrics}"
            ),
            // The memory of another user's JVM stays closed.
            "sys_ptrace" => assert!(unreadable_for_permission(&metrics, memory_pid), "{metrics}"),
            other => panic!("capability {other} in the manifest has no test of why"),
        }
    }
}

#[test]
fn the_dashboard_is_laid_out_and_every_query_is_valid_promql() {
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(contrib("grafana/pauselab.json")).unwrap())
            .unwrap();
    let panels = dashboard["panels"].as_array().unwrap();
    let mut ids: Vec<u64> = panels.iter().map(|p| p["id"].as_u64().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), panels.len(), "panel ids are not unique");
    // No two panels overlap on Grafana's 24-column grid.
    let boxes: Vec<(&str, [u64; 4])> = panels
        .iter()
        .map(|p| {
            let g = &p["gridPos"];
            let [x, y, w, h] = ["x", "y", "w", "h"].map(|k| g[k].as_u64().unwrap());
            assert!(x + w <= 24, "{} is wider than the grid", p["title"]);
            (p["title"].as_str().unwrap(), [x, y, w, h])
        })
        .collect();
    for (i, (a, [ax, ay, aw, ah])) in boxes.iter().enumerate() {
        for (b, [bx, by, bw, bh]) in &boxes[i + 1..] {
            let apart = ax + aw <= *bx || bx + bw <= *ax || ay + ah <= *by || by + bh <= *ay;
            assert!(apart, "panels {a:?} and {b:?} overlap");
        }
    }
    for panel in panels.iter().filter(|p| p["type"] != "row") {
        assert!(
            !panel["targets"].as_array().unwrap().is_empty(),
            "{}",
            panel["title"]
        );
        assert_eq!(panel["datasource"]["uid"], "${datasource}");
    }

    // promtool parses every expression as the expression of a recording rule.
    let expressions = dashboard_expressions();
    let rules = serde_json::json!({"groups": [{"name": "dashboard", "rules": expressions
        .iter()
        .enumerate()
        .map(|(i, (_, expr))| serde_json::json!({"record": format!("dashboard:expression_{i}"), "expr": expr}))
        .collect::<Vec<_>>()}]});
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dashboard-rules.json");
    std::fs::write(&file, rules.to_string()).unwrap();
    let checked = promtool(&["check", "rules"], &file);
    assert!(
        checked.contains(&format!("SUCCESS: {} rules found", expressions.len())),
        "{checked}"
    );
}

const JDK25: &str = "/usr/lib/jvm/temurin-25-jdk-amd64";

/// Stops the world a few times a second: allocates a little, then System.gc().
const SAFEPOINTS: &str = r#"
public class Safepoints {
    public static void main(String[] args) throws Exception {
        long end = System.nanoTime() + Long.parseLong(args[0]) * 1_000_000_000L;
        byte[][] keep = new byte[64][];
        for (int i = 0; System.nanoTime() < end; ) {
            for (int k = 0; k < 256; k++) keep[(i++) & 63] = new byte[4096];
            System.gc();
            Thread.sleep(100);
        }
    }
}
"#;

/// Allocates 1 MiB arrays as fast as it can while keeping `args[1]` of them live: with
/// ZGC and -Xmx64m, threads stall waiting for memory many times a second.
const ALLOCATION_STALLS: &str = r#"
public class Stalls {
    public static void main(String[] args) {
        long end = System.nanoTime() + Long.parseLong(args[0]) * 1_000_000_000L;
        byte[][] live = new byte[Integer.parseInt(args[1])][];
        for (int i = 0; System.nanoTime() < end; i++) live[i % live.length] = new byte[1 << 20];
    }
}
"#;

/// A JVM running one of the workloads above from its source file.
fn workload_jvm(jdk: &str, source: &Path, flags: &[String], args: &[&str]) -> Running {
    let child = Command::new(format!("{jdk}/bin/java"))
        .args(flags)
        .arg(source)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{jdk}/bin/java: {e}"));
    Running(child)
}

/// A loopback port nobody listens on (for the moment).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// `pauselab export` on a free loopback port, once it answers; returns it with its address.
fn exporter() -> (Running, String) {
    let addr = format!("127.0.0.1:{}", free_port());
    let exporter = Running(
        Command::new(env!("CARGO_BIN_EXE_pauselab"))
            .args(["export", "--listen", &addr])
            .stdin(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let healthz = format!("http://{addr}/healthz");
    while !Command::new("curl")
        .args(["-sf", "-o", "/dev/null", &healthz])
        .status()
        .unwrap()
        .success()
    {
        assert!(
            Instant::now() < deadline,
            "exporter never answered on {addr}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (exporter, addr)
}

/// A Prometheus server scraping `target` every second, storing into `dir`, once its API
/// answers; returns it with the address of its API. A port another test took between
/// `free_port` and Prometheus's bind makes Prometheus exit: it starts again on another.
fn prometheus(dir: &Path, target: &str) -> (Running, String) {
    let config = dir.join("prometheus.yml");
    let scrape = format!(
        "global: {{scrape_interval: 1s, scrape_timeout: 1s}}\n\
         scrape_configs: [{{job_name: jvms, static_configs: [{{targets: ['{target}']}}]}}]\n"
    );
    std::fs::write(&config, scrape).unwrap();
    for _attempt in 0..5 {
        let addr = format!("127.0.0.1:{}", free_port());
        let mut server = Running(
            Command::new("prometheus")
                .arg(format!("--config.file={}", config.display()))
                .arg(format!(
                    "--storage.tsdb.path={}",
                    dir.join("tsdb").display()
                ))
                .arg(format!("--web.listen-address={addr}"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("prometheus (Debian package prometheus; `make test` installs it)"),
        );
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if server.0.try_wait().unwrap().is_some() {
                break;
            }
            let ready = Command::new("curl")
                .args(["-sf", "-o", "/dev/null", &format!("http://{addr}/-/ready")])
                .status()
                .unwrap();
            if ready.success() {
                return (server, addr);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    panic!("prometheus did not answer on any of 5 ports within 60 s each");
}

/// The finite values of an instant query's samples: a percentile over no pauses is NaN,
/// which a panel shows as nothing.
fn finite_values(prometheus: &str, query: &str) -> Vec<f64> {
    let body = stdout_of(
        Command::new("curl")
            .args(["-sfG", &format!("http://{prometheus}/api/v1/query")])
            .arg("--data-urlencode")
            .arg(format!("query={query}")),
    );
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    json["data"]["result"]
        .as_array()
        .unwrap_or_else(|| panic!("{query}: {json}"))
        .iter()
        .map(|sample| sample["value"][1].as_str().unwrap().parse::<f64>().unwrap())
        .filter(|value| value.is_finite())
        .collect()
}

#[test]
fn every_dashboard_query_returns_data_from_prometheus_scraping_real_jvms() {
    let dir = tempfile::tempdir().unwrap();
    let source = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let safepoints = source("Safepoints.java", SAFEPOINTS);
    let stalls = source("Stalls.java", ALLOCATION_STALLS);
    let g1_log = dir.path().join("g1.log");
    let zgc_log = dir.path().join("zgc.log");
    // G1 on JDK 17 logging GC and safepoints: pauses with causes, safepoints, time to
    // safepoint. ZGC on JDK 25 without a perf data file: allocation stalls. A JVM without
    // perf data: unreadable.
    let g1 = workload_jvm(
        JDK17,
        &safepoints,
        &[
            "-Xmx32m".into(),
            format!("-Xlog:gc,safepoint:file={}", g1_log.display()),
        ],
        &["90"],
    );
    let zgc = workload_jvm(
        JDK25,
        &stalls,
        &[
            "-XX:+UseZGC".into(),
            "-Xmx64m".into(),
            "-XX:+PerfDisableSharedMem".into(),
            format!("-Xlog:gc:file={}", zgc_log.display()),
        ],
        &["90", "16"],
    );
    let unreadable = workload_jvm(JDK17, &safepoints, &["-XX:-UsePerfData".into()], &["90"]);
    let (_exporter, exporter_addr) = exporter();
    // Only Prometheus scrapes the exporter from here on: hotspot_pause_max_seconds is the
    // longest pause since the previous scrape, whoever made it.
    let (_prometheus, prometheus_addr) = prometheus(dir.path(), &exporter_addr);

    // Other JVMs of this host are exported too: every query is narrowed to these three,
    // as the dashboard's pid variable would.
    let pids = [&g1, &zgc, &unreadable].map(|jvm| jvm.0.id().to_string());
    let of_pids = |pids: &[&str], expr: &str| {
        expr.replace("pid=~\".*\"", &format!("pid=~\"{}\"", pids.join("|")))
    };
    let expressions: Vec<(String, String)> = dashboard_expressions()
        .into_iter()
        .map(|(panel, expr)| {
            let narrowed = of_pids(&pids.each_ref().map(String::as_str), &expr);
            (panel, narrowed)
        })
        .collect();
    let (mut waiting, not_exported): (Vec<_>, Vec<_>) = expressions
        .iter()
        .cloned()
        .partition(|(_, expr)| metric_families(expr).iter().all(|f| documented(f)));
    assert!(
        not_exported.is_empty(),
        "dashboard queries of metrics docs/export.md does not list: {not_exported:#?}"
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while !waiting.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_secs(1));
        waiting.retain(|(_, expr)| finite_values(&prometheus_addr, expr).is_empty());
    }
    assert!(
        waiting.is_empty(),
        "dashboard queries without data after 60 s: {waiting:#?}"
    );

    // The percentiles shown lie within the bucket of the longest pause the JVMs' own logs
    // have (read after the queries: the logs only grow).
    let shown = |title: &str, pid: &str| -> Vec<f64> {
        dashboard_expressions()
            .iter()
            .filter(|(panel, _)| panel == title)
            .flat_map(|(_, expr)| finite_values(&prometheus_addr, &of_pids(&[pid], expr)))
            .collect()
    };
    for (percentiles, log, marker) in [
        (
            shown("GC pause p50 / p99 / p99.9", &pids[0]),
            &g1_log,
            " Pause ",
        ),
        (
            shown("Allocation stall p99", &pids[1]),
            &zgc_log,
            "Allocation Stall (",
        ),
    ] {
        let longest = longest_in_log(log, marker);
        assert!(longest > 0.0, "no {marker:?} line in {log:?}");
        assert!(!percentiles.is_empty(), "no percentile of {log:?}'s JVM");
        assert!(
            percentiles
                .iter()
                .all(|&p| p > 0.0 && p <= bucket_upper_bound(longest)),
            "{percentiles:?} beyond the bucket of the longest {marker:?} in {log:?} ({longest} s)"
        );
    }
}

/// The longest duration, in seconds, of the lines of `log` that contain `marker`, read
/// from the file itself: `... Pause Full (System.gc()) 3M->1M(32M) 12.345ms`,
/// `... Allocation Stall (main) 13.617ms`.
fn longest_in_log(log: &Path, marker: &str) -> f64 {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter(|line| line.contains(marker))
        .filter_map(|line| {
            line.rsplit(' ')
                .next()?
                .strip_suffix("ms")?
                .parse::<f64>()
                .ok()
        })
        .fold(0.0, f64::max)
        / 1000.0
}

/// The upper bound of the export histograms' bucket that holds `seconds` (docs/export.md).
fn bucket_upper_bound(seconds: f64) -> f64 {
    const BUCKETS: [f64; 18] = [
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
        5.0, 10.0, 30.0, 60.0,
    ];
    BUCKETS
        .into_iter()
        .find(|&bound| seconds <= bound)
        .unwrap_or(f64::INFINITY)
}

/// podman as root with its storage, state and temporary files in `dir`: nothing is left in
/// the host's container storage.
fn podman(dir: &Path) -> Command {
    let mut podman = Command::new("podman");
    for (flag, sub) in [
        ("--root", "root"),
        ("--runroot", "run"),
        ("--tmpdir", "tmp"),
    ] {
        podman.arg(flag).arg(dir.join(sub));
    }
    podman.args([
        // Plain directories: no overlay mounts to leave behind.
        "--storage-driver=vfs",
        // No systemd to ask for cgroups on a test host.
        "--cgroup-manager=cgroupfs",
        // crun 1.8 (Debian 12) refuses hosts with a hybrid cgroup v1 + v2 layout, as this
        // one: "cgroups in hybrid mode not supported".
        "--runtime=runc",
        "--events-backend=none",
    ]);
    podman
}

/// An OCI archive's only image: its tag, its config and the paths in its layers.
fn image_contents(archive: &Path) -> (Option<String>, serde_json::Value, Vec<String>) {
    let layout = tempfile::tempdir().unwrap();
    stdout_of(
        Command::new("tar")
            .arg("-xf")
            .arg(archive)
            .arg("-C")
            .arg(layout.path()),
    );
    let blob = |digest: &serde_json::Value| {
        let hex = digest.as_str().unwrap().strip_prefix("sha256:").unwrap();
        layout.path().join("blobs/sha256").join(hex)
    };
    let json = |path: PathBuf| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let index = json(layout.path().join("index.json"));
    let manifests = index["manifests"].as_array().unwrap();
    assert_eq!(manifests.len(), 1, "{index}");
    let manifest = json(blob(&manifests[0]["digest"]));
    let config = json(blob(&manifest["config"]["digest"]));
    let mut paths = Vec::new();
    for layer in manifest["layers"].as_array().unwrap() {
        let listing = stdout_of(Command::new("tar").arg("-tzf").arg(blob(&layer["digest"])));
        paths.extend(
            listing
                .lines()
                .map(|l| l.strip_prefix("./").unwrap_or(l).to_string())
                .filter(|p| !p.is_empty()),
        );
    }
    let reference = manifests[0]["annotations"]["org.opencontainers.image.ref.name"]
        .as_str()
        .map(str::to_string);
    (reference, config, paths)
}

#[test]
#[ignore = "needs `make image`; run by `make dist-test`"]
fn the_image_runs_the_daemonsets_command_under_podman_and_reads_a_jvm_of_the_host() {
    let archive = contrib(&format!(
        "../target/image/pauselab-{}.oci.tar",
        pauselab_version()
    ));
    assert!(
        archive.exists(),
        "{archive:?} missing: run `make dist-test`"
    );
    let container = &daemonset()["spec"]["template"]["spec"]["containers"][0];

    // The binary and the libraries it loads, nothing else; started as the DaemonSet says.
    let (reference, config, paths) = image_contents(&archive);
    let files: Vec<&String> = paths.iter().filter(|p| !p.ends_with('/')).collect();
    assert!(files.iter().any(|f| *f == "usr/bin/pauselab"), "{files:?}");
    assert!(files.iter().any(|f| f.contains("libc.so.6")), "{files:?}");
    for file in &files {
        assert!(
            *file == "usr/bin/pauselab" || file.contains(".so"),
            "{file} in the image: only the binary and its libraries belong there"
        );
    }
    // The image the DaemonSet names is the one built: pauselab:<version>.
    let image = container["image"].as_str().unwrap();
    assert_eq!(image, format!("pauselab:{}", pauselab_version()));
    assert_eq!(Some(image.split(':').nth(1).unwrap()), reference.as_deref());
    let process = &config["config"];
    assert_eq!(
        strings_of_json(&process["Entrypoint"]),
        strings(&container["command"])
    );
    assert_eq!(
        strings_of_json(&process["Cmd"]),
        strings(&container["args"])
    );
    let port = container["ports"][0]["containerPort"].as_i64().unwrap();
    assert!(
        process["ExposedPorts"].get(format!("{port}/tcp")).is_some(),
        "{process}"
    );

    let (dir, source) = sleep_source();
    let jvm = jvm_of_nobody(&source, &[]);
    let pid = jvm.0.id();

    // The DaemonSet's pod: host PID namespace, user 0 with only its two capabilities, a
    // read-only root, no privilege escalation.
    let security = &container["securityContext"];
    let capabilities = strings(&security["capabilities"]["add"]).join(",");
    let storage = dir.path().join("podman");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let metrics = stdout_of(
            podman(&storage)
                .args(["run", "--rm", "--network=none", "--pid=host", "--user=0:0"])
                .args(["--cap-drop=all", &format!("--cap-add={capabilities}")])
                // Nothing writable at all: podman's default tmpfs on /tmp, /run and
                // /var/tmp of a read-only container is not in the DaemonSet's pod.
                .args(["--read-only", "--read-only-tmpfs=false"])
                .arg("--security-opt=no-new-privileges")
                // podman's default limits (2^20 files, 2^22 processes) are above what this
                // host lets root raise its limits to without CAP_SYS_RESOURCE; these are the
                // systemd unit's file limit and a process limit no scrape comes near.
                .args(["--ulimit=nofile=8192:8192", "--ulimit=nproc=32768:32768"])
                .arg(format!("oci-archive:{}", archive.display()))
                .args(strings(&container["args"]))
                .arg("--once"),
        );
        match source_of(&metrics, pid) {
            Some(source) => {
                // Its perf data file, opened with DAC_READ_SEARCH through /proc/<pid>/root.
                assert_eq!(source, "file", "{metrics}");
                break;
            }
            None => assert!(
                Instant::now() < deadline,
                "JVM {pid} never read:\n{metrics}"
            ),
        }
    }
}

fn strings_of_json(list: &serde_json::Value) -> Vec<&str> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect()
}
