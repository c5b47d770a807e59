//! Small questions about syntax nodes: where they end, what wraps them,
//! what they are named, whether to descend into them.

use tree_sitter::Node;

use super::Cx;
use crate::lang::Language;

pub(super) fn row_of_end(n: Node<'_>) -> u32 {
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
pub(super) fn wrapper_of(lang: Language, n: Node<'_>) -> Node<'_> {
    let wrappers: &[&str] = match lang {
        Language::Python => &["decorated_definition"],
        Language::JavaScript | Language::TypeScript | Language::Tsx => &["export_statement"],
        Language::Cpp => &["template_declaration"],
        _ => &[],
    };
    if wrappers.is_empty() {
        // `parent()` walks down from the root: not worth it for nothing.
        return n;
    }
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

pub(super) fn descend_into(lang: Language, kind: &str) -> bool {
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

pub(super) fn is_doc_or_attribute(lang: Language, kind: &str) -> bool {
    match lang {
        Language::Rust => matches!(kind, "line_comment" | "block_comment" | "attribute_item"),
        Language::Java => matches!(kind, "line_comment" | "block_comment"),
        Language::Python => kind == "comment",
        _ => kind == "comment",
    }
}

/// The node naming what a call expression calls.
pub(super) fn callee(n: Node<'_>) -> Option<Node<'_>> {
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

pub(super) fn first_string_arg(cx: &Cx<'_>, call: Node<'_>) -> Option<String> {
    let args = call.child_by_field_name("arguments")?;
    let first = args.named_child(0)?;
    (first.kind() == "string").then(|| {
        cx.text(first)
            .trim_matches(|c| c == '"' || c == '\'' || c == '`')
            .to_owned()
    })
}

/// The name a C/C++ function declarator declares (`Foo::bar`, `main`).
pub(super) fn c_declarator_name(cx: &Cx<'_>, mut n: Node<'_>) -> Option<String> {
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

pub(super) fn go_receiver_type(receiver: &str) -> String {
    // `(c *Client)` → `Client`; `(Client[T])` → `Client`.
    let inner = receiver.trim_matches(|c| c == '(' || c == ')');
    let ty = inner.split_whitespace().last().unwrap_or("");
    ty.trim_start_matches('*')
        .split('[')
        .next()
        .unwrap_or("")
        .to_owned()
}
