//! Replaying the fuzz inputs kept in the repository (`fuzz/` at its root)
//! through a fuzz target's body on the stable toolchain.
//!
//! Every target of `fuzz/` is a thin libFuzzer program around one
//! `#[doc(hidden)] pub fn` of the crate it exercises. That crate's tests call
//! [`replay`] with the same function, so `cargo test` runs every seed
//! (`fuzz/seeds/<target>/`) and every crash ever found
//! (`fuzz/regressions/<target>/`) without nightly: a crash stays fixed once
//! it is fixed, and a target that stops compiling or starts failing on its
//! own seeds is noticed by the ordinary test suite.

use std::path::{Path, PathBuf};

/// The repository's `fuzz/` directory.
pub fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The kept inputs of `target`, seeds first, each with its path, sorted by
/// name within each directory. Panics when the target has no seed: every
/// target keeps at least one, so none means a wrong name or a broken checkout.
pub fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for kind in ["seeds", "regressions"] {
        let dir = fuzz_dir().join(kind).join(target);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            assert!(kind == "regressions", "no seed directory {}", dir.display());
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "README.md"))
            .collect();
        files.sort();
        assert!(
            kind == "regressions" || !files.is_empty(),
            "no seed in {}",
            dir.display()
        );
        for path in files {
            let bytes = std::fs::read(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            out.push((path, bytes));
        }
    }
    out
}

/// Run every kept input of `target` through `body`, each on its own (a
/// failing input does not hide the next), and fail naming every input that
/// panicked, with its message. A regression input's file name starts with
/// the finding it reproduces (e.g. `N1-…`), so the failure says which
/// finding is open again.
pub fn replay(target: &str, body: impl Fn(&[u8])) {
    let mut failures = Vec::new();
    let inputs = inputs(target);
    for (path, bytes) in &inputs {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(bytes)));
        if let Err(panic) = outcome {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)")
                .to_owned();
            let name = path.strip_prefix(fuzz_dir()).unwrap_or(path);
            failures.push(format!("fuzz/{}: {message}", name.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "fuzz target `{target}`: {} of {} kept inputs fail (a file name starting \
         with N<number> is the issue finding it reproduces; see fuzz/README.md):\n  {}",
        failures.len(),
        inputs.len(),
        failures.join("\n  ")
    );
}
