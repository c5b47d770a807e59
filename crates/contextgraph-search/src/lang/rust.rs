//! Rust: items, `impl` blocks scoped by their type, item-level macro
//! blocks; `use` and `mod` imports; module paths from the path under `src/`.

use tree_sitter::Node;

use super::spec::{def, Class, LangSpec, Source, BASE};
use crate::lang::node_ext::NodeExt;

pub(crate) static RUST: LangSpec = LangSpec {
    name: "rust",
    grammar: || tree_sitter_rust::LANGUAGE.into(),
    extensions: &["rs"],
    scope_separator: "::",
    definitions: &[
        def("function_item", "function", "name", "body", false),
        def("function_signature_item", "function", "name", "body", false),
        def("struct_item", "struct", "name", "body", false),
        def("enum_item", "enum", "name", "body", false),
        def("union_item", "union", "name", "body", false),
        def("type_item", "type", "name", "type", false),
        def("const_item", "const", "name", "value", false),
        def("static_item", "static", "name", "value", false),
        def("macro_definition", "macro", "name", "", false),
        def("trait_item", "trait", "name", "body", true),
    ],
    special: &["macro_invocation", "mod_item", "impl_item"],
    special_class: classify,
    descend: &["declaration_list", "foreign_mod_item"],
    doc_kinds: &["line_comment", "block_comment", "attribute_item"],
    call_kinds: &["call_expression", "macro_invocation"],
    reference_kinds: &["type_identifier"],
    import_kinds: &["use_declaration", "mod_item"],
    import_specs,
    // Token trees (macro arguments and bodies, attribute arguments) are
    // flat tokens by the grammar's definition: identifiers, literals,
    // punctuation and nested token trees, never an expression or a type.
    // In generated bindings (a `link!` per function) and macro-heavy code
    // they are most of the tree's nodes.
    opaque_kinds: &["token_tree", "token_tree_pattern"],
    module_prefix,
    import_candidates,
    ..BASE
};

fn classify<'t>(src: Source<'t>, n: Node<'t>) -> Option<Class<'t>> {
    match n.kind_name() {
        // An item-level `cfg_rt! { … }` block: its items sit in a token
        // tree the grammar does not parse, so the block is one definition
        // (cut at its inner items when it is too large to serve whole).
        "macro_invocation" => {
            let path = src.field_text(n, "macro")?;
            let name = format!("{}!", path.rsplit("::").next().unwrap_or(&path));
            Some(Class::plain(name, "macro call", None))
        }
        // `mod net;` is an import, `mod net { … }` a container.
        "mod_item" => {
            let body = n.field("body")?;
            Some(Class::container(
                src.field_text(n, "name")?,
                "module",
                Some(body),
            ))
        }
        "impl_item" => {
            let ty = src.field_text(n, "type")?;
            let ty_base = ty.split('<').next().unwrap_or(&ty).trim().to_owned();
            let (name, title) = match src.field_text(n, "trait") {
                Some(t) => (
                    format!("impl {t} for {ty_base}"),
                    format!("impl {t} for {ty}"),
                ),
                None => (format!("impl {ty_base}"), format!("impl {ty}")),
            };
            let body = n.field("body");
            Some(Class {
                member_scope: Some(ty_base),
                title_override: Some(title),
                ..Class::container(name, "impl", body)
            })
        }
        _ => None,
    }
}

fn import_specs<'t>(src: Source<'t>, n: Node<'t>) -> Vec<String> {
    match n.kind_name() {
        "use_declaration" => n
            .field("argument")
            .map(|a| {
                let t = src.text(a);
                let base = t.split("::{").next().unwrap_or(t);
                vec![base.split(" as ").next().unwrap_or(base).trim().to_owned()]
            })
            .unwrap_or_default(),
        "mod_item" if n.field("body").is_none() => src
            .field_text(n, "name")
            .map(|m| vec![format!("mod {m}")])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Rust modules from the path under `src/` (`src/net.rs` → `net`).
fn module_prefix(rel_path: &str) -> Vec<String> {
    let no_ext = rel_path.rsplit_once('.').map_or(rel_path, |(a, _)| a);
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

/// `mod m;` names `m.rs` or `m/mod.rs` beside the file's module; a
/// `crate::a::b` path names the longest module file it reaches.
fn import_candidates(rel_path: &str, spec: &str) -> Vec<String> {
    let dir = super::syntax::dir_of(rel_path);
    let mut out = Vec::new();
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
    out
}
