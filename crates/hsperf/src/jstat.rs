//! jstat's statistics options (`-gcutil`, `-gc`, `-gccause`, `-class`, `-compiler`,
//! `-printcompilation`) computed from a [`Snapshot`], with the JDK jstat's column
//! expressions and its exact text layout (header alignment, widths, decimal patterns with
//! half-even rounding, `-` for a value that cannot be computed).
//!
//! Semantics kept from jstat: a counter missing from the JVM evaluates to NaN (shown `-`),
//! except in a column marked required (GCT), where it counts as 0; a Constant string used
//! in arithmetic is NaN; a column whose expression is a single string counter shows the
//! string.

use std::fmt::Write as _;
use std::time::UNIX_EPOCH;

use serde::Serialize;

use crate::format::{Snapshot, Value};

/// The statistics options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JstatOption {
    GcUtil,
    Gc,
    GcCause,
    Class,
    Compiler,
    PrintCompilation,
}

impl JstatOption {
    /// All supported options, in jstat's `-options` order.
    pub const ALL: [JstatOption; 6] = [
        JstatOption::Class,
        JstatOption::Compiler,
        JstatOption::Gc,
        JstatOption::GcCause,
        JstatOption::GcUtil,
        JstatOption::PrintCompilation,
    ];

    /// The option as jstat spells it, without the dash.
    pub fn name(self) -> &'static str {
        match self {
            JstatOption::GcUtil => "gcutil",
            JstatOption::Gc => "gc",
            JstatOption::GcCause => "gccause",
            JstatOption::Class => "class",
            JstatOption::Compiler => "compiler",
            JstatOption::PrintCompilation => "printcompilation",
        }
    }
}

impl std::str::FromStr for JstatOption {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bare = s.strip_prefix('-').unwrap_or(s);
        JstatOption::ALL
            .into_iter()
            .find(|o| o.name() == bare)
            .ok_or_else(|| {
                format!(
                    "unknown jstat option {s:?}; supported: {}",
                    JstatOption::ALL.map(|o| format!("-{}", o.name())).join(" ")
                )
            })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Align {
    Left,
    Center,
    Right,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Scale {
    Raw,
    Kilo,
}

#[derive(Debug, Clone, PartialEq)]
enum Expr {
    Num(f64),
    Counter(String),
    /// Seconds since the JVM started (jstat's `-t` column).
    Uptime,
    Op(u8, Box<Expr>, Box<Expr>),
}

/// One column, with its width already widened for its header the way jstat does.
#[derive(Debug, Clone)]
struct Column {
    header: String,
    header_align: Align,
    expr: Expr,
    scale: Scale,
    align: Align,
    width: usize,
    decimals: usize,
    required: bool,
}

/// A computed cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Cell {
    Number(Option<f64>),
    Text(String),
}

/// Formats rows of one option.
#[derive(Debug, Clone)]
pub struct JstatFormatter {
    option: JstatOption,
    columns: Vec<Column>,
}

/// A column definition: header with jstat's `^` anchors, expression, scale, alignment,
/// width and decimals (`None` = no decimals).
type Def = (&'static str, String, Scale, Align, usize, Option<usize>);

fn utilization(space: &str) -> String {
    format!("(1-(({space}.capacity - {space}.used)/{space}.capacity)) * 100")
}

fn collector_columns() -> Vec<Def> {
    use Align::Right;
    use Scale::Raw;
    let freq = "sun.os.hrt.frequency";
    let mut defs: Vec<Def> = Vec::new();
    for (n, (count, time, width)) in [
        ("^YGC^", "^YGCT^", 6),
        ("^FGC^", "^FGCT^", 5),
        ("^CGC^", "^CGCT^", 5),
    ]
    .into_iter()
    .enumerate()
    {
        defs.push((
            count,
            format!("sun.gc.collector.{n}.invocations"),
            Raw,
            Right,
            width,
            None,
        ));
        defs.push((
            time,
            format!("sun.gc.collector.{n}.time/{freq}"),
            Raw,
            Right,
            9,
            Some(3),
        ));
    }
    defs.push((
        "^GCT^",
        format!(
            "(sun.gc.collector.0.time + sun.gc.collector.1.time + sun.gc.collector.2.time)/{freq}"
        ),
        Raw,
        Right,
        9,
        Some(3),
    ));
    defs
}

fn definitions(option: JstatOption) -> Vec<Def> {
    use Align::{Left, Right};
    use Scale::{Kilo, Raw};
    let space = |g: u32, s: u32| format!("sun.gc.generation.{g}.space.{s}");
    let util_spaces = [
        ("^S0^", space(0, 1)),
        ("^S1^", space(0, 2)),
        ("^E^", space(0, 0)),
        ("^O^", space(1, 0)),
        ("^M^", "sun.gc.metaspace".to_string()),
        ("^CCS^", "sun.gc.compressedclassspace".to_string()),
    ];
    let utilization_columns = || -> Vec<Def> {
        util_spaces
            .iter()
            .map(|(h, s)| (*h, utilization(s), Raw, Right, 6, Some(2)))
            .chain(collector_columns())
            .collect()
    };
    match option {
        JstatOption::GcUtil => utilization_columns(),
        JstatOption::GcCause => {
            let mut defs = utilization_columns();
            defs.push(("^LGCC", "sun.gc.lastCause".into(), Raw, Left, 20, None));
            defs.push(("^GCC", "sun.gc.cause".into(), Raw, Left, 20, None));
            defs
        }
        JstatOption::Gc => {
            let mut defs: Vec<Def> = Vec::new();
            let sized = [
                ("^S0C^", space(0, 1), "capacity", 11),
                ("^S1C^", space(0, 2), "capacity", 11),
                ("^S0U^", space(0, 1), "used", 11),
                ("^S1U^", space(0, 2), "used", 11),
                ("^EC^", space(0, 0), "capacity", 12),
                ("^EU^", space(0, 0), "used", 12),
                ("^OC^", space(1, 0), "capacity", 12),
                ("^OU^", space(1, 0), "used", 12),
                ("^MC^", "sun.gc.metaspace".into(), "capacity", 10),
                ("^MU^", "sun.gc.metaspace".into(), "used", 10),
                (
                    "^CCSC^",
                    "sun.gc.compressedclassspace".into(),
                    "capacity",
                    9,
                ),
                ("^CCSU^", "sun.gc.compressedclassspace".into(), "used", 9),
            ];
            for (h, s, field, width) in sized {
                defs.push((h, format!("{s}.{field}"), Kilo, Right, width, Some(1)));
            }
            defs.extend(collector_columns());
            defs
        }
        JstatOption::Class => vec![
            (
                "^Loaded^",
                "java.cls.loadedClasses + java.cls.sharedLoadedClasses".into(),
                Raw,
                Right,
                5,
                None,
            ),
            (
                "^Bytes^",
                "sun.cls.loadedBytes + sun.cls.sharedLoadedBytes".into(),
                Kilo,
                Right,
                7,
                Some(1),
            ),
            (
                "^Unloaded^",
                "java.cls.unloadedClasses + java.cls.sharedUnloadedClasses".into(),
                Raw,
                Right,
                5,
                None,
            ),
            (
                "^Bytes^",
                "sun.cls.unloadedBytes + sun.cls.sharedUnloadedBytes".into(),
                Kilo,
                Right,
                7,
                Some(1),
            ),
            (
                "^Time^",
                "sun.cls.time/sun.os.hrt.frequency".into(),
                Raw,
                Right,
                10,
                Some(2),
            ),
        ],
        JstatOption::Compiler => vec![
            (
                "^Compiled^",
                "sun.ci.totalCompiles".into(),
                Raw,
                Right,
                6,
                None,
            ),
            (
                "^Failed^",
                "sun.ci.totalBailouts".into(),
                Raw,
                Right,
                6,
                None,
            ),
            (
                "^Invalid^",
                "sun.ci.totalInvalidates".into(),
                Raw,
                Right,
                6,
                None,
            ),
            (
                "^Time^",
                "java.ci.totalTime/sun.os.hrt.frequency".into(),
                Raw,
                Right,
                8,
                Some(2),
            ),
            (
                "^FailedType^",
                "sun.ci.lastFailedType".into(),
                Raw,
                Right,
                4,
                None,
            ),
            (
                "^FailedMethod",
                "sun.ci.lastFailedMethod".into(),
                Raw,
                Left,
                1,
                None,
            ),
        ],
        JstatOption::PrintCompilation => vec![
            (
                "^Compiled^",
                "sun.ci.totalCompiles".into(),
                Raw,
                Right,
                6,
                None,
            ),
            ("^Size^", "sun.ci.lastSize".into(), Raw, Right, 6, None),
            ("^Type^", "sun.ci.lastType".into(), Raw, Right, 4, None),
            ("^Method", "sun.ci.lastMethod".into(), Raw, Left, 1, None),
        ],
    }
}

impl Column {
    fn new(def: Def, required: bool) -> Column {
        let (anchored, expr, scale, align, width, decimals) = def;
        let expr =
            parse_expr(&expr).unwrap_or_else(|e| panic!("bad built-in expression {expr}: {e}"));
        Column::with_expr(anchored, expr, scale, align, width, decimals, required)
    }

    fn with_expr(
        anchored: &str,
        expr: Expr,
        scale: Scale,
        align: Align,
        width: usize,
        decimals: Option<usize>,
        required: bool,
    ) -> Column {
        // jstat widens a column to fit its header (and for centred headers its pattern).
        let pattern_len = decimals.map_or(1, |d| d + 2);
        let starts = anchored.starts_with('^');
        let ends = anchored.ends_with('^') && anchored.len() > 1;
        let header = anchored.trim_matches('^').to_string();
        let header_len = header.chars().count();
        let (header_align, width) = match (starts, ends) {
            (true, true) => (Align::Center, width.max(pattern_len).max(header_len)),
            (true, false) => (Align::Left, width.max(header_len)),
            (false, true) => (Align::Right, width.max(header_len)),
            (false, false) => (Align::Center, width),
        };
        Column {
            header,
            header_align,
            expr,
            scale,
            align,
            width,
            decimals: decimals.unwrap_or(0),
            required,
        }
    }
}

impl JstatFormatter {
    /// A formatter for `option`, with jstat's `-t` Timestamp column first if `timestamp`.
    pub fn new(option: JstatOption, timestamp: bool) -> JstatFormatter {
        let mut columns = Vec::new();
        if timestamp {
            columns.push(Column::with_expr(
                "^Timestamp",
                Expr::Uptime,
                Scale::Raw,
                Align::Right,
                15,
                Some(1),
                false,
            ));
        }
        for def in definitions(option) {
            let required = def.0 == "^GCT^";
            columns.push(Column::new(def, required));
        }
        JstatFormatter { option, columns }
    }

    pub fn option(&self) -> JstatOption {
        self.option
    }

    /// The header line (no newline).
    pub fn header(&self) -> String {
        let cells: Vec<String> = self
            .columns
            .iter()
            .map(|c| align(&c.header, c.width, c.header_align))
            .collect();
        cells.join(" ")
    }

    /// Column names, in order.
    pub fn column_names(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.header.as_str()).collect()
    }

    /// The computed cells of one row (scaled, unrounded; `None` where jstat shows `-`).
    pub fn cells(&self, snapshot: &Snapshot) -> Vec<Cell> {
        self.columns
            .iter()
            .map(|c| match evaluate(&c.expr, snapshot, c.required) {
                Evaluated::Text(s) => Cell::Text(s),
                Evaluated::Number(v) => {
                    let v = scale(v, c.scale);
                    Cell::Number((!v.is_nan()).then_some(v))
                }
            })
            .collect()
    }

    /// One data line (no newline), byte-identical to jstat's for the same counter values.
    pub fn row(&self, snapshot: &Snapshot) -> String {
        let mut line = String::new();
        for (i, c) in self.columns.iter().enumerate() {
            if i > 0 {
                line.push(' ');
            }
            let text = match evaluate(&c.expr, snapshot, c.required) {
                Evaluated::Text(s) => s,
                Evaluated::Number(v) => format_decimal(scale(v, c.scale), c.decimals),
            };
            line.push_str(&align(&text, c.width, c.align));
        }
        line
    }
}

fn scale(v: f64, scale: Scale) -> f64 {
    match scale {
        Scale::Raw => v,
        Scale::Kilo => v / 1024.0,
    }
}

/// Java's `DecimalFormat("0.00…")` with `-` for NaN: half-even rounding of the exact
/// binary value (as Rust's formatter does), no grouping, `∞` for infinities.
fn format_decimal(v: f64, decimals: usize) -> String {
    if v.is_nan() {
        "-".to_string()
    } else if v.is_infinite() {
        if v > 0.0 { "\u{221E}" } else { "-\u{221E}" }.to_string()
    } else {
        let mut s = String::new();
        let _ = write!(s, "{v:.decimals$}");
        s
    }
}

fn align(s: &str, width: usize, how: Align) -> String {
    let len = s.chars().count();
    if len >= width {
        return s.to_string();
    }
    let pad = width - len;
    match how {
        Align::Left => format!("{s}{}", " ".repeat(pad)),
        Align::Right => format!("{}{s}", " ".repeat(pad)),
        Align::Center => {
            let (half, odd) = (pad / 2, pad % 2);
            if half == 0 {
                format!("{s}{}", " ".repeat(odd))
            } else {
                format!("{}{s}{}", " ".repeat(half), " ".repeat(half + odd))
            }
        }
    }
}

enum Evaluated {
    Number(f64),
    Text(String),
}

fn evaluate(expr: &Expr, snapshot: &Snapshot, required: bool) -> Evaluated {
    match expr {
        Expr::Counter(name) => match snapshot.get(name).map(|c| c.value) {
            Some(Value::String(s)) => Evaluated::Text(s.into_owned()),
            _ => Evaluated::Number(number(expr, snapshot, required)),
        },
        _ => Evaluated::Number(number(expr, snapshot, required)),
    }
}

fn number(expr: &Expr, snapshot: &Snapshot, required: bool) -> f64 {
    match expr {
        Expr::Num(v) => *v,
        Expr::Counter(name) => match snapshot.get(name).map(|c| c.value) {
            Some(Value::Long(v)) => v as f64,
            Some(Value::Double(v)) => v,
            Some(_) => f64::NAN,
            None if required => 0.0,
            None => f64::NAN,
        },
        Expr::Uptime => uptime(snapshot),
        Expr::Op(op, l, r) => {
            let (l, r) = (number(l, snapshot, required), number(r, snapshot, required));
            match op {
                b'+' => l + r,
                b'-' => l - r,
                b'*' => l * r,
                _ => l / r,
            }
        }
    }
}

/// Seconds since JVM start: the tick counter where the JVM keeps one (JDK 17 and older),
/// else the snapshot's wall-clock time minus `sun.rt.createVmBeginTime` (JDK 22+, where
/// the JDK's own jstat prints `-` because it has no such counter to read).
fn uptime(snapshot: &Snapshot) -> f64 {
    if let Some(s) = snapshot.seconds("sun.os.hrt.ticks") {
        return s;
    }
    match snapshot.value_i64("sun.rt.createVmBeginTime") {
        Some(begin) => {
            let now_ms = snapshot
                .taken_at()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as f64)
                .unwrap_or(f64::NAN);
            (now_ms - begin as f64) / 1000.0
        }
        None => f64::NAN,
    }
}

/// Parses `a + b`, `a - b`, `a * b`, `a / b`, parentheses, numbers and counter names.
fn parse_expr(text: &str) -> Result<Expr, String> {
    let tokens = tokenize(text)?;
    let mut pos = 0;
    let e = parse_sum(&tokens, &mut pos)?;
    if pos != tokens.len() {
        return Err(format!("unexpected token at {pos}"));
    }
    Ok(e)
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Num(f64),
    Name(String),
    Op(u8),
    Open,
    Close,
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' => i += 1,
            b'(' => {
                out.push(Token::Open);
                i += 1
            }
            b')' => {
                out.push(Token::Close);
                i += 1
            }
            b'+' | b'-' | b'*' | b'/' => {
                out.push(Token::Op(c));
                i += 1
            }
            b'0'..=b'9' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                    i += 1;
                }
                out.push(Token::Num(
                    text[start..i].parse().map_err(|e| format!("{e}"))?,
                ));
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.')
                {
                    i += 1;
                }
                out.push(Token::Name(text[start..i].to_string()));
            }
            other => return Err(format!("unexpected character {:?}", other as char)),
        }
    }
    Ok(out)
}

fn parse_sum(t: &[Token], pos: &mut usize) -> Result<Expr, String> {
    let mut left = parse_product(t, pos)?;
    while let Some(Token::Op(op @ (b'+' | b'-'))) = t.get(*pos) {
        *pos += 1;
        let right = parse_product(t, pos)?;
        left = Expr::Op(*op, Box::new(left), Box::new(right));
    }
    Ok(left)
}

fn parse_product(t: &[Token], pos: &mut usize) -> Result<Expr, String> {
    let mut left = parse_atom(t, pos)?;
    while let Some(Token::Op(op @ (b'*' | b'/'))) = t.get(*pos) {
        *pos += 1;
        let right = parse_atom(t, pos)?;
        left = Expr::Op(*op, Box::new(left), Box::new(right));
    }
    Ok(left)
}

fn parse_atom(t: &[Token], pos: &mut usize) -> Result<Expr, String> {
    let token = t.get(*pos).ok_or("unexpected end")?;
    *pos += 1;
    match token {
        Token::Num(v) => Ok(Expr::Num(*v)),
        Token::Name(n) => Ok(Expr::Counter(n.clone())),
        Token::Open => {
            let e = parse_sum(t, pos)?;
            match t.get(*pos) {
                Some(Token::Close) => {
                    *pos += 1;
                    Ok(e)
                }
                _ => Err("missing )".into()),
            }
        }
        other => Err(format!("unexpected {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_matches_jstat() {
        assert_eq!(align("S0", 6, Align::Center), "  S0  ");
        assert_eq!(align("E", 6, Align::Center), "  E   ");
        assert_eq!(align("ab", 3, Align::Center), "ab ");
        assert_eq!(align("abcdef", 3, Align::Right), "abcdef");
        assert_eq!(align("x", 3, Align::Left), "x  ");
    }

    #[test]
    fn decimals_match_decimal_format() {
        assert_eq!(format_decimal(f64::NAN, 2), "-");
        assert_eq!(format_decimal(0.125, 2), "0.12");
        assert_eq!(format_decimal(0.375, 2), "0.38");
        assert_eq!(format_decimal(2.5, 0), "2");
        assert_eq!(format_decimal(f64::INFINITY, 2), "\u{221E}");
        assert_eq!(format_decimal(1e20, 1), "100000000000000000000.0");
    }

    #[test]
    fn expressions_parse_with_precedence() {
        let e = parse_expr("(1-((a - b)/a)) * 100").unwrap();
        let Expr::Op(b'*', _, r) = e else {
            panic!("top is not *: {e:?}")
        };
        assert_eq!(*r, Expr::Num(100.0));
        assert!(parse_expr("a +").is_err());
        assert!(parse_expr("(a").is_err());
    }

    #[test]
    fn every_option_builds() {
        for o in JstatOption::ALL {
            let f = JstatFormatter::new(o, true);
            assert!(f.header().starts_with("Timestamp      "));
            assert_eq!(format!("-{}", o.name()).parse::<JstatOption>(), Ok(o));
        }
        assert!("-gccapacity".parse::<JstatOption>().is_err());
    }
}
