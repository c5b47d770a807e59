//! The benchmark's project definitions (`bench/retrieval/projects/<id>/`):
//! the `source` file (what to fetch, which split) and `queries.tsv`. Shared
//! by `retrieval_ndcg` and its tests.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::metrics::{Category, PathMatch};

/// Our own set's name in reports and in `--set`.
pub const OURS: &str = "ours";

/// One query and the files that answer it.
pub struct Query {
    /// Its category.
    pub category: Category,
    /// The goal as a person would type it.
    pub text: String,
    /// The answer files, relative to the project root.
    pub answers: Vec<String>,
}

/// One project of the benchmark.
pub struct Project {
    /// Its directory name (ours) or repository name (semble).
    pub id: String,
    /// The set it belongs to: [`OURS`] or the third-party set's name.
    pub set: &'static str,
    /// How its ranked files are matched against its answers.
    pub matching: PathMatch,
    /// `language=` of its source file.
    pub language: String,
    /// `tuning` or `heldout`.
    pub split: String,
    /// `root=`, the project root inside the extracted archive.
    pub root: Option<String>,
    /// Every key of its source file.
    pub source: BTreeMap<String, String>,
    /// Its queries.
    pub queries: Vec<Query>,
}

/// The `key=value` lines of a project's `source` file.
pub fn parse_source(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

/// `category<TAB>query<TAB>file[,file…]` lines; `#` lines are comments.
pub fn parse_queries(text: &str) -> Result<Vec<Query>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let [category, query, files] = fields[..] else {
            return Err(format!(
                "line {}: expected category<TAB>query<TAB>files, found {} field(s)",
                n + 1,
                fields.len()
            ));
        };
        let category = Category::parse(category.trim()).ok_or_else(|| {
            format!(
                "line {}: category '{category}' is not symbol, semantic or architecture",
                n + 1
            )
        })?;
        let answers: Vec<String> = files
            .split(',')
            .map(|f| f.trim().trim_start_matches("./").to_owned())
            .filter(|f| !f.is_empty())
            .collect();
        if query.trim().is_empty() || answers.is_empty() {
            return Err(format!("line {}: empty query or no answer file", n + 1));
        }
        out.push(Query {
            category,
            text: query.trim().to_owned(),
            answers,
        });
    }
    Ok(out)
}

pub fn load_project(dir: &Path) -> Result<Project, String> {
    let id = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let source = std::fs::read_to_string(dir.join("source"))
        .map_err(|e| format!("{id}: cannot read source: {e}"))?;
    let source = parse_source(&source);
    let queries = std::fs::read_to_string(dir.join("queries.tsv"))
        .map_err(|e| format!("{id}: cannot read queries.tsv: {e}"))?;
    let queries = parse_queries(&queries).map_err(|e| format!("{id}: queries.tsv {e}"))?;
    let field = |k: &str| source.get(k).cloned().unwrap_or_default();
    let split = field("split");
    if split != "tuning" && split != "heldout" {
        return Err(format!(
            "{id}: source has split='{split}', not tuning or heldout"
        ));
    }
    Ok(Project {
        id,
        set: OURS,
        matching: PathMatch::Exact,
        language: field("language"),
        split,
        root: source.get("root").filter(|r| !r.is_empty()).cloned(),
        source,
        queries,
    })
}

/// Where a fetched project's root is: `<cache>/<id>/<root>` when the source
/// names one, else the single directory the archive extracted to, else
/// `<cache>/<id>` itself.
pub fn project_root(cache: &Path, project: &Project) -> Result<PathBuf, String> {
    let base = cache.join(&project.id);
    if !base.is_dir() {
        return Err(format!(
            "{}: not in the cache {} (run bench/retrieval/fetch first)",
            project.id,
            cache.display()
        ));
    }
    if let Some(root) = &project.root {
        let dir = base.join(root);
        return if dir.is_dir() {
            Ok(dir)
        } else {
            Err(format!(
                "{}: root '{root}' is not a directory in {} (re-run bench/retrieval/fetch {})",
                project.id,
                base.display(),
                project.id
            ))
        };
    }
    let entries: Vec<PathBuf> = std::fs::read_dir(&base)
        .map_err(|e| format!("{}: cannot list {}: {e}", project.id, base.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    match entries.as_slice() {
        [only] if only.is_dir() => Ok(only.clone()),
        _ => Ok(base),
    }
}
