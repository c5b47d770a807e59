//! Conditional compilation whose branches each open (or close) a brace,
//! blanked for the parse so a C-family grammar sees one branch.
//!
//! ```c
//! #ifdef HAVE_UTF8PROC
//!     switch (utf8proc_mbtowc(&wc, ud->data, ud->size)) {
//! #else
//!     switch (mbtowc(&wc, ud->data, ud->size)) {
//! #endif
//! ```
//!
//! A grammar reads both branches as code: two `{` for one `}`, and the
//! rest of the file (tmux's `utf8.c` from line 214 of 586) is one parse
//! error whose definitions are found, if at all, without their bodies.
//! The compiler sees one branch; so does the parse here: for an
//! `#if`/`#ifdef`/`#ifndef` whose first branch does not balance its
//! braces, its directive lines and every branch after the first are
//! blanked (spaces, same length, line breaks kept). Code-navigation
//! indexers (ctags among them) follow the first branch the same way.
//! Blocks that balance are left to the grammar, which parses them. The
//! chunks' text is read from the file, so nothing is hidden from a reader.

/// Nesting depth of conditionals followed; deeper ones are left alone.
const MAX_DEPTH: usize = 32;

/// One open conditional.
struct Frame {
    /// Byte spans of its directive lines and of its later branches' lines.
    spans: Vec<(usize, usize)>,
    /// Still in its first branch.
    first: bool,
    /// `{` minus `}` over its first branch.
    delta: i64,
}

/// The text to parse, when some conditional's first branch does not
/// balance its braces (`None`: parse the file as it is).
pub(crate) fn mask_unbalanced_conditionals(text: &str) -> Option<String> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut blank: Vec<(usize, usize)> = Vec::new();
    let mut in_comment = false;
    let mut at = 0usize;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let trimmed = line.trim_start();
        if !in_comment {
            if let Some(directive) = trimmed.strip_prefix('#') {
                let word = directive
                    .trim_start()
                    .split(|c: char| !c.is_ascii_alphabetic())
                    .next()
                    .unwrap_or("");
                match word {
                    "if" | "ifdef" | "ifndef" => {
                        if stack.len() < MAX_DEPTH {
                            stack.push(Frame {
                                spans: vec![(start, line.len())],
                                first: true,
                                delta: 0,
                            });
                        }
                        continue;
                    }
                    "elif" | "else" | "elifdef" | "elifndef" => {
                        if let Some(top) = stack.last_mut() {
                            top.first = false;
                            top.spans.push((start, line.len()));
                        }
                        continue;
                    }
                    "endif" => {
                        if let Some(mut top) = stack.pop() {
                            top.spans.push((start, line.len()));
                            if top.delta != 0 {
                                blank.extend(top.spans);
                            } else if let Some(parent) = stack.last_mut().filter(|p| !p.first) {
                                // Balanced, inside a later branch of its
                                // parent: blanked with that branch if the
                                // parent is, directive lines included (its
                                // code lines were recorded as they came).
                                parent.spans.extend(top.spans);
                            }
                        }
                        continue;
                    }
                    _ => {}
                }
            }
        }
        let delta = brace_delta(line, &mut in_comment);
        // A line counts for each conditional it is in the first branch of,
        // through every conditional nested inside that one.
        let mut first_so_far = true;
        for frame in stack.iter_mut().rev() {
            if !frame.first {
                frame.spans.push((start, line.len()));
                first_so_far = false;
                continue;
            }
            if first_so_far {
                frame.delta += delta;
            }
        }
    }
    // Whole lines are blanked: every multi-byte character with them.
    super::syntax::blank_spans(text, &blank)
}

/// `{` minus `}` on one line of C-family code, outside comments, string
/// and character literals; `in_comment` carries a `/* … */` across lines.
fn brace_delta(line: &str, in_comment: &mut bool) -> i64 {
    let b = line.as_bytes();
    let mut delta = 0i64;
    let mut i = 0;
    while i < b.len() {
        if *in_comment {
            if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                *in_comment = false;
                i += 2;
            } else {
                i += 1;
            }
            continue;
        }
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => break,
            b'/' if b.get(i + 1) == Some(&b'*') => {
                *in_comment = true;
                i += 2;
                continue;
            }
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'{' => delta += 1,
            b'}' => delta -= 1,
            _ => {}
        }
        i += 1;
    }
    delta
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unbalanced_branches_keep_the_first_one_only() {
        let text = "int f(void)\n{\n#ifdef A\n\tswitch (a()) {\n#else\n\tswitch (b()) {\n#endif\n\tcase 1: return 1;\n\t}\n}\n";
        let masked = mask_unbalanced_conditionals(text).expect("masked");
        assert_eq!(masked.len(), text.len());
        assert_eq!(masked.lines().count(), text.lines().count());
        assert!(masked.contains("switch (a()) {"));
        assert!(!masked.contains("switch (b())"));
        assert!(!masked.contains("#ifdef") && !masked.contains("#endif"));
    }

    #[test]
    fn balanced_branches_braces_in_comments_and_strings_are_left_alone() {
        let text = "#ifdef A\nint f(void) { return 1; }\n#else\nint f(void) { return \"{\"[0]; } /* { */\n#endif\n";
        assert_eq!(mask_unbalanced_conditionals(text), None);
        let text = "#if A\n/* { */\nint x; // {\n#endif\n";
        assert_eq!(mask_unbalanced_conditionals(text), None);
    }

    #[test]
    fn nested_and_unterminated_conditionals_do_not_panic() {
        let text = "#if A\n#ifdef B\n{\n#else\n{\n#endif\n}\n#else\n#elif\n";
        let masked = mask_unbalanced_conditionals(text).expect("masked");
        assert_eq!(masked.len(), text.len());
        for text in ["#endif\n#else\n", "#if\n", "\"unterminated {\n", "'\\"] {
            let _ = mask_unbalanced_conditionals(text);
        }
    }
}
