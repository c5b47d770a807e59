//! C#: classes, structs, records, interfaces and namespaces (braced or
//! file-scoped) as containers; methods, constructors, enums, delegates and properties with
//! bodies; invocation and `new` calls; `using` directives.

use tree_sitter::Node;

use super::spec::{def, Class, LangSpec, Source, BASE};
use crate::lang::node_ext::NodeExt;

pub(crate) static CSHARP: LangSpec = LangSpec {
    name: "csharp",
    grammar: || tree_sitter_c_sharp::LANGUAGE.into(),
    extensions: &["cs", "csx"],
    definitions: &[
        def("class_declaration", "class", "name", "body", true),
        def("struct_declaration", "struct", "name", "body", true),
        def("record_declaration", "record", "name", "body", true),
        def("interface_declaration", "interface", "name", "body", true),
        def("enum_declaration", "enum", "name", "body", false),
        def("namespace_declaration", "namespace", "name", "body", true),
        def("method_declaration", "method", "name", "body", false),
        def(
            "constructor_declaration",
            "constructor",
            "name",
            "body",
            false,
        ),
        def(
            "destructor_declaration",
            "destructor",
            "name",
            "body",
            false,
        ),
        def("delegate_declaration", "type", "name", "", false),
    ],
    special: &["property_declaration"],
    special_class: classify,
    // `namespace A.B;` (C# 10) qualifies the declarations after it, which
    // are its siblings, as the braced form qualifies those it holds.
    scope_statements: &["file_scoped_namespace_declaration"],
    descend: &["preproc_if", "preproc_elif", "preproc_else"],
    call_kinds: &["invocation_expression", "object_creation_expression"],
    callee,
    import_kinds: &["using_directive"],
    import_specs,
    ..BASE
};

/// A property is a definition of its own when it has a body worth a
/// frame (four lines or more); `{ get; set; }` stays in its class's text.
fn classify<'t>(src: Source<'t>, n: Node<'t>) -> Option<Class<'t>> {
    if n.end_position().row < n.start_position().row + 3 {
        return None;
    }
    let body = n.field("accessors").or_else(|| n.field("value"));
    Some(Class::plain(src.field_text(n, "name")?, "property", body))
}

/// The identifier at the end of a callee (`a.B`, `B<T>`, `global::A.B`).
fn last_identifier(n: Node<'_>, depth: u8) -> Option<Node<'_>> {
    if depth > 8 {
        return None;
    }
    match n.kind_name() {
        "identifier" => Some(n),
        "generic_name" => n.named_child(0).filter(|c| c.kind_name() == "identifier"),
        "member_access_expression" | "qualified_name" | "alias_qualified_name" => {
            n.field("name").and_then(|c| last_identifier(c, depth + 1))
        }
        _ => None,
    }
}

fn callee<'t>(_: Source<'t>, n: Node<'t>) -> Option<Node<'t>> {
    let target = match n.kind_name() {
        "object_creation_expression" => n.field("type")?,
        _ => n.field("function")?,
    };
    last_identifier(target, 0)
}

/// `using A.B;`, `using static A.B;`, `using X = A.B;` all import `A.B`.
fn import_specs<'t>(src: Source<'t>, n: Node<'t>) -> Vec<String> {
    let mut c = n.walk();
    let alias = n.field("name").map(|a| a.id());
    let found = n
        .named_children(&mut c)
        .filter(|k| Some(k.id()) != alias)
        .find(|k| {
            matches!(
                k.kind_name(),
                "qualified_name" | "identifier" | "alias_qualified_name"
            )
        })
        .map(|k| vec![src.text(k).to_owned()])
        .unwrap_or_default();
    found
}
