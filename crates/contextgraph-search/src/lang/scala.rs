//! Scala 2 and 3: classes, objects, traits, enums and package objects as
//! containers of their methods; type definitions; braced packages and
//! extension blocks read through; calls and `new`; imports.

use tree_sitter::Node;

use super::spec::{def, Class, LangSpec, Source, BASE};
use super::syntax::{callee as generic_callee, name_of};
use crate::lang::node_ext::NodeExt;

pub(crate) static SCALA: LangSpec = LangSpec {
    name: "scala",
    grammar: || tree_sitter_scala::LANGUAGE.into(),
    extensions: &["scala", "sc", "sbt"],
    definitions: &[
        def("class_definition", "class", "name", "body", true),
        def("object_definition", "object", "name", "body", true),
        def("trait_definition", "trait", "name", "body", true),
        def("enum_definition", "enum", "name", "body", true),
        def("package_object", "object", "name", "body", true),
        def("function_definition", "function", "name", "body", false),
        def("function_declaration", "function", "name", "", false),
        def("type_definition", "type", "name", "type", false),
    ],
    special: &["given_definition"],
    special_class: classify,
    descend: &[
        "package_clause",
        "template_body",
        "extension_definition",
        "indented_block",
    ],
    doc_kinds: &["comment", "block_comment"],
    call_kinds: &["call_expression", "instance_expression"],
    callee,
    reference_kinds: &["type_identifier"],
    import_kinds: &["import_declaration"],
    import_specs,
    import_candidates,
    ..BASE
};

/// A named `given` instance (anonymous ones are left to their scope).
fn classify<'t>(src: Source<'t>, n: Node<'t>) -> Option<Class<'t>> {
    let body = n.field("body");
    Some(Class::plain(src.field_text(n, "name")?, "given", body))
}

/// `f(x)`, `a.f(x)`, `f[T](x)` call `f`; `new C(x)` calls `C`.
fn callee<'t>(src: Source<'t>, n: Node<'t>) -> Option<Node<'t>> {
    if n.kind_name() == "instance_expression" {
        let mut c = n.walk();
        let ty = n.named_children(&mut c).find(|k| {
            matches!(
                k.kind_name(),
                "type_identifier" | "generic_type" | "stable_type_identifier"
            )
        })?;
        return match ty.kind_name() {
            "stable_type_identifier" => {
                let mut c = ty.walk();
                let last = ty.named_children(&mut c).last();
                last.filter(|k| k.kind_name() == "type_identifier")
            }
            "generic_type" => ty.named_child(0).and_then(|t| name_of(t, 0)),
            _ => Some(ty),
        };
    }
    generic_callee(src, n)
}

/// `import cats.syntax.all._` imports `cats.syntax.all`; selectors
/// (`a.b.{C, D}`) import their package.
fn import_specs<'t>(src: Source<'t>, n: Node<'t>) -> Vec<String> {
    let text = src.text(n).trim_start_matches("import").trim();
    let path = text.split(['{', ' ', '\n']).next().unwrap_or(text);
    let path = path
        .trim_end_matches(',')
        .trim_end_matches(['_', '*'])
        .trim_end_matches('.')
        .trim();
    if path.is_empty() {
        Vec::new()
    } else {
        vec![path.to_owned()]
    }
}

/// `a.b.C` names `a/b/C.scala` under the usual source roots.
fn import_candidates(_rel_path: &str, spec: &str) -> Vec<String> {
    let path = spec.replace('.', "/");
    ["src/main/scala/", "src/", ""]
        .iter()
        .map(|root| format!("{root}{path}.scala"))
        .collect()
}
