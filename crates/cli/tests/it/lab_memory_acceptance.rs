//! Acceptance of the built-in `pretouch`, `memory-pressure`, `swap` and `startup-pressure`
//! experiments at their default durations on JDK 17 (root; memory-pressure changes the
//! host's THP mode and fills its memory, swap and startup-pressure turn a swap file on and
//! set swappiness, then all undo it): run by `make acceptance`, not `make test`.

use crate::lab_support;
use lab_support::measurement;

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

const JDK17: &str = "/usr/lib/jvm/java-17-openjdk-amd64";
const THP_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

fn run(experiment: &str) -> Value {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("acceptance-{experiment}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let output = Command::new(env!("CARGO_BIN_EXE_pauselab"))
        .args(["lab", "run", experiment, "--json", "--jdk", JDK17, "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let verdict: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout} {}", String::from_utf8_lossy(&output.stderr)));
    for v in verdict["variants"].as_array().unwrap() {
        eprintln!(
            "{:<24} {} {}",
            v["variant"].as_str().unwrap_or_default(),
            v["skipped"],
            v["measurements"]
        );
    }
    verdict
}

fn variant<'a>(verdict: &'a Value, name: &str) -> &'a Value {
    verdict["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["variant"] == name)
        .unwrap_or_else(|| panic!("no variant {name}"))
}

#[test]
#[ignore = "about 2 minutes: make acceptance"]
fn pretouch_start_up_grows_with_the_pre_touched_heap() {
    let verdict = run("pretouch");
    let mut previous = 0.0;
    for size in ["1g", "4g", "8g"] {
        let plain = variant(&verdict, size);
        let touched = variant(&verdict, &format!("{size}-pretouch"));
        if touched["skipped"].is_string() {
            eprintln!("{size}: skipped here: {}", touched["skipped"]);
            continue;
        }
        let t = measurement(touched, "workload.uptime_at_main_ms").unwrap();
        let p = measurement(plain, "workload.uptime_at_main_ms").unwrap();
        assert!(t > p, "{size}: pre-touched {t} ms, plain {p} ms");
        assert!(
            t > previous,
            "{size}: {t} ms, a smaller heap took {previous} ms"
        );
        previous = t;
        assert!(measurement(touched, "workload.alloc_mib_per_s").unwrap() > 0.0);
    }
}

#[test]
#[ignore = "about 3-5 minutes, changes THP and fills memory: make acceptance"]
fn memory_pressure_governs_thp_and_restores_the_host() {
    let before = std::fs::read_to_string(THP_ENABLED).unwrap();
    let verdict = run("memory-pressure");
    assert_eq!(std::fs::read_to_string(THP_ENABLED).unwrap(), before);
    for name in ["never", "never-pressure"] {
        let v = variant(&verdict, name);
        assert_eq!(measurement(v, "thp.thp_fault_alloc"), Some(0.0), "{v}");
    }
    for name in [
        "never-pressure",
        "always-pressure",
        "madvise-pressure",
        "dynamic-pressure",
    ] {
        let v = variant(&verdict, name);
        assert!(measurement(v, "pressure.held_mib").unwrap() > 0.0, "{v}");
        assert!(
            measurement(v, "workload.kallocs_per_s").unwrap() > 0.0,
            "{v}"
        );
    }
    // Calm: THP stays on. Near the limit (MemAvailable about 3 GiB, under the governor's
    // 4 GiB): off from before the JVM starts to the end of the turn.
    let calm = variant(&verdict, "dynamic");
    assert_eq!(
        measurement(calm, "thp.governor_turned_off"),
        Some(0.0),
        "{calm}"
    );
    let pressed = variant(&verdict, "dynamic-pressure");
    assert_eq!(
        measurement(pressed, "thp.governor_turned_off"),
        Some(1.0),
        "{pressed}"
    );
    assert!(
        measurement(pressed, "thp.governor_off_s").unwrap() > 5.0,
        "{pressed}"
    );
}

fn swap_state() -> (String, String) {
    let swaps: Vec<String> = std::fs::read_to_string("/proc/swaps")
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or_default().to_string())
        .collect();
    (
        swaps.join(" "),
        std::fs::read_to_string("/proc/sys/vm/swappiness").unwrap(),
    )
}

#[test]
#[ignore = "about 4-5 minutes, turns swap on: make acceptance"]
fn swap_stalls_unless_the_jvm_is_kept_out_of_swap() {
    let before = swap_state();
    let started = std::time::Instant::now();
    let verdict = run("swap");
    let took = started.elapsed();
    assert_eq!(swap_state(), before, "swap or swappiness not restored");
    assert!(took.as_secs() < 300, "took {took:?}");
    let default = variant(&verdict, "default");
    assert_eq!(default["verdict"], "stalls", "{default}");
    let max = measurement(default, "gc.max_pause_ms").unwrap();
    assert!(max >= 1000.0, "{default}");
    // The longest pause waited for swap-ins: a second or more of it off-CPU (real above
    // user + sys), and more time in the kernel than in the JVM.
    let real = measurement(default, "gc.max_pause_real_ms").unwrap();
    let user = measurement(default, "gc.max_pause_user_ms").unwrap();
    let sys = measurement(default, "gc.max_pause_sys_ms").unwrap();
    assert!(real >= user + sys + 1000.0 && sys > user, "{default}");
    assert!(
        measurement(default, "vm.pswpin").unwrap() > 10_000.0,
        "{default}"
    );
    for name in ["no-swap", "pretouch-no-swap"] {
        let v = variant(&verdict, name);
        assert_ne!(v["verdict"], "stalls", "{v}");
        assert_eq!(measurement(v, "memcg.jvm_peak_swap_mib"), Some(0.0), "{v}");
        // Nothing swapped in for the JVM, and no pause of a second or more.
        assert!(
            measurement(v, "process.major_faults").unwrap() < 100.0,
            "{v}"
        );
        assert_eq!(measurement(v, "gc.pauses_over_1s"), Some(0.0), "{v}");
        let kallocs = measurement(v, "workload.kallocs_per_s").unwrap();
        let swapped = measurement(default, "workload.kallocs_per_s").unwrap();
        assert!(kallocs > swapped, "{name}: {kallocs} vs default {swapped}");
    }
}

#[test]
#[ignore = "about 4-5 minutes, turns swap on: make acceptance"]
fn startup_under_pressure_faults_the_heap_back_in_unless_pre_touched_and_protected() {
    let before = swap_state();
    let verdict = run("startup-pressure");
    assert_eq!(swap_state(), before, "swap or swappiness not restored");
    // Without protection the JVM's pages go to swap and fault back in. How long the
    // collections that meet them get depends on the swap device and the host's load: 1.2-2 s
    // on an idle host with a virtio disk, 3-10 s on a busy one (docs/experiments/
    // startup-pressure.md); the faults and the swap show every time.
    for name in ["pressure", "pressure-pretouch"] {
        let v = variant(&verdict, name);
        assert!(
            measurement(v, "process.major_faults").unwrap() > 1000.0,
            "{v}"
        );
        assert!(
            measurement(v, "memcg.jvm_peak_swap_mib").unwrap() > 0.0,
            "{v}"
        );
    }
    let touched = variant(&verdict, "pressure-pretouch");
    let protected = variant(&verdict, "pressure-pretouch-protected");
    assert_ne!(protected["verdict"], "stalls", "{protected}");
    let longest = |v: &Value| v["safepoints"]["max_ms"].as_f64().unwrap();
    assert!(
        longest(touched) > longest(protected),
        "{touched} {protected}"
    );
    assert_eq!(
        measurement(protected, "memcg.jvm_peak_swap_mib"),
        Some(0.0),
        "{protected}"
    );
    assert!(measurement(protected, "process.major_faults").unwrap() < 100.0);
    // Its live set is built from resident pages: faster than from swapped-out ones.
    let fill = |v: &Value| measurement(v, "workload.fill_s").unwrap();
    assert!(fill(protected) < fill(touched), "{protected} {touched}");
}
