//! Text that reaches a terminal from somewhere cgp does not control — a
//! file name, a provider's name or version, a configuration value, a peer's
//! error — goes through [`for_terminal`] first, so it cannot clear the
//! screen, retitle the window, move the cursor over an earlier line or
//! reorder what is shown with bidirectional controls.
//!
//! The policy (which characters, shown how) is the workspace's one
//! display-text policy, `contextgraph_types::display_text`; these are the
//! CLI's owned-`String` entry points to it.

use contextgraph_types::display_text;

/// `text` with every control character (newlines too, so one value cannot
/// forge a second line), escape-sequence introducer and bidirectional or
/// invisible formatting character escaped as `\u{…}`.
pub fn for_terminal(text: &str) -> String {
    display_text::for_terminal(text).into_owned()
}

/// [`for_terminal`] for a multi-line message (an error with indented
/// reasons): newlines stay, every other escaped character is escaped.
pub fn lines_for_terminal(text: &str) -> String {
    display_text::lines_for_terminal(text).into_owned()
}

/// A composed prompt printed to a terminal: line breaks and tabs (code's
/// own layout) stay, every other escaped character — ESC and the C1
/// controls behind screen clears, window titles and OSC 52 clipboard
/// writes, CR, bidirectional controls — is shown as `\u{…}` (N11). Only
/// for a terminal: piped output is the prompt byte for byte.
pub fn prompt_for_terminal(text: &str) -> std::borrow::Cow<'_, str> {
    let shown = |c: char| c == '\n' || c == '\t' || !display_text::is_escaped(c);
    if text.chars().all(shown) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if shown(c) {
            out.push(c);
        } else {
            out.extend(c.escape_unicode());
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Rendered TOML with every escaped character but `\n` and `\t` written
/// as a TOML escape (`\u202E`): inside a basic string that is the same
/// value, in a comment it is shown, not obeyed (N15).
pub fn toml_escaped(text: &str) -> std::borrow::Cow<'_, str> {
    let shown = |c: char| c == '\n' || c == '\t' || !display_text::is_escaped(c);
    if text.chars().all(shown) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if shown(c) {
            out.push(c);
        } else if u32::from(c) <= 0xFFFF {
            out.push_str(&format!("\\u{:04X}", u32::from(c)));
        } else {
            out.push_str(&format!("\\U{:08X}", u32::from(c)));
        }
    }
    std::borrow::Cow::Owned(out)
}

/// [`for_terminal`] for a path (shown lossily when it is not UTF-8).
pub fn path_for_terminal(path: &std::path::Path) -> String {
    for_terminal(&path.to_string_lossy())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_newlines_and_bidi_controls_are_shown_not_obeyed() {
        let evil = "a\x1b]0;pwned\x07b\x1b[2Jc\nd\re\u{202e}f\u{9b}g";
        let shown = for_terminal(evil);
        assert!(!shown.chars().any(display_text::is_escaped), "{shown}");
        assert!(shown.contains("\\u{1b}]0;pwned\\u{7}"), "{shown}");
        assert_eq!(for_terminal("plain ünïcode"), "plain ünïcode");
        let lines = lines_for_terminal("a\n b\x1b[K");
        assert_eq!(lines, "a\n b\\u{1b}[K");
    }

    #[test]
    fn a_prompt_keeps_its_layout_and_loses_its_escape_sequences() {
        let prompt = "fn a() {\n\tb();\n}\n\x1b[2J\x1b]52;c;ZXZpbA==\x07\x1b]0;t\x07\r\u{9b}x";
        let shown = prompt_for_terminal(prompt);
        assert!(shown.starts_with("fn a() {\n\tb();\n}\n"), "{shown}");
        assert!(!shown.contains('\x1b') && !shown.contains('\r') && !shown.contains('\u{9b}'));
        assert!(shown.contains("\\u{1b}]52;c;"), "{shown}");
        assert_eq!(prompt_for_terminal("plain\n\ttext"), "plain\n\ttext");
    }

    #[test]
    fn toml_output_escapes_bidi_controls_as_toml_escapes() {
        let text = "[providers.x]\ncommand = \"a\u{202E}b\"\n";
        let shown = toml_escaped(text);
        assert_eq!(shown, "[providers.x]\ncommand = \"a\\u202Eb\"\n");
        let env = contextgraph_config::Environment::default();
        let back = contextgraph_config::Config::from_toml_str(
            &shown,
            std::path::Path::new("/r/cgp.toml"),
            &env,
        )
        .unwrap();
        match &back.provider("x").unwrap().kind {
            contextgraph_config::ProviderKind::Stdio { command, .. } => {
                assert_eq!(command, std::path::Path::new("a\u{202E}b"));
            }
            other => panic!("{other:?}"),
        }
    }
}
