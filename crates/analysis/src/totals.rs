//! Count, sum and maximum of durations under one name (a pause, a VM operation, a thread,
//! a cause), as the report lists them.

use std::collections::BTreeMap;

use serde::Serialize;

/// Count, total and maximum of durations under one name.
#[derive(Debug, Clone, Default, Serialize)]
pub struct NameTotals {
    /// The pause, VM operation, thread or cause.
    pub name: String,
    /// How many.
    pub count: u64,
    /// Their total, ms.
    pub total_ms: f64,
    /// The longest, ms.
    pub max_ms: f64,
    /// Only for VM operations: whether it is a garbage collection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gc: Option<bool>,
}

#[derive(Default)]
pub(crate) struct Totals {
    pub(crate) count: u64,
    pub(crate) total_ns: u128,
    pub(crate) max_ns: u64,
    /// For VM operations: whether it collected garbage.
    pub(crate) gc: Option<bool>,
    /// For pause names: what the name says of the collection, read once per name.
    pub(crate) named: NameMarks,
}

/// What a pause's name says, for [`is_marked`](crate::rules::marks::is_marked): read when the
/// name is first counted, not for every pause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct NameMarks {
    /// A full collection's name.
    pub(crate) full: bool,
    /// A name that a rule watching marked pauses may count.
    pub(crate) marked: bool,
}

impl Totals {
    pub(crate) fn named(&self, name: &str) -> NameTotals {
        NameTotals {
            name: name.to_string(),
            count: self.count,
            total_ms: self.total_ns as f64 / 1e6,
            max_ms: self.max_ns as f64 / 1e6,
            gc: self.gc,
        }
    }

    pub(crate) fn add(&mut self, ns: u64) {
        self.count += 1;
        self.total_ns += u128::from(ns);
        self.max_ns = self.max_ns.max(ns);
    }
}

/// Totals by name for names a log repeats (pause names, VM operations), at most `max` names.
/// A log has a handful of them: the first few found are compared one by one (their
/// lengths, their bytes only when as long), cheaper than a search of the names' order,
/// which compares bytes at every step; the search finds the others.
pub(crate) struct TotalsByName {
    /// In the order first counted.
    entries: Vec<(String, Totals)>,
    /// Each name's place in `entries`.
    index: BTreeMap<String, usize>,
    max: usize,
    /// The place of the name found last, compared first: pauses and VM operations mostly
    /// repeat the name before them.
    last: usize,
}

/// How many of the first names are compared one by one.
const COMPARED: usize = 8;

/// `a == b`, for the short names of pauses and VM operations (`ParNew`, `CMS Final
/// Remark`, `GC`) without a call to `memcmp`: from 4 to 16 bytes, as the words at either
/// end, which overlap and together cover every byte; below 4, byte by byte.
#[inline(always)]
fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if (8..=16).contains(&n) {
        let word = |s: &[u8], at: usize| u64::from_ne_bytes(s[at..at + 8].try_into().unwrap());
        word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8)
    } else if (4..8).contains(&n) {
        let word = |s: &[u8], at: usize| u32::from_ne_bytes(s[at..at + 4].try_into().unwrap());
        word(a, 0) == word(b, 0) && word(a, n - 4) == word(b, n - 4)
    } else if n < 4 {
        // The first, middle and last bytes are all of them.
        n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1])
    } else {
        a == b
    }
}

impl TotalsByName {
    pub(crate) fn new(max: usize) -> Self {
        TotalsByName {
            entries: Vec::new(),
            index: BTreeMap::new(),
            max,
            last: 0,
        }
    }

    /// The totals of `name`, begun with `new` when the name is new; none when it is new
    /// and `max` names are kept already.
    #[inline]
    pub(crate) fn entry(
        &mut self,
        name: &str,
        new: impl FnOnce() -> Totals,
    ) -> Option<&mut Totals> {
        // Asked for every pause and safepoint: the name before, then the first names,
        // compared in place.
        let last = self.last;
        if self
            .entries
            .get(last)
            .is_some_and(|(n, _)| same_name(n, name))
        {
            return Some(&mut self.entries[last].1);
        }
        let first = &self.entries[..self.entries.len().min(COMPARED)];
        let at = match first.iter().position(|(first, _)| same_name(first, name)) {
            Some(at) => at,
            None => self.search_or_insert(name, new)?,
        };
        self.last = at;
        Some(&mut self.entries[at].1)
    }

    /// The place of `name`, not among the first names: found in the index, or added.
    #[inline(never)]
    fn search_or_insert(&mut self, name: &str, new: impl FnOnce() -> Totals) -> Option<usize> {
        if self.entries.len() <= COMPARED {
            return self.insert(name, new);
        }
        match self.index.get(name) {
            Some(&at) => Some(at),
            None => self.insert(name, new),
        }
    }

    /// Adds `name`, unless `max` names are kept already.
    fn insert(&mut self, name: &str, new: impl FnOnce() -> Totals) -> Option<usize> {
        if self.entries.len() >= self.max {
            return None;
        }
        self.index.insert(name.to_string(), self.entries.len());
        self.entries.push((name.to_string(), new()));
        Some(self.entries.len() - 1)
    }

    /// The names and their totals, in the names' order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &Totals)> {
        self.index
            .iter()
            .map(|(name, &at)| (name.as_str(), &self.entries[at].1))
    }

    /// The names, in their order.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.index.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Names compared by their end words are equal exactly when their bytes are: names
        /// of every length up to 20 bytes, mostly alike (one byte differs, or the length).
        #[test]
        fn names_compared_by_words_are_equal_as_strings(
            name in "[a-c ]{0,20}",
            change in 0usize..24,
            with in "[a-d]",
            shorten in any::<bool>(),
        ) {
            let mut other = name.clone();
            if shorten && !other.is_empty() {
                other.pop();
            } else if change < other.len() {
                other.replace_range(change..change + 1, &with);
            }
            prop_assert_eq!(same_name(&name, &other), name == other);
            prop_assert!(same_name(&name, &name.clone()));
        }
    }

    #[test]
    fn names_beyond_the_first_compared_are_found_and_listed_in_order() {
        let mut totals = TotalsByName::new(12);
        for round in 0..3 {
            for i in (0..15).rev() {
                let name = format!("name {i:02}");
                if let Some(t) = totals.entry(&name, Totals::default) {
                    t.add(round * 100 + i);
                }
            }
        }
        let kept: Vec<(&str, u64, u64)> =
            totals.iter().map(|(n, t)| (n, t.count, t.max_ns)).collect();
        // The first 12 names seen, each counted at every round.
        assert_eq!(kept.len(), 12);
        assert_eq!(kept[0], ("name 03", 3, 203));
        assert_eq!(kept[11], ("name 14", 3, 214));
        assert!(totals.names().eq(kept.iter().map(|k| k.0)));
    }
}
