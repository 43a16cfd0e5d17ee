//! Threads of a process and what they wait for in the kernel.

use std::path::PathBuf;

use serde::Serialize;

use crate::read::{parse_error, read_optional, require_process};
use crate::{HostError, Result};

/// A thread in uninterruptible sleep (`D`): it waits in the kernel, typically for I/O or a
/// page under writeback, and cannot reach a safepoint until that finishes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlockedThread {
    pub tid: u32,
    /// Thread name (`comm`), e.g. `VM Thread`, `GC Thread#0`.
    pub name: String,
    /// Kernel function it sleeps in (`/proc/<pid>/task/<tid>/wchan`), when the kernel shows it.
    pub wchan: Option<String>,
    /// Innermost kernel frames (`/proc/<pid>/task/<tid>/stack`, root only).
    pub stack: Vec<String>,
}

/// Frames of the kernel stack to keep: enough to see `folio_wait_writeback` under
/// `block_page_mkwrite` or `ext4_page_mkwrite`.
const STACK_FRAMES: usize = 6;

/// `(state, name)` from a `/proc/<pid>/task/<tid>/stat` line. The name is in parentheses and
/// may contain spaces and parentheses itself, so the state follows the *last* `)`.
fn parse_stat(text: &str) -> Option<(char, String)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text.get(open + 1..close)?.to_string();
    let state = text.get(close + 1..)?.trim_start().chars().next()?;
    Some((state, name))
}

/// Threads of `pid` currently in `D` state.
pub fn blocked_threads(pid: u32) -> Result<Vec<BlockedThread>> {
    require_process(pid)?;
    let task_dir = PathBuf::from(format!("/proc/{pid}/task"));
    let entries = std::fs::read_dir(&task_dir).map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            HostError::NoProcess { pid }
        } else {
            HostError::Read {
                path: task_dir.clone(),
                source,
            }
        }
    })?;
    let mut blocked = Vec::new();
    for entry in entries.flatten() {
        let Some(tid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let dir = entry.path();
        // A thread that exits between listing and reading is not an error.
        let Some(stat) = read_optional(dir.join("stat")).ok().flatten() else {
            continue;
        };
        let (state, name) =
            parse_stat(&stat).ok_or_else(|| parse_error(dir.join("stat"), "no (comm) state"))?;
        if state != 'D' {
            continue;
        }
        let wchan = read_optional(dir.join("wchan"))
            .ok()
            .flatten()
            .map(|w| w.trim().to_string())
            .filter(|w| !w.is_empty() && w != "0");
        let stack = read_optional(dir.join("stack"))
            .ok()
            .flatten()
            .map(|text| {
                text.lines()
                    .filter_map(|line| line.split_whitespace().nth(1))
                    .map(|frame| frame.split('+').next().unwrap_or(frame).to_string())
                    .take(STACK_FRAMES)
                    .collect()
            })
            .unwrap_or_default();
        blocked.push(BlockedThread {
            tid,
            name,
            wchan,
            stack,
        });
    }
    blocked.sort_by_key(|t| t.tid);
    Ok(blocked)
}

/// Names (`comm`) of all threads of `pid`.
pub fn thread_names(pid: u32) -> Result<Vec<String>> {
    require_process(pid)?;
    let task_dir = PathBuf::from(format!("/proc/{pid}/task"));
    let entries = std::fs::read_dir(&task_dir).map_err(|source| HostError::Read {
        path: task_dir.clone(),
        source,
    })?;
    Ok(entries
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("comm")).ok())
        .map(|n| n.trim_end().to_string())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_names_with_parentheses_and_spaces() {
        assert_eq!(
            parse_stat("123 (GC Thread#0) D 1 2 3"),
            Some(('D', "GC Thread#0".to_string()))
        );
        assert_eq!(
            parse_stat("9 (a) b) (c) S 1"),
            Some(('S', "a) b) (c".to_string()))
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn own_threads_are_not_blocked_and_missing_pid_is_named() {
        assert!(blocked_threads(std::process::id()).unwrap().is_empty());
        assert!(matches!(
            blocked_threads(u32::MAX - 1),
            Err(HostError::NoProcess { .. })
        ));
    }
}
