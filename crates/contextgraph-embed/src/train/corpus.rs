//! Which packages and files a training run may read: declared licences
//! (only permissive ones, so the derived model may be shipped), the
//! benchmark projects kept out by name, and the source files of a package.
//!
//! Why in the library and not in the trainer example: every rule here keeps
//! something out of the shipped model (a licence that does not allow
//! shipping a derived model, a project the benchmark scores the model on,
//! test data), and each rule has a test that fails when it is broken.

use std::path::{Path, PathBuf};

/// Licences whose terms allow redistributing a statistical model derived
/// from the code (SPDX identifiers, compared without regard to case).
pub const PERMISSIVE: &[&str] = &[
    "MIT",
    "MIT-0",
    "Apache-2.0",
    "BSD-2-Clause",
    "BSD-3-Clause",
    "ISC",
    "Zlib",
    "Unlicense",
    "BSL-1.0",
    "0BSD",
    "CC0-1.0",
    "Unicode-3.0",
    "Unicode-DFS-2016",
    "Apache-2.0 WITH LLVM-exception",
    "PSF-2.0",
];

/// Source files read, by extension: code in the 19 languages the workspace
/// provider parses, and Markdown for prose about code. (`.sc`, `.ru`,
/// `.csx`, `.bats` and the like are left out: rare, or test scripts.)
pub const EXTENSIONS: &[&str] = &[
    "rs", "md", "py", "js", "ts", "go", "java", "c", "h", "cc", "cpp", "hpp", // the first 8
    "rb", "rake", "php", "cs", "kt", "kts", "scala", "swift", "ex", "exs", "sh", "bash", "hs",
    "lua", "zig",
];

/// Files larger than this are generated tables or bundles, not prose+code.
pub const MAX_FILE_BYTES: u64 = 200 * 1024;

/// Most files read from one package (in sorted path order), so that one
/// very large source package (a compiler, a framework) does not outweigh a
/// language's other packages. No package of the crates/PyPI/npm part
/// reaches it (the largest has 1,963 files).
pub const MAX_PACKAGE_FILES: usize = 2_000;

/// Ecosystem prefixes stripped from a package name before it is compared
/// with the benchmark's project names: Debian names a Ruby gem
/// `ruby-NAME`, a PHP library `php-NAME`, a Haskell package `haskell-NAME`.
const ECOSYSTEM_PREFIXES: &[&str] = &[
    "ruby-", "php-", "lua-", "haskell-", "libghc-", "elixir-", "erlang-", "node-", "python3-",
    "python-", "golang-", "rust-", "scala-", "kotlin-", "swift-", "dotnet-", "mono-", "libjs-",
];

/// A package name reduced for comparison with an excluded name: lowercase,
/// one ecosystem prefix dropped (`ruby-rack` → `rack`), and every character
/// that is not a letter or digit dropped (`telescope.nvim` and
/// `telescope-nvim` are the same project; `@reduxjs/toolkit` and
/// `reduxjs-toolkit` too).
pub fn project_key(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    let lower = lower.trim_start_matches('@');
    let bare = ECOSYSTEM_PREFIXES
        .iter()
        .find_map(|p| lower.strip_prefix(p).filter(|rest| !rest.is_empty()))
        .unwrap_or(lower);
    bare.chars().filter(char::is_ascii_alphanumeric).collect()
}

/// Whether `package` is one of the excluded projects (`excluded` holds
/// [`project_key`]s): either its name as is or with its prefix dropped.
pub fn is_excluded(package: &str, excluded: &std::collections::BTreeSet<String>) -> bool {
    let whole: String = package
        .to_ascii_lowercase()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    excluded.contains(&project_key(package)) || excluded.contains(&whole)
}

/// Splits `name-1.2.3` into `("name", "1.2.3")` at the last `-` followed
/// by a digit whose version part holds a `.`, else at the last `-` followed
/// by a digit. Why the dot: a Debian source directory is
/// `NAME-UPSTREAM-REVISION` (`haskell-servant-0.19-1`), and splitting at the
/// revision would leave `haskell-servant-0.19` as the name, which no
/// exclusion or deduplication by name would match.
pub fn split_version(dir: &str) -> (&str, &str) {
    let cuts: Vec<usize> = dir
        .char_indices()
        .filter(|&(i, c)| c == '-' && dir[i + 1..].starts_with(|d: char| d.is_ascii_digit()))
        .map(|(i, _)| i)
        .collect();
    let cut = cuts
        .iter()
        .rev()
        .find(|&&i| dir[i + 1..].contains('.'))
        .or(cuts.last());
    match cut {
        Some(&i) => (&dir[..i], &dir[i + 1..]),
        None => (dir, ""),
    }
}

/// Numeric parts of a version, for ordering `1.10.0` after `1.9.2`.
pub fn version_key(version: &str) -> Vec<u64> {
    version
        .split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
        .map(|p| p.parse().unwrap_or(0))
        .collect()
}

/// The declared licence of a package directory, from `Cargo.toml`,
/// `package.json`, Python metadata or a Debian source package's
/// `debian/copyright`.
pub fn declared_licence(dir: &Path) -> Option<String> {
    if let Ok(text) = std::fs::read_to_string(dir.join("Cargo.toml")) {
        return text.lines().find_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix("license")?.trim_start().strip_prefix('=')?;
            Some(rest.trim().trim_matches('"').to_string())
        });
    }
    // A Debian source package says its licence in debian/copyright, which
    // the Debian maintainers checked; its own manifest (a package.json in
    // an npm-built tree) may not be at the top.
    if let Ok(text) = std::fs::read_to_string(dir.join("debian/copyright")) {
        return debian_licence(&text);
    }
    for manifest in ["package.json", "package/package.json"] {
        if let Ok(text) = std::fs::read_to_string(dir.join(manifest)) {
            let value: serde_json::Value = serde_json::from_str(&text).ok()?;
            return value.get("license")?.as_str().map(str::to_string);
        }
    }
    python_metadata(dir).and_then(|text| python_licence(&text))
}

/// The licence of a package's own files from a machine-readable
/// `debian/copyright` (DEP-5): the `License:` of the paragraph whose
/// `Files:` is `*`, Debian's names put in SPDX form (`Expat` is MIT, `or`
/// and `and` upper-cased). `None` for a free-form copyright file, which
/// says nothing machine-readable.
pub fn debian_licence(text: &str) -> Option<String> {
    if !text.lines().next()?.starts_with("Format:") {
        return None;
    }
    let paragraph = text.split("\n\n").find(|p| {
        p.lines().any(|l| {
            l.strip_prefix("Files:")
                .is_some_and(|f| f.split_whitespace().next() == Some("*"))
        })
    })?;
    let licence = paragraph
        .lines()
        .find_map(|l| l.strip_prefix("License:"))?
        .trim();
    let spdx: Vec<String> = licence
        .split_whitespace()
        .map(|w| match w.to_ascii_lowercase().as_str() {
            "or" => "OR".to_string(),
            "and" => "AND".to_string(),
            "expat" | "mit/x11" | "x11" => "MIT".to_string(),
            "apache-2" | "apache" => "Apache-2.0".to_string(),
            "bsd-3" => "BSD-3-Clause".to_string(),
            "bsd-2" => "BSD-2-Clause".to_string(),
            // Cabal's name for the 3-clause licence.
            "bsd3" => "BSD-3-Clause".to_string(),
            _ => w.to_string(),
        })
        .collect();
    (!spdx.is_empty()).then(|| spdx.join(" "))
}

/// A Python package's core metadata: `PKG-INFO` of an sdist, or
/// `*.dist-info/METADATA` of an unpacked wheel.
fn python_metadata(dir: &Path) -> Option<String> {
    if let Ok(text) = std::fs::read_to_string(dir.join("PKG-INFO")) {
        return Some(text);
    }
    let mut infos: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "dist-info"))
        .collect();
    infos.sort();
    std::fs::read_to_string(infos.first()?.join("METADATA")).ok()
}

/// The licence from Python core metadata: `License-Expression`, else the
/// trove classifiers, else a short `License` field (long ones are the
/// licence text itself, which says nothing machine-readable).
pub fn python_licence(text: &str) -> Option<String> {
    let headers = text.split("\n\n").next().unwrap_or(text);
    if let Some(expr) = headers
        .lines()
        .find_map(|l| l.strip_prefix("License-Expression:"))
    {
        return Some(expr.trim().to_string());
    }
    let classified: Vec<&str> = headers
        .lines()
        .filter_map(|l| l.strip_prefix("Classifier: License :: OSI Approved :: "))
        .map(|c| match c.trim() {
            "MIT License" => "MIT",
            "BSD License" => "BSD-3-Clause",
            "Apache Software License" => "Apache-2.0",
            "ISC License (ISCL)" => "ISC",
            "Python Software Foundation License" => "PSF-2.0",
            other => other,
        })
        .collect();
    if !classified.is_empty() {
        return Some(classified.join(" OR "));
    }
    headers
        .lines()
        .find_map(|l| l.strip_prefix("License:"))
        .map(str::trim)
        .filter(|v| !v.is_empty() && v.len() < 40)
        .map(str::to_string)
}

/// Whether an SPDX expression lets us redistribute a derived model: every
/// licence of an `AND`, or at least one of an `OR`, is permissive.
pub fn is_permissive(expr: &str) -> bool {
    let normalized = expr.replace(['(', ')'], " ").replace('/', " OR ");
    let known = |id: &str| {
        PERMISSIVE.iter().any(|p| p.eq_ignore_ascii_case(id))
            || matches!(
                id,
                "BSD" | "Apache 2.0" | "Apache License 2.0" | "BSD-3" | "new BSD"
            )
    };
    if normalized.contains(" AND ") {
        return normalized
            .split(" AND ")
            .all(|part| part.split(" OR ").any(|id| known(id.trim())));
    }
    normalized.split(" OR ").any(|id| known(id.trim()))
}

/// Directories left out: build output, dependencies, packaging, and tests,
/// fixtures, benches and locale tables, whose literals (`asdf`, `1234`,
/// month names in forty languages) would teach the model that test data is
/// related to what it tests.
pub fn is_skipped_dir(name: &str) -> bool {
    matches!(
        name,
        "target"
            | ".git"
            | ".pc"
            | "debian"
            | "node_modules"
            | "vendor"
            | "generated"
            | "dist-cjs"
            | "test"
            | "tests"
            | "Tests"
            | "testing"
            | "testdata"
            | "test_data"
            | "test-suite"
            | "testsuite"
            | "__tests__"
            | "spec"
            | "specs"
            | "fixtures"
            | "benches"
            | "benchmarks"
            | "locale"
            | "locales"
            | "i18n"
            | "data"
            | "sample_data"
            | "datasets"
    )
}

/// Test files by their name conventions in the corpus' languages
/// (`test_x.py`, `x_test.go`, `x.spec.ts`, `x_spec.rb`, `XTest.kt`,
/// `XTests.cs`, `XSpec.scala`, `XSuite.scala`).
pub fn is_test_file(name: &str) -> bool {
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    name.starts_with("test_")
        || name.contains("_test.")
        || name.contains(".test.")
        || name.contains(".spec.")
        || name.contains("_spec.")
        || name.contains("_tests.")
        || name == "tests.rs"
        || name == "conftest.py"
        || ["Test", "Tests", "Spec", "Suite"]
            .iter()
            .any(|s| stem.len() > s.len() && stem.ends_with(s))
}

/// Whether a file without a known extension is a shell script: its first
/// line is a `#!` naming `sh` or `bash` (rbenv's `libexec/rbenv-*`).
pub fn is_shell_script(text: &str) -> bool {
    let first = text.lines().next().unwrap_or("");
    first.starts_with("#!")
        && first
            .split(|c: char| c == '/' || c.is_whitespace())
            .any(|w| w == "sh" || w == "bash")
}

/// Reads a package's source files in sorted path order, at most
/// [`MAX_PACKAGE_FILES`].
pub fn package_files(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    let start = out.len();
    collect_files(dir, out, start + MAX_PACKAGE_FILES);
}

fn collect_files(dir: &Path, out: &mut Vec<(PathBuf, String)>, cap: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if out.len() >= cap {
            return;
        }
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_dir() {
            if !is_skipped_dir(&name) {
                collect_files(&path, out, cap);
            }
            continue;
        }
        let ext = path.extension().and_then(|e| e.to_str());
        let known = ext.is_some_and(|e| EXTENSIONS.contains(&e));
        if (ext.is_some() && !known)
            || meta.len() > MAX_FILE_BYTES
            || name.contains(".min.")
            || is_test_file(&name)
        {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if !known && !is_shell_script(&text) {
            continue;
        }
        let lines = text.lines().count().max(1);
        if text.len() / lines > 200 {
            continue; // minified or data, not code
        }
        out.push((path, text));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn debian_copyright_gives_the_licence_of_the_packages_own_files() {
        let text = "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\
                    Upstream-Name: thor\n\n\
                    Files: debian/*\nCopyright: 2020 someone\nLicense: GPL-2+\n\n\
                    Files: *\nCopyright: 2008 Yehuda Katz\nLicense: Expat\n\n\
                    License: Expat\n Permission is hereby granted...\n";
        assert_eq!(debian_licence(text).as_deref(), Some("MIT"));
        let ruby = "Format: x\n\nFiles: * lib/*\nLicense: Ruby or BSD-2-clause\n";
        let got = debian_licence(ruby).expect("a licence");
        assert_eq!(got, "Ruby OR BSD-2-clause");
        assert!(is_permissive(&got), "one permissive alternative is enough");
        let cabal = "Format: x\n\nFiles: *\nLicense: BSD3\n";
        assert_eq!(debian_licence(cabal).as_deref(), Some("BSD-3-Clause"));
        let gpl = "Format: x\n\nFiles: *\nLicense: GPL-2+\n";
        assert!(!is_permissive(&debian_licence(gpl).expect("a licence")));
        assert_eq!(
            debian_licence("This package was debianized by ...\nLicense: MIT\n"),
            None,
            "free-form copyright files are not read"
        );
    }

    #[test]
    fn excluded_projects_match_across_ecosystem_prefixes_and_punctuation() {
        let excluded: BTreeSet<String> = ["rack", "telescope.nvim", "laravel-framework", "lua"]
            .iter()
            .map(|n| project_key(n))
            .collect();
        assert!(is_excluded("ruby-rack", &excluded));
        assert!(is_excluded("rack", &excluded));
        assert!(is_excluded("telescope-nvim", &excluded));
        assert!(is_excluded("php-laravel-framework", &excluded));
        assert!(is_excluded("lua", &excluded));
        assert!(
            !is_excluded("ruby-rack-test", &excluded),
            "a name, not a prefix"
        );
        assert!(!is_excluded("lua-penlight", &excluded));
        assert!(!is_excluded("ruby-thor", &excluded));
    }

    #[test]
    fn test_files_of_the_new_languages_are_recognised() {
        for name in [
            "parser_spec.rb",
            "ClientTest.kt",
            "ClientTests.cs",
            "DecoderSpec.scala",
            "CodecSuite.scala",
            "router_test.exs",
            "test_x.py",
        ] {
            assert!(is_test_file(name), "{name}");
        }
        for name in ["Test.kt", "latest.rb", "Request.cs", "inspect.lua"] {
            assert!(!is_test_file(name), "{name}");
        }
        assert!(is_skipped_dir("spec") && is_skipped_dir("debian"));
    }

    #[test]
    fn extensionless_files_are_read_only_when_they_are_shell_scripts() {
        let dir = tempfile::tempdir().expect("temp dir");
        let write = |name: &str, text: &str| {
            std::fs::write(dir.path().join(name), text).expect("write");
        };
        write(
            "rbenv-init",
            "#!/usr/bin/env bash\n# Prints the init script.\necho x\n",
        );
        write("plain-sh", "#!/bin/sh\necho x\n");
        write("README", "Some text\n");
        write("tool.pl", "#!/usr/bin/perl\nprint 1;\n");
        write("lib.lua", "local M = {}\nreturn M\n");
        write("thing_spec.lua", "describe('x', function() end)\n");
        let mut out = Vec::new();
        package_files(dir.path(), &mut out);
        let names: Vec<String> = out
            .iter()
            .filter_map(|(p, _)| p.file_name().map(|n| n.to_string_lossy().to_string()))
            .collect();
        assert_eq!(names, ["lib.lua", "plain-sh", "rbenv-init"]);
    }

    #[test]
    fn versions_split_at_the_last_dash_before_a_digit() {
        assert_eq!(
            split_version("ruby-rest-client-2.1.0"),
            ("ruby-rest-client", "2.1.0")
        );
        assert_eq!(split_version("lua5.4"), ("lua5.4", ""));
        // Debian source trees keep their revision after the upstream version.
        assert_eq!(
            split_version("haskell-servant-0.19-1"),
            ("haskell-servant", "0.19-1")
        );
        assert_eq!(
            split_version("symfony-5.4.53+dfsg-0+deb12u1"),
            ("symfony", "5.4.53+dfsg-0+deb12u1")
        );
        assert_eq!(
            split_version("lua-cliargs-3.0-2-5"),
            ("lua-cliargs", "3.0-2-5")
        );
        assert_eq!(split_version("utf-8-1.0.0"), ("utf-8", "1.0.0"));
        assert_eq!(split_version("tool-20230101"), ("tool", "20230101"));
        assert!(version_key("1.10.0") > version_key("1.9.2"));
    }
}
