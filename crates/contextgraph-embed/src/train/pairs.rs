//! Retrieval pairs mined from source files for contrastive training: a
//! piece of prose about code (the query side) and the code it describes
//! (the document side), the way the search index embeds a chunk (the file's
//! path, then the chunk's lines).
//!
//! Why these pairs: a goal asks in prose ("how are retries scheduled") for
//! code that says it in identifiers. A doc comment is the author's own prose
//! for the item below it, and a module doc (`//!`, a Python module
//! docstring, a Go package comment, a file header) the author's prose for
//! the whole file, which is what an architecture question ("how does the
//! scheduler work") is answered by. Training the table so that a comment
//! lands next to its code, and away from other code, is the retrieval
//! objective the co-occurrence SVD only approximates.
//!
//! Two kinds ([`PairKind`]):
//! - **item**: a comment block (or a docstring) and the item it documents:
//!   the next code line and the lines of its body (deeper indentation, up to
//!   the closing bracket at the item's own indentation), or for a docstring
//!   the `def`/`class` line above it and its body; at most
//!   [`MAX_REGION_LINES`] lines, at least [`MIN_ITEM_LINES`];
//! - **file**: the file's leading doc block (licence headers skipped) and
//!   the file's first [`MAX_FILE_CHUNKS`] chunks of [`CHUNK_LINES`] lines,
//!   the doc block itself left out.
//!
//! The query's own text is never on the document side (else the pair is
//! an identity and teaches nothing).

use super::align::{LineClassifier, LineKind};
use super::contrastive::TokenPair;
use crate::tokenize::for_each_token;

/// Lines per document-side chunk of a file pair (the index's chunk size).
pub const CHUNK_LINES: usize = 50;
/// Chunks of one file paired with its module doc.
pub const MAX_FILE_CHUNKS: usize = 3;
/// Most lines of an item's region (its signature and body).
pub const MAX_REGION_LINES: usize = 50;
/// Fewest lines an item's region must have: a one-line field or a one-line
/// statement under a comment is a lexical match, not a retrieval example.
pub const MIN_ITEM_LINES: usize = 3;

/// What a pair's query describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PairKind {
    /// A comment or docstring and the item it documents.
    Item,
    /// A file's leading doc block and a chunk of the file.
    File,
}

/// One mined pair, as text (the trainer tokenizes it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MinedPair {
    /// What the query describes.
    pub kind: PairKind,
    /// The prose: the comment block's lines.
    pub query: String,
    /// The code: the file's path, then the region's lines.
    pub doc: String,
}

/// Whether a comment block is a licence or copyright header rather than a
/// description of code.
fn is_licence(block: &[&str]) -> bool {
    block.iter().any(|l| {
        let l = l.to_ascii_lowercase();
        l.contains("copyright")
            || l.contains("license")
            || l.contains("licence")
            || l.contains("spdx")
            || l.contains("all rights reserved")
    })
}

/// Whether a code line may precede a file's doc block without ending the
/// header: package, namespace, module, import and directive lines (PHP's
/// `<?php`, C#'s `using`, Haskell's `module … where` and pragmas, Ruby's
/// `require`, a shell script's `set -e`).
fn is_preamble(line: &str) -> bool {
    let t = line.trim_start();
    [
        "package ",
        "import ",
        "from ",
        "use ",
        "#include",
        "#pragma",
        "'use strict'",
        "\"use strict\"",
        "#![",
        "extern crate",
        "#!",
        "<?php",
        "namespace ",
        "using ",
        "declare(",
        "module ",
        "{-#",
        "require ",
        "require_relative ",
        "require(",
        "set -",
        "source ",
    ]
    .iter()
    .any(|p| t.starts_with(p))
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// A code region ends at a line of the item's indentation; a closing
/// bracket there belongs to the item (and ends it unless it is a
/// signature's `)` continuing to the body, or the body's opening `{` on a
/// line of its own, as C# and PHP put it).
fn closes_item(line: &str) -> Option<bool> {
    let t = line.trim_start();
    if t.starts_with('}') || t.starts_with("end") {
        Some(true)
    } else if t.starts_with(')')
        || t.starts_with(']')
        || (t.starts_with('{') && !t.starts_with("{-"))
    {
        Some(false)
    } else {
        None
    }
}

/// The region documented from line `start` (its first line): `start` and
/// the lines below it that are blank or indented deeper, up to and with a
/// closing bracket at `start`'s indentation; at most [`MAX_REGION_LINES`]
/// lines, trailing blank lines dropped. `skip` is a range of lines left out
/// (a docstring inside the region). With `equations` (Haskell), lines at
/// `start`'s indentation that define the same name (`decode :: …` then
/// `decode x = …`) belong to the item too: a function is its signature and
/// its equations, all at the same indentation.
fn region(lines: &[&str], start: usize, skip: (usize, usize), equations: bool) -> Vec<usize> {
    let base = indent(lines[start]);
    let name = equations.then(|| equation_name(lines[start])).flatten();
    let mut out = vec![start];
    let mut k = start + 1;
    while k < lines.len() && out.len() < MAX_REGION_LINES {
        if (skip.0..skip.1).contains(&k) {
            k += 1;
            continue;
        }
        let line = lines[k];
        let same_equation = indent(line) == base && name.is_some() && equation_name(line) == name;
        if line.trim().is_empty() || indent(line) > base || same_equation {
            out.push(k);
        } else if indent(line) == base {
            match closes_item(line) {
                Some(end) => {
                    out.push(k);
                    if end {
                        break;
                    }
                }
                None => break,
            }
        } else {
            break;
        }
        k += 1;
    }
    while out.len() > 1 && out.last().is_some_and(|&i| lines[i].trim().is_empty()) {
        out.pop();
    }
    out
}

/// The name a Haskell line defines or declares (`decode` of
/// `decode :: Text -> a` and of `decode t = …`), `None` for a keyword
/// line (`data`, `instance`, …) or one that starts with no lowercase name.
fn equation_name(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let end = t
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '\''))
        .unwrap_or(t.len());
    let name = &t[..end];
    let keyword = matches!(
        name,
        "data"
            | "newtype"
            | "type"
            | "instance"
            | "class"
            | "import"
            | "module"
            | "where"
            | "deriving"
            | "let"
            | "in"
            | "if"
            | "then"
            | "else"
            | "case"
            | "of"
            | "do"
    );
    (!keyword && name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')).then_some(name)
}

/// XML documentation tags of C# (and of some PHP and Kotlin docs) whose
/// names are markup, not prose: `<summary>`, `<param name="x">`, `<see
/// cref="Foo"/>`. [`clean_query`] drops them and keeps their attribute
/// values (the `x` and `Foo` name code).
const DOC_TAGS: &[&str] = &[
    "summary",
    "remarks",
    "returns",
    "param",
    "typeparam",
    "paramref",
    "typeparamref",
    "see",
    "seealso",
    "c",
    "code",
    "para",
    "exception",
    "value",
    "example",
    "inheritdoc",
    "list",
    "item",
    "description",
    "term",
    "br",
    "p",
    "b",
    "i",
    "em",
    "strong",
    "ul",
    "ol",
    "li",
    "pre",
    "tt",
];

/// A doc block's text without XML documentation tags:
/// each tag is replaced by its quoted attribute values.
pub fn clean_query(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let tag = &rest[open + 1..];
        let name_start = tag.strip_prefix('/').unwrap_or(tag);
        let name_len = name_start
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(name_start.len());
        let name = &name_start[..name_len];
        let close = tag.find('>');
        match close {
            Some(close) if DOC_TAGS.iter().any(|t| t.eq_ignore_ascii_case(name)) => {
                for (i, value) in tag[..close].split('"').enumerate() {
                    if i % 2 == 1 {
                        out.push(' ');
                        out.push_str(value);
                    }
                }
                out.push(' ');
                rest = &tag[close + 1..];
            }
            _ => {
                out.push('<');
                rest = tag;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Question frames a query may be put in (their words only: the encoder
/// is a bag of words, so their place does not matter). Why: goals are
/// asked as questions ("how does the scheduler work", "how does X relate to
/// Y") while doc comments are statements; question words are rare in code,
/// so their inverse-frequency weights are high (`relate` 7.7, `how` 3.8
/// against 0.5 for `the`) and, untrained, they pull a question's vector
/// towards whatever code happens to say them. Framed queries teach the rows
/// of those words to stay out of the way.
pub const QUESTION_FRAMES: &[&str] = &[
    "how does work",
    "how is done",
    "how are handled",
    "what does do",
    "where is implemented",
    "which code handles",
    "how does relate to",
    "explain how works",
    "how do interact with",
    "what happens when",
    "how to",
    "where are defined",
];

/// The frame of the `index`-th pair, or `None`: a seeded hash picks
/// about `share` of the pairs and the frame, so a run is reproducible.
pub fn question_frame(index: u64, seed: u64, share: f32) -> Option<&'static str> {
    let mut z = index.wrapping_add(seed).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    let pick = (z >> 40) as f32 / (1u64 << 24) as f32;
    (pick < share).then(|| QUESTION_FRAMES[(z % QUESTION_FRAMES.len() as u64) as usize])
}

impl MinedPair {
    /// The pair as token ids: `lookup` maps a token to its row (unknown
    /// tokens are skipped); the query keeps its first `max_query` known
    /// tokens (a doc block's summary sentence comes first), the document
    /// its first `max_doc`. `None` when a side has fewer than `min_query`
    /// (query) or one (document) known token. The pair's group is 0 (the
    /// caller sets its package).
    pub fn to_tokens(
        &self,
        lookup: impl Fn(&str) -> Option<u32>,
        max_query: usize,
        max_doc: usize,
        min_query: usize,
    ) -> Option<TokenPair> {
        let ids = |text: &str, cap: usize| {
            let mut out = Vec::new();
            for_each_token(text, |t| {
                if out.len() < cap {
                    if let Some(id) = lookup(t) {
                        out.push(id);
                    }
                }
            });
            out
        };
        let query = ids(&self.query, max_query);
        let doc = ids(&self.doc, max_doc);
        (query.len() >= min_query.max(1) && !doc.is_empty()).then_some(TokenPair {
            query,
            doc,
            group: 0,
        })
    }
}

fn join(path: &str, lines: &[&str], rows: impl Iterator<Item = usize>) -> String {
    let mut doc = String::with_capacity(path.len() + 64);
    doc.push_str(path);
    for i in rows {
        doc.push('\n');
        doc.push_str(lines[i]);
    }
    doc
}

/// Appends the pairs of one file (`path` relative to its package) to `out`,
/// in line order: the file pairs first, then the item pairs.
pub fn mine_pairs(path: &str, text: &str, out: &mut Vec<MinedPair>) {
    let lines: Vec<&str> = text.lines().collect();
    let equations = path.ends_with(".hs");
    let mut classifier = LineClassifier::default();
    let kinds: Vec<LineKind> = lines.iter().map(|l| classifier.classify(l)).collect();
    // Comment blocks: maximal runs of comment lines.
    let mut blocks: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if kinds[i] == LineKind::Comment {
            let s = i;
            while i < lines.len() && kinds[i] == LineKind::Comment {
                i += 1;
            }
            blocks.push((s, i));
        } else {
            i += 1;
        }
    }
    // The header ends at the first line of code that is not a preamble.
    let header_end = (0..lines.len())
        .find(|&k| {
            matches!(
                kinds[k],
                LineKind::Code | LineKind::PythonDef | LineKind::Annotation
            ) && !is_preamble(lines[k])
        })
        .unwrap_or(lines.len());
    // A header block documents the file unless it sits right on top of
    // the first item (then it is that item's doc); `//!` and `/*!` always
    // document the enclosing module.
    let documents_item = |e: usize| {
        let mut j = e;
        while j < lines.len() && kinds[j] == LineKind::Annotation {
            j += 1;
        }
        j < lines.len()
            && matches!(kinds[j], LineKind::Code | LineKind::PythonDef)
            && !is_preamble(lines[j])
    };
    let inner_doc = |s: usize| {
        let t = lines[s].trim_start();
        t.starts_with("//!") || t.starts_with("/*!") || t.starts_with("@moduledoc")
    };
    let file_doc = blocks.iter().copied().find(|&(s, e)| {
        (s < header_end || inner_doc(s))
            && !is_licence(&lines[s..e])
            && (inner_doc(s) || !documents_item(e))
    });
    if let Some((s, e)) = file_doc {
        let query = clean_query(&lines[s..e].join("\n"));
        let rest: Vec<usize> = (0..lines.len()).filter(|k| !(s..e).contains(k)).collect();
        for chunk in rest.chunks(CHUNK_LINES).take(MAX_FILE_CHUNKS) {
            if chunk.iter().any(|&k| kinds[k] == LineKind::Code) {
                out.push(MinedPair {
                    kind: PairKind::File,
                    query: query.clone(),
                    doc: join(path, &lines, chunk.iter().copied()),
                });
            }
        }
    }
    for &(s, e) in &blocks {
        if Some((s, e)) == file_doc || is_licence(&lines[s..e]) {
            continue;
        }
        let rows = if s > 0 && kinds[s - 1] == LineKind::PythonDef {
            region(&lines, s - 1, (s, e), equations)
        } else {
            let mut j = e;
            while j < lines.len() && kinds[j] == LineKind::Annotation {
                j += 1;
            }
            if j >= lines.len() || !matches!(kinds[j], LineKind::Code | LineKind::PythonDef) {
                continue;
            }
            let mut rows: Vec<usize> = (e..j).collect();
            rows.extend(region(&lines, j, (0, 0), equations));
            rows
        };
        if rows.len() < MIN_ITEM_LINES {
            continue;
        }
        out.push(MinedPair {
            kind: PairKind::Item,
            query: clean_query(&lines[s..e].join("\n")),
            doc: join(path, &lines, rows.into_iter()),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::{mine_pairs, MinedPair, PairKind};

    fn mine(path: &str, text: &str) -> Vec<MinedPair> {
        let mut out = Vec::new();
        mine_pairs(path, text, &mut out);
        out
    }

    #[test]
    fn a_doc_comment_pairs_with_the_item_below_it_and_its_body_only() {
        let text = "\
use std::time::Duration;

/// Waits longer after each failed attempt.
#[inline]
pub fn backoff(attempt: u32) -> Duration {
    let base = 100;
    Duration::from_millis(base << attempt)
}

fn unrelated() {
    println!(\"x\");
}
";
        let pairs = mine("src/retry.rs", text);
        assert_eq!(pairs.len(), 1, "{pairs:?}");
        assert_eq!(pairs[0].kind, PairKind::Item);
        assert_eq!(
            pairs[0].query,
            "/// Waits longer after each failed attempt."
        );
        assert_eq!(
            pairs[0].doc,
            "src/retry.rs\n#[inline]\npub fn backoff(attempt: u32) -> Duration {\n    let base = 100;\n    Duration::from_millis(base << attempt)\n}"
        );
    }

    #[test]
    fn a_docstring_pairs_with_the_def_above_and_the_body_without_itself() {
        let text = "\
import os

def retry(call, attempts):
    \"\"\"Call again until it succeeds
    or the attempts run out.\"\"\"
    for _ in range(attempts):
        call()

x = 1
";
        let pairs = mine("pkg/retry.py", text);
        assert_eq!(pairs.len(), 1, "{pairs:?}");
        assert_eq!(pairs[0].kind, PairKind::Item);
        assert!(pairs[0].query.contains("Call again until it succeeds"));
        assert_eq!(
            pairs[0].doc,
            "pkg/retry.py\ndef retry(call, attempts):\n    for _ in range(attempts):\n        call()"
        );
    }

    #[test]
    fn a_module_doc_after_a_licence_header_pairs_with_the_files_chunks() {
        let mut text = String::from(
            "// Copyright 2020 someone. Licensed under MIT.\n\n// Package sched runs jobs on a timer wheel.\npackage sched\n\n",
        );
        for i in 0..60 {
            text.push_str(&format!("var x{i} = {i}\n"));
        }
        let pairs = mine("sched/wheel.go", &text);
        let files: Vec<&MinedPair> = pairs.iter().filter(|p| p.kind == PairKind::File).collect();
        assert_eq!(files.len(), 2, "61+ lines of code make two chunks");
        assert_eq!(
            files[0].query,
            "// Package sched runs jobs on a timer wheel."
        );
        assert!(files[0].doc.starts_with("sched/wheel.go\n// Copyright"));
        assert!(
            !files[0].doc.contains("timer wheel"),
            "the query is not on the doc side"
        );
        assert!(
            !pairs.iter().any(|p| p.query.contains("Copyright")),
            "licences are not queries"
        );
    }

    #[test]
    fn a_comment_with_a_blank_line_or_a_short_item_below_pairs_nothing() {
        let text =
            "fn a() {}\n\n// A note about nothing.\n\nfn b() {}\n// The field.\nfield: u32,\n";
        assert!(mine("a.rs", text).is_empty());
    }

    #[test]
    fn question_frames_pick_about_the_share_asked_reproducibly() {
        let picked = (0..10_000u64)
            .filter(|&i| super::question_frame(i, 1, 0.3).is_some())
            .count();
        assert!((2_700..3_300).contains(&picked), "{picked}");
        assert!((0..1000u64).all(|i| super::question_frame(i, 1, 0.0).is_none()));
        assert!((0..1000u64).all(|i| super::question_frame(i, 1, 1.0).is_some()));
        let a: Vec<_> = (0..100u64)
            .map(|i| super::question_frame(i, 5, 0.5))
            .collect();
        let b: Vec<_> = (0..100u64)
            .map(|i| super::question_frame(i, 5, 0.5))
            .collect();
        assert_eq!(a, b);
        let frames: std::collections::BTreeSet<_> = a.into_iter().flatten().collect();
        assert!(frames.len() > 5, "frames vary: {frames:?}");
    }

    #[test]
    fn to_tokens_caps_the_query_from_its_start_and_skips_unknown_words() {
        let pair = MinedPair {
            kind: PairKind::Item,
            query: "/// Retry the call after backoff".to_string(),
            doc: "src/retry.rs\nfn retry() {}".to_string(),
        };
        let vocab = ["retry", "call", "after", "backoff", "src", "rs", "fn"];
        let lookup = |t: &str| vocab.iter().position(|v| *v == t).map(|i| i as u32);
        let got = pair
            .to_tokens(lookup, 3, 10, 2)
            .expect("enough known tokens");
        assert_eq!(
            got.query,
            [0, 1, 2],
            "`the` is unknown; the cap keeps the start"
        );
        assert_eq!(got.doc, [4, 0, 5, 6, 0]);
        assert!(
            pair.to_tokens(lookup, 3, 10, 5).is_none(),
            "too few query tokens"
        );
    }

    /// The one item pair of `text`, as (query, doc).
    fn item(path: &str, text: &str) -> (String, String) {
        let pairs: Vec<MinedPair> = mine(path, text)
            .into_iter()
            .filter(|p| p.kind == PairKind::Item)
            .collect();
        assert_eq!(pairs.len(), 1, "{path}: {pairs:?}");
        (pairs[0].query.clone(), pairs[0].doc.clone())
    }

    #[test]
    fn ruby_yard_comments_pair_with_the_method_up_to_its_end() {
        let text = "# frozen_string_literal: true\n\nmodule Http\n  # Sends the request again after a redirect.\n  # @param limit [Integer]\n  def follow(limit)\n    get(location)\n  end\n\n  def other\n  end\nend\n";
        let (query, doc) = item("lib/http.rb", text);
        assert!(query.starts_with("  # Sends the request again"), "{query}");
        assert_eq!(
            doc,
            "lib/http.rb\n  def follow(limit)\n    get(location)\n  end"
        );
    }

    #[test]
    fn a_phpdoc_file_header_after_the_php_tag_and_namespace_is_the_file_doc() {
        let mut text = String::from("<?php\nnamespace App\\Cache;\n\n/**\n * Caches rendered templates on disk.\n */\n\nuse Foo\\Bar;\n\nfinal class Store\n{\n    /**\n     * Reads one entry.\n     */\n    public function read(string $key): string\n    {\n        return $this->disk->get($key);\n    }\n}\n");
        text.push_str("// end\n");
        let pairs = mine("src/Cache/Store.php", &text);
        let file: Vec<&MinedPair> = pairs.iter().filter(|p| p.kind == PairKind::File).collect();
        assert_eq!(file.len(), 1, "{pairs:?}");
        assert!(file[0].query.contains("Caches rendered templates"));
        let items: Vec<&MinedPair> = pairs.iter().filter(|p| p.kind == PairKind::Item).collect();
        assert_eq!(items.len(), 1, "{pairs:?}");
        assert!(items[0].query.contains("Reads one entry"));
        assert!(
            items[0]
                .doc
                .ends_with("return $this->disk->get($key);\n    }"),
            "{}",
            items[0].doc
        );
    }

    #[test]
    fn csharp_xml_doc_tags_are_dropped_from_the_query_and_attributes_skipped() {
        let text = "using System;\n\nnamespace Json\n{\n    /// <summary>Writes a value as <c>JSON</c>.</summary>\n    /// <param name=\"writer\">The target.</param>\n    [Obsolete(\"use Write2\")]\n    public void Write(Writer writer)\n    {\n        writer.Flush();\n    }\n}\n";
        let (query, doc) = item("src/Json/Writer.cs", text);
        assert!(
            !query.contains("summary") && !query.contains("param"),
            "{query}"
        );
        assert!(
            query.contains("Writes a value as  JSON") && query.contains("writer"),
            "{query}"
        );
        assert!(
            doc.contains("[Obsolete") && doc.contains("writer.Flush();"),
            "{doc}"
        );
    }

    #[test]
    fn kdoc_scaladoc_and_swift_doc_comments_pair_with_their_declarations() {
        let kotlin = "package io.ktor\n\n/**\n * Retries a failed call.\n */\n@JvmStatic\nfun retry(times: Int) {\n    call()\n}\n";
        let (query, doc) = item("src/Retry.kt", kotlin);
        assert!(query.contains("Retries a failed call"));
        assert!(doc.contains("fun retry(times: Int) {") && doc.ends_with("}"));
        let scala = "package cats\n\nobject Show {\n  /** Renders a value as text.\n    */\n  def show[A](a: A): String =\n    val s = a.toString\n    s\n}\n";
        let (query, doc) = item("core/Show.scala", scala);
        assert!(query.contains("Renders a value"));
        assert!(
            doc.contains("def show[A]") && doc.contains("a.toString"),
            "{doc}"
        );
        let swift = "import Foundation\n\n/// Validates the response status.\n@discardableResult\npublic func validate() -> Self {\n    return self\n}\n";
        let (query, doc) = item("Source/Validation.swift", swift);
        assert_eq!(query, "/// Validates the response status.");
        assert!(doc.contains("public func validate()"));
    }

    #[test]
    fn elixir_moduledoc_is_the_file_doc_and_doc_pairs_with_the_function() {
        let text = "defmodule Plug.Router do\n  @moduledoc \"\"\"\n  A DSL to define a routing algorithm.\n  \"\"\"\n\n  @doc \"\"\"\n  Matches a path against the routes.\n  \"\"\"\n  @spec match(t) :: t\n  def match(conn) do\n    conn\n  end\nend\n";
        let pairs = mine("lib/plug/router.ex", text);
        let file: Vec<&MinedPair> = pairs.iter().filter(|p| p.kind == PairKind::File).collect();
        assert_eq!(file.len(), 1, "{pairs:?}");
        assert!(file[0].query.contains("routing algorithm"));
        let (query, doc) = item("lib/plug/router.ex", text);
        assert!(query.contains("Matches a path"), "{query}");
        assert_eq!(
            doc,
            "lib/plug/router.ex\n  @spec match(t) :: t\n  def match(conn) do\n    conn\n  end"
        );
    }

    #[test]
    fn haddock_pairs_with_the_signature_and_its_equations() {
        let text = "{-# LANGUAGE OverloadedStrings #-}\n-- | JSON decoding.\nmodule Data.Json (decode) where\n\nimport Data.Text\n\n-- | Decodes a value, or fails.\ndecode :: Text -> Maybe a\ndecode \"\" = Nothing\ndecode t = parse t\n\nother :: Int\nother = 1\n";
        let pairs = mine("src/Data/Json.hs", text);
        let file: Vec<&MinedPair> = pairs.iter().filter(|p| p.kind == PairKind::File).collect();
        assert_eq!(file.len(), 1, "{pairs:?}");
        assert_eq!(file[0].query, "-- | JSON decoding.");
        let (query, doc) = item("src/Data/Json.hs", text);
        assert_eq!(query, "-- | Decodes a value, or fails.");
        assert_eq!(doc, "src/Data/Json.hs\ndecode :: Text -> Maybe a\ndecode \"\" = Nothing\ndecode t = parse t");
    }

    #[test]
    fn luadoc_pairs_with_the_function_up_to_its_end() {
        let text = "local M = {}\n\n--- Opens the picker.\n-- @param opts table\nfunction M.open(opts)\n  local p = new(opts)\n  return p\nend\n\nreturn M\n";
        let (query, doc) = item("lua/picker.lua", text);
        assert!(query.starts_with("--- Opens the picker."));
        assert_eq!(
            doc,
            "lua/picker.lua\nfunction M.open(opts)\n  local p = new(opts)\n  return p\nend"
        );
    }

    #[test]
    fn zig_container_docs_are_file_docs_and_doc_comments_pair_with_the_fn() {
        let text = "//! Command line argument parsing.\nconst std = @import(\"std\");\n\n/// Parses the arguments.\npub fn parse(args: []const u8) !void {\n    _ = args;\n}\n";
        let pairs = mine("src/clap.zig", text);
        assert!(pairs
            .iter()
            .any(|p| p.kind == PairKind::File && p.query.contains("argument parsing")));
        let (query, doc) = item("src/clap.zig", text);
        assert_eq!(query, "/// Parses the arguments.");
        assert!(doc.contains("pub fn parse"));
    }

    #[test]
    fn a_shell_header_after_the_shebang_is_the_file_doc_not_the_shebang() {
        let mut text = String::from("#!/usr/bin/env bash\n# Installs a node version and switches to it.\n# Usage: n VERSION\n\nset -euo pipefail\n\n");
        text.push_str("# Prints the active version.\nactive() {\n  node --version\n}\n");
        let pairs = mine("bin/n", &text);
        let file: Vec<&MinedPair> = pairs.iter().filter(|p| p.kind == PairKind::File).collect();
        assert_eq!(file.len(), 1, "{pairs:?}");
        assert!(
            file[0].query.starts_with("# Installs a node version"),
            "{}",
            file[0].query
        );
        let (query, doc) = item("bin/n", &text);
        assert_eq!(query, "# Prints the active version.");
        assert_eq!(doc, "bin/n\nactive() {\n  node --version\n}");
    }

    #[test]
    fn clean_query_keeps_text_and_attribute_values_and_other_angle_brackets() {
        assert_eq!(
            super::clean_query("/// <see cref=\"Reader\"/> for a <b>list</b>; a < b and Vec<T>"),
            "///  Reader  for a  list ; a < b and Vec<T>"
        );
    }

    #[test]
    fn a_multi_line_signature_stays_in_the_region() {
        let text = "\
fn first() {}
/// Opens the pool.
fn open(
    size: usize,
) -> Pool {
    Pool::new(size)
}
fn after() {}
";
        let pairs = mine("pool.rs", text);
        assert_eq!(pairs.len(), 1);
        assert_eq!(
            pairs[0].doc,
            "pool.rs\nfn open(\n    size: usize,\n) -> Pool {\n    Pool::new(size)\n}"
        );
    }
}
