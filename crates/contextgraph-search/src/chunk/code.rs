//! Code chunking with tree-sitter: definitions become `symbol` chunks, the
//! top-level code between them becomes `snippet` windows.
//!
//! Definitions are recognised by walking the syntax tree against a small
//! per-language table of node kinds rather than by tree-sitter queries: a
//! table cannot fail to compile against a grammar version, it is cheap, and
//! it tells us directly which definitions are containers (impl, class,
//! namespace) whose members are chunks of their own.
//!
//! A symbol's region starts at the contiguous doc comments and attributes
//! above it (so the frame carries signature + doc comment + body) and ends at
//! the definition's last line.

use std::cell::RefCell;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use tree_sitter::{Node, Parser, Tree};

use super::window::windows;
use super::{
    Chunk, ChunkKind, ImportRef, LineIndex, SymbolInfo, MAX_EDGES_PER_CHUNK, OUTLINE_MIN_LINES,
};
use crate::lang::Language;

/// A parse taking longer than this is abandoned and the file windowed: one
/// pathological file must not stall an index build.
const PARSE_DEADLINE: Duration = Duration::from_secs(2);

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
    let tree = parse(lang, text)?;
    let root = tree.root_node();
    let mut cx = Cx {
        lang,
        src: text.as_bytes(),
        defs: Vec::new(),
        module: module_prefix(lang, rel_path),
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
    cx.attach_edges(root, &mut chunks, lines.line_count());
    Some(chunks)
}

fn parse(lang: Language, text: &str) -> Option<Tree> {
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
        let mut cancel = |_: &tree_sitter::ParseState| started.elapsed() > PARSE_DEADLINE;
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
    matches!(class.kind_label, "const" | "static" | "type" | "typedef") && lines < 4
}

/// What the per-language table says about a node.
struct Class<'t> {
    name: String,
    kind_label: &'static str,
    /// Members are chunked separately (impl, class, namespace…).
    container_body: Option<Node<'t>>,
    body: Option<Node<'t>>,
    /// Scope the members get instead of `name` (Rust `impl Trait for T` → `T`).
    member_scope: Option<String>,
    title_override: Option<String>,
}

impl<'s> Cx<'s> {
    fn text(&self, n: Node<'_>) -> &'s str {
        n.utf8_text(self.src).unwrap_or("")
    }

    fn field_text(&self, n: Node<'_>, field: &str) -> Option<String> {
        n.child_by_field_name(field)
            .map(|c| self.text(c).to_owned())
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
        let children: Vec<Node<'s>> = node.named_children(&mut cursor).collect();
        for child in children {
            match self.classify(child).filter(|c| !is_trivial(c, child)) {
                Some(class) => {
                    let outer = wrapper_of(self.lang, child);
                    let mut path = self.module.clone();
                    path.extend(scope.iter().cloned());
                    path.push(class.name.clone());
                    let qualified = path.join(self.lang.scope_separator());
                    let idx = self.defs.len();
                    self.defs.push(Def {
                        outer,
                        body: class.body,
                        name: class.name.clone(),
                        qualified,
                        kind_label: class.kind_label,
                        title_override: class.title_override,
                        is_container: class.container_body.is_some(),
                        parent,
                    });
                    if let Some(body) = class.container_body {
                        scope.push(class.member_scope.unwrap_or(class.name));
                        self.find_defs(body, scope, Some(idx), depth + 1);
                        scope.pop();
                    }
                }
                None => {
                    // Definitions hide inside wrappers and preprocessor blocks;
                    // statement bodies of top-level code are walked too (cheap).
                    if descend_into(self.lang, child.kind()) {
                        self.find_defs(child, scope, parent, depth + 1);
                    }
                }
            }
        }
    }

    /// The per-language table of definition node kinds.
    fn classify(&self, n: Node<'s>) -> Option<Class<'s>> {
        let kind = n.kind();
        let simple = |label: &'static str,
                      name_field: &str,
                      body_field: &str,
                      container: bool|
         -> Option<Class<'s>> {
            let name = self.field_text(n, name_field)?;
            let body = n.child_by_field_name(body_field);
            Some(Class {
                name,
                kind_label: label,
                container_body: if container { body } else { None },
                body,
                member_scope: None,
                title_override: None,
            })
        };
        match self.lang {
            Language::Rust => match kind {
                "function_item" => simple("function", "name", "body", false),
                "function_signature_item" => simple("function", "name", "body", false),
                "struct_item" => simple("struct", "name", "body", false),
                "enum_item" => simple("enum", "name", "body", false),
                "union_item" => simple("union", "name", "body", false),
                "type_item" => simple("type", "name", "type", false),
                "const_item" => simple("const", "name", "value", false),
                "static_item" => simple("static", "name", "value", false),
                "macro_definition" => simple("macro", "name", "", false),
                "trait_item" => simple("trait", "name", "body", true),
                "mod_item" => n
                    .child_by_field_name("body")
                    .and_then(|_| simple("module", "name", "body", true)),
                "impl_item" => {
                    let ty = self.field_text(n, "type")?;
                    let ty_base = ty.split('<').next().unwrap_or(&ty).trim().to_owned();
                    let (name, title) = match self.field_text(n, "trait") {
                        Some(t) => (
                            format!("impl {t} for {ty_base}"),
                            format!("impl {t} for {ty}"),
                        ),
                        None => (format!("impl {ty_base}"), format!("impl {ty}")),
                    };
                    let body = n.child_by_field_name("body");
                    Some(Class {
                        name,
                        kind_label: "impl",
                        container_body: body,
                        body,
                        member_scope: Some(ty_base),
                        title_override: Some(title),
                    })
                }
                _ => None,
            },
            Language::Python => match kind {
                "function_definition" => simple("function", "name", "body", false),
                "class_definition" => simple("class", "name", "body", true),
                _ => None,
            },
            Language::JavaScript | Language::TypeScript | Language::Tsx => match kind {
                "function_declaration"
                | "generator_function_declaration"
                | "function_signature" => simple("function", "name", "body", false),
                "class_declaration" | "abstract_class_declaration" | "class" => {
                    simple("class", "name", "body", true)
                }
                "method_definition" | "method_signature" | "abstract_method_signature" => {
                    simple("method", "name", "body", false)
                }
                "interface_declaration" => simple("interface", "name", "body", false),
                "type_alias_declaration" => simple("type", "name", "value", false),
                "enum_declaration" => simple("enum", "name", "body", false),
                "internal_module" | "module" => simple("namespace", "name", "body", true),
                "lexical_declaration" | "variable_declaration" => {
                    // `const retry = (…) => {…}`: a function bound to a name.
                    let mut c = n.walk();
                    let decl = n
                        .named_children(&mut c)
                        .find(|d| d.kind() == "variable_declarator")?;
                    let value = decl.child_by_field_name("value")?;
                    let label = match value.kind() {
                        "arrow_function"
                        | "function_expression"
                        | "function"
                        | "generator_function" => "function",
                        "class" => "class",
                        _ => return None,
                    };
                    Some(Class {
                        name: self.field_text(decl, "name")?,
                        kind_label: label,
                        container_body: None,
                        body: value.child_by_field_name("body"),
                        member_scope: None,
                        title_override: None,
                    })
                }
                _ => None,
            },
            Language::Go => match kind {
                "function_declaration" => simple("function", "name", "body", false),
                "method_declaration" => {
                    let name = self.field_text(n, "name")?;
                    let receiver = n
                        .child_by_field_name("receiver")
                        .map(|r| go_receiver_type(self.text(r)))
                        .unwrap_or_default();
                    let qualified_name = if receiver.is_empty() {
                        name
                    } else {
                        format!("{receiver}.{name}")
                    };
                    Some(Class {
                        name: qualified_name,
                        kind_label: "method",
                        container_body: None,
                        body: n.child_by_field_name("body"),
                        member_scope: None,
                        title_override: None,
                    })
                }
                "type_declaration" => {
                    let mut c = n.walk();
                    let spec = n
                        .named_children(&mut c)
                        .find(|s| matches!(s.kind(), "type_spec" | "type_alias"))?;
                    let label = match spec.child_by_field_name("type").map(|t| t.kind()) {
                        Some("struct_type") => "struct",
                        Some("interface_type") => "interface",
                        _ => "type",
                    };
                    Some(Class {
                        name: self.field_text(spec, "name")?,
                        kind_label: label,
                        container_body: None,
                        body: spec.child_by_field_name("type"),
                        member_scope: None,
                        title_override: None,
                    })
                }
                _ => None,
            },
            Language::Java => match kind {
                "class_declaration" | "record_declaration" => simple("class", "name", "body", true),
                "interface_declaration" | "annotation_type_declaration" => {
                    simple("interface", "name", "body", true)
                }
                "enum_declaration" => simple("enum", "name", "body", true),
                "method_declaration" => simple("method", "name", "body", false),
                "constructor_declaration" => simple("constructor", "name", "body", false),
                _ => None,
            },
            Language::C | Language::Cpp => match kind {
                "function_definition" => {
                    let decl = n.child_by_field_name("declarator")?;
                    let full = c_declarator_name(self, decl)?;
                    Some(Class {
                        name: full,
                        kind_label: "function",
                        container_body: None,
                        body: n.child_by_field_name("body"),
                        member_scope: None,
                        title_override: None,
                    })
                }
                "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier" => {
                    let body = n.child_by_field_name("body")?;
                    let label = match kind {
                        "struct_specifier" => "struct",
                        "union_specifier" => "union",
                        "enum_specifier" => "enum",
                        _ => "class",
                    };
                    Some(Class {
                        name: self.field_text(n, "name")?,
                        kind_label: label,
                        container_body: (self.lang == Language::Cpp && label != "enum")
                            .then_some(body),
                        body: Some(body),
                        member_scope: None,
                        title_override: None,
                    })
                }
                "type_definition" => {
                    let decl = n.child_by_field_name("declarator")?;
                    if decl.kind() != "type_identifier" {
                        return None;
                    }
                    Some(Class {
                        name: self.text(decl).to_owned(),
                        kind_label: "typedef",
                        container_body: None,
                        body: n.child_by_field_name("type"),
                        member_scope: None,
                        title_override: None,
                    })
                }
                "namespace_definition" => simple("namespace", "name", "body", true),
                _ => None,
            },
            _ => None,
        }
    }

    fn def_chunk(
        &self,
        index: usize,
        ids: &mut HashMap<String, u32>,
        text: &str,
        lines: &LineIndex,
    ) -> Chunk {
        let d = &self.defs[index];
        let end_line = row_of_end(d.outer) + 1;
        let mut start_line = d.outer.start_position().row as u32 + 1;
        // Contiguous doc comments / attributes / decorators above the definition.
        let mut prev = d.outer.prev_sibling();
        while let Some(p) = prev {
            if !is_doc_or_attribute(self.lang, p.kind()) || row_of_end(p) + 2 < start_line {
                break;
            }
            start_line = p.start_position().row as u32 + 1;
            prev = p.prev_sibling();
        }
        let mut local_id = d.qualified.clone();
        let seen = ids.entry(local_id.clone()).or_insert(0);
        *seen += 1;
        if *seen > 1 {
            local_id = format!("{local_id}~{seen}");
        }
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
                    row_of_end(m.outer) + 1,
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

    /// Calls, type references and imports, each attached to the innermost
    /// chunk whose lines contain it.
    fn attach_edges(&self, root: Node<'s>, chunks: &mut [Chunk], line_count: u32) {
        let mut owner: Vec<Option<usize>> = vec![None; line_count as usize + 2];
        let mut order: Vec<usize> = (0..chunks.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(chunks[i].end_line - chunks[i].start_line));
        for i in order {
            for l in chunks[i].start_line..=chunks[i].end_line.min(line_count) {
                owner[l as usize] = Some(i);
            }
        }
        let mut stack = vec![(root, 0usize)];
        while let Some((n, depth)) = stack.pop() {
            let line = n.start_position().row + 1;
            let target = owner.get(line).copied().flatten();
            if let Some(t) = target {
                self.edges_of(n, &mut chunks[t]);
            }
            if depth < MAX_DEPTH {
                let mut c = n.walk();
                for child in n.named_children(&mut c) {
                    stack.push((child, depth + 1));
                }
            }
        }
    }

    fn edges_of(&self, n: Node<'s>, chunk: &mut Chunk) {
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

    fn push_import(&self, chunk: &mut Chunk, spec: &str) {
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
    fn import_specs(&self, n: Node<'s>) -> Vec<String> {
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

fn row_of_end(n: Node<'_>) -> u32 {
    let end = n.end_position();
    // A node ending at column 0 ends with the previous line's newline.
    let row = if end.column == 0 && end.row > n.start_position().row {
        end.row - 1
    } else {
        end.row
    };
    row as u32
}

/// The node whose extent a definition takes: its export/decorator/template wrapper.
fn wrapper_of(lang: Language, n: Node<'_>) -> Node<'_> {
    let wrappers: &[&str] = match lang {
        Language::Python => &["decorated_definition"],
        Language::JavaScript | Language::TypeScript | Language::Tsx => &["export_statement"],
        Language::Cpp => &["template_declaration"],
        _ => &[],
    };
    let mut cur = n;
    while let Some(p) = cur.parent() {
        if wrappers.contains(&p.kind()) {
            cur = p;
        } else {
            break;
        }
    }
    cur
}

fn descend_into(lang: Language, kind: &str) -> bool {
    match lang {
        Language::Rust => matches!(kind, "declaration_list" | "foreign_mod_item"),
        Language::Python => matches!(
            kind,
            "decorated_definition"
                | "if_statement"
                | "block"
                | "try_statement"
                | "else_clause"
                | "elif_clause"
        ),
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            matches!(
                kind,
                "export_statement" | "ambient_declaration" | "statement_block" | "declaration"
            )
        }
        Language::Go => false,
        Language::Java => false,
        Language::C | Language::Cpp => matches!(
            kind,
            "preproc_if"
                | "preproc_ifdef"
                | "preproc_else"
                | "preproc_elif"
                | "linkage_specification"
                | "declaration_list"
                | "template_declaration"
                | "field_declaration_list"
        ),
        _ => false,
    }
}

fn is_doc_or_attribute(lang: Language, kind: &str) -> bool {
    match lang {
        Language::Rust => matches!(kind, "line_comment" | "block_comment" | "attribute_item"),
        Language::Java => matches!(kind, "line_comment" | "block_comment"),
        Language::Python => kind == "comment",
        _ => kind == "comment",
    }
}

/// The node naming what a call expression calls.
fn callee(n: Node<'_>) -> Option<Node<'_>> {
    let target = match n.kind() {
        "method_invocation" => return n.child_by_field_name("name"),
        "macro_invocation" => n.child_by_field_name("macro")?,
        "new_expression" => n.child_by_field_name("constructor")?,
        "object_creation_expression" => n.child_by_field_name("type")?,
        _ => n.child_by_field_name("function")?,
    };
    name_of(target, 0)
}

fn name_of(n: Node<'_>, depth: u8) -> Option<Node<'_>> {
    if depth > 8 {
        return None;
    }
    match n.kind() {
        "identifier" | "field_identifier" | "property_identifier" | "type_identifier" => Some(n),
        "field_expression" => n
            .child_by_field_name("field")
            .and_then(|f| name_of(f, depth + 1)),
        "member_expression" => n
            .child_by_field_name("property")
            .and_then(|f| name_of(f, depth + 1)),
        "selector_expression" => n
            .child_by_field_name("field")
            .and_then(|f| name_of(f, depth + 1)),
        "attribute" => n
            .child_by_field_name("attribute")
            .and_then(|f| name_of(f, depth + 1)),
        "scoped_identifier"
        | "qualified_identifier"
        | "scoped_type_identifier"
        | "template_function"
        | "generic_type" => n
            .child_by_field_name("name")
            .or_else(|| n.named_child(0))
            .and_then(|f| name_of(f, depth + 1)),
        "generic_function" => n
            .child_by_field_name("function")
            .and_then(|f| name_of(f, depth + 1)),
        _ => None,
    }
}

fn first_string_arg(cx: &Cx<'_>, call: Node<'_>) -> Option<String> {
    let args = call.child_by_field_name("arguments")?;
    let first = args.named_child(0)?;
    (first.kind() == "string").then(|| {
        cx.text(first)
            .trim_matches(|c| c == '"' || c == '\'' || c == '`')
            .to_owned()
    })
}

/// The name a C/C++ function declarator declares (`Foo::bar`, `main`).
fn c_declarator_name(cx: &Cx<'_>, mut n: Node<'_>) -> Option<String> {
    for _ in 0..16 {
        match n.kind() {
            "identifier"
            | "field_identifier"
            | "qualified_identifier"
            | "destructor_name"
            | "operator_name" => {
                return Some(cx.text(n).split_whitespace().collect::<Vec<_>>().join(" "));
            }
            _ => {
                n = n
                    .child_by_field_name("declarator")
                    .or_else(|| n.named_child(0))?
            }
        }
    }
    None
}

fn go_receiver_type(receiver: &str) -> String {
    // `(c *Client)` → `Client`; `(Client[T])` → `Client`.
    let inner = receiver.trim_matches(|c| c == '(' || c == ')');
    let ty = inner.split_whitespace().last().unwrap_or("");
    ty.trim_start_matches('*')
        .split('[')
        .next()
        .unwrap_or("")
        .to_owned()
}

/// The module path a file's definitions are qualified with: Rust modules
/// from the path under `src/` (`src/net.rs` → `net`), Python dotted modules.
/// Other languages qualify by nesting only.
fn module_prefix(lang: Language, rel_path: &str) -> Vec<String> {
    let no_ext = rel_path.rsplit_once('.').map_or(rel_path, |(a, _)| a);
    match lang {
        Language::Rust => {
            let under_src = match no_ext.rfind("src/") {
                Some(i) if i == 0 || no_ext.as_bytes()[i - 1] == b'/' => &no_ext[i + 4..],
                _ => no_ext.rsplit('/').next().unwrap_or(no_ext),
            };
            let mut segs: Vec<String> = under_src.split('/').map(str::to_owned).collect();
            if matches!(
                segs.last().map(String::as_str),
                Some("lib" | "main" | "mod")
            ) {
                segs.pop();
            }
            if segs.first().is_some_and(|s| s == "bin") {
                segs.clear();
            }
            segs.retain(|s| !s.is_empty());
            segs
        }
        Language::Python => {
            let trimmed = no_ext.strip_prefix("src/").unwrap_or(no_ext);
            let mut segs: Vec<String> = trimmed.split('/').map(str::to_owned).collect();
            if segs.last().is_some_and(|s| s == "__init__") {
                segs.pop();
            }
            segs.retain(|s| !s.is_empty());
            segs
        }
        _ => Vec::new(),
    }
}

/// Join a directory and a relative path, resolving `.` and `..`; `None` when
/// the result would climb out of the workspace.
pub fn join_rel(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

fn import_candidates(lang: Language, rel_path: &str, spec: &str) -> Vec<String> {
    let dir = rel_path.rsplit_once('/').map_or("", |(d, _)| d);
    let mut out = Vec::new();
    match lang {
        Language::Rust => {
            let file_stem = rel_path.rsplit('/').next().unwrap_or("");
            let own_dir = if matches!(file_stem, "lib.rs" | "main.rs" | "mod.rs") {
                dir.to_owned()
            } else {
                rel_path.trim_end_matches(".rs").to_owned()
            };
            if let Some(m) = spec.strip_prefix("mod ") {
                out.push(
                    format!("{own_dir}/{m}.rs")
                        .trim_start_matches('/')
                        .to_owned(),
                );
                out.push(
                    format!("{own_dir}/{m}/mod.rs")
                        .trim_start_matches('/')
                        .to_owned(),
                );
            } else if let Some(rest) = spec.strip_prefix("crate::") {
                let src = match rel_path.rfind("src/") {
                    Some(i) => &rel_path[..i + 3],
                    None => dir,
                };
                let segs: Vec<&str> = rest.split("::").collect();
                for k in (1..=segs.len()).rev() {
                    let p = segs[..k].join("/");
                    out.push(format!("{src}/{p}.rs").trim_start_matches('/').to_owned());
                    out.push(
                        format!("{src}/{p}/mod.rs")
                            .trim_start_matches('/')
                            .to_owned(),
                    );
                }
            }
        }
        Language::Python => {
            let dots = spec.bytes().take_while(|&b| b == b'.').count();
            let path = spec[dots..].replace('.', "/");
            let base = if dots > 0 {
                let mut d = dir.to_owned();
                for _ in 1..dots {
                    d = d
                        .rsplit_once('/')
                        .map_or(String::new(), |(a, _)| a.to_owned());
                }
                d
            } else {
                String::new()
            };
            let stem = join_rel(&base, &path).unwrap_or_default();
            if !stem.is_empty() {
                for root in ["", "src/"] {
                    out.push(format!("{root}{stem}.py"));
                    out.push(format!("{root}{stem}/__init__.py"));
                }
            }
        }
        Language::JavaScript | Language::TypeScript | Language::Tsx if spec.starts_with('.') => {
            if let Some(base) = join_rel(dir, spec) {
                out.push(base.clone());
                for ext in [
                    ".ts",
                    ".tsx",
                    ".js",
                    ".jsx",
                    ".mjs",
                    "/index.ts",
                    "/index.tsx",
                    "/index.js",
                ] {
                    out.push(format!("{base}{ext}"));
                }
            }
        }
        Language::Java => {
            let path = spec.trim_end_matches(".*").replace('.', "/");
            for root in ["src/main/java/", "src/", ""] {
                out.push(format!("{root}{path}.java"));
            }
        }
        Language::C | Language::Cpp if !spec.starts_with('<') => {
            if let Some(p) = join_rel(dir, spec) {
                out.push(p);
            }
            out.push(spec.to_owned());
            out.push(format!("include/{spec}"));
        }
        _ => {}
    }
    out.dedup();
    out
}
