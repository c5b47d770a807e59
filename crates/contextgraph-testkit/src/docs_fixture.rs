//! The docs provider's test folder and the audit every answer from it must
//! pass: a temporary folder of documents (with decoys that must never be
//! served), a fresh provider on it after a handshake ([`start`]), and
//! [`assert_honest_answer`]: every frame passes `validate_with` with zero
//! violations, and every file provenance digest equals a fresh SHA-256 of
//! the bytes its `uri` + `range` address, re-read from disk.

use std::ffi::OsString;
use std::path::Path;

use contextgraph_provider_sdk::{file_uri_to_path, read_range, sha256_digest, Sha256Hasher};
use contextgraph_types::{ContextQuery, ContextQueryResult, LineRange};
use serde_json::Value;
use tempfile::TempDir;

use crate::pipe::Session;

/// The retry document: a heading section, a subsection with a fenced block
/// whose `#` line is not a heading, and a link to an existing file.
pub const RETRY_MD: &str = "# Retry policy\n\nRetry behaviour is set in `src/config.rs`. max_attempts bounds the tries;\nbackoff_ms is the initial delay.\n\n## Backoff\n\nThe delay doubles after each retry attempt.\n\n```sh\n# not a heading\nexport RETRIES=3\n```\n";

/// A folder of documents:
/// - `README.md` (text before the first heading, two headings, a link);
/// - `docs/retry.md` ([`RETRY_MD`]);
/// - `docs/timeouts.md` (setext headings);
/// - `docs/logging.txt` (CRLF line endings);
/// - `src/config.rs` (not a document; the target of a `doc.documents` edge);
/// - decoys mentioning "retry" that must never be served: `.hidden/secret.md`,
///   `target/generated.md`, `node_modules/pkg/README.md`, `docs/.draft.md`,
///   `docs/retry.html`.
pub fn docs_fixture() -> TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let files: [(&str, &str); 10] = [
        (
            "README.md",
            "Project intro: a demo workspace.\n\n# Getting started\n\nInstall it, then read [the retry policy](docs/retry.md).\n\n## Configuration\n\nAll settings live in one file.\n",
        ),
        ("docs/retry.md", RETRY_MD),
        (
            "docs/timeouts.md",
            "Timeouts\n========\n\nRequests time out after 30 seconds.\n\nConnection limits\n-----------------\n\nAt most 8 connections per host.\n",
        ),
        (
            "docs/logging.txt",
            "Logging\r\n=======\r\n\r\nLogs go to stderr; set LOG_LEVEL to change verbosity.\r\n",
        ),
        ("src/config.rs", "pub struct RetryPolicy { pub max_attempts: u32 }\n"),
        (".hidden/secret.md", "# Retry secret\n\nretry retry retry\n"),
        ("target/generated.md", "# Retry generated\n\nretry retry\n"),
        ("node_modules/pkg/README.md", "# Retry vendored\n\nretry\n"),
        ("docs/.draft.md", "# Retry draft\n\nretry\n"),
        ("docs/retry.html", "<h1>Retry</h1> retry\n"),
    ];
    for (rel, text) in files {
        write_file(dir.path(), rel, text);
    }
    dir
}

/// A small folder about a retry policy, for runs of the conformance suite
/// and the HTTP server against the docs provider: `retry.md` (three
/// sections), `guide/overview.md` (two, with a relative link) and
/// `notes.txt`.
pub fn markdown_folder() -> TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let files = [
        (
            "retry.md",
            "# Retry policy\n\nRequests are retried with exponential backoff.\n\n## Backoff\n\nThe first delay is 100 ms and doubles after each attempt, up to `max_attempts` (4).\n\n## Timeouts\n\nEach attempt has a 30 second timeout; a timed-out attempt counts as a failure.\n",
        ),
        (
            "guide/overview.md",
            "# Overview\n\nThis project retries network calls. See [the retry policy](../retry.md).\n\n## Configuration\n\nSet `backoff_ms` and `max_attempts` in the client configuration.\n",
        ),
        ("notes.txt", "Timeouts and retries are configured per client.\n"),
    ];
    for (rel, text) in files {
        write_file(dir.path(), rel, text);
    }
    dir
}

/// Write `text` to `root/rel`, creating directories.
pub fn write_file(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create dirs");
    }
    std::fs::write(&path, text).expect("write fixture file");
}

/// A fresh [`docs_fixture`] served by `program args… <fixture dir>`, after a
/// completed handshake.
pub fn start(program: &str, args: &[&str]) -> (TempDir, Session) {
    let dir = docs_fixture();
    let mut all: Vec<OsString> = args.iter().map(OsString::from).collect();
    all.push(dir.path().into());
    let mut session = Session::spawn(program, all);
    session.handshake();
    (dir, session)
}

/// The exact bytes `uri` + `range` address, re-read from disk now (F5).
pub fn bytes_addressed(uri: &str, range: &str) -> Vec<u8> {
    let path = file_uri_to_path(uri).unwrap_or_else(|e| panic!("{uri}: {e}"));
    let file = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let range = LineRange::parse(range).unwrap_or_else(|| panic!("range {range:?}"));
    read_range(&file, range)
        .unwrap_or_else(|| panic!("{range} is past the end of {}", path.display()))
        .to_vec()
}

/// Every frame of `result` passes `validate_with(&query, hasher)` with zero
/// violations; every file provenance digest is a fresh SHA-256 of the bytes
/// its uri + range address on disk; and the content is exactly those bytes.
pub fn assert_honest_answer(result: &ContextQueryResult, query: &Value) {
    let query: ContextQuery = serde_json::from_value(query.clone()).expect("query parses");
    let violations = result.validate_with(&query, &Sha256Hasher);
    assert!(violations.is_empty(), "violations: {violations:#?}");
    for frame in &result.frames {
        let file_provenance: Vec<_> = frame.file_provenance().collect();
        assert!(
            !file_provenance.is_empty(),
            "{} has no file provenance",
            frame.id
        );
        for p in file_provenance {
            let uri = p.uri.as_deref().expect("F5: file provenance has a uri");
            let range = p.range.as_deref().expect("sections carry a range");
            let bytes = bytes_addressed(uri, range);
            assert_eq!(
                p.digest.as_deref(),
                Some(sha256_digest(&bytes).as_str()),
                "F5: provenance digest of {} is not the sha256 of {uri} {range}",
                frame.id
            );
            assert_eq!(
                frame.content.as_deref().map(str::as_bytes),
                Some(bytes.as_slice()),
                "content of {} is not exactly the bytes of {uri} {range}",
                frame.id
            );
        }
    }
}
