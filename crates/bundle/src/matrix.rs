//! A matrix run (`pauselab lab run` with `--gc`, `--fs`, `--mount-options`, several
//! `--disk` or `--repeat`): one ordinary bundle per cell and repeat, each naming its cell in
//! `manifest.json`'s `cell`, and `matrix.json` beside them listing the plan and the bundles.
//! The rule that turns a cell's repeats into one verdict lives here, so the lab and the
//! report cannot judge consistency differently.

use std::path::PathBuf;

use serde::{Deserialize, Serialize, Serializer};

use crate::verdict::VariantVerdict;

/// `manifest.json`'s `cell`: the combination this bundle ran and which repeat it was.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CellEntry {
    /// Names the cell in file names and tables (`G1-ext4-lazytime`).
    pub label: String,
    /// The collector every variant ran with (`G1`), from `--gc` or the experiment's flags.
    #[serde(default)]
    pub gc: Option<String>,
    /// The slow device's filesystem (`--fs`).
    #[serde(default)]
    pub filesystem: Option<String>,
    /// The slow device's mount options (`--mount-options`), as given.
    #[serde(default)]
    pub mount_options: Option<String>,
    /// The user's directory stressed instead of the slow device (`--disk`).
    #[serde(default)]
    pub disk: Option<PathBuf>,
    /// This run's repeat, from 1.
    pub repeat: u32,
    /// Repeats of every cell in the matrix.
    pub repeats: u32,
}

/// `matrix.json`'s `format`.
pub const MATRIX_FORMAT: &str = "pauselab-matrix";

/// `matrix.json`: the plan of a matrix run and what came of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MatrixRun {
    /// Always [`MATRIX_FORMAT`].
    pub format: String,
    /// The experiment's name.
    pub experiment: String,
    /// Every cell, in plan order.
    pub cells: Vec<CellEntry>,
    /// Repeats of each cell.
    pub repeats: u32,
    /// The run time of each cell.
    pub duration_s: f64,
    /// What the plan predicted for the whole matrix.
    pub expected_duration_s: f64,
    /// Start to end, once the matrix has ended.
    #[serde(default)]
    pub actual_duration_s: Option<f64>,
    /// The bundles in the order they ran, relative to the matrix directory.
    pub bundles: Vec<String>,
    /// Whether the matrix was stopped before every cell ran.
    #[serde(default)]
    pub interrupted: bool,
}

/// A variant's verdict over the repeats of one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellVerdict {
    /// Every repeat that was judged says the same.
    Agreed(VariantVerdict),
    /// Repeats disagree (the one that stalled and the one that did not ran the same way).
    Inconsistent,
}

impl CellVerdict {
    /// `stalls`, `no_stalls`, ... or `inconsistent`.
    pub fn as_str(self) -> &'static str {
        match self {
            CellVerdict::Agreed(verdict) => verdict.as_str(),
            CellVerdict::Inconsistent => "inconsistent",
        }
    }
}

impl Serialize for CellVerdict {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// The verdict of a cell from its repeats: repeats that gave no judgement (skipped,
/// failed, no baseline data) are left out when others were judged, and the judged ones
/// must all agree, else the cell is inconsistent. `None` without repeats.
pub fn combine_repeats(verdicts: &[VariantVerdict]) -> Option<CellVerdict> {
    let judged = |v: &&VariantVerdict| {
        !matches!(
            v,
            VariantVerdict::Skipped | VariantVerdict::Failed | VariantVerdict::NoData
        )
    };
    let mut considered: Vec<VariantVerdict> = verdicts.iter().filter(judged).copied().collect();
    if considered.is_empty() {
        considered = verdicts.to_vec();
    }
    let first = *considered.first()?;
    Some(if considered.iter().all(|v| *v == first) {
        CellVerdict::Agreed(first)
    } else {
        CellVerdict::Inconsistent
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use VariantVerdict::*;

    #[test]
    fn repeats_agree_disagree_or_are_left_out_when_unjudged() {
        assert_eq!(
            combine_repeats(&[Stalls, Stalls]),
            Some(CellVerdict::Agreed(Stalls))
        );
        assert_eq!(
            combine_repeats(&[Stalls, NoStalls, Stalls]),
            Some(CellVerdict::Inconsistent)
        );
        assert_eq!(
            combine_repeats(&[Failed, NoStalls]),
            Some(CellVerdict::Agreed(NoStalls))
        );
        assert_eq!(
            combine_repeats(&[Skipped, Skipped]),
            Some(CellVerdict::Agreed(Skipped))
        );
        assert_eq!(
            combine_repeats(&[Skipped, Failed]),
            Some(CellVerdict::Inconsistent)
        );
        assert_eq!(combine_repeats(&[]), None);
        assert_eq!(
            serde_json::to_value(CellVerdict::Inconsistent).unwrap(),
            "inconsistent"
        );
        assert_eq!(
            serde_json::to_value(CellVerdict::Agreed(NoStalls)).unwrap(),
            "no_stalls"
        );
    }
}
