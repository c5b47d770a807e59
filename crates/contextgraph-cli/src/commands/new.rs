//! `cgp new provider NAME --lang rust|python|typescript`: write a working
//! provider project, with a test that runs `cgp inspect stdio --strict`
//! against it, that passes out of the box.
//!
//! The project goes into a new directory `NAME` (under `--dir`, default the
//! current directory). An existing path is never touched: the directory is
//! created with `create_dir`, which fails when anything already exists
//! there, so a race with another writer cannot make `cgp` write into it
//! either. If writing fails half-way, the directory this command created is
//! removed again.
//!
//! The Python and TypeScript projects carry a copy of their SDK under
//! `vendor/` (standard library only, nothing to download); the Rust
//! project depends on `contextgraph-provider-sdk` (see [`rust_dependency`]).

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};

use super::new_templates::{self as t, File};
use super::{CommandError, UsageError};

/// Arguments of `cgp new`.
#[derive(Debug, Args)]
#[command(subcommand_required = true, arg_required_else_help = true)]
pub struct NewArgs {
    /// What to create.
    #[command(subcommand)]
    pub what: NewWhat,
}

/// What `cgp new` can create.
#[derive(Debug, Subcommand)]
pub enum NewWhat {
    /// A provider project that passes `cgp inspect stdio --strict` out of the box.
    #[command(
        after_help = "Examples:\n  cgp new provider team-notes --lang python\n  cgp new provider team-notes --lang typescript --dir ~/src\n  cgp new provider team-notes --lang rust --sdk ~/src/contextgraph\n\nThen, in the new directory: `cgp inspect stdio --strict -- python3 provider.py` (or `node provider.js`,\nor `cargo build` and `target/debug/NAME content`), and the project's own test does the same."
    )]
    Provider(NewProviderArgs),
}

/// The languages a provider project can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Lang {
    /// Rust, with `contextgraph-provider-sdk`.
    Rust,
    /// Python 3.9+, standard library only.
    Python,
    /// Node.js 18+ (ES modules with published types), no dependencies.
    Typescript,
}

/// Arguments of `cgp new provider`.
#[derive(Debug, Args)]
pub struct NewProviderArgs {
    /// The provider's name: lowercase letters, digits and single hyphens,
    /// starting with a letter (also the directory and package name).
    #[arg(value_name = "NAME")]
    pub name: String,

    /// The language of the project.
    #[arg(long, value_enum)]
    pub lang: Lang,

    /// Where to create the `NAME` directory (default: the current directory).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,

    /// Rust only: a contextgraph source checkout whose SDK crates the
    /// project depends on by path (default: the checkout this cgp was built
    /// from when it still exists, else the crates.io release).
    #[arg(long, value_name = "PATH")]
    pub sdk: Option<PathBuf>,
}

/// Why a project could not be created.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NewError {
    /// The name is not usable as a provider, directory and package name.
    #[error("invalid provider name {name:?}: {reason}; use lowercase letters, digits and single hyphens, starting with a letter (e.g. team-notes)")]
    InvalidName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Something already exists at the project path; it is left untouched.
    #[error("{} already exists; cgp new never writes into an existing path, choose another name or --dir", .0.display())]
    Exists(PathBuf),
    /// The directory to create the project in does not exist.
    #[error("--dir {} does not exist or is not a directory; create it first", .0.display())]
    NoParent(PathBuf),
    /// `--sdk` does not point at a contextgraph checkout.
    #[error("--sdk {} is not a contextgraph checkout (no crates/contextgraph-provider-sdk/Cargo.toml in it)", .0.display())]
    NotASdkCheckout(PathBuf),
    /// A file could not be written (the partly written project was removed).
    #[error("cannot write {}: {source}; the partly written project was removed", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Longest accepted name, in bytes (a package name and a directory name).
const MAX_NAME_LEN: usize = 64;

/// Check `name`: `[a-z][a-z0-9]*(-[a-z0-9]+)*`, at most 64 bytes. The same
/// string is a directory, a Cargo/npm/Python package name and the provider
/// name hosts key consent on, so it admits only what all of them accept.
pub fn validate_name(name: &str) -> Result<(), NewError> {
    let invalid = |reason| {
        Err(NewError::InvalidName {
            name: name.to_owned(),
            reason,
        })
    };
    if name.is_empty() {
        return invalid("it is empty");
    }
    if name.len() > MAX_NAME_LEN {
        return invalid("it is longer than 64 characters");
    }
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        return invalid("it must start with a lowercase letter");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return invalid("it may hold only lowercase letters, digits and hyphens");
    }
    if name.ends_with('-') || name.contains("--") {
        return invalid("hyphens must separate words (no trailing or doubled hyphen)");
    }
    if matches!(
        name,
        "test" | "tests" | "vendor" | "content" | "src" | "target"
    ) {
        return invalid("it is a name the project's own files use");
    }
    Ok(())
}

/// The `[dependencies]` lines of a Rust project that will live at
/// `project` (absolute): path dependencies into `sdk` when given (or the
/// checkout this binary was built from, when it still exists), otherwise
/// this cgp's version from crates.io.
///
/// A path is written relative to the project, so the project keeps
/// building when it and the checkout move together (a project inside the
/// checkout, or beside it), and never names the directory it was created
/// from; the comment above it says which checkout, and the registry lines
/// to use once the SDK is published.
pub fn rust_dependency(sdk: Option<&Path>, project: &Path) -> Result<String, NewError> {
    let checkout = match sdk {
        Some(dir) => {
            if !dir
                .join("crates/contextgraph-provider-sdk/Cargo.toml")
                .is_file()
            {
                return Err(NewError::NotASdkCheckout(dir.to_path_buf()));
            }
            Some(std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()))
        }
        None => {
            let built_from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
            built_from
                .join("crates/contextgraph-provider-sdk/Cargo.toml")
                .is_file()
                .then(|| std::fs::canonicalize(&built_from).unwrap_or(built_from))
        }
    };
    let v = env!("CARGO_PKG_VERSION");
    Ok(match checkout {
        Some(root) => {
            let relative = relative_path(project, &root);
            let path = |krate: &str| {
                toml_string(&relative.join("crates").join(krate).display().to_string())
            };
            format!(
                "# The SDK of the contextgraph checkout at {root}, by a path relative to this\n\
                 # project: it keeps building when both move together (`cgp new provider\n\
                 # --sdk DIR` writes one for another checkout). Once the SDK is on crates.io,\n\
                 # these two lines can be:\n\
                 #   contextgraph-provider-sdk = \"{v}\"\n\
                 #   contextgraph-types = \"{v}\"\n\
                 contextgraph-provider-sdk = {{ path = {} }}\ncontextgraph-types = {{ path = {} }}",
                path("contextgraph-provider-sdk"),
                path("contextgraph-types"),
                root = root.display()
            )
        }
        None => format!("contextgraph-provider-sdk = \"{v}\"\ncontextgraph-types = \"{v}\""),
    })
}

/// The path from the directory `from` to `to`, both absolute: `..` for
/// each component of `from` past their common prefix, then the rest of `to`.
fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for c in &to[common..] {
        out.push(c);
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Every file of a `lang` project named `name`: (relative path, contents).
pub fn project_files(
    name: &str,
    lang: Lang,
    sdk: Option<&Path>,
    parent: &Path,
) -> Result<Vec<(PathBuf, String)>, NewError> {
    let dependency = match lang {
        Lang::Rust => {
            let parent = std::fs::canonicalize(parent)
                .or_else(|_| std::path::absolute(parent))
                .unwrap_or_else(|_| parent.to_path_buf());
            rust_dependency(sdk, &parent.join(name))?
        }
        Lang::Python | Lang::Typescript => String::new(),
    };
    let fill = |text: &str| {
        text.replace("{{name}}", name)
            .replace("{{sdk_dependency}}", &dependency)
    };
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    let mut add = |prefix: &str, set: &[File], templated: bool| {
        for (path, text) in set {
            let body = if templated {
                fill(text)
            } else {
                (*text).to_owned()
            };
            files.push((Path::new(prefix).join(path), body));
        }
    };
    add("", &t::CONTENT, false);
    match lang {
        Lang::Rust => add("", &t::RUST, true),
        Lang::Python => {
            add("", &t::PYTHON, true);
            add("vendor/contextgraph_provider", &t::PYTHON_SDK, false);
        }
        Lang::Typescript => {
            add("", &t::TYPESCRIPT, true);
            add("vendor/contextgraph-provider", &t::TYPESCRIPT_SDK, false);
        }
    }
    Ok(files)
}

/// Create the project `parent/name`; its path.
pub fn create_project(
    parent: &Path,
    name: &str,
    lang: Lang,
    sdk: Option<&Path>,
) -> Result<PathBuf, NewError> {
    validate_name(name)?;
    if !parent.is_dir() {
        return Err(NewError::NoParent(parent.to_path_buf()));
    }
    let files = project_files(name, lang, sdk, parent)?;
    let root = parent.join(name);
    // `create_dir` (not `create_dir_all`) fails on anything already there,
    // including a dangling symlink: an existing path is never written into.
    if let Err(source) = std::fs::create_dir(&root) {
        return Err(match source.kind() {
            std::io::ErrorKind::AlreadyExists => NewError::Exists(root),
            _ => NewError::Write { path: root, source },
        });
    }
    for (rel, body) in &files {
        let path = root.join(rel);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, body));
        if let Err(source) = written {
            // Only what this command created is removed.
            let _ = std::fs::remove_dir_all(&root);
            return Err(NewError::Write { path, source });
        }
    }
    Ok(root)
}

/// Run `cgp new …`.
pub fn run(args: NewArgs) -> Result<(), CommandError> {
    let NewWhat::Provider(args) = args.what;
    if args.sdk.is_some() && args.lang != Lang::Rust {
        return Err(Box::new(UsageError(
            "--sdk applies to --lang rust only (Python and TypeScript projects carry their SDK)"
                .to_owned(),
        )));
    }
    let root = match create_project(&args.dir, &args.name, args.lang, args.sdk.as_deref()) {
        Ok(root) => root,
        // Bad argument values are usage errors (exit 2), like clap's own.
        Err(
            e @ (NewError::InvalidName { .. }
            | NewError::NoParent(_)
            | NewError::NotASdkCheckout(_)),
        ) => return Err(Box::new(UsageError(e.to_string()))),
        Err(e) => return Err(Box::new(e)),
    };
    let shown = root.display();
    let (certify, test) = match args.lang {
        Lang::Rust => (
            format!(
                "cargo build && cgp inspect stdio --strict -- target/debug/{} content",
                args.name
            ),
            "cargo test",
        ),
        Lang::Python => (
            "cgp inspect stdio --strict -- python3 provider.py".to_owned(),
            "python3 -m unittest discover -s tests",
        ),
        Lang::Typescript => (
            "cgp inspect stdio --strict -- node provider.js".to_owned(),
            "npm test",
        ),
    };
    eprintln!(
        "created {shown}\n\nnext:\n  cd {shown}\n  {certify}   # certify it\n  {test}   # the same, as the project's test (set CGP if cgp is not on PATH)"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_validated_with_a_reason() {
        for good in ["a", "team-notes", "notes2", "a-b-c"] {
            assert!(validate_name(good).is_ok(), "{good}");
        }
        for (bad, why) in [
            ("", "empty"),
            ("Notes", "lowercase letter"),
            ("2notes", "lowercase letter"),
            ("team_notes", "hyphens"),
            ("team notes", "hyphens"),
            ("../escape", "lowercase letter"),
            ("a/b", "hyphens"),
            ("notes-", "trailing"),
            ("a--b", "doubled"),
            ("vendor", "project's own files"),
        ] {
            let e = validate_name(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
        assert!(validate_name(&"a".repeat(65)).is_err());
    }

    #[test]
    fn an_existing_path_is_never_written_into() {
        let dir = tempfile::tempdir().unwrap();
        let taken = dir.path().join("taken");
        std::fs::create_dir(&taken).unwrap();
        std::fs::write(taken.join("keep.txt"), "mine").unwrap();
        let e = create_project(dir.path(), "taken", Lang::Python, None).unwrap_err();
        assert!(matches!(e, NewError::Exists(_)), "{e}");
        assert_eq!(std::fs::read_dir(&taken).unwrap().count(), 1);
        std::fs::write(dir.path().join("file"), "x").unwrap();
        assert!(matches!(
            create_project(dir.path(), "file", Lang::Rust, None).unwrap_err(),
            NewError::Exists(_)
        ));
        assert!(matches!(
            create_project(&dir.path().join("missing"), "x", Lang::Rust, None).unwrap_err(),
            NewError::NoParent(_)
        ));
    }

    #[test]
    fn each_language_gets_a_provider_a_conformance_test_and_content() {
        let dir = tempfile::tempdir().unwrap();
        for (lang, name, expect) in [
            (
                Lang::Rust,
                "r-notes",
                ["Cargo.toml", "src/main.rs", "tests/conformance.rs"],
            ),
            (
                Lang::Python,
                "p-notes",
                [
                    "provider.py",
                    "tests/test_conformance.py",
                    "vendor/contextgraph_provider/stdio.py",
                ],
            ),
            (
                Lang::Typescript,
                "t-notes",
                [
                    "provider.js",
                    "test/conformance.test.js",
                    "vendor/contextgraph-provider/index.d.ts",
                ],
            ),
        ] {
            let root = create_project(dir.path(), name, lang, None).unwrap();
            for file in expect
                .iter()
                .chain(&["content/getting-started.md", "README.md"])
            {
                let text = std::fs::read_to_string(root.join(file)).unwrap();
                assert!(!text.contains("{{"), "{file} has an unfilled placeholder");
            }
            let all: String = [
                "Cargo.toml",
                "provider.py",
                "provider.js",
                "package.json",
                "pyproject.toml",
            ]
            .iter()
            .filter_map(|f| std::fs::read_to_string(root.join(f)).ok())
            .collect();
            assert!(all.contains(name), "{name} is not named in its project");
        }
    }

    #[test]
    fn sdk_must_be_a_checkout_and_paths_are_toml_strings() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            rust_dependency(Some(dir.path()), Path::new("/p")).unwrap_err(),
            NewError::NotASdkCheckout(_)
        ));
        assert_eq!(toml_string("C:\\a \"b\""), "\"C:\\\\a \\\"b\\\"\"");
    }

    #[test]
    fn the_sdk_path_is_relative_to_the_project_so_moving_both_keeps_it() {
        assert_eq!(
            relative_path(
                Path::new("/src/contextgraph/target/x"),
                Path::new("/src/contextgraph")
            ),
            PathBuf::from("../..")
        );
        assert_eq!(
            relative_path(Path::new("/home/me/notes"), Path::new("/src/cg")),
            PathBuf::from("../../../src/cg")
        );
        assert_eq!(
            relative_path(Path::new("/a"), Path::new("/a")),
            PathBuf::from(".")
        );
        // A real checkout (this one): the lines name it by a relative path only.
        let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let checkout = std::fs::canonicalize(checkout).unwrap();
        let project = checkout.join("target/scaffolds/team-notes");
        let lines = rust_dependency(Some(&checkout), &project).unwrap();
        assert!(
            lines.contains("contextgraph-provider-sdk = { path = \"../../../crates/contextgraph-provider-sdk\" }"),
            "{lines}"
        );
        let code: Vec<&str> = lines.lines().filter(|l| !l.starts_with('#')).collect();
        assert!(
            code.iter()
                .all(|l| !l.contains(&*checkout.to_string_lossy())),
            "no absolute path outside the comment: {lines}"
        );
    }
}
