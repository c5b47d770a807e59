//! A repository built by the test through libgit2 (no `git` binary): each
//! commit is a set of writes and deletions with a known subject and time.

use std::path::{Path, PathBuf};

use contextgraph_provider_history::{HistoryOptions, HistoryProvider};
use contextgraph_search::CacheLocation;
use git2::{Oid, Repository, Signature, Time};

/// A test repository and its cache directory.
pub struct TestRepo {
    pub dir: tempfile::TempDir,
    pub cache: tempfile::TempDir,
    pub repo: Repository,
}

/// One change of a commit.
pub enum Op<'a> {
    Write(&'a str, &'a str),
    Delete(&'a str),
    Rename(&'a str, &'a str),
}

/// Seconds of the first commit (2024-01-01T00:00:00Z); each later commit a day on.
pub const T0: i64 = 1_704_067_200;
pub const DAY: i64 = 86_400;

impl TestRepo {
    pub fn new() -> TestRepo {
        let dir = tempfile::tempdir().expect("temp dir");
        let cache = tempfile::tempdir().expect("temp dir");
        let repo = Repository::init(dir.path()).expect("init");
        TestRepo { dir, cache, repo }
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().expect("canonical root")
    }

    /// Apply `ops` to the working tree and the index, and commit them with
    /// `message` at `time` (seconds since the epoch) on `HEAD`.
    pub fn commit(&self, message: &str, time: i64, ops: &[Op<'_>]) -> Oid {
        let mut index = self.repo.index().expect("index");
        for op in ops {
            match op {
                Op::Write(path, text) => {
                    let full = self.dir.path().join(path);
                    std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
                    std::fs::write(&full, text).expect("write");
                    index.add_path(Path::new(path)).expect("add");
                }
                Op::Delete(path) => {
                    std::fs::remove_file(self.dir.path().join(path)).expect("rm");
                    index.remove_path(Path::new(path)).expect("remove");
                }
                Op::Rename(from, to) => {
                    let full_to = self.dir.path().join(to);
                    std::fs::create_dir_all(full_to.parent().expect("parent")).expect("mkdir");
                    std::fs::rename(self.dir.path().join(from), &full_to).expect("mv");
                    index.remove_path(Path::new(from)).expect("remove");
                    index.add_path(Path::new(to)).expect("add");
                }
            }
        }
        index.write().expect("write index");
        let tree_id = index.write_tree().expect("tree");
        let tree = self.repo.find_tree(tree_id).expect("find tree");
        let sig =
            Signature::new("Ada Tester", "ada@example.invalid", &Time::new(time, 0)).expect("sig");
        let parent = self.repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        self.repo
            .commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
            .expect("commit")
    }

    /// Move the current branch (and the working tree) back to `to`,
    /// dropping the commits after it: a history rewrite.
    pub fn reset_hard(&self, to: Oid) {
        let obj = self.repo.find_object(to, None).expect("object");
        self.repo
            .reset(&obj, git2::ResetType::Hard, None)
            .expect("reset");
    }

    pub fn options(&self) -> HistoryOptions {
        HistoryOptions {
            cache: CacheLocation::Base(self.cache.path().to_path_buf()),
            ..HistoryOptions::default()
        }
    }

    pub fn open(&self) -> HistoryProvider {
        HistoryProvider::open(self.dir.path(), self.options()).expect("open history")
    }
}

/// A secret of the shape the shared content check knows (an AWS access
/// key id), built at run time so that this file holds none.
pub fn aws_key() -> String {
    format!("AKIA{}", "QWERTYUIOPASDFGH")
}

/// The commits of [`story`], by what they did.
pub struct Story {
    pub add_retry: Oid,
    pub parse_config: Oid,
    pub fix_backoff: Oid,
    pub rename_config: Oid,
    pub remove_legacy: Oid,
    pub add_credentials: Oid,
    pub remove_credentials: Oid,
    pub document_retry: Oid,
}

pub const NET_V1: &str = "pub fn retry_loop() {\n    let mut delay = 1;\n    loop {\n        attempt();\n        delay = delay * 2;\n        sleep(delay);\n    }\n}\n\n// end\n";
pub const NET_V2: &str = "pub fn retry_loop() {\n    let mut delay = 1;\n    loop {\n        attempt();\n        delay = delay.saturating_mul(2).min(60);\n        sleep(delay);\n    }\n}\n\n// end\n";
pub const NET_V3: &str = "pub fn retry_loop() {\n    let mut delay = 1;\n    loop {\n        attempt();\n        delay = delay.saturating_mul(2).min(60);\n        sleep(delay);\n    }\n}\n\n// The retry loop backs off exponentially, capped at a minute.\n";

/// Eight commits a day apart: a retry loop added, a config parser, a fix of
/// line 5 of `src/net.rs`, a rename, a deletion, a secret committed and
/// removed, and a last change to `src/net.rs` that leaves line 5 alone.
pub fn story(r: &TestRepo) -> Story {
    let add_retry = r.commit(
        "Add retry loop for the network client\n\nThe client retries failed requests with a doubling delay.",
        T0,
        &[
            Op::Write("src/net.rs", NET_V1),
            Op::Write("src/lib.rs", "pub mod net;\npub mod config;\n"),
            Op::Write("src/legacy.rs", "pub fn shim() {}\n"),
        ],
    );
    let parse_config = r.commit(
        "Parse config from TOML",
        T0 + DAY,
        &[Op::Write(
            "src/config.rs",
            "pub fn parse_toml(text: &str) -> Config {\n    todo(text)\n}\n",
        )],
    );
    let fix_backoff = r.commit(
        "Fix backoff overflow in the retry loop",
        T0 + 2 * DAY,
        &[Op::Write("src/net.rs", NET_V2)],
    );
    let rename_config = r.commit(
        "Rename config module to settings",
        T0 + 3 * DAY,
        &[Op::Rename("src/config.rs", "src/settings.rs")],
    );
    let remove_legacy = r.commit(
        "Remove the legacy shim",
        T0 + 4 * DAY,
        &[Op::Delete("src/legacy.rs")],
    );
    let key = aws_key();
    let aws = format!("region = eu-west-1\naccess_key_id = {key}\n");
    let add_credentials = r.commit(
        "Add deployment credentials",
        T0 + 5 * DAY,
        &[
            Op::Write("deploy/aws.txt", &aws),
            Op::Write(".env", "DEPLOY_TOKEN=hunter2\n"),
        ],
    );
    let remove_credentials = r.commit(
        "Remove deployment credentials",
        T0 + 6 * DAY,
        &[Op::Delete("deploy/aws.txt"), Op::Delete(".env")],
    );
    let document_retry = r.commit(
        "Document the retry loop",
        T0 + 7 * DAY,
        &[Op::Write("src/net.rs", NET_V3)],
    );
    Story {
        add_retry,
        parse_config,
        fix_backoff,
        rename_config,
        remove_legacy,
        add_credentials,
        remove_credentials,
        document_retry,
    }
}

/// Every frame the provider serves for `goal` asked as a question about
/// history (`history: <goal>`; no commit of the story says "history", so
/// the ranking is that of `goal`), with a generous budget.
pub fn ask(
    p: &contextgraph_provider_history::HistoryProvider,
    goal: &str,
) -> Vec<contextgraph_types::ContextFrame> {
    ask_raw(p, &format!("history: {goal}"))
}

/// Every frame the provider serves for `goal` exactly as written.
pub fn ask_raw(
    p: &contextgraph_provider_history::HistoryProvider,
    goal: &str,
) -> Vec<contextgraph_types::ContextFrame> {
    use contextgraph_provider_sdk::Provider;
    let q = contextgraph_types::ContextQuery::new(goal, 50, 50_000);
    p.query(&q).expect("query").frames
}
