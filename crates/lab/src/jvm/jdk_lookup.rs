//! `--jdk 11`: finds a JDK home of a major version among the installed JDKs and the
//! runtimes `make jdks` (scripts/fetch-jdks.sh) fetched.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::LabError;

/// Where JDKs of a given major version are looked for, in this order.
#[derive(Debug, Clone)]
pub struct JdkPlaces {
    /// `$JAVA_HOME`: the user's own pick comes first.
    pub java_home: Option<PathBuf>,
    /// Every directory under it is a candidate (`/usr/lib/jvm`, Debian and Temurin packages).
    pub installed: PathBuf,
    /// `make jdks` puts JDK N in `<cache>/N`.
    pub cache: Option<PathBuf>,
}

impl JdkPlaces {
    /// `$JAVA_HOME`, `/usr/lib/jvm`, and `${PAUSELAB_JDK_CACHE:-$HOME/.cache/pauselab/jdks}`
    /// (the same default as scripts/fetch-jdks.sh).
    pub fn from_env() -> JdkPlaces {
        let cache = std::env::var_os("PAUSELAB_JDK_CACHE")
            .filter(|c| !c.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/pauselab/jdks"))
            });
        JdkPlaces {
            java_home: std::env::var_os("JAVA_HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from),
            installed: PathBuf::from("/usr/lib/jvm"),
            cache,
        }
    }

    /// The first JDK home of major version `major`; several under `installed` are taken in
    /// name order, symlinked duplicates once.
    pub fn find(&self, major: u32) -> Result<PathBuf, LabError> {
        let mut candidates: Vec<PathBuf> = Vec::new();
        candidates.extend(self.java_home.clone());
        if let Ok(entries) = std::fs::read_dir(&self.installed) {
            let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            dirs.sort();
            candidates.extend(dirs);
        }
        if let Some(cache) = &self.cache {
            candidates.push(cache.join(major.to_string()));
        }
        let mut seen: Vec<PathBuf> = Vec::new();
        for candidate in candidates {
            let Ok(real) = std::fs::canonicalize(&candidate) else {
                continue;
            };
            if seen.contains(&real) || !real.join("bin/java").is_file() {
                continue;
            }
            seen.push(real);
            if home_major(&candidate) == Some(major) {
                return Ok(candidate);
            }
        }
        let cache = self
            .cache
            .as_ref()
            .map(|c| format!(", {}", c.join(major.to_string()).display()))
            .unwrap_or_default();
        Err(LabError::Java(format!(
            "no JDK {major} found (looked in $JAVA_HOME, {}/*{cache}): run `make jdks` (JDK 11 and 21) or pass a JDK home",
            self.installed.display()
        )))
    }
}

/// A `--jdk` value that is a bare number (`11`) names a major version; anything else is a
/// path (`./11` for a directory of that name).
pub fn as_major(arg: &Path) -> Option<u32> {
    let text = arg.to_str()?;
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// The major version of a JDK home: its `release` file, else `bin/java -version`.
pub fn home_major(home: &Path) -> Option<u32> {
    if let Ok(release) = std::fs::read_to_string(home.join("release")) {
        if let Some(line) = release.lines().find(|l| l.starts_with("JAVA_VERSION=")) {
            return parse_major(line);
        }
    }
    let output = Command::new(home.join("bin/java"))
        .arg("-version")
        .output()
        .ok()?;
    parse_major(String::from_utf8_lossy(&output.stderr).lines().next()?)
}

/// The version in the first quoted string: `openjdk version "17.0.15" ...` -> 17,
/// `JAVA_VERSION="11.0.13"` -> 11, `java version "1.8.0_392"` -> 8.
pub fn parse_major(line: &str) -> Option<u32> {
    let quoted = line.split('"').nth(1)?;
    let mut parts = quoted.split(['.', '-', '+', '_']);
    let first: u32 = parts.next()?.parse().ok()?;
    if first == 1 {
        return parts.next()?.parse().ok();
    }
    Some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("pauselab-jdk-lookup-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn installed_only() -> JdkPlaces {
        JdkPlaces {
            java_home: None,
            installed: PathBuf::from("/usr/lib/jvm"),
            cache: None,
        }
    }

    /// Every JDK installed on this host is found by its major version, and `java -version`
    /// of what is found agrees.
    #[test]
    fn finds_each_installed_jdk_by_major() {
        let places = installed_only();
        let mut majors: Vec<u32> = std::fs::read_dir("/usr/lib/jvm")
            .expect("/usr/lib/jvm: the host's JDKs")
            .flatten()
            .filter(|e| e.path().join("bin/java").is_file())
            .filter_map(|e| home_major(&e.path()))
            .collect();
        majors.sort_unstable();
        majors.dedup();
        assert!(majors.contains(&17), "JDK 17 is installed here: {majors:?}");
        for major in majors {
            let home = places.find(major).unwrap();
            let output = Command::new(home.join("bin/java"))
                .arg("-version")
                .output()
                .unwrap();
            let first = String::from_utf8_lossy(&output.stderr)
                .lines()
                .next()
                .map(str::to_string);
            assert_eq!(
                parse_major(&first.unwrap_or_default()),
                Some(major),
                "{}",
                home.display()
            );
        }
    }

    #[test]
    fn java_home_comes_first_and_cache_is_used() {
        let jdk17 = installed_only().find(17).unwrap();
        // A cache holding JDK 17 (as `make jdks` lays it out) and nothing installed.
        let cache = scratch("cache");
        std::os::unix::fs::symlink(&jdk17, cache.join("17")).unwrap();
        let places = JdkPlaces {
            java_home: None,
            installed: cache.join("nothing-installed"),
            cache: Some(cache.clone()),
        };
        assert_eq!(places.find(17).unwrap(), cache.join("17"));
        // $JAVA_HOME of the right major wins over the cache; of another major it is skipped.
        let with_home = JdkPlaces {
            java_home: Some(jdk17.clone()),
            ..places.clone()
        };
        assert_eq!(with_home.find(17).unwrap(), jdk17);
        let err = with_home.find(9).unwrap_err().to_string();
        assert!(err.contains("no JDK 9 found"), "{err}");
        assert!(err.contains("make jdks"), "{err}");
        assert!(
            err.contains(&cache.join("9").display().to_string()),
            "{err}"
        );
        assert!(!err.contains('\n'), "{err}");
        std::fs::remove_dir_all(&cache).unwrap();
    }

    /// The runtimes `make jdks` fetched, when this machine has them.
    #[test]
    fn finds_fetched_jdks_in_the_default_cache() {
        let places = JdkPlaces::from_env();
        let Some(cache) = places.cache.clone() else {
            return;
        };
        for major in [11, 21] {
            if cache.join(major.to_string()).join("bin/java").is_file() {
                let home = places.find(major).unwrap();
                assert_eq!(home_major(&home), Some(major), "{}", home.display());
            }
        }
    }

    #[test]
    fn majors_and_paths() {
        assert_eq!(as_major(Path::new("11")), Some(11));
        assert_eq!(as_major(Path::new("./11")), None);
        assert_eq!(
            as_major(Path::new("/usr/lib/jvm/java-17-openjdk-amd64")),
            None
        );
        assert_eq!(as_major(Path::new("")), None);
        assert_eq!(
            parse_major("openjdk version \"17.0.15\" 2025-04-15"),
            Some(17)
        );
        assert_eq!(parse_major("openjdk version \"25\" 2025-09-16"), Some(25));
        assert_eq!(
            parse_major("openjdk version \"25.0.1\" 2025-10-21 LTS"),
            Some(25)
        );
        assert_eq!(parse_major("JAVA_VERSION=\"11.0.13\""), Some(11));
        assert_eq!(parse_major("java version \"1.8.0_392\""), Some(8));
        assert_eq!(parse_major("garbage"), None);
    }
}
