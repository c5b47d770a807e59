//! Lua: functions (`function M.f`, `function M:f`, `local function f`)
//! and functions assigned to a name (`M.f = function … end`); calls;
//! `require` as imports, resolved on the usual `lua/` path.

use tree_sitter::Node;

use super::spec::{Class, LangSpec, Source, BASE};
use super::syntax::unquote;
use crate::lang::node_ext::NodeExt;

pub(crate) static LUA: LangSpec = LangSpec {
    name: "lua",
    grammar: || tree_sitter_lua::LANGUAGE.into(),
    extensions: &["lua"],
    special: &["function_declaration", "assignment_statement"],
    special_class: classify,
    // `local f = function … end` is an assignment inside a declaration.
    descend: &["variable_declaration"],
    call_kinds: &["function_call"],
    callee,
    call_import,
    import_candidates,
    ..BASE
};

fn classify<'t>(src: Source<'t>, n: Node<'t>) -> Option<Class<'t>> {
    match n.kind_name() {
        "function_declaration" => {
            let name = n.field("name")?;
            let label = if name.kind_name() == "method_index_expression" {
                "method"
            } else {
                "function"
            };
            Some(Class::plain(
                src.text(name).to_owned(),
                label,
                n.field("body"),
            ))
        }
        "assignment_statement" => {
            let mut c = n.walk();
            let mut parts = n.named_children(&mut c);
            let (Some(vars), Some(values)) = (parts.next(), parts.next()) else {
                return None;
            };
            if vars.kind_name() != "variable_list" || values.kind_name() != "expression_list" {
                return None;
            }
            let name = vars.field("name")?;
            let value = values.field("value")?;
            if value.kind_name() != "function_definition"
                || !matches!(name.kind_name(), "identifier" | "dot_index_expression")
            {
                return None;
            }
            Some(Class::plain(
                src.text(name).to_owned(),
                "function",
                value.field("body"),
            ))
        }
        _ => None,
    }
}

/// `f(x)` calls `f`, `a.b.f(x)` calls `f`, `a:f(x)` calls `f`.
fn callee<'t>(_: Source<'t>, n: Node<'t>) -> Option<Node<'t>> {
    let name = n.field("name")?;
    match name.kind_name() {
        "identifier" => Some(name),
        "dot_index_expression" => name.field("field"),
        "method_index_expression" => name.field("method"),
        _ => None,
    }
}

/// `require("lazy.core.config")` and `require "lazy.util"`.
fn call_import<'t>(src: Source<'t>, callee: &str, n: Node<'t>) -> Option<String> {
    if callee != "require" {
        return None;
    }
    let args = n.field("arguments")?;
    let first = if args.kind_name() == "string" {
        args
    } else {
        args.named_child(0)?
    };
    if first.kind_name() != "string" {
        return None;
    }
    let spec = unquote(src.text(first));
    (!spec.is_empty()).then_some(spec)
}

/// `a.b.c` names `lua/a/b/c.lua` or its `init.lua` (Neovim's runtime
/// path), or the same at the top.
fn import_candidates(_rel_path: &str, spec: &str) -> Vec<String> {
    let path = spec.replace('.', "/");
    let mut out = Vec::new();
    for root in ["lua/", ""] {
        out.push(format!("{root}{path}.lua"));
        out.push(format!("{root}{path}/init.lua"));
    }
    out
}
