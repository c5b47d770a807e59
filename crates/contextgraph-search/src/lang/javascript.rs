//! JavaScript, TypeScript and TSX (one table, three grammars): functions,
//! classes and their methods, functions bound to a `const`, functions and
//! classes a module exports by assignment (`module.exports = …`,
//! `exports.name = …`) or as its anonymous default export, interfaces,
//! types, enums, namespaces; `import`, re-exports and `require('…')`.

use tree_sitter::Node;

use super::spec::{def, Class, DefKind, LangSpec, Source, BASE};
use super::syntax::{dir_of, first_string_arg, join_rel, same_length_edits, unquote};
use crate::lang::node_ext::NodeExt;

const DEFINITIONS: &[DefKind] = &[
    def("function_declaration", "function", "name", "body", false),
    def(
        "generator_function_declaration",
        "function",
        "name",
        "body",
        false,
    ),
    def("function_signature", "function", "name", "body", false),
    def("class_declaration", "class", "name", "body", true),
    def("abstract_class_declaration", "class", "name", "body", true),
    def("class", "class", "name", "body", true),
    def("method_definition", "method", "name", "body", false),
    def("method_signature", "method", "name", "body", false),
    def("abstract_method_signature", "method", "name", "body", false),
    def("interface_declaration", "interface", "name", "body", false),
    def("type_alias_declaration", "type", "name", "value", false),
    def("enum_declaration", "enum", "name", "body", false),
    def("internal_module", "namespace", "name", "body", true),
    def("module", "namespace", "name", "body", true),
];

/// The JavaScript table; TypeScript and TSX differ in grammar, extensions
/// and type references.
const ECMASCRIPT: LangSpec = LangSpec {
    definitions: DEFINITIONS,
    special: &[
        "lexical_declaration",
        "variable_declaration",
        "expression_statement",
        "function_expression",
        "arrow_function",
        "generator_function",
    ],
    special_class: classify,
    wrappers: &["export_statement"],
    descend: &[
        "export_statement",
        "ambient_declaration",
        "statement_block",
        "declaration",
    ],
    call_kinds: &["call_expression", "new_expression"],
    call_import,
    import_kinds: &["import_statement", "export_statement"],
    import_specs,
    import_candidates,
    ..BASE
};

pub(crate) static JAVASCRIPT: LangSpec = LangSpec {
    name: "javascript",
    grammar: || tree_sitter_javascript::LANGUAGE.into(),
    extensions: &["js", "mjs", "cjs", "jsx"],
    ..ECMASCRIPT
};

pub(crate) static TYPESCRIPT: LangSpec = LangSpec {
    name: "typescript",
    grammar: || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
    extensions: &["ts", "mts", "cts"],
    reference_kinds: &["type_identifier"],
    parse_mask: separate_generic_call_signatures,
    ..ECMASCRIPT
};

/// Puts a `;` in the indentation of a generic call signature that follows
/// another member without a separator, for the parse only:
///
/// ```ts
/// export interface TakePattern<State> {
///   <P extends Predicate<State>>(predicate: P): Output<State, P>
///   <P extends Predicate<State>>(predicate: P, timeout: number): Output<State, P>
/// }
/// ```
///
/// Why: the grammar reads the second `<` as continuing the first member's
/// return type (`Output<State, P> < P …`), and redux-toolkit's
/// `listenerMiddleware/types.ts` (1,061 lines) and mobx's `api/action.ts`
/// were one parse error from there, every definition after it lost. The
/// `;` takes the place of one space of indentation (same length), so every
/// position is the file's; the chunks' text is read from the file.
fn separate_generic_call_signatures(text: &str) -> Option<String> {
    let mut semicolons: Vec<(usize, &[u8])> = Vec::new();
    let mut previous_code: &str = "";
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        let indent = line.len() - line.trim_start().len();
        if indent > 0
            && is_generic_call_signature(trimmed)
            && !previous_code.is_empty()
            && !previous_code.ends_with([';', ',', '{', '(', '[', '|', '&', '=', ':', '?'])
        {
            // Over the indentation's first byte.
            semicolons.push((start, b";"));
        }
        if !trimmed.is_empty() && !trimmed.starts_with("//") && !trimmed.starts_with('*') {
            previous_code = trimmed;
        }
        start += line.len();
    }
    same_length_edits(text, &[], &semicolons)
}

/// `<T extends X>(…` or `<T>(…`: a type parameter list opening a line and
/// followed by a parameter list.
fn is_generic_call_signature(line: &str) -> bool {
    let Some(rest) = line.strip_prefix('<') else {
        return false;
    };
    rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && (line.contains(">(") || line.ends_with(">("))
}

pub(crate) static TSX: LangSpec = LangSpec {
    name: "tsx",
    grammar: || tree_sitter_typescript::LANGUAGE_TSX.into(),
    extensions: &["tsx"],
    reference_kinds: &["type_identifier"],
    ..ECMASCRIPT
};

/// The label of a value that is a definition: a function or a class.
fn value_label(value: Node<'_>) -> Option<&'static str> {
    match value.kind_name() {
        "arrow_function" | "function_expression" | "function" | "generator_function" => {
            Some("function")
        }
        "class" => Some("class"),
        _ => None,
    }
}

/// The special kinds: a function (or class) bound to a `const`, assigned
/// to a CommonJS export, or exported as the anonymous default.
fn classify<'t>(src: Source<'t>, n: Node<'t>) -> Option<Class<'t>> {
    match n.kind_name() {
        "lexical_declaration" | "variable_declaration" => bound_to_name(src, n),
        "expression_statement" => commonjs_export(src, n),
        _ => anonymous_default_export(src, n),
    }
}

/// `const retry = (…) => {…}`: a function (or class) bound to a name.
fn bound_to_name<'t>(src: Source<'t>, n: Node<'t>) -> Option<Class<'t>> {
    let mut c = n.walk();
    let decl = n
        .named_children(&mut c)
        .find(|d| d.kind_name() == "variable_declarator")?;
    let value = decl.field("value")?;
    Some(Class::plain(
        src.field_text(decl, "name")?,
        value_label(value)?,
        value.field("body"),
    ))
}

/// `module.exports = function collect(…) {…}`, `exports.retry = (…) =>
/// {…}`, `module.exports.Client = class {…}`: CommonJS's way of defining
/// what a module offers, which left such a module without a symbol. The
/// name is the exported one; a function assigned whole to
/// `module.exports` is named by its own name, or `default` (what an ES
/// module calls its whole export) when it has none.
fn commonjs_export<'t>(src: Source<'t>, n: Node<'t>) -> Option<Class<'t>> {
    let assign = n
        .named_child(0)
        .filter(|a| a.kind_name() == "assignment_expression")?;
    let left = assign.field("left")?;
    let value = assign.field("right")?;
    let label = value_label(value)?;
    let target = src.text(left);
    let name = match target {
        "module.exports" => src
            .field_text(value, "name")
            .unwrap_or_else(|| "default".to_owned()),
        _ => {
            let member = target
                .strip_prefix("module.exports.")
                .or_else(|| target.strip_prefix("exports."))?;
            if member.is_empty()
                || !member
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
            {
                return None;
            }
            member.to_owned()
        }
    };
    Some(Class::plain(name, label, value.field("body")))
}

/// `export default function (…) {…}`, `export default (…) => …`: a
/// module's anonymous default export, named `default` as the module
/// system names it. (A named one is a declaration the table finds.)
fn anonymous_default_export<'t>(src: Source<'t>, n: Node<'t>) -> Option<Class<'t>> {
    n.parent().filter(|p| p.kind_name() == "export_statement")?;
    let name = src
        .field_text(n, "name")
        .unwrap_or_else(|| "default".to_owned());
    Some(Class::plain(name, value_label(n)?, n.field("body")))
}

/// CommonJS: `require('./wire')` imports `./wire`.
fn call_import<'t>(src: Source<'t>, callee: &str, n: Node<'t>) -> Option<String> {
    (callee == "require" && n.kind_name() == "call_expression")
        .then(|| first_string_arg(src, n))
        .flatten()
}

fn import_specs<'t>(src: Source<'t>, n: Node<'t>) -> Vec<String> {
    src.field_text(n, "source")
        .map(|s| vec![unquote(&s)])
        .unwrap_or_default()
}

/// A relative specifier names the file as written or with one of the
/// usual extensions or index files; a package name names no workspace file.
fn import_candidates(rel_path: &str, spec: &str) -> Vec<String> {
    let mut out = Vec::new();
    if !spec.starts_with('.') {
        return out;
    }
    if let Some(base) = join_rel(dir_of(rel_path), spec) {
        out.push(base.clone());
        for ext in [
            ".ts",
            ".tsx",
            ".js",
            ".jsx",
            ".mjs",
            "/index.ts",
            "/index.tsx",
            "/index.js",
        ] {
            out.push(format!("{base}{ext}"));
        }
    }
    out
}
