//! The third-party set beside our projects: semble-ext (another team's
//! annotations of 33 public repositories in 11 languages, MIT; see its
//! README), read from `../shared/bench/semble-ext/` when it is there and
//! never committed. Shared by `retrieval_ndcg` and its tests.
//!
//! Read exactly as its README says: `annotations/repos.json` lists the
//! repositories with their language, split and `queries_dropped` (skipped
//! by their index); `annotations/<name>.json` is an array of queries whose
//! targets are `relevant` + `secondary` (binary gains; a target is a path
//! or `{"path", "start_line", "end_line"}`, the span ignored); duplicate
//! queries are kept and scored twice; a repository without
//! `sources/<name>.tar.gz` (zig) is reported and left out. Files are
//! matched against targets by path suffix both ways
//! ([`PathMatch::Suffix`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::metrics::{Category, PathMatch};
use super::projects::{Project, Query};

/// The set's name in reports and in `--set`.
pub const SET: &str = "semble";

/// Where a semble repository's sources are: its tarball in the set.
pub fn tarball(set_dir: &Path, name: &str) -> PathBuf {
    set_dir.join("sources").join(format!("{name}.tar.gz"))
}

/// A string field of a JSON object, or an error naming `what`.
fn string_field<'a>(v: &'a Value, key: &str, what: &str) -> Result<&'a str, String> {
    v.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{what}: no string field '{key}'"))
}

/// One target: a path string, or an object with a `path` (its span is
/// ignored at file level). Leading `./` and `/` are dropped.
fn target(v: &Value, what: &str) -> Result<String, String> {
    let path = match v {
        Value::String(s) => s.as_str(),
        Value::Object(_) => string_field(v, "path", what)?,
        _ => {
            return Err(format!(
                "{what}: a target is neither a path nor an object with 'path'"
            ))
        }
    };
    let path = path.trim_start_matches("./").trim_start_matches('/');
    if path.is_empty() {
        return Err(format!("{what}: an empty target path"));
    }
    Ok(path.to_owned())
}

/// The queries of one annotation file (`text`, read from `file`), without
/// those at the `dropped` indexes. Every error names the file.
pub fn parse_annotations(text: &str, file: &Path, dropped: &[usize]) -> Result<Vec<Query>, String> {
    let name = file.display();
    let root: Value = serde_json::from_str(text)
        .map_err(|e| format!("{name}: not valid JSON ({e}); expected semble's annotation array"))?;
    let Value::Array(items) = root else {
        return Err(format!("{name}: expected a JSON array of queries"));
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let what = format!("{name}: query {i}");
        if !item.is_object() {
            return Err(format!("{what}: not a JSON object"));
        }
        let text = string_field(item, "query", &what)?.trim().to_owned();
        if text.is_empty() {
            return Err(format!("{what}: empty 'query'"));
        }
        let category = string_field(item, "category", &what)?;
        let category = Category::parse(category).ok_or_else(|| {
            format!("{what}: category '{category}' is not symbol, semantic or architecture")
        })?;
        let relevant = item
            .get("relevant")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("{what}: no 'relevant' list"))?;
        if relevant.is_empty() {
            return Err(format!("{what}: 'relevant' is empty"));
        }
        let secondary = match item.get("secondary") {
            None | Some(Value::Null) => &[][..],
            Some(Value::Array(a)) => a.as_slice(),
            Some(_) => return Err(format!("{what}: 'secondary' is not a list")),
        };
        let answers = relevant
            .iter()
            .chain(secondary)
            .map(|t| target(t, &what))
            .collect::<Result<Vec<_>, _>>()?;
        if dropped.contains(&i) {
            continue;
        }
        out.push(Query {
            category,
            text,
            answers,
        });
    }
    Ok(out)
}

/// The set's repositories (`annotations/repos.json` and each annotation
/// file), as projects scored by path suffix. A missing or malformed file
/// is an error naming it.
pub fn load_set(set_dir: &Path) -> Result<Vec<Project>, String> {
    let repos_file = set_dir.join("annotations/repos.json");
    let text = std::fs::read_to_string(&repos_file)
        .map_err(|e| format!("{}: cannot read: {e}", repos_file.display()))?;
    let repos: Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}: not valid JSON ({e}); expected semble's repository list",
            repos_file.display()
        )
    })?;
    let Value::Array(repos) = repos else {
        return Err(format!(
            "{}: expected a JSON array of repositories",
            repos_file.display()
        ));
    };
    let mut out = Vec::new();
    for (i, repo) in repos.iter().enumerate() {
        let what = format!("{}: entry {i}", repos_file.display());
        let name = string_field(repo, "name", &what)?;
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
            return Err(format!("{what}: '{name}' is not a repository name"));
        }
        let what = format!("{}: '{name}'", repos_file.display());
        let language = string_field(repo, "language", &what)?;
        let split = string_field(repo, "split", &what)?;
        if split != "tuning" && split != "heldout" {
            return Err(format!("{what}: split '{split}' is not tuning or heldout"));
        }
        let dropped: Vec<usize> = match repo.get("queries_dropped") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(d)) => d
                .iter()
                .map(|e| {
                    e.get("index")
                        .and_then(Value::as_u64)
                        .and_then(|n| usize::try_from(n).ok())
                        .ok_or_else(|| format!("{what}: a queries_dropped entry has no index"))
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(format!("{what}: 'queries_dropped' is not a list")),
        };
        let file = set_dir.join("annotations").join(format!("{name}.json"));
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("{}: cannot read: {e}", file.display()))?;
        let queries = parse_annotations(&text, &file, &dropped)?;
        let mut source = BTreeMap::new();
        for key in ["url", "revision", "revision_used", "benchmark_root"] {
            if let Some(v) = repo.get(key).and_then(Value::as_str) {
                source.insert(key.to_owned(), v.to_owned());
            }
        }
        out.push(Project {
            id: name.to_owned(),
            set: SET,
            matching: PathMatch::Suffix,
            language: language.to_owned(),
            split: split.to_owned(),
            root: None,
            source,
            queries,
        });
    }
    Ok(out)
}

/// The lower-case hex sha256 of `file`'s bytes.
fn sha256_file(file: &Path) -> std::io::Result<String> {
    let bytes = std::fs::read(file)?;
    Ok(Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// The directory `project`'s tarball is extracted to under `cache`
/// (`<cache>/<name>/`, the benchmark directory D of the set's README),
/// extracted now when missing or when the tarball changed since (its
/// sha256 is kept in `<cache>/.state/<name>`). Extraction goes to a
/// temporary directory first, so an interrupted one is never taken for a
/// tree. `tar` refuses members outside the target directory.
pub fn extracted_root(set_dir: &Path, cache: &Path, project: &Project) -> Result<PathBuf, String> {
    let name = &project.id;
    let archive = tarball(set_dir, name);
    if !archive.is_file() {
        return Err(format!(
            "{name}: no source tree in the set ({} is missing)",
            archive.display()
        ));
    }
    let dir = cache.join(name);
    let state = cache.join(".state").join(name);
    let digest = sha256_file(&archive)
        .map_err(|e| format!("{name}: cannot read {}: {e}", archive.display()))?;
    if dir.is_dir() && std::fs::read_to_string(&state).is_ok_and(|s| s.trim() == digest) {
        return Ok(dir);
    }
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        format!("{name}: cannot {what} in {}: {e}", cache.display())
    };
    std::fs::create_dir_all(cache.join(".state")).map_err(|e| fail("create .state", &e))?;
    let tmp = cache.join(format!(".tmp-{name}"));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(|e| fail("clear a partial extraction", &e))?;
    }
    std::fs::create_dir_all(&tmp).map_err(|e| fail("create a directory", &e))?;
    let status = std::process::Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(&tmp)
        .args(["--no-same-owner", "--no-same-permissions"])
        .status()
        .map_err(|e| {
            format!(
                "{name}: cannot run tar to extract {}: {e}",
                archive.display()
            )
        })?;
    if !status.success() {
        return Err(format!(
            "{name}: tar could not extract {} ({status})",
            archive.display()
        ));
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| fail("remove the stale tree", &e))?;
    }
    std::fs::rename(&tmp, &dir).map_err(|e| fail("move the extracted tree", &e))?;
    std::fs::write(&state, &digest).map_err(|e| fail("record the extraction", &e))?;
    Ok(dir)
}

/// Whether `target` names a file of the tree at `root`: directly, or with
/// the repository's `benchmark_root` prefix stripped (the set's two forms).
pub fn target_exists(root: &Path, project: &Project, target: &str) -> bool {
    let stripped = project
        .source
        .get("benchmark_root")
        .and_then(|b| target.strip_prefix(&format!("{}/", b.trim_end_matches('/'))));
    root.join(target).is_file() || stripped.is_some_and(|t| root.join(t).is_file())
}
