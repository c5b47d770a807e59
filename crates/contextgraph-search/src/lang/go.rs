//! Go: functions, methods named by their receiver type, type declarations
//! (struct, interface, other); import specs.

use tree_sitter::Node;

use super::spec::{def, Class, LangSpec, Source, BASE};
use super::syntax::unquote;
use crate::lang::node_ext::NodeExt;

pub(crate) static GO: LangSpec = LangSpec {
    name: "go",
    grammar: || tree_sitter_go::LANGUAGE.into(),
    extensions: &["go"],
    definitions: &[def(
        "function_declaration",
        "function",
        "name",
        "body",
        false,
    )],
    special: &["method_declaration", "type_declaration"],
    special_class: classify,
    call_kinds: &["call_expression"],
    reference_kinds: &["type_identifier"],
    import_kinds: &["import_spec"],
    import_specs,
    ..BASE
};

fn classify<'t>(src: Source<'t>, n: Node<'t>) -> Option<Class<'t>> {
    match n.kind_name() {
        "method_declaration" => {
            let name = src.field_text(n, "name")?;
            let receiver = n
                .field("receiver")
                .map(|r| receiver_type(src.text(r)))
                .unwrap_or_default();
            let qualified_name = if receiver.is_empty() {
                name
            } else {
                format!("{receiver}.{name}")
            };
            Some(Class::plain(qualified_name, "method", n.field("body")))
        }
        "type_declaration" => {
            let mut c = n.walk();
            let spec = n
                .named_children(&mut c)
                .find(|s| matches!(s.kind_name(), "type_spec" | "type_alias"))?;
            let label = match spec.field("type").map(|t| t.kind_name()) {
                Some("struct_type") => "struct",
                Some("interface_type") => "interface",
                _ => "type",
            };
            Some(Class::plain(
                src.field_text(spec, "name")?,
                label,
                spec.field("type"),
            ))
        }
        _ => None,
    }
}

/// `(c *Client)` → `Client`; `(Client[T])` → `Client`.
fn receiver_type(receiver: &str) -> String {
    let inner = receiver.trim_matches(|c| c == '(' || c == ')');
    let ty = inner.split_whitespace().last().unwrap_or("");
    ty.trim_start_matches('*')
        .split('[')
        .next()
        .unwrap_or("")
        .to_owned()
}

fn import_specs<'t>(src: Source<'t>, n: Node<'t>) -> Vec<String> {
    src.field_text(n, "path")
        .map(|s| vec![unquote(&s)])
        .unwrap_or_default()
}
