//! Ruby: methods (`def x`, `def self.x`), classes and modules as
//! containers (`class << self` blocks read through); calls, constants as
//! references, `require` and `require_relative` as imports.

use tree_sitter::Node;

use super::spec::{def, LangSpec, Source, BASE};
use super::syntax::{dir_of, join_rel, unquote};
use crate::lang::node_ext::NodeExt;

pub(crate) static RUBY: LangSpec = LangSpec {
    name: "ruby",
    grammar: || tree_sitter_ruby::LANGUAGE.into(),
    extensions: &["rb", "rake", "gemspec", "ru"],
    file_names: &["rakefile", "gemfile"],
    scope_separator: "::",
    definitions: &[
        def("method", "method", "name", "body", false),
        def("singleton_method", "method", "name", "body", false),
        def("class", "class", "name", "body", true),
        def("module", "module", "name", "body", true),
    ],
    // `class << self … end` holds methods of the enclosing class.
    descend: &["singleton_class", "body_statement"],
    docs_before_body: true,
    call_kinds: &["call"],
    callee,
    call_import,
    reference_kinds: &["constant"],
    import_candidates,
    ..BASE
};

/// The method a call sends; `Client.new` calls `Client` (the class it
/// constructs, as `new Client` does elsewhere).
fn callee<'t>(src: Source<'t>, n: Node<'t>) -> Option<Node<'t>> {
    let method = n.field("method")?;
    if src.text(method) == "new" {
        if let Some(r) = n.field("receiver") {
            match r.kind_name() {
                "constant" => return Some(r),
                "scope_resolution" => return r.field("name"),
                _ => {}
            }
        }
    }
    Some(method)
}

/// `require 'rack/utils'` and `require_relative 'utils'` (kept as
/// `./utils`, relative to the requiring file).
fn call_import<'t>(src: Source<'t>, callee: &str, n: Node<'t>) -> Option<String> {
    if !matches!(callee, "require" | "require_relative") || n.field("receiver").is_some() {
        return None;
    }
    let first = n.field("arguments")?.named_child(0)?;
    if first.kind_name() != "string" || first.named_child_count() > 1 {
        return None;
    }
    let spec = unquote(src.text(first));
    if spec.is_empty() || spec.contains("#{") {
        return None;
    }
    Some(if callee == "require_relative" && !spec.starts_with('.') {
        format!("./{spec}")
    } else {
        spec
    })
}

/// A relative require names the file beside the requirer; a load-path
/// require names a file under `lib/` (or the top).
fn import_candidates(rel_path: &str, spec: &str) -> Vec<String> {
    let with_ext = |p: String| {
        if p.ends_with(".rb") {
            p
        } else {
            format!("{p}.rb")
        }
    };
    if spec.starts_with('.') {
        return join_rel(dir_of(rel_path), spec)
            .map(with_ext)
            .into_iter()
            .collect();
    }
    vec![with_ext(format!("lib/{spec}")), with_ext(spec.to_owned())]
}
