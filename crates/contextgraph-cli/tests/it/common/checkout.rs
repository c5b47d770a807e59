//! A checkout "at a commit" for the index artifact tests, and a snapshot of
//! a directory tree (every entry's inode, mtime, size and kind) to prove a
//! read-only server wrote nothing.
//!
//! The `.git` is written by hand (`HEAD` naming a branch whose loose ref
//! holds a commit id), which is all `cgp` reads to tell the commit: the
//! tests need no `git` on the machine and "another commit" is one write.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The commit the fixture checkout is at.
pub const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

/// Another commit.
pub const OTHER_COMMIT: &str = "89abcdef0123456789abcdef0123456789abcdef";

/// A small Rust and Markdown project at [`COMMIT`] in a fresh temporary
/// directory, with a private `HOME` (so the cache `cgp` writes when not
/// read-only lands there and nowhere else).
pub struct Checkout {
    /// The temporary directory holding `co/` (the checkout) and `home/`.
    pub tmp: tempfile::TempDir,
}

impl Checkout {
    /// Lay it out.
    pub fn new() -> Checkout {
        let tmp = tempfile::tempdir().unwrap();
        let co = tmp.path().join("co");
        std::fs::create_dir_all(co.join(".git/refs/heads")).unwrap();
        std::fs::create_dir_all(co.join("src")).unwrap();
        std::fs::create_dir_all(tmp.path().join("home")).unwrap();
        std::fs::write(co.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(co.join(".git/refs/heads/main"), format!("{COMMIT}\n")).unwrap();
        std::fs::write(
            co.join("src/retry.rs"),
            "/// Retries a request with exponential backoff, up to `attempts` times.\npub fn retry_with_backoff(attempts: u32) -> u32 {\n    let mut delay = 100;\n    for _ in 0..attempts {\n        delay *= 2;\n    }\n    delay\n}\n",
        )
        .unwrap();
        std::fs::write(
            co.join("src/parse.rs"),
            "/// Parses a port number from configuration text.\npub fn parse_port(text: &str) -> Option<u16> {\n    text.trim().parse().ok()\n}\n\n/// Parses a host name, refusing empty ones.\npub fn parse_host(text: &str) -> Option<&str> {\n    let t = text.trim();\n    (!t.is_empty()).then_some(t)\n}\n",
        )
        .unwrap();
        std::fs::write(
            co.join("README.md"),
            "# Fixture\n\n## Configuration\n\nThe port and host are read from configuration text.\n\n## Retries\n\nFailed requests are retried with exponential backoff.\n",
        )
        .unwrap();
        Checkout { tmp }
    }

    /// The checkout.
    pub fn dir(&self) -> PathBuf {
        self.tmp.path().join("co")
    }

    /// The private home (and cache) directory.
    pub fn home(&self) -> PathBuf {
        self.tmp.path().join("home")
    }

    /// Where the tests write the artifact.
    pub fn artifact(&self) -> PathBuf {
        self.tmp.path().join("co.cgpidx")
    }

    /// Move `HEAD`'s branch to `commit`.
    pub fn set_commit(&self, commit: &str) {
        std::fs::write(
            self.dir().join(".git/refs/heads/main"),
            format!("{commit}\n"),
        )
        .unwrap();
    }

    /// `cgp ARGS` with the private home, stdin closed.
    pub fn cgp(&self) -> Command {
        let mut c = Command::new(crate::CGP);
        c.env("HOME", self.home())
            .env("XDG_CACHE_HOME", self.home().join(".cache"))
            .env_remove("CONTEXTGRAPH_WORKSPACE_CACHE")
            .env_remove("CGP_SEMANTIC")
            .env_remove("CGP_RANK_SIGNALS_OFF")
            .env_remove("CGP_RANK_SIGNALS_ON")
            .stdin(Stdio::null());
        c
    }

    /// `cgp index verify co.cgpidx [co]` (with the checkout when
    /// `with_dir`), whatever its outcome.
    pub fn verify(&self, with_dir: bool) -> std::process::Output {
        let mut command = self.cgp();
        command.args(["index", "verify"]).arg(self.artifact());
        if with_dir {
            command.arg(self.dir());
        }
        command.output().unwrap()
    }

    /// `cgp index build co --out co.cgpidx`, which must succeed; its stdout.
    pub fn build(&self) -> String {
        let out = self
            .cgp()
            .args(["index", "build"])
            .arg(self.dir())
            .arg("--out")
            .arg(self.artifact())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "cgp index build: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// One entry of a [`tree_snapshot`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// Inode number.
    pub ino: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i128,
    /// Status change time (a chmod, a link), nanoseconds since the epoch.
    pub ctime_ns: i128,
    /// Size in bytes.
    pub size: u64,
    /// Directory, file or link.
    pub kind: &'static str,
}

/// Every entry under `root` (itself included, as ""), by relative path,
/// symlinks not followed.
pub fn tree_snapshot(root: &Path) -> BTreeMap<String, Stamp> {
    let mut out = BTreeMap::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(path) = todo.pop() {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let kind = if meta.file_type().is_symlink() {
            "link"
        } else if meta.is_dir() {
            "dir"
        } else {
            "file"
        };
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        out.insert(
            rel,
            Stamp {
                ino: meta.ino(),
                mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
                ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
                size: meta.len(),
                kind,
            },
        );
        if kind == "dir" {
            for entry in std::fs::read_dir(&path).unwrap() {
                todo.push(entry.unwrap().path());
            }
        }
    }
    out
}
