//! Questions about syntax nodes that several languages ask the same way:
//! what a call calls, a call's first string argument, quoted module names,
//! relative paths.

use tree_sitter::Node;

use super::spec::Source;
use crate::lang::node_ext::NodeExt;

/// The node naming what a call expression calls, by the fields the
/// C-family, Python, Go, Java, JavaScript and Rust grammars use.
pub(crate) fn callee<'t>(_: Source<'t>, n: Node<'t>) -> Option<Node<'t>> {
    let target = match n.kind_name() {
        "method_invocation" => return n.field("name"),
        "macro_invocation" => n.field("macro")?,
        "new_expression" => n.field("constructor")?,
        "object_creation_expression" => n.field("type")?,
        _ => n.field("function")?,
    };
    name_of(target, 0)
}

/// The identifier at the end of a callee expression (`a.b.c` → `c`).
pub(crate) fn name_of(n: Node<'_>, depth: u8) -> Option<Node<'_>> {
    if depth > 8 {
        return None;
    }
    match n.kind_name() {
        "identifier" | "field_identifier" | "property_identifier" | "type_identifier" => Some(n),
        "field_expression" => n.field("field").and_then(|f| name_of(f, depth + 1)),
        "member_expression" => n.field("property").and_then(|f| name_of(f, depth + 1)),
        "selector_expression" => n.field("field").and_then(|f| name_of(f, depth + 1)),
        "attribute" => n.field("attribute").and_then(|f| name_of(f, depth + 1)),
        "scoped_identifier"
        | "qualified_identifier"
        | "scoped_type_identifier"
        | "template_function"
        | "generic_type" => n
            .field("name")
            .or_else(|| n.named_child(0))
            .and_then(|f| name_of(f, depth + 1)),
        "generic_function" => n.field("function").and_then(|f| name_of(f, depth + 1)),
        _ => None,
    }
}

/// The first argument of `call` when it is a plain string literal, unquoted.
pub(crate) fn first_string_arg(src: Source<'_>, call: Node<'_>) -> Option<String> {
    let args = call.field("arguments")?;
    let first = args.named_child(0)?;
    (first.kind_name() == "string").then(|| {
        src.text(first)
            .trim_matches(|c| c == '"' || c == '\'' || c == '`')
            .to_owned()
    })
}

/// A module name without its quotes or angle brackets.
pub(crate) fn unquote(s: &str) -> String {
    s.trim_matches(|c| c == '"' || c == '\'' || c == '`' || c == '<' || c == '>')
        .to_owned()
}

/// The directory of a workspace-relative path (`""` at the top).
pub(crate) fn dir_of(rel_path: &str) -> &str {
    rel_path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// Join a directory and a relative path, resolving `.` and `..`; `None` when
/// the result would climb out of the workspace.
pub(crate) fn join_rel(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// `text` with every `(start, len)` byte span blanked to spaces, line
/// breaks kept, for a language's `parse_mask`: the same length, so every
/// position the grammar reports is the file's. `None` when there is no
/// span. Each span must start and end on a character boundary (a whole
/// construct, ending on an ASCII byte): every byte of a multi-byte
/// character inside it is blanked too, so the result stays UTF-8.
pub(crate) fn blank_spans(text: &str, spans: &[(usize, usize)]) -> Option<String> {
    same_length_edits(text, spans, &[])
}

/// [`blank_spans`], and each `(start, bytes)` of `writes` written over the
/// text's bytes from `start` (a `;` in an indentation, a keyword read as
/// another name of its length). A write must replace ASCII bytes with
/// ASCII bytes, so the result stays UTF-8; one that would not, or that
/// runs past the end, is left out. `None` when there is nothing to do.
pub(crate) fn same_length_edits(
    text: &str,
    blanks: &[(usize, usize)],
    writes: &[(usize, &[u8])],
) -> Option<String> {
    if blanks.is_empty() && writes.is_empty() {
        return None;
    }
    let mut bytes = text.as_bytes().to_vec();
    for &(start, len) in blanks {
        for b in bytes.iter_mut().skip(start).take(len) {
            if *b != b'\n' && *b != b'\r' {
                *b = b' ';
            }
        }
    }
    for &(start, with) in writes {
        if let Some(over) = bytes.get_mut(start..start + with.len()) {
            if over.is_ascii() && with.is_ascii() {
                over.copy_from_slice(with);
            }
        }
    }
    String::from_utf8(bytes).ok()
}
