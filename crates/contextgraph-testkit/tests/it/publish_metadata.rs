//! Every crate carries what a crates.io release needs (a description,
//! licence, repository, keywords and categories a registry accepts, and its
//! README when it has one), and the test fixtures are never published.

use std::process::Command;

use serde_json::Value;

fn packages() -> Vec<Value> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(cargo)
        .current_dir(root)
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
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    meta["packages"].as_array().expect("packages").clone()
}

/// crates.io's rules: at most five keywords of at most 20 ASCII letters,
/// digits, `_`, `-` or `+`, starting with a letter; categories from its list.
fn valid_keyword(k: &str) -> bool {
    (1..=20).contains(&k.len())
        && k.starts_with(|c: char| c.is_ascii_alphabetic())
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-+".contains(c))
}

const CATEGORIES: [&str; 2] = ["command-line-utilities", "development-tools"];

#[test]
fn every_published_crate_has_registry_metadata_and_fixtures_are_not_published() {
    for p in packages() {
        let name = p["name"].as_str().unwrap_or_default();
        let publishable = p["publish"].as_array().is_none_or(|r| !r.is_empty());
        let fixture = name.contains("fixture") || name == "contextgraph-testkit";
        assert_eq!(
            publishable, !fixture,
            "{name}: test fixtures and only they are publish = false"
        );
        if !publishable {
            continue;
        }
        for field in ["description", "license", "repository"] {
            assert!(
                p[field].as_str().is_some_and(|v| !v.trim().is_empty()),
                "{name} has no {field}"
            );
        }
        let keywords: Vec<&str> = p["keywords"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        assert!(
            (1..=5).contains(&keywords.len()),
            "{name}: 1 to 5 keywords: {keywords:?}"
        );
        assert!(
            keywords.iter().all(|k| valid_keyword(k)),
            "{name}: {keywords:?}"
        );
        let categories: Vec<&str> = p["categories"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        assert!(
            !categories.is_empty() && categories.iter().all(|c| CATEGORIES.contains(c)),
            "{name}: {categories:?}"
        );
        let dir = std::path::Path::new(p["manifest_path"].as_str().unwrap())
            .parent()
            .unwrap()
            .to_path_buf();
        match p["readme"].as_str() {
            Some(readme) => assert!(dir.join(readme).is_file(), "{name}: readme {readme} exists"),
            None => assert!(
                !dir.join("README.md").exists(),
                "{name} has a README.md its manifest does not name"
            ),
        }
    }
}
