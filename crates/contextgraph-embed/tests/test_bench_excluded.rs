//! The shipped model must not have seen the code it is scored on: every
//! project of the retrieval benchmarks is in `bench-excluded.txt`, which the
//! trainer skips (`train::corpus::is_excluded`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use contextgraph_embed::train::corpus::{is_excluded, project_key};

fn excluded() -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench-excluded.txt");
    let text = std::fs::read_to_string(&path).expect("bench-excluded.txt is in the crate");
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(project_key)
        .collect()
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn every_project_of_our_retrieval_set_is_excluded() {
    let excluded = excluded();
    let dir = workspace_root().join("bench/retrieval/projects");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("bench/retrieval/projects is in the repository") {
        let name = entry.expect("a directory entry").file_name();
        let name = name.to_string_lossy();
        // `rust-chrono`, `ts-redux-toolkit`: the language, then the project.
        let (_, project) = name.split_once('-').expect("LANG-PROJECT");
        assert!(
            is_excluded(project, &excluded),
            "{project} (bench/retrieval/projects/{name}) is not in bench-excluded.txt"
        );
        seen += 1;
    }
    assert!(
        seen >= 20,
        "only {seen} projects found in {}",
        dir.display()
    );
}

/// The third-party set lives outside the repository (`shared/bench`, or
/// where `CGP_SEMBLE_EXT` points); where it is present, its projects must
/// be excluded too.
#[test]
fn every_project_of_the_third_party_set_is_excluded_where_the_set_is_present() {
    let excluded = excluded();
    let candidates = [
        std::env::var_os("CGP_SEMBLE_EXT").map(PathBuf::from),
        Some(workspace_root().join("../shared/bench/semble-ext")),
        Some(workspace_root().join("../../shared/bench/semble-ext")),
    ];
    let Some(annotations) = candidates
        .into_iter()
        .flatten()
        .map(|d| d.join("annotations"))
        .find(|d| d.is_dir())
    else {
        eprintln!("third-party retrieval set not present; only our set was checked");
        return;
    };
    for entry in std::fs::read_dir(&annotations).expect("annotations directory") {
        let path = entry.expect("a directory entry").path();
        let Some(stem) = path.file_stem().map(|s| s.to_string_lossy().to_string()) else {
            continue;
        };
        if path.extension().is_none_or(|e| e != "json") || stem == "repos" {
            continue;
        }
        assert!(
            is_excluded(&stem, &excluded),
            "{stem} ({}) is not in bench-excluded.txt",
            path.display()
        );
    }
}
