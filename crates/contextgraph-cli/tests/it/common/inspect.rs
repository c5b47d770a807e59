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

/// The testkit's folder about a retry policy.
pub use contextgraph_testkit::docs_fixture::markdown_folder;

/// Lossy text of a byte stream.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
