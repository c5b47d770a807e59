//! `cgp mcp` with the official TypeScript MCP SDK as the client
//! (tests/node/startup_mcp.mjs), the SDK most agent clients are built on:
//! initialize answered while the index build is held (the
//! `CGP_TEST_HOLD_INDEX` hook), progress notifications received, and the
//! README's agent snippets run as written. The SDK is installed by
//! `.ci/run` into `target/node-mcp` (`npm install --prefix target/node-mcp
//! @modelcontextprotocol/sdk@1.32.2`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn sdk_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/node-mcp");
    dir.join("node_modules/@modelcontextprotocol/sdk/package.json")
        .exists()
        .then_some(dir)
}

/// Run one check of startup_mcp.mjs; under CI a missing SDK fails,
/// elsewhere it skips with a note.
fn run(check: &str, extra: &[&str]) {
    let Some(sdk) = sdk_dir() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "target/node-mcp is missing under CI: .ci/run must install the TypeScript MCP SDK there"
        );
        eprintln!("note: skipped: no TypeScript MCP SDK in target/node-mcp (npm install --prefix target/node-mcp @modelcontextprotocol/sdk@1.32.2)");
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/node/startup_mcp.mjs");
    let mut client = Command::new("node");
    client.arg(script).arg(&sdk);
    crate::mcp_startup::run_client(client, check, extra);
}

#[test]
fn typescript_sdk_initialize_before_the_index_exists_and_progress_reaches_it() {
    run("progress", &[]);
}

#[test]
fn typescript_sdk_runs_the_readme_agent_snippets_as_written() {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    run("argv", &[readme.to_str().unwrap()]);
}
