//! The fixture MCP server (`examples/mcp_fixture_server.rs`), built once
//! per test process with the calling test's profile and target directory.

use std::path::PathBuf;
use std::sync::OnceLock;

/// Path of the built fixture server.
pub fn fixture_server() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test binary has a path");
        // Tests run from target/<profile>/deps/.
        let profile_dir = exe
            .parent()
            .and_then(std::path::Path::parent)
            .expect("tests run from target/<profile>/deps")
            .to_path_buf();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = std::process::Command::new(cargo);
        cmd.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .args([
                "build",
                "--quiet",
                "-p",
                "contextgraph-mcp",
                "--example",
                "mcp_fixture_server",
            ]);
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        if let Some(target) = profile_dir.parent() {
            cmd.env("CARGO_TARGET_DIR", target);
        }
        let status = cmd.status().expect("cargo runs");
        assert!(status.success(), "building the fixture MCP server failed");
        let bin = profile_dir.join("examples").join(format!(
            "mcp_fixture_server{}",
            std::env::consts::EXE_SUFFIX
        ));
        assert!(bin.is_file(), "{} missing after build", bin.display());
        bin
    })
    .clone()
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
