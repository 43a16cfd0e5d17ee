//! How much a finding matters: the one scale of `analyze`'s log findings and `doctor`'s host
//! checks, so that scripts read the same words from both.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Ordered from "checked and fine" to "this stalls"; written in lower case in JSON and text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Checked and fine (host checks only: a log finding is only made when a rule fires).
    Ok,
    /// Worth knowing, no action needed.
    Info,
    /// A risk that shows up under load or in some set-ups.
    Warning,
    /// This set-up stalls, or has been measured to.
    Critical,
}

impl Severity {
    /// The word printed and written in JSON: `ok`, `info`, `warning`, `critical`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_words_are_the_printed_words_in_order() {
        let all = [
            Severity::Ok,
            Severity::Info,
            Severity::Warning,
            Severity::Critical,
        ];
        for s in all {
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.as_str()));
            assert_eq!(serde_json::from_str::<Severity>(&json).unwrap(), s);
        }
        assert!(all.windows(2).all(|w| w[0] < w[1]));
    }
}
