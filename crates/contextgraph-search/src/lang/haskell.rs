//! Haskell: functions and point-free bindings (all equations of one
//! function as one definition, with its type signature and Haddock
//! comment above), data types, newtypes, type synonyms, type
//! classes and instances as containers; applications as calls; imports.

use tree_sitter::Node;

use super::spec::{def, Class, LangSpec, Source, BASE};
use crate::lang::node_ext::NodeExt;

pub(crate) static HASKELL: LangSpec = LangSpec {
    name: "haskell",
    grammar: || tree_sitter_haskell::LANGUAGE.into(),
    extensions: &["hs"],
    definitions: &[
        def("function", "function", "name", "match", false),
        def("bind", "function", "name", "match", false),
        def("data_type", "data", "name", "constructors", false),
        def("newtype", "newtype", "name", "constructor", false),
        def("type_synonym", "type", "name", "type", false),
        def("class", "class", "name", "declarations", true),
    ],
    special: &["instance"],
    special_class: classify,
    descend: &["declarations"],
    // `f [] = …` and `f (x : xs) = …` are one function, whose signature
    // and Haddock comment are above the first equation.
    merge_clauses: true,
    // A type signature belongs to the equations below it, as the Haddock
    // comment above it does.
    doc_kinds: &["comment", "haddock", "signature", "pragma"],
    doc_belongs,
    call_kinds: &["apply"],
    callee,
    reference_kinds: &["name"],
    import_kinds: &["import"],
    import_specs,
    import_candidates,
    ..BASE
};

/// A type signature belongs to the functions it names (`f, g :: T`),
/// not to the next function: in a class, `price :: a -> R` above
/// `describe :: …` and `describe`'s default equation is `price`'s.
fn doc_belongs<'t>(src: Source<'t>, doc: Node<'t>, name: &str) -> bool {
    if doc.kind_name() != "signature" {
        return true;
    }
    let text = src.text(doc);
    let names = text.split("::").next().unwrap_or(text);
    names
        .split(|c: char| c == ',' || c.is_whitespace())
        .any(|n| n.trim_matches(['(', ')']) == name)
}

/// `instance Show Block where …` is named `Show Block`.
fn classify<'t>(src: Source<'t>, n: Node<'t>) -> Option<Class<'t>> {
    let class = src.field_text(n, "name")?;
    let name = match n.field("patterns") {
        Some(p) => format!("{class} {}", src.text(p)),
        None => class,
    };
    let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(Class::container(name, "instance", n.field("declarations")))
}

/// `f x y` applies `f`; `M.f x` applies `f`.
fn callee<'t>(_: Source<'t>, n: Node<'t>) -> Option<Node<'t>> {
    let mut f = n.field("function")?;
    for _ in 0..16 {
        match f.kind_name() {
            "apply" => f = f.field("function")?,
            "variable" | "constructor" => return Some(f),
            "qualified" => return f.field("id"),
            _ => return None,
        }
    }
    None
}

fn import_specs<'t>(src: Source<'t>, n: Node<'t>) -> Vec<String> {
    src.field_text(n, "module").into_iter().collect()
}

/// `Text.Pandoc.Parsing` names `Text/Pandoc/Parsing.hs` at the top or
/// under `src/`.
fn import_candidates(_rel_path: &str, spec: &str) -> Vec<String> {
    let path = spec.replace('.', "/");
    vec![format!("src/{path}.hs"), format!("{path}.hs")]
}
