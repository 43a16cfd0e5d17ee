//! The .deb of `make package`, built by scripts/package.sh from this test build's binary
//! (the release binary goes through the same script), inspected with dpkg-deb, installed
//! with `dpkg --root` into a scratch root whose dpkg database knows only the C library, and
//! used there: `--version`, the man page, and the bash, zsh and fish completions.
//! Needs dpkg-dev, zsh and fish (Debian packages; `make test` installs them).
//!
//! The ignored tests check what `make dist` and `make package` built from the portable
//! release binary under target/: `make dist-test` builds them and runs these tests.

use crate::process_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use process_support::{pauselab_version, stdout_of as stdout};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A dpkg database in `root` in which exactly `packages` of this host are installed.
fn dpkg_root(root: &Path, packages: &[&str]) {
    let admin = root.join("var/lib/dpkg");
    std::fs::create_dir_all(admin.join("info")).unwrap();
    std::fs::create_dir_all(admin.join("updates")).unwrap();
    std::fs::write(admin.join("available"), "").unwrap();
    let status = if packages.is_empty() {
        String::new()
    } else {
        stdout(Command::new("dpkg-query").arg("-s").args(packages))
    };
    std::fs::write(admin.join("status"), status).unwrap();
    for package in packages {
        let arch = stdout(Command::new("dpkg-query").args(["-W", "-f=${Architecture}", package]));
        std::fs::write(
            admin.join("info").join(format!("{package}:{arch}.list")),
            "",
        )
        .unwrap();
    }
}

/// A man page as `man -l` renders it, words separated by single spaces (it justifies lines).
fn man(page: &Path) -> String {
    let rendered = stdout(Command::new("man").arg("-l").arg(page));
    rendered.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An artifact of `make dist` or `make package` under target/.
fn built(path: &str) -> PathBuf {
    let path = repo_root().join("target").join(path);
    assert!(path.exists(), "{path:?} missing: run `make dist-test`");
    path
}

/// The highest `GLIBC_x.y[.z]` symbol version among `binary`'s dynamic symbols (objdump -T).
fn highest_glibc_version(binary: &Path) -> Vec<u32> {
    let symbols = stdout(Command::new("objdump").arg("-T").arg(binary));
    symbols
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .filter_map(|word| word.strip_prefix("GLIBC_"))
        .filter_map(|v| v.split('.').map(|n| n.parse().ok()).collect())
        .max()
        .unwrap_or_else(|| panic!("no GLIBC_ symbol version in objdump -T {binary:?}"))
}

#[test]
#[ignore = "needs `make dist`; run by `make dist-test`"]
fn the_dist_tarball_holds_a_binary_for_glibc_2_17_that_runs_here() {
    let name = format!("pauselab-{}-x86_64-linux", pauselab_version());
    let tarball = built(&format!("dist/{name}.tar.gz"));
    stdout(
        Command::new("sha256sum")
            .args(["--check", "--strict"])
            .arg(format!("{name}.tar.gz.sha256"))
            .current_dir(tarball.parent().unwrap()),
    );

    let scratch = tempfile::tempdir().unwrap();
    stdout(
        Command::new("tar")
            .arg("-xzf")
            .arg(&tarball)
            .arg("-C")
            .arg(scratch.path()),
    );
    let top = scratch.path().join(&name);
    for expected in [
        "bin/pauselab",
        "share/man/man1/pauselab.1.gz",
        "share/man/man1/pauselab-export.1.gz",
        "share/bash-completion/completions/pauselab",
        "share/zsh/site-functions/_pauselab",
        "share/fish/vendor_completions.d/pauselab.fish",
        "contrib/systemd/pauselab-export.service",
        "contrib/systemd/pauselab.default",
        "contrib/kubernetes/daemonset.yaml",
        "contrib/prometheus/pauselab-alerts.yml",
        "contrib/grafana/pauselab.json",
        "LICENSE",
        "README.md",
    ] {
        assert!(
            top.join(expected).is_file(),
            "{expected} not in {tarball:?}"
        );
    }

    // The check can fail: this test build, linked against this host's glibc (2.36 on
    // Debian 12), needs more than 2.17.
    let host_linked = highest_glibc_version(Path::new(env!("CARGO_BIN_EXE_pauselab")));
    assert!(host_linked > vec![2, 17], "{host_linked:?}");
    let binary = top.join("bin/pauselab");
    let glibc = highest_glibc_version(&binary);
    assert!(
        glibc <= vec![2, 17],
        "{binary:?} needs GLIBC_{glibc:?}: it would not start on glibc 2.17 (CentOS 7)"
    );
    let no_debug_info = stdout(Command::new("readelf").arg("-S").arg(&binary));
    assert!(!no_debug_info.contains(".debug_info"), "{no_debug_info}");

    assert_eq!(
        stdout(Command::new(&binary).arg("--version")).trim(),
        format!("pauselab {}", pauselab_version())
    );
    // The same report as this test build gives: the same code, only linked differently.
    let fixture = repo_root().join("fixtures/gclogs/g1-jdk17.log.gz");
    let analyze = |pauselab: &Path| {
        stdout(
            Command::new(pauselab)
                .args(["analyze", "--json"])
                .arg(&fixture),
        )
    };
    let report = analyze(&binary);
    assert!(report.contains("\"Pause Young (Normal)\""), "{report}");
    assert_eq!(report, analyze(Path::new(env!("CARGO_BIN_EXE_pauselab"))));
}

fn dpkg(root: &Path) -> Command {
    let mut command = Command::new("dpkg");
    command.arg(format!("--root={}", root.display()));
    command
}

#[test]
fn the_deb_installs_and_its_binary_man_pages_and_completions_work() {
    let scratch = tempfile::tempdir().unwrap();
    let built = stdout(
        Command::new(repo_root().join("scripts/package.sh"))
            // gzip: a few seconds instead of xz's 10 to 40 for the test build's binary.
            .env("DPKG_DEB_COMPRESSOR_TYPE", "gzip")
            .arg("deb")
            .arg(env!("CARGO_BIN_EXE_pauselab"))
            .arg(scratch.path().join("out")),
    );
    let deb = PathBuf::from(built.trim());
    let version = pauselab_version();
    let version = version.as_str();
    assert!(
        deb.ends_with(format!("pauselab_{version}_amd64.deb")),
        "{deb:?}"
    );

    let info = stdout(Command::new("dpkg-deb").arg("-I").arg(&deb));
    for field in [
        "Package: pauselab".to_string(),
        format!("Version: {version}"),
        "Architecture: amd64".to_string(),
    ] {
        assert!(info.contains(&format!(" {field}\n")), "{field} in\n{info}");
    }
    let depends = info
        .lines()
        .find_map(|l| l.trim().strip_prefix("Depends: "))
        .unwrap_or_else(|| panic!("no Depends in\n{info}"));
    assert!(depends.contains("libc6 (>= 2."), "{depends}");

    let listing = stdout(Command::new("dpkg-deb").arg("-c").arg(&deb));
    let paths: Vec<&str> = listing
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    for expected in [
        "./usr/bin/pauselab",
        "./usr/share/man/man1/pauselab.1.gz",
        "./usr/share/man/man1/pauselab-export.1.gz",
        "./usr/share/man/man1/pauselab-lab-run.1.gz",
        "./usr/share/bash-completion/completions/pauselab",
        "./usr/share/zsh/vendor-completions/_pauselab",
        "./usr/share/fish/vendor_completions.d/pauselab.fish",
        "./lib/systemd/system/pauselab-export.service",
        "./etc/default/pauselab",
    ] {
        assert!(paths.contains(&expected), "{expected} not in\n{listing}");
    }
    // Packaging plumbing stays out of the user's manual.
    assert!(!paths.iter().any(|p| p.contains("generate")), "{listing}");

    // Without the C library the dependency is refused: Depends is really checked.
    let bare = scratch.path().join("bare");
    dpkg_root(&bare, &[]);
    let refused = dpkg(&bare).arg("-i").arg(&deb).output().unwrap();
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("depends on libc6"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );

    let root = scratch.path().join("root");
    let dependencies: Vec<&str> = depends
        .split(", ")
        .map(|d| d.split_whitespace().next().unwrap())
        .collect();
    dpkg_root(&root, &dependencies);
    stdout(dpkg(&root).arg("-i").arg(&deb));

    let installed = root.join("usr/bin/pauselab");
    let no_debug_info = stdout(Command::new("readelf").arg("-S").arg(&installed));
    assert!(!no_debug_info.contains(".debug_info"), "{no_debug_info}");
    assert_eq!(
        stdout(Command::new(&installed).arg("--version")).trim(),
        format!("pauselab {version}")
    );

    let unit =
        std::fs::read_to_string(root.join("lib/systemd/system/pauselab-export.service")).unwrap();
    let exec_start = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .unwrap_or_else(|| panic!("no ExecStart in\n{unit}"));
    assert_eq!(exec_start, "/usr/bin/pauselab export $PAUSELAB_EXPORT_ARGS");
    // The flags come from the packaged /etc/default/pauselab, a configuration file that
    // dpkg keeps when the user changed it.
    assert!(
        unit.contains("\nEnvironmentFile=-/etc/default/pauselab\n"),
        "{unit}"
    );
    let defaults = root.join("etc/default/pauselab");
    let conffiles = stdout(
        Command::new("dpkg-query")
            .arg(format!(
                "--admindir={}",
                root.join("var/lib/dpkg").display()
            ))
            .args(["-W", "-f=${Conffiles}", "pauselab"]),
    );
    assert!(
        conffiles.trim().starts_with("/etc/default/pauselab "),
        "{conffiles}"
    );
    // The unit's command line with the file's flags, split at spaces as systemd does with
    // an unbraced $VAR, is one the installed binary accepts.
    let scrape = stdout(Command::new("bash").arg("-c").arg(format!(
        "set -a; . '{}'; exec {} --once",
        defaults.display(),
        exec_start.replace("/usr/bin/pauselab", &installed.display().to_string())
    )));
    assert!(scrape.contains("pauselab_export_scrapes_total"), "{scrape}");
    // systemd's own check (unknown keys, bad values, a missing binary), with the binary
    // where this root has it.
    let checked_unit = scratch.path().join("pauselab-export.service");
    let unit_here = unit.replace("/usr/bin/pauselab", &installed.display().to_string());
    std::fs::write(&checked_unit, unit_here).unwrap();
    let verify = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&checked_unit)
        .output()
        .expect("systemd-analyze (Debian package systemd)");
    assert!(
        verify.status.success() && verify.stderr.is_empty(),
        "systemd-analyze verify: {}",
        String::from_utf8_lossy(&verify.stderr)
    );

    let page = man(&root.join("usr/share/man/man1/pauselab.1.gz"));
    assert!(page.contains("NAME pauselab - Find, reproduce"), "{page}");
    assert!(page.contains("pauselab-export(1)"), "{page}");
    let export_page = man(&root.join("usr/share/man/man1/pauselab-export.1.gz"));
    assert!(export_page.contains("--all-counters"), "{export_page}");

    // Bash: the function is registered and completes a subcommand and an option.
    let bash = root.join("usr/share/bash-completion/completions/pauselab");
    let completed = stdout(Command::new("bash").arg("-c").arg(format!(
        "source '{}'; complete -p pauselab; \
         COMP_WORDS=(pauselab ex); COMP_CWORD=1; _pauselab pauselab ex pauselab; echo \"${{COMPREPLY[*]}}\"; \
         COMP_WORDS=(pauselab export --all); COMP_CWORD=2; _pauselab pauselab --all export; echo \"${{COMPREPLY[*]}}\"",
        bash.display()
    )));
    let lines: Vec<&str> = completed.lines().collect();
    assert_eq!(lines.len(), 3, "{completed}");
    assert!(lines[0].ends_with("-F _pauselab pauselab"), "{completed}");
    assert_eq!(lines[1], "export", "{completed}");
    assert_eq!(lines[2], "--all-counters", "{completed}");

    // Fish: the installed file completes subcommands with their descriptions.
    let fish = root.join("usr/share/fish/vendor_completions.d/pauselab.fish");
    let completed = stdout(
        Command::new("fish")
            .arg("--no-config")
            .arg("-c")
            .arg(format!(
                "source '{}'; complete -C 'pauselab ex'",
                fish.display()
            )),
    );
    assert!(
        completed.starts_with("export\tServe the counters"),
        "{completed}"
    );

    // Zsh: compinit finds the function in the vendor directory by its #compdef line.
    let zsh_dir = root.join("usr/share/zsh/vendor-completions");
    let registered = stdout(Command::new("zsh").arg("-fc").arg(format!(
        "fpath=('{}' $fpath); autoload -Uz compinit; compinit -u -d '{}'; print ${{_comps[pauselab]}}",
        zsh_dir.display(),
        scratch.path().join("zcompdump").display()
    )));
    assert_eq!(registered.trim(), "_pauselab");

    // Removal leaves nothing of the package behind but its configuration, which purging
    // removes.
    stdout(dpkg(&root).args(["-r", "pauselab"]));
    for gone in [
        "usr/bin/pauselab",
        "usr/share/man/man1/pauselab.1.gz",
        "lib/systemd/system/pauselab-export.service",
    ] {
        assert!(!root.join(gone).exists(), "{gone} left after dpkg -r");
    }
    assert!(defaults.exists(), "dpkg -r removed the configuration");
    stdout(dpkg(&root).args(["-P", "pauselab"]));
    assert!(!defaults.exists(), "{defaults:?} left after dpkg -P");
}

/// `rpm` on a root of its own, with its database where RPM distributions keep it (Debian's
/// rpm would put it in the user's home).
fn rpm(root: &Path) -> Command {
    let mut command = Command::new("rpm");
    command
        .arg(format!("--root={}", root.display()))
        .arg("--dbpath=/var/lib/rpm");
    command
}

/// Where the .rpm has each file of the .deb: at the places of RPM distributions.
fn rpm_path_of(deb_path: &str) -> String {
    let moved = [
        ("/lib/systemd/system/", "/usr/lib/systemd/system/"),
        (
            "/usr/share/zsh/vendor-completions/",
            "/usr/share/zsh/site-functions/",
        ),
        (
            "/usr/share/doc/pauselab/copyright",
            "/usr/share/licenses/pauselab/LICENSE",
        ),
    ];
    for (deb, rpm) in moved {
        if let Some(rest) = deb_path.strip_prefix(deb) {
            return format!("{rpm}{rest}");
        }
    }
    deb_path.to_string()
}

#[test]
#[ignore = "needs `make package`; run by `make dist-test`"]
fn the_rpm_holds_the_debs_files_and_installs_into_an_empty_root() {
    let version = pauselab_version();
    let deb = built(&format!("debian/pauselab_{version}_amd64.deb"));
    let package = built(&format!("rpm/pauselab-{version}-1.x86_64.rpm"));
    let depends = stdout(Command::new("dpkg-deb").arg("-f").arg(&deb).arg("Depends"));
    assert_eq!(depends.trim(), "libc6 (>= 2.17)");

    // What the rpm of CentOS 7 and Amazon Linux 2 (4.11) can check and unpack: glibc up
    // to 2.17, an xz payload (not zstd).
    let requires = stdout(
        rpm(Path::new("/"))
            .args(["-qp", "--requires"])
            .arg(&package),
    );
    assert!(
        requires.contains("libc.so.6(GLIBC_2.17)(64bit)"),
        "{requires}"
    );
    for requirement in requires.lines() {
        if let Some(glibc) = requirement.split("(GLIBC_").nth(1) {
            let version: Vec<u32> = glibc
                .trim_end_matches(")(64bit)")
                .split('.')
                .map(|n| n.parse().unwrap())
                .collect();
            assert!(version <= vec![2, 17], "{requirement}");
        }
        if let Some(feature) = requirement.strip_prefix("rpmlib(") {
            let feature = feature.split(')').next().unwrap();
            assert!(
                [
                    "CompressedFileNames",
                    "FileDigests",
                    "PayloadFilesHavePrefix",
                    "PayloadIsXz"
                ]
                .contains(&feature),
                "{requirement}: rpm 4.11 may not know it"
            );
        }
    }

    // The .deb's files, byte for byte, each at its RPM place.
    let scratch = tempfile::tempdir().unwrap();
    let unpacked = scratch.path().join("deb");
    stdout(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&unpacked));
    let deb_listing = stdout(Command::new("dpkg-deb").arg("-c").arg(&deb));
    let deb_files: Vec<&str> = deb_listing
        .lines()
        .filter(|l| l.starts_with('-'))
        .map(|l| l.split_whitespace().last().unwrap().trim_start_matches('.'))
        .collect();
    let mut expected: Vec<String> = deb_files.iter().map(|f| rpm_path_of(f)).collect();
    expected.sort();
    let config_files = stdout(rpm(Path::new("/")).arg("-qpc").arg(&package));
    assert_eq!(config_files, "/etc/default/pauselab\n");
    let listing = stdout(rpm(Path::new("/")).arg("-qpl").arg(&package));
    let rpm_files: Vec<&str> = listing.lines().collect();
    assert_eq!(rpm_files, expected);

    let root = scratch.path().join("root");
    std::fs::create_dir(&root).unwrap();
    stdout(rpm(&root).arg("--initdb"));
    // The C library is really required: an empty root refuses the package.
    let refused = rpm(&root).arg("-i").arg(&package).output().unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("libc.so.6(GLIBC_2.17)(64bit) is needed by pauselab"),
        "{stderr}"
    );
    stdout(rpm(&root).args(["-i", "--nodeps"]).arg(&package));
    for file in &deb_files {
        if file.ends_with("/copyright") {
            continue;
        }
        let installed = root.join(rpm_path_of(file).trim_start_matches('/'));
        let packed = unpacked.join(file.trim_start_matches('/'));
        assert!(
            std::fs::read(&installed).unwrap() == std::fs::read(&packed).unwrap(),
            "{installed:?} differs from the .deb's {file}"
        );
    }
    let license = std::fs::read_to_string(root.join("usr/share/licenses/pauselab/LICENSE"));
    assert!(license.unwrap().contains("Apache License"));
    // rpm's own check of every installed file against the package's digests and modes.
    assert_eq!(stdout(rpm(&root).args(["-V", "--nodeps", "pauselab"])), "");
    assert_eq!(
        stdout(Command::new(root.join("usr/bin/pauselab")).arg("--version")).trim(),
        format!("pauselab {version}")
    );

    stdout(rpm(&root).args(["-e", "--nodeps", "pauselab"]));
    for file in &rpm_files {
        let gone = root.join(file.trim_start_matches('/'));
        assert!(!gone.exists(), "{file} left after rpm -e");
    }
}
