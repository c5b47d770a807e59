//! Retrieval quality on a real code base: recall@5 and MRR@10 of the
//! provider against a plain-grep baseline, on queries generated from the code
//! itself:
//! - **doc → function**: a function's doc comment (its name removed) should
//!   retrieve that function;
//! - **error message → raiser**: a string literal passed to `panic!`, `Err(`,
//!   `expect(`, `bail!`, `anyhow!` or `format_err!` should retrieve the
//!   function containing it.
//!
//! The grep baseline ranks lines by how many distinct query words they
//! contain (case-insensitive, like `grep -ciF` per word), maps each line to
//! the chunk containing it, and keeps first occurrences: the same granularity
//! the provider answers at.
//!
//! `cargo bench -p contextgraph-provider-workspace --bench retrieval_quality`
//! (`$CGP_QUALITY_CORPUS` picks the code base; default: the largest crate
//! source under `~/.cargo/registry/src`). A benchmark command, not a CI test.

#[path = "common/grep_baseline.rs"]
mod grep_baseline;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use contextgraph_provider_sdk::Provider;
use contextgraph_provider_workspace::chunk::{chunk_file, ChunkKind, LineIndex};
use contextgraph_provider_workspace::walk::{content_gate, walk, WalkOptions};
use contextgraph_provider_workspace::{
    CacheLocation, Language, WorkspaceOptions, WorkspaceProvider,
};
use contextgraph_types::ContextQuery;

struct Case {
    kind: &'static str,
    query: String,
    target: String,
}

struct FileChunks {
    rel: String,
    lines: Vec<String>,
    /// The same lines lowercased, for the grep baseline.
    lower: Vec<String>,
    /// Innermost chunk id per line (0-based).
    owner: Vec<Option<String>>,
}

/// The default code base: a well-documented crate when one is fetched
/// (`regex-automata`, then `tokio`, `clap_builder`), else the crate with the
/// most Rust source.
fn default_corpus() -> PathBuf {
    let base =
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo/registry/src");
    let mut crates: Vec<PathBuf> = Vec::new();
    for index in std::fs::read_dir(&base).into_iter().flatten().flatten() {
        crates.extend(
            std::fs::read_dir(index.path())
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path()),
        );
    }
    crates.sort();
    for preferred in ["regex-automata-", "tokio-1", "clap_builder-"] {
        let found = crates.iter().rev().find(|c| {
            c.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(preferred))
        });
        if let Some(c) = found {
            return c.clone();
        }
    }
    crates
        .into_iter()
        .max_by_key(|c| dir_size(&c.join("src")))
        .unwrap_or(base)
}

fn dir_size(p: &Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
        let path = e.path();
        if path.is_dir() {
            total += dir_size(&path);
        } else if path.extension().is_some_and(|x| x == "rs") {
            total += e.metadata().map_or(0, |m| m.len());
        }
    }
    total
}

fn load(root: &Path) -> Vec<FileChunks> {
    let w = walk(root, &WalkOptions::default());
    let mut out = Vec::new();
    for f in w.files {
        let Ok(bytes) = std::fs::read(&f.abs_path) else {
            continue;
        };
        let Ok(text) = content_gate(&bytes) else {
            continue;
        };
        let lang = Language::detect(&f.rel_path);
        let chunks = chunk_file(&f.rel_path, lang, text);
        let li = LineIndex::new(text);
        let n = li.line_count() as usize;
        let mut owner: Vec<Option<(u32, String)>> = vec![None; n];
        for c in &chunks {
            let span = c.end_line - c.start_line;
            for l in c.start_line..=c.end_line {
                let slot = &mut owner[(l - 1) as usize];
                if slot.as_ref().is_none_or(|(s, _)| span < *s) {
                    *slot = Some((span, format!("{}#{}", f.rel_path, c.local_id)));
                }
            }
        }
        out.push(FileChunks {
            rel: f.rel_path.clone(),
            lines: text.lines().map(str::to_owned).collect(),
            lower: text.lines().map(str::to_lowercase).collect(),
            owner: owner.into_iter().map(|o| o.map(|x| x.1)).collect(),
        });
        let _ = ChunkKind::Symbol;
    }
    out
}

fn cases(files: &[FileChunks], root: &Path) -> Vec<Case> {
    let mut doc_cases = Vec::new();
    let mut err_cases = Vec::new();
    let mut literal_count: HashMap<String, usize> = HashMap::new();
    let mut literal_owner: HashMap<String, String> = HashMap::new();
    for f in files.iter().filter(|f| f.rel.ends_with(".rs")) {
        let Ok(text) = std::fs::read_to_string(root.join(&f.rel)) else {
            continue;
        };
        for c in chunk_file(&f.rel, Language::Rust, &text) {
            let Some(sym) = &c.symbol else { continue };
            if sym.kind_label != "function" {
                continue;
            }
            let id = format!("{}#{}", f.rel, c.local_id);
            let body: Vec<&str> = f.lines[(c.start_line - 1) as usize..c.end_line as usize]
                .iter()
                .map(String::as_str)
                .collect();
            let doc: Vec<&str> = body
                .iter()
                .map(|l| l.trim_start())
                .take_while(|l| l.starts_with("///") || l.starts_with("#["))
                .filter_map(|l| l.strip_prefix("///"))
                .map(str::trim)
                .take_while(|l| !l.starts_with('#') && !l.starts_with("```"))
                .collect();
            let words: Vec<String> = doc
                .join(" ")
                .split_whitespace()
                .filter(|w| !w.to_lowercase().contains(&sym.name.to_lowercase()))
                .take(25)
                .map(str::to_owned)
                .collect();
            if words.len() >= 6 {
                doc_cases.push(Case {
                    kind: "doc->fn",
                    query: words.join(" "),
                    target: id.clone(),
                });
            }
            for line in &body {
                let is_raise = [
                    "panic!(",
                    "Err(",
                    "expect(",
                    "bail!(",
                    "anyhow!(",
                    "format_err!(",
                    "unreachable!(",
                ]
                .iter()
                .any(|m| line.contains(m));
                if !is_raise {
                    continue;
                }
                if let Some(lit) = line.split('"').nth(1) {
                    let clean: String = lit.chars().filter(|c| *c != '{' && *c != '}').collect();
                    if clean.split_whitespace().count() >= 3 {
                        *literal_count.entry(clean.clone()).or_default() += 1;
                        literal_owner.insert(clean, id.clone());
                    }
                }
            }
        }
    }
    let mut lits: Vec<(String, String)> = literal_owner
        .into_iter()
        .filter(|(l, _)| literal_count.get(l) == Some(&1))
        .collect();
    lits.sort();
    for (lit, id) in lits {
        err_cases.push(Case {
            kind: "error->raiser",
            query: lit,
            target: id,
        });
    }
    let sample = |v: Vec<Case>, n: usize| -> Vec<Case> {
        let step = (v.len() / n).max(1);
        v.into_iter().step_by(step).take(n).collect()
    };
    let mut out = sample(doc_cases, 150);
    out.extend(sample(err_cases, 150));
    out
}

fn grep_rank(files: &[FileChunks], query: &str) -> Vec<String> {
    let hits = grep_baseline::ranked_lines(files.iter().map(|f| f.lower.as_slice()), query);
    let mut out: Vec<String> = Vec::new();
    for (fi, li) in hits {
        if let Some(Some(id)) = files[fi].owner.get(li) {
            if !out.contains(id) {
                out.push(id.clone());
                if out.len() >= 10 {
                    break;
                }
            }
        }
    }
    out
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let corpus = std::env::var_os("CGP_QUALITY_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(default_corpus);
    let root = std::fs::canonicalize(&corpus).expect("corpus exists");
    let files = load(&root);
    let cases = cases(&files, &root);
    // `CGP_RANK_SIGNALS_OFF=…` and `CGP_SEMANTIC=0` as in retrieval_ndcg,
    // so an ablation is measured on the regression guards too.
    let options = WorkspaceOptions {
        cache: CacheLocation::Disabled,
        ..WorkspaceOptions::default()
    }
    .with_ranking_from_env()
    .unwrap_or_else(|e| panic!("{e}"));
    let (provider, _) = WorkspaceProvider::open(&root, options).expect("open corpus");
    println!(
        "corpus: {} ({} files, {} queries)",
        root.display(),
        files.len(),
        cases.len()
    );
    let mut table: HashMap<(&str, &str), (f64, f64, usize)> = HashMap::new();
    for c in &cases {
        let r = provider
            .query(&ContextQuery::new(c.query.clone(), 10, 1_000_000))
            .expect("query");
        let ids: Vec<String> = r.frames.iter().map(|f| f.id.clone()).collect();
        for (system, ranked) in [("provider", ids), ("grep", grep_rank(&files, &c.query))] {
            let rank = grep_baseline::answer_rank(&ranked, |id| *id == c.target);
            let (r5, rr) = grep_baseline::recall5_and_rr(rank);
            for kind in [c.kind, "all"] {
                let e = table.entry((kind, system)).or_insert((0.0, 0.0, 0));
                e.0 += r5;
                e.1 += rr;
                e.2 += 1;
            }
        }
    }
    println!(
        "{:<15} {:<9} {:>6} {:>9} {:>7}",
        "queries", "system", "n", "recall@5", "MRR@10"
    );
    for kind in ["doc->fn", "error->raiser", "all"] {
        for system in ["provider", "grep"] {
            if let Some((r5, rr, n)) = table.get(&(kind, system)) {
                let n = (*n).max(1) as f64;
                println!(
                    "{kind:<15} {system:<9} {:>6} {:>9.3} {:>7.3}",
                    n as usize,
                    r5 / n,
                    rr / n
                );
            }
        }
    }
}
