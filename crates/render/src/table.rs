//! Aligned text tables for the terminal: a row of column names, a row of units when any
//! column has one, and cells padded to each column's width, so every row lines up with the
//! header whatever its values.

/// Which side of its column a cell keeps to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

pub struct Column {
    pub name: String,
    /// Printed under the name (`ms`, `%`); empty for none.
    pub unit: &'static str,
    pub width: usize,
    pub align: Align,
}

impl Column {
    /// A column at least `width` wide, widened to its name and unit.
    pub fn new(name: impl Into<String>, unit: &'static str, width: usize, align: Align) -> Column {
        let name = name.into();
        let width = width.max(name.chars().count()).max(unit.chars().count());
        Column {
            name,
            unit,
            width,
            align,
        }
    }
}

pub struct Table {
    columns: Vec<Column>,
    /// Spaces between two columns.
    gap: usize,
}

impl Table {
    pub fn new(columns: Vec<Column>, gap: usize) -> Table {
        Table { columns, gap }
    }

    /// Left-aligned columns as wide as their widest cell (for a table known in full before
    /// it is printed).
    pub fn fitted(names: &[&str], rows: &[Vec<String>], gap: usize) -> Table {
        let columns = names
            .iter()
            .enumerate()
            .map(|(index, name)| {
                let widest = rows
                    .iter()
                    .filter_map(|row| row.get(index))
                    .map(|cell| cell.chars().count())
                    .max()
                    .unwrap_or(0);
                Column::new(*name, "", widest, Align::Left)
            })
            .collect();
        Table::new(columns, gap)
    }

    /// The names line, and the units line when any column has a unit.
    pub fn header(&self) -> String {
        let names: Vec<&str> = self.columns.iter().map(|c| c.name.as_str()).collect();
        let mut out = self.row(&names);
        if self.columns.iter().any(|c| !c.unit.is_empty()) {
            let units: Vec<&str> = self.columns.iter().map(|c| c.unit).collect();
            out.push('\n');
            out.push_str(&self.row(&units));
        }
        out
    }

    /// One line (without its line break). A cell wider than its column pushes the rest of
    /// its line right: callers keep cells within their widths ([`fit_number`]). The last
    /// column, when left-aligned, is free text and not padded.
    pub fn row<S: AsRef<str>>(&self, cells: &[S]) -> String {
        let mut line = String::new();
        for (index, (column, cell)) in self.columns.iter().zip(cells).enumerate() {
            let cell = cell.as_ref();
            let last = index + 1 == self.columns.len();
            if index > 0 {
                line.push_str(&" ".repeat(self.gap));
            }
            let pad = " ".repeat(column.width.saturating_sub(cell.chars().count()));
            match column.align {
                Align::Right => {
                    line.push_str(&pad);
                    line.push_str(cell);
                }
                Align::Left if last => line.push_str(cell),
                Align::Left => {
                    line.push_str(cell);
                    line.push_str(&pad);
                }
            }
        }
        line.truncate(line.trim_end().len());
        line
    }
}

/// `value` in at most `width` characters: with `decimals` when it fits, else with fewer,
/// else scaled with an SI suffix (`12.3k`, `4M`), so a column stays aligned however large
/// the values grow. `-` for no value.
pub fn fit_number(value: Option<f64>, decimals: usize, width: usize) -> String {
    let Some(value) = value else {
        return "-".to_string();
    };
    for places in (0..=decimals).rev() {
        let text = format!("{value:.places$}");
        if text.len() <= width {
            return text;
        }
    }
    let mut scaled = value;
    for suffix in ["k", "M", "G", "T", "P", "E"] {
        scaled /= 1000.0;
        for places in [1, 0] {
            let text = format!("{scaled:.places$}{suffix}");
            if text.len() <= width {
                return text;
            }
        }
    }
    "#".repeat(width.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_shrink_to_their_column() {
        assert_eq!(fit_number(Some(12.34), 1, 7), "12.3");
        assert_eq!(fit_number(Some(123_456.7), 1, 7), "123457");
        assert_eq!(fit_number(Some(12_345_678.0), 1, 7), "12346k");
        assert_eq!(fit_number(Some(3.6e9), 1, 5), "3600M");
        assert_eq!(fit_number(Some(99_999.0), 0, 4), "100k");
        assert_eq!(fit_number(None, 1, 7), "-");
        for value in [0.0, 9.99, 1e3, 1e6, 1e9, 1e12, 1e15, 1e18, 9.9e18] {
            for width in 4..10 {
                let text = fit_number(Some(value), 1, width);
                assert!(text.len() <= width, "{value} in {width}: {text}");
            }
        }
    }

    #[test]
    fn rows_line_up_with_the_header() {
        let table = Table::new(
            vec![
                Column::new("time", "", 5, Align::Left),
                Column::new("stopped", "ms", 7, Align::Right),
                Column::new("threads", "", 0, Align::Left),
            ],
            1,
        );
        assert_eq!(table.header(), "time  stopped threads\n           ms");
        assert_eq!(table.row(&["12:00", "3.5", "a b"]), "12:00     3.5 a b");
    }
}
