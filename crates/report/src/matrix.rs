//! The executive summary across bundles: rows are where the run happened (kernel, host,
//! disk, filesystem, mount options), columns what ran (JDK and collector), and each cell
//! gives every variant's verdict over the cell's repeats (stalls, no stalls, or
//! inconsistent when repeats disagree) with its longest pause, followed by conclusions
//! drawn from those numbers.

use std::collections::BTreeMap;

use pauselab_bundle::{combine_repeats, CellVerdict, VariantVerdict};
use serde::Serialize;

use crate::model::{variant_anchor, verdict_words, Section};
use crate::ReportError;

/// A column: a JDK, and the collector when the bundles name one (matrix runs do).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MatrixColumn {
    /// `17`, or `17 G1` with a collector: the key of `MatrixRow::cells`.
    pub key: String,
    pub jdk: String,
    pub gc: Option<String>,
}

/// One repeat of a variant in a cell.
#[derive(Debug, Clone, Serialize)]
pub struct MatrixRepeat {
    pub section_id: String,
    /// Anchor of this repeat's charts.
    pub anchor: String,
    pub verdict: Option<VariantVerdict>,
    pub max_pause_ms: Option<f64>,
    /// The experiment's chosen measurements (`measurements` of its TOML) in this repeat,
    /// such as hsperf-mmap's `workload.max_gap_ms`: the application's own longest stop,
    /// which a stall outside any safepoint leaves out of `max_pause_ms`.
    pub measurements: Vec<crate::bundle::Measurement>,
}

/// One variant in a cell, over the cell's repeats.
#[derive(Debug, Clone, Serialize)]
pub struct MatrixVariant {
    pub variant: String,
    /// The repeats' common verdict, or `inconsistent`; none without verdicts.
    pub verdict: Option<CellVerdict>,
    /// The longest pause of any repeat (safepoint max when recorded, else hiccup max).
    pub max_pause_ms: Option<f64>,
    /// With two or more repeats that measured one: how far the repeats' longest pauses
    /// spread.
    pub spread: Option<Spread>,
    pub repeats: Vec<MatrixRepeat>,
}

/// The spread of the repeats' longest pauses: how much one run of a cell can be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    /// Repeats that measured a longest pause.
    pub repeats: usize,
    pub min_ms: f64,
    pub median_ms: f64,
    pub max_ms: f64,
}

impl Spread {
    /// The spread of `values` (any order); none below two values.
    pub fn of(values: &[f64]) -> Option<Spread> {
        if values.len() < 2 {
            return None;
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median_ms = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        Some(Spread {
            repeats: n,
            min_ms: sorted[0],
            median_ms,
            max_ms: sorted[n - 1],
        })
    }

    /// `2.7 s / 2.8 s / 2.9 s`: min / median / max.
    pub fn words(&self) -> String {
        format!(
            "{} / {} / {}",
            pause_words(self.min_ms),
            pause_words(self.median_ms),
            pause_words(self.max_ms)
        )
    }
}

/// A cell: one place (row) and one JDK and collector (column), all its repeats.
#[derive(Debug, Clone, Serialize)]
pub struct MatrixCell {
    /// The first repeat's section.
    pub section_id: String,
    /// The first repeat's default variant's charts.
    pub anchor: String,
    /// The default variant over the repeats.
    pub default_verdict: Option<CellVerdict>,
    /// (mitigation variant, "removed" | "still stalls" | "inconsistent" | verdict)
    pub mitigations: Vec<(String, String)>,
    /// Every variant, baseline included.
    pub variants: Vec<MatrixVariant>,
    pub repeats: usize,
    /// No variant's repeats disagree.
    pub consistent: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct MatrixRow {
    pub kernel: String,
    pub host: String,
    pub disk: String,
    pub filesystem: String,
    pub mount_options: String,
    /// Column key -> cell.
    pub cells: BTreeMap<String, MatrixCell>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Matrix {
    pub columns: Vec<MatrixColumn>,
    pub rows: Vec<MatrixRow>,
    /// Every variant that appears, in first-seen order.
    pub variants: Vec<String>,
    pub default_variant: Option<String>,
    pub baseline_variant: Option<String>,
    /// Cells filled.
    pub cells: usize,
    /// Cells whose repeats agree for every variant.
    pub consistent_cells: usize,
    /// The most repeats of any cell.
    pub max_repeats: usize,
    /// Sentences drawn from the numbers: which variants never stalled, which dimension
    /// changed the outcome, how consistent repeats were.
    pub conclusions: Vec<String>,
}

/// Most cells the matrix table may have (its lines, one per row and variant, times its
/// columns): a real matrix has a few hundred, and beyond this the page would grow to tens
/// of MB that nobody reads.
pub const MAX_TABLE_CELLS: usize = 20_000;

impl Matrix {
    /// The cells of the table: one line per row and variant run in it, one cell per column.
    pub fn table_cells(&self) -> usize {
        let lines: usize = self
            .rows
            .iter()
            .map(|row| {
                row.cells
                    .values()
                    .flat_map(|c| c.variants.iter().map(|v| v.variant.as_str()))
                    .collect::<std::collections::HashSet<_>>()
                    .len()
            })
            .sum();
        lines * self.columns.len()
    }
}

/// The matrix of `sections` for `--matrix`: refused when no section is a lab bundle naming
/// its default variant, or when its table would be too large to read.
pub fn checked_matrix(sections: &[Section]) -> Result<Matrix, ReportError> {
    let m = matrix(sections);
    if m.rows.is_empty() {
        return Err(ReportError::Matrix(
            "--matrix needs lab bundles whose manifest names a default variant".into(),
        ));
    }
    let cells = m.table_cells();
    if cells > MAX_TABLE_CELLS {
        return Err(ReportError::Matrix(format!(
            "--matrix: {cells} table cells ({} columns), more than {MAX_TABLE_CELLS}: report fewer bundles at a time",
            m.columns.len()
        )));
    }
    Ok(m)
}

impl MatrixRow {
    fn key(&self) -> [&str; 5] {
        [
            &self.kernel,
            &self.host,
            &self.disk,
            &self.filesystem,
            &self.mount_options,
        ]
    }
}

/// One bundle's part of a cell: its repeat number, its section and the JDK of the column.
type Repeat<'a> = (u32, &'a Section, String);

fn or_unknown(value: &Option<String>, unknown: &str) -> String {
    value.clone().unwrap_or_else(|| unknown.to_string())
}

/// Builds the matrix from every section of a lab bundle that names its default variant.
/// Bundles of the same row and column are repeats of one cell (in the order of their
/// `cell.repeat`, else as given).
pub fn matrix(sections: &[Section]) -> Matrix {
    let mut columns: Vec<MatrixColumn> = Vec::new();
    let mut rows: Vec<MatrixRow> = Vec::new();
    let mut variants: Vec<String> = Vec::new();
    // (row, column key) -> the sections' variants of that JDK, one entry per repeat.
    let mut members: BTreeMap<(usize, String), Vec<Repeat>> = BTreeMap::new();
    let mut default_variant = None;
    let mut baseline_variant = None;
    for (order, s) in sections.iter().enumerate() {
        if s.default_variant.is_none() {
            continue;
        }
        default_variant = default_variant.or(s.default_variant.clone());
        baseline_variant = baseline_variant.or(s.baseline_variant.clone());
        let row = MatrixRow {
            kernel: or_unknown(&s.kernel, "?"),
            host: or_unknown(&s.hostname, "?"),
            disk: or_unknown(&s.disk, "?"),
            filesystem: or_unknown(&s.filesystem, "-"),
            mount_options: or_unknown(&s.mount_options, "-"),
            cells: BTreeMap::new(),
        };
        let row_index = match rows.iter().position(|r| r.key() == row.key()) {
            Some(i) => i,
            None => {
                rows.push(row);
                rows.len() - 1
            }
        };
        let gc = s.cell.as_ref().and_then(|c| c.gc.clone());
        let repeat = s.cell.as_ref().map_or(order as u32, |c| c.repeat);
        let mut jdks: Vec<String> = Vec::new();
        for v in &s.variants {
            let jdk = v.jdk.clone().unwrap_or_else(|| "-".into());
            if !jdks.contains(&jdk) {
                jdks.push(jdk);
            }
            if !variants.contains(&v.variant) {
                variants.push(v.variant.clone());
            }
        }
        for jdk in jdks {
            let key = match &gc {
                Some(gc) => format!("{jdk} {gc}"),
                None => jdk.clone(),
            };
            if !columns.iter().any(|c| c.key == key) {
                columns.push(MatrixColumn {
                    key: key.clone(),
                    jdk: jdk.clone(),
                    gc: gc.clone(),
                });
            }
            members
                .entry((row_index, key))
                .or_default()
                .push((repeat, s, jdk));
        }
    }
    for ((row_index, key), mut repeats) in members {
        repeats.sort_by_key(|(repeat, _, _)| *repeat);
        let cell = cell_of(&repeats);
        rows[row_index].cells.insert(key, cell);
    }
    columns.sort_by_key(|c| {
        (
            c.jdk.parse::<u32>().unwrap_or(u32::MAX),
            c.jdk.clone(),
            c.gc.clone(),
        )
    });
    let all_cells: Vec<&MatrixCell> = rows.iter().flat_map(|r| r.cells.values()).collect();
    let mut matrix = Matrix {
        cells: all_cells.len(),
        consistent_cells: all_cells.iter().filter(|c| c.consistent).count(),
        max_repeats: all_cells.iter().map(|c| c.repeats).max().unwrap_or(0),
        columns,
        rows,
        variants,
        default_variant,
        baseline_variant,
        conclusions: Vec::new(),
    };
    matrix.conclusions = conclusions(&matrix);
    matrix
}

fn cell_of(repeats: &[Repeat]) -> MatrixCell {
    let (_, first, _) = repeats[0];
    let default = first.default_variant.clone().unwrap_or_default();
    let baseline = first.baseline_variant.clone();
    let mut names: Vec<String> = Vec::new();
    for (_, s, jdk) in repeats {
        for v in s
            .variants
            .iter()
            .filter(|v| v.jdk.as_deref().unwrap_or("-") == jdk)
        {
            if !names.contains(&v.variant) {
                names.push(v.variant.clone());
            }
        }
    }
    let variants: Vec<MatrixVariant> = names
        .iter()
        .map(|name| {
            let runs: Vec<MatrixRepeat> = repeats
                .iter()
                .filter_map(|(_, s, jdk)| {
                    let v = s
                        .variants
                        .iter()
                        .find(|v| &v.variant == name && v.jdk.as_deref().unwrap_or("-") == jdk)?;
                    Some(MatrixRepeat {
                        section_id: s.id.clone(),
                        anchor: variant_anchor(s, v),
                        verdict: v.verdict,
                        max_pause_ms: v.judged_max_ms,
                        measurements: v
                            .measurements
                            .iter()
                            .filter(|m| s.measurement_columns.contains(&m.name))
                            .cloned()
                            .collect(),
                    })
                })
                .collect();
            let verdicts: Vec<VariantVerdict> = runs.iter().filter_map(|r| r.verdict).collect();
            let longest: Vec<f64> = runs.iter().filter_map(|r| r.max_pause_ms).collect();
            MatrixVariant {
                variant: name.clone(),
                verdict: combine_repeats(&verdicts),
                max_pause_ms: longest.iter().copied().reduce(f64::max),
                spread: Spread::of(&longest),
                repeats: runs,
            }
        })
        .collect();
    let default_entry = variants.iter().find(|v| v.variant == default);
    let default_verdict = default_entry.and_then(|v| v.verdict);
    let mitigations = variants
        .iter()
        .filter(|m| m.variant != default && Some(&m.variant) != baseline.as_ref())
        .map(|m| {
            let outcome = match (default_verdict, m.verdict) {
                (
                    Some(CellVerdict::Agreed(VariantVerdict::Stalls)),
                    Some(CellVerdict::Agreed(VariantVerdict::NoStalls)),
                ) => "removed".to_string(),
                (_, Some(CellVerdict::Agreed(VariantVerdict::Stalls))) => {
                    "still stalls".to_string()
                }
                (_, verdict) => cell_words(verdict),
            };
            (m.variant.clone(), outcome)
        })
        .collect();
    MatrixCell {
        section_id: first.id.clone(),
        anchor: default_entry
            .and_then(|v| v.repeats.first())
            .map(|r| r.anchor.clone())
            .unwrap_or_else(|| first.id.clone()),
        default_verdict,
        mitigations,
        consistent: variants
            .iter()
            .all(|v| v.verdict != Some(CellVerdict::Inconsistent)),
        variants,
        repeats: repeats.len(),
    }
}

/// A cell verdict for people: `no stalls`, `inconsistent`, `unknown` when there is none.
pub fn cell_words(verdict: Option<CellVerdict>) -> String {
    match verdict {
        Some(CellVerdict::Agreed(v)) => verdict_words(Some(v)),
        Some(CellVerdict::Inconsistent) => "inconsistent".into(),
        None => "unknown".into(),
    }
}

/// A pause in ms for a table: `2.9 s`, `180 ms`, `4.2 ms`.
pub fn pause_words(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else if ms >= 100.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

/// One variant's cell for people: `stalls (2.9 s)`, `inconsistent: stalls 2.9 s, no
/// stalls 180 ms`; with repeats, the spread of their longest pauses: `no stalls (120 ms /
/// 150 ms / 180 ms)`.
pub fn variant_cell_words(v: &MatrixVariant) -> String {
    let max = longest_pause_words(v);
    match v.verdict {
        Some(CellVerdict::Inconsistent) => {
            let each: Vec<String> = v
                .repeats
                .iter()
                .map(|r| {
                    let mut text = verdict_words(r.verdict);
                    if let Some(ms) = r.max_pause_ms {
                        text.push_str(&format!(" {}", pause_words(ms)));
                    }
                    text
                })
                .collect();
            format!("inconsistent: {}", each.join(", "))
        }
        verdict => match max {
            Some(max) => format!("{} ({max})", cell_words(verdict)),
            None => cell_words(verdict),
        },
    }
}

/// A variant's longest pause for people: the spread over its repeats (`120 ms / 150 ms /
/// 180 ms`), else the one longest pause.
pub fn longest_pause_words(v: &MatrixVariant) -> Option<String> {
    match &v.spread {
        Some(spread) => Some(spread.words()),
        None => v.max_pause_ms.map(pause_words),
    }
}

/// Which cells each variant stalled in, by the value of one dimension.
struct Tally {
    stalls: usize,
    no_stalls: usize,
    inconsistent: usize,
}

fn tally<'a>(cells: impl Iterator<Item = &'a MatrixCell>, variant: &str) -> Tally {
    let mut t = Tally {
        stalls: 0,
        no_stalls: 0,
        inconsistent: 0,
    };
    for cell in cells {
        match cell
            .variants
            .iter()
            .find(|v| v.variant == variant)
            .and_then(|v| v.verdict)
        {
            Some(CellVerdict::Agreed(VariantVerdict::Stalls)) => t.stalls += 1,
            Some(CellVerdict::Agreed(VariantVerdict::NoStalls)) => t.no_stalls += 1,
            Some(CellVerdict::Inconsistent) => t.inconsistent += 1,
            _ => {}
        }
    }
    t
}

fn conclusions(m: &Matrix) -> Vec<String> {
    let mut out = Vec::new();
    if m.cells == 0 {
        return out;
    }
    // Every (row, column, cell) with its dimension values.
    let cells: Vec<(Vec<(&str, String)>, &MatrixCell)> = m
        .rows
        .iter()
        .flat_map(|row| {
            m.columns.iter().filter_map(move |column| {
                let cell = row.cells.get(&column.key)?;
                let dims = vec![
                    ("kernel", row.kernel.clone()),
                    ("disk", row.disk.clone()),
                    ("filesystem", row.filesystem.clone()),
                    ("mount options", row.mount_options.clone()),
                    ("JDK", column.jdk.clone()),
                    ("GC", column.gc.clone().unwrap_or_else(|| "-".into())),
                ];
                Some((dims, cell))
            })
        })
        .collect();
    let judged: Vec<&String> = m
        .variants
        .iter()
        .filter(|v| m.baseline_variant.as_ref() != Some(*v))
        .collect();
    let mut never = Vec::new();
    let mut always = Vec::new();
    let mut mixed = Vec::new();
    for variant in &judged {
        let t = tally(cells.iter().map(|(_, c)| *c), variant);
        let total = t.stalls + t.no_stalls + t.inconsistent;
        if total == 0 {
            continue;
        }
        if t.stalls == 0 && t.inconsistent == 0 {
            never.push(variant.as_str());
        } else if t.stalls == total {
            always.push(variant.as_str());
        } else {
            mixed.push(format!(
                "{variant} stalled in {} of {total} cells (no stalls in {}, inconsistent in {})",
                t.stalls, t.no_stalls, t.inconsistent
            ));
        }
    }
    if !never.is_empty() {
        out.push(format!("Never stalled in any cell: {}.", never.join(", ")));
    }
    if !always.is_empty() {
        out.push(format!(
            "Stalled in every cell ({}): {}.",
            m.cells,
            always.join(", ")
        ));
    }
    if !mixed.is_empty() {
        out.push(format!("{}.", mixed.join("; ")));
    }
    let dimensions = ["kernel", "disk", "filesystem", "mount options", "JDK", "GC"];
    let varying: Vec<bool> = (0..dimensions.len())
        .map(|d| cells.iter().any(|(dims, _)| dims[d].1 != cells[0].0[d].1))
        .collect();
    let mut changed = Vec::new();
    let mut unchanged = Vec::new();
    for (d, name) in dimensions.iter().enumerate() {
        let mut values: Vec<&String> = Vec::new();
        for (dims, _) in &cells {
            if !values.contains(&&dims[d].1) {
                values.push(&dims[d].1);
            }
        }
        if values.len() < 2 {
            continue;
        }
        let mut effects = Vec::new();
        for variant in &judged {
            let per_value: Vec<(&String, Tally)> = values
                .iter()
                .map(|value| {
                    let of_value = cells
                        .iter()
                        .filter(|(dims, _)| &dims[d].1 == *value)
                        .map(|(_, c)| *c);
                    (*value, tally(of_value, variant))
                })
                .collect();
            // Only cells whose repeats agree say what a value does; inconsistent ones are
            // listed on their own below.
            let share = |t: &Tally| {
                let n = t.stalls + t.no_stalls;
                (n > 0).then(|| t.stalls as f64 / n as f64)
            };
            let shares: Vec<f64> = per_value.iter().filter_map(|(_, t)| share(t)).collect();
            let differs = shares.iter().any(|s| (s - shares[0]).abs() > 1e-9);
            if differs {
                let detail: Vec<String> = per_value
                    .iter()
                    .filter(|(_, t)| t.stalls + t.no_stalls > 0)
                    .map(|(value, t)| format!("{value} {} of {}", t.stalls, t.stalls + t.no_stalls))
                    .collect();
                effects.push(format!(
                    "{variant} (consistent cells that stalled: {})",
                    detail.join(", ")
                ));
            }
        }
        if effects.is_empty() {
            unchanged.push(format!("{name} ({})", values.len()));
        } else {
            changed.push(format!(
                "{name} changed the outcome of {}",
                effects.join(" and ")
            ));
        }
    }
    for sentence in &changed {
        out.push(format!("The {sentence}."));
    }
    if !unchanged.is_empty() {
        out.push(format!(
            "No variant's outcome depended on {} (values tried).",
            unchanged.join(", ")
        ));
    }
    for variant in &judged {
        let disagreeing: Vec<String> = cells
            .iter()
            .filter(|(_, cell)| {
                cell.variants
                    .iter()
                    .any(|v| &&v.variant == variant && v.verdict == Some(CellVerdict::Inconsistent))
            })
            .map(|(dims, _)| {
                // Only what differs between cells names one.
                let named: Vec<String> = dims
                    .iter()
                    .enumerate()
                    .filter(|(d, _)| varying[*d])
                    .map(|(_, (name, value))| format!("{name} {value}"))
                    .collect();
                if named.is_empty() {
                    "the only cell".to_string()
                } else {
                    named.join(", ")
                }
            })
            .collect();
        if !disagreeing.is_empty() {
            out.push(format!(
                "Repeats of {variant} disagreed in {} of {} cells: {}.",
                disagreeing.len(),
                cells.len(),
                disagreeing.join("; ")
            ));
        }
    }
    if m.max_repeats > 1 {
        out.push(format!(
            "{} of {} cells were consistent across their repeats (up to {} each).",
            m.consistent_cells, m.cells, m.max_repeats
        ));
    } else {
        out.push(
            "Each cell ran once, so consistency is unknown: repeat the run (`--repeat N`)."
                .to_string(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variant(verdicts: &[(VariantVerdict, f64)]) -> MatrixVariant {
        let repeats: Vec<MatrixRepeat> = verdicts
            .iter()
            .map(|(verdict, ms)| MatrixRepeat {
                section_id: String::new(),
                anchor: String::new(),
                verdict: Some(*verdict),
                max_pause_ms: Some(*ms),
                measurements: Vec::new(),
            })
            .collect();
        let longest: Vec<f64> = verdicts.iter().map(|(_, ms)| *ms).collect();
        let only: Vec<VariantVerdict> = verdicts.iter().map(|(v, _)| *v).collect();
        MatrixVariant {
            variant: "default".into(),
            verdict: combine_repeats(&only),
            max_pause_ms: longest.iter().copied().reduce(f64::max),
            spread: Spread::of(&longest),
            repeats,
        }
    }

    #[test]
    fn repeats_show_the_spread_of_their_longest_pauses() {
        assert_eq!(Spread::of(&[180.0]), None);
        let odd = Spread::of(&[180.0, 120.0, 150.0]).unwrap();
        assert_eq!(
            (odd.min_ms, odd.median_ms, odd.max_ms),
            (120.0, 150.0, 180.0)
        );
        let even = Spread::of(&[2900.0, 100.0, 2700.0, 300.0]).unwrap();
        assert_eq!((even.repeats, even.median_ms), (4, 1500.0));
        let quiet = variant(&[
            (VariantVerdict::NoStalls, 180.0),
            (VariantVerdict::NoStalls, 120.0),
            (VariantVerdict::NoStalls, 150.0),
        ]);
        assert_eq!(
            variant_cell_words(&quiet),
            "no stalls (120 ms / 150 ms / 180 ms)"
        );
        let once = variant(&[(VariantVerdict::Stalls, 2900.0)]);
        assert_eq!(variant_cell_words(&once), "stalls (2.9 s)");
    }
}
