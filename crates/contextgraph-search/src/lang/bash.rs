//! Bash and POSIX shell: functions (`f() { … }`, `function f { … }`);
//! commands as calls (shell builtins left out); `source` and `.` of a
//! literal path as imports.

use tree_sitter::Node;

use super::spec::{def, LangSpec, Source, BASE};
use super::syntax::{dir_of, join_rel, unquote};
use crate::lang::node_ext::NodeExt;

pub(crate) static BASH: LangSpec = LangSpec {
    name: "bash",
    grammar: || tree_sitter_bash::LANGUAGE.into(),
    extensions: &["sh", "bash", "bats"],
    file_names: &[".bashrc", ".bash_profile"],
    definitions: &[def(
        "function_definition",
        "function",
        "name",
        "body",
        false,
    )],
    // Functions defined inside `if` blocks (guarded definitions).
    descend: &[
        "if_statement",
        "else_clause",
        "elif_clause",
        "compound_statement",
    ],
    call_kinds: &["command"],
    callee,
    call_import,
    not_calls: BUILTINS,
    import_candidates,
    ..BASE
};

/// Builtins and the commonest utilities: a call edge to `echo` relates
/// nothing.
const BUILTINS: &[&str] = &[
    "echo", "printf", "local", "export", "return", "read", "shift", "set", "unset", "test", "eval",
    "exec", "cd", "true", "false", "exit", "source", "declare", "readonly", "typeset", "trap",
    "wait", "command", "builtin", "type", "cat", "grep", "sed", "awk", "rm", "mkdir", "ls", "cp",
    "mv",
];

/// The command a command node runs (`command x` and `builtin x` run `x`).
fn callee<'t>(src: Source<'t>, n: Node<'t>) -> Option<Node<'t>> {
    let name = n.field("name")?;
    if matches!(src.text(name), "command" | "builtin" | "exec") {
        let arg = n.field("argument")?;
        return (arg.kind_name() == "word").then_some(arg);
    }
    Some(name)
}

/// `source ./lib/x.sh`, `. "$DIR/x.sh"` (only a literal path counts).
fn call_import<'t>(src: Source<'t>, callee: &str, n: Node<'t>) -> Option<String> {
    if !matches!(callee, "source" | ".") {
        return None;
    }
    let arg = n.field("argument")?;
    if !matches!(arg.kind_name(), "word" | "string" | "raw_string") {
        return None;
    }
    let path = unquote(src.text(arg));
    (!path.is_empty() && !path.contains('$') && !path.contains('`')).then_some(path)
}

/// A sourced path names the file beside the sourcing script, or at the top.
fn import_candidates(rel_path: &str, spec: &str) -> Vec<String> {
    let rel = spec.trim_start_matches('/');
    join_rel(dir_of(rel_path), rel)
        .into_iter()
        .chain([rel.to_owned()])
        .collect()
}
