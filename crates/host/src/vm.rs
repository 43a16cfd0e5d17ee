//! Memory management settings that turn into JVM pauses: transparent huge pages, swap,
//! and the dirty page (writeback) thresholds.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::read::{parse_error, parse_number, read_optional, read_optional_number, read_string};
use crate::Result;

const THP_DIR: &str = "/sys/kernel/mm/transparent_hugepage";

/// A setting that reads like `always [madvise] never`: the bracketed word is selected.
#[derive(Debug, Clone, Serialize)]
pub struct Choice {
    pub selected: String,
    pub choices: Vec<String>,
    pub source: PathBuf,
}

fn parse_choice(path: &Path, text: &str) -> Result<Choice> {
    let mut selected = None;
    let mut choices = Vec::new();
    for word in text.split_whitespace() {
        match word.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            Some(inner) => {
                selected = Some(inner.to_string());
                choices.push(inner.to_string());
            }
            None => choices.push(word.to_string()),
        }
    }
    let selected = selected
        .ok_or_else(|| parse_error(path, format!("no [selected] value in {:?}", text.trim())))?;
    Ok(Choice {
        selected,
        choices,
        source: path.to_path_buf(),
    })
}

/// Transparent huge pages; `None` fields where the kernel has no THP.
#[derive(Debug, Clone, Serialize)]
pub struct TransparentHugePages {
    pub enabled: Option<Choice>,
    pub defrag: Option<Choice>,
}

pub fn transparent_huge_pages() -> Result<TransparentHugePages> {
    let read = |name: &str| -> Result<Option<Choice>> {
        let path = Path::new(THP_DIR).join(name);
        read_optional(&path)?
            .map(|text| parse_choice(&path, &text))
            .transpose()
    };
    Ok(TransparentHugePages {
        enabled: read("enabled")?,
        defrag: read("defrag")?,
    })
}

/// One line of `/proc/swaps`.
#[derive(Debug, Clone, Serialize)]
pub struct SwapArea {
    pub name: String,
    pub kind: String,
    pub size_kib: u64,
    pub used_kib: u64,
    pub priority: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Swap {
    pub areas: Vec<SwapArea>,
    pub total_kib: u64,
    pub used_kib: u64,
    /// `vm.swappiness` (0-200).
    pub swappiness: u32,
    pub sources: Vec<PathBuf>,
}

pub fn parse_swaps(path: &Path, text: &str) -> Result<Vec<SwapArea>> {
    text.lines()
        .skip(1) // header
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let bad = || parse_error(path, format!("bad line {line:?}"));
            if fields.len() < 5 {
                return Err(bad());
            }
            Ok(SwapArea {
                name: fields[0].to_string(),
                kind: fields[1].to_string(),
                size_kib: fields[2].parse().map_err(|_| bad())?,
                used_kib: fields[3].parse().map_err(|_| bad())?,
                priority: fields[4].parse().map_err(|_| bad())?,
            })
        })
        .collect()
}

pub fn swap() -> Result<Swap> {
    let swaps_path = Path::new("/proc/swaps");
    let swappiness_path = Path::new("/proc/sys/vm/swappiness");
    let areas = parse_swaps(swaps_path, &read_string(swaps_path)?)?;
    let swappiness = parse_number(swappiness_path, &read_string(swappiness_path)?)?;
    Ok(Swap {
        total_kib: areas.iter().map(|a| a.size_kib).sum(),
        used_kib: areas.iter().map(|a| a.used_kib).sum(),
        areas,
        swappiness,
        sources: vec![swaps_path.to_path_buf(), swappiness_path.to_path_buf()],
    })
}

/// Dirty page thresholds. `*_bytes` overrides `*_ratio` when non-zero.
#[derive(Debug, Clone, Serialize)]
pub struct DirtySettings {
    pub dirty_ratio: u64,
    pub dirty_bytes: u64,
    pub dirty_background_ratio: u64,
    pub dirty_background_bytes: u64,
    /// Dirty data older than this is written back by the flusher threads.
    pub dirty_expire_centisecs: u64,
    /// How often the flusher threads wake up (0 = never periodically).
    pub dirty_writeback_centisecs: u64,
    /// Directory the values were read from.
    pub source: PathBuf,
}

pub fn dirty_settings() -> Result<DirtySettings> {
    let dir = Path::new("/proc/sys/vm");
    let read = |name: &str| -> Result<u64> {
        let path = dir.join(name);
        read_optional_number(&path)?.ok_or_else(|| parse_error(&path, "missing"))
    };
    Ok(DirtySettings {
        dirty_ratio: read("dirty_ratio")?,
        dirty_bytes: read("dirty_bytes")?,
        dirty_background_ratio: read("dirty_background_ratio")?,
        dirty_background_bytes: read("dirty_background_bytes")?,
        dirty_expire_centisecs: read("dirty_expire_centisecs")?,
        dirty_writeback_centisecs: read("dirty_writeback_centisecs")?,
        source: dir.to_path_buf(),
    })
}

/// `MemTotal` and friends from `/proc/meminfo`, in KiB.
pub fn meminfo_kib(field: &str) -> Result<Option<u64>> {
    let path = Path::new("/proc/meminfo");
    let text = read_string(path)?;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix(field).and_then(|r| r.strip_prefix(':')) {
            let number = rest.trim().trim_end_matches("kB").trim();
            return parse_number(path, number).map(Some);
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bracketed_choice_is_selected() {
        let choice = parse_choice(
            Path::new("x"),
            "always defer defer+madvise [madvise] never\n",
        )
        .unwrap();
        assert_eq!(choice.selected, "madvise");
        assert_eq!(choice.choices.len(), 5);
        assert!(parse_choice(Path::new("x"), "always never").is_err());
    }

    #[test]
    fn swaps_parse_and_reject_garbage() {
        let text = "Filename\tType\tSize\tUsed\tPriority\n/dev/zram0 partition 4194300 1024 100\n";
        let areas = parse_swaps(Path::new("/proc/swaps"), text).unwrap();
        assert_eq!(areas[0].size_kib, 4194300);
        assert_eq!(areas[0].used_kib, 1024);
        assert!(parse_swaps(Path::new("/proc/swaps"), "h\n/dev/x partition big 0 1\n").is_err());
    }

    #[test]
    fn live_host_values_are_consistent() {
        let swap = swap().unwrap();
        assert!(swap.swappiness <= 200);
        assert!(swap.used_kib <= swap.total_kib);
        let dirty = dirty_settings().unwrap();
        assert!(dirty.dirty_ratio <= 100);
        assert!(meminfo_kib("MemTotal").unwrap().unwrap() > 0);
    }
}
