//! The lab crate's layers (docs/ARCHITECTURE.md, "The lab's layers"): every file may name
//! only its own layer and the layers below it, and the files of one layer do not name each
//! other in a loop. Read from the sources, so a new `use crate::...` that points up fails
//! here with the file and line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, bottom to top: a directory (or a single file) under src/.
const LAYERS: &[&str] = &[
    "experiment",
    "host",
    "jvm",
    "stress",
    "measure",
    "run",
    "judge",
    "bundle",
];

/// Items of the crate root every layer may use (lib.rs's other names are re-exports for
/// other crates; inside the crate, the layer path says where a thing lives).
const ROOT_ITEMS: &[&str] = &["LabError"];

/// One `crate::...` or `super::...` path in a file: where, and its first two segments.
#[derive(Debug)]
struct Reference {
    line: usize,
    from_super: bool,
    first: String,
    second: Option<String>,
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn ident_at(text: &str) -> &str {
    let end = text.find(|c: char| !is_ident(c)).unwrap_or(text.len());
    &text[..end]
}

/// The paths a `prefix::rest` names: `rest` is `a::b...` or `{a::b, c, ...}`.
fn segments(rest: &str) -> Vec<(String, Option<String>)> {
    let one = |path: &str| {
        let path = path.trim();
        let first = ident_at(path).to_string();
        let second = path[first.len()..]
            .strip_prefix("::")
            .map(|r| ident_at(r.trim_start_matches('{')).to_string())
            .filter(|s| !s.is_empty());
        (first, second)
    };
    let Some(inner) = rest.strip_prefix('{') else {
        return vec![one(rest)];
    };
    // Split the group at its top-level commas.
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                out.push(one(&inner[start..i]));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(one(&inner[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.retain(|(first, _)| !first.is_empty() && first != "self");
    out
}

/// Every `crate::` and `super::` path in `text` (code, tests and doc links alike).
fn references(text: &str) -> Vec<Reference> {
    let mut out = Vec::new();
    for prefix in ["crate::", "super::"] {
        for (at, _) in text.match_indices(prefix) {
            if text[..at].chars().next_back().is_some_and(is_ident) {
                continue; // `pauselab_lab::crate::`-like tails, `mysuper::`
            }
            let line = text[..at].matches('\n').count() + 1;
            for (first, second) in segments(&text[at + prefix.len()..]) {
                out.push(Reference {
                    line,
                    from_super: prefix == "super::",
                    first,
                    second,
                });
            }
        }
    }
    out
}

/// A file's layer and, inside a layer directory, its module name (`None` for the layer's
/// mod.rs, lib.rs and a single-file layer).
fn place(relative: &Path) -> (String, Option<String>) {
    let parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    let module = parts.get(1).filter(|m| *m != "mod").cloned();
    (parts[0].clone(), module)
}

fn rank(layer: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == layer)
}

/// The layer rule broken by `files` (path under src/, text): one line per upward or
/// unknown import, then one per loop between the files of a layer.
fn violations(files: &[(PathBuf, String)]) -> Vec<String> {
    let mut found = Vec::new();
    let owners = owners(files);
    // Per layer: module -> modules of the same layer it names.
    let mut edges: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (path, text) in files {
        let (layer, module) = place(path);
        if layer == "lib" {
            continue; // the crate root re-exports for other crates
        }
        let Some(own) = rank(&layer) else {
            found.push(format!("src/{}: not in a layer of LAYERS", path.display()));
            continue;
        };
        for r in references(text) {
            let at = format!("src/{}:{}", path.display(), r.line);
            let sibling = if r.from_super {
                // `super::x` inside a layer directory is the layer itself; in a file's
                // test module it is the file.
                if module.is_some()
                    && text.lines().nth(r.line - 1).is_some_and(|l| {
                        l.trim_start().starts_with("use super::*") || l.contains("super::super")
                    })
                {
                    continue;
                }
                Some(r.first.clone())
            } else if ROOT_ITEMS.contains(&r.first.as_str()) {
                continue;
            } else {
                let Some(theirs) = rank(&r.first) else {
                    found.push(format!(
                        "{at}: crate::{} is not a layer; name the layer it lives in",
                        r.first
                    ));
                    continue;
                };
                if theirs > own {
                    found.push(format!(
                        "{at}: layer {layer} imports crate::{}, a layer above it",
                        r.first
                    ));
                }
                (theirs == own)
                    .then(|| {
                        r.second
                            .as_deref()
                            .and_then(|name| owners.owner(&layer, name))
                    })
                    .flatten()
            };
            if let (Some(module), Some(sibling)) = (&module, sibling) {
                if *module != sibling {
                    edges
                        .entry(layer.clone())
                        .or_default()
                        .entry(module.clone())
                        .or_default()
                        .insert(sibling);
                }
            }
        }
    }
    for (layer, graph) in &edges {
        for start in graph.keys() {
            if let Some(cycle) = cycle_from(graph, start) {
                found.push(format!("layer {layer}: files import each other: {cycle}"));
            }
        }
    }
    found
}

/// Which file of a layer a name in `crate::<layer>::<name>` comes from: a file of the
/// layer itself, or an item its mod.rs re-exports (`pub use file::{...}`, `pub use file::*`).
struct Owners {
    files: BTreeSet<(String, String)>,
    items: BTreeMap<(String, String), String>,
    globs: BTreeMap<String, String>,
}

impl Owners {
    fn owner(&self, layer: &str, name: &str) -> Option<String> {
        let key = (layer.to_string(), name.to_string());
        if self.files.contains(&key) {
            return Some(name.to_string());
        }
        self.items
            .get(&key)
            .or_else(|| self.globs.get(layer))
            .cloned()
    }
}

fn owners(files: &[(PathBuf, String)]) -> Owners {
    let mut owners = Owners {
        files: BTreeSet::new(),
        items: BTreeMap::new(),
        globs: BTreeMap::new(),
    };
    for (path, text) in files {
        let (layer, module) = place(path);
        if let Some(module) = module {
            owners.files.insert((layer, module));
            continue;
        }
        if !path.ends_with("mod.rs") {
            continue;
        }
        // `pub use file::{a, b};` may span lines: read up to each `;`.
        for statement in text.split(';') {
            let Some(rest) = statement.trim().strip_prefix("pub use ") else {
                continue;
            };
            let file = ident_at(rest).to_string();
            let Some(items) = rest[file.len()..].strip_prefix("::") else {
                continue;
            };
            if items == "*" {
                owners.globs.insert(layer.clone(), file);
                continue;
            }
            for item in items.trim_matches(|c| c == '{' || c == '}').split(',') {
                let item = ident_at(item.trim());
                if !item.is_empty() {
                    owners
                        .items
                        .insert((layer.clone(), item.to_string()), file.clone());
                }
            }
        }
    }
    owners
}

/// A path from `start` back to itself, as `a -> b -> a`, reported from the loop's first
/// file in name order only (so each loop is named once).
fn cycle_from(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<String> {
    let mut stack = vec![vec![start.to_string()]];
    let mut seen = BTreeSet::new();
    while let Some(path) = stack.pop() {
        let last = path.last().unwrap();
        for next in graph.get(last).into_iter().flatten() {
            if next == start {
                if path.iter().any(|p| p.as_str() < start) {
                    return None;
                }
                return Some(format!("{} -> {start}", path.join(" -> ")));
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push(longer);
            }
        }
    }
    None
}

fn sources(dir: &Path, root: &Path, out: &mut Vec<(PathBuf, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            out.push((path.strip_prefix(root).unwrap().to_path_buf(), text));
        }
    }
}

/// Calls of a libc function (`libc::mmap(`; constants such as `libc::SIGKILL` are values,
/// not calls) outside the host layer, whose `sys` module is where system calls live. A
/// file's tests (after `#[cfg(test)]`) may call what they check with.
fn system_calls_outside_host(files: &[(PathBuf, String)]) -> Vec<String> {
    let mut found = Vec::new();
    for (path, text) in files {
        if place(path).0 == "host" {
            continue;
        }
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (index, line) in code.lines().enumerate() {
            let mut rest = line;
            while let Some(at) = rest.find("libc::") {
                rest = &rest[at + "libc::".len()..];
                let name = ident_at(rest);
                let called = rest[name.len()..].trim_start().starts_with('(');
                if called && name.starts_with(|c: char| c.is_ascii_lowercase()) {
                    found.push(format!(
                        "src/{}:{}: libc::{name} is called outside the host layer (put it in host::sys)",
                        path.display(),
                        index + 1
                    ));
                }
            }
        }
    }
    found
}

#[test]
fn system_calls_live_in_the_host_layer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    files.sort();
    let in_host = files
        .iter()
        .filter(|(p, t)| place(p).0 == "host" && t.contains("libc::mmap("))
        .count();
    assert!(in_host >= 1, "the scan must see the host layer's mmap");
    let found = system_calls_outside_host(&files);
    assert!(found.is_empty(), "\n{}", found.join("\n"));

    let planted = [(
        PathBuf::from("stress/pressure.rs"),
        "let a = libc::SIGKILL;\nunsafe { libc::madvise (p, n, 0) };\n#[cfg(test)]\nlibc::getrusage(0, x);\n"
            .to_string(),
    )];
    assert_eq!(
        system_calls_outside_host(&planted),
        ["src/stress/pressure.rs:2: libc::madvise is called outside the host layer (put it in host::sys)"]
    );
}

#[test]
fn every_import_points_down_and_no_layer_has_a_loop() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    files.sort();
    // The scan must see the crate: every layer has files and they import each other.
    let layers: BTreeSet<String> = files.iter().map(|(p, _)| place(p).0).collect();
    for layer in LAYERS {
        assert!(layers.contains(*layer), "no source for layer {layer}");
    }
    let total: usize = files.iter().map(|(_, t)| references(t).len()).sum();
    assert!(
        total > 100,
        "only {total} crate:: paths found: the scanner is broken"
    );
    let found = violations(&files);
    assert!(found.is_empty(), "\n{}", found.join("\n"));
}

#[test]
fn an_upward_import_a_stray_path_and_a_loop_are_each_reported() {
    let file = |path: &str, text: &str| (PathBuf::from(path), text.to_string());
    let files = [
        file("host/journal.rs", "use crate::host::sys;\nuse crate::{experiment::units, run::runner::Finished};\n"),
        file("host/sys.rs", "//! See [`crate::host::journal::Journal`].\n"),
        file("measure/hlog.rs", "pub fn f() -> crate::units::Unit { todo!() }\n"),
        file("judge/verdict.rs", "use crate::{LabError, judge::Summary, measure::hlog::Stats};\n#[cfg(test)]\nmod tests { use super::*; }\n"),
        file("judge/mod.rs", "mod summary;\nmod verdict;\npub use summary::{\n    Summary, JdkVerdict,\n};\n"),
        file("judge/summary.rs", "use crate::judge::verdict::Judgement;\n"),
        file("judge/jmh_score.rs", "use crate::judge::JdkVerdict;\n"),
        file("judge/rules.rs", "use crate::judge::Summary;\n"),
    ];
    let found = violations(&files);
    assert_eq!(
        found,
        [
            "src/host/journal.rs:2: layer host imports crate::run, a layer above it",
            "src/measure/hlog.rs:1: crate::units is not a layer; name the layer it lives in",
            "layer host: files import each other: journal -> sys -> journal",
            "layer judge: files import each other: summary -> verdict -> summary",
        ]
    );
}
