//! Elixir: `defmodule`, `defprotocol` and `defimpl` as containers of
//! their `def`, `defp`, `defmacro`, `defguard` and `defdelegate`
//! definitions (the clauses of one function as one definition, with the
//! `@doc` and `@spec` above them); local and remote
//! calls; `alias`, `import`, `require` and `use` as imports.

use tree_sitter::Node;

use super::spec::{Class, LangSpec, Source, BASE};
use crate::lang::node_ext::NodeExt;

pub(crate) static ELIXIR: LangSpec = LangSpec {
    name: "elixir",
    grammar: || tree_sitter_elixir::LANGUAGE.into(),
    extensions: &["ex", "exs"],
    special: &["call"],
    special_class: classify,
    // `def f(0)` and `def f(n)` are clauses of one function.
    merge_clauses: true,
    // Module attributes (`@doc`, `@spec`, `@impl`) belong to the
    // definition below them.
    doc_kinds: &["comment", "unary_operator"],
    call_kinds: &["call"],
    callee,
    call_import,
    not_calls: KEYWORDS,
    import_candidates,
    ..BASE
};

/// The macros that define a function or macro.
const DEFINERS: &[&str] = &[
    "def",
    "defp",
    "defmacro",
    "defmacrop",
    "defguard",
    "defguardp",
    "defdelegate",
];

/// Special forms and definition macros: never call edges.
const KEYWORDS: &[&str] = &[
    "def",
    "defp",
    "defmacro",
    "defmacrop",
    "defguard",
    "defguardp",
    "defdelegate",
    "defmodule",
    "defprotocol",
    "defimpl",
    "defstruct",
    "defexception",
    "defoverridable",
    "alias",
    "import",
    "require",
    "use",
    "case",
    "cond",
    "if",
    "unless",
    "with",
    "for",
    "try",
    "receive",
    "quote",
    "unquote",
    "raise",
    "fn",
    // Module attributes read as calls (`@doc "…"`, `@spec f(t) :: t`).
    "doc",
    "moduledoc",
    "typedoc",
    "spec",
    "impl",
    "type",
    "typep",
    "opaque",
    "callback",
    "behaviour",
];

/// The first named child of `n` of `kind`.
fn child_of_kind<'t>(n: Node<'t>, kind: &str) -> Option<Node<'t>> {
    let mut c = n.walk();
    let found = n.named_children(&mut c).find(|k| k.kind_name() == kind);
    found
}

fn classify<'t>(src: Source<'t>, n: Node<'t>) -> Option<Class<'t>> {
    let target = n.field("target")?;
    if target.kind_name() != "identifier" {
        return None;
    }
    let keyword = src.text(target);
    let label = match keyword {
        "defmodule" => "module",
        "defprotocol" => "protocol",
        "defimpl" => "impl",
        "def" | "defp" | "defdelegate" => "function",
        "defmacro" | "defmacrop" => "macro",
        "defguard" | "defguardp" => "guard",
        _ => return None,
    };
    let args = child_of_kind(n, "arguments")?;
    let first = args.named_child(0)?;
    let body = child_of_kind(n, "do_block");
    if matches!(label, "module" | "protocol" | "impl") {
        if first.kind_name() != "alias" {
            return None;
        }
        let mut name = src.text(first).to_owned();
        if label == "impl" {
            // `defimpl String.Chars, for: Billing.Invoice` compiles to the
            // module `String.Chars.Billing.Invoice`: named by the protocol
            // alone, two implementations in a file would share a name.
            if let Some(target) = impl_target(src, args) {
                name = format!("{name}.{target}");
            }
        }
        return Some(Class::container(name, label, body));
    }
    // `def f(x)`, `def f(x) when guard`, `def f` (no arguments).
    let head = match first.kind_name() {
        "binary_operator" => first.field("left")?,
        _ => first,
    };
    let name = match head.kind_name() {
        "identifier" => head,
        "call" => head
            .field("target")
            .filter(|t| t.kind_name() == "identifier")?,
        _ => return None,
    };
    Some(Class::plain(src.text(name).to_owned(), label, body))
}

/// The type a `defimpl` is `for:`, when it is named by an alias.
fn impl_target<'t>(src: Source<'t>, args: Node<'t>) -> Option<&'t str> {
    let keywords = child_of_kind(args, "keywords")?;
    let mut c = keywords.walk();
    let found = keywords.named_children(&mut c).find_map(|pair| {
        let key = pair.field("key")?;
        let value = pair.field("value")?;
        (src.text(key).trim_end().trim_end_matches(':') == "for" && value.kind_name() == "alias")
            .then(|| src.text(value))
    });
    found
}

/// `f(x)` calls `f`; `Mod.f(x)` calls `f`. The head of a definition
/// (`def f(x)`, `def f(x) when …`) calls nothing.
fn callee<'t>(src: Source<'t>, n: Node<'t>) -> Option<Node<'t>> {
    if is_definition_head(src, n) {
        return None;
    }
    let target = n.field("target")?;
    match target.kind_name() {
        "identifier" => Some(target),
        "dot" => target
            .field("right")
            .filter(|r| r.kind_name() == "identifier"),
        _ => None,
    }
}

/// Whether `n` is the head of a `def`-family call: its first argument,
/// or the left of that argument's `when`.
fn is_definition_head(src: Source<'_>, n: Node<'_>) -> bool {
    let mut up = n.parent();
    if let Some(p) = up.filter(|p| p.kind_name() == "binary_operator") {
        if p.field("left").map(|l| l.id()) != Some(n.id()) {
            return false;
        }
        up = p.parent();
    }
    let Some(args) = up.filter(|p| p.kind_name() == "arguments") else {
        return false;
    };
    args.parent()
        .and_then(|def| def.field("target"))
        .is_some_and(|t| t.kind_name() == "identifier" && DEFINERS.contains(&src.text(t)))
}

/// `alias Ecto.Changeset`, `import Ecto.Query, only: …`, `use Phoenix.Controller`.
fn call_import<'t>(src: Source<'t>, callee: &str, n: Node<'t>) -> Option<String> {
    if !matches!(callee, "alias" | "import" | "require" | "use") {
        return None;
    }
    let first = child_of_kind(n, "arguments")?.named_child(0)?;
    (first.kind_name() == "alias").then(|| src.text(first).to_owned())
}

/// `Phoenix.Controller` names `lib/phoenix/controller.ex` (Elixir's
/// module-to-path convention: each segment in snake case).
fn import_candidates(_rel_path: &str, spec: &str) -> Vec<String> {
    let path: Vec<String> = spec.split('.').map(snake_case).collect();
    let path = path.join("/");
    vec![format!("lib/{path}.ex"), format!("{path}.ex")]
}

/// `ChangesetError` → `changeset_error`, `HTTPClient` → `http_client`.
fn snake_case(segment: &str) -> String {
    let chars: Vec<char> = segment.chars().collect();
    let mut out = String::with_capacity(segment.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_ascii_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            let prev_upper = i > 0 && chars[i - 1].is_ascii_uppercase();
            if i > 0 && (prev_lower || (prev_upper && next_lower)) {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_become_paths_in_snake_case() {
        assert_eq!(snake_case("ChangesetError"), "changeset_error");
        assert_eq!(snake_case("HTTPClient"), "http_client");
        assert_eq!(snake_case("Ecto"), "ecto");
        assert_eq!(
            import_candidates("lib/x.ex", "Phoenix.Controller.Pipeline"),
            [
                "lib/phoenix/controller/pipeline.ex",
                "phoenix/controller/pipeline.ex"
            ]
        );
    }
}
