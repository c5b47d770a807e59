//! Shared fixtures: the provider binaries this suite is tested against,
//! built once per test process with the test binary's own profile, and a
//! folder of Markdown for the docs provider.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use contextgraph_conformance::{Report, Status, SuiteOptions};

/// `target/<profile>/` (tests run from `target/<profile>/deps/`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary has a path");
    exe.parent()
        .and_then(Path::parent)
        .expect("tests run from target/<profile>/deps")
        .to_path_buf()
}

/// Build the misbehaving and docs provider binaries once, with this test
/// binary's profile and target directory, and return `target/<profile>/`.
fn built() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = profile_dir();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = std::process::Command::new(cargo);
        cmd.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .args([
                "build",
                "--quiet",
                "-p",
                "contextgraph-provider-misbehaving",
                "-p",
                "contextgraph-provider-docs",
                "--bins",
            ]);
        if dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        if let Some(target) = dir.parent() {
            cmd.env("CARGO_TARGET_DIR", target);
        }
        let status = cmd.status().expect("cargo runs");
        assert!(status.success(), "building the provider binaries failed");
        dir
    })
}

/// The misbehaving provider binary.
pub fn misbehaving_binary() -> PathBuf {
    let bin = built().join(format!(
        "contextgraph-misbehaving-provider{}",
        std::env::consts::EXE_SUFFIX
    ));
    assert!(bin.is_file(), "{} missing after build", bin.display());
    bin
}

/// The docs provider binary.
pub fn docs_binary() -> PathBuf {
    let bin = built().join(format!(
        "contextgraph-provider-docs{}",
        std::env::consts::EXE_SUFFIX
    ));
    assert!(bin.is_file(), "{} missing after build", bin.display());
    bin
}

/// Suite options for tests: the documented defaults, except a request
/// timeout with headroom for a shared, noisy machine (a hang guard, not a
/// speed assertion).
pub fn options() -> SuiteOptions {
    SuiteOptions::default()
        .strict(true)
        .with_request_timeout(Duration::from_secs(5))
        .with_shutdown_grace(Duration::from_secs(3))
}

/// A folder of Markdown about a retry policy, for the docs provider.
pub fn markdown_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let write = |rel: &str, text: &str| {
        let path = dir.path().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create folders");
        }
        std::fs::write(path, text).expect("write a document");
    };
    write(
        "retry.md",
        "# Retry policy\n\nRequests are retried with exponential backoff.\n\n## Backoff\n\nThe first delay is 100 ms and doubles after each attempt, up to `max_attempts` (4).\n\n## Timeouts\n\nEach attempt has a 30 second timeout; a timed-out attempt counts as a failure.\n",
    );
    write(
        "guide/overview.md",
        "# Overview\n\nThis project retries network calls. See [the retry policy](../retry.md).\n\n## Configuration\n\nSet `backoff_ms` and `max_attempts` in the client configuration.\n",
    );
    write(
        "notes.txt",
        "Timeouts and retries are configured per client.\n",
    );
    dir
}

/// One line per check (`name status`), for assertion messages.
pub fn summary(report: &Report) -> String {
    let mut out = String::new();
    for c in &report.checks {
        out.push_str(&format!(
            "{} {:?}: {}\n",
            c.name,
            c.status,
            c.evidence.join(" | ")
        ));
    }
    for n in &report.not_applicable {
        out.push_str(&format!("{} n/a: {}\n", n.name, n.reason));
    }
    out
}

/// The names of failed checks.
pub fn failed(report: &Report) -> Vec<String> {
    report
        .names_with(Status::Fail)
        .into_iter()
        .map(str::to_owned)
        .collect()
}
