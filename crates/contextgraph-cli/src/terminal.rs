//! Text that reaches a terminal from somewhere cgp does not control — a
//! file name, a provider's name or version, a configuration value, a peer's
//! error — goes through [`for_terminal`] first, so it cannot clear the
//! screen, retitle the window, move the cursor over an earlier line or
//! reorder what is shown with bidirectional controls.
//!
//! This is the CLI's one place for it; when the shared text helper in
//! `contextgraph-types` lands, this function becomes a call to it.

/// `text` with every control character (ASCII controls, DEL and U+0080 to
/// U+009F: ESC, CR, BEL, and
/// newlines too, so one value cannot forge a second line) and every
/// bidirectional formatting character escaped as `\u{…}`.
pub fn for_terminal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if needs_escape(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// [`for_terminal`] for a multi-line message (an error with indented
/// reasons): newlines stay, every other control character is escaped.
pub fn lines_for_terminal(text: &str) -> String {
    text.split('\n')
        .map(for_terminal)
        .collect::<Vec<_>>()
        .join("\n")
}

/// [`for_terminal`] for a path (shown lossily when it is not UTF-8).
pub fn path_for_terminal(path: &std::path::Path) -> String {
    for_terminal(&path.to_string_lossy())
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_newlines_and_bidi_controls_are_shown_not_obeyed() {
        let evil = "a\x1b]0;pwned\x07b\x1b[2Jc\nd\re\u{202e}f\u{9b}g";
        let shown = for_terminal(evil);
        assert!(!shown.chars().any(needs_escape), "{shown}");
        assert!(shown.contains("\\u{1b}]0;pwned\\u{7}"), "{shown}");
        assert_eq!(for_terminal("plain ünïcode"), "plain ünïcode");
    }
}
