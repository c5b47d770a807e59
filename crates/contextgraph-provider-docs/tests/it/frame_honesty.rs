//! F1–F5, D1, B3 over real pipes: every frame the binary returns validates
//! with zero violations (content digests recomputed), its file provenance
//! digest equals a fresh SHA-256 of the bytes its uri + range address on
//! disk, and its content is exactly those bytes.

use crate::common::{assert_honest_answer, frames_of, query, start, DOCS_BIN};
use contextgraph_provider_sdk::{file_uri_to_path, path_to_file_uri};
use contextgraph_types::{ContextQueryResult, Timestamp};
use serde_json::Value;

fn run_queries(queries: &[(&str, Value)]) -> (tempfile::TempDir, Vec<ContextQueryResult>) {
    let (dir, mut session) = start(DOCS_BIN, &[]);
    let results = queries
        .iter()
        .map(|(id, q)| {
            let result = frames_of(&session.query(id, q), id);
            assert_honest_answer(&result, q);
            result
        })
        .collect();
    (dir, results)
}

#[test]
fn f1_f5_d1_b3_every_frame_is_honest_and_its_provenance_re_reads_from_disk() {
    let everything = query("retry policy backoff timeouts connection limits logging getting started configuration project", 50, 100_000);
    let (_dir, results) = run_queries(&[
        (
            "retry",
            query("how do I configure the retry policy?", 5, 4000),
        ),
        ("timeouts", query("timeouts", 5, 4000)),
        ("all", everything),
    ]);
    assert!(results.iter().all(|r| !r.frames.is_empty()));
    let ids: Vec<&str> = results[2].frames.iter().map(|f| f.id.as_str()).collect();
    for expected in [
        "README.md#top",
        "README.md#getting-started",
        "README.md#configuration",
        "docs/retry.md#retry-policy",
        "docs/retry.md#backoff",
        "docs/timeouts.md#timeouts",
        "docs/timeouts.md#connection-limits",
        "docs/logging.txt#logging",
    ] {
        assert!(ids.contains(&expected), "{expected} missing from {ids:?}");
    }
    assert_eq!(
        ids.len(),
        8,
        "exactly the sections of the served files: {ids:?}"
    );
}

#[test]
fn decoys_hidden_build_vendored_and_non_doc_files_are_never_served() {
    let (_dir, results) = run_queries(&[(
        "decoys",
        query("retry secret generated vendored draft", 50, 100_000),
    )]);
    for frame in &results[0].frames {
        let uri = frame.uri.as_deref().unwrap();
        for decoy in [
            "/.hidden/",
            "/target/",
            "/node_modules/",
            "/.draft.md",
            ".html",
        ] {
            assert!(!uri.contains(decoy), "{} served from {uri}", frame.id);
        }
    }
}

#[test]
fn f2_f3_f4_titles_labels_uris_and_recorded_at_say_where_the_text_came_from() {
    let (dir, results) = run_queries(&[(
        "all",
        query("retry policy backoff logging project", 50, 100_000),
    )]);
    let by_id = |id: &str| {
        results[0]
            .frames
            .iter()
            .find(|f| f.id == id)
            .unwrap_or_else(|| panic!("{id}"))
    };

    let policy = by_id("docs/retry.md#retry-policy");
    assert_eq!(policy.title, "Retry policy");
    assert_eq!(
        policy.citation_label.as_deref(),
        Some("docs/retry.md § Retry policy (L1-5)")
    );
    let retry_path = std::fs::canonicalize(dir.path().join("docs/retry.md")).unwrap();
    assert_eq!(
        policy.uri.as_deref(),
        Some(path_to_file_uri(&retry_path).unwrap().as_str())
    );
    assert_eq!(
        file_uri_to_path(policy.uri.as_deref().unwrap()).unwrap(),
        retry_path
    );
    let mtime = std::fs::metadata(&retry_path).unwrap().modified().unwrap();
    assert_eq!(
        policy.recorded_at.as_deref(),
        Some(Timestamp::from_system_time(mtime).to_wire().as_str())
    );
    assert!(policy.score > 0.0 && policy.score <= 1.0);

    // The fenced `# not a heading` stays inside the Backoff section.
    let backoff = by_id("docs/retry.md#backoff");
    assert!(backoff
        .content
        .as_deref()
        .unwrap()
        .contains("# not a heading"));
    assert!(results[0]
        .frames
        .iter()
        .all(|f| !f.id.contains("not-a-heading")));

    // Text before the first heading is titled by the file name.
    let intro = by_id("README.md#top");
    assert_eq!(intro.title, "README.md");
    assert_eq!(intro.citation_label.as_deref(), Some("README.md L1-2"));

    // CRLF bytes are carried as they are on disk.
    let logging = by_id("docs/logging.txt#logging");
    assert!(logging
        .content
        .as_deref()
        .unwrap()
        .contains("Logging\r\n=======\r\n"));
}

#[test]
fn g1_g2_a_section_that_links_to_a_file_in_the_folder_documents_it() {
    let (dir, results) =
        run_queries(&[("rel", query("retry policy getting started", 10, 100_000))]);
    let policy = results[0]
        .frames
        .iter()
        .find(|f| f.id == "docs/retry.md#retry-policy")
        .unwrap();
    let config = std::fs::canonicalize(dir.path().join("src/config.rs")).unwrap();
    assert_eq!(policy.relations.len(), 1, "{:?}", policy.relations);
    assert_eq!(policy.relations[0].rel, "doc.documents");
    assert_eq!(
        policy.relations[0].target_uri,
        path_to_file_uri(&config).unwrap()
    );
    assert_eq!(
        policy.relations[0].display_name.as_deref(),
        Some("src/config.rs")
    );
    let started = results[0]
        .frames
        .iter()
        .find(|f| f.id == "README.md#getting-started")
        .unwrap();
    assert_eq!(
        started.relations[0].display_name.as_deref(),
        Some("docs/retry.md")
    );
}
