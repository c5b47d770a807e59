//! The provider binaries tests spawn.

use std::path::PathBuf;
use std::sync::OnceLock;

/// The workspace's provider binaries tests spawn: the docs provider and the
/// misbehaving provider. Built once per test process with the calling test
/// binary's profile and target directory, so a test never spawns a stale
/// binary or one from another profile.
pub fn provider_binary(name: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test binary has a path");
        // Tests run from target/<profile>/deps/.
        let dir = exe
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
                "contextgraph-provider-docs",
                "-p",
                "contextgraph-fixture-misbehaving",
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
    });
    let bin = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(bin.is_file(), "{} missing after build", bin.display());
    bin
}
