//! Records the commit `cgp` is built from, for `cgp --version`.
//!
//! `CGP_BUILD_COMMIT` is, in order: the environment variable of that name
//! (a packager building from a tarball can set it), the short hash of the
//! checkout's HEAD (uncommitted changes are not tracked: a build script
//! cannot watch every file cheaply, and a stale `-dirty` would mislead), or
//! `unknown` when there is no git or no checkout (a crate tarball from a
//! registry). Building never fails for want of git.

use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    Some(text.trim().to_owned())
}

fn main() {
    println!("cargo:rerun-if-env-changed=CGP_BUILD_COMMIT");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let commit = match std::env::var("CGP_BUILD_COMMIT") {
        Ok(v) if !v.trim().is_empty() => v.trim().to_owned(),
        _ => from_git(dir).unwrap_or_else(|| "unknown".to_owned()),
    };
    println!("cargo:rustc-env=CGP_BUILD_COMMIT={commit}");
}

/// The checkout's commit, and what to watch so a new commit rebuilds this.
fn from_git(dir: &Path) -> Option<String> {
    // Inside a registry tarball unpacked under someone's git repository, the
    // enclosing repository's HEAD is not this crate's: only trust a
    // checkout that has this crate at its expected place.
    let top = git(dir, &["rev-parse", "--show-toplevel"])?;
    if !Path::new(&top)
        .join("crates/contextgraph-cli/Cargo.toml")
        .is_file()
    {
        return None;
    }
    let hash = git(dir, &["rev-parse", "--short=12", "HEAD"])?;
    for watched in ["HEAD", "packed-refs"] {
        if let Some(path) = git(dir, &["rev-parse", "--git-path", watched]) {
            watch(dir, &path);
        }
    }
    if let Some(reference) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        if let Some(path) = git(dir, &["rev-parse", "--git-path", &reference]) {
            watch(dir, &path);
        }
    }
    Some(hash)
}

/// Print a `rerun-if-changed` for `path` (relative to `dir`) when it exists:
/// cargo reruns a build script on every build for a missing watched file.
fn watch(dir: &Path, path: &str) {
    let p = dir.join(path);
    if p.exists() {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}
