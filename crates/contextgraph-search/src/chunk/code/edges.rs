//! Calls, type references and imports found in the syntax tree, attached
//! to the chunks that contain them (the code graph's raw edges).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use tree_sitter::Node;

use super::imports::import_candidates;
use super::nodes::{callee, first_string_arg};
use super::{Cx, MAX_DEPTH};
use crate::chunk::{Chunk, ImportRef, MAX_EDGES_PER_CHUNK};
use crate::lang::Language;

/// The node kinds [`Cx::edges_of`] acts on; it ignores every other kind.
/// The edge walk visits every node of a file, so it tests kind ids against
/// a table built from this list ([`edge_kind_ids`]) instead of fetching
/// each node's kind name (a C-string length and a UTF-8 check) and comparing
/// it with each of these: that was 1.5% of a cold build's instructions.
pub(super) const EDGE_KINDS: [&str; 15] = [
    "call_expression",
    "call",
    "method_invocation",
    "new_expression",
    "object_creation_expression",
    "macro_invocation",
    "type_identifier",
    "use_declaration",
    "import_statement",
    "import_from_statement",
    "import_spec",
    "import_declaration",
    "preproc_include",
    "export_statement",
    "mod_item",
];

/// Node kinds whose subtrees hold none of [`EDGE_KINDS`], so the edge walk
/// does not enter them. Rust's token trees (macro arguments and bodies,
/// attribute arguments) are flat tokens by the grammar's definition:
/// identifiers, literals, punctuation and nested token trees, never an
/// expression or a type. In generated bindings (a `link!` per function)
/// and macro-heavy code they are most of the tree's nodes.
pub(super) const OPAQUE_KINDS: [&str; 2] = ["token_tree", "token_tree_pattern"];

/// What the edge walk does at a node of some kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KindRole {
    /// [`Cx::edges_of`] acts on it (one of [`EDGE_KINDS`]).
    Edge,
    /// Its subtree is skipped (one of [`OPAQUE_KINDS`]).
    Opaque,
    /// Walked through.
    Other,
}

thread_local! {
    /// [`edge_kind_ids`] per language, built once per thread.
    static EDGE_KIND_IDS: RefCell<HashMap<Language, Rc<[KindRole]>>> = RefCell::new(HashMap::new());
}

/// Per kind id of `grammar` (the grammar of `lang`), its [`KindRole`] by
/// its kind name. Exact: a node's kind name is its grammar's name for its
/// kind id, aliases included.
pub(super) fn edge_kind_ids(lang: Language, grammar: &tree_sitter::Language) -> Rc<[KindRole]> {
    EDGE_KIND_IDS.with(|cell| {
        cell.borrow_mut()
            .entry(lang)
            .or_insert_with(|| {
                (0..grammar.node_kind_count())
                    .map(|id| {
                        match u16::try_from(id)
                            .ok()
                            .and_then(|id| grammar.node_kind_for_id(id))
                        {
                            Some(k) if EDGE_KINDS.contains(&k) => KindRole::Edge,
                            Some(k) if OPAQUE_KINDS.contains(&k) => KindRole::Opaque,
                            _ => KindRole::Other,
                        }
                    })
                    .collect()
            })
            .clone()
    })
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
        let mut stack = vec![(root, 0usize)];
        // One cursor for the whole walk: a cursor per node cost an
        // allocation and a free for every named node of the file.
        let mut cursor = root.walk();
        let edge_kinds = edge_kind_ids(self.lang, &root.language());
        while let Some((n, depth)) = stack.pop() {
            // A kind id beyond the table (none in practice) is looked at
            // and walked through.
            let role = edge_kinds
                .get(usize::from(n.kind_id()))
                .copied()
                .unwrap_or(KindRole::Edge);
            if role == KindRole::Edge {
                let line = n.start_position().row + 1;
                if let Some(t) = owner.get(line).copied().flatten() {
                    self.edges_of(n, &mut chunks[t]);
                }
            }
            if depth < MAX_DEPTH && role != KindRole::Opaque {
                for child in n.named_children(&mut cursor) {
                    stack.push((child, depth + 1));
                }
            }
        }
    }

    pub(super) fn edges_of(&self, n: Node<'s>, chunk: &mut Chunk) {
        let push = |list: &mut Vec<String>, name: &str| {
            if name.len() >= 2
                && list.len() < MAX_EDGES_PER_CHUNK
                && !list.iter().any(|x| x == name)
            {
                list.push(name.to_owned());
            }
        };
        match n.kind() {
            "call_expression"
            | "call"
            | "method_invocation"
            | "new_expression"
            | "object_creation_expression"
            | "macro_invocation" => {
                if let Some(name) = callee(n).map(|c| self.text(c)) {
                    if name == "require" && n.kind() == "call_expression" {
                        if let Some(spec) = first_string_arg(self, n) {
                            self.push_import(chunk, &spec);
                        }
                    }
                    push(&mut chunk.calls, name);
                }
            }
            "type_identifier" => push(&mut chunk.references, self.text(n)),
            "use_declaration"
            | "import_statement"
            | "import_from_statement"
            | "import_spec"
            | "import_declaration"
            | "preproc_include"
            | "export_statement"
            | "mod_item" => {
                for spec in self.import_specs(n) {
                    self.push_import(chunk, &spec);
                }
            }
            _ => {}
        }
    }

    pub(super) fn push_import(&self, chunk: &mut Chunk, spec: &str) {
        if chunk.imports.len() >= MAX_EDGES_PER_CHUNK
            || chunk.imports.iter().any(|i| i.module == spec)
        {
            return;
        }
        let candidates = import_candidates(self.lang, self.rel_path, spec);
        chunk.imports.push(ImportRef {
            module: spec.to_owned(),
            candidates,
        });
    }

    /// The module strings an import node names.
    pub(super) fn import_specs(&self, n: Node<'s>) -> Vec<String> {
        let unquote = |s: &str| {
            s.trim_matches(|c| c == '"' || c == '\'' || c == '`' || c == '<' || c == '>')
                .to_owned()
        };
        match (self.lang, n.kind()) {
            (Language::Rust, "use_declaration") => n
                .child_by_field_name("argument")
                .map(|a| {
                    let t = self.text(a);
                    let base = t.split("::{").next().unwrap_or(t);
                    vec![base.split(" as ").next().unwrap_or(base).trim().to_owned()]
                })
                .unwrap_or_default(),
            (Language::Rust, "mod_item") if n.child_by_field_name("body").is_none() => self
                .field_text(n, "name")
                .map(|m| vec![format!("mod {m}")])
                .unwrap_or_default(),
            (Language::Python, "import_statement") => {
                let mut c = n.walk();
                n.named_children(&mut c)
                    .map(|x| {
                        let t = if x.kind() == "aliased_import" {
                            x.child_by_field_name("name").map_or("", |nm| self.text(nm))
                        } else {
                            self.text(x)
                        };
                        t.to_owned()
                    })
                    .filter(|s| !s.is_empty())
                    .collect()
            }
            (Language::Python, "import_from_statement") => {
                self.field_text(n, "module_name").into_iter().collect()
            }
            (
                Language::JavaScript | Language::TypeScript | Language::Tsx,
                "import_statement" | "export_statement",
            ) => self
                .field_text(n, "source")
                .map(|s| vec![unquote(&s)])
                .unwrap_or_default(),
            (Language::Go, "import_spec") => self
                .field_text(n, "path")
                .map(|s| vec![unquote(&s)])
                .unwrap_or_default(),
            (Language::Java, "import_declaration") => {
                let t = self.text(n);
                let t = t
                    .trim_start_matches("import")
                    .trim()
                    .trim_start_matches("static")
                    .trim();
                vec![t.trim_end_matches(';').trim().to_owned()]
            }
            (Language::C | Language::Cpp, "preproc_include") => n
                .child_by_field_name("path")
                .map(|p| {
                    let t = self.text(p);
                    if p.kind() == "system_lib_string" {
                        vec![t.to_owned()]
                    } else {
                        vec![unquote(t)]
                    }
                })
                .unwrap_or_default(),
            _ => Vec::new(),
        }
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

    /// The kind-id table says exactly which nodes `edges_of` acts on: it
    /// agrees with the kind names, and a node left out of it adds nothing
    /// to a chunk. Fails when an arm is added to `edges_of` for a kind
    /// missing from [`EDGE_KINDS`].
    #[test]
    fn the_edge_kind_table_covers_every_kind_edges_of_acts_on() {
        for (lang, rel_path, text) in SAMPLES {
            let lines = LineIndex::new(text);
            let chunks = chunk_code(rel_path, lang, text, &lines).expect("sample parses");
            assert!(
                chunks.iter().any(|c| !c.calls.is_empty()),
                "{lang:?}: the sample has calls"
            );
            let mut blank = chunks[0].clone();
            blank.calls.clear();
            blank.references.clear();
            blank.imports.clear();
            let tree = parse(lang, text).expect("sample parses");
            let root = tree.root_node();
            let table = edge_kind_ids(lang, &root.language());
            let cx = Cx {
                lang,
                src: text.as_bytes(),
                defs: Vec::new(),
                module: Vec::new(),
                rel_path,
                too_deep: false,
            };
            let mut listed = 0;
            let mut stack = vec![(root, false)];
            while let Some((n, in_opaque)) = stack.pop() {
                let role = table[usize::from(n.kind_id())];
                let in_table = role == KindRole::Edge;
                assert_eq!(
                    in_table,
                    EDGE_KINDS.contains(&n.kind()),
                    "{lang:?} {}",
                    n.kind()
                );
                assert_eq!(
                    role == KindRole::Opaque,
                    OPAQUE_KINDS.contains(&n.kind()),
                    "{lang:?} {}",
                    n.kind()
                );
                assert!(
                    !(in_opaque && in_table),
                    "{lang:?}: {} inside an opaque kind",
                    n.kind()
                );
                if in_table {
                    listed += 1;
                } else {
                    let mut chunk = blank.clone();
                    cx.edges_of(n, &mut chunk);
                    assert_eq!(chunk, blank, "{lang:?}: {} added an edge", n.kind());
                }
                let mut c = n.walk();
                let opaque = in_opaque || role == KindRole::Opaque;
                stack.extend(n.children(&mut c).map(|child| (child, opaque)));
            }
            assert!(listed > 0, "{lang:?}: the sample has listed kinds");
        }
    }
}
