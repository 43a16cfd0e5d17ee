//! The files of contrib/ as tests read them.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// A file of contrib/, e.g. `grafana/pauselab.json`.
pub fn contrib(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../contrib")
        .join(path)
}

/// The dashboard's PromQL expressions, Grafana's variables replaced by what Grafana would
/// put there (`.*` for "All"), with the title of their panel. The variables' own queries
/// (`label_values(SELECTOR, label)`) count by their selector.
pub fn dashboard_expressions() -> Vec<(String, String)> {
    let path = contrib("grafana/pauselab.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let dashboard: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let variables: Vec<&str> = dashboard["templating"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    let substitute = |expr: &str| {
        let mut expr = expr
            .replace("$__rate_interval", "1m")
            .replace("$__range", "1h");
        for variable in &variables {
            expr = expr.replace(&format!("${variable}"), ".*");
        }
        assert!(!expr.contains('$'), "undefined variable in {expr}");
        expr
    };
    let mut expressions = Vec::new();
    for variable in dashboard["templating"]["list"].as_array().unwrap() {
        if let Some(query) = variable["query"]["query"].as_str() {
            let selector = query
                .strip_prefix("label_values(")
                .and_then(|rest| rest.rsplit_once(", "))
                .map(|(selector, _)| selector)
                .unwrap_or_else(|| panic!("not label_values(SELECTOR, label): {query}"));
            let name = variable["name"].as_str().unwrap();
            expressions.push((format!("variable {name}"), substitute(selector)));
        }
    }
    for panel in dashboard["panels"].as_array().unwrap() {
        let title = panel["title"].as_str().unwrap();
        for target in panel["targets"].as_array().into_iter().flatten() {
            let expr = target["expr"].as_str().unwrap();
            expressions.push((title.to_string(), substitute(expr)));
        }
    }
    expressions
}

/// The metric families an expression reads (`hotspot_*`, `pauselab_*`), histogram series
/// (`_bucket`, `_count`, `_sum`) under their family's name.
pub fn metric_families(expr: &str) -> Vec<String> {
    let mut families: Vec<String> = expr
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| word.starts_with("hotspot_") || word.starts_with("pauselab_"))
        .map(|word| {
            ["_bucket", "_count", "_sum"]
                .iter()
                .find_map(|suffix| word.strip_suffix(suffix))
                .unwrap_or(word)
                .to_string()
        })
        .collect();
    families.sort();
    families.dedup();
    families
}

/// Whether docs/export.md documents `family` in one of its metric tables.
pub fn documented(family: &str) -> bool {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/export.md");
    let docs = std::fs::read_to_string(docs).unwrap();
    docs.contains(&format!("| `{family}` |"))
}
