//! Swift: classes, structs, enums, actors, extensions and protocols as
//! containers; functions, initializers, protocol requirements, type
//! aliases and computed properties; calls; `import` declarations.

use tree_sitter::Node;

use super::spec::{def, Class, LangSpec, Source, BASE};
use crate::lang::node_ext::NodeExt;

pub(crate) static SWIFT: LangSpec = LangSpec {
    name: "swift",
    grammar: || tree_sitter_swift::LANGUAGE.into(),
    extensions: &["swift"],
    definitions: &[
        def("protocol_declaration", "protocol", "name", "body", true),
        def("function_declaration", "function", "name", "body", false),
        def(
            "protocol_function_declaration",
            "function",
            "name",
            "",
            false,
        ),
        def("typealias_declaration", "type", "name", "value", false),
    ],
    special: &[
        "class_declaration",
        "init_declaration",
        "property_declaration",
    ],
    special_class: classify,
    doc_kinds: &["comment", "multiline_comment"],
    call_kinds: &["call_expression", "constructor_expression"],
    callee,
    reference_kinds: &["user_type"],
    reference: type_name,
    import_kinds: &["import_declaration"],
    import_specs,
    ..BASE
};

fn classify<'t>(src: Source<'t>, n: Node<'t>) -> Option<Class<'t>> {
    match n.kind_name() {
        // `class`, `struct`, `enum`, `actor` and `extension` share a node.
        "class_declaration" => {
            let label = match n.field("declaration_kind").map(|k| k.kind_name()) {
                Some("struct") => "struct",
                Some("enum") => "enum",
                Some("actor") => "actor",
                Some("extension") => "extension",
                _ => "class",
            };
            let name = n.field("name")?;
            let name = src.text(name);
            let base = name.split('<').next().unwrap_or(name).trim().to_owned();
            let body = n.field("body");
            if label == "extension" {
                // An extension adds members to a type defined elsewhere: it
                // is named `extension T` (as Rust's `impl T`), so that the
                // bare name `T` is defined once, by the type, and not again
                // by every file that extends it; its members are `T.member`.
                return Some(Class {
                    member_scope: Some(base.clone()),
                    title_override: Some(format!("extension {base}")),
                    ..Class::container(format!("extension {base}"), label, body)
                });
            }
            Some(Class::container(base, label, body))
        }
        "init_declaration" => Some(Class::plain(
            "init".to_owned(),
            "initializer",
            n.field("body"),
        )),
        // A computed property of four lines or more is a definition of its
        // own; stored properties stay in their type's text.
        "property_declaration" => {
            if n.end_position().row < n.start_position().row + 3 {
                return None;
            }
            let mut c = n.walk();
            let pattern = n.children_by_field_name("name", &mut c).next()?;
            let computed = n.field("computed_value")?;
            Some(Class::plain(
                src.text(pattern).to_owned(),
                "property",
                Some(computed),
            ))
        }
        _ => None,
    }
}

/// `f(x)` calls `f`, `a.b.f(x)` calls `f`, `T(x)` constructs `T`, and
/// `a + b.f(x)` calls `f`.
fn callee<'t>(_: Source<'t>, n: Node<'t>) -> Option<Node<'t>> {
    if n.kind_name() == "constructor_expression" {
        return n
            .field("constructed_type")
            .and_then(|t| type_name(Source(&[]), t));
    }
    let mut target = n.named_child(0)?;
    // The grammar reads `a + b.f(x)` as the call of `a + b.f` with `(x)`:
    // what is called is the rightmost operand.
    for _ in 0..16 {
        match target.field("rhs") {
            Some(rhs) => target = rhs,
            None => break,
        }
    }
    match target.kind_name() {
        "simple_identifier" => Some(target),
        "navigation_expression" => target
            .field("suffix")?
            .field("suffix")
            .filter(|s| s.kind_name() == "simple_identifier"),
        _ => None,
    }
}

/// A user type names its last type identifier (`Foo.Bar<T>` → `Bar`).
fn type_name<'t>(_: Source<'t>, n: Node<'t>) -> Option<Node<'t>> {
    let mut c = n.walk();
    let last = n
        .named_children(&mut c)
        .filter(|k| k.kind_name() == "type_identifier")
        .last();
    last
}

fn import_specs<'t>(src: Source<'t>, n: Node<'t>) -> Vec<String> {
    let mut c = n.walk();
    let found = n
        .named_children(&mut c)
        .find(|k| k.kind_name() == "identifier")
        .map(|k| vec![src.text(k).to_owned()])
        .unwrap_or_default();
    found
}
