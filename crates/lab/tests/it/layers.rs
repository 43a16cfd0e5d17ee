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

// Import loops in every crate of the workspace (docs/ARCHITECTURE.md: "no import loop in
// any crate"). A module is a file; a module's own submodules belong to it, so a parent
// naming its children (`mod.rs` listing them) and a child naming its parent (`super::x`) are
// not loops. Between siblings of one parent, every file inside each sibling counts as the
// sibling: `analysis/pauses.rs -> findings.rs -> analysis/report.rs` is the loop
// `analysis -> findings -> analysis` of the crate root. Tests (`#[cfg(test)]` onwards, a
// `tests.rs` module) and comments (doc links) are not imports.

/// One crate's modules: the module path (`[]` for lib.rs or main.rs, `["parse", "memory"]`
/// for parse/memory.rs) -> file under the crate and its code without tests and comments.
type Modules = BTreeMap<Vec<String>, (String, String)>;

/// The module of a file under src/; `None` for a test module.
fn module_of(relative: &Path) -> Option<Vec<String>> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    let last = parts.pop()?;
    match last.as_str() {
        "tests" => return None,
        "lib" | "main" if parts.is_empty() => {}
        "mod" => {}
        _ => parts.push(last),
    }
    Some(parts)
}

/// A file's code: up to its tests, without comment lines.
fn code_of(text: &str) -> String {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    code.lines()
        .map(|l| {
            if l.trim_start().starts_with("//") {
                ""
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn crate_modules(src: &Path) -> Modules {
    let mut files = Vec::new();
    sources(src, src, &mut files);
    let crate_dir = src.parent().unwrap().file_name().unwrap().to_string_lossy();
    files
        .into_iter()
        .filter_map(|(path, text)| {
            let module = module_of(&path)?;
            let shown = format!("crates/{crate_dir}/src/{}", path.display());
            Some((module, (shown, code_of(&text))))
        })
        .collect()
}

/// The full paths a `prefix::rest` names: `a::b::c`, or each path of a `{...}` group.
fn full_paths(rest: &str) -> Vec<Vec<String>> {
    let mut head = Vec::new();
    let mut rest = rest.trim_start();
    loop {
        let name = ident_at(rest);
        if name.is_empty() {
            break;
        }
        head.push(name.to_string());
        match rest[name.len()..].trim_start().strip_prefix("::") {
            Some(after) => rest = after.trim_start(),
            None => return vec![head],
        }
    }
    let Some(inner) = rest.strip_prefix('{') else {
        return vec![head];
    };
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' | ',' if depth == 0 => {
                for tail in full_paths(&inner[start..i]) {
                    out.push(head.iter().cloned().chain(tail).collect());
                }
                if c == '}' {
                    break;
                }
                start = i + 1;
            }
            '}' => depth -= 1,
            _ => {}
        }
    }
    out
}

/// The item names `file` re-exports from its child module `child` (`pub use child::{a, b}`,
/// `pub(crate) use child::a`); `*` for a glob.
fn reexports_from(code: &str, child: &str) -> Vec<String> {
    let mut names = Vec::new();
    for statement in code.split(';') {
        let statement = statement.trim();
        let Some(rest) = ["pub use ", "pub(crate) use ", "pub(super) use "]
            .iter()
            .find_map(|p| statement.strip_prefix(p))
        else {
            continue;
        };
        let rest = rest.strip_prefix("self::").unwrap_or(rest);
        for path in full_paths(rest) {
            if path.first().map(String::as_str) == Some(child) {
                names.push(path.last().cloned().unwrap_or_default());
            } else if path.len() == 1 && rest.starts_with(&format!("{child}::*")) {
                names.push("*".to_string());
            }
        }
    }
    names
}

/// The module a path names, from `start`: as deep as modules exist, then into the child
/// module an item is re-exported from.
fn resolve(modules: &Modules, start: Vec<String>, path: &[String]) -> Vec<String> {
    let mut here = start;
    for name in path {
        let mut deeper = here.clone();
        deeper.push(name.clone());
        if modules.contains_key(&deeper) {
            here = deeper;
            continue;
        }
        let code = modules.get(&here).map_or("", |(_, code)| code.as_str());
        let children: Vec<&Vec<String>> = modules
            .keys()
            .filter(|m| m.len() == here.len() + 1 && m.starts_with(&here))
            .collect();
        let from = children
            .iter()
            .find(|c| reexports_from(code, c.last().unwrap()).contains(name))
            .or_else(|| {
                children.iter().find(|c| {
                    reexports_from(code, c.last().unwrap())
                        .iter()
                        .any(|n| n == "*")
                })
            });
        if let Some(child) = from {
            here = (*child).clone();
        }
        break;
    }
    here
}

/// Per parent module (as `a::b`, `` for the root): sibling -> sibling it names -> where.
type Graphs = BTreeMap<String, BTreeMap<String, BTreeMap<String, String>>>;

fn module_graphs(modules: &Modules) -> Graphs {
    let mut graphs = Graphs::new();
    for (here, (file, code)) in modules {
        for prefix in ["crate::", "super::"] {
            for (at, _) in code.match_indices(prefix) {
                if code[..at].chars().next_back().is_some_and(is_ident) {
                    continue;
                }
                let mut rest = &code[at + prefix.len()..];
                let mut start = if prefix == "crate::" {
                    Vec::new()
                } else {
                    here[..here.len().saturating_sub(1)].to_vec()
                };
                while let Some(after) = rest.strip_prefix("super::") {
                    start.pop();
                    rest = after;
                }
                let line = code[..at].matches('\n').count() + 1;
                for path in full_paths(rest) {
                    let target = resolve(modules, start.clone(), &path);
                    let common = here.iter().zip(&target).take_while(|(a, b)| a == b).count();
                    if common == here.len() || common == target.len() {
                        continue; // the module itself, its parent or its child
                    }
                    graphs
                        .entry(here[..common].join("::"))
                        .or_default()
                        .entry(here[common].clone())
                        .or_default()
                        .entry(target[common].clone())
                        .or_insert_with(|| format!("{file}:{line}"));
                }
            }
        }
    }
    graphs
}

/// The shortest loop from `start` through each module it names, over modules after it in
/// name order (so each loop is reported once, from its first module).
fn loops_through(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Vec<Vec<String>> {
    let mut loops = Vec::new();
    for first in graph[start].iter().filter(|n| n.as_str() > start) {
        // Breadth first: each module reached remembers the one it was reached from.
        let mut from: BTreeMap<&str, &str> = BTreeMap::from([(first.as_str(), start)]);
        let mut queue = std::collections::VecDeque::from([first.as_str()]);
        while let Some(at) = queue.pop_front() {
            let next = graph.get(at).into_iter().flatten();
            if next.clone().any(|n| n == start) {
                let mut path = vec![at.to_string()];
                while let Some(&back) = from.get(path.last().unwrap().as_str()) {
                    path.push(back.to_string());
                }
                path.reverse();
                loops.push(path);
                break;
            }
            for n in next.filter(|n| n.as_str() > start) {
                if !from.contains_key(n.as_str()) {
                    from.insert(n, at);
                    queue.push_back(n);
                }
            }
        }
    }
    loops
}

/// Every loop between sibling modules of `krate`, as `krate: [parent: ]a -> b -> a (where
/// a names b, where b names a)`.
fn import_loops(krate: &str, modules: &Modules) -> Vec<String> {
    let mut found = Vec::new();
    for (parent, graph) in module_graphs(modules) {
        let names: BTreeMap<String, BTreeSet<String>> = graph
            .iter()
            .map(|(from, to)| (from.clone(), to.keys().cloned().collect()))
            .collect();
        for mut hops in names.keys().flat_map(|start| loops_through(&names, start)) {
            hops.push(hops[0].clone());
            let wheres: Vec<&str> = hops
                .windows(2)
                .map(|w| graph[&w[0]][&w[1]].as_str())
                .collect();
            let scope = if parent.is_empty() {
                String::new()
            } else {
                format!("{parent}: ")
            };
            found.push(format!(
                "{krate}: {scope}{} ({})",
                hops.join(" -> "),
                wheres.join(", ")
            ));
        }
    }
    found
}

/// The workspace crates a manifest's `[dependencies]` name (dev-dependencies left out).
fn workspace_dependencies(manifest: &str) -> Vec<String> {
    let Some((_, rest)) = manifest.split_once("\n[dependencies]\n") else {
        return Vec::new();
    };
    let section = rest.split("\n[").next().unwrap_or_default();
    section
        .lines()
        .filter_map(|line| line.trim().strip_prefix("pauselab-"))
        .filter_map(|rest| rest.split(['.', ' ', '=']).next())
        .map(str::to_string)
        .collect()
}

/// The GC log reader, the recording reader and the analysis sit side by side on the ground
/// floor (docs/ARCHITECTURE.md): each depends on pauselab-pause and on no other crate of the
/// workspace, the readers feed a `RecordSink` and the analysis is one.
#[test]
fn the_readers_and_the_analysis_depend_on_the_ground_floor_only() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    for krate in ["gclog", "jfr", "analysis"] {
        let manifest = crates.join(krate).join("Cargo.toml");
        let manifest = std::fs::read_to_string(&manifest)
            .unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
        assert_eq!(
            workspace_dependencies(&manifest),
            ["pause"],
            "crates/{krate}/Cargo.toml"
        );
    }
}

#[test]
fn no_crate_of_the_workspace_has_an_import_loop() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut found = Vec::new();
    let mut scanned = 0;
    for entry in std::fs::read_dir(crates).unwrap() {
        let dir = entry.unwrap().path();
        let (manifest, src) = (dir.join("Cargo.toml"), dir.join("src"));
        if !manifest.is_file() || !src.is_dir() {
            continue;
        }
        let manifest = std::fs::read_to_string(manifest).unwrap();
        let name = manifest
            .lines()
            .find_map(|l| l.strip_prefix("name = \""))
            .and_then(|l| l.strip_suffix('"'))
            .expect("a [package] name");
        let modules = crate_modules(&src);
        scanned += modules.len();
        found.extend(import_loops(name, &modules));
    }
    assert!(
        scanned > 100,
        "only {scanned} modules found: the scan is broken"
    );
    assert!(found.is_empty(), "import loops:\n{}", found.join("\n"));
}

#[test]
fn a_loop_between_modules_is_reported_and_parents_and_children_are_not_loops() {
    let modules: Modules = [
        (vec![], "mod a;\nmod b;\npub use a::Thing;\n"),
        (
            vec!["a"],
            "mod inner;\npub use inner::Thing;\nuse crate::b::Other;\n",
        ),
        (
            vec!["a", "inner"],
            "use super::Helper;\npub struct Thing;\n",
        ),
        (
            vec!["b"],
            "mod x;\nmod y;\n// [`crate::a::Thing`] in a comment is no import\n",
        ),
        (
            vec!["b", "x"],
            "use crate::{b::y::Y, Thing};\nuse super::super::c;\n",
        ),
        (vec!["b", "y"], "pub use super::x::X;\n"),
        (
            vec!["c"],
            "use crate::b::{x::X, y::{Y, Z}};\n#[cfg(test)]\nuse crate::a;\n",
        ),
    ]
    .into_iter()
    .map(|(m, code): (Vec<&str>, &str)| {
        let file = format!("src/{}.rs", m.join("/"));
        let m = m.into_iter().map(str::to_string).collect();
        (m, (file, code_of(code)))
    })
    .collect();
    assert_eq!(
        import_loops("demo", &modules),
        [
            "demo: a -> b -> a (src/a.rs:3, src/b/x.rs:1)",
            "demo: b -> c -> b (src/b/x.rs:2, src/c.rs:1)",
            "demo: b: x -> y -> x (src/b/x.rs:1, src/b/y.rs:1)",
        ]
    );
}
