//! The localization benchmark's loader: its rules, and a commit whose
//! parent is missing rejected with a clear error.

use contextgraph_provider_history::localization::{
    case_of, load_cases, strip_references, LoaderError,
};

use crate::repo::{story, Op, TestRepo, DAY, T0};

#[test]
fn references_are_stripped_from_the_query() {
    assert_eq!(
        strip_references("Fix backoff overflow (#123)"),
        "Fix backoff overflow"
    );
    assert_eq!(strip_references("Parse TOML, fixes #9"), "Parse TOML");
    assert_eq!(
        strip_references("GH-12: handle empty input"),
        "handle empty input"
    );
    assert_eq!(
        strip_references("Keep #hashtag words"),
        "Keep #hashtag words"
    );
}

#[test]
fn cases_are_code_changes_with_their_modified_files() {
    let r = TestRepo::new();
    let s = story(&r);
    r.commit(
        "Bump version to 2.0",
        T0 + 8 * DAY,
        &[Op::Write("src/lib.rs", "pub mod net;\n// 2.0\n")],
    );
    let cases = load_cases(&r.repo, 100).expect("cases");
    let ids: Vec<_> = cases.iter().map(|c| c.commit).collect();
    // Modifications of code files, no bump, no root commit, no pure
    // addition, no secrets-only or docs-only commit.
    assert!(ids.contains(&s.fix_backoff));
    assert!(ids.contains(&s.document_retry));
    assert!(
        !ids.contains(&s.add_retry),
        "a root commit has no parent to index"
    );
    assert!(
        !ids.contains(&s.parse_config),
        "a pure addition cannot be localized"
    );
    assert!(!ids.contains(&s.add_credentials));
    assert_eq!(cases.len(), 2, "{cases:?}");
    let fix = cases
        .iter()
        .find(|c| c.commit == s.fix_backoff)
        .expect("fix");
    assert_eq!(fix.answers, vec!["src/net.rs".to_owned()]);
    assert_eq!(fix.parent, s.parse_config);
}

#[test]
fn a_commit_whose_parent_is_missing_is_rejected_with_a_clear_error() {
    let r = TestRepo::new();
    let s = story(&r);
    let parent = s.rename_config.to_string();
    std::fs::remove_file(
        r.repo
            .path()
            .join("objects")
            .join(&parent[..2])
            .join(&parent[2..]),
    )
    .expect("rm");
    // A fresh handle: the one that wrote the commits caches their objects.
    let repo = git2::Repository::open(r.dir.path()).expect("open");
    let err = case_of(&repo, s.remove_legacy).expect_err("missing parent");
    assert_eq!(
        err,
        LoaderError::MissingParent {
            commit: s.remove_legacy.to_string(),
            parent: parent.clone(),
        }
    );
    let message = err.to_string();
    assert!(
        message.contains(&parent) && message.contains("not in the repository"),
        "{message}"
    );
}
