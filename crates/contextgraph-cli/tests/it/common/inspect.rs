//! Fixtures of the `cgp inspect` tests: the providers inspected (the
//! misbehaving fixture's `[[bin]]` of this package, and `cgp serve docs`)
//! and a folder of Markdown for the docs provider.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::PathBuf;
use std::process::{Command, Output};

/// The misbehaving provider (this package's `cgp-fixture-misbehaving`
/// test-fixture binary).
#[cfg(feature = "test-fixtures")]
pub fn misbehaving_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cgp-fixture-misbehaving"))
}

/// The docs provider as a command line: `cgp serve docs`, followed by the
/// folder to serve.
pub fn docs_command() -> [std::ffi::OsString; 3] {
    [
        env!("CARGO_BIN_EXE_cgp").into(),
        "serve".into(),
        "docs".into(),
    ]
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
