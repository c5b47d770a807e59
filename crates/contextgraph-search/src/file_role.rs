//! What a file is *for*, judged by its path: implementation code, tests,
//! examples, vendored or generated code, documentation, a changelog, a
//! licence, a lockfile or configuration.
//!
//! The ranking layer ([`crate::rerank`]) uses the role to keep supporting
//! files from crowding out the implementation when a goal is about code: a
//! README or a test repeats the words of what it describes, so on words
//! alone it often outscores the code itself. A goal that names the role
//! ("the changelog", "an example of", "tests for") lifts the demotion: see
//! [`GoalRoles`].

use crate::lang::Language;

/// The role of a file in its project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileRole {
    /// Implementation code: what code goals are about.
    Code,
    /// Tests, benchmarks, fixtures, test data.
    Test,
    /// Examples, demos, samples, tutorials written as code.
    Example,
    /// Vendored, third-party, generated or minified code, compatibility
    /// shims and legacy copies: present, but rarely the answer.
    Vendored,
    /// Type-declaration stubs and re-export modules (`.d.ts`, `.pyi`,
    /// `__init__.py`): they name everything and implement nothing.
    Stub,
    /// Prose documentation: READMEs, guides, Markdown and text files.
    Docs,
    /// Changelogs, release notes, news, history files.
    Changelog,
    /// Licence, copyright and notice files.
    Licence,
    /// Lockfiles and checksum lists (`Cargo.lock`, `package-lock.json`, `go.sum`).
    Lockfile,
    /// Manifests, build files and configuration (`Cargo.toml`, YAML, JSON, Makefiles).
    Config,
}

/// Directory names that hold tests.
const TEST_DIRS: &[&str] = &[
    "tests",
    "test",
    "testing",
    "testdata",
    "test_data",
    "fixtures",
    "__tests__",
    "__mocks__",
    "spec",
    "specs",
    "benches",
    "bench",
    "benchmark",
    "benchmarks",
];

/// Directory names that hold examples.
const EXAMPLE_DIRS: &[&str] = &[
    "examples",
    "example",
    "demo",
    "demos",
    "samples",
    "sample",
    "tutorial",
    "tutorials",
];

/// Directory names that hold documentation.
const DOC_DIRS: &[&str] = &[
    "doc",
    "docs",
    "documentation",
    "man",
    "manual",
    "guide",
    "guides",
];

/// Directory names that hold code the project did not write, or keeps only
/// for compatibility.
const VENDORED_DIRS: &[&str] = &[
    "vendor",
    "vendored",
    "third_party",
    "thirdparty",
    "third-party",
    "external",
    "node_modules",
    "bower_components",
    "generated",
    "gen",
    "compat",
    "legacy",
    "deprecated",
    "dist",
    "build",
];

/// File stems (lowercased, before the first `.`) of changelogs.
const CHANGELOG_STEMS: &[&str] = &[
    "changelog",
    "changes",
    "history",
    "news",
    "releases",
    "release-notes",
    "release_notes",
    "releasenotes",
    "breaking-changes",
    "breaking_changes",
    "upgrading",
    "migration",
];

/// File stems of licence and notice files.
const LICENCE_STEMS: &[&str] = &[
    "license",
    "licence",
    "copying",
    "notice",
    "authors",
    "copyright",
    "patents",
];

/// Whole file names of lockfiles and checksum lists.
const LOCKFILES: &[&str] = &[
    "cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "poetry.lock",
    "pipfile.lock",
    "uv.lock",
    "go.sum",
    "gemfile.lock",
    "composer.lock",
    "flake.lock",
];

/// Classify `rel_path` (`/`-separated, relative to the root), whose chunks
/// were parsed as `language`.
pub fn file_role(rel_path: &str, language: Language) -> FileRole {
    let lower = rel_path.to_ascii_lowercase();
    let (dirs, file) = match lower.rsplit_once('/') {
        Some((d, f)) => (d, f),
        None => ("", lower.as_str()),
    };
    let stem = file.split('.').next().unwrap_or(file);
    if LOCKFILES.contains(&file) {
        return FileRole::Lockfile;
    }
    if LICENCE_STEMS
        .iter()
        .any(|s| stem == *s || stem.starts_with(&format!("{s}-")))
    {
        return FileRole::Licence;
    }
    if CHANGELOG_STEMS.contains(&stem) {
        return FileRole::Changelog;
    }
    let dir_parts = || dirs.split('/').filter(|p| !p.is_empty());
    let is_code = !matches!(
        language,
        Language::Markdown | Language::Text | Language::Other
    );
    if !is_code {
        match language {
            Language::Markdown | Language::Text => return FileRole::Docs,
            _ if is_template_file(file) => return FileRole::Example,
            _ if is_docs_file(file) => return FileRole::Docs,
            // Manuals kept as data (`manual.yml`) or markup under a docs folder.
            _ if dir_parts().any(|p| DOC_DIRS.contains(&p)) => return FileRole::Docs,
            _ if dir_parts().any(|p| p == "debian") => return FileRole::Config,
            _ if is_config_file(file) => return FileRole::Config,
            // Source in a language we do not parse (shell, Lua, Ruby …):
            // judged by its directories like parsed code.
            _ => {}
        }
    }
    if dir_parts().any(|p| VENDORED_DIRS.contains(&p)) || is_generated_name(file) {
        return FileRole::Vendored;
    }
    if dir_parts().any(|p| TEST_DIRS.contains(&p)) || is_test_name(file, stem) {
        return FileRole::Test;
    }
    if dir_parts().any(|p| EXAMPLE_DIRS.contains(&p)) {
        return FileRole::Example;
    }
    if file.ends_with(".d.ts")
        || file.ends_with(".d.mts")
        || file.ends_with(".d.cts")
        || file.ends_with(".pyi")
        || file == "__init__.py"
    {
        return FileRole::Stub;
    }
    FileRole::Code
}

/// Templates a generator fills in (Rails' `Gemfile.tt`, Laravel's
/// `*.stub`, `*.tmpl`, `*.mustache` …): text shaped like the code it will
/// produce, repeating its words, but not the code that does the work (the
/// generator is). They rank as examples do, unless the goal asks for
/// templates.
fn is_template_file(file: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        ".tt",
        ".stub",
        ".tmpl",
        ".tpl",
        ".mustache",
        ".hbs",
        ".handlebars",
        ".j2",
        ".jinja",
        ".jinja2",
        ".liquid",
        ".ejs",
    ];
    EXTENSIONS.iter().any(|e| file.ends_with(e))
}

/// Non-code, non-Markdown files that are still prose (reStructuredText,
/// AsciiDoc, man pages) when they were not recognised as `Text`.
fn is_docs_file(file: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        ".rst",
        ".adoc",
        ".asciidoc",
        ".txt",
        ".texi",
        ".pod",
        ".html",
        ".htm",
        ".xhtml",
        ".man",
        ".mdx",
        ".org",
        ".prebuilt",
    ];
    // Man pages: `jq.1`, `tmux.1`, `ls.1.in`.
    let man_page = file
        .split('.')
        .skip(1)
        .any(|part| part.len() == 1 && part.as_bytes()[0].is_ascii_digit());
    man_page || EXTENSIONS.iter().any(|e| file.ends_with(e))
}

/// Manifests, build files and data formats.
fn is_config_file(file: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        ".toml",
        ".json",
        ".yaml",
        ".yml",
        ".ini",
        ".cfg",
        ".conf",
        ".xml",
        ".properties",
        ".gradle",
        ".cmake",
        ".lock",
        ".mod",
        ".sum",
        ".editorconfig",
        ".gitignore",
        ".gitattributes",
        ".npmignore",
        ".in",
        ".am",
        ".ac",
        ".m4",
        ".mk",
        ".pc",
        ".plist",
    ];
    const NAMES: &[&str] = &[
        "makefile",
        "gnumakefile",
        "dockerfile",
        "cmakelists.txt",
        "meson.build",
        "build",
        "build.bazel",
        "workspace",
        "justfile",
        "rakefile",
        "gemfile",
        "pipfile",
        "setup.cfg",
        "tox.ini",
        "configure",
    ];
    NAMES.contains(&file) || EXTENSIONS.iter().any(|e| file.ends_with(e)) || file.starts_with('.')
}

/// Test file names: `test_*.py`, `*_test.go`, `*.spec.ts`, `FooTest.java`.
fn is_test_name(file: &str, stem: &str) -> bool {
    stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || stem.ends_with("_spec")
        || stem == "conftest"
        || file.contains(".test.")
        || file.contains(".spec.")
        || (file.ends_with(".java") && (stem.ends_with("test") || stem.ends_with("tests")))
}

/// Generated or minified file names.
fn is_generated_name(file: &str) -> bool {
    file.ends_with(".min.js")
        || file.ends_with(".min.mjs")
        || file.ends_with(".pb.go")
        || file.ends_with("_pb2.py")
        || file.ends_with(".pb.h")
        || file.ends_with(".pb.cc")
        || file.contains("_generated.")
        || file.contains(".generated.")
        || file.starts_with("zz_generated")
        || file.ends_with(".bundle.js")
}

/// The roles a goal asks for by name, lifting their demotion.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GoalRoles {
    /// "test", "tests", "bench", "fixture" …
    pub tests: bool,
    /// "example", "demo", "sample", "tutorial" …
    pub examples: bool,
    /// "readme", "docs", "documentation", "guide", "install" …
    pub docs: bool,
    /// "changelog", "release", "breaking", "changed", "version" …
    pub changelog: bool,
    /// "license", "licence", "copyright" …
    pub licence: bool,
    /// "config", "configuration", "manifest", "dependency", "build" …
    pub config: bool,
    /// "vendored", "generated", "legacy", "compat" …
    pub vendored: bool,
}

/// Goal words naming each role (compared with the goal's lowercase words;
/// a trailing `s` is ignored on both sides).
const TEST_WORDS: &[&str] = &[
    "test",
    "testing",
    "unittest",
    "bench",
    "benchmark",
    "fixture",
    "spec",
    "mock",
];
const EXAMPLE_WORDS: &[&str] = &["example", "demo", "sample", "tutorial", "template"];
const DOC_WORDS: &[&str] = &[
    "readme",
    "doc",
    "documentation",
    "documented",
    "guide",
    "manual",
    "install",
    "installation",
    "faq",
    "docstring",
];
const CHANGELOG_WORDS: &[&str] = &[
    "changelog",
    "release",
    "released",
    "breaking",
    "history",
    "news",
    "deprecated",
    "deprecation",
    "migration",
    "migrate",
    "upgrade",
    "upgrading",
];
const LICENCE_WORDS: &[&str] = &["license", "licence", "copyright", "licensed", "licensing"];
const CONFIG_WORDS: &[&str] = &[
    "config",
    "configuration",
    "manifest",
    "dependency",
    "dependencies",
    "cargo",
    "toml",
    "yaml",
    "json",
    "makefile",
    "cmake",
    "dockerfile",
    "workflow",
    "ci",
    "lockfile",
];
const VENDORED_WORDS: &[&str] = &["vendored", "vendor", "generated", "legacy", "compat"];

impl GoalRoles {
    /// The roles `goal` names.
    pub fn of(goal: &str) -> GoalRoles {
        let mut roles = GoalRoles::default();
        for word in goal
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let w = word.to_ascii_lowercase();
            let w = w.strip_suffix('s').filter(|s| s.len() >= 2).unwrap_or(&w);
            let has = |list: &[&str]| list.contains(&w);
            roles.tests |= has(TEST_WORDS);
            roles.examples |= has(EXAMPLE_WORDS);
            roles.docs |= has(DOC_WORDS);
            roles.changelog |= has(CHANGELOG_WORDS);
            roles.licence |= has(LICENCE_WORDS);
            roles.config |= has(CONFIG_WORDS);
            roles.vendored |= has(VENDORED_WORDS);
        }
        roles
    }

    /// Whether the goal names `role` (code is always asked for).
    pub fn asks_for(&self, role: FileRole) -> bool {
        match role {
            FileRole::Code => true,
            FileRole::Test => self.tests,
            FileRole::Example => self.examples,
            FileRole::Vendored => self.vendored,
            FileRole::Stub => false,
            FileRole::Docs => self.docs,
            FileRole::Changelog => self.changelog,
            FileRole::Licence => self.licence,
            FileRole::Config => self.config,
            FileRole::Lockfile => self.config,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn role(path: &str) -> FileRole {
        let name = path.rsplit('/').next().unwrap_or(path);
        file_role(path, Language::detect(name))
    }

    #[test]
    fn implementation_code_is_code() {
        assert_eq!(role("src/client.rs"), FileRole::Code);
        assert_eq!(role("lib/axios.js"), FileRole::Code);
        assert_eq!(role("pkg/echo/context.go"), FileRole::Code);
        assert_eq!(role("src/mobx.ts"), FileRole::Code);
    }

    #[test]
    fn tests_examples_vendored_and_stubs_are_told_apart() {
        assert_eq!(role("tests/client.rs"), FileRole::Test);
        assert_eq!(role("context_test.go"), FileRole::Test);
        assert_eq!(role("src/test/java/FooTest.java"), FileRole::Test);
        assert_eq!(role("lib/utils.spec.ts"), FileRole::Test);
        assert_eq!(role("tests/conftest.py"), FileRole::Test);
        assert_eq!(role("examples/simple.rs"), FileRole::Example);
        assert_eq!(role("third_party/zlib/inflate.c"), FileRole::Vendored);
        assert_eq!(role("dist/axios.min.js"), FileRole::Vendored);
        // Generator templates rank as examples.
        assert_eq!(
            role("railties/lib/rails/generators/rails/app/templates/Gemfile.tt"),
            FileRole::Example
        );
        assert_eq!(
            role("src/Illuminate/Foundation/Console/stubs/model.stub"),
            FileRole::Example
        );
        assert_eq!(role("app/views/layout.html.erb.tt"), FileRole::Example);
        assert!(GoalRoles::of("which templates does the app generator fill in").examples);
        assert_eq!(role("api/service.pb.go"), FileRole::Vendored);
        assert_eq!(role("types/index.d.ts"), FileRole::Stub);
        assert_eq!(role("click/__init__.py"), FileRole::Stub);
    }

    #[test]
    fn non_code_files_get_their_roles() {
        assert_eq!(role("README.md"), FileRole::Docs);
        assert_eq!(role("docs/guide.rst"), FileRole::Docs);
        assert_eq!(role("CHANGELOG.md"), FileRole::Changelog);
        assert_eq!(role("CHANGES.rst"), FileRole::Changelog);
        assert_eq!(role("LICENSE-MIT"), FileRole::Licence);
        assert_eq!(role("COPYING"), FileRole::Licence);
        assert_eq!(role("Cargo.lock"), FileRole::Lockfile);
        assert_eq!(role("go.sum"), FileRole::Lockfile);
        assert_eq!(role("Cargo.toml"), FileRole::Config);
        assert_eq!(role(".github/workflows/ci.yml"), FileRole::Config);
        assert_eq!(role("doc/manual.html"), FileRole::Docs);
        assert_eq!(role("docs/content/manual.yml"), FileRole::Docs);
        assert_eq!(role("jq.1.prebuilt"), FileRole::Docs);
        assert_eq!(role("tmux.1"), FileRole::Docs);
        assert_eq!(role("debian/patches/fix.patch"), FileRole::Config);
    }

    #[test]
    fn goals_name_the_roles_they_want() {
        let g = GoalRoles::of("which breaking changes were made in the last release?");
        assert!(g.changelog && !g.docs && !g.tests);
        let g = GoalRoles::of("tests for the retry loop");
        assert!(g.tests && g.asks_for(FileRole::Test));
        let g = GoalRoles::of("how do I install it, per the README");
        assert!(g.docs && g.asks_for(FileRole::Docs));
        let g = GoalRoles::of("where is the retry loop");
        assert_eq!(g, GoalRoles::default());
        assert!(g.asks_for(FileRole::Code) && !g.asks_for(FileRole::Docs));
    }
}
