//! The deployment files of contrib/: the Prometheus alert rules through promtool (Debian's
//! `prometheus` package; `make test` installs it), the Kubernetes DaemonSet's structure, and
//! its capability set against real JVMs of another user.

mod contrib_support;
mod process_support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use contrib_support::{contrib, dashboard_expressions};
use process_support::{stdout_of, Running};
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

    let alerts: Vec<String> = yaml_documents(&rules)[0]["groups"]
        .as_vec()
        .unwrap()
        .iter()
        .flat_map(|group| group["rules"].as_vec().unwrap())
        .map(|rule| rule["alert"].as_str().unwrap().to_string())
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
    for alert in &alerts {
        let of_alert = || {
            evaluations
                .iter()
                .filter(|e| e["alertname"].as_str() == Some(alert.as_str()))
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

    let dir = tempfile::tempdir().unwrap();
    // Readable by the JVMs' user.
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let source = dir.path().join("Sleep.java");
    std::fs::write(
        &source,
        "public class Sleep { public static void main(String[] a) throws Exception { Thread.sleep(60_000); } }",
    )
    .unwrap();
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
