//! Kotlin: classes, interfaces, objects and companion objects as
//! containers of their functions; type aliases; calls (the constructor
//! call of a class is a call of its name); `import` directives.

use tree_sitter::Node;

use super::spec::{Class, LangSpec, Source, BASE};

pub(crate) static KOTLIN: LangSpec = LangSpec {
    name: "kotlin",
    grammar: || tree_sitter_kotlin_ng::LANGUAGE.into(),
    extensions: &["kt", "kts"],
    special: &[
        "class_declaration",
        "object_declaration",
        "companion_object",
        "function_declaration",
        "secondary_constructor",
        "type_alias",
    ],
    special_class: classify,
    doc_kinds: &["line_comment", "block_comment"],
    call_kinds: &["call_expression"],
    callee,
    reference_kinds: &["user_type"],
    reference: type_name,
    import_kinds: &["import"],
    import_specs,
    import_candidates,
    ..BASE
};

/// The first named child of `n` of one of `kinds`.
fn child_of_kind<'t>(n: Node<'t>, kinds: &[&str]) -> Option<Node<'t>> {
    let mut c = n.walk();
    let found = n.named_children(&mut c).find(|k| kinds.contains(&k.kind()));
    found
}

/// Whether `n` has an anonymous child token `word` (`interface`, `enum`).
fn has_token(n: Node<'_>, word: &str) -> bool {
    let mut c = n.walk();
    let found = n
        .children(&mut c)
        .any(|k| !k.is_named() && k.kind() == word);
    found
}

fn classify<'t>(src: Source<'t>, n: Node<'t>) -> Option<Class<'t>> {
    match n.kind() {
        "class_declaration" => {
            let body = child_of_kind(n, &["class_body", "enum_class_body"]);
            let label = if has_token(n, "interface") {
                "interface"
            } else if body.is_some_and(|b| b.kind() == "enum_class_body") {
                "enum"
            } else {
                "class"
            };
            Some(Class::container(src.field_text(n, "name")?, label, body))
        }
        "object_declaration" => Some(Class::container(
            src.field_text(n, "name")?,
            "object",
            child_of_kind(n, &["class_body"]),
        )),
        "companion_object" => Some(Class::container(
            src.field_text(n, "name")
                .unwrap_or_else(|| "Companion".to_owned()),
            "object",
            child_of_kind(n, &["class_body"]),
        )),
        "function_declaration" => Some(Class::plain(
            src.field_text(n, "name")?,
            "function",
            child_of_kind(n, &["function_body"]),
        )),
        "secondary_constructor" => Some(Class::plain(
            "constructor".to_owned(),
            "constructor",
            child_of_kind(n, &["block"]),
        )),
        "type_alias" => Some(Class::plain(src.field_text(n, "type")?, "type", None)),
        _ => None,
    }
}

/// `f(x)` calls `f`, `a.b.f(x)` calls `f`.
fn callee<'t>(_: Source<'t>, n: Node<'t>) -> Option<Node<'t>> {
    let target = n.named_child(0)?;
    match target.kind() {
        "identifier" => Some(target),
        "navigation_expression" => {
            let mut c = target.walk();
            let last = target.named_children(&mut c).last();
            last.filter(|k| k.kind() == "identifier")
        }
        _ => None,
    }
}

/// A user type names its last identifier (`Map.Entry` → `Entry`).
fn type_name<'t>(_: Source<'t>, n: Node<'t>) -> Option<Node<'t>> {
    let mut c = n.walk();
    let last = n
        .named_children(&mut c)
        .filter(|k| k.kind() == "identifier")
        .last();
    last
}

fn import_specs<'t>(src: Source<'t>, n: Node<'t>) -> Vec<String> {
    child_of_kind(n, &["qualified_identifier", "identifier"])
        .map(|q| vec![src.text(q).to_owned()])
        .unwrap_or_default()
}

/// `a.b.C` names `a/b/C.kt` under the usual source roots.
fn import_candidates(_rel_path: &str, spec: &str) -> Vec<String> {
    let path = spec.replace('.', "/");
    ["src/main/kotlin/", "src/commonMain/kotlin/", "src/", ""]
        .iter()
        .map(|root| format!("{root}{path}.kt"))
        .collect()
}
