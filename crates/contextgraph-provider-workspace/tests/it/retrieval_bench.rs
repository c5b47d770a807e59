//! The retrieval benchmark's scoring, definition files and BM25 baseline
//! (`benches/retrieval/`): a wrong metric or a malformed project would
//! mislead every ranking change scored on it.

#[path = "../../benches/retrieval/bm25.rs"]
mod bm25;
#[path = "../../benches/retrieval/metrics.rs"]
mod metrics;
#[path = "../../benches/retrieval/projects.rs"]
mod projects;
#[path = "../../benches/retrieval/semble.rs"]
mod semble;

use std::collections::HashSet;
use std::path::Path;

use metrics::{distinct_files, score, score_with, Category, PathMatch, Scores};
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

#[test]
fn suffix_matching_goes_both_ways_on_path_boundaries_only() {
    let m = PathMatch::Suffix;
    assert!(m.matches("src/Monolog/Logger.php", "src/Monolog/Logger.php"));
    // The target written from the repository root, the file from the indexed root.
    assert!(m.matches("Readers/Markdown.hs", "src/Text/Pandoc/Readers/Markdown.hs"));
    // And the other way.
    assert!(m.matches("src/Text/Pandoc/Readers/Markdown.hs", "Readers/Markdown.hs"));
    assert!(
        !m.matches("xinit.lua", "lua/lazy/init.lua"),
        "not on a '/' boundary"
    );
    assert!(!m.matches("lua/init.lua", "lua/lazy/init.lua"));
    assert!(!PathMatch::Exact.matches("Readers/Markdown.hs", "src/Readers/Markdown.hs"));
}

#[test]
fn a_target_counts_at_its_first_matching_file_only() {
    // `init.lua` at the top matches the deep target first (semble's
    // looseness); the target itself at rank 2 then adds nothing.
    let ranked = files(&["init.lua", "lua/lazy/init.lua"]);
    let s = score_with(&ranked, &files(&["lua/lazy/init.lua"]), PathMatch::Suffix);
    assert!(close(s.ndcg, 1.0) && close(s.rr, 1.0), "{s:?}");
    // One file matching two targets is one gain, against an ideal of two.
    let s = score_with(
        &files(&["a/x.rb"]),
        &files(&["a/x.rb", "x.rb"]),
        PathMatch::Suffix,
    );
    assert!(close(s.ndcg, 1.0 / (1.0 + 1.0 / 3f64.log2())), "{s:?}");
    assert!(
        close(s.recall, 1.0),
        "both targets are found at rank 1: {s:?}"
    );
    // Exact matching is the per-file binary gain the old scorer gave.
    let ranked = files(&["x", "a", "b"]);
    let answers = files(&["a", "b"]);
    let (e, o) = (
        score_with(&ranked, &answers, PathMatch::Exact),
        score(&ranked, &answers),
    );
    assert!(close(e.ndcg, o.ndcg) && close(e.rr, o.rr) && close(e.recall, o.recall));
}

/// A semble-ext set in a temporary directory: `repos.json` and the named
/// annotation files.
fn semble_set(repos: &str, annotations: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("annotations")).expect("mkdir");
    std::fs::write(dir.path().join("annotations/repos.json"), repos).expect("write");
    for (name, text) in annotations {
        std::fs::write(dir.path().join(format!("annotations/{name}.json")), text).expect("write");
    }
    dir
}

const ONE_REPO: &str = r#"[{"name": "demo", "language": "ruby", "split": "heldout",
    "benchmark_root": "lib", "queries_dropped": [{"index": 1, "query": "gone"}]}]"#;

#[test]
fn the_semble_set_loads_targets_skips_dropped_queries_and_keeps_duplicates() {
    let annotations = r#"[
        {"query": "route a request", "category": "semantic",
         "relevant": ["lib/router.rb"], "secondary": [{"path": "lib/app.rb", "start_line": 1, "end_line": 9}]},
        {"query": "gone", "category": "symbol", "relevant": ["lib/missing.rb"]},
        {"query": "Router", "category": "symbol", "relevant": ["router.rb"], "secondary": [], "seed": {"path": "x", "line": 1}},
        {"query": "Router", "category": "symbol", "relevant": ["router.rb"]}
    ]"#;
    let dir = semble_set(ONE_REPO, &[("demo", annotations)]);
    let set = semble::load_set(dir.path()).expect("a valid set loads");
    assert_eq!(set.len(), 1);
    let p = &set[0];
    assert_eq!(
        (p.id.as_str(), p.set, p.language.as_str(), p.split.as_str()),
        ("demo", semble::SET, "ruby", "heldout")
    );
    assert_eq!(p.matching, PathMatch::Suffix);
    let texts: Vec<&str> = p.queries.iter().map(|q| q.text.as_str()).collect();
    assert_eq!(
        texts,
        ["route a request", "Router", "Router"],
        "dropped index 1 skipped, duplicates kept"
    );
    assert_eq!(
        p.queries[0].answers,
        files(&["lib/router.rb", "lib/app.rb"])
    );
    assert_eq!(p.queries[0].category, Category::Semantic);
}

#[test]
fn a_malformed_annotation_file_is_rejected_naming_the_file() {
    let bad = [
        ("not json", "not valid JSON"),
        (r#"{"query": "x"}"#, "expected a JSON array"),
        (
            r#"[{"category": "symbol", "relevant": ["a.rb"]}]"#,
            "'query'",
        ),
        (
            r#"[{"query": "x", "category": "lookup", "relevant": ["a.rb"]}]"#,
            "category 'lookup'",
        ),
        (r#"[{"query": "x", "category": "symbol"}]"#, "'relevant'"),
        (
            r#"[{"query": "x", "category": "symbol", "relevant": []}]"#,
            "'relevant' is empty",
        ),
        (
            r#"[{"query": "x", "category": "symbol", "relevant": [3]}]"#,
            "neither a path",
        ),
        (
            r#"[{"query": "x", "category": "symbol", "relevant": ["a.rb"], "secondary": "b.rb"}]"#,
            "'secondary'",
        ),
    ];
    for (text, why) in bad {
        let dir = semble_set(ONE_REPO, &[("demo", text)]);
        let err = semble::load_set(dir.path()).err().unwrap_or_default();
        assert!(
            err.contains("demo.json") && err.contains(why),
            "{text}: {err}"
        );
    }
    let dir = semble_set(ONE_REPO, &[]);
    let err = semble::load_set(dir.path()).err().unwrap_or_default();
    assert!(
        err.contains("demo.json") && err.contains("cannot read"),
        "{err}"
    );
    let dir = semble_set(
        r#"[{"name": "demo", "language": "ruby", "split": "later"}]"#,
        &[],
    );
    let err = semble::load_set(dir.path()).err().unwrap_or_default();
    assert!(
        err.contains("repos.json") && err.contains("split 'later'"),
        "{err}"
    );
    let dir = semble_set(
        r#"[{"name": "../up", "language": "ruby", "split": "tuning"}]"#,
        &[],
    );
    let err = semble::load_set(dir.path()).err().unwrap_or_default();
    assert!(
        err.contains("repos.json") && err.contains("not a repository name"),
        "{err}"
    );
}

#[test]
fn a_semble_tarball_is_extracted_once_into_the_cache() {
    let dir = semble_set(
        ONE_REPO,
        &[(
            "demo",
            r#"[{"query": "x", "category": "symbol", "relevant": ["lib/a.rb"]}]"#,
        )],
    );
    let project = semble::load_set(dir.path()).expect("loads").remove(0);
    let cache = tempfile::tempdir().expect("tempdir");
    let err = semble::extracted_root(dir.path(), cache.path(), &project)
        .err()
        .unwrap_or_default();
    assert!(
        err.contains("demo.tar.gz") && err.contains("missing"),
        "{err}"
    );
    // A tarball whose members start at benchmark_root, as the set's do.
    let tree = tempfile::tempdir().expect("tempdir");
    std::fs::write(tree.path().join("a.rb"), "class A; end\n").expect("write");
    std::fs::create_dir_all(dir.path().join("sources")).expect("mkdir");
    let status = std::process::Command::new("tar")
        .arg("-czf")
        .arg(semble::tarball(dir.path(), "demo"))
        .arg("-C")
        .arg(tree.path())
        .arg("a.rb")
        .status()
        .expect("tar runs");
    assert!(status.success());
    let root = semble::extracted_root(dir.path(), cache.path(), &project).expect("extracts");
    assert_eq!(root, cache.path().join("demo"));
    assert!(root.join("a.rb").is_file());
    assert!(
        semble::target_exists(&root, &project, "lib/a.rb"),
        "benchmark_root stripped"
    );
    assert!(!semble::target_exists(&root, &project, "lib/b.rb"));
    // Not extracted again while the tarball is unchanged.
    std::fs::write(root.join("marker"), "kept").expect("write");
    semble::extracted_root(dir.path(), cache.path(), &project).expect("cached");
    assert!(root.join("marker").is_file());
}
