//! Kotlin: classes, interfaces, objects and companion objects as
//! containers of their functions; type aliases; calls (the constructor
//! call of a class is a call of its name); `import` directives.

use tree_sitter::Node;

use super::spec::{Class, LangSpec, Source, BASE};
use super::syntax::same_length_edits;
use crate::lang::node_ext::NodeExt;

pub(crate) static KOTLIN: LangSpec = LangSpec {
    name: "kotlin",
    grammar: || tree_sitter_kotlin_ng::LANGUAGE.into(),
    extensions: &["kt", "kts"],
    special: &[
        "class_declaration",
        "object_declaration",
        "companion_object",
        "function_declaration",
        "secondary_constructor",
        "type_alias",
    ],
    special_class: classify,
    doc_kinds: &["line_comment", "block_comment"],
    call_kinds: &["call_expression"],
    callee,
    reference_kinds: &["user_type"],
    reference: type_name,
    import_kinds: &["import"],
    import_specs,
    import_candidates,
    parse_mask: mask_grammar_gaps,
    ..BASE
};

/// Masks, for the parse only, the constructs of current Kotlin the grammar
/// cannot parse, each of which turned the rest of a file into one parse
/// error (every definition after it lost). Blanked:
///
/// - the annotations of a primary constructor that starts its own line
///   (`value class R<T>` then `@PublishedApi internal constructor(…) {`):
///   the grammar ends the class header at a line that starts with an
///   annotation (kotlinx-coroutines' `Channel.kt`, from line 813 of 1,600);
/// - a guard on a `when` branch (`is IntegerColumnType if seq != null ->`,
///   Kotlin 2.1): Exposed's `ColumnType.kt` was one error from line 140 of
///   1,473;
/// - the annotations of a property accessor (`val identifier` /
///   `@OptIn(InternalApi::class)` / `get() = …`): Exposed's `Schema.kt` and
///   `VendorDialect.kt` were one error from there.
///
/// Blanked (spaces, same length), the header reads `internal
/// constructor(…) {`, the branch `is IntegerColumnType ->` and the accessor
/// `get() = …`, which the grammar parses. And soft keywords used as names
/// are read as other names ([`soft_keywords_as_names`]). The chunks' text
/// is read from the file, so the annotations, guards and names are still
/// in it.
fn mask_grammar_gaps(text: &str) -> Option<String> {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut after_header = false;
    let mut start = 0;
    for (k, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        let indent = line.len() - line.trim_start().len();
        if !trimmed.is_empty() {
            if after_header {
                if let Some(len) = annotations_before_constructor(trimmed) {
                    spans.push((start + indent, len));
                }
            }
            if trimmed.starts_with('@') {
                let next = lines[k + 1..]
                    .iter()
                    .map(|l| l.trim())
                    .find(|l| !l.is_empty())
                    .unwrap_or("");
                if let Some(len) = annotations_before_accessor(trimmed, next) {
                    spans.push((start + indent, len));
                }
            }
            if let Some(at) = when_guard_start(trimmed) {
                let from = start + indent + at;
                if let Some(len) = guard_len(&text[from..]) {
                    spans.push((from, len));
                }
            }
            after_header = is_class_header(trimmed);
        }
        start += line.len();
    }
    same_length_edits(text, &spans, &soft_keywords_as_names(text))
}

/// A soft keyword the grammar reads as a keyword where code uses it as a
/// name: the word, what the parse reads instead (a name of the same length
/// that is no keyword), and whether the occurrence ending at a byte offset
/// of the text is used as a name.
struct SoftKeyword {
    word: &'static str,
    stand_in: &'static [u8],
    used_as_name: fn(text: &[u8], end: usize) -> bool,
}

/// Where a soft keyword is used as a name in a way the grammar cannot
/// parse; each gave up on the rest of its file:
///
/// - `suspend` in an expression, not as the modifier of a function or a
///   function type: a named argument or an assignment (`acquire(suspend =
///   { … })`) or a call (`if (suspend(waiter))`, `suspend { … }`);
///   kotlinx-coroutines' `Semaphore.kt`. A parenthesised list followed by
///   `->` is a function type (`suspend (Int) -> Unit`) and is left alone.
/// - `where` starting a member access on a statement of its own
///   (`where?.let { … }`, `where.toString()`, `where!!`, `where[0]`): the
///   grammar reads a type-constraint clause of the statement before;
///   Exposed's SQL dialects and `AbstractQuery.kt` (a parameter `where:
///   Op<Boolean>?`). The clause is always `where T : …`, never followed by
///   one of those.
const SOFT_KEYWORDS: &[SoftKeyword] = &[
    SoftKeyword {
        word: "suspend",
        stand_in: b"suspenx",
        used_as_name: |b, end| {
            let next = skip_blanks(b, end);
            match b.get(next) {
                Some(b'=') => b.get(next + 1) != Some(&b'='),
                Some(b'{') => true,
                Some(b'(') => closing_paren(b, next)
                    .is_some_and(|c| !b[skip_blanks(b, c + 1)..].starts_with(b"->")),
                _ => false,
            }
        },
    },
    SoftKeyword {
        word: "where",
        stand_in: b"wherx",
        used_as_name: |b, end| {
            matches!(b.get(end), Some(b'.' | b'['))
                || b[end..].starts_with(b"?.")
                || b[end..].starts_with(b"!!")
        },
    },
];

/// Each [`SOFT_KEYWORDS`] word used as a name, as the write that renames it
/// for the parse.
fn soft_keywords_as_names(text: &str) -> Vec<(usize, &'static [u8])> {
    let b = text.as_bytes();
    let is_name = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    for keyword in SOFT_KEYWORDS {
        let mut from = 0;
        while let Some(found) = text.get(from..).and_then(|rest| rest.find(keyword.word)) {
            let at = from + found;
            let end = at + keyword.word.len();
            from = end;
            let whole_word =
                !(at > 0 && is_name(b[at - 1]) || b.get(end).is_some_and(|&c| is_name(c)));
            if whole_word && (keyword.used_as_name)(b, end) {
                out.push((at, keyword.stand_in));
            }
        }
    }
    out
}

/// The first byte at or after `i` that is not a space or a tab.
fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|&c| c == b' ' || c == b'\t') {
        i += 1;
    }
    i
}

/// The index of the `)` closing the `(` at `open`, on the same line.
fn closing_paren(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &c) in b.iter().enumerate().skip(open) {
        match c {
            b'(' => depth += 1,
            b')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            b'\n' => return None,
            _ => {}
        }
    }
    None
}

/// Where the guard of a `when` branch starts in `line` (` if cond` in
/// `is T if cond -> …`), when the line is such a branch.
fn when_guard_start(line: &str) -> Option<usize> {
    let subject = ["is ", "!is ", "in ", "!in "];
    if !subject.iter().any(|p| line.starts_with(p)) {
        return None;
    }
    let head = line.find("->").map_or(line, |arrow| &line[..arrow]);
    head.find(" if ")
}

/// Lines a guard may span (`if (` … `) ->` over a few lines).
const MAX_GUARD_LINES: usize = 12;

/// The length of a guard that starts `rest`, up to its branch's arrow at
/// bracket depth 0; `None` when no arrow closes it within a few lines or
/// a brace opens first (then it is not a guard this rule understands).
fn guard_len(rest: &str) -> Option<usize> {
    let b = rest.as_bytes();
    let mut depth = 0usize;
    let mut lines = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth = depth.checked_sub(1)?,
            b'{' | b'}' if depth == 0 => return None,
            // A string or character literal, skipped whole (on its line).
            q @ (b'"' | b'\'') => {
                i += 1;
                while b.get(i).is_some_and(|&c| c != q) {
                    match b[i] {
                        b'\n' => return None,
                        b'\\' => i += 2,
                        _ => i += 1,
                    }
                }
                if i >= b.len() {
                    return None;
                }
            }
            b'\n' => {
                lines += 1;
                if lines > MAX_GUARD_LINES {
                    return None;
                }
            }
            b'-' if depth == 0 && b.get(i + 1) == Some(&b'>') => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// A class header still waiting for its constructor or body.
fn is_class_header(line: &str) -> bool {
    !line.contains('{')
        && !line.starts_with("//")
        && !line.starts_with('*')
        && line.split_whitespace().any(|w| w == "class")
}

/// The length of the annotations at the start of `line` when a primary
/// constructor follows them (`@A @B(x) internal constructor(`).
fn annotations_before_constructor(line: &str) -> Option<usize> {
    let end = leading_annotations(line)?;
    let mut rest = line[end..].split_whitespace();
    let mut word = rest.next()?;
    while matches!(word, "public" | "private" | "protected" | "internal") {
        word = rest.next()?;
    }
    (word == "constructor" || word.starts_with("constructor(")).then_some(end)
}

/// The length of the annotations at the start of `line` when a property
/// accessor follows them, on the line or as the `next` line holding code
/// (`val id` / `@OptIn(X::class)` / `get() = …`).
fn annotations_before_accessor(line: &str, next: &str) -> Option<usize> {
    let end = leading_annotations(line)?;
    let rest = line[end..].trim();
    let accessor = if rest.is_empty() { next } else { rest };
    let mut words = accessor.split(|c: char| c.is_whitespace() || c == '(' || c == '=');
    let mut word = words.next()?;
    while matches!(word, "public" | "private" | "protected" | "internal" | "") {
        word = words.next()?;
    }
    matches!(word, "get" | "set").then_some(end)
}

/// The length of the annotations (`@A`, `@B(x)`, `@field:C`) at the start
/// of `line`, when it starts with one.
fn leading_annotations(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    let mut i = 0;
    let mut end = None;
    loop {
        while b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if b.get(i) != Some(&b'@') {
            break;
        }
        i += 1;
        let name_start = i;
        while b
            .get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b':'))
        {
            i += 1;
        }
        if i == name_start {
            return None;
        }
        if b.get(i) == Some(&b'(') {
            i = closing_paren(b, i)? + 1;
        }
        end = Some(i);
    }
    end
}

/// The first named child of `n` of one of `kinds`.
fn child_of_kind<'t>(n: Node<'t>, kinds: &[&str]) -> Option<Node<'t>> {
    let mut c = n.walk();
    let found = n
        .named_children(&mut c)
        .find(|k| kinds.contains(&k.kind_name()));
    found
}

/// Whether `n` has an anonymous child token `word` (`interface`, `enum`).
fn has_token(n: Node<'_>, word: &str) -> bool {
    let mut c = n.walk();
    let found = n
        .children(&mut c)
        .any(|k| !k.is_named() && k.kind_name() == word);
    found
}

fn classify<'t>(src: Source<'t>, n: Node<'t>) -> Option<Class<'t>> {
    match n.kind_name() {
        "class_declaration" => {
            let body = child_of_kind(n, &["class_body", "enum_class_body"]);
            let label = if has_token(n, "interface") {
                "interface"
            } else if body.is_some_and(|b| b.kind_name() == "enum_class_body") {
                "enum"
            } else {
                "class"
            };
            Some(Class::container(src.field_text(n, "name")?, label, body))
        }
        "object_declaration" => Some(Class::container(
            src.field_text(n, "name")?,
            "object",
            child_of_kind(n, &["class_body"]),
        )),
        "companion_object" => Some(Class::container(
            src.field_text(n, "name")
                .unwrap_or_else(|| "Companion".to_owned()),
            "object",
            child_of_kind(n, &["class_body"]),
        )),
        "function_declaration" => Some(Class::plain(
            src.field_text(n, "name")?,
            "function",
            child_of_kind(n, &["function_body"]),
        )),
        "secondary_constructor" => Some(Class::plain(
            "constructor".to_owned(),
            "constructor",
            child_of_kind(n, &["block"]),
        )),
        "type_alias" => Some(Class::plain(src.field_text(n, "type")?, "type", None)),
        _ => None,
    }
}

/// `f(x)` calls `f`, `a.b.f(x)` calls `f`.
fn callee<'t>(_: Source<'t>, n: Node<'t>) -> Option<Node<'t>> {
    let target = n.named_child(0)?;
    match target.kind_name() {
        "identifier" => Some(target),
        "navigation_expression" => {
            let mut c = target.walk();
            let last = target.named_children(&mut c).last();
            last.filter(|k| k.kind_name() == "identifier")
        }
        _ => None,
    }
}

/// A user type names its last identifier (`Map.Entry` → `Entry`).
fn type_name<'t>(_: Source<'t>, n: Node<'t>) -> Option<Node<'t>> {
    let mut c = n.walk();
    let last = n
        .named_children(&mut c)
        .filter(|k| k.kind_name() == "identifier")
        .last();
    last
}

fn import_specs<'t>(src: Source<'t>, n: Node<'t>) -> Vec<String> {
    child_of_kind(n, &["qualified_identifier", "identifier"])
        .map(|q| vec![src.text(q).to_owned()])
        .unwrap_or_default()
}

/// `a.b.C` names `a/b/C.kt` under the usual source roots.
fn import_candidates(_rel_path: &str, spec: &str) -> Vec<String> {
    let path = spec.replace('.', "/");
    ["src/main/kotlin/", "src/commonMain/kotlin/", "src/", ""]
        .iter()
        .map(|root| format!("{root}{path}.kt"))
        .collect()
}
