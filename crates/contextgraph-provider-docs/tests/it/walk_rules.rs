//! What the folder walk serves, in process: only document extensions; never
//! hidden entries, `target/` or `node_modules/`; never files over the size
//! cap; never symlinks leading out of the root — and `verify` is held to
//! the same rules.

use crate::common::{query, write_file};
use contextgraph_provider_docs::{DocsConfig, DocsProvider, PROVIDER_NAME};
use contextgraph_provider_sdk::Provider;
use contextgraph_types::{ContextQuery, FrameId, Verdict, VerifyRequest};

fn served_ids(provider: &DocsProvider, goal: &str) -> Vec<String> {
    let q: ContextQuery = serde_json::from_value(query(goal, 100, 1_000_000)).unwrap();
    provider
        .query(&q)
        .unwrap()
        .frames
        .into_iter()
        .map(|f| f.id)
        .collect()
}

#[test]
fn only_markdown_and_text_extensions_are_served() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "a.md",
        "b.markdown",
        "c.txt",
        "d.rst",
        "e.MD",
        "f.rs",
        "g.html",
        "md",
    ] {
        write_file(dir.path(), name, "# Alpha\n\nalpha\n");
    }
    let provider = DocsProvider::open(DocsConfig::new(dir.path())).unwrap();
    let mut ids = served_ids(&provider, "alpha");
    ids.sort();
    // `# Alpha` is no reStructuredText title, so d.rst is one untitled section.
    assert_eq!(
        ids,
        [
            "a.md#alpha",
            "b.markdown#alpha",
            "c.txt#alpha",
            "d.rst#top",
            "e.MD#alpha"
        ]
    );
}

#[test]
fn files_over_the_size_cap_are_skipped_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path(), "small.md", "# Alpha\n\nalpha\n");
    write_file(
        dir.path(),
        "large.md",
        &format!("# Alpha large\n\n{}", "alpha ".repeat(100)),
    );
    let provider =
        DocsProvider::open(DocsConfig::new(dir.path()).with_max_file_bytes(100)).unwrap();
    assert_eq!(served_ids(&provider, "alpha"), ["small.md#alpha"]);
    assert_eq!(provider.scan_report().skipped_too_large, 1);
}

#[test]
fn the_file_count_cap_bounds_the_index() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..5 {
        write_file(dir.path(), &format!("f{i}.md"), "# Alpha\n\nalpha\n");
    }
    let provider = DocsProvider::open(DocsConfig::new(dir.path()).with_max_files(3)).unwrap();
    assert_eq!(served_ids(&provider, "alpha").len(), 3);
    assert!(provider.scan_report().hit_limit);
}

#[test]
fn non_utf8_documents_are_skipped_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path(), "ok.md", "# Alpha\n\nalpha\n");
    std::fs::write(dir.path().join("bad.md"), b"# Alpha\n\xff\xfe alpha\n").unwrap();
    let provider = DocsProvider::open(DocsConfig::new(dir.path())).unwrap();
    assert_eq!(served_ids(&provider, "alpha"), ["ok.md#alpha"]);
    assert_eq!(provider.scan_report().skipped_unreadable, 1);
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_root_are_never_followed_and_verify_agrees() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().unwrap();
    write_file(outside.path(), "secret.md", "# Alpha secret\n\nalpha\n");
    write_file(outside.path(), "dir/inner.md", "# Alpha inner\n\nalpha\n");
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path(), "real.md", "# Alpha real\n\nalpha\n");
    symlink(
        outside.path().join("secret.md"),
        dir.path().join("escape.md"),
    )
    .unwrap();
    symlink(outside.path().join("dir"), dir.path().join("linked-dir")).unwrap();
    symlink(dir.path().join("real.md"), dir.path().join("alias.md")).unwrap();
    let provider = DocsProvider::open(DocsConfig::new(dir.path())).unwrap();
    let mut ids = served_ids(&provider, "alpha");
    ids.sort();
    assert_eq!(
        ids,
        ["alias.md#alpha-real", "real.md#alpha-real"],
        "an in-root file link is served"
    );
    assert_eq!(
        provider.scan_report().skipped_symlinks,
        1,
        "the escaping file link"
    );

    let request = VerifyRequest {
        frames: ["escape.md#alpha-secret", "linked-dir/inner.md#alpha-inner"]
            .into_iter()
            .map(|id| {
                FrameId::new(
                    PROVIDER_NAME,
                    id,
                    Some(format!("sha256:{}", "0".repeat(64))),
                )
            })
            .collect(),
    };
    for v in provider.verify(&request).verdicts {
        assert_eq!(v.verdict, Verdict::Gone, "{}", v.frame);
    }
}

#[test]
fn a_missing_root_is_an_error_a_person_can_act_on() {
    let dir = tempfile::tempdir().unwrap();
    let err = DocsProvider::open(DocsConfig::new(dir.path().join("nope"))).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(PROVIDER_NAME) && text.contains("nope") && text.contains("pass an existing"),
        "{text}"
    );
    write_file(dir.path(), "file.md", "x");
    let err = DocsProvider::open(DocsConfig::new(dir.path().join("file.md"))).unwrap_err();
    assert!(err.to_string().contains("not a directory"), "{err}");
}

/// N3: the secrets and ignore rules apply to what a linked file is, not the
/// name it is reached by; `verify` agrees.
#[cfg(unix)]
#[test]
fn n3_in_root_links_to_secrets_or_ignored_files_are_not_served() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path(), ".env", "# Alpha env\n\nalpha API_KEY=sk-live\n");
    write_file(dir.path(), ".ssh/id_ed25519", "# Alpha key\n\nalpha\n");
    write_file(dir.path(), "private_notes.txt", "Alpha private\n\nalpha\n");
    write_file(dir.path(), ".gitignore", "private_notes.txt\n");
    write_file(dir.path(), "secrets/plan.md", "# Alpha plan\n\nalpha\n");
    write_file(dir.path(), "real.md", "# Alpha real\n\nalpha\n");
    symlink(".env", dir.path().join("env-notes.md")).unwrap();
    symlink(".ssh/id_ed25519", dir.path().join("key.md")).unwrap();
    symlink("private_notes.txt", dir.path().join("notes.txt")).unwrap();
    symlink("secrets/plan.md", dir.path().join("plan.md")).unwrap();
    symlink("real.md", dir.path().join("alias.md")).unwrap();
    let provider = DocsProvider::open(DocsConfig::new(dir.path())).unwrap();
    let mut ids = served_ids(&provider, "alpha");
    ids.sort();
    assert_eq!(ids, ["alias.md#alpha-real", "real.md#alpha-real"]);
    let request = VerifyRequest {
        frames: [
            "env-notes.md#alpha-env",
            "key.md#alpha-key",
            "notes.txt#alpha-private",
            "plan.md#alpha-plan",
        ]
        .into_iter()
        .map(|id| {
            FrameId::new(
                PROVIDER_NAME,
                id,
                Some(format!("sha256:{}", "0".repeat(64))),
            )
        })
        .collect(),
    };
    for v in provider.verify(&request).verdicts {
        assert_eq!(v.verdict, Verdict::Gone, "{}", v.frame);
    }
}

/// N7: a document whose text holds a private-key block is not served,
/// whatever its name, and `verify` agrees.
#[test]
fn n7_a_document_holding_a_private_key_is_not_served() {
    let dir = tempfile::tempdir().unwrap();
    let dashes = "-".repeat(5);
    write_file(
        dir.path(),
        "notes.md",
        &format!(
            "# Alpha notes\n\nalpha\n\n{dashes}BEGIN RSA PRIVATE KEY{dashes}\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n{dashes}END RSA PRIVATE KEY{dashes}\n"
        ),
    );
    write_file(dir.path(), "real.md", "# Alpha real\n\nalpha\n");
    let provider = DocsProvider::open(DocsConfig::new(dir.path())).unwrap();
    assert_eq!(served_ids(&provider, "alpha"), ["real.md#alpha-real"]);
}
