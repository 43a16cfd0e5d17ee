//! Real JVMs for tests: a small garbage-making workload, each in its own mount namespace so
//! its `/tmp` (and with it the hsperf directory) can be tmpfs, a disk directory or the slow
//! device without touching the host's `/tmp`.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use pauselab_hsperf::{Reader, Source};

const JDK: &str = "/usr/lib/jvm/java-17-openjdk-amd64";

/// Allocates 4 MiB arrays, keeping two live, one every 5 ms: a young GC (and safepoint)
/// every few hundred ms without much CPU.
const WORKLOAD: &str = r#"
public class Garbage {
    public static void main(String[] args) throws Exception {
        byte[][] live = new byte[2][];
        long end = System.nanoTime() + Long.parseLong(args[0]) * 1_000_000_000L;
        for (int i = 0; System.nanoTime() < end; i++) {
            live[i % 2] = new byte[4 << 20];
            Thread.sleep(5);
        }
    }
}
"#;

pub fn available() -> bool {
    Path::new(JDK).join("bin/javac").exists() && Path::new("/usr/bin/unshare").exists()
}

/// The compiled workload, shared by every test run (recompiled when the source changes).
fn classes() -> &'static Path {
    static CLASSES: OnceLock<PathBuf> = OnceLock::new();
    CLASSES.get_or_init(|| {
        let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let dir = target.join("garbage-classes");
        let current = std::fs::read_to_string(dir.join("Garbage.java"))
            .is_ok_and(|s| s == WORKLOAD)
            && dir.join("Garbage.class").exists();
        if current {
            return dir;
        }
        // Compile next to it and rename, so a concurrent or killed run never sees half a build.
        let fresh = target.join(format!("garbage-classes-{}", std::process::id()));
        std::fs::create_dir_all(&fresh).unwrap();
        std::fs::write(fresh.join("Garbage.java"), WORKLOAD).unwrap();
        let status = Command::new(format!("{JDK}/bin/javac"))
            .args([
                "-d",
                fresh.to_str().unwrap(),
                fresh.join("Garbage.java").to_str().unwrap(),
            ])
            .status()
            .unwrap();
        assert!(status.success(), "javac failed");
        let _ = std::fs::remove_dir_all(&dir);
        if std::fs::rename(&fresh, &dir).is_err() {
            return fresh;
        }
        dir
    })
}

/// What the JVM's `/tmp` is.
pub enum Tmp<'a> {
    /// A fresh tmpfs.
    Tmpfs,
    /// A bind mount of this directory.
    Bind(&'a Path),
}

pub struct TestJvm {
    child: Child,
    pub pid: u32,
}

impl TestJvm {
    /// Starts the workload for `seconds` with `jvm_args` and waits until its counters are
    /// readable.
    pub fn start(tmp: Tmp, jvm_args: &[&str], seconds: u32) -> TestJvm {
        let mount = match tmp {
            Tmp::Tmpfs => "mount -t tmpfs tmpfs /tmp".to_string(),
            Tmp::Bind(dir) => format!("mount --bind '{}' /tmp", dir.display()),
        };
        // The class goes into the JVM's new /tmp, copied through a descriptor opened
        // before the mount: the checkout may itself be under /tmp, hidden from the JVM.
        let script = format!(
            "exec 3<\"$GARBAGE_CLASSES\" && {mount} && mkdir -p /tmp/.classes \
             && cp /proc/self/fd/3/Garbage.class /tmp/.classes/ && exec 3<&- \
             && exec {JDK}/bin/java \"$@\""
        );
        let mut command = Command::new("unshare");
        command
            .args([
                "-m",
                "--propagation",
                "private",
                "sh",
                "-c",
                &script,
                "java",
            ])
            .args(jvm_args)
            .env("GARBAGE_CLASSES", classes())
            .args(["-cp", "/tmp/.classes", "Garbage", &seconds.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: prctl is async-signal-safe; the JVM dies with the test thread.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let child = command.spawn().expect("start java");
        let jvm = TestJvm {
            pid: child.id(),
            child,
        };
        jvm.wait_until_readable();
        jvm
    }

    fn wait_until_readable(&self) {
        let started = Instant::now();
        loop {
            let ready = Reader::open(self.pid, Source::Auto)
                .and_then(|mut r| r.snapshot())
                .map(|s| {
                    s.value_str("sun.rt.javaCommand").is_some()
                        && s.value_i64("sun.rt.safepoints").is_some()
                })
                .unwrap_or(false);
            if ready {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "JVM {} never became readable",
                self.pid
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for TestJvm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
