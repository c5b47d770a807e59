//! Languages the provider understands, and how a file is assigned one.
//!
//! Detection is by file name only: it must be cheap (it runs for every walked
//! file) and predictable (a person can tell from the name how a file will be
//! chunked). Code languages get tree-sitter symbols; Markdown and plain text
//! get heading sections; everything else falls back to line windows.
//!
//! Everything the chunker knows of a code language is in that language's
//! file beside this one (`rust.rs`, `ruby.rs`, …): one `LangSpec`
//! holding its grammar, file names, definition, container, wrapper and
//! comment node kinds, and its call and import shapes. Adding a language is
//! that file, a variant here, and its line in `Language::spec`.

pub(crate) mod node_ext;
pub(crate) mod spec;
pub(crate) mod syntax;

mod bash;
mod c;
mod csharp;
mod elixir;
mod go;
mod haskell;
mod java;
mod javascript;
mod kotlin;
mod lua;
mod php;
mod preproc;
mod python;
mod ruby;
mod rust;
mod scala;
mod swift;
mod zig;

use spec::LangSpec;

/// How a file is chunked.
///
/// The order of [`Language::ALL`] is the persistent index's one-byte tag:
/// new languages are appended, never inserted, so a tag keeps its meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    /// Rust (`.rs`).
    Rust,
    /// Python (`.py`, `.pyi`).
    Python,
    /// JavaScript (`.js`, `.mjs`, `.cjs`, `.jsx`).
    JavaScript,
    /// TypeScript (`.ts`, `.mts`, `.cts`).
    TypeScript,
    /// TypeScript with JSX (`.tsx`).
    Tsx,
    /// Go (`.go`).
    Go,
    /// Java (`.java`).
    Java,
    /// C (`.c`, `.h`).
    C,
    /// C++ (`.cc`, `.cpp`, `.cxx`, `.hpp`, `.hh`, `.hxx`).
    Cpp,
    /// Markdown (`.md`, `.markdown`): `doc` frames per heading section.
    Markdown,
    /// Prose (`.txt`, `.rst`, `.adoc`, README-like names): `doc` frames.
    Text,
    /// Anything else that passed the walk's gates: `snippet` line windows.
    Other,
    /// Ruby (`.rb`, `.rake`, `.gemspec`, `.ru`, `Rakefile`, `Gemfile`).
    Ruby,
    /// PHP (`.php`, `.phtml`).
    Php,
    /// C# (`.cs`, `.csx`).
    CSharp,
    /// Kotlin (`.kt`, `.kts`).
    Kotlin,
    /// Scala (`.scala`, `.sc`, `.sbt`).
    Scala,
    /// Swift (`.swift`).
    Swift,
    /// Elixir (`.ex`, `.exs`).
    Elixir,
    /// Bash and POSIX shell (`.sh`, `.bash`, `.bats`).
    Bash,
    /// Haskell (`.hs`).
    Haskell,
    /// Lua (`.lua`).
    Lua,
    /// Zig (`.zig`).
    Zig,
}

impl Language {
    /// Every language, in a fixed order (used by the persistent index's tag).
    pub const ALL: [Language; 23] = [
        Language::Rust,
        Language::Python,
        Language::JavaScript,
        Language::TypeScript,
        Language::Tsx,
        Language::Go,
        Language::Java,
        Language::C,
        Language::Cpp,
        Language::Markdown,
        Language::Text,
        Language::Other,
        Language::Ruby,
        Language::Php,
        Language::CSharp,
        Language::Kotlin,
        Language::Scala,
        Language::Swift,
        Language::Elixir,
        Language::Bash,
        Language::Haskell,
        Language::Lua,
        Language::Zig,
    ];

    /// What the chunker knows of a code language; `None` for Markdown,
    /// text and other files.
    pub(crate) fn spec(&self) -> Option<&'static LangSpec> {
        Some(match self {
            Language::Rust => &rust::RUST,
            Language::Python => &python::PYTHON,
            Language::JavaScript => &javascript::JAVASCRIPT,
            Language::TypeScript => &javascript::TYPESCRIPT,
            Language::Tsx => &javascript::TSX,
            Language::Go => &go::GO,
            Language::Java => &java::JAVA,
            Language::C => &c::C,
            Language::Cpp => &c::CPP,
            Language::Ruby => &ruby::RUBY,
            Language::Php => &php::PHP,
            Language::CSharp => &csharp::CSHARP,
            Language::Kotlin => &kotlin::KOTLIN,
            Language::Scala => &scala::SCALA,
            Language::Swift => &swift::SWIFT,
            Language::Elixir => &elixir::ELIXIR,
            Language::Bash => &bash::BASH,
            Language::Haskell => &haskell::HASKELL,
            Language::Lua => &lua::LUA,
            Language::Zig => &zig::ZIG,
            Language::Markdown | Language::Text | Language::Other => return None,
        })
    }

    /// The language of a file, judged by its name.
    pub fn detect(file_name: &str) -> Language {
        let lower = file_name.to_ascii_lowercase();
        let ext = lower.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
        let base = lower.rsplit('/').next().unwrap_or(&lower);
        for l in Language::ALL {
            if let Some(s) = l.spec() {
                if (!ext.is_empty() && s.extensions.contains(&ext)) || s.file_names.contains(&base)
                {
                    return l;
                }
            }
        }
        match ext {
            "md" | "markdown" | "mdown" => Language::Markdown,
            "txt" | "rst" | "adoc" | "text" => Language::Text,
            "" if matches!(
                lower.as_str(),
                "readme" | "license" | "copying" | "authors" | "changelog" | "notice"
            ) =>
            {
                Language::Text
            }
            _ => Language::Other,
        }
    }

    /// A short stable name, used in symbol and module URIs and in reports.
    pub fn name(&self) -> &'static str {
        match self {
            Language::Markdown => "markdown",
            Language::Text => "text",
            Language::Other => "other",
            code => code.spec().map_or("other", |s| s.name),
        }
    }

    /// Whether files of this language are chunked by a tree-sitter grammar.
    pub fn is_code(&self) -> bool {
        self.spec().is_some()
    }

    /// The compiled-in tree-sitter grammar, when there is one. Grammars are
    /// linked into the binary (no runtime download, per the issue).
    pub fn grammar(&self) -> Option<tree_sitter::Language> {
        self.spec().map(|s| (s.grammar)())
    }

    /// The text the grammar is given for `text`: the same bytes with the
    /// constructs this language's grammar cannot parse masked (see
    /// `LangSpec::parse_mask`), or `text` itself. The same length, so
    /// every position in the tree is the file's. For tools that look at the
    /// parse the chunker sees (`examples/parse_errors.rs`).
    pub fn parse_input<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        match self.spec().and_then(|s| (s.parse_mask)(text)) {
            Some(masked) if masked.len() == text.len() => std::borrow::Cow::Owned(masked),
            _ => std::borrow::Cow::Borrowed(text),
        }
    }

    /// The separator between scope segments in a qualified name.
    pub fn scope_separator(&self) -> &'static str {
        self.spec().map_or(".", |s| s.scope_separator)
    }

    /// Stable one-byte tag for the persistent index.
    pub(crate) fn tag(&self) -> u8 {
        Language::ALL.iter().position(|l| l == self).unwrap_or(0) as u8
    }

    /// Inverse of [`tag`](Self::tag).
    pub(crate) fn from_tag(tag: u8) -> Option<Language> {
        Language::ALL.get(usize::from(tag)).copied()
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
