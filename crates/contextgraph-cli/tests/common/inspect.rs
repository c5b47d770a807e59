//! Fixtures of the `cgp inspect` tests: the provider binaries inspected
//! (built once per test process, with this test binary's profile and target
//! directory) and a folder of Markdown for the docs provider.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// `target/<profile>/`, with the docs and misbehaving providers built in it.
fn built() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test binary has a path");
        let dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("tests run from target/<profile>/deps")
            .to_path_buf();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .args([
                "build",
                "--quiet",
                "-p",
                "contextgraph-provider-docs",
                "-p",
                "contextgraph-provider-misbehaving",
                "--bins",
            ]);
        if dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        if let Some(target) = dir.parent() {
            cmd.env("CARGO_TARGET_DIR", target);
        }
        assert!(
            cmd.status().expect("cargo runs").success(),
            "building the providers failed"
        );
        dir
    })
}

fn binary(name: &str) -> PathBuf {
    let bin = built().join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(bin.is_file(), "{} missing after build", bin.display());
    bin
}

/// The docs provider binary, `contextgraph-provider-docs`.
pub fn docs_binary() -> PathBuf {
    binary("contextgraph-provider-docs")
}

/// The misbehaving provider binary.
pub fn misbehaving_binary() -> PathBuf {
    binary("contextgraph-misbehaving-provider")
}

/// `cgp` with `args`, colour off.
pub fn cgp<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_cgp"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run cgp")
}

/// A folder of Markdown about a retry policy.
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
        "# Retry policy\n\nRequests are retried with exponential backoff.\n\n## Backoff\n\nThe first delay is 100 ms and doubles after each attempt.\n\n## Timeouts\n\nEach attempt has a 30 second timeout.\n",
    );
    write(
        "guide/overview.md",
        "# Overview\n\nNetwork calls are retried; see [the retry policy](../retry.md).\n",
    );
    dir
}

/// Lossy text of a byte stream.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
