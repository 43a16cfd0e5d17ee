//! HotSpot's report of a safepoint that timed out (`-XX:+SafepointTimeout
//! -XX:SafepointTimeoutDelay=<ms>`): the threads that had not reached it by then.
//!
//! JDK 8 and 11 print it on the JVM's stdout, undecorated; JDK 17 and later on the
//! `safepoint` log tag at warning level (so on stdout by default, and in a log file that
//! has the tag). The block, in both cases:
//!
//! ```text
//! # SafepointSynchronize::begin: Timeout detected:
//! # SafepointSynchronize::begin: Timed out while spinning to reach a safepoint.
//! # SafepointSynchronize::begin: Threads which did not reach the safepoint:
//! # "worker-1" #12 daemon prio=5 os_prio=0 cpu=90.75ms elapsed=0.32s tid=0x00007fe77411e1e0 nid=0x2cb5 runnable  [0x0000000000000000]
//!    java.lang.Thread.State: RUNNABLE
//!
//! # SafepointSynchronize::begin: (End of list)
//! ```

use super::{lossy, trim_spaces, Record, TimeoutLine};

const PREFIX: &[u8] = b"# SafepointSynchronize::begin: ";
const JAVA_STATE: &[u8] = b"java.lang.Thread.State: ";

/// The record of a line of the report (the message of a unified line, or a whole JDK 8/11
/// stdout line), `None` when the line is not one.
pub(super) fn timeout_line(msg: &[u8]) -> Option<Record> {
    let line = if let Some(rest) = msg.strip_prefix(PREFIX) {
        match rest {
            b"Timeout detected:" => TimeoutLine::Start,
            b"(End of list)" => TimeoutLine::End,
            // "Timed out while spinning...", "Threads which did not reach the safepoint:"
            _ => return Some(Record::Other),
        }
    } else if let Some(rest) = msg.strip_prefix(b"# \"") {
        thread(rest)?
    } else {
        return java_state(trim_spaces(msg));
    };
    Some(Record::SafepointTimeout(line))
}

/// The record of a thread's state in the report (`java.lang.Thread.State: RUNNABLE`,
/// trimmed of its indentation), `None` when `trimmed` is not one.
pub(super) fn java_state(trimmed: &[u8]) -> Option<Record> {
    let state = trimmed.strip_prefix(JAVA_STATE)?;
    Some(Record::SafepointTimeout(TimeoutLine::JavaState(lossy(
        state,
    ))))
}

/// `worker-1" #12 daemon prio=5 ... tid=0x... nid=0x2cb5 runnable  [0x...]` (after `# "`).
/// The name ends at the last quote before ` tid=`: names may hold quotes, the fields after
/// them do not.
fn thread(rest: &[u8]) -> Option<TimeoutLine> {
    let tid = crate::num::find(rest, b" tid=0x")?;
    let name_end = memchr::memrchr(b'"', &rest[..tid])?;
    let after_nid = &rest[tid + crate::num::find(&rest[tid..], b" nid=")? + 5..];
    let os_state = after_nid
        .iter()
        .position(|&c| c == b' ')
        .map(|space| {
            let state = &after_nid[space..];
            trim_spaces(&state[..memchr::memchr(b'[', state).unwrap_or(state.len())])
        })
        .filter(|s| !s.is_empty())
        .map(lossy);
    Some(TimeoutLine::Thread {
        name: lossy(&rest[..name_end]),
        os_state,
    })
}
