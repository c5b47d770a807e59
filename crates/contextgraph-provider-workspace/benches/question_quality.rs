//! Retrieval quality for natural-language goals: questions a person asks
//! about a code base ("how is the index saved to disk?"), each with the
//! files that answer it. Unlike `retrieval_quality`, whose queries are
//! generated from the code (and so share its words), these questions use
//! their own vocabulary, as `cgp context` goals do.
//!
//! Scored per file: a question is answered at rank *k* when the *k*-th
//! distinct file among the returned frames is one of its answer files.
//! Reported: recall@5 and MRR@10 over files, for the provider and for the
//! grep baseline of `benches/common/grep_baseline.rs` (its lines mapped to
//! their files, first occurrence kept).
//!
//! `cargo bench -p contextgraph-provider-workspace --bench question_quality`
//! runs the questions about this repository
//! (`benches/questions/contextgraph.tsv`). `$CGP_QUESTIONS` names another
//! question file and `$CGP_QUESTIONS_ROOT` the code base it is about.
//! `-v` prints each question's rank, `-vv` also the provider's top five files. A benchmark command, not a CI test.
//!
//! The code base is indexed from a scratch copy of the files the walk
//! admits, without the question sets: indexed, a set quotes every question
//! verbatim, so each goal was "pasted text" found in that file and the
//! ranking treated it so (no semantic signal, phrase lift), which is not
//! how a person's question meets the code.

#[path = "common/grep_baseline.rs"]
mod grep_baseline;

use std::path::{Path, PathBuf};

use contextgraph_provider_sdk::Provider;
use contextgraph_provider_workspace::walk::{content_gate, walk, WalkOptions};
use contextgraph_provider_workspace::{CacheLocation, WorkspaceOptions, WorkspaceProvider};
use contextgraph_types::ContextQuery;

/// Files under this prefix are the question sets themselves: never counted
/// as answers (they quote every question verbatim).
const QUESTIONS_DIR: &str = "benches/questions/";

struct Question {
    text: String,
    answers: Vec<String>,
}

fn load_questions(path: &Path) -> Vec<Question> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (q, a) = l
                .split_once('\t')
                .unwrap_or_else(|| panic!("no tab in question line: {l}"));
            Question {
                text: q.trim().to_owned(),
                answers: a.split('|').map(|s| s.trim().to_owned()).collect(),
            }
        })
        .collect()
}

/// The distinct files of a ranked list of frame ids (`path#local`), in
/// order, the question files left out.
fn files_of(ids: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for id in ids {
        let path = id.split('#').next().unwrap_or_default().to_owned();
        if path.contains(QUESTIONS_DIR) || out.contains(&path) {
            continue;
        }
        out.push(path);
    }
    out
}

struct Text {
    rel: String,
    lines: Vec<String>,
}

/// Read every file the walk admits under `root`, less the question sets,
/// once: each is copied into `scratch` (the code base the provider
/// indexes, marked as a repository root) and, when it is text, kept
/// lowercased for the grep baseline.
fn load_texts(root: &Path, scratch: &Path) -> Vec<Text> {
    let texts = walk(root, &WalkOptions::default())
        .files
        .into_iter()
        .filter(|f| !f.rel_path.contains(QUESTIONS_DIR))
        .filter_map(|f| {
            // A file that vanished since the walk is simply left out.
            let bytes = std::fs::read(&f.abs_path).ok()?;
            let to = scratch.join(&f.rel_path);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).expect("mkdir");
            }
            std::fs::write(&to, &bytes).expect("copy into the scratch dir");
            let text = content_gate(&bytes).ok()?;
            Some(Text {
                rel: f.rel_path.clone(),
                lines: text.lines().map(str::to_lowercase).collect(),
            })
        })
        .collect();
    std::fs::create_dir_all(scratch.join(".git")).expect(".git");
    texts
}

fn grep_files(texts: &[Text], query: &str) -> Vec<String> {
    let hits = grep_baseline::ranked_lines(texts.iter().map(|t| t.lines.as_slice()), query);
    files_of(hits.into_iter().map(|(fi, _)| texts[fi].rel.clone()))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let verbose = args.iter().any(|a| a == "-v" || a == "-vv");
    let very_verbose = args.iter().any(|a| a == "-vv");
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let questions_path = std::env::var_os("CGP_QUESTIONS")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("benches/questions/contextgraph.tsv"));
    let root = std::env::var_os("CGP_QUESTIONS_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../.."));
    let root = std::fs::canonicalize(&root).expect("the code base exists");
    let questions = load_questions(&questions_path);
    // The files the walk admits, less the question sets, in a scratch copy.
    let scratch = tempfile::tempdir().expect("scratch dir");
    let texts = load_texts(&root, scratch.path());
    // `CGP_RANK_SIGNALS_OFF=…` and `CGP_SEMANTIC=0` as in retrieval_ndcg,
    // so an ablation is measured on the regression guards too.
    let options = WorkspaceOptions {
        cache: CacheLocation::Disabled,
        ..WorkspaceOptions::default()
    }
    .with_ranking_from_env()
    .unwrap_or_else(|e| panic!("{e}"));
    let (provider, _) =
        WorkspaceProvider::open(scratch.path(), options).expect("open the code base");
    println!(
        "code base: {} ({} files); questions: {} ({})",
        root.display(),
        texts.len(),
        questions.len(),
        questions_path.display()
    );
    let mut totals = [(0.0f64, 0.0f64); 2];
    for q in &questions {
        let result = provider
            .query(&ContextQuery::new(q.text.clone(), 64, 1_000_000))
            .expect("query");
        let ours: Vec<String> = files_of(result.frames.into_iter().map(|f| f.id));
        let grep = grep_files(&texts, &q.text);
        let mut ranks = Vec::new();
        for (i, files) in [&ours, &grep].into_iter().enumerate() {
            let rank = grep_baseline::answer_rank(files, |f| q.answers.contains(f));
            let (r5, rr) = grep_baseline::recall5_and_rr(rank);
            totals[i].0 += r5;
            totals[i].1 += rr;
            ranks.push(rank.map(|i| i + 1));
        }
        if verbose {
            let show = |r: Option<usize>| r.map_or("-".to_owned(), |r| r.to_string());
            println!(
                "provider {:>2}  grep {:>2}  {}",
                show(ranks[0]),
                show(ranks[1]),
                q.text
            );
        }
        if very_verbose {
            for f in ours.iter().take(5) {
                println!("    {}", contextgraph_types::display_text::for_terminal(f));
            }
        }
    }
    let n = questions.len().max(1) as f64;
    println!(
        "{:<9} {:>4} {:>9} {:>7}",
        "system", "n", "recall@5", "MRR@10"
    );
    for (name, (r5, rr)) in ["provider", "grep"].iter().zip(totals) {
        println!(
            "{name:<9} {:>4} {:>9.3} {:>7.3}",
            questions.len(),
            r5 / n,
            rr / n
        );
    }
}
