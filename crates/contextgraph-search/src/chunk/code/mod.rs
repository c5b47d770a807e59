//! Code chunking with tree-sitter: definitions become `symbol` chunks, the
//! top-level code between them becomes `snippet` windows.
//!
//! Definitions are recognised by walking the syntax tree against a small
//! per-language table of node kinds (each language's file in
//! [`crate::lang`]) rather than by tree-sitter queries: a table cannot fail
//! to compile against a grammar version, it is cheap, and it tells us
//! directly which definitions are containers (impl, class, namespace) whose
//! members are chunks of their own.
//!
//! A symbol's region starts at the contiguous doc comments and attributes
//! above it (so the frame carries signature + doc comment + body) and ends at
//! the definition's last line.

use std::cell::RefCell;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use tree_sitter::{Node, Parser, Tree};

use super::window::windows;
use super::{Chunk, ChunkKind, LineIndex, SymbolInfo, OUTLINE_MIN_LINES};
use crate::lang::spec::{Class, LangSpec, Source};
use crate::lang::Language;

mod edges;
mod nodes;

use crate::lang::node_ext::NodeExt;
use nodes::{row_of_end, wrapper_of};

/// A parse doing more work than this is abandoned and the file windowed:
/// one pathological file must not stall an index build.
///
/// Counted in tree-sitter's progress callbacks (one per 100 parser
/// operations), not in time, so that a file is chunked the same way on an
/// idle machine and a loaded one: with the earlier 2 s wall-clock deadline a
/// large file parsed under load could be windowed, and its chunks, frame
/// ids and ranking then depended on what else the machine was doing. On
/// the 16k-file registry corpus the largest parse took 9,227 callbacks
/// (a 910 KB file; 7 callbacks per KB is typical) and the callbacks came
/// at 11–98 per ms (median 35) on the shared 2-core machine, so this limit
/// is ~6x the largest real file and ~1.7 s of parsing at the median rate.
const MAX_PARSE_PROGRESS: u64 = 60_000;

/// A backstop in wall-clock time for a parse whose operations are
/// pathologically slow, far above what [`MAX_PARSE_PROGRESS`] takes at any
/// rate measured; only such a file's chunking can depend on the load.
const PARSE_BACKSTOP: Duration = Duration::from_secs(20);

/// Deepest nesting walked; deeper trees (generated code) are windowed.
const MAX_DEPTH: usize = 256;

thread_local! {
    /// Parsers are reused per thread and language: creating one per file costs
    /// more than parsing a small file.
    static PARSERS: RefCell<HashMap<Language, Parser>> = RefCell::new(HashMap::new());
}

/// Chunk a code file; `None` when the grammar cannot handle it (the caller
/// then windows the file).
pub fn chunk_code(
    rel_path: &str,
    lang: Language,
    text: &str,
    lines: &LineIndex,
) -> Option<Vec<Chunk>> {
    let spec = lang.spec()?;
    // Positions in the masked text are the file's (see `parse_mask`).
    let tree = parse(lang, &lang.parse_input(text))?;
    let root = tree.root_node();
    let mut cx = Cx {
        lang,
        spec,
        src: text.as_bytes(),
        defs: Vec::new(),
        module: (spec.module_prefix)(rel_path),
        rel_path,
        too_deep: false,
    };
    let mut scope = Vec::new();
    cx.find_defs(root, &mut scope, None, 0);
    if cx.too_deep || (root.has_error() && cx.defs.is_empty() && lines.line_count() > 3) {
        return None;
    }
    let mut ids = HashMap::new();
    let mut chunks: Vec<Chunk> = Vec::with_capacity(cx.defs.len() + 4);
    for i in 0..cx.defs.len() {
        chunks.push(cx.def_chunk(i, &mut ids, text, lines));
    }
    let defs = &cx.defs;
    // Nested spans: each container excludes its members' lines from its own text.
    for (i, d) in defs.iter().enumerate() {
        if let Some(p) = d.parent {
            let span = (chunks[i].start_line, chunks[i].end_line);
            chunks[p].nested.push(span);
        }
    }
    // Top-level code between definitions: snippet windows.
    let mut covered: Vec<(u32, u32)> = defs
        .iter()
        .enumerate()
        .filter(|(_, d)| d.parent.is_none())
        .map(|(i, _)| (chunks[i].start_line, chunks[i].end_line))
        .collect();
    covered.sort_unstable();
    let mut next = 1u32;
    let last_line = lines.line_count();
    let mut gaps = Vec::new();
    for (a, b) in covered
        .iter()
        .copied()
        .chain(std::iter::once((last_line + 1, last_line + 1)))
    {
        if a > next {
            gaps.push((next, a - 1));
        }
        next = next.max(b + 1);
    }
    for (a, b) in gaps {
        chunks.extend(
            windows(text, lines, a, b, ChunkKind::Snippet)
                .into_iter()
                .map(|mut w| {
                    w.method = "tree-sitter-gap";
                    w
                }),
        );
    }
    // Oversized definitions (macro bodies, long functions, data tables) are cut
    // into pieces that fit a frame; edges then attach to the pieces.
    let mut chunks = super::fit::fit_chunks(chunks, text, lines, lang.scope_separator());
    cx.attach_edges(root, &mut chunks, lines.line_count());
    Some(chunks)
}

/// The scope segments `module`, then `scope`, then `name`, joined by
/// `sep`: what `[module…, scope…, name].join(sep)` gives, written into one
/// string of the right size instead of copying every segment into a
/// vector first (five allocations per definition, on every definition a
/// build chunks; issue 29).
fn qualified_name(module: &[String], scope: &[String], name: &str, sep: &str) -> String {
    let segments = module.iter().chain(scope).map(String::as_str);
    let len = segments.clone().map(|s| s.len() + sep.len()).sum::<usize>() + name.len();
    let mut out = String::with_capacity(len);
    for s in segments {
        out.push_str(s);
        out.push_str(sep);
    }
    out.push_str(name);
    out
}

/// A symbol's qualified name without the module path its file already
/// says (`net::retry_loop` in `src/net.rs` is `retry_loop`,
/// `pkg.mod.Client.send` in `pkg/mod.py` is `Client.send`): what a citation
/// that names the file needs to name the symbol. A name that does not start
/// with its file's module path is returned whole.
pub fn name_in_file<'q>(lang: Language, rel_path: &str, qualified: &'q str) -> &'q str {
    let module = lang
        .spec()
        .map_or_else(Vec::new, |s| (s.module_prefix)(rel_path));
    if module.is_empty() {
        return qualified;
    }
    let sep = lang.scope_separator();
    let mut rest = qualified;
    for segment in &module {
        match rest
            .strip_prefix(segment.as_str())
            .and_then(|r| r.strip_prefix(sep))
        {
            Some(r) if !r.is_empty() => rest = r,
            _ => return qualified,
        }
    }
    rest
}

fn parse(lang: Language, text: &str) -> Option<Tree> {
    parse_within(lang, text, MAX_PARSE_PROGRESS)
}

/// [`parse`] abandoned after `max_progress` progress callbacks.
fn parse_within(lang: Language, text: &str, max_progress: u64) -> Option<Tree> {
    let grammar = lang.grammar()?;
    PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let parser = match parsers.entry(lang) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let mut p = Parser::new();
                p.set_language(&grammar).ok()?;
                v.insert(p)
            }
        };
        let started = Instant::now();
        let bytes = text.as_bytes();
        let mut progress = 0u64;
        let mut cancel = |_: &tree_sitter::ParseState| {
            progress += 1;
            progress > max_progress || started.elapsed() > PARSE_BACKSTOP
        };
        let options = tree_sitter::ParseOptions::new().progress_callback(&mut cancel);
        let tree = parser.parse_with_options(
            &mut |offset, _| bytes.get(offset..).unwrap_or(&[]),
            None,
            Some(options),
        );
        if tree.is_none() {
            // A cancelled parser keeps partial state; reset it for the next file.
            parser.reset();
        }
        tree
    })
}

/// One definition found in the tree.
struct Def<'t> {
    /// The node whose extent is the definition (a wrapper such as
    /// `export_statement` or `decorated_definition` when there is one).
    outer: Node<'t>,
    /// Where the definition ends: `outer`, or the last clause merged into
    /// it ([`LangSpec::merge_clauses`]).
    last: Node<'t>,
    /// First line with the doc comments and attributes above `outer`, when
    /// found while walking its siblings.
    start_line: Option<u32>,
    /// Where the body starts (for the outline's header).
    body: Option<Node<'t>>,
    name: String,
    qualified: String,
    kind_label: &'static str,
    title_override: Option<String>,
    is_container: bool,
    parent: Option<usize>,
}

struct Cx<'s> {
    lang: Language,
    /// What the chunker knows of `lang`.
    spec: &'static LangSpec,
    src: &'s [u8],
    defs: Vec<Def<'s>>,
    module: Vec<String>,
    rel_path: &'s str,
    too_deep: bool,
}

/// Short constants, statics and type aliases are left to the line windows
/// around them: as frames of their own they would multiply the chunk count
/// (a bindings file declares thousands) for one line of content each.
fn is_trivial(class: &Class<'_>, node: Node<'_>) -> bool {
    let lines = node.end_position().row - node.start_position().row + 1;
    matches!(
        class.kind_label,
        "const" | "static" | "type" | "typedef" | "macro call"
    ) && lines < 4
}

impl<'s> Cx<'s> {
    fn text(&self, n: Node<'_>) -> &'s str {
        Source(self.src).text(n)
    }

    fn find_defs(
        &mut self,
        node: Node<'s>,
        scope: &mut Vec<String>,
        parent: Option<usize>,
        depth: usize,
    ) {
        if depth > MAX_DEPTH {
            self.too_deep = true;
            return;
        }
        let mut cursor = node.walk();
        // All children, anonymous ones too: a definition's doc comments and
        // attributes are read from the siblings before it here, where they
        // are at hand (`prev_sibling` rescans the parent on every call).
        let children: Vec<Node<'s>> = node.children(&mut cursor).collect();
        // The scope segment a scope statement (`namespace X;`) added for
        // the definitions after it in this body.
        let mut statement_scope = false;
        // The definition found last at this level, while only doc kinds
        // follow it: the one a clause of the same name extends.
        let mut open_clause: Option<usize> = None;
        for (k, &child) in children.iter().enumerate() {
            if !child.is_named() {
                continue;
            }
            // Read once for the kind lists below.
            let kind = child.kind_name();
            match self
                .spec
                .classify(Source(self.src), child, kind)
                .filter(|c| !is_trivial(c, child))
            {
                Some(class) => {
                    let outer = wrapper_of(self.spec, child);
                    if let Some(prev) = open_clause.filter(|&p| {
                        let d = &self.defs[p];
                        class.container_body.is_none()
                            && !d.is_container
                            && d.name == class.name
                            && d.kind_label == class.kind_label
                    }) {
                        self.defs[prev].last = outer;
                        continue;
                    }
                    let start_line = (outer == child).then(|| {
                        let before = children[..k].iter().rev().copied();
                        if self.spec.docs_before_body {
                            let above =
                                std::iter::successors(node.prev_sibling(), |p| p.prev_sibling());
                            self.doc_start(outer, &class.name, before.chain(above))
                        } else {
                            self.doc_start(outer, &class.name, before)
                        }
                    });
                    let qualified = qualified_name(
                        &self.module,
                        scope,
                        &class.name,
                        self.lang.scope_separator(),
                    );
                    // A container's members are scoped by its name unless
                    // it says otherwise; the name itself moves into the def.
                    let members = class.container_body.map(|body| {
                        let segment = class.member_scope.unwrap_or_else(|| class.name.clone());
                        (body, segment)
                    });
                    let idx = self.defs.len();
                    self.defs.push(Def {
                        outer,
                        last: outer,
                        start_line,
                        body: class.body,
                        name: class.name,
                        qualified,
                        kind_label: class.kind_label,
                        title_override: class.title_override,
                        is_container: members.is_some(),
                        parent,
                    });
                    if let Some((body, segment)) = members {
                        scope.push(segment);
                        self.find_defs(body, scope, Some(idx), depth + 1);
                        scope.pop();
                    }
                    if self.spec.merge_clauses {
                        open_clause = Some(idx);
                    }
                }
                None => {
                    if !self.spec.doc_kinds.contains(&kind) {
                        open_clause = None;
                    }
                    if self.spec.scope_statements.contains(&kind) {
                        if let Some(name) = Source(self.src).field_text(child, "name") {
                            if statement_scope {
                                scope.pop();
                            }
                            scope.push(name);
                            statement_scope = true;
                        }
                        self.find_defs(child, scope, parent, depth + 1);
                    } else if self.spec.descend.contains(&kind) || child.is_error() {
                        // Definitions hide inside wrappers and preprocessor
                        // blocks; statement bodies of top-level code are
                        // walked too (cheap). An ERROR node is walked as
                        // well: where the grammar lost its way (jq's
                        // `builtin.c` after an `#ifdef alloca` dance, a C#
                        // file with an unsafe construct) the parser's
                        // recovery still holds whole, valid definitions
                        // inside it, and skipping it made the rest of the
                        // file line windows without a symbol.
                        self.find_defs(child, scope, parent, depth + 1);
                    }
                }
            }
        }
        if statement_scope {
            scope.pop();
        }
    }

    /// The first line of `outer` with the contiguous doc comments,
    /// attributes and decorators above it; `before` are its preceding
    /// siblings, nearest first.
    fn doc_start(
        &self,
        outer: Node<'_>,
        name: &str,
        before: impl Iterator<Item = Node<'s>>,
    ) -> u32 {
        let mut start_line = outer.start_position().row as u32 + 1;
        for p in before {
            if !self.spec.doc_kinds.contains(&p.kind_name())
                || row_of_end(p) + 2 < start_line
                || !(self.spec.doc_belongs)(Source(self.src), p, name)
            {
                break;
            }
            start_line = p.start_position().row as u32 + 1;
        }
        start_line
    }

    /// Definition `index` as a chunk; `ids` counts the qualified names
    /// seen so far (a repeated one gets `~2`, `~3`, … in its local id),
    /// keyed by the defs' own names rather than copies of them.
    fn def_chunk<'d>(
        &'d self,
        index: usize,
        ids: &mut HashMap<&'d str, u32>,
        text: &str,
        lines: &LineIndex,
    ) -> Chunk {
        let d = &self.defs[index];
        let end_line = row_of_end(d.last) + 1;
        let start_line = d.start_line.unwrap_or_else(|| {
            let before = std::iter::successors(d.outer.prev_sibling(), |p| p.prev_sibling());
            self.doc_start(d.outer, &d.name, before)
        });
        let seen = ids.entry(d.qualified.as_str()).or_insert(0);
        *seen += 1;
        let local_id = if *seen > 1 {
            format!("{}~{seen}", d.qualified)
        } else {
            d.qualified.clone()
        };
        let title = match &d.title_override {
            Some(t) => t.clone(),
            None => format!("{} {}", d.kind_label, d.qualified),
        };
        let mut chunk = Chunk::plain(
            ChunkKind::Symbol,
            local_id,
            title,
            start_line,
            end_line,
            "tree-sitter",
        );
        chunk.symbol = Some(SymbolInfo {
            name: d
                .name
                .rsplit(['.', ':'])
                .next()
                .unwrap_or(&d.name)
                .to_owned(),
            qualified: d.qualified.clone(),
            kind_label: d.kind_label.to_owned(),
        });
        if end_line - start_line + 1 > OUTLINE_MIN_LINES {
            chunk.outline = Some(self.outline(index, text, lines, start_line, end_line));
        }
        chunk
    }

    /// The compact rendering of a long item: doc + signature, one line per
    /// member (containers) or an elision marker (bodies), and the closing line.
    fn outline(&self, index: usize, text: &str, lines: &LineIndex, start: u32, end: u32) -> String {
        let d = &self.defs[index];
        let line = |n: u32| {
            lines
                .slice(text, n, n)
                .unwrap_or("")
                .trim_end_matches(['\n', '\r'])
        };
        let body_row = d.body.map_or(start, |b| b.start_position().row as u32 + 1);
        let header_end = body_row.clamp(start, end).min(start + 12);
        let mut out = String::new();
        for n in start..=header_end {
            out.push_str(line(n));
            out.push('\n');
        }
        let members: Vec<(u32, u32)> = self
            .defs
            .iter()
            .filter(|m| m.parent == Some(index))
            .map(|m| {
                (
                    m.outer.start_position().row as u32 + 1,
                    row_of_end(m.last) + 1,
                )
            })
            .collect();
        if d.is_container && !members.is_empty() {
            for (a, b) in members {
                if a <= header_end {
                    continue;
                }
                out.push_str(line(a));
                out.push_str(&format!("  ⋯ L{a}-{b}\n"));
            }
        } else if end > header_end + 1 {
            let indent: String = line(header_end + 1)
                .chars()
                .take_while(|c| c.is_whitespace())
                .collect();
            out.push_str(&format!(
                "{indent}⋯ {} lines elided (L{}-{})\n",
                end - header_end - 1,
                header_end + 1,
                end - 1
            ));
        }
        if end > header_end {
            out.push_str(line(end));
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rust source whose parse needs well over `n` progress callbacks.
    fn long_source(functions: usize) -> String {
        (0..functions)
            .map(|i| format!("fn f{i}(a: u32, b: u32) -> u32 {{ let c = a * {i} + b; if c > 3 {{ c - 1 }} else {{ c + 1 }} }}\n"))
            .collect()
    }

    #[test]
    fn a_parse_over_its_work_limit_is_abandoned_whatever_the_time() {
        let text = long_source(2_000);
        assert!(parse_within(Language::Rust, &text, MAX_PARSE_PROGRESS).is_some());
        // The same text with a small work limit is abandoned on every run:
        // the limit counts the parser's work, not the clock.
        for _ in 0..3 {
            assert!(parse_within(Language::Rust, &text, 10).is_none());
        }
        // The parser is reset after a cancelled parse and serves the next file.
        assert!(parse_within(Language::Rust, "fn ok() {}\n", 10).is_some());
    }

    /// The work limit bounds every grammar, the nineteen alike: the
    /// progress callback counts the parser's operations whatever the
    /// language, so a file that is slow for its grammar is windowed at the
    /// same point on every machine.
    #[test]
    fn every_grammar_is_bounded_by_the_work_limit() {
        let lines = "a = f(b, c) + g(d)\n".repeat(5_000);
        for lang in Language::ALL.into_iter().filter(Language::is_code) {
            // PHP outside `<?php` is template text, one token.
            let text = match lang {
                Language::Php => format!("<?php\n{lines}"),
                _ => lines.clone(),
            };
            assert!(
                parse_within(lang, &text, 10).is_none(),
                "{lang:?}: a parse over its work limit is abandoned"
            );
            assert!(
                parse_within(lang, "x\n", 10).is_some(),
                "{lang:?}: the parser serves the next file"
            );
        }
    }

    /// jq's `builtin.c` opens with an `#ifdef` ladder around `alloca` that
    /// the C grammar cannot parse: everything after it is one ERROR node,
    /// and its 79 functions were line windows. The parser's recovery keeps
    /// whole definitions inside the ERROR node; they are symbols.
    #[test]
    fn definitions_inside_a_parse_error_are_symbols() {
        let text = "#include <stdlib.h>\n\
            #ifdef HAVE_ALLOCA_H\n\
            # include <alloca.h>\n\
            #elif !defined alloca\n\
            # ifdef __GNUC__\n\
            #  define alloca __builtin_alloca\n\
            # elif !defined HAVE_ALLOCA\n\
            #  ifdef  __cplusplus\n\
            extern \"C\"\n\
            #  endif\n\
            void *alloca (size_t);\n\
            # endif\n\
            #endif\n\
            #include <assert.h>\n\
            \n\
            static int type_error(int bad, const char *msg) {\n\
            \x20 return bad + (msg != 0);\n\
            }\n\
            \n\
            static int f_plus(int a, int b) {\n\
            \x20 return a + b;\n\
            }\n";
        assert_c_symbols_despite_a_parse_error(
            "src/builtin.c",
            text,
            &[("type_error", 16, 18), ("f_plus", 20, 22)],
        );
    }

    /// `text`, whose plain parse has an error (the case a test is about),
    /// chunks into the C `symbols` given with their line ranges.
    fn assert_c_symbols_despite_a_parse_error(
        path: &str,
        text: &str,
        symbols: &[(&str, u32, u32)],
    ) {
        let tree = parse(Language::C, text).expect("parses");
        assert!(
            tree.root_node().has_error(),
            "the fixture must provoke the parse error it is about"
        );
        let lines = LineIndex::new(text);
        let chunks = chunk_code(path, Language::C, text, &lines).expect("chunked");
        for &(name, start, end) in symbols {
            let c = chunks
                .iter()
                .find(|c| c.symbol.as_ref().is_some_and(|s| s.name == name))
                .unwrap_or_else(|| panic!("{name} is a symbol: {chunks:#?}"));
            assert_eq!((c.start_line, c.end_line), (start, end), "{name}");
        }
    }

    /// tmux's `utf8.c`: an `#ifdef` whose branches each open a `switch`
    /// brace made the rest of the file one parse error. The chunker parses
    /// the first branch only (`lang/preproc.rs`); both functions are
    /// symbols with their whole bodies.
    #[test]
    fn conditional_branches_that_each_open_a_brace_parse_as_one() {
        let text = "static enum utf8_state\n\
            utf8_width(struct utf8_data *ud, int *width)\n\
            {\n\
            \twchar_t\twc;\n\
            #ifdef HAVE_UTF8PROC\n\
            \tswitch (utf8proc_mbtowc(&wc, ud->data, ud->size)) {\n\
            #else\n\
            \tswitch (mbtowc(&wc, ud->data, ud->size)) {\n\
            #endif\n\
            \tcase -1:\n\
            \t\treturn (UTF8_ERROR);\n\
            \t}\n\
            \treturn (UTF8_DONE);\n\
            }\n\
            \n\
            void\n\
            utf8_copy(struct utf8_data *to, const struct utf8_data *from)\n\
            {\n\
            \tmemcpy(to, from, sizeof *to);\n\
            }\n";
        assert_c_symbols_despite_a_parse_error(
            "utf8.c",
            text,
            &[("utf8_width", 1, 14), ("utf8_copy", 16, 20)],
        );
    }

    /// The qualified name is the segments joined, as `join` gives it, for
    /// every count of module and scope segments (none included) and for
    /// both separators; a segment dropped, doubled or reordered fails.
    #[test]
    fn qualified_names_are_the_joined_segments() {
        let pool = ["net", "a", "", "Client", "ß", "x::y"];
        for sep in ["::", "."] {
            for m in 0..=3 {
                for k in 0..=3 {
                    for name in ["retry_loop", "", "impl Tr for X"] {
                        let module: Vec<String> =
                            pool.iter().take(m).map(|s| s.to_string()).collect();
                        let scope: Vec<String> =
                            pool.iter().rev().take(k).map(|s| s.to_string()).collect();
                        let mut path = module.clone();
                        path.extend(scope.iter().cloned());
                        path.push(name.to_owned());
                        assert_eq!(
                            qualified_name(&module, &scope, name, sep),
                            path.join(sep),
                            "{module:?} {scope:?} {name:?} {sep:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn names_in_file_drop_only_the_files_own_module_path() {
        assert_eq!(
            name_in_file(Language::Rust, "src/net.rs", "net::retry_loop"),
            "retry_loop"
        );
        assert_eq!(
            name_in_file(
                Language::Rust,
                "crates/a/src/index/mod.rs",
                "index::Index::upsert"
            ),
            "Index::upsert"
        );
        assert_eq!(name_in_file(Language::Rust, "src/lib.rs", "parse"), "parse");
        assert_eq!(
            name_in_file(Language::Python, "pkg/mod.py", "pkg.mod.Client.send"),
            "Client.send"
        );
        // Not under the file's module path, or nothing left after it: whole.
        assert_eq!(
            name_in_file(Language::Rust, "src/net.rs", "other::x"),
            "other::x"
        );
        assert_eq!(name_in_file(Language::Rust, "src/net.rs", "net"), "net");
        assert_eq!(
            name_in_file(Language::Go, "net/x.go", "Client.Send"),
            "Client.Send"
        );
    }
}
