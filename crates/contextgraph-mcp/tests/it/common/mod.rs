//! The fixture MCP server: this package's `mcp_fixture_server` binary
//! (the `mcp_fixture_server` example's code, built by cargo for these tests
//! through the `test-fixture` feature), so no test runs a nested `cargo build`.

use std::path::PathBuf;

/// Path of the built fixture server.
pub fn fixture_server() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mcp_fixture_server"))
}

/// A folder with a few notes for the fixture to serve.
pub fn notes_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("retry.md"),
        "# Retry policy\n\nThe client retries three times with exponential backoff.\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("config.rs"),
        "pub fn load_config(path: &str) -> Config {\n    Config::parse(path)\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("logo.png"),
        [0x89u8, 0x50, 0x4e, 0x47, 0xff, 0xfe],
    )
    .unwrap();
    dir
}
