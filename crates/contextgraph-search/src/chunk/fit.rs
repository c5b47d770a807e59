//! Chunks that always fit: any chunk whose region is larger than
//! [`MAX_CHUNK_BYTES`] is cut into pieces that each fit.
//!
//! Why: a frame's content is the chunk's region verbatim, and a frame that
//! costs more than the budget is never served. A function inside a
//! `cfg_*! {}` or `macro_rules!` block, a long function, a data table or a
//! large impl used to be one 12k–20k-token chunk, so the best match was
//! dropped and the answer fell back to weaker frames.
//!
//! How the limit was chosen: the budget counts `bytes / 4` tokens
//! (`contextgraph_types::token_cost_of_len`); `cgp context` defaults to 8,000
//! model tokens ≈ 5,900 budget tokens for the whole prompt, shared between
//! providers, so a frame of at most 1,500 budget tokens (6,000 bytes, ≈ 150
//! lines of code) still fits the workspace provider's share with room for
//! a few others beside it.
//!
//! Provenance stays honest: a piece is a range of whole lines of the file, so
//! its digest is of exactly the bytes served, as for every other chunk. The
//! enclosing item's context is therefore not prepended to the content (that
//! would break the digest) but carried in the piece's title and, for a
//! piece that starts with a nested item, in its symbol's qualified name
//! (`outer_macro::inner_fn`).
//!
//! Where pieces are cut, best first: before nested items at the shallowest
//! indentation (the inner `fn`s of a macro body, the methods of an impl whose
//! grammar hides them in a token tree), with their doc comments and
//! attributes; then at blank lines; then after lines that end a statement or
//! a block, preferring the outermost. A single line longer than the limit
//! cannot be cut (chunks address whole lines) and stays one piece.

use std::collections::HashSet;

use super::markdown::code_span_names;
use super::{Chunk, ChunkKind, LineIndex, SymbolInfo};

/// Largest region (bytes) of one chunk: 1,500 budget tokens.
pub const MAX_CHUNK_BYTES: usize = 6_000;

/// Consecutive pieces smaller than this are packed together (up to the
/// limit) so that a run of one-line items does not become a frame each.
const SMALL_PIECE_BYTES: usize = 600;

/// How the region of a piece was found, recorded in provenance `method`.
pub const PIECE_METHOD: &str = "split-oversized";

/// A piece of an oversized chunk before it becomes a [`Chunk`].
#[derive(Debug, Clone)]
struct Piece {
    start: u32,
    end: u32,
    /// The nested item the piece starts with: (kind label, name).
    item: Option<(&'static str, String)>,
    /// Names of containers found inside the chunk that enclose the piece.
    scope: Vec<String>,
}

/// Replace every chunk whose region exceeds [`MAX_CHUNK_BYTES`] by pieces
/// that fit. `sep` joins scoped names (`::` or `.`).
pub fn fit_chunks(chunks: Vec<Chunk>, text: &str, lines: &LineIndex, sep: &str) -> Vec<Chunk> {
    let size = |c: &Chunk| {
        lines
            .byte_range(c.start_line, c.end_line)
            .map_or(0, |r| r.len())
    };
    if chunks.iter().all(|c| size(c) <= MAX_CHUNK_BYTES) {
        return chunks;
    }
    let mut ids: HashSet<String> = chunks.iter().map(|c| c.local_id.clone()).collect();
    let mut out = Vec::with_capacity(chunks.len() + 8);
    for c in chunks {
        if size(&c) <= MAX_CHUNK_BYTES {
            out.push(c);
            continue;
        }
        let pieces = split_chunk(&c, text, lines);
        out.extend(pieces_to_chunks(&c, pieces, text, lines, sep, &mut ids));
    }
    out
}

/// The pieces of one oversized chunk: its own lines (not those of nested
/// chunks, which are chunks of their own) cut to fit.
fn split_chunk(c: &Chunk, text: &str, lines: &LineIndex) -> Vec<Piece> {
    let mut nested = c.nested.clone();
    nested.sort_unstable();
    let mut runs = Vec::new();
    let mut line = c.start_line;
    for (a, b) in nested {
        if a > line {
            runs.push((line, a - 1));
        }
        line = line.max(b.saturating_add(1));
    }
    if line <= c.end_line {
        runs.push((line, c.end_line));
    }
    let src = Src { text, lines };
    let mut pieces = Vec::new();
    for (a, b) in runs {
        src.split_run(a, b, &[], &mut pieces);
    }
    // Trim blank edges; drop pieces with nothing a reader or a query could use
    // (a lone closing brace between two methods).
    pieces
        .into_iter()
        .filter_map(|mut p| {
            while p.start < p.end && src.blank(p.start) {
                p.start += 1;
            }
            while p.end > p.start && src.blank(p.end) {
                p.end -= 1;
            }
            let body = lines.slice(text, p.start, p.end).unwrap_or("");
            body.chars().any(char::is_alphanumeric).then_some(p)
        })
        .collect()
}

fn pieces_to_chunks(
    c: &Chunk,
    pieces: Vec<Piece>,
    text: &str,
    lines: &LineIndex,
    sep: &str,
    ids: &mut HashSet<String>,
) -> Vec<Chunk> {
    let mut unique = |want: String| -> String {
        if ids.insert(want.clone()) {
            return want;
        }
        let mut n = 2u32;
        loop {
            let candidate = format!("{want}~{n}");
            if ids.insert(candidate.clone()) {
                return candidate;
            }
            n += 1;
        }
    };
    let enclosing = c.symbol.as_ref().map(|s| s.qualified.clone());
    let mut out = Vec::with_capacity(pieces.len());
    for (i, p) in pieces.into_iter().enumerate() {
        let mut piece = Chunk::plain(
            c.kind,
            String::new(),
            String::new(),
            p.start,
            p.end,
            PIECE_METHOD,
        );
        if i == 0 && p.start <= first_code_line(c, text, lines) {
            // The head keeps the chunk's identity: the signature is in it, and
            // frame ids, content refs and the graph keep naming it.
            piece.local_id = c.local_id.clone();
            piece.title = format!("{} (lines {}-{})", c.title, p.start, p.end);
            piece.symbol = c.symbol.clone();
            piece.method = c.method;
        } else if let Some((kind_label, name)) = &p.item {
            let mut path: Vec<&str> = enclosing.iter().map(String::as_str).collect();
            path.extend(p.scope.iter().map(String::as_str));
            path.push(name);
            let qualified = path.join(sep);
            piece.local_id = unique(qualified.clone());
            piece.title = format!("{kind_label} {qualified}");
            piece.symbol = Some(SymbolInfo {
                name: name.clone(),
                qualified,
                kind_label: (*kind_label).to_owned(),
            });
            if piece.kind == ChunkKind::Snippet {
                piece.kind = ChunkKind::Symbol;
            }
        } else {
            let mut context = c.title.clone();
            for s in &p.scope {
                context.push_str(sep);
                context.push_str(s);
            }
            piece.local_id = unique(format!("{}@L{}-{}", c.local_id, p.start, p.end));
            piece.title = format!("{context} (lines {}-{})", p.start, p.end);
        }
        if piece.kind == ChunkKind::Doc {
            piece.documents = code_span_names(
                lines
                    .slice(text, piece.start_line, piece.end_line)
                    .unwrap_or(""),
            );
        }
        out.push(piece);
    }
    out
}

/// The first line of `c` that is not blank: where its head piece must start
/// to keep the chunk's identity.
fn first_code_line(c: &Chunk, text: &str, lines: &LineIndex) -> u32 {
    (c.start_line..=c.end_line)
        .find(|&n| {
            lines
                .slice(text, n, n)
                .is_some_and(|l| !l.trim().is_empty())
        })
        .unwrap_or(c.start_line)
}

struct Src<'a> {
    text: &'a str,
    lines: &'a LineIndex,
}

impl Src<'_> {
    fn line(&self, n: u32) -> &str {
        self.lines
            .slice(self.text, n, n)
            .unwrap_or("")
            .trim_end_matches(['\n', '\r'])
    }

    fn blank(&self, n: u32) -> bool {
        self.line(n).trim().is_empty()
    }

    fn bytes(&self, a: u32, b: u32) -> usize {
        self.lines.byte_range(a, b).map_or(0, |r| r.len())
    }

    fn indent(&self, n: u32) -> usize {
        self.line(n)
            .chars()
            .take_while(|c| c.is_whitespace())
            .map(|c| if c == '\t' { 4 } else { 1 })
            .sum()
    }

    /// Cut lines `a..=b` into pieces that fit, appending them to `out`.
    fn split_run(&self, a: u32, b: u32, scope: &[String], out: &mut Vec<Piece>) {
        if self.bytes(a, b) <= MAX_CHUNK_BYTES {
            out.push(Piece {
                start: a,
                end: b,
                item: self.item_at(a, b),
                scope: scope.to_vec(),
            });
            return;
        }
        // Nested items at the shallowest indentation below the run's own first
        // line (past the doc comments and attributes of the item it opens).
        let first = (a..=b)
            .find(|&n| !self.blank(n) && !is_preamble(self.line(n)))
            .unwrap_or(a);
        let starts: Vec<u32> = ((first + 1)..=b)
            .filter(|&n| item_of(self.line(n)).is_some())
            .collect();
        let shallowest = starts.iter().map(|&n| self.indent(n)).min();
        let cuts: Vec<u32> = starts
            .iter()
            .filter(|&&n| Some(self.indent(n)) == shallowest)
            .map(|&n| self.with_preamble(n, a))
            .filter(|&n| n > a)
            .collect();
        if cuts.is_empty() {
            return self.split_by_size(a, b, scope, out);
        }
        let mut bounds = Vec::with_capacity(cuts.len() + 1);
        let mut from = a;
        for cut in cuts {
            if cut > from {
                bounds.push((from, cut - 1));
                from = cut;
            }
        }
        bounds.push((from, b));
        let mut segments = Vec::new();
        for (x, y) in bounds {
            // A segment that opens a container (an impl inside a macro body)
            // gives its own pieces that container's name as scope.
            let mut inner = scope.to_vec();
            if self.bytes(x, y) > MAX_CHUNK_BYTES {
                if let Some((label, name)) = self.item_at(x, y) {
                    if matches!(label, "impl" | "trait" | "module" | "class" | "interface") {
                        inner.push(name);
                    }
                }
            }
            self.split_run(x, y, &inner, &mut segments);
        }
        self.pack(segments, out);
    }

    /// Pack runs of small adjacent pieces together, up to the limit.
    fn pack(&self, segments: Vec<Piece>, out: &mut Vec<Piece>) {
        let mut current: Option<Piece> = None;
        for s in segments {
            let small = self.bytes(s.start, s.end) < SMALL_PIECE_BYTES;
            match current.take() {
                Some(mut c)
                    if small
                        && self.bytes(c.start, c.end) < SMALL_PIECE_BYTES
                        && c.end + 1 == s.start
                        && c.scope == s.scope
                        && self.bytes(c.start, s.end) <= MAX_CHUNK_BYTES =>
                {
                    c.end = s.end;
                    current = Some(c);
                }
                Some(c) => {
                    out.push(c);
                    current = Some(s);
                }
                None => current = Some(s),
            }
        }
        out.extend(current);
    }

    /// Line `n`'s item together with the doc comments and attributes right
    /// above it (never above `floor`).
    fn with_preamble(&self, n: u32, floor: u32) -> u32 {
        let mut s = n;
        while s > floor + 1 && is_preamble(self.line(s - 1)) {
            s -= 1;
        }
        s
    }

    /// The item a piece starts with, past its doc comments and attributes.
    fn item_at(&self, a: u32, b: u32) -> Option<(&'static str, String)> {
        (a..=b)
            .find(|&n| !self.blank(n) && !is_preamble(self.line(n)))
            .and_then(|n| item_of(self.line(n)))
    }

    /// No nested item to cut at: greedy pieces up to the limit, each ending
    /// at the best boundary in its second half.
    fn split_by_size(&self, a: u32, b: u32, scope: &[String], out: &mut Vec<Piece>) {
        let head = self.item_at(a, b);
        // Later pieces of a long item carry its name as context.
        let mut tail_scope = scope.to_vec();
        tail_scope.extend(head.as_ref().map(|(_, name)| name.clone()));
        let mut s = a;
        while s <= b {
            // Largest end that fits (at least one line).
            let mut e = s;
            while e < b && self.bytes(s, e + 1) <= MAX_CHUNK_BYTES {
                e += 1;
            }
            if e < b {
                let floor = s + (e - s) / 2;
                e = (floor..=e)
                    .max_by_key(|&k| (self.boundary(k), std::cmp::Reverse(self.indent(k + 1)), k))
                    .unwrap_or(e);
            }
            out.push(Piece {
                start: s,
                end: e,
                item: if s == a { head.clone() } else { None },
                scope: if s == a {
                    scope.to_vec()
                } else {
                    tail_scope.clone()
                },
            });
            s = e + 1;
        }
    }

    /// How good a place the end of line `k` is to cut: 2 at a blank line,
    /// 1 after a statement or block end, 0 elsewhere.
    fn boundary(&self, k: u32) -> u8 {
        if self.blank(k) || self.blank(k + 1) {
            return 2;
        }
        let t = self.line(k).trim_end();
        u8::from(t.ends_with([';', '}', ',', ')', ']']))
    }
}

/// A doc comment, comment or attribute line that belongs to the item below.
fn is_preamble(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("///")
        || t.starts_with("//")
        || t.starts_with("#[")
        || t.starts_with("/**")
        || t.starts_with("* ")
        || t.starts_with("*/")
        || t.starts_with('@')
        || (t.starts_with("# ") && !t.starts_with("# ["))
}

/// The item a line declares, from its text alone: `(kind label, name)`.
/// Works inside macro bodies and token trees, where the grammar sees only
/// tokens; only keywords that start a definition in the supported languages
/// count (`const`, `static` and `type` lines are too small to cut at).
pub(crate) fn item_of(line: &str) -> Option<(&'static str, String)> {
    let mut t = line.trim_start();
    const MODIFIERS: &[&str] = &[
        "pub ",
        "export ",
        "default ",
        "async ",
        "unsafe ",
        "const ",
        "extern \"C\" ",
        "public ",
        "private ",
        "protected ",
        "static ",
        "abstract ",
        "final ",
        "override ",
    ];
    loop {
        let before = t;
        if let Some(rest) = t.strip_prefix("pub(") {
            t = rest.split_once(')').map_or("", |(_, r)| r).trim_start();
        }
        for m in MODIFIERS {
            if let Some(rest) = t.strip_prefix(m) {
                t = rest.trim_start();
            }
        }
        if t == before {
            break;
        }
    }
    const KEYWORDS: &[(&str, &str)] = &[
        ("fn ", "function"),
        ("def ", "function"),
        ("function ", "function"),
        ("func ", "function"),
        ("struct ", "struct"),
        ("enum ", "enum"),
        ("union ", "union"),
        ("trait ", "trait"),
        ("mod ", "module"),
        ("class ", "class"),
        ("interface ", "interface"),
        ("macro_rules! ", "macro"),
    ];
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
            .collect()
    };
    if let Some(rest) = t.strip_prefix("impl") {
        if !(rest.starts_with(' ') || rest.starts_with('<')) {
            return None;
        }
        let head = rest.split(['{']).next().unwrap_or(rest);
        let head = head.split(" where").next().unwrap_or(head).trim();
        // `impl<T> Trait for Type<T>` is scoped by `Type`, as the grammar path does.
        let head = if head.starts_with('<') {
            skip_generics(head)
        } else {
            head
        };
        let ty = head.rsplit(" for ").next().unwrap_or(head).trim();
        let base = ident(ty.trim_start_matches(['&', '*']));
        return (!base.is_empty()).then_some(("impl", base));
    }
    for (kw, label) in KEYWORDS {
        if let Some(rest) = t.strip_prefix(kw) {
            // Go methods: `func (c *Client) Send(` names `Send`.
            let rest = if *kw == "func " && rest.starts_with('(') {
                rest.split_once(')').map_or("", |(_, r)| r)
            } else {
                rest
            };
            let name = ident(rest.trim_start_matches('*'));
            if !name.is_empty() && !name.starts_with('$') {
                return Some((label, name));
            }
        }
    }
    None
}

/// The text after a leading `<…>` generic list (nesting-aware).
fn skip_generics(s: &str) -> &str {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    return s[i + 1..].trim_start();
                }
            }
            _ => {}
        }
    }
    ""
}

#[cfg(test)]
#[path = "fit_tests.rs"]
mod tests;
