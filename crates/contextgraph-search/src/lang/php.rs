//! PHP (with its HTML template parts): functions, classes, interfaces,
//! traits and enums as containers of their methods, namespaces (braced,
//! or `namespace X;` for what follows it) qualifying them;
//! function, method, static and `new` calls; `use` imports resolved the
//! PSR-4 way, `require`/`include` of a literal path.

use tree_sitter::Node;

use super::spec::{def, Class, LangSpec, Source, BASE};
use super::syntax::{dir_of, join_rel, unquote};
use crate::lang::node_ext::NodeExt;

pub(crate) static PHP: LangSpec = LangSpec {
    name: "php",
    grammar: || tree_sitter_php::LANGUAGE_PHP.into(),
    extensions: &["php", "phtml"],
    scope_separator: "::",
    definitions: &[
        def("function_definition", "function", "name", "body", false),
        def("method_declaration", "method", "name", "body", false),
        def("class_declaration", "class", "name", "body", true),
        def("interface_declaration", "interface", "name", "body", true),
        def("trait_declaration", "trait", "name", "body", true),
        def("enum_declaration", "enum", "name", "body", true),
    ],
    special: &["namespace_definition"],
    special_class: classify,
    // `namespace App\Http;` qualifies what follows it, as the braced form
    // qualifies what it holds.
    scope_statements: &["namespace_definition"],
    // `if (! function_exists('x')) { function x() … }`: helper files.
    descend: &["if_statement", "compound_statement"],
    call_kinds: &[
        "function_call_expression",
        "member_call_expression",
        "nullsafe_member_call_expression",
        "scoped_call_expression",
        "object_creation_expression",
    ],
    callee,
    reference_kinds: &["named_type"],
    reference: last_name,
    import_kinds: &[
        "namespace_use_declaration",
        "require_expression",
        "require_once_expression",
        "include_expression",
        "include_once_expression",
    ],
    import_specs,
    import_candidates,
    ..BASE
};

/// `namespace App\Http { … }` is a container; `namespace App\Http;` (the
/// usual form) is no definition: a scope statement for what follows it.
fn classify<'t>(src: Source<'t>, n: Node<'t>) -> Option<Class<'t>> {
    let body = n.field("body")?;
    Some(Class::container(
        src.field_text(n, "name")?,
        "namespace",
        Some(body),
    ))
}

/// The `name` at the end of a (possibly qualified) name node.
fn last_name<'t>(_: Source<'t>, n: Node<'t>) -> Option<Node<'t>> {
    match n.kind_name() {
        "name" => Some(n),
        "qualified_name" | "named_type" | "relative_name" => {
            let mut c = n.walk();
            let last = n
                .named_children(&mut c)
                .filter(|k| matches!(k.kind_name(), "name" | "qualified_name" | "relative_name"))
                .last()?;
            if last.kind_name() == "name" {
                Some(last)
            } else {
                last_name(Source(&[]), last)
            }
        }
        _ => None,
    }
}

fn callee<'t>(src: Source<'t>, n: Node<'t>) -> Option<Node<'t>> {
    match n.kind_name() {
        "function_call_expression" => last_name(src, n.field("function")?),
        "object_creation_expression" => {
            let mut c = n.walk();
            let class = n
                .named_children(&mut c)
                .find(|k| matches!(k.kind_name(), "name" | "qualified_name" | "relative_name"))?;
            last_name(src, class)
        }
        _ => n.field("name").filter(|name| name.kind_name() == "name"),
    }
}

fn import_specs<'t>(src: Source<'t>, n: Node<'t>) -> Vec<String> {
    if n.kind_name() != "namespace_use_declaration" {
        // require/include of a literal path (not `__DIR__ . '/x.php'`).
        let mut c = n.walk();
        return n
            .named_children(&mut c)
            .find(|k| matches!(k.kind_name(), "string" | "encapsed_string"))
            .map(|s| unquote(src.text(s)))
            .filter(|s| !s.is_empty() && !s.contains('$'))
            .into_iter()
            .collect();
    }
    // `use A\B, C\D;` or grouped `use A\{B, C as D};`.
    let mut prefix = String::new();
    let mut out = Vec::new();
    let mut c = n.walk();
    for k in n.named_children(&mut c) {
        match k.kind_name() {
            "namespace_name" => prefix = src.text(k).to_owned(),
            "namespace_use_clause" => {
                if let Some(name) = use_clause_name(src, k) {
                    out.push(name.to_owned());
                }
            }
            "namespace_use_group" => {
                let mut g = k.walk();
                for clause in k.named_children(&mut g) {
                    if let Some(name) = use_clause_name(src, clause) {
                        out.push(format!("{prefix}\\{name}"));
                    }
                }
            }
            _ => {}
        }
    }
    out.iter()
        .map(|s| s.trim_start_matches('\\').to_owned())
        .collect()
}

/// The imported name of a `use` clause (without its `as` alias).
fn use_clause_name<'t>(src: Source<'t>, clause: Node<'t>) -> Option<&'t str> {
    let mut c = clause.walk();
    let name = clause
        .named_children(&mut c)
        .find(|k| matches!(k.kind_name(), "name" | "qualified_name"))?;
    Some(src.text(name))
}

/// A namespaced class names a file the PSR-4 way: its path with `\` as
/// `/`, at the top, under `src/` or `lib/`, with the vendor prefix dropped
/// (`GuzzleHttp\Client` → `src/Client.php`) or lower-cased
/// (`App\Models\User` → `app/Models/User.php`). A literal
/// require names the file beside the requirer.
fn import_candidates(rel_path: &str, spec: &str) -> Vec<String> {
    if spec.ends_with(".php") || spec.starts_with('.') || spec.starts_with('/') {
        let rel = spec.trim_start_matches('/');
        return join_rel(dir_of(rel_path), rel)
            .into_iter()
            .chain([rel.to_owned()])
            .collect();
    }
    let path = spec.replace('\\', "/");
    let mut out = Vec::new();
    for root in ["", "src/", "lib/"] {
        out.push(format!("{root}{path}.php"));
    }
    if let Some((vendor, rest)) = path.split_once('/') {
        out.push(format!("src/{rest}.php"));
        out.push(format!("{}/{rest}.php", vendor.to_ascii_lowercase()));
    }
    out
}
