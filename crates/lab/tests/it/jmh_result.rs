//! The JMH result parser against a file JMH writes right now: the real benchmarks jar on
//! the default JDK, two JFR set-ups, short iterations (about 10 s).

use std::path::PathBuf;
use std::process::Command;

use pauselab_lab::java;
use pauselab_lab::jmh;

#[test]
fn parses_a_result_file_jmh_just_wrote() {
    let jar = java::find_jar(java::BENCHMARKS_JAR, "benchmarks").unwrap();
    let jdk = java::resolve_jdks(&[]).unwrap().remove(0);
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("jmh-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let result = dir.join(jmh::RESULT_FILE);
    let output = Command::new(&jdk.java)
        // JMH refuses to start while another JMH on the host holds /tmp/jmh.lock; this run
        // only checks the file format, so another benchmark running beside it is harmless.
        .arg("-Djmh.ignoreLock=true")
        .arg("-cp")
        .arg(&jar)
        .arg("org.openjdk.jmh.Main")
        .args([
            "SocketWriteBenchmark.writeOneByte",
            "-p",
            "jfr=off,socket-write-enabled",
        ])
        .args([
            "-f", "1", "-wi", "1", "-w", "500ms", "-i", "3", "-r", "500ms",
        ])
        .args(["-prof", "gc", "-foe", "true", "-rf", "json", "-rff"])
        .arg(&result)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "JMH failed: {}",
        String::from_utf8_lossy(&output.stdout)
    );

    let results = jmh::read(&result).unwrap();
    assert_eq!(results.len(), 2, "{results:?}");
    for (r, setup) in results.iter().zip(["off", "socket-write-enabled"]) {
        assert_eq!(r.params["jfr"], setup);
        assert_eq!(r.mode, "avgt");
        assert_eq!(r.forks, Some(1));
        assert_eq!(r.primary.unit, "us/op");
        assert!(r.primary.value > 0.0, "{r:?}");
        // Three iterations are enough for JMH to give an error.
        assert!(r.primary.error.is_some(), "{r:?}");
        assert_eq!(r.alloc_norm.as_ref().unwrap().unit, "B/op");
    }
    // Every write emits an event with its stack trace; without JFR nothing is allocated.
    let on = results[1].alloc_norm.as_ref().unwrap().value;
    assert!(on > 50.0, "event on: {on} B/op");
    let off = results[0].alloc_norm.as_ref().unwrap().value;
    assert!(off < on / 10.0, "off {off} B/op, on {on} B/op");

    let readings = jmh::readings(&results);
    assert!(readings.iter().any(|r| r.name
        == "jmh.writeOneByte(jfr=socket-write-enabled).gc.alloc.rate.norm"
        && r.unit == "B/op"));
    std::fs::remove_dir_all(&dir).unwrap();
}
