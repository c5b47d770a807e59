//! Languages the provider understands, and how a file is assigned one.
//!
//! Detection is by file name only: it must be cheap (it runs for every walked
//! file) and predictable (a person can tell from the name how a file will be
//! chunked). Code languages get tree-sitter symbols; Markdown and plain text
//! get heading sections; everything else falls back to line windows.

/// How a file is chunked.
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
}

impl Language {
    /// Every language, in a fixed order (used by the persistent index's tag).
    pub const ALL: [Language; 12] = [
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
    ];

    /// The language of a file, judged by its name.
    pub fn detect(file_name: &str) -> Language {
        let lower = file_name.to_ascii_lowercase();
        let ext = lower.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
        match ext {
            "rs" => Language::Rust,
            "py" | "pyi" => Language::Python,
            "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "go" => Language::Go,
            "java" => Language::Java,
            "c" | "h" => Language::C,
            "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" | "ipp" => Language::Cpp,
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
            Language::Rust => "rust",
            Language::Python => "python",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::Go => "go",
            Language::Java => "java",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::Markdown => "markdown",
            Language::Text => "text",
            Language::Other => "other",
        }
    }

    /// Whether files of this language are chunked by a tree-sitter grammar.
    pub fn is_code(&self) -> bool {
        self.grammar().is_some()
    }

    /// The compiled-in tree-sitter grammar, when there is one. Grammars are
    /// linked into the binary (no runtime download, per the issue).
    pub fn grammar(&self) -> Option<tree_sitter::Language> {
        let f = match self {
            Language::Rust => tree_sitter_rust::LANGUAGE,
            Language::Python => tree_sitter_python::LANGUAGE,
            Language::JavaScript => tree_sitter_javascript::LANGUAGE,
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT,
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX,
            Language::Go => tree_sitter_go::LANGUAGE,
            Language::Java => tree_sitter_java::LANGUAGE,
            Language::C => tree_sitter_c::LANGUAGE,
            Language::Cpp => tree_sitter_cpp::LANGUAGE,
            Language::Markdown | Language::Text | Language::Other => return None,
        };
        Some(f.into())
    }

    /// The separator between scope segments in a qualified name.
    pub fn scope_separator(&self) -> &'static str {
        match self {
            Language::Rust | Language::Cpp => "::",
            _ => ".",
        }
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
mod tests {
    use super::*;

    #[test]
    fn detection_is_by_extension_case_insensitively() {
        assert_eq!(Language::detect("net.rs"), Language::Rust);
        assert_eq!(Language::detect("App.TSX"), Language::Tsx);
        assert_eq!(Language::detect("README"), Language::Text);
        assert_eq!(Language::detect("Makefile"), Language::Other);
        for l in Language::ALL {
            assert_eq!(Language::from_tag(l.tag()), Some(l));
        }
    }

    #[test]
    fn every_code_grammar_loads_with_a_compatible_abi() {
        for l in Language::ALL {
            if let Some(g) = l.grammar() {
                let mut p = tree_sitter::Parser::new();
                assert!(
                    p.set_language(&g).is_ok(),
                    "{} grammar ABI mismatch",
                    l.name()
                );
            }
        }
    }
}
