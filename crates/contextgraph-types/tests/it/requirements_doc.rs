//! `docs/requirements.md` defines every requirement anchor the repository
//! cites: a comment, test or message naming `F5` or `UR1` must lead a reader
//! to a paragraph that says what it means, inside this repository. And every
//! [`Anchor`] variant's doc line links to its paragraph there.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use contextgraph_types::Anchor;

/// The letter prefixes of the protocol's numbered anchors (`H1`, `UR1`, …).
/// Other capital-letter-plus-digit words (`K1`, `L20`, `FE60`) are not anchors.
const FAMILIES: [&str; 15] = [
    "H", "C", "Q", "E", "F", "D", "G", "P", "B", "V", "R", "U", "A", "X", "UR",
];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn requirements_path() -> PathBuf {
    repo_root().join("docs/requirements.md")
}

/// The ids of `<a id="…"></a>` targets in the requirements page.
fn defined_ids(text: &str) -> BTreeSet<String> {
    text.split("<a id=\"")
        .skip(1)
        .filter_map(|rest| rest.split_once('"').map(|(id, _)| id.to_owned()))
        .collect()
}

/// Every numbered anchor cited in `text`: a whole word made of one of the
/// [`FAMILIES`] prefixes followed by digits only.
fn cited_anchors(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| {
            FAMILIES.iter().any(|family| {
                word.strip_prefix(family).is_some_and(|digits| {
                    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
                })
            })
        })
        .map(str::to_owned)
        .collect()
}

/// Source and documentation files of the repository (no build output, no
/// hidden directories, no downloaded third-party sources: the retrieval
/// benchmark's fetched projects and npm's `node_modules` are not ours and
/// cite anchor-shaped words of their own), skipping the requirements page
/// itself.
fn repository_texts() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') || name == "target" || name == "node_modules" {
                continue;
            }
            if path.ends_with("bench/retrieval/cache") {
                continue;
            }
            if path.is_dir() {
                walk(&path, out);
            } else if path
                .extension()
                .is_some_and(|e| e == "rs" || e == "md" || e == "toml")
            {
                out.push(path);
            }
        }
    }
    let root = repo_root();
    let mut out = Vec::new();
    for dir in ["crates", "bench", "docs"] {
        walk(&root.join(dir), &mut out);
    }
    for file in ["README.md", "ARCHITECTURE.md"] {
        let path = root.join(file);
        if path.is_file() {
            out.push(path);
        }
    }
    let requirements = requirements_path()
        .canonicalize()
        .expect("requirements page exists");
    out.retain(|p| p.canonicalize().map_or(true, |c| c != requirements));
    out
}

#[test]
fn the_anchor_scanner_finds_anchors_and_only_anchors() {
    let found = cited_anchors(
        "B3 and UR1 (see B1–B4, `H4`), not K1, L20, FE60, BM25, XB3, B3x, U2a or a plain B",
    );
    let expected: BTreeSet<String> = ["B1", "B3", "B4", "H4", "UR1"].map(str::to_owned).into();
    assert_eq!(found, expected);
}

#[test]
fn every_anchor_cited_in_the_repository_is_defined_in_docs_requirements() {
    let page = std::fs::read_to_string(requirements_path()).expect("docs/requirements.md");
    let defined = defined_ids(&page);
    let files = repository_texts();
    assert!(
        files.len() > 100,
        "the scan found only {} files; is the repository layout what this test expects?",
        files.len()
    );
    let mut undefined: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut cited = BTreeSet::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for anchor in cited_anchors(&text) {
            if !defined.contains(&anchor.to_ascii_lowercase()) {
                let shown = file.strip_prefix(repo_root()).unwrap_or(file);
                undefined
                    .entry(anchor.clone())
                    .or_default()
                    .push(shown.display().to_string());
            }
            cited.insert(anchor);
        }
    }
    assert!(
        undefined.is_empty(),
        "anchors cited but not defined in docs/requirements.md: {undefined:#?}"
    );
    // The scan did see the code: the anchors validation reports are cited.
    for anchor in ["H1", "B3", "F5", "UR1", "V2", "C8"] {
        assert!(cited.contains(anchor), "{anchor} not found by the scan");
    }
}

/// `(variant name, label)` pairs of `Anchor::as_str`, read from its source.
fn anchor_labels(source: &str) -> Vec<(String, String)> {
    source
        .lines()
        .filter_map(|line| {
            let (variant, label) = line.trim().split_once(" => \"")?;
            let label = label.strip_suffix("\",")?;
            Some((variant.to_owned(), label.to_owned()))
        })
        .collect()
}

#[test]
fn every_anchor_variant_links_to_its_definition() {
    let page = std::fs::read_to_string(requirements_path()).expect("docs/requirements.md");
    let defined = defined_ids(&page);
    let source_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/anchor.rs");
    let source = std::fs::read_to_string(&source_path).expect("src/anchor.rs");
    let labels = anchor_labels(&source);
    // The parse saw the whole enum: the labels it read are the ones the type reports.
    for anchor in [Anchor::H1, Anchor::UR1, Anchor::Shape, Anchor::AsOf] {
        assert!(
            labels.iter().any(|(_, l)| l == anchor.as_str()),
            "{anchor} missing from the parsed labels"
        );
    }
    assert!(labels.len() >= 38, "parsed only {} labels", labels.len());
    let lines: Vec<&str> = source.lines().map(str::trim).collect();
    for (variant, label) in &labels {
        let id = label.to_ascii_lowercase();
        assert!(
            defined.contains(&id),
            "Anchor::{variant} ({label}) has no <a id=\"{id}\"> in docs/requirements.md"
        );
        let at = lines
            .iter()
            .position(|l| *l == format!("{variant},"))
            .unwrap_or_else(|| panic!("variant {variant} not found in src/anchor.rs"));
        let doc = at.checked_sub(1).map(|i| lines[i]).unwrap_or("");
        let link = format!("(../../../docs/requirements.md#{id})");
        assert!(
            doc.starts_with("///") && doc.contains(&link),
            "the doc line of Anchor::{variant} must link {link}; it is {doc:?}"
        );
    }
}
