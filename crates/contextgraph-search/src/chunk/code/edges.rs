//! Calls, type references and imports found in the syntax tree, attached
//! to the chunks that contain them (the code graph's raw edges).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use tree_sitter::Node;

use super::{Cx, MAX_DEPTH};
use crate::chunk::{Chunk, ImportRef, MAX_EDGES_PER_CHUNK};
use crate::lang::spec::{LangSpec, Source};
use crate::lang::Language;

/// What the edge walk does at a node of some kind, by the language's
/// [`LangSpec`]. The edge walk visits every node of a file, so it looks a
/// node's role up by kind id in a table built from the spec's kind lists
/// ([`edge_kind_ids`]) instead of fetching each node's kind name (a
/// C-string length and a UTF-8 check) and comparing it with each of them:
/// that was 1.5% of a cold build's instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KindRole {
    /// A call ([`LangSpec::call_kinds`]).
    Call,
    /// A type name ([`LangSpec::reference_kinds`]).
    Reference,
    /// An import ([`LangSpec::import_kinds`]).
    Import,
    /// Its subtree is skipped ([`LangSpec::opaque_kinds`]).
    Opaque,
    /// Walked through.
    Other,
}

thread_local! {
    /// [`edge_kind_ids`] per language, built once per thread.
    static EDGE_KIND_IDS: RefCell<HashMap<Language, Rc<[KindRole]>>> = RefCell::new(HashMap::new());
}

/// The role of the kind named `kind` in `spec` (imports first: a kind
/// that is both is read as an import).
pub(super) fn role_of(spec: &LangSpec, kind: &str) -> KindRole {
    if spec.import_kinds.contains(&kind) {
        KindRole::Import
    } else if spec.call_kinds.contains(&kind) {
        KindRole::Call
    } else if spec.reference_kinds.contains(&kind) {
        KindRole::Reference
    } else if spec.opaque_kinds.contains(&kind) {
        KindRole::Opaque
    } else {
        KindRole::Other
    }
}

/// Per kind id of `grammar` (the grammar of `lang`), its [`KindRole`] by
/// its kind name. Exact: a node's kind name is its grammar's name for its
/// kind id, aliases included.
pub(super) fn edge_kind_ids(
    lang: Language,
    spec: &LangSpec,
    grammar: &tree_sitter::Language,
) -> Rc<[KindRole]> {
    EDGE_KIND_IDS.with(|cell| {
        cell.borrow_mut()
            .entry(lang)
            .or_insert_with(|| {
                (0..grammar.node_kind_count())
                    .map(|id| {
                        u16::try_from(id)
                            .ok()
                            .and_then(|id| grammar.node_kind_for_id(id))
                            .map_or(KindRole::Other, |k| role_of(spec, k))
                    })
                    .collect()
            })
            .clone()
    })
}

/// The role of node `n` by the kind-id table; a kind id beyond the table
/// (none in practice) is walked through.
fn role_in(roles: &[KindRole], n: Node<'_>) -> KindRole {
    roles
        .get(usize::from(n.kind_id()))
        .copied()
        .unwrap_or(KindRole::Other)
}

/// A node with at most this many children (anonymous ones included) has
/// them read by index, one with more by a cursor: reading child `i` walks
/// the node's children from the first, so a node's children read by index
/// cost a number of steps quadratic in their count, each step a few dozen
/// instructions, against several hundred for a cursor step.
const CHILDREN_BY_INDEX: usize = 16;

/// The nodes under `root` (itself included) that add edges, with their
/// roles, in the order the walk visits them: `root`, then the named
/// children of every visited node that is neither opaque nor `MAX_DEPTH`
/// deep, from a stack (so from right to left in pre-order).
///
/// A node's named children were read with a cursor reset on it; a cursor
/// step costs several hundred instructions (repetitions are hidden binary
/// trees the cursor climbs through, and it recomputes each child's
/// position and alias as it goes) and the walk took one for every child,
/// anonymous tokens included. Most nodes have a few children: those are
/// read by index (tree-sitter descends by the hidden nodes' child counts),
/// the same children in the same order, up to the last named one (by the
/// node's count of them, as before), and a node without named children
/// (identifiers, literals) is not looked into.
fn acting_nodes<'t>(root: Node<'t>, roles: &[KindRole]) -> Vec<(Node<'t>, KindRole)> {
    let mut found = Vec::new();
    let mut stack = vec![(root, 0usize)];
    // For nodes with many children.
    let mut cursor = root.walk();
    while let Some((n, depth)) = stack.pop() {
        let role = role_in(roles, n);
        if !matches!(role, KindRole::Other | KindRole::Opaque) {
            found.push((n, role));
        }
        if depth >= MAX_DEPTH || role == KindRole::Opaque {
            continue;
        }
        let mut named = n.named_child_count();
        if named == 0 {
            continue;
        }
        let count = n.child_count();
        if count <= CHILDREN_BY_INDEX {
            // Up to the last named child: the anonymous tokens after it
            // (`)`, `}`, `;`) are the dearest to read by index.
            for i in 0..count {
                if let Some(child) = n.child(i).filter(|c| c.is_named()) {
                    stack.push((child, depth + 1));
                    named -= 1;
                    if named == 0 {
                        break;
                    }
                }
            }
        } else {
            stack.extend(n.named_children(&mut cursor).map(|c| (c, depth + 1)));
        }
    }
    found
}

impl<'s> Cx<'s> {
    /// Calls, type references and imports, each attached to the innermost
    /// chunk whose lines contain it.
    pub(super) fn attach_edges(&self, root: Node<'s>, chunks: &mut [Chunk], line_count: u32) {
        let mut owner: Vec<Option<usize>> = vec![None; line_count as usize + 2];
        let mut order: Vec<usize> = (0..chunks.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(chunks[i].end_line - chunks[i].start_line));
        for i in order {
            for l in chunks[i].start_line..=chunks[i].end_line.min(line_count) {
                owner[l as usize] = Some(i);
            }
        }
        let roles = edge_kind_ids(self.lang, self.spec, &root.language());
        // Nodes with edges, in the order their edges are added (the order
        // of each chunk's edge lists, capped at `MAX_EDGES_PER_CHUNK`).
        for (n, role) in acting_nodes(root, &roles) {
            let line = n.start_position().row + 1;
            if let Some(t) = owner.get(line).copied().flatten() {
                self.edges_of(n, role, &mut chunks[t]);
            }
        }
    }

    /// The edges node `n` (of `role`) adds to `chunk`.
    pub(super) fn edges_of(&self, n: Node<'s>, role: KindRole, chunk: &mut Chunk) {
        let push = |list: &mut Vec<String>, name: &str| {
            if name.len() >= 2
                && list.len() < MAX_EDGES_PER_CHUNK
                && !list.iter().any(|x| x == name)
            {
                list.push(name.to_owned());
            }
        };
        let src = Source(self.src);
        match role {
            KindRole::Call => {
                if let Some(name) = (self.spec.callee)(src, n).map(|c| self.text(c)) {
                    if let Some(spec) = (self.spec.call_import)(src, name, n) {
                        self.push_import(chunk, &spec);
                    }
                    if !self.spec.not_calls.contains(&name) {
                        push(&mut chunk.calls, name);
                    }
                }
            }
            KindRole::Reference => {
                if let Some(name) = (self.spec.reference)(src, n) {
                    push(&mut chunk.references, self.text(name));
                }
            }
            KindRole::Import => {
                for spec in (self.spec.import_specs)(src, n) {
                    self.push_import(chunk, &spec);
                }
            }
            KindRole::Opaque | KindRole::Other => {}
        }
    }

    pub(super) fn push_import(&self, chunk: &mut Chunk, spec: &str) {
        if chunk.imports.len() >= MAX_EDGES_PER_CHUNK
            || chunk.imports.iter().any(|i| i.module == spec)
        {
            return;
        }
        chunk.imports.push(ImportRef {
            module: spec.to_owned(),
            candidates: self.spec.resolve_import(self.rel_path, spec),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::{chunk_code, parse};
    use super::*;
    use crate::chunk::LineIndex;

    /// One file per grammar, with calls, type references and imports.
    const SAMPLES: [(Language, &str, &str); 9] = [
        (
            Language::Rust,
            "src/net.rs",
            "use std::io;\nmod wire;\n#[derive(Debug)]\nstruct Client;\nmacro_rules! again { ($c:expr) => { retry($c) }; }\nfn retry(c: Client) -> Reply {\n    let r = send(c);\n    assert_eq!(parse(r), Reply::new(Vec::<u8>::new()));\n    println!(\"{r}\");\n    r\n}\n",
        ),
        (
            Language::Python,
            "pkg/net.py",
            "import os\nfrom pkg import wire\n\ndef retry(c):\n    r = send(c)\n    return Reply(r)\n",
        ),
        (
            Language::JavaScript,
            "src/net.js",
            "import x from './wire';\nconst fs = require('fs');\nexport function retry(c) {\n  return new Reply(send(c));\n}\n",
        ),
        (
            Language::TypeScript,
            "src/net.ts",
            "import { Wire } from './wire';\nexport function retry(c: Client): Reply {\n  return new Reply(send(c));\n}\n",
        ),
        (
            Language::Tsx,
            "src/net.tsx",
            "import { Wire } from './wire';\nexport function retry(c: Client): Reply {\n  return <div>{send(c)}</div>;\n}\n",
        ),
        (
            Language::Go,
            "net/net.go",
            "package net\n\nimport \"fmt\"\n\nfunc Retry(c Client) Reply {\n\treturn send(c)\n}\n",
        ),
        (
            Language::Java,
            "src/Net.java",
            "import java.util.List;\n\nclass Net {\n  Reply retry(Client c) {\n    return new Reply(send(c));\n  }\n}\n",
        ),
        (
            Language::C,
            "src/net.c",
            "#include <stdio.h>\n#include \"wire.h\"\n\nstruct reply retry(struct client c) {\n  return send(c);\n}\n",
        ),
        (
            Language::Cpp,
            "src/net.cpp",
            "#include <vector>\n\nReply retry(Client c) {\n  return send(c);\n}\n",
        ),
    ];

    /// The walk [`acting_nodes`] replaced: a stack of nodes, each popped
    /// node pushing its named children read with a cursor.
    fn stack_walk<'t>(root: Node<'t>, roles: &[KindRole]) -> Vec<(Node<'t>, KindRole)> {
        let mut visited = Vec::new();
        let mut stack = vec![(root, 0usize)];
        let mut cursor = root.walk();
        while let Some((n, depth)) = stack.pop() {
            let role = role_in(roles, n);
            if !matches!(role, KindRole::Other | KindRole::Opaque) {
                visited.push((n, role));
            }
            if depth < MAX_DEPTH && role != KindRole::Opaque {
                for child in n.named_children(&mut cursor) {
                    stack.push((child, depth + 1));
                }
            }
        }
        visited
    }

    /// `text` (in `lang`) yields the nodes with edges that the stack walk
    /// visits, in its order; returns how many.
    fn assert_walks_agree(lang: Language, what: &str, text: &str) -> usize {
        let spec = lang.spec().expect("a code language");
        let tree = parse(lang, &lang.parse_input(text)).expect("parses");
        let root = tree.root_node();
        let roles = edge_kind_ids(lang, spec, &root.language());
        let walked = acting_nodes(root, &roles);
        let expected = stack_walk(root, &roles);
        assert!(
            walked == expected,
            "{lang:?} {what}: {} nodes walked, {} expected",
            walked.len(),
            expected.len()
        );
        walked.len()
    }

    /// The walk reading children by index finds the nodes the walk with a
    /// cursor visited, in the same order (the order of each chunk's capped
    /// edge lists): on the samples, on sources in every grammar (parse
    /// errors included), on this crate's own sources (nodes with more
    /// children than are read by index), on token trees (opaque) and on
    /// nesting deeper than `MAX_DEPTH`, where both stop.
    #[test]
    fn the_walk_visits_what_the_cursor_walk_did_in_its_order() {
        for (lang, rel_path, text) in SAMPLES {
            assert!(assert_walks_agree(lang, rel_path, text) > 0);
        }
        let texts = [
            "fn a(b: C) -> D { e.f(g::h(1)); i!(j) }\nimpl<K> L for M<K> { fn n() {} }\n",
            "def a(b):\n    return c.d(e)\nclass F(G):\n    x = h[1]\n",
            "function a(b) { return c.d(new E(f)); }\nclass G extends H { m() {} }\n",
            "package a\nfunc (r *R) B(c C) D { return e.F(g) }\n",
            "#include <a.h>\nint b(struct c d) { return e(d.f, 1, 2, 3, 4, 5, 6, 7, 8, 9); }\n",
            "}} fn ( { [ \"unterminated\n a b c d e f g h i j k l m n o p q r s t u v w\n",
        ];
        for lang in Language::ALL.into_iter().filter(Language::is_code) {
            for text in texts {
                assert_walks_agree(lang, "a sample", text);
            }
        }
        let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
        let mut dirs = vec![std::path::PathBuf::from(src)];
        let mut files = 0;
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("src is readable") {
                let path = entry.expect("a directory entry").path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).expect("UTF-8 source");
                    assert_walks_agree(Language::Rust, &path.display().to_string(), &text);
                    files += 1;
                }
            }
        }
        assert!(files > 50, "{files} source files walked");
        let broken = "fn a() { b(c(; }\nstruct { x: Y\nfn d() -> E { f::<G>(h) }\n";
        assert!(assert_walks_agree(Language::Rust, "a parse error", broken) > 0);
        let tokens = "macro_rules! m { ($x:expr) => { f($x) }; }\nfn g() { m!(h(1)); }\n";
        assert!(assert_walks_agree(Language::Rust, "token trees", tokens) > 0);
        // 400 nested calls: the walks stop at the same depth.
        let deep = format!("fn f() {{ {}0{} }}\n", "g(".repeat(400), ")".repeat(400));
        let found = assert_walks_agree(Language::Rust, "deep nesting", &deep);
        assert!(
            (1..400).contains(&found),
            "the depth limit cuts the walk: {found} of 400 calls"
        );
        let deep_py = format!("x = {}0{}\n", "g(".repeat(300), ")".repeat(300));
        assert!(assert_walks_agree(Language::Python, "deep Python", &deep_py) < 300);
    }

    /// The kind-id table agrees with the spec's kind lists by name, no
    /// listed kind sits inside an opaque subtree, and each sample's calls
    /// are found.
    #[test]
    fn the_kind_id_table_agrees_with_the_spec_by_name() {
        for (lang, rel_path, text) in SAMPLES {
            let spec = lang.spec().expect("a code language");
            let lines = LineIndex::new(text);
            let chunks = chunk_code(rel_path, lang, text, &lines).expect("sample parses");
            assert!(
                chunks.iter().any(|c| !c.calls.is_empty()),
                "{lang:?}: the sample has calls"
            );
            let tree = parse(lang, text).expect("sample parses");
            let root = tree.root_node();
            let table = edge_kind_ids(lang, spec, &root.language());
            let mut listed = 0;
            let mut stack = vec![(root, false)];
            while let Some((n, in_opaque)) = stack.pop() {
                let role = table[usize::from(n.kind_id())];
                assert_eq!(role, role_of(spec, n.kind()), "{lang:?} {}", n.kind());
                let acts = !matches!(role, KindRole::Other | KindRole::Opaque);
                assert!(
                    !(in_opaque && acts),
                    "{lang:?}: {} inside an opaque kind",
                    n.kind()
                );
                listed += usize::from(acts);
                let mut c = n.walk();
                let opaque = in_opaque || role == KindRole::Opaque;
                stack.extend(n.children(&mut c).map(|child| (child, opaque)));
            }
            assert!(listed > 0, "{lang:?}: the sample has listed kinds");
        }
    }
}
