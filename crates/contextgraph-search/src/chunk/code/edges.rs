//! Calls, type references and imports found in the syntax tree, attached
//! to the chunks that contain them (the code graph's raw edges).

use tree_sitter::Node;

use super::imports::import_candidates;
use super::nodes::{callee, first_string_arg};
use super::{Cx, MAX_DEPTH};
use crate::chunk::{Chunk, ImportRef, MAX_EDGES_PER_CHUNK};
use crate::lang::Language;

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
        while let Some((n, depth)) = stack.pop() {
            let line = n.start_position().row + 1;
            let target = owner.get(line).copied().flatten();
            if let Some(t) = target {
                self.edges_of(n, &mut chunks[t]);
            }
            if depth < MAX_DEPTH {
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
