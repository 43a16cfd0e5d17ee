//! `pauselab export` against real JVMs (JDK 17 and 25), a real Prometheus server and
//! `promtool` (Debian's `prometheus` package, installed by `make test`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::process_support;
use process_support::{as_nobody, fake_build, stdout_of, NOBODY};

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
    start_jvm_in(jdk, Path::new("."), classes, flags)
}

/// Starts `pauselab export` on a free loopback port and returns it with its address.
fn start_exporter(extra: &[&str]) -> (Running, SocketAddr) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pauselab"));
    command
        .args(["export", "--listen", "127.0.0.1:0"])
        .args(extra);
    let (exporter, addr, _) = start_listening(command);
    (exporter, addr)
}

/// Starts `pauselab export` with at most `limit` open files, as systemd's default
/// LimitNOFILE=1024 (soft) would; also returns the rest of its standard error.
fn start_exporter_with_open_files(limit: u64) -> (Running, SocketAddr, BufReader<ChildStderr>) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pauselab"));
    command.args(["export", "--listen", "127.0.0.1:0"]);
    // Only 0, 1 and 2 stay open: a descriptor the test process inherited (a CI runner's,
    // GNU time's -o file) would take a place the limit leaves.
    // SAFETY: close_range and setrlimit are async-signal-safe; nothing else runs between
    // fork and exec.
    unsafe {
        command.pre_exec(move || {
            libc::close_range(3, libc::c_uint::MAX, 0);
            set_open_files_limit(limit)
        });
    }
    start_listening(command)
}

fn set_open_files_limit(limit: u64) -> std::io::Result<()> {
    let rlimit = libc::rlimit {
        rlim_cur: limit,
        rlim_max: limit,
    };
    // SAFETY: a plain system call on a valid struct.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &rlimit) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Spawns an exporter command and waits for the address it serves on.
fn start_listening(command: Command) -> (Running, SocketAddr, BufReader<ChildStderr>) {
    try_start_listening(command)
        .unwrap_or_else(|line| panic!("unexpected first line from the exporter: {line:?}"))
}

/// Like [`start_listening`]; an exporter that does not start serving gives its standard
/// error and exit status instead.
fn try_start_listening(
    mut command: Command,
) -> Result<(Running, SocketAddr, BufReader<ChildStderr>), String> {
    let mut child = command
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    // `serving http://ADDR/metrics`, or with --web.config.file
    // `serving https://ADDR/metrics (TLS, basic auth)`.
    let addr = line
        .trim()
        .strip_prefix("pauselab export: serving ")
        .and_then(|rest| rest.split_once("://"))
        .and_then(|(_, rest)| rest.split_once("/metrics"))
        .map(|(addr, _)| addr);
    match addr {
        Some(addr) => Ok((Running(child), addr.parse().unwrap(), stderr)),
        None => {
            stderr.read_to_string(&mut line).unwrap();
            Err(format!("{}\n{line}", child.wait().unwrap()))
        }
    }
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

/// Starts a Prometheus scraping `exporter` every second, its data under `dir`.
fn start_prometheus(dir: &Path, exporter: SocketAddr) -> (Running, SocketAddr) {
    let prometheus_addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
             scrape_configs:\n  - job_name: pauselab\n    static_configs:\n      - targets: ['{exporter}']\n"
        ),
    )
    .unwrap();
    let prometheus = Running(
        Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={prometheus_addr}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus (Debian package prometheus; `make test` installs it)"),
    );
    (prometheus, prometheus_addr)
}

/// The result of an instant PromQL query: one value per series, with its labels.
fn promql(prometheus: SocketAddr, query: &str) -> Vec<(serde_json::Value, f64)> {
    let response = get(
        prometheus,
        &format!("/api/v1/query?query={}", url_encode(query)),
    );
    assert_eq!(response.status, 200, "{query}: {}", response.body);
    let json: serde_json::Value = serde_json::from_str(&response.body).unwrap();
    json["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["metric"].clone(),
                r["value"][1].as_str().unwrap().parse().unwrap(),
            )
        })
        .collect()
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

    let (_prometheus, prometheus_addr) = start_prometheus(&dir.0, exporter_addr);

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

/// Threads, open files and peak resident memory (kB) of a process, from /proc.
fn usage(pid: u32) -> (u64, usize, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in /proc/{pid}/status"))
    };
    let open_files = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count();
    (field("Threads:"), open_files, field("VmHWM:"))
}

/// Sends `request` and returns what the server answers (empty if it closed at once),
/// reading for at most `limit`. Write errors are expected: the server stops reading.
fn send_raw(addr: SocketAddr, request: &[u8], limit: Duration) -> Vec<u8> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).unwrap();
    stream.set_read_timeout(Some(limit)).unwrap();
    stream.set_write_timeout(Some(limit)).unwrap();
    let _ = stream.write_all(request);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    answer
}

fn status_of(answer: &[u8]) -> String {
    String::from_utf8_lossy(answer)
        .split(' ')
        .nth(1)
        .unwrap_or("none")
        .to_string()
}

/// `/metrics` must answer 200 within a second, whatever else is going on.
fn assert_scrape_answers_promptly(addr: SocketAddr, during: &str) {
    let started = Instant::now();
    let answer = send_raw(
        addr,
        b"GET /metrics HTTP/1.1\r\n\r\n",
        Duration::from_secs(5),
    );
    let took = started.elapsed();
    assert_eq!(status_of(&answer), "200", "scrape {during}");
    // A server blocked by the idle or slow clients would wait for their 5 s head timeout;
    // 1 s was missed on a host with two test JVMs and other builds beside.
    assert!(
        took < Duration::from_secs(3),
        "scrape {during} took {took:?}"
    );
}

const MEMORY_LIMIT_KB: u64 = 64 * 1024;

/// Every exporter scrapes every JVM on the host. The 31 fake JVMs with the widest logs of
/// `one_users_many_jvms_cannot_crowd_out_another_or_fill_the_scrape` fill a scrape's body
/// up to its 16 MB budget in every exporter running meanwhile, which took another test's
/// exporter from 11 MB to 55-66 MB at its peak. The tests that bound an exporter's memory
/// and that test take turns.
static HOST_WITH_WIDE_JVMS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A turn on the host without (or with) the wide JVMs; see [`HOST_WITH_WIDE_JVMS`].
fn host_turn() -> std::sync::MutexGuard<'static, ()> {
    // A test that failed in its turn leaves the lock poisoned: the host is still shared.
    HOST_WITH_WIDE_JVMS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[test]
fn hostile_clients_leave_the_exporter_serving_within_bounds() {
    let _turn = host_turn();
    // This test's own end of a thousand connections needs more than 1,024 descriptors.
    let mut own = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain system calls on a valid struct.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut own);
        own.rlim_cur = own.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &own);
    }
    assert!(
        own.rlim_cur >= 1_200,
        "need 1,200 open files, have {}",
        own.rlim_cur
    );
    let (exporter, addr, _stderr) = start_exporter_with_open_files(1_024);
    let pid = exporter.pid();

    // A slow-loris client, one byte a second, runs alongside everything else.
    let slow = std::thread::spawn(move || {
        let mut stream = TcpStream::connect(addr).unwrap();
        let started = Instant::now();
        let request = b"GET /metrics HTTP/1.1\r\nX-Slow: abcdefghijklmnopqrstuvwxyz\r\n\r\n";
        for byte in request {
            if stream.write_all(&[*byte]).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_secs(1));
            if started.elapsed() > Duration::from_secs(12) {
                break;
            }
        }
        (started.elapsed(), stream)
    });

    // A request head of 16 MB (one header line), a huge announced body, real bodies,
    // chunked bodies, bytes that are not HTTP.
    let big_line = [
        b"GET /metrics HTTP/1.1\r\nX-Big: ".as_slice(),
        &vec![b'a'; 16 << 20],
    ]
    .concat();
    let short = Duration::from_secs(3);
    assert_eq!(status_of(&send_raw(addr, &big_line, short)), "431");
    let huge_length = b"GET /healthz HTTP/1.1\r\nContent-Length: 99999999999999\r\n\r\n";
    assert_eq!(status_of(&send_raw(addr, huge_length, short)), "413");
    let body = [
        b"POST /metrics HTTP/1.1\r\nContent-Length: 1000000\r\n\r\n".as_slice(),
        &vec![b'b'; 1_000_000],
    ]
    .concat();
    let answer = send_raw(addr, &body, short);
    assert!(
        ["413", "none"].contains(&status_of(&answer).as_str()),
        "{answer:?}"
    );
    let chunked = b"GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nffffffff\r\n";
    assert_eq!(status_of(&send_raw(addr, chunked, short)), "400");
    let mut noise = vec![0u8; 64 * 1024];
    let mut x: u32 = 2_463_534_242;
    for byte in noise.iter_mut() {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        *byte = x as u8;
    }
    noise.extend_from_slice(b"\r\n\r\n");
    let answer = send_raw(addr, &noise, short);
    assert!(
        ["400", "none"].contains(&status_of(&answer).as_str()),
        "{answer:?}"
    );
    assert_scrape_answers_promptly(addr, "after malformed requests");

    // Cut off after the head timeout (before the idle connections below, which would
    // evict it as the oldest connection).
    let (took, mut slow_stream) = slow.join().unwrap();
    slow_stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut answer = Vec::new();
    let _ = slow_stream.read_to_end(&mut answer);
    assert!(
        took >= Duration::from_secs(4) && took <= Duration::from_secs(8),
        "slow client cut off after {took:?}"
    );
    assert_eq!(status_of(&answer), "408", "{answer:?}");

    // A thousand idle connections, held open, under a limit of 1,024 open files. The
    // exporter's own descriptors (hsperf files and GC logs of every JVM on the host, which
    // other work may be running) are counted first: the connections add at most 256.
    let (_, open_before, _) = usage(pid);
    let idle: Vec<TcpStream> = (0..1_000)
        .map(|_| TcpStream::connect_timeout(&addr, Duration::from_secs(2)).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let (threads, open_files, peak_kb) = usage(pid);
    eprintln!("with 1,000 idle connections: {threads} threads, {open_files} open files, VmHWM {peak_kb} kB");
    assert!(threads <= 4, "{threads} threads");
    assert!(
        open_files <= open_before + 256 + 8,
        "{open_files} open files, {open_before} before the idle connections"
    );
    assert_scrape_answers_promptly(addr, "while 1,000 idle connections are open");
    assert_eq!(get(addr, "/healthz").body, "ok\n");

    drop(idle);
    assert_scrape_answers_promptly(addr, "after everything");
    let (threads, _, peak_kb) = usage(pid);
    assert!(threads <= 4, "{threads} threads");
    assert!(peak_kb < MEMORY_LIMIT_KB, "VmHWM {peak_kb} kB");
}

#[test]
fn an_exporter_that_cannot_accept_connections_exits_with_an_error() {
    // Standard input, output, error and the listening socket: no room for a connection.
    let (mut exporter, addr, mut stderr) = start_exporter_with_open_files(4);
    let _waiting = TcpStream::connect(addr).unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(status) = exporter.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "still running with accept failing"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut message = String::new();
    stderr.read_to_string(&mut message).unwrap();
    assert_eq!(status.code(), Some(1), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(
        message.starts_with("pauselab: error: pauselab export: stopped serving on ")
            && message.contains("Too many open files")
            && message.contains("LimitNOFILE"),
        "{message}"
    );
}

#[test]
fn once_into_a_closed_pipe_exits_quietly() {
    let mut fds = [0; 2];
    // SAFETY: pipe fills two descriptors, each owned once below.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just created and are owned by nothing else.
    let (reader, writer) = unsafe {
        use std::os::fd::FromRawFd;
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    };
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .args(["export", "--once"])
        .stdout(Stdio::from(writer))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // 128 + SIGPIPE, as `cat` and `grep` end (README, exit codes).
    assert_eq!(out.status.code(), Some(141), "{stderr}");
    assert_eq!(stderr, "");
}

/// Renames the first `initCapacity` counter of a JVM's perf data file to `new_name`, in
/// place, with a parser of its own (version 2.0 layout: prologue with the entries' offset
/// at 24 and count at 28; entry: length, name offset, vector length, type, flags, units,
/// variability, data offset). The JVM never reads counter names back, so it runs on.
fn rename_counter(file: &Path, new_name: &str) -> String {
    use std::os::unix::fs::FileExt;
    let bytes = std::fs::read(file).unwrap();
    assert_eq!(bytes[4], 1, "expected a little-endian region");
    let i32_at = |at: usize| i32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let mut entry = i32_at(24);
    for _ in 0..i32_at(28) {
        let name_start = entry + i32_at(entry + 4);
        let data_start = entry + i32_at(entry + 16);
        let name_end = name_start + bytes[name_start..].iter().position(|&b| b == 0).unwrap();
        let name = String::from_utf8_lossy(&bytes[name_start..name_end]).into_owned();
        if name.ends_with("initCapacity") && data_start - name_start > new_name.len() {
            let mut patched = new_name.as_bytes().to_vec();
            patched.resize(data_start - name_start, 0);
            let f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
            f.write_all_at(&patched, name_start as u64).unwrap();
            return name;
        }
        entry += i32_at(entry);
    }
    panic!("no initCapacity counter in {}", file.display());
}

#[test]
fn a_hostile_counter_name_cannot_inject_metrics() {
    let dir = TempDir::new("export-hostile-name");
    compile_workload(&dir.0);
    let jvm = start_jvm(JDK17, &dir.0, &[]);
    let file = PathBuf::from(format!("/tmp/hsperfdata_root/{}", jvm.pid()));
    let info = format!("hotspot_jvm_info{{pid=\"{}\"", jvm.pid());
    let deadline = Instant::now() + Duration::from_secs(15);
    while !(file.exists() && scrape_once(false, &[]).contains(&info)) {
        assert!(
            Instant::now() < deadline,
            "JVM {} never exported",
            jvm.pid()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let renamed = rename_counter(&file, "x\nevil_injected_metric{pid=\"1\"} 42");

    let metrics = scrape_once(false, &["--all-counters"]);
    assert!(
        !metrics.lines().any(|l| l.starts_with("evil")),
        "{renamed} renamed, the output has an injected line:\n{metrics}"
    );
    assert!(metrics.contains(
        "# HELP hsperf_x_evil_injected_metric_pid_1_42_bytes hsperf counter x\\nevil_injected_metric{pid=\"1\"} 42.\n"
    ), "{metrics}");
    assert!(metrics.contains(&info), "the JVM itself is still exported");
    promtool_check(&metrics);
}

/// A JVM's perf data damaged in place, as any user can do to their own JVM's file or to a
/// process made to look like a JVM: every scrape still answers 200, the JVM is listed
/// (read or unreadable), and the exporter keeps running.
#[test]
fn damaged_perf_data_of_one_jvm_never_fails_a_scrape() {
    use std::os::unix::fs::FileExt;
    let dir = TempDir::new("export-damaged");
    compile_workload(&dir.0);
    let jvm = start_jvm(JDK25, &dir.0, &[]);
    let (mut exporter, addr) = start_exporter(&["--source", "file"]);
    wait_until_exported(addr, jvm.pid());
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(format!("/tmp/hsperfdata_root/{}", jvm.pid()))
        .unwrap();
    let length = file.metadata().unwrap().len();
    let pid = format!("pid=\"{}\"", jvm.pid());
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for round in 0..20 {
        // Entry headers and names start right after the 32-byte prologue; the first
        // rounds hit the prologue's entry offset and count too.
        for _ in 0..8 {
            let low = if round < 5 { 24 } else { 32 };
            let at = low + next() % (length - low);
            file.write_all_at(&next().to_le_bytes()[..4], at).unwrap();
        }
        let metrics = get(addr, "/metrics");
        assert_eq!(metrics.status, 200, "round {round}: {}", metrics.body);
        assert!(
            metrics.body.lines().any(|l| l.contains(&pid)),
            "round {round}: pid {} neither read nor reported:\n{}",
            jvm.pid(),
            metrics.body
        );
        assert!(exporter.0.try_wait().unwrap().is_none(), "exporter exited");
    }
    assert_eq!(get(addr, "/healthz").body, "ok\n");
}

/// Upper bounds of the exporter's histogram buckets (docs/export.md).
const BUCKETS: [f64; 18] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0, 30.0, 60.0,
];

fn bucket_of(seconds: f64) -> usize {
    BUCKETS.partition_point(|&upper| upper < seconds)
}

/// Starts the workload in `cwd` (so that relative log paths land there).
fn start_jvm_in(jdk: &str, cwd: &Path, classes: &Path, flags: &[&str]) -> Running {
    let child = Command::new(format!("{jdk}/bin/java"))
        .current_dir(cwd)
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

/// A scratch directory with the workload compiled in it, and the workload started there.
fn workload_in(name: &str, jdk: &str, flags: &[&str]) -> (TempDir, Running) {
    let dir = TempDir::new(name);
    compile_workload(&dir.0);
    let jvm = start_jvm_in(jdk, &dir.0, &dir.0, flags);
    (dir, jvm)
}

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{name} {pid}");
}

/// `pauselab analyze --json` of a log: (pause count, p99 ms, safepoint count).
fn analyze(log: &Path) -> (u64, f64, u64) {
    let out = Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .args(["analyze", "--json"])
        .arg(log)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "analyze {}: {e}: {}",
            log.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (
        json["pauses"]["count"].as_u64().unwrap(),
        json["pauses"]["p99_ms"].as_f64().unwrap(),
        json["safepoints"]["count"].as_u64().unwrap(),
    )
}

/// Counts the lines of a unified GC log by hand, without pauselab's parser: GC pause lines
/// (`GC(N) Pause ... N.Nms`) and JDK 17+ safepoint lines (`Safepoint "..."`).
fn count_by_hand(log: &Path) -> (u64, u64) {
    let text = std::fs::read_to_string(log).unwrap();
    let pauses = text
        .lines()
        .filter(|l| l.contains(" Pause ") && l.contains("GC(") && l.ends_with("ms"))
        .count();
    let safepoints = text.lines().filter(|l| l.contains("Safepoint \"")).count();
    (pauses as u64, safepoints as u64)
}

/// What Prometheus holds for one JVM: pause count, p99 (s), safepoint count.
fn stored(prometheus: SocketAddr, pid: u32) -> Option<(f64, f64, f64)> {
    let one = |query: String| promql(prometheus, &query).first().map(|(_, v)| *v);
    Some((
        one(format!("sum(hotspot_gc_pause_seconds_count{{pid=\"{pid}\"}})"))?,
        one(format!(
            "histogram_quantile(0.99, sum by (le) (hotspot_gc_pause_seconds_bucket{{pid=\"{pid}\"}}))"
        ))?,
        one(format!("sum(hotspot_safepoint_seconds_count{{pid=\"{pid}\"}})"))?,
    ))
}

/// Prometheus scrapes the pause histograms of a JDK 17 JVM with -XX:+PerfDisableSharedMem
/// and a GC log given as a relative path with %p, and of a JDK 25 JVM without a log whose
/// logging the exporter turns on: once the JVMs are frozen, the stored counts equal
/// `pauselab analyze` of the same logs (and a count by hand), the p99 is within one bucket.
/// On SIGTERM the exporter turns the log it added off again.
#[test]
fn pause_histograms_in_prometheus_agree_with_analyze_of_the_same_logs() {
    let (dir, logged) = workload_in(
        "export-pauses",
        JDK17,
        &[
            "-XX:+PerfDisableSharedMem",
            "-Xlog:gc,safepoint:file=gc-%p.log",
        ],
    );
    let unlogged = start_jvm_in(JDK25, &dir.0, &dir.0, &[]);
    let enabled_dir = dir.0.join("enabled");
    let enabled_arg = enabled_dir.display().to_string();
    let state_arg = dir.0.join("state").display().to_string();
    let (mut exporter, exporter_addr) = start_exporter(&[
        "--enable-gc-log",
        &enabled_arg,
        "--enable-gc-log-for",
        "Safepoints",
        "--state-dir",
        &state_arg,
    ]);
    let (_prometheus, prometheus_addr) = start_prometheus(&dir.0, exporter_addr);
    wait_until_exported(exporter_addr, logged.pid());
    wait_until_exported(exporter_addr, unlogged.pid());

    let logs = [
        (logged.pid(), dir.0.join(format!("gc-{}.log", logged.pid()))),
        (
            unlogged.pid(),
            enabled_dir.join(unlogged.pid().to_string()).join("gc.log"),
        ),
    ];
    // Logs are turned on by the attach worker, outside the scrapes: a moment later.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut metrics = get(exporter_addr, "/metrics").body;
    while !metrics.contains("state=\"enabled\"") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        metrics = get(exporter_addr, "/metrics").body;
    }
    promtool_check(&metrics);
    for (pid, log) in &logs {
        let state = if *pid == logged.pid() {
            "following"
        } else {
            "enabled"
        };
        let series = format!(
            "pauselab_export_gc_log{{pid=\"{pid}\",path=\"{}\",state=\"{state}\"}} 1",
            log.display()
        );
        assert!(metrics.contains(&series), "no {series} in:\n{metrics}");
    }
    // Let both JVMs collect for a while, then freeze them: their logs stop growing.
    std::thread::sleep(Duration::from_secs(4));
    for (pid, _) in &logs {
        signal(*pid, "STOP");
    }
    std::thread::sleep(Duration::from_millis(500));
    for (pid, log) in &logs {
        let (count, p99_ms, safepoints) = analyze(log);
        assert_eq!(count_by_hand(log), (count, safepoints), "{}", log.display());
        assert!(count >= 10, "only {count} pauses in {}", log.display());
        let deadline = Instant::now() + Duration::from_secs(15);
        let mut last = None;
        while Instant::now() < deadline {
            last = stored(prometheus_addr, *pid);
            if last.is_some_and(|(n, _, s)| n == count as f64 && s == safepoints as f64) {
                break;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        let (stored_count, stored_p99, stored_safepoints) =
            last.unwrap_or_else(|| panic!("nothing stored for pid {pid}"));
        assert_eq!(stored_count, count as f64, "pause count of pid {pid}");
        assert_eq!(
            stored_safepoints, safepoints as f64,
            "safepoint count of pid {pid}"
        );
        let (ours, theirs) = (bucket_of(stored_p99), bucket_of(p99_ms / 1000.0));
        assert!(
            ours.abs_diff(theirs) <= 1,
            "pid {pid}: p99 {stored_p99} s from Prometheus, {p99_ms} ms from analyze"
        );
    }

    // SIGTERM: the output added to the JDK 25 JVM is removed, its own outputs stay.
    signal(unlogged.pid(), "CONT");
    signal(exporter.pid(), "TERM");
    let deadline = Instant::now() + Duration::from_secs(10);
    while exporter.0.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "the exporter did not exit on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let list = Command::new(format!("{JDK25}/bin/jcmd"))
        .args([&unlogged.pid().to_string(), "VM.log", "list"])
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(list.contains("#0: stdout"), "{list}");
    assert!(
        !list.contains(&enabled_arg),
        "the added output is still there:\n{list}"
    );
}

/// A JVM rotating its GC log every few KiB: the exporter follows every file and counts
/// what a second, unrotated log of the same JVM holds, which it does not read itself (a
/// kind of line is read from one file only).
#[test]
fn rotated_logs_are_followed_without_losing_or_repeating_a_pause() {
    let (dir, jvm) = workload_in(
        "export-rotation",
        JDK17,
        &[
            "-Xlog:gc*,safepoint:file=rotated.log::filecount=5,filesize=8k",
            "-Xlog:gc,safepoint:file=whole.log",
        ],
    );
    let (_exporter, exporter_addr) = start_exporter(&[]);
    wait_until_exported(exporter_addr, jvm.pid());
    let pid = jvm.pid();
    let count_of = |metrics: &str, family: &str| -> f64 {
        metrics
            .lines()
            .filter(|l| l.starts_with(family) && l.contains(&format!("pid=\"{pid}\"")))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    };
    // Scrape about every second while the log rotates a few times.
    let deadline = Instant::now() + Duration::from_secs(6);
    while Instant::now() < deadline {
        get(exporter_addr, "/metrics");
        std::thread::sleep(Duration::from_millis(700));
    }
    signal(pid, "STOP");
    std::thread::sleep(Duration::from_millis(300));
    let metrics = get(exporter_addr, "/metrics").body;
    let whole = dir.0.join("whole.log");
    let (pauses, safepoints) = count_by_hand(&whole);
    let rotations = std::fs::read_dir(&dir.0)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("rotated.log."))
        .count();
    assert!(
        rotations >= 2,
        "the log did not rotate: {rotations} archives"
    );
    assert!(pauses >= 10, "{pauses} pauses");
    assert_eq!(
        count_of(&metrics, "hotspot_gc_pause_seconds_count{"),
        pauses as f64
    );
    assert_eq!(
        count_of(&metrics, "hotspot_safepoint_seconds_count{"),
        safepoints as f64
    );
    assert!(metrics.contains(&format!(
        "pauselab_export_gc_log{{pid=\"{pid}\",path=\"{}\",state=\"following\"}} 1",
        dir.0.join("rotated.log").display()
    )));
}

// Other users' processes are untrusted: what they name is read with their rights, and the
// directories made for them are made through descriptors.

/// A fake JVM (tests/hsperf_hostile) of user nobody with `JAVA_TOOL_OPTIONS` set. Its
/// "main class" is the path of the `libjvm` it loads.
fn fake_jvm_of_nobody(libjvm: &Path, java_tool_options: &str) -> Running {
    spawn_fake_jvm(65534, libjvm, &[("JAVA_TOOL_OPTIONS", java_tool_options)])
}

// Bounds per host and attach off the scrape path, against processes of other users.

/// Starts the fake JVM (maps a libjvm.so, catches SIGQUIT and never opens an attach
/// socket) with the faithful libjvm.so as `uid` with `environment`.
fn start_fake_jvm(uid: u32, environment: &[(&str, &str)]) -> Running {
    spawn_fake_jvm(uid, &fake_build().faithful_libjvm, environment)
}

/// Starts the fake JVM as `uid` and waits until it says it is ready.
fn spawn_fake_jvm(uid: u32, libjvm: &Path, environment: &[(&str, &str)]) -> Running {
    let mut child = Command::new("setpriv")
        .args([
            &format!("--reuid={uid}"),
            &format!("--regid={uid}"),
            "--clear-groups",
        ])
        .arg(&fake_build().fake_jvm)
        .arg(libjvm)
        .envs(environment.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("setpriv runs");
    let mut ready = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut ready)
        .unwrap();
    assert_eq!(ready, "ready\n", "fake_jvm did not start");
    Running(child)
}

/// Owner and mode of `path`, not following a link.
fn owner_and_mode(path: &Path) -> (u32, u32, u32) {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).unwrap();
    (meta.uid(), meta.gid(), meta.mode() & 0o7777)
}

/// `export --enable-gc-log DIR` where a user planted `DIR/<pid>` as a link to a root-owned
/// file: a DIR of that user, or one anybody can write, is refused at start in one line; in
/// a DIR only root can change, the planted link is replaced by a directory of the JVM's
/// user. The file keeps its owner and mode every time.
#[test]
fn enable_gc_log_never_changes_a_file_through_a_planted_link() {
    let scratch = TempDir::new("export-planted");
    let target = scratch.0.join("root-only");
    std::fs::write(&target, "root's\n").unwrap();
    std::fs::set_permissions(&target, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let before = owner_and_mode(&target);
    // Only this JVM is attached to (others of other tests may not answer for seconds).
    let libjvm = scratch.0.join("planted-link-test/libjvm.so");
    std::fs::create_dir(libjvm.parent().unwrap()).unwrap();
    std::fs::copy(&fake_build().faithful_libjvm, &libjvm).unwrap();
    let jvm = fake_jvm_of_nobody(&libjvm, "");
    // Its standard error is kept open: the exporter says there that attaching failed.
    let exporter_with_logs_in = |dir: &Path| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_pauselab"));
        command
            .args(["export", "--listen", "127.0.0.1:0", "--enable-gc-log"])
            .arg(dir)
            .args(["--enable-gc-log-for", "*planted-link-test*"]);
        try_start_listening(command)
    };
    let pid = jvm.0.id().to_string();
    let as_user = |args: &[&str]| {
        let status = as_nobody(args[0]).args(&args[1..]).status().unwrap();
        assert!(status.success(), "{args:?} as nobody");
    };

    let theirs = scratch.0.join("theirs");
    let open = scratch.0.join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    std::fs::create_dir(&theirs).unwrap();
    let nobody: u32 = NOBODY.parse().unwrap();
    std::os::unix::fs::chown(&theirs, Some(nobody), Some(nobody)).unwrap();
    for (dir, why) in [(&theirs, "owned by uid 65534"), (&open, "mode 777")] {
        let planted = dir.join(&pid);
        as_user(&[
            "ln",
            "-s",
            target.to_str().unwrap(),
            planted.to_str().unwrap(),
        ]);
        match exporter_with_logs_in(dir) {
            Ok((_exporter, addr, _)) => {
                get(addr, "/metrics");
                assert_eq!(
                    owner_and_mode(&target),
                    before,
                    "changed through {planted:?}"
                );
                panic!("--enable-gc-log {} was accepted", dir.display());
            }
            Err(refusal) => {
                let lines: Vec<&str> = refusal.lines().skip(1).collect();
                assert!(refusal.starts_with("exit status: "), "{refusal}");
                assert_eq!(lines.len(), 1, "{refusal}");
                assert!(lines[0].contains(&dir.display().to_string()), "{refusal}");
                assert!(lines[0].contains(why), "{refusal}");
            }
        }
        assert_eq!(owner_and_mode(&target), before);
    }

    // Root's own DIR with a link under the JVM's pid (left there while DIR was open, say).
    let private = scratch.0.join("private");
    std::fs::create_dir(&private).unwrap();
    let planted = private.join(&pid);
    std::os::unix::fs::symlink(&target, &planted).unwrap();
    let (_exporter, addr, _stderr) = exporter_with_logs_in(&private).unwrap();
    // A scrape only asks for the log; the attach worker makes the directory soon after.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        get(addr, "/metrics");
        assert_eq!(
            owner_and_mode(&target),
            before,
            "changed through {planted:?}"
        );
        // The directory is made root's and 0700, then given to the JVM's user and opened
        // to its group: a scrape may see it in between.
        let made = std::fs::symlink_metadata(&planted).is_ok_and(|m| m.is_dir());
        if made && owner_and_mode(&planted) == (nobody, nobody, 0o750) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{planted:?} was not replaced by a directory of nobody's, 0750: {:?}",
            made.then(|| owner_and_mode(&planted))
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A fake JVM of nobody names GC logs it may not read: a root-only file, one reached
/// through its own link to a root-only directory, and one that does not exist. Nothing of
/// the root-only text reaches /metrics, and "not yours" and "missing" look the same; its
/// own log next to them is followed.
#[test]
fn gc_logs_a_process_names_are_read_with_its_rights() {
    let scratch = TempDir::new("export-trust");
    let pause = |cause: &str| {
        format!("[0.100s][info][gc] GC(0) Pause Young (Normal) ({cause}) 3M->1M(8M) 1.000ms\n")
    };
    let root_only = scratch.0.join("root-only.log");
    std::fs::write(&root_only, pause("ROOTFILE")).unwrap();
    std::fs::set_permissions(
        &root_only,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let secret = scratch.0.join("secret");
    std::fs::create_dir(&secret).unwrap();
    std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    std::fs::write(secret.join("gc.log"), pause("ROOTDIR")).unwrap();
    let public = scratch.0.join("public");
    let nobody: u32 = NOBODY.parse().unwrap();
    std::fs::create_dir(&public).unwrap();
    std::os::unix::fs::chown(&public, Some(nobody), Some(nobody)).unwrap();
    let link = public.join("logs");
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(nobody), Some(nobody)).unwrap();
    let own = public.join("own.log");
    std::fs::write(&own, pause("OWN")).unwrap();
    std::os::unix::fs::chown(&own, Some(nobody), Some(nobody)).unwrap();
    let missing = scratch.0.join("missing.log");

    let exists_or_not = fake_jvm_of_nobody(
        &fake_build().faithful_libjvm,
        &format!(
            "-Xlog:gc:file={} -Xlog:safepoint:file={}",
            root_only.display(),
            missing.display()
        ),
    );
    let through_link = fake_jvm_of_nobody(
        &fake_build().faithful_libjvm,
        &format!(
            "-Xlog:gc:file={}/gc.log -Xlog:gc:file={}",
            link.display(),
            own.display()
        ),
    );
    let own_only = fake_jvm_of_nobody(
        &fake_build().faithful_libjvm,
        &format!("-Xlog:gc:file={}", own.display()),
    );
    let state = |metrics: &str, pid: u32, path: &Path| {
        let prefix = format!(
            "pauselab_export_gc_log{{pid=\"{pid}\",path=\"{}\",state=\"",
            path.display()
        );
        let line = metrics.lines().find_map(|l| l.strip_prefix(&prefix));
        line.and_then(|rest| rest.split('"').next())
            .map(str::to_string)
    };
    let own_series = format!(
        "hotspot_gc_pause_seconds_count{{pid=\"{}\",collector=\"unknown\",pause=\"young\",cause=\"OWN\"}}",
        own_only.0.id()
    );
    let (as_root, _) = scrape_until(false, &[], &own_series);
    // As the systemd unit and the DaemonSet run it: root with CAP_SYS_PTRACE and
    // CAP_DAC_READ_SEARCH only, which cannot take the JVM's user's ids.
    let with_two_capabilities = stdout_of(
        Command::new("setpriv")
            .args(["--inh-caps=-all", "--ambient-caps=-all"])
            .arg("--bounding-set=-all,+sys_ptrace,+dac_read_search")
            .arg(env!("CARGO_BIN_EXE_pauselab"))
            .args(["export", "--once"]),
    );
    for metrics in [as_root, with_two_capabilities] {
        assert_eq!(sample(&metrics, &own_series), Some(1.0), "{metrics}");
        assert!(!metrics.contains("ROOTFILE"), "{metrics}");
        assert!(!metrics.contains("ROOTDIR"), "{metrics}");
        let unreadable = [
            (exists_or_not.0.id(), &root_only),
            (exists_or_not.0.id(), &missing),
            (through_link.0.id(), &link.join("gc.log")),
        ];
        for (pid, path) in unreadable {
            let found = state(&metrics, pid, path);
            assert_eq!(found.as_deref(), Some("unreadable"), "{path:?}: {metrics}");
        }
        let own_state = state(&metrics, own_only.0.id(), &own);
        assert_eq!(own_state.as_deref(), Some("following"), "{metrics}");
    }
}

/// A GC and safepoint log with 64 pause causes and 64 VM operations of 120 bytes each:
/// the most label sets and the longest values one JVM's histograms may have.
fn widest_gc_log(path: &Path) {
    let mut text = String::new();
    for n in 0..64 {
        let cause = format!("Cause {n:02} {}", "x".repeat(110));
        let operation = format!("Operation{n:02}{}", "y".repeat(110));
        text.push_str(&format!(
            "[{n}.000s][info][gc] GC({n}) Pause Young (Normal) ({cause}) 12M->3M(64M) 4.123ms\n\
             [{n}.001s][info][safepoint] Safepoint \"{operation}\", Time since last: 1000 ns, \
             Reaching safepoint: 2000 ns, At safepoint: 3000 ns, Total: 5000 ns\n"
        ));
    }
    std::fs::write(path, text).unwrap();
}

/// A TCP connection whose receive buffer is as small as the kernel allows, so that a
/// response it does not read fills it at once.
fn connect_with_small_receive_buffer(addr: SocketAddr) -> TcpStream {
    use std::os::fd::FromRawFd;
    let SocketAddr::V4(v4) = addr else {
        panic!("IPv4 expected: {addr}")
    };
    // SAFETY: plain system calls on a socket owned here, handed to TcpStream at the end.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0);
        let size: libc::c_int = 4096;
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            &size as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
        let address = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: v4.port().to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(*v4.ip()).to_be(),
            },
            sin_zero: [0; 8],
        };
        let connected = libc::connect(
            fd,
            &address as *const libc::sockaddr_in as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        );
        assert_eq!(connected, 0, "{}", std::io::Error::last_os_error());
        TcpStream::from_raw_fd(fd)
    }
}

/// The body limit docs/export.md states.
const MAX_BODY_BYTES: usize = 16 << 20;

/// 30 fake JVMs of nobody whose logs have the widest histograms, and one of another user
/// (uid 1) with the same log, started last: the scrape stays within the body budget, the
/// other user's JVM is in it, and what was left out is counted. Two clients that ask for
/// that body and never read it do not keep a third from its scrape.
#[test]
fn one_users_many_jvms_cannot_crowd_out_another_or_fill_the_scrape() {
    let _turn = host_turn();
    let dir = TempDir::new("export-budget");
    let log = dir.0.join("gc.log");
    widest_gc_log(&log);
    // The log is readable by anyone (mode 0644 in a 0755 directory), as nobody's would be.
    let options = format!("-Xlog:gc,safepoint:file={}", log.display());
    let environment = [("JAVA_TOOL_OPTIONS", options.as_str())];
    let crowd: Vec<Running> = (0..30)
        .map(|_| start_fake_jvm(65534, &environment))
        .collect();
    let other = start_fake_jvm(1, &environment);
    let (exporter, addr) = start_exporter(&[]);

    let other_series = format!(
        "pauselab_export_gc_log{{pid=\"{}\",path=\"{}\",state=\"following\"}} 1",
        other.pid(),
        log.display()
    );
    let crowd_series = |body: &str| {
        crowd
            .iter()
            .filter(|jvm| body.contains(&format!("pauselab_export_gc_log{{pid=\"{}\"", jvm.pid())))
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    let body = loop {
        let body = get(addr, "/metrics").body_bytes;
        let text = String::from_utf8_lossy(&body).into_owned();
        assert!(
            body.len() <= MAX_BODY_BYTES,
            "a body of {} bytes",
            body.len()
        );
        if text.contains(&other_series) || Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        body.contains(&other_series),
        "no {other_series} in a body of {} bytes",
        body.len()
    );
    let kept = crowd_series(&body);
    eprintln!("body {} bytes, {kept} of nobody's 30 JVMs kept", body.len());
    assert!((10..30).contains(&kept), "{kept} of nobody's 30 JVMs kept");
    let dropped = sample(&body, "pauselab_export_dropped_jvms{uid=\"65534\"}");
    assert_eq!(dropped, Some((30 - kept) as f64), "dropped JVMs of nobody");
    assert!(sample(&body, "pauselab_export_dropped_series{uid=\"65534\"}") > Some(1000.0));
    assert_eq!(
        sample(&body, "pauselab_export_dropped_jvms{uid=\"1\"}"),
        None
    );
    // A body this size, as Prometheus asks for it (OpenMetrics, gzip) and as curl does:
    // encoded a line at a time into segments and given back after each scrape, it took the
    // exporter to 32 MB (50 MB when it was built whole, rewritten and copied; see
    // docs/export.md).
    let prometheus = [
        ("Accept", "application/openmetrics-text"),
        ("Accept-Encoding", "gzip"),
    ];
    assert_eq!(http(addr, "GET", "/metrics", &prometheus).status, 200);
    assert_eq!(get(addr, "/metrics").status, 200);
    let (_, _, peak_kb) = usage(exporter.pid());
    eprintln!("exporter's VmHWM with 31 wide JVMs: {peak_kb} kB");
    assert!(peak_kb < 40 * 1024, "VmHWM {peak_kb} kB");

    // Two clients that never read a response of many MiB, then one that does: it waits for
    // at most three scrapes and one write stall (1 s), where it waited for a send deadline
    // of 10 s before.
    let mut stalled: Vec<TcpStream> = (0..2)
        .map(|_| connect_with_small_receive_buffer(addr))
        .collect();
    for client in &mut stalled {
        client.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
    let started = Instant::now();
    let answer = get(addr, "/metrics");
    let took = started.elapsed();
    eprintln!("scrape behind two clients that do not read: {took:?}");
    assert_eq!(answer.status, 200);
    assert!(
        took < Duration::from_secs(8),
        "a scrape behind two clients that do not read took {took:?}"
    );
}

/// Starts `pauselab export` with `extra` and a thread that collects what it says on standard
/// error until it exits (undrained, the pipe would fill and stall it).
fn start_exporter_heard(
    extra: &[&str],
) -> (Running, SocketAddr, std::thread::JoinHandle<Vec<String>>) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pauselab"));
    command
        .args(["export", "--listen", "127.0.0.1:0"])
        .args(extra);
    let (exporter, addr, stderr) = start_listening(command);
    let said = std::thread::spawn(move || stderr.lines().map_while(Result::ok).collect());
    (exporter, addr, said)
}

/// Waits for the exporter to exit and returns how long that took after `since`.
fn wait_for_exit(exporter: &mut Running, since: Instant, limit: Duration) -> Duration {
    loop {
        if let Some(status) = exporter.0.try_wait().unwrap() {
            assert!(status.success(), "the exporter exited with {status}");
            return since.elapsed();
        }
        assert!(
            since.elapsed() < limit,
            "the exporter did not exit within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// 20 fake JVMs of nobody that catch SIGQUIT but never open an attach socket, each an
/// attach that runs into its 3 s timeout: with --enable-gc-log, every scrape still answers
/// at once, and SIGTERM ends the exporter within its exit deadline (10 s), also when it
/// has an output to turn off in each of them.
#[test]
fn attaches_that_never_answer_delay_neither_scrapes_nor_exit() {
    let dir = TempDir::new("export-attach");
    let jvms: Vec<Running> = (0..20).map(|_| start_fake_jvm(65534, &[])).collect();
    let libjvm = &fake_build().faithful_libjvm;
    let enabled = dir.0.join("enabled");
    let state = dir.0.join("state");
    let (mut exporter, addr, said) = start_exporter_heard(&[
        "--enable-gc-log",
        enabled.to_str().unwrap(),
        // Only these JVMs: the main class of a fake JVM is its first argument.
        "--enable-gc-log-for",
        libjvm.to_str().unwrap(),
        "--state-dir",
        state.to_str().unwrap(),
    ]);
    let until = Instant::now() + Duration::from_secs(4);
    let mut slowest = Duration::ZERO;
    while Instant::now() < until {
        let started = Instant::now();
        let body = get(addr, "/metrics").body;
        slowest = slowest.max(started.elapsed());
        for jvm in &jvms {
            let none = format!(
                "pauselab_export_gc_log{{pid=\"{}\",path=\"\",state=\"none\"}} 1",
                jvm.pid()
            );
            assert!(body.contains(&none), "no {none} in:\n{body}");
        }
    }
    eprintln!("slowest scrape while attaches time out: {slowest:?}");
    assert!(
        slowest < Duration::from_secs(5),
        "a scrape took {slowest:?}"
    );

    let signalled = Instant::now();
    signal(exporter.pid(), "TERM");
    let took = wait_for_exit(&mut exporter, signalled, Duration::from_secs(15));
    eprintln!("exit after SIGTERM: {took:?}");
    assert!(took < Duration::from_secs(11), "exit took {took:?}");
    let said = said.join().unwrap();
    assert!(
        said.iter()
            .any(|l| l.contains("cannot turn on the GC log of JVM")),
        "{said:?}"
    );
    // Nothing was turned on, so nothing is left in the journal.
    assert_eq!(std::fs::read_dir(&state).unwrap().count(), 0);

    // A killed exporter's journal names an output in each of them: the next exporter
    // tries to turn them off (in parallel) and is stopped at once. It still exits within
    // the deadline, and keeps in its own journal what it could not turn off.
    let mut journal = String::from("pauselab export journal 1\nexporter 4194303 1\n");
    for jvm in &jvms {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", jvm.pid())).unwrap();
        let after_name = &stat[stat.rfind(')').unwrap() + 2..];
        let start_ticks = after_name.split(' ').nth(19).unwrap();
        let pid = jvm.pid();
        journal.push_str(&format!(
            "{pid} {start_ticks} file=/nonexistent/{pid}/gc.log\n"
        ));
    }
    std::fs::write(state.join("export-4194303.journal"), journal).unwrap();
    let (mut next, addr, said) = start_exporter_heard(&["--state-dir", state.to_str().unwrap()]);
    let left_on = format!(
        "pauselab_export_gc_log_left_on{{pid=\"{0}\",output=\"file=/nonexistent/{0}/gc.log\"}} 1",
        jvms[0].pid()
    );
    let body = get(addr, "/metrics").body;
    assert!(body.contains(&left_on), "no {left_on} in:\n{body}");
    let signalled = Instant::now();
    signal(next.pid(), "TERM");
    let took = wait_for_exit(&mut next, signalled, Duration::from_secs(20));
    eprintln!("exit after SIGTERM with 20 outputs to turn off that never answer: {took:?}");
    assert!(took < Duration::from_secs(12), "exit took {took:?}");
    let said = said.join().unwrap();
    assert!(
        said.iter()
            .any(|l| l.contains("output(s) still on at exit")),
        "{said:?}"
    );
    let kept =
        std::fs::read_to_string(state.join(format!("export-{}.journal", next.pid()))).unwrap();
    assert_eq!(kept.lines().count(), 2 + jvms.len(), "{kept}");
    assert!(!state.join("export-4194303.journal").exists());
}

/// An exporter that turned logging on in a JDK 17 JVM is killed (SIGKILL: no chance to
/// undo it); the next exporter, started without --enable-gc-log, turns that output off
/// from the journal, says so, and removes the dead exporter's journal.
#[test]
fn a_log_left_on_by_a_killed_exporter_is_turned_off_by_the_next_start() {
    let (dir, jvm) = workload_in("export-journal", JDK17, &[]);
    let enabled = dir.0.join("enabled");
    let state = dir.0.join("state");
    let state_arg = state.to_str().unwrap();
    let (mut killed, addr) = start_exporter(&[
        "--enable-gc-log",
        enabled.to_str().unwrap(),
        "--enable-gc-log-for",
        "Safepoints",
        "--state-dir",
        state_arg,
    ]);
    let output = enabled.join(jvm.pid().to_string()).join("gc.log");
    let series = format!(
        "pauselab_export_gc_log{{pid=\"{}\",path=\"{}\",state=\"enabled\"}} 1",
        jvm.pid(),
        output.display()
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while !get(addr, "/metrics").body.contains(&series) {
        assert!(Instant::now() < deadline, "no {series}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let outputs = || {
        let list = Command::new(format!("{JDK17}/bin/jcmd"))
            .args([&jvm.pid().to_string(), "VM.log", "list"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&list.stdout).into_owned()
    };
    let needle = output.display().to_string();
    assert!(outputs().contains(&needle), "{}", outputs());
    let journal = state.join(format!("export-{}.journal", killed.pid()));
    assert!(journal.exists(), "no journal {}", journal.display());
    signal(killed.pid(), "KILL");
    let _ = killed.0.wait();
    assert!(outputs().contains(&needle), "SIGKILL left nothing to undo");

    let (mut next, addr, said) = start_exporter_heard(&["--state-dir", state_arg]);
    let deadline = Instant::now() + Duration::from_secs(15);
    while outputs().contains(&needle) {
        assert!(Instant::now() < deadline, "still on:\n{}", outputs());
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        !journal.exists(),
        "the killed exporter's journal is still there"
    );
    let body = get(addr, "/metrics").body;
    assert!(!body.contains("pauselab_export_gc_log_left_on{"), "{body}");
    signal(next.pid(), "TERM");
    wait_for_exit(&mut next, Instant::now(), Duration::from_secs(15));
    let said = said.join().unwrap();
    let turned_off = format!(
        "turned off GC log output file={needle} of JVM {}",
        jvm.pid()
    );
    assert!(said.iter().any(|l| l.contains(&turned_off)), "{said:?}");
}

/// Runs openssl with `args` in `dir`; fails the test if it fails.
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A P-256 key `NAME.key` and a certificate `NAME.crt` for it, signed by `ca` (`ca.crt`,
/// `ca.key`) with the extensions `extensions`, or self-signed (a CA) when `ca` is None.
fn certificate(dir: &Path, name: &str, ca: Option<&str>, extensions: &str) {
    let (key, crt) = (format!("{name}.key"), format!("{name}.crt"));
    let subject = format!("/CN=pauselab-test-{name}");
    let new_key = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let Some(ca) = ca else {
        let mut args = vec!["req", "-x509", "-days", "2", "-subj", &subject];
        args.extend(new_key);
        args.extend(["-keyout", &key, "-out", &crt]);
        openssl(dir, &args);
        return;
    };
    let csr = format!("{name}.csr");
    let ext = format!("{name}.ext");
    std::fs::write(dir.join(&ext), extensions).unwrap();
    let mut args = vec!["req", "-subj", &subject];
    args.extend(new_key);
    args.extend(["-keyout", &key, "-out", &csr]);
    openssl(dir, &args);
    let (ca_crt, ca_key) = (format!("{ca}.crt"), format!("{ca}.key"));
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-days",
            "2",
            "-in",
            &csr,
            "-CA",
            &ca_crt,
            "-CAkey",
            &ca_key,
            "-CAcreateserial",
            "-extfile",
            &ext,
            "-out",
            &crt,
        ],
    );
}

/// curl against the exporter: (exit status, HTTP status, headers and body). `--cacert` of
/// the test CA, so the server certificate is checked as a Prometheus would.
fn curl(dir: &Path, args: &[&str], url: &str) -> (i32, u16, String) {
    let out = Command::new("curl")
        .current_dir(dir)
        .args(["-s", "-i", "--max-time", "10", "--cacert", "ca.crt"])
        .args(["-w", "\n%{http_code}"])
        .args(args)
        .arg(url)
        .output()
        .expect("curl");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (answer, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    (
        out.status.code().unwrap_or(-1),
        code.trim().parse().unwrap_or(0),
        answer.to_string(),
    )
}

/// The test CA, a server certificate for 127.0.0.1 and a client certificate, both signed
/// by it, and a client certificate signed by nobody the exporter knows.
fn test_certificates(dir: &Path) {
    certificate(dir, "ca", None, "");
    certificate(
        dir,
        "server",
        Some("ca"),
        "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
    );
    certificate(dir, "client", Some("ca"), "extendedKeyUsage=clientAuth\n");
    certificate(dir, "stranger", None, "");
}

/// --web.config.file with TLS and basic auth: only the right password over TLS gets the
/// metrics; a wrong one, none, or plain HTTP against the TLS port do not.
#[test]
fn web_config_serves_tls_with_basic_auth() {
    let dir = TempDir::new("export-tls-auth");
    test_certificates(&dir.0);
    let hash = bcrypt::hash("s3cret", 4).unwrap();
    let config = dir.0.join("web.yml");
    std::fs::write(
        &config,
        format!(
            "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  \
             min_version: TLS12\nbasic_auth_users:\n  prometheus: '{hash}'\n"
        ),
    )
    .unwrap();
    let (_exporter, addr) = start_exporter(&["--web.config.file", config.to_str().unwrap()]);
    let url = format!("https://{addr}/metrics");
    // A handshake that stalls (a TLS record header announcing 512 bytes, then nothing)
    // holds no worker: the scrapes below are answered meanwhile, and the exporter closes
    // it at the head deadline.
    let mut stalled = TcpStream::connect(addr).unwrap();
    stalled.write_all(b"\x16\x03\x01\x02\x00").unwrap();

    for attempt in ["verified by bcrypt", "remembered"] {
        let (exit, status, answer) = curl(&dir.0, &["-u", "prometheus:s3cret"], &url);
        assert_eq!((exit, status), (0, 200), "{attempt}: {answer}");
        assert!(answer.contains("pauselab_export_scrapes_total"), "{answer}");
    }
    for (what, args) in [
        ("wrong password", &["-u", "prometheus:wrong"][..]),
        ("unknown user", &["-u", "root:s3cret"]),
        ("no credentials", &[]),
    ] {
        let (exit, status, answer) = curl(&dir.0, args, &url);
        assert_eq!((exit, status), (0, 401), "{what}: {answer}");
        assert!(
            answer.contains("WWW-Authenticate: Basic"),
            "{what}: {answer}"
        );
        assert!(!answer.contains("pauselab_export"), "{what}: {answer}");
    }
    let healthz = curl(&dir.0, &[], &format!("https://{addr}/healthz"));
    assert_eq!(healthz.1, 401, "{}", healthz.2);
    // Plain HTTP with the right password: a 400 saying why, never the metrics.
    let (_, status, answer) = curl(
        &dir.0,
        &["-u", "prometheus:s3cret"],
        &format!("http://{addr}/metrics"),
    );
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer.contains("HTTP request to an HTTPS server"),
        "{answer}"
    );
    // TLS 1.1 and older are not offered.
    let (exit, _, answer) = curl(
        &dir.0,
        &["-u", "prometheus:s3cret", "--tlsv1.0", "--tls-max", "1.1"],
        &url,
    );
    assert_ne!(exit, 0, "{answer}");
    stalled
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut rest = Vec::new();
    let closed = stalled.read_to_end(&mut rest);
    assert!(
        closed.is_ok()
            || closed
                .as_ref()
                .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
        "a stalled handshake stays open: {closed:?}"
    );
}

/// With client_auth_type RequireAndVerifyClientCert, only a client certificate signed by
/// client_ca_file gets in.
#[test]
fn web_config_requires_a_client_certificate_signed_by_its_ca() {
    let dir = TempDir::new("export-tls-client");
    test_certificates(&dir.0);
    let config = dir.0.join("web.yml");
    std::fs::write(
        &config,
        "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  \
         client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n",
    )
    .unwrap();
    let (_exporter, addr) = start_exporter(&["--web.config.file", config.to_str().unwrap()]);
    let url = format!("https://{addr}/metrics");

    let (exit, status, answer) = curl(
        &dir.0,
        &["--cert", "client.crt", "--key", "client.key"],
        &url,
    );
    assert_eq!((exit, status), (0, 200), "{answer}");
    assert!(answer.contains("pauselab_export_scrapes_total"), "{answer}");
    for (what, args) in [
        ("no client certificate", &[][..]),
        (
            "a certificate of another CA",
            &["--cert", "stranger.crt", "--key", "stranger.key"],
        ),
    ] {
        let (exit, status, answer) = curl(&dir.0, args, &url);
        assert!(
            exit != 0 && status == 0,
            "{what}: exit {exit}, {status}: {answer}"
        );
    }
}

/// The subject of the certificate the exporter at `addr` presents.
fn served_subject(dir: &Path, addr: SocketAddr) -> String {
    let out = Command::new("curl")
        .current_dir(dir)
        .args([
            "-s",
            "-v",
            "-o",
            "/dev/null",
            "--max-time",
            "10",
            "--cacert",
            "ca.crt",
        ])
        .arg(format!("https://{addr}/healthz"))
        .output()
        .expect("curl");
    let said = String::from_utf8_lossy(&out.stderr);
    said.lines()
        .find_map(|l| l.trim_start_matches(['*', ' ']).strip_prefix("subject:"))
        .unwrap_or_else(|| panic!("no server certificate: {said}"))
        .trim()
        .to_string()
}

/// Writes `text` to `path` as a deployment tool does: a new file renamed over the old.
fn replace_file(path: &Path, text: &str) {
    let new = path.with_extension("new");
    std::fs::write(&new, text).unwrap();
    std::fs::rename(&new, path).unwrap();
}

/// A renewed certificate and a changed password are in force without a restart; a change
/// that does not load, or one that would turn TLS off, keeps the settings in force.
#[test]
fn web_config_changes_are_picked_up_without_a_restart() {
    let dir = TempDir::new("export-tls-reload");
    test_certificates(&dir.0);
    let server_ext = "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n";
    certificate(&dir.0, "renewed", Some("ca"), server_ext);
    let config = dir.0.join("web.yml");
    let web_yml = |cert: &str, password: &str| {
        let hash = bcrypt::hash(password, 4).unwrap();
        format!(
            "tls_server_config:\n  cert_file: {cert}.crt\n  key_file: {cert}.key\n\
             basic_auth_users:\n  prometheus: '{hash}'\n"
        )
    };
    std::fs::write(&config, web_yml("server", "s3cret")).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_pauselab"));
    command.args(["export", "--listen", "127.0.0.1:0", "--web.config.file"]);
    command.arg(&config);
    let (_exporter, addr, stderr) = start_listening(command);
    let (lines, said) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        stderr
            .lines()
            .map_while(Result::ok)
            .try_for_each(|l| lines.send(l))
    });
    let url = format!("https://{addr}/metrics");
    let status_with = |password: &str| {
        let credentials = format!("prometheus:{password}");
        curl(&dir.0, &["-u", &credentials], &url).1
    };
    assert_eq!(status_with("s3cret"), 200);
    assert_eq!(served_subject(&dir.0, addr), "CN=pauselab-test-server");
    // Connections keep coming (as scrapes do) until the exporter says what it made of the
    // change.
    let next_word = |password: &str| -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            assert!(Instant::now() < deadline, "the change was never noticed");
            status_with(password);
            if let Ok(line) = said.recv_timeout(Duration::from_millis(200)) {
                return line;
            }
        }
    };

    replace_file(&config, &web_yml("renewed", "n3w"));
    let line = next_word("n3w");
    assert!(line.contains("read again: TLS, basic auth"), "{line}");
    assert_eq!(status_with("n3w"), 200);
    assert_eq!(status_with("s3cret"), 401);
    assert_eq!(served_subject(&dir.0, addr), "CN=pauselab-test-renewed");

    for (change, why) in [
        (
            "tls_server_config:\n  cert_file: renewed.crt\n  key_file: server.key\n",
            "key_file",
        ),
        ("basic_auth_users:\n  prometheus: 'plain'\n", "bcrypt"),
        (
            &format!(
                "basic_auth_users:\n  prometheus: '{}'\n",
                bcrypt::hash("x", 4).unwrap()
            )[..],
            "turning TLS on or off needs a restart",
        ),
    ] {
        replace_file(&config, change);
        let line = next_word("n3w");
        assert!(
            line.contains("the previous settings stay in force") && line.contains(why),
            "{line}"
        );
        assert_eq!(status_with("n3w"), 200, "after {change:?}");
        assert_eq!(served_subject(&dir.0, addr), "CN=pauselab-test-renewed");
    }
}

/// A web configuration that cannot be used stops the start: exit status 1 and one line
/// naming the file, never an exporter serving plain HTTP.
#[test]
fn a_bad_web_config_is_one_line_and_exit_1() {
    let dir = TempDir::new("export-tls-bad");
    test_certificates(&dir.0);
    let tls = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n";
    let cases = [
        ("missing.yml", None, "No such file"),
        ("empty.yml", Some(""), "sets neither"),
        ("broken.yml", Some("tls_server_config: [\n"), "not YAML"),
        (
            "plain-password.yml",
            Some("basic_auth_users:\n  prometheus: s3cret\n"),
            "not a bcrypt hash",
        ),
        (
            "typo.yml",
            Some("tls_server_config:\n  cert: server.crt\n"),
            "not supported",
        ),
        (
            "no-cert.yml",
            Some("tls_server_config:\n  cert_file: nothere.crt\n  key_file: server.key\n"),
            "nothere.crt",
        ),
        (
            "wrong-key.yml",
            Some("tls_server_config:\n  cert_file: server.crt\n  key_file: client.key\n"),
            "key_file",
        ),
        (
            "ca-without-auth.yml",
            Some(&format!("{tls}  client_ca_file: ca.crt\n")),
            "client_auth_type",
        ),
        (
            "tls10.yml",
            Some(&format!("{tls}  min_version: TLS10\n")),
            "TLS10",
        ),
    ];
    for (name, content, reason) in cases {
        let path = dir.0.join(name);
        if let Some(content) = content {
            std::fs::write(&path, content).unwrap();
        }
        let mut exporter = Command::new(env!("CARGO_BIN_EXE_pauselab"))
            .args(["export", "--listen", "127.0.0.1:0", "--web.config.file"])
            .arg(&path)
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = exporter.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = exporter.kill();
                panic!("{name}: the exporter started instead of refusing");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        exporter
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        assert_eq!(status.code(), Some(1), "{name}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
        assert!(
            stderr.contains(&path.display().to_string()),
            "{name}: {stderr}"
        );
        assert!(stderr.contains(reason), "{name}: {stderr}");
    }
}

/// The sum of the samples of `family` (e.g. `hotspot_gc_pause_seconds_count`) of one JVM.
fn sum_of(metrics: &str, family: &str, pid: u32) -> f64 {
    let pid_label = format!("pid=\"{pid}\"");
    metrics
        .lines()
        .filter_map(|l| l.strip_prefix(family)?.strip_prefix('{'))
        .filter(|l| l.contains(&pid_label))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

/// `--names otel`: a JDK 17 JVM's GC pauses also as OpenTelemetry's
/// `jvm_gc_duration_seconds{jvm_gc_name, jvm_gc_action}`, with as many pauses as
/// `hotspot_gc_pause_seconds` in the same scrape; without it, only pauselab's names.
#[test]
fn otel_names_count_the_same_gc_pauses() {
    let (_dir, jvm) = workload_in("export-otel", JDK17, &["-Xlog:gc:file=gc.log"]);
    let pid = jvm.pid();
    let deadline = Instant::now() + Duration::from_secs(20);
    let metrics = loop {
        let metrics = scrape_once(false, &["--names", "otel"]);
        if sum_of(&metrics, "hotspot_gc_pause_seconds_count", pid) >= 3.0 {
            break metrics;
        }
        assert!(
            Instant::now() < deadline,
            "no GC pauses of {pid}:\n{metrics}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let hotspot = sum_of(&metrics, "hotspot_gc_pause_seconds_count", pid);
    let otel = sum_of(&metrics, "jvm_gc_duration_seconds_count", pid);
    assert_eq!(otel, hotspot, "{metrics}");
    // System.gc() in G1 is a full collection: reported by the "G1 Old Generation" bean.
    let full = format!(
        "jvm_gc_duration_seconds_count{{pid=\"{pid}\",jvm_gc_name=\"G1 Old Generation\",jvm_gc_action=\"end of major GC\"}}"
    );
    assert!(
        sample(&metrics, &full).is_some_and(|n| n >= 1.0),
        "{metrics}"
    );
    assert!(metrics.contains("# TYPE jvm_gc_duration_seconds histogram\n"));
    promtool_check(&metrics);
    let plain = scrape_once(false, &[]);
    assert!(!plain.contains("jvm_gc_duration"), "{plain}");
}

/// A JVM whose GC log already holds 48 MB of pause lines when the exporter starts: the
/// exporter catches up 32 MB a scrape, counting each line as it is read, so it holds no
/// more memory for a log of a quarter of a million pauses than for a short one. Every
/// pause is counted once.
#[test]
fn catching_up_on_a_long_log_keeps_the_exporters_memory_flat() {
    let _turn = host_turn();
    let dir = TempDir::new("export-catch-up");
    let log = dir.0.join("gc.log");
    let mut text = String::new();
    let mut pauses = 0u64;
    while text.len() < 48 << 20 {
        let (s, ms) = (pauses / 1000, pauses % 1000);
        text.push_str(&format!(
            "[{s}.{ms:03}s][info][gc] GC({pauses}) Pause Young (Normal) (G1 Evacuation Pause) 24M->4M(256M) 1.234ms\n"
        ));
        pauses += 1;
    }
    std::fs::write(&log, text).unwrap();
    let options = format!("-Xlog:gc:file={}", log.display());
    let jvm = start_fake_jvm(65534, &[("JAVA_TOOL_OPTIONS", options.as_str())]);
    let (exporter, addr) = start_exporter(&[]);
    let deadline = Instant::now() + Duration::from_secs(60);
    let counted = loop {
        let metrics = get(addr, "/metrics").body;
        let counted = sum_of(&metrics, "hotspot_gc_pause_seconds_count", jvm.pid());
        if counted >= pauses as f64 || Instant::now() > deadline {
            break counted;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(counted, pauses as f64, "of {pauses} pause lines");
    let (_, _, peak_kb) = usage(exporter.pid());
    // Gathered before they were counted, one poll's lines took 231 MB.
    assert!(peak_kb < 32 * 1024, "VmHWM {peak_kb} kB");
}
