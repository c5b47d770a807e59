//! Shared fixtures: the misbehaving provider binary (built once per test
//! process), commands and hosts around it, and a scripted in-memory peer.
#![allow(dead_code)]

pub mod http_server;
pub mod peer;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use contextgraph_host::{
    ConnectionOptions, Host, HostOptions, RespawnPolicy, StdioCommand, StdioOptions,
};
use contextgraph_types::ContextQuery;

/// Generous bound for things that should be quick; tests assert on much
/// smaller margins only where the rule is "prompt, not a timeout".
pub const PATIENCE: Duration = Duration::from_secs(10);

/// The workspace root (two levels above this crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Path of the misbehaving provider binary, built on first use with the same
/// profile as this test binary (tests run from `target/<profile>/deps/`).
pub fn misbehaving_binary() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().expect("test binary path");
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("tests run from target/<profile>/deps")
            .to_path_buf();
        let bin = profile_dir.join("contextgraph-misbehaving-provider");
        if is_fresh(&bin) {
            return bin;
        }
        let release = profile_dir.file_name().is_some_and(|n| n == "release");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = std::process::Command::new(cargo);
        cmd.current_dir(workspace_root()).args([
            "build",
            "--quiet",
            "-p",
            "contextgraph-fixture-misbehaving",
            "--bin",
            "contextgraph-misbehaving-provider",
        ]);
        if release {
            cmd.arg("--release");
        }
        if let Some(target) = profile_dir.parent() {
            cmd.env("CARGO_TARGET_DIR", target);
        }
        let status = cmd.status().expect("cargo runs");
        assert!(status.success(), "building the misbehaving provider failed");
        assert!(bin.exists(), "{} missing after build", bin.display());
        bin
    })
}

/// Whether `bin` is newer than every source it is built from (the
/// misbehaving crate and the SDK it serves with), so the test can skip a
/// `cargo build` that would only wait for the shared target directory's lock.
fn is_fresh(bin: &Path) -> bool {
    let Ok(built) = bin.metadata().and_then(|m| m.modified()) else {
        return false;
    };
    let root = workspace_root().join("crates");
    [
        "contextgraph-fixture-misbehaving",
        "contextgraph-provider",
        "contextgraph-codec",
        "contextgraph-types",
    ]
    .iter()
    .all(|c| newest(&root.join(c)).is_some_and(|t| t <= built))
}

fn newest(dir: &Path) -> Option<std::time::SystemTime> {
    let mut newest = dir
        .join("Cargo.toml")
        .metadata()
        .and_then(|m| m.modified())
        .ok()?;
    let mut stack = vec![dir.join("src")];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).ok()?.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(t) = entry.metadata().and_then(|m| m.modified()) {
                newest = newest.max(t);
            }
        }
    }
    Some(newest)
}

/// The misbehaving provider in `mode`, announcing itself as `name`.
pub fn misbehaving(mode: &str, name: &str) -> StdioCommand {
    StdioCommand::new(misbehaving_binary()).args(["--mode", mode, "--name", name])
}

/// Stdio options with test-sized bounds.
pub fn stdio_options() -> StdioOptions {
    let mut connection = ConnectionOptions::default();
    connection.handshake_timeout = PATIENCE;
    StdioOptions {
        connection,
        respawn: RespawnPolicy {
            enabled: true,
            initial_backoff: Duration::from_millis(20),
            max_backoff: Duration::from_millis(200),
        },
        ..StdioOptions::default()
    }
}

/// A host with one misbehaving provider per `(mode, name)`.
pub async fn host_with(providers: &[(&str, &str)]) -> Host {
    let mut host = Host::new(HostOptions::default());
    for (mode, name) in providers {
        host.add_stdio(misbehaving(mode, name), stdio_options())
            .await
            .unwrap_or_else(|e| panic!("adding {mode}: {e}"));
    }
    host
}

/// A query the built-in corpus answers with several frames.
pub fn retry_query() -> ContextQuery {
    ContextQuery::new("how is the retry policy configured?", 5, 4000)
}
