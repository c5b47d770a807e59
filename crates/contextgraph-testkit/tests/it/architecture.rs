//! ARCHITECTURE.md's crate graph is the workspace's: every crate `cargo
//! metadata` lists has one row, and each row names exactly the workspace
//! crates it depends on (normal dependencies). Every source path the page
//! cites exists. A new crate, a new or removed edge, or a moved file fails
//! here until the page is updated.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn architecture_md() -> String {
    let path = repo_root().join("ARCHITECTURE.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Each workspace crate and its normal dependencies on workspace crates,
/// from `cargo metadata --no-deps` (reads the manifests; builds nothing).
fn metadata_graph() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(repo_root())
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON");
    let packages = meta["packages"].as_array().expect("a packages array");
    let names: BTreeSet<String> = packages
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_owned))
        .collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|d| d["kind"].is_null())
                .filter_map(|d| d["name"].as_str())
                .filter(|n| names.contains(*n))
                .map(str::to_owned)
                .collect();
            (p["name"].as_str().unwrap_or_default().to_owned(), deps)
        })
        .collect()
}

/// The crate graph table: rows `| \`crate\` | role | \`dep\`, \`dep\` (note) |`
/// under the "Crate graph" heading.
fn documented_graph(md: &str) -> BTreeMap<String, BTreeSet<String>> {
    let section = format!("\n{md}");
    let section = section
        .split("\n## ")
        .find(|s| s.starts_with("Crate graph"))
        .expect("ARCHITECTURE.md has a '## Crate graph' section");
    let mut graph = BTreeMap::new();
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(cells.len(), 3, "a row has crate, role, depends on: {line}");
        let name = cells[0].trim_matches('`').to_owned();
        let deps: BTreeSet<String> = cells[2]
            .split(',')
            // `crate`, optionally followed by a note in parentheses.
            .filter_map(|d| d.split('`').nth(1).map(str::to_owned))
            .filter(|d| !d.is_empty())
            .collect();
        assert!(
            graph.insert(name.clone(), deps).is_none(),
            "{name} has two rows"
        );
    }
    graph
}

/// Where `documented` differs from `actual`, one sentence per difference.
fn differences(
    actual: &BTreeMap<String, BTreeSet<String>>,
    documented: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (name, deps) in actual {
        let Some(doc) = documented.get(name) else {
            out.push(format!("{name} is missing from ARCHITECTURE.md"));
            continue;
        };
        for d in deps.difference(doc) {
            out.push(format!("{name} -> {d} is missing from ARCHITECTURE.md"));
        }
        for d in doc.difference(deps) {
            out.push(format!(
                "{name} -> {d} is in ARCHITECTURE.md but not a dependency"
            ));
        }
    }
    for name in documented.keys().filter(|k| !actual.contains_key(*k)) {
        out.push(format!(
            "{name} is in ARCHITECTURE.md but not in the workspace"
        ));
    }
    out
}

#[test]
fn the_crate_graph_matches_cargo_metadata() {
    let diff = differences(&metadata_graph(), &documented_graph(&architecture_md()));
    assert!(diff.is_empty(), "{diff:#?}");
}

#[test]
fn a_missing_crate_and_a_wrong_edge_are_differences() {
    let md = "## Crate graph\n\n| crate | role | depends on |\n|---|---|---|\n| `a` | x | `b`, `c` (optional: a note) |\n| `b` | y | — |\n\n## Next\n| `z` | not | here |\n";
    let documented = documented_graph(md);
    assert_eq!(documented.len(), 2, "{documented:?}");
    assert!(documented["b"].is_empty());
    let actual = BTreeMap::from([
        ("a".to_owned(), BTreeSet::from(["b".to_owned()])),
        ("b".to_owned(), BTreeSet::new()),
        ("d".to_owned(), BTreeSet::new()),
    ]);
    assert_eq!(
        differences(&actual, &documented),
        [
            "a -> c is in ARCHITECTURE.md but not a dependency",
            "d is missing from ARCHITECTURE.md",
        ]
    );
    assert!(differences(&documented, &documented).is_empty());
}

/// Every backticked path the page cites (`crates/…`, `contextgraph-…/…`, or
/// the short `types/src/…` form) names a file or folder that exists.
#[test]
fn every_cited_path_exists() {
    let md = architecture_md();
    let root = repo_root();
    let mut missing = Vec::new();
    for cited in md.split('`').skip(1).step_by(2) {
        let cited = cited.split_whitespace().next().unwrap_or_default();
        if !cited.contains('/') || cited.contains(' ') || cited.starts_with('-') {
            continue;
        }
        let path = if cited.starts_with("crates/") || cited.starts_with("docs/") {
            root.join(cited)
        } else if cited.starts_with("contextgraph-") {
            root.join("crates").join(cited)
        } else if cited.contains("/src/") || cited.contains("/tests/") {
            root.join("crates").join(format!("contextgraph-{cited}"))
        } else {
            continue;
        };
        if !path.exists() {
            missing.push(cited.to_owned());
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md cites paths that do not exist: {missing:?}"
    );
}
