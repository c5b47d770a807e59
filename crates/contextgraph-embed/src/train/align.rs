//! Doc-comment alignment: extra co-occurrences between the words of a
//! comment block and the identifiers of the code it documents.
//!
//! Why: a goal says in prose what the code says in identifiers ("limit how
//! often a callback can fire" for `throttle`). A sliding window links a
//! comment's last few words to the signature below it, but not the
//! comment's first sentence, which is where the prose summary sits. Pairing
//! every word of a doc block with every part of the signature it documents
//! teaches the model exactly the prose ↔ identifier links code search
//! needs, from text the corpus already holds.
//!
//! Comment lines are recognised by their leading marker (`//`, `/*`, `*`,
//! `#` followed by a space, `--` for Haskell and Lua), by an open block
//! comment (`/* */`, `{- -}`, `--[[ ]]`, `=begin`/`=end`), or as a
//! docstring (Python's, Elixir's `@doc`/`@moduledoc`); the documented code is the
//! next two code lines after the block (attributes and decorators skipped),
//! or, for a Python docstring, the `def`/`class` line just before it.

/// What a source line is, for alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// No token (empty, or punctuation only).
    Blank,
    /// A comment or docstring line.
    Comment,
    /// An attribute or decorator (`#[derive]`, `@Override`): skipped when
    /// looking for the documented signature.
    Annotation,
    /// A Python `def`/`class` line: documented by the docstring below it.
    PythonDef,
    /// Any other code.
    Code,
}

/// Block comments whose inner lines carry no marker: the opener at the
/// start of a line and the closer that ends the block (C-family `/* */`,
/// Haskell `{- -}`, Lua `--[[ ]]`, Ruby `=begin`/`=end`).
const BLOCK_COMMENTS: &[(&str, &str)] = &[
    ("/*", "*/"),
    ("{-", "-}"),
    ("--[[", "]]"),
    ("--[==[", "]==]"),
    ("--[=[", "]=]"),
    ("=begin", "=end"),
];

/// Comments that are directives to a tool, not prose about code (Ruby's
/// and Python's magic comments, shellcheck's switches): classified as blank
/// so they neither join a doc block nor end a file's header.
const DIRECTIVE_COMMENTS: &[&str] = &[
    "# frozen_string_literal:",
    "# -*-",
    "# encoding:",
    "# coding:",
    "# typed:",
    "# shellcheck ",
    "# rubocop:",
    "# vim:",
    "-- vim:",
];

/// Elixir's documentation attributes: their string is the doc of the
/// module, type or function that follows (or, for `@moduledoc`, encloses).
const ELIXIR_DOC_ATTRIBUTES: &[&str] = &["@moduledoc", "@doc", "@typedoc"];

/// Classifies lines one by one, tracking whether a docstring (Python's
/// triple-quoted string, an Elixir `@doc """` heredoc) or a marker-less
/// block comment is open.
#[derive(Debug, Default)]
pub struct LineClassifier {
    in_docstring: bool,
    /// The closer of the open block comment, if one is open.
    block_end: Option<&'static str>,
}

impl LineClassifier {
    /// The kind of `line` (called on every line of a document, in order).
    pub fn classify(&mut self, line: &str) -> LineKind {
        let t = line.trim_start();
        let quotes = t.matches("\"\"\"").count() + t.matches("'''").count();
        if self.in_docstring {
            if quotes % 2 == 1 {
                self.in_docstring = false;
            }
            return LineKind::Comment;
        }
        if let Some(end) = self.block_end {
            let closed = if end == "=end" {
                t.starts_with(end)
            } else {
                t.contains(end)
            };
            if closed {
                self.block_end = None;
            }
            return LineKind::Comment;
        }
        if t.starts_with("\"\"\"") || t.starts_with("'''") || t.starts_with("r\"\"\"") {
            self.in_docstring = quotes % 2 == 1;
            return LineKind::Comment;
        }
        if let Some(rest) = ELIXIR_DOC_ATTRIBUTES
            .iter()
            .find_map(|a| t.strip_prefix(a).filter(|r| r.starts_with([' ', '('])))
        {
            let rest = rest.trim_start_matches([' ', '(']);
            if rest.starts_with("false") || rest.starts_with("nil") {
                return LineKind::Annotation;
            }
            self.in_docstring = quotes % 2 == 1;
            return LineKind::Comment;
        }
        if t.is_empty() || DIRECTIVE_COMMENTS.iter().any(|d| t.starts_with(d)) {
            return LineKind::Blank;
        }
        if t.starts_with("#![") || t.starts_with("{-#") {
            return LineKind::Annotation; // Rust inner attribute, Haskell pragma
        }
        if t.starts_with("#!") {
            return LineKind::Blank; // a shebang
        }
        for &(open, close) in BLOCK_COMMENTS {
            if let Some(rest) = t.strip_prefix(open) {
                if !rest.contains(close) {
                    self.block_end = Some(close);
                }
                return LineKind::Comment;
            }
        }
        if t.starts_with("//")
            || t == "*"
            || t.starts_with("* ")
            || t.starts_with("*/")
            || t == "#"
            || t.starts_with("# ")
            || t == "--"
            || t.starts_with("-- ")
            || t.starts_with("--|")
            || t.starts_with("---")
        {
            return LineKind::Comment;
        }
        if t.starts_with("#[") || t.starts_with('@') || is_bracket_attribute(t) {
            return LineKind::Annotation;
        }
        if t.starts_with("def ") || t.starts_with("async def ") || t.starts_with("class ") {
            return LineKind::PythonDef;
        }
        LineKind::Code
    }
}

/// A C# attribute line: `[Fact]`, `[HttpGet("x")]`, `[assembly: X]`: a
/// bracket, a capital letter or `assembly:`, and the closing bracket last.
fn is_bracket_attribute(t: &str) -> bool {
    let Some(inner) = t.strip_prefix('[') else {
        return false;
    };
    (inner.starts_with(|c: char| c.is_ascii_uppercase()) || inner.starts_with("assembly:"))
        && t.trim_end().ends_with(']')
}

/// Most comment tokens of one block paired (its last ones: the block's end
/// sits next to the signature, and very long blocks are licence headers or
/// module essays rather than a summary of one item).
pub const MAX_COMMENT_TOKENS: usize = 48;
/// Most tokens of the documented code paired.
pub const MAX_CODE_TOKENS: usize = 24;
/// Code lines after a comment block taken as the documented signature.
const SIGNATURE_LINES: usize = 2;

/// Calls `pair(comment_token, code_token, weight)` for each comment block
/// of a document and the code it documents. `lines` holds each line's kind
/// and the range of its tokens in `ids`; each pair weighs
/// `weight / sqrt(code tokens)`, so a block's total weight per comment word
/// grows slower than the signature's length.
pub fn for_each_aligned_pair(
    lines: &[(LineKind, usize, usize)],
    ids: &[u32],
    weight: f32,
    mut pair: impl FnMut(u32, u32, f32),
) {
    let mut i = 0;
    let mut code: Vec<u32> = Vec::new();
    while i < lines.len() {
        if lines[i].0 != LineKind::Comment {
            i += 1;
            continue;
        }
        let first = i;
        while i < lines.len() && lines[i].0 == LineKind::Comment {
            i += 1;
        }
        let comment_start = lines[first].1;
        let comment_end = lines[i - 1].2;
        let comment = &ids[comment_start..comment_end];
        let comment = &comment[comment.len().saturating_sub(MAX_COMMENT_TOKENS)..];
        if comment.is_empty() {
            continue;
        }
        code.clear();
        if first > 0 && lines[first - 1].0 == LineKind::PythonDef {
            let (_, s, e) = lines[first - 1];
            code.extend_from_slice(&ids[s..e]);
        } else {
            let mut taken = 0;
            let mut j = i;
            while j < lines.len() && taken < SIGNATURE_LINES {
                match lines[j].0 {
                    LineKind::Annotation => {}
                    LineKind::Code | LineKind::PythonDef => {
                        let (_, s, e) = lines[j];
                        code.extend_from_slice(&ids[s..e]);
                        taken += 1;
                    }
                    LineKind::Blank | LineKind::Comment => break,
                }
                j += 1;
            }
        }
        code.truncate(MAX_CODE_TOKENS);
        if code.is_empty() {
            continue;
        }
        let w = weight / (code.len() as f32).sqrt();
        for &c in comment {
            for &k in &code {
                if c != k {
                    pair(c, k, w);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{for_each_aligned_pair, LineClassifier, LineKind};

    fn kinds(text: &str) -> Vec<LineKind> {
        let mut c = LineClassifier::default();
        text.lines().map(|l| c.classify(l)).collect()
    }

    #[test]
    fn recognises_comments_docstrings_annotations_and_python_defs() {
        use LineKind::*;
        assert_eq!(
            kinds("/// Retries.\n#[inline]\nfn retry() {}\n\n# note\n#include <x>"),
            [Comment, Annotation, Code, Blank, Comment, Code]
        );
        assert_eq!(
            kinds(
                "def retry(n):\n    \"\"\"Retry the call\n    with backoff.\n    \"\"\"\n    pass"
            ),
            [PythonDef, Comment, Comment, Comment, Code]
        );
        assert_eq!(
            kinds("class A:\n    \"\"\"One line.\"\"\"\n    x = 1"),
            [PythonDef, Comment, Code]
        );
    }

    #[test]
    fn recognises_the_doc_comments_of_the_newer_languages() {
        use LineKind::*;
        // Ruby (YARD), with a magic comment and a shebang that are not prose.
        assert_eq!(
            kinds("#!/usr/bin/env ruby\n# frozen_string_literal: true\n# Parses a header.\ndef parse(h)\n=begin\nold notes\n=end"),
            [Blank, Blank, Comment, PythonDef, Comment, Comment, Comment]
        );
        // Haddock, a Haskell block comment and a pragma.
        assert_eq!(
            kinds("{-# LANGUAGE GADTs #-}\n-- | Decodes a value.\ndecode :: Text -> a\n{-| A block\nwithout markers\n-}\nx = 1"),
            [Annotation, Comment, Code, Comment, Comment, Comment, Code]
        );
        // LuaDoc and a Lua long comment.
        assert_eq!(
            kinds("--- Opens a picker.\n-- @param opts table\nfunction M.open(opts)\n--[[\nnotes\n]]\nend"),
            [Comment, Comment, Code, Comment, Comment, Comment, Code]
        );
        // Elixir docs: a heredoc, a one-line doc, a hidden function.
        assert_eq!(
            kinds("  @moduledoc \"\"\"\n  Routes requests.\n  \"\"\"\n  @doc \"Matches a path.\"\n  @spec m(t) :: t\n  def m(p) do\n  @doc false\n  def n, do: 1"),
            [Comment, Comment, Comment, Comment, Annotation, PythonDef, Annotation, PythonDef]
        );
        // C# XML docs and attributes, Zig and Swift doc comments.
        assert_eq!(
            kinds("/// <summary>Serializes.</summary>\n[Obsolete(\"x\")]\npublic void Write() {\n//! Zig module doc\n[1, 2]"),
            [Comment, Annotation, Code, Comment, Code]
        );
        // A C block comment whose inner lines carry no `*`.
        assert_eq!(
            kinds("/*\n  Allocates a pool.\n*/\nint x;"),
            [Comment, Comment, Comment, Code]
        );
        // Rust's inner attribute is an attribute, not a comment.
        assert_eq!(
            kinds("#![warn(missing_docs)]\n//! Docs."),
            [Annotation, Comment]
        );
    }

    #[test]
    fn pairs_a_doc_block_with_the_signature_below_and_a_docstring_with_the_def_above() {
        use LineKind::*;
        // Tokens: comment [1, 2], attribute [9] (skipped), two code lines
        // [3, 4] and [5] (the signature window), a blank, then [6] (not
        // documented by the block).
        let ids = [1, 2, 9, 3, 4, 5, 6];
        let lines = [
            (Comment, 0, 2),
            (Annotation, 2, 3),
            (Code, 3, 5),
            (Code, 5, 6),
            (Blank, 6, 6),
            (Code, 6, 7),
        ];
        let mut got = Vec::new();
        for_each_aligned_pair(&lines, &ids, 1.0, |a, b, _| got.push((a, b)));
        assert_eq!(got, [(1, 3), (1, 4), (1, 5), (2, 3), (2, 4), (2, 5)]);

        let ids = [7, 8, 1, 2, 5];
        let lines = [(PythonDef, 0, 2), (Comment, 2, 4), (Code, 4, 5)];
        let mut got = Vec::new();
        for_each_aligned_pair(&lines, &ids, 1.0, |a, b, _| got.push((a, b)));
        assert_eq!(
            got,
            [(1, 7), (1, 8), (2, 7), (2, 8)],
            "the def, not the body"
        );
    }

    #[test]
    fn a_comment_without_code_after_it_pairs_nothing() {
        use LineKind::*;
        let ids = [1, 2, 3];
        let lines = [(Comment, 0, 2), (Blank, 2, 2), (Code, 2, 3)];
        let mut n = 0;
        for_each_aligned_pair(&lines, &ids, 1.0, |_, _, _| n += 1);
        assert_eq!(n, 0);
    }
}
