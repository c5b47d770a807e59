//! C and C++ (one table, two grammars): functions named by their
//! declarator, structs, unions, enums, classes (C++ classes and structs are
//! containers), typedefs, namespaces; `#include`.

use tree_sitter::Node;

use super::spec::{def, Class, LangSpec, Source, BASE};
use super::syntax::{dir_of, join_rel, unquote};
use crate::lang::node_ext::NodeExt;

const C_FAMILY: LangSpec = LangSpec {
    definitions: &[def(
        "namespace_definition",
        "namespace",
        "name",
        "body",
        true,
    )],
    special: &[
        "function_definition",
        "struct_specifier",
        "union_specifier",
        "enum_specifier",
        "class_specifier",
        "type_definition",
    ],
    special_class: classify_c,
    descend: &[
        "preproc_if",
        "preproc_ifdef",
        "preproc_else",
        "preproc_elif",
        "linkage_specification",
        "declaration_list",
        "template_declaration",
        "field_declaration_list",
    ],
    call_kinds: &["call_expression"],
    reference_kinds: &["type_identifier"],
    import_kinds: &["preproc_include"],
    import_specs,
    import_candidates,
    parse_mask: super::preproc::mask_unbalanced_conditionals,
    ..BASE
};

pub(crate) static C: LangSpec = LangSpec {
    name: "c",
    grammar: || tree_sitter_c::LANGUAGE.into(),
    extensions: &["c", "h"],
    ..C_FAMILY
};

pub(crate) static CPP: LangSpec = LangSpec {
    name: "cpp",
    grammar: || tree_sitter_cpp::LANGUAGE.into(),
    extensions: &["cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp"],
    scope_separator: "::",
    special_class: classify_cpp,
    wrappers: &["template_declaration"],
    ..C_FAMILY
};

fn classify_c<'t>(src: Source<'t>, n: Node<'t>) -> Option<Class<'t>> {
    classify(src, n, false)
}

fn classify_cpp<'t>(src: Source<'t>, n: Node<'t>) -> Option<Class<'t>> {
    classify(src, n, true)
}

fn classify<'t>(src: Source<'t>, n: Node<'t>, cpp: bool) -> Option<Class<'t>> {
    let kind = n.kind_name();
    match kind {
        "function_definition" => {
            let decl = n.field("declarator")?;
            let full = declarator_name(src, decl)?;
            Some(Class::plain(full, "function", n.field("body")))
        }
        "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier" => {
            let body = n.field("body")?;
            let label = match kind {
                "struct_specifier" => "struct",
                "union_specifier" => "union",
                "enum_specifier" => "enum",
                _ => "class",
            };
            Some(Class {
                container_body: (cpp && label != "enum").then_some(body),
                ..Class::plain(src.field_text(n, "name")?, label, Some(body))
            })
        }
        "type_definition" => {
            let decl = n.field("declarator")?;
            if decl.kind_name() != "type_identifier" {
                return None;
            }
            Some(Class::plain(
                src.text(decl).to_owned(),
                "typedef",
                n.field("type"),
            ))
        }
        _ => None,
    }
}

/// The name a function declarator declares (`Foo::bar`, `main`).
fn declarator_name(src: Source<'_>, mut n: Node<'_>) -> Option<String> {
    for _ in 0..16 {
        match n.kind_name() {
            "identifier"
            | "field_identifier"
            | "qualified_identifier"
            | "destructor_name"
            | "operator_name" => {
                return Some(src.text(n).split_whitespace().collect::<Vec<_>>().join(" "));
            }
            _ => n = n.field("declarator").or_else(|| n.named_child(0))?,
        }
    }
    None
}

fn import_specs<'t>(src: Source<'t>, n: Node<'t>) -> Vec<String> {
    n.field("path")
        .map(|p| {
            let t = src.text(p);
            if p.kind_name() == "system_lib_string" {
                vec![t.to_owned()]
            } else {
                vec![unquote(t)]
            }
        })
        .unwrap_or_default()
}

/// `"wire.h"` names the file beside the includer, at the top, or under
/// `include/`; `<stdio.h>` names no workspace file.
fn import_candidates(rel_path: &str, spec: &str) -> Vec<String> {
    let mut out = Vec::new();
    if spec.starts_with('<') {
        return out;
    }
    if let Some(p) = join_rel(dir_of(rel_path), spec) {
        out.push(p);
    }
    out.push(spec.to_owned());
    out.push(format!("include/{spec}"));
    out
}
