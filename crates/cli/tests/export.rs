//! `pauselab export` against real JVMs (JDK 17 and 25), a real Prometheus server and
//! `promtool` (Debian's `prometheus` package, installed by `make test`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const JDK17: &str = "/usr/lib/jvm/java-17-openjdk-amd64";
const JDK25: &str = "/usr/lib/jvm/temurin-25-jdk-amd64";

/// Allocates and asks for a GC every 100 ms, so safepoints keep happening; exits on its own
/// after the given seconds in case the test process dies before it can kill it.
const WORKLOAD: &str = r#"
public class Safepoints {
    public static void main(String[] args) throws Exception {
        long end = System.nanoTime() + Long.parseLong(args[0]) * 1_000_000_000L;
        byte[][] keep = new byte[64][];
        int i = 0;
        while (System.nanoTime() < end) {
            for (int k = 0; k < 256; k++) keep[(i++) & 63] = new byte[4096];
            System.gc();
            Thread.sleep(100);
        }
    }
}
"#;

/// A scratch directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let dir = std::env::temp_dir().join(format!(
            "pauselab-test-{name}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A child process killed when dropped, also when the test fails.
struct Running(Child);

impl Running {
    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Compiles the workload into `dir` once.
fn compile_workload(dir: &Path) {
    std::fs::write(dir.join("Safepoints.java"), WORKLOAD).unwrap();
    let status = Command::new(format!("{JDK17}/bin/javac"))
        .args(["-d"])
        .arg(dir)
        .arg(dir.join("Safepoints.java"))
        .status()
        .expect("javac of JDK 17");
    assert!(status.success(), "javac failed");
}

fn start_jvm(jdk: &str, classes: &Path, flags: &[&str]) -> Running {
    let child = Command::new(format!("{jdk}/bin/java"))
        .args(["-Xmx32m", "-Xss256k", "-XX:TieredStopAtLevel=1"])
        .args(flags)
        .arg("-cp")
        .arg(classes)
        .args(["Safepoints", "90"])
        .stdin(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {jdk}/bin/java: {e}"));
    Running(child)
}

/// Starts `pauselab export` on a free loopback port and returns it with its address.
fn start_exporter(extra: &[&str]) -> (Running, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .args(["export", "--listen", "127.0.0.1:0"])
        .args(extra)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("pauselab export: serving http://")
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("unexpected first line from the exporter: {line:?}"))
        .parse()
        .unwrap();
    (Running(child), addr)
}

struct HttpResponse {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    body_bytes: Vec<u8>,
}

impl HttpResponse {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A minimal HTTP/1.0 client: enough for the exporter and Prometheus' API.
fn http(addr: SocketAddr, method: &str, target: &str, headers: &[(&str, &str)]) -> HttpResponse {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut request = format!("{method} {target} HTTP/1.0\r\nHost: {addr}\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("HTTP header end");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let body_bytes = raw[split + 4..].to_vec();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    HttpResponse {
        status,
        headers,
        body: String::from_utf8_lossy(&body_bytes).into_owned(),
        body_bytes,
    }
}

fn get(addr: SocketAddr, target: &str) -> HttpResponse {
    http(addr, "GET", target, &[])
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Waits until the exporter lists `pid` with readable counters.
fn wait_until_exported(exporter: SocketAddr, pid: u32) {
    let needle = format!("hotspot_safepoints_total{{pid=\"{pid}\"}}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if get(exporter, "/metrics").body.contains(&needle) {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("pid {pid} never appeared in /metrics");
}

fn promtool_check(metrics: &str) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian package prometheus; `make test` installs it)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(metrics.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Values of `hotspot_safepoints_total` per pid over the last `window`, from Prometheus.
fn safepoint_series(prometheus: SocketAddr, pids: &[u32], window: u64) -> Vec<(u32, Vec<f64>)> {
    let query = format!(
        "hotspot_safepoints_total{{pid=~\"{}\"}}",
        pids.iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join("|")
    );
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let target = format!(
        "/api/v1/query_range?query={}&start={}&end={}&step=1",
        url_encode(&query),
        now - window,
        now
    );
    let response = get(prometheus, &target);
    assert_eq!(response.status, 200, "{}", response.body);
    let json: serde_json::Value = serde_json::from_str(&response.body).unwrap();
    assert_eq!(json["status"], "success", "{json}");
    json["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|series| {
            let pid = series["metric"]["pid"].as_str().unwrap().parse().unwrap();
            let values = series["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v[1].as_str().unwrap().parse().unwrap())
                .collect();
            (pid, values)
        })
        .collect()
}

#[test]
fn prometheus_scrapes_rising_safepoint_counters_of_a_shared_and_a_memory_only_jvm() {
    let dir = TempDir::new("export-prometheus");
    compile_workload(&dir.0);
    let shared = start_jvm(JDK17, &dir.0, &[]);
    let memory_only = start_jvm(JDK25, &dir.0, &["-XX:+PerfDisableSharedMem"]);
    let (_exporter, exporter_addr) = start_exporter(&[]);

    let prometheus_addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let config = dir.0.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
             scrape_configs:\n  - job_name: pauselab\n    static_configs:\n      - targets: ['{exporter_addr}']\n"
        ),
    )
    .unwrap();
    let _prometheus = Running(
        Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.0.join("data").display()
            ))
            .arg(format!("--web.listen-address={prometheus_addr}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus (Debian package prometheus; `make test` installs it)"),
    );

    wait_until_exported(exporter_addr, shared.pid());
    wait_until_exported(exporter_addr, memory_only.pid());

    // Every scrape the exporter serves must be valid for promtool, plain and with every
    // counter of both JDKs.
    let metrics = get(exporter_addr, "/metrics");
    assert_eq!(
        metrics.header("Content-Type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    promtool_check(&metrics.body);
    let info_memory = format!("pid=\"{}\"", memory_only.pid());
    assert!(
        metrics
            .body
            .lines()
            .any(|l| l.starts_with("hotspot_jvm_info{")
                && l.contains(&info_memory)
                && l.contains("source=\"memory\"")
                && l.contains("jdk_version=\"25")
                && l.contains("main_class=\"Safepoints\"")),
        "no memory-route info line for the PerfDisableSharedMem JVM:\n{}",
        metrics.body
    );
    let all = Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .args(["export", "--once", "--all-counters"])
        .output()
        .unwrap();
    assert!(all.status.success());
    let all = String::from_utf8(all.stdout).unwrap();
    assert!(all.contains("hsperf_sun_rt_safepoints_total{"), "{all}");
    promtool_check(&all);

    // Asked for memory only, the JVM that shares a file is read from its memory too.
    let memory = scrape_once(false, &["--source", "memory"]);
    let shared_info = format!("hotspot_jvm_info{{pid=\"{}\"", shared.pid());
    assert!(
        memory
            .lines()
            .any(|l| l.starts_with(&shared_info) && l.contains("source=\"memory\"")),
        "{memory}"
    );

    // Prometheus must have stored rising safepoint counts for both JVMs.
    let pids = [shared.pid(), memory_only.pid()];
    let deadline = Instant::now() + Duration::from_secs(30);
    let rising = |series: &[(u32, Vec<f64>)], pid: u32| {
        series
            .iter()
            .any(|(p, values)| *p == pid && values.len() >= 3 && values.last() > values.first())
    };
    let mut series = Vec::new();
    while Instant::now() < deadline {
        series = safepoint_series(prometheus_addr, &pids, 20);
        if pids.iter().all(|&pid| rising(&series, pid)) {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    for pid in pids {
        assert!(
            rising(&series, pid),
            "no rising hotspot_safepoints_total for pid {pid} in Prometheus: {series:?}"
        );
    }

    // A JVM that is gone leaves no series behind in the next scrape.
    let gone = shared.pid();
    drop(shared);
    let after = get(exporter_addr, "/metrics").body;
    assert!(
        !after.contains(&format!("pid=\"{gone}\"")),
        "series of exited pid {gone} still exported:\n{after}"
    );
    assert!(after.contains(&info_memory));
}

#[test]
fn endpoints_negotiate_the_format_and_stay_read_only() {
    let (_exporter, addr) = start_exporter(&[]);

    let health = get(addr, "/healthz");
    assert_eq!((health.status, health.body.as_str()), (200, "ok\n"));
    let index = get(addr, "/");
    assert_eq!(index.status, 200);
    assert!(index.body.contains("href=\"/metrics\""));
    assert_eq!(get(addr, "/nothing-here").status, 404);
    let post = http(addr, "POST", "/metrics", &[]);
    assert_eq!(post.status, 405);
    assert_eq!(post.header("Allow"), Some("GET, HEAD"));

    let text = get(addr, "/metrics");
    assert_eq!(text.status, 200);
    assert!(text
        .body
        .contains("# TYPE pauselab_export_scrapes_total counter\n"));
    assert!(!text.body.contains("# EOF"));

    // What Prometheus 2.x sends.
    let accept = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    let openmetrics = http(addr, "GET", "/metrics", &[("Accept", accept)]);
    assert_eq!(
        openmetrics.header("Content-Type"),
        Some("application/openmetrics-text; version=1.0.0; charset=utf-8")
    );
    assert!(openmetrics.body.ends_with("# EOF\n"));
    assert!(openmetrics
        .body
        .contains("# TYPE pauselab_export_scrapes counter\n"));
    // Each scrape is counted: this is the second.
    assert!(
        openmetrics
            .body
            .contains("pauselab_export_scrapes_total 2\n"),
        "{}",
        openmetrics.body
    );

    // gzip when asked for (Prometheus always asks), plain otherwise.
    let gzipped = http(addr, "GET", "/metrics", &[("Accept-Encoding", "gzip")]);
    assert_eq!(gzipped.header("Content-Encoding"), Some("gzip"));
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gzipped.body_bytes[..])
        .read_to_string(&mut text)
        .unwrap();
    assert!(text.contains("pauselab_export_scrapes_total 3\n"), "{text}");
    let refused = http(addr, "GET", "/metrics", &[("Accept-Encoding", "gzip;q=0")]);
    assert_eq!(refused.header("Content-Encoding"), None);
    assert!(refused.body.contains("pauselab_export_scrapes_total 4\n"));
}

/// One `--once` scrape, as root or as user `nobody`.
fn scrape_once(as_nobody: bool, extra: &[&str]) -> String {
    let mut command = if as_nobody {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_pauselab"));
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_pauselab"))
    };
    let out = command
        .args(["export", "--once"])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pauselab export --once failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The value of the sample whose line starts with `series` (name and labels).
fn sample(metrics: &str, series: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// Scrapes until `series` has a value (a JVM needs a moment to map libjvm.so).
fn scrape_until(as_nobody: bool, extra: &[&str], series: &str) -> (String, f64) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let metrics = scrape_once(as_nobody, extra);
        if let Some(value) = sample(&metrics, series) {
            return (metrics, value);
        }
        assert!(Instant::now() < deadline, "no {series} in:\n{metrics}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn unreadable_jvms_are_reported_with_a_reason() {
    let dir = TempDir::new("export-unreadable");
    compile_workload(&dir.0);
    let no_perf_data = start_jvm(JDK17, &dir.0, &["-XX:-UsePerfData"]);
    let root_jvm = start_jvm(JDK17, &dir.0, &[]);
    let memory_only = start_jvm(JDK17, &dir.0, &["-XX:+PerfDisableSharedMem"]);

    let series = format!(
        "pauselab_export_unreadable_jvm{{pid=\"{}\",reason=\"perf_data_disabled\"}}",
        no_perf_data.pid()
    );
    let (metrics, value) = scrape_until(false, &[], &series);
    assert_eq!(value, 1.0);
    let errors = sample(
        &metrics,
        "pauselab_export_read_errors_total{reason=\"perf_data_disabled\"}",
    );
    assert!(errors >= Some(1.0), "{metrics}");

    // Asked for files only, a JVM without a perf data file is reported, not skipped.
    let series = format!(
        "pauselab_export_unreadable_jvm{{pid=\"{}\",reason=\"no_file\"}}",
        memory_only.pid()
    );
    let (_, value) = scrape_until(false, &["--source", "file"], &series);
    assert_eq!(value, 1.0);

    // An unprivileged exporter cannot read root's JVMs: it says so instead of hiding them.
    let series = format!(
        "pauselab_export_unreadable_jvm{{pid=\"{}\",reason=\"permission\"}}",
        root_jvm.pid()
    );
    let (metrics, value) = scrape_until(true, &[], &series);
    assert_eq!(value, 1.0);
    assert!(!metrics.contains(&format!("hotspot_jvm_info{{pid=\"{}\"", root_jvm.pid())));
}
