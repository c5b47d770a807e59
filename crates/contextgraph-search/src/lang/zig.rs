//! Zig: functions, tests, and `const X = struct/enum/union/opaque { … }`
//! as containers of their functions; calls; `@import` of a file.

use tree_sitter::Node;

use super::spec::{def, Class, LangSpec, Source, BASE};
use super::syntax::{dir_of, join_rel, unquote};
use crate::lang::node_ext::NodeExt;

pub(crate) static ZIG: LangSpec = LangSpec {
    name: "zig",
    grammar: || tree_sitter_zig::LANGUAGE.into(),
    extensions: &["zig"],
    definitions: &[def(
        "function_declaration",
        "function",
        "name",
        "body",
        false,
    )],
    special: &["variable_declaration", "test_declaration"],
    special_class: classify,
    call_kinds: &["call_expression"],
    callee,
    import_kinds: &["builtin_function"],
    import_specs,
    import_candidates,
    ..BASE
};

fn classify<'t>(src: Source<'t>, n: Node<'t>) -> Option<Class<'t>> {
    let mut c = n.walk();
    let children: Vec<Node<'t>> = n.named_children(&mut c).collect();
    match n.kind_name() {
        // `const Param = struct { … };`
        "variable_declaration" => {
            let name = children.iter().find(|k| k.kind_name() == "identifier")?;
            let body = children.iter().find(|k| {
                matches!(
                    k.kind_name(),
                    "struct_declaration"
                        | "enum_declaration"
                        | "union_declaration"
                        | "opaque_declaration"
                )
            })?;
            let label = match body.kind_name() {
                "enum_declaration" => "enum",
                "union_declaration" => "union",
                "opaque_declaration" => "opaque",
                _ => "struct",
            };
            Some(Class::container(
                src.text(*name).to_owned(),
                label,
                Some(*body),
            ))
        }
        // `test "parses flags" { … }` or `test parse { … }`.
        "test_declaration" => {
            let name = children
                .iter()
                .find(|k| matches!(k.kind_name(), "string" | "identifier"))?;
            let block = children.iter().find(|k| k.kind_name() == "block").copied();
            // Named as written (`"parses flags"`, quotes kept), so that a
            // test never defines the bare name of the function it tests.
            let name = match name.kind_name() {
                "string" => src.text(*name).to_owned(),
                _ => format!("test {}", src.text(*name)),
            };
            Some(Class::plain(name, "test", block))
        }
        _ => None,
    }
}

/// `f(x)` calls `f`, `a.b.f(x)` calls `f`.
fn callee<'t>(_: Source<'t>, n: Node<'t>) -> Option<Node<'t>> {
    let f = n.field("function")?;
    match f.kind_name() {
        "identifier" => Some(f),
        "field_expression" => f.field("member"),
        _ => None,
    }
}

/// `@import("parser.zig")` imports `parser.zig`; `@import("std")` a package.
fn import_specs<'t>(src: Source<'t>, n: Node<'t>) -> Vec<String> {
    let mut c = n.walk();
    let mut parts = n.named_children(&mut c);
    let is_import = parts
        .next()
        .is_some_and(|b| b.kind_name() == "builtin_identifier" && src.text(b) == "@import");
    if !is_import {
        return Vec::new();
    }
    parts
        .next()
        .and_then(|args| args.named_child(0))
        .filter(|s| s.kind_name() == "string")
        .map(|s| vec![unquote(src.text(s))])
        .unwrap_or_default()
}

/// A file import names the file beside the importer.
fn import_candidates(rel_path: &str, spec: &str) -> Vec<String> {
    if !spec.ends_with(".zig") {
        return Vec::new();
    }
    join_rel(dir_of(rel_path), spec).into_iter().collect()
}
