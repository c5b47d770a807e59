//! The retrieval benchmark's scoring, definition files and BM25 baseline
//! (`benches/retrieval/`): a wrong metric or a malformed project would
//! mislead every ranking change scored on it.

#[path = "../../benches/retrieval/bm25.rs"]
mod bm25;
#[path = "../../benches/retrieval/metrics.rs"]
mod metrics;
#[path = "../../benches/retrieval/projects.rs"]
mod projects;

use std::collections::HashSet;
use std::path::Path;

use metrics::{distinct_files, score, Category, Scores};
use projects::{load_project, parse_queries, project_root};

fn files(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn a_perfect_ranking_scores_one() {
    let s = score(&files(&["a", "b", "c"]), &files(&["a", "b"]));
    assert!(
        close(s.ndcg, 1.0) && close(s.recall, 1.0) && close(s.rr, 1.0),
        "{s:?}"
    );
}

#[test]
fn an_answer_at_rank_two_is_discounted_by_log2_of_three() {
    let s = score(&files(&["x", "a"]), &files(&["a"]));
    assert!(close(s.ndcg, 1.0 / 3f64.log2()), "{s:?}");
    assert!(close(s.rr, 0.5) && close(s.recall, 1.0), "{s:?}");
}

#[test]
fn the_ideal_dcg_counts_every_answer_file() {
    // Two answers, only one found at rank 1: DCG 1 over ideal 1 + 1/log2(3).
    let s = score(&files(&["a", "x"]), &files(&["a", "b"]));
    assert!(close(s.ndcg, 1.0 / (1.0 + 1.0 / 3f64.log2())), "{s:?}");
    assert!(close(s.recall, 0.5), "{s:?}");
}

#[test]
fn recall_stops_at_five_and_ndcg_and_mrr_at_ten() {
    let mut ranked: Vec<String> = (0..12).map(|i| format!("f{i}")).collect();
    ranked[5] = "a".to_owned();
    let s = score(&ranked, &files(&["a"]));
    assert!(close(s.recall, 0.0), "rank 6 is past recall@5: {s:?}");
    assert!(close(s.rr, 1.0 / 6.0), "{s:?}");
    ranked[5] = "f5".to_owned();
    ranked[10] = "a".to_owned();
    let s = score(&ranked, &files(&["a"]));
    assert!(
        close(s.ndcg, 0.0) && close(s.rr, 0.0),
        "rank 11 is past the cut-off: {s:?}"
    );
}

#[test]
fn an_empty_ranking_scores_zero() {
    let s = score(&[], &files(&["a"]));
    assert!(
        close(s.ndcg, 0.0) && close(s.recall, 0.0) && close(s.rr, 0.0),
        "{s:?}"
    );
}

#[test]
fn means_divide_the_sums() {
    let mut sum = Scores::default();
    sum.add(score(&files(&["a"]), &files(&["a"])));
    sum.add(score(&files(&["x"]), &files(&["a"])));
    let m = sum.divided(2);
    assert!(
        close(m.ndcg, 0.5) && close(m.recall, 0.5) && close(m.rr, 0.5),
        "{m:?}"
    );
}

#[test]
fn frames_collapse_to_distinct_files_in_first_occurrence_order() {
    let ids = ["src/a.rs#f1", "src/b.rs#f2", "src/a.rs#f3", "README.md#top"];
    let got = distinct_files(ids.iter().map(|s| (*s).to_owned()));
    assert_eq!(got, files(&["src/a.rs", "src/b.rs", "README.md"]));
}

#[test]
fn queries_parse_and_malformed_lines_are_rejected_with_their_line_number() {
    let text = "# comment\nsymbol\tContext\tsrc/core.py\n\nsemantic\tdo a thing\t./a.py, b.py\n";
    let q = parse_queries(text).expect("valid");
    assert_eq!(q.len(), 2);
    assert_eq!(q[0].category, Category::Symbol);
    assert_eq!(q[1].answers, files(&["a.py", "b.py"]));
    let err = parse_queries("symbol\tContext\tsrc/a.py\nhow\tx\ty.py\n").err();
    assert!(
        err.as_deref().is_some_and(|e| e.contains("line 2")),
        "{err:?}"
    );
    let err = parse_queries("symbol\tno answer file\n").err();
    assert!(
        err.as_deref().is_some_and(|e| e.contains("line 1")),
        "{err:?}"
    );
    let err = parse_queries("symbol\tx\t , \n").err();
    assert!(err.is_some(), "an empty answer list is rejected");
}

#[test]
fn the_project_root_is_the_named_root_else_the_single_top_directory() {
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = cache.path().join("p");
    std::fs::create_dir_all(dir.join("pkg-1.0/src")).expect("mkdir");
    let project_dir = cache.path().join("defs/p");
    std::fs::create_dir_all(&project_dir).expect("mkdir");
    std::fs::write(project_dir.join("queries.tsv"), "symbol\tX\tsrc/x.rs\n").expect("write");
    std::fs::write(project_dir.join("source"), "split=tuning\n").expect("write");
    let project = load_project(&project_dir).expect("loads");
    assert_eq!(
        project_root(cache.path(), &project).expect("root"),
        dir.join("pkg-1.0")
    );
    std::fs::write(
        project_dir.join("source"),
        "split=tuning\nroot=pkg-1.0/src\n",
    )
    .expect("write");
    let project = load_project(&project_dir).expect("loads");
    assert_eq!(
        project_root(cache.path(), &project).expect("root"),
        dir.join("pkg-1.0/src")
    );
    std::fs::write(project_dir.join("source"), "split=tuning\nroot=nope\n").expect("write");
    let project = load_project(&project_dir).expect("loads");
    assert!(project_root(cache.path(), &project).is_err());
    let missing = project_root(&cache.path().join("empty"), &project).err();
    assert!(
        missing
            .as_deref()
            .is_some_and(|e| e.contains("bench/retrieval/fetch")),
        "{missing:?}"
    );
    std::fs::write(project_dir.join("source"), "split=later\n").expect("write");
    assert!(
        load_project(&project_dir).is_err(),
        "an unknown split is rejected"
    );
}

/// Every committed project is well formed: what fetch needs, a split, at
/// least 20 distinct queries covering the three categories, relative answer paths.
#[test]
fn every_committed_project_is_well_formed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/retrieval/projects");
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .expect("bench/retrieval/projects exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    entries.sort();
    assert!(entries.len() >= 12, "{} projects", entries.len());
    let languages = [
        "rust",
        "python",
        "javascript",
        "typescript",
        "go",
        "java",
        "c",
        "cpp",
    ];
    for path in entries {
        let p = load_project(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            languages.contains(&p.language.as_str()),
            "{}: language {}",
            p.id,
            p.language
        );
        assert!(
            p.split == "tuning" || p.split == "heldout",
            "{}: split {}",
            p.id,
            p.split
        );
        for key in ["registry", "package", "version"] {
            assert!(
                p.source.get(key).is_some_and(|v| !v.is_empty()),
                "{}: no {key}=",
                p.id
            );
        }
        let sha = p.source.get("sha256").cloned().unwrap_or_default();
        assert!(
            sha.len() == 64 && sha.bytes().all(|b| b.is_ascii_hexdigit()),
            "{}: sha256 '{sha}' is not 64 hex digits",
            p.id
        );
        assert!(
            p.queries.len() >= 20,
            "{}: {} queries",
            p.id,
            p.queries.len()
        );
        let mut seen = HashSet::new();
        for q in &p.queries {
            assert!(
                seen.insert(q.text.to_lowercase()),
                "{}: duplicate query '{}'",
                p.id,
                q.text
            );
            assert!(
                q.answers.len() <= 4,
                "{}: '{}' has {} answers",
                p.id,
                q.text,
                q.answers.len()
            );
            for a in &q.answers {
                assert!(
                    !a.starts_with('/') && !a.split('/').any(|c| c == ".."),
                    "{}: answer '{a}' is not relative to the project root",
                    p.id
                );
            }
        }
        for c in metrics::CATEGORIES {
            assert!(
                p.queries.iter().filter(|q| q.category == c).count() >= 4,
                "{}: fewer than 4 {c} queries",
                p.id
            );
        }
    }
}

#[test]
fn bm25_ranks_the_file_with_the_rarer_matching_words_first() {
    let root = tempfile::tempdir().expect("tempdir");
    let write = |rel: &str, text: &str| {
        let path = root.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write(
        "src/retry.rs",
        "fn retry_with_backoff() { sleep(backoff); }",
    );
    write("src/other.rs", "fn connect() { open(); }");
    write(".git/ignored.rs", "retry backoff retry backoff");
    std::fs::write(root.path().join("blob.bin"), [0u8, 159, 146, 150]).expect("write");
    let index = bm25::Bm25::build(root.path());
    assert_eq!(index.rank("retry backoff", 10), files(&["src/retry.rs"]));
    // camelCase query words meet snake_case code words through their parts.
    assert_eq!(index.rank("retryWithBackoff", 10), files(&["src/retry.rs"]));
    assert!(index.rank("nothing here", 10).is_empty());
}
