//! The one way text that cgp does not control — a provider's name, version
//! or error message, a file name, a peer's bytes, a configuration value — is
//! made safe to show to a person: in a terminal, a log line, an error, a
//! report. Every crate that shows such text goes through this module, so a
//! hostile string is treated the same way everywhere.
//!
//! # Policy
//!
//! A character is **escaped** (shown as inert text, never obeyed) when it is
//! one of:
//!
//! - a **control character** (Unicode `Cc`): the ASCII controls
//!   (`U+0000`–`U+001F`, which include ESC, BEL, CR, LF and TAB), DEL
//!   (`U+007F`) and the 8-bit controls (`U+0080`–`U+009F`, which include
//!   the single-character CSI `U+009B` and OSC `U+009D`). Escaping ESC and CSI/OSC disarms every terminal
//!   escape sequence: what followed the introducer stays visible as plain
//!   text (`\u{1b}[2J`), so a string cannot clear the screen, retitle the
//!   window or move the cursor; escaping CR and LF means one value cannot
//!   forge a second line;
//! - a **bidirectional formatting** character: the Arabic letter mark
//!   `U+061C`, LRM/RLM `U+200E`/`U+200F`, the embeddings and overrides
//!   `U+202A`–`U+202E` and the isolates `U+2066`–`U+2069`, which reorder
//!   what is shown (a "Trojan Source" name can read as something else);
//! - an **invisible formatting** character: soft hyphen `U+00AD`, Mongolian
//!   vowel separator `U+180E`, zero-width space/joiners `U+200B`–`U+200D`,
//!   the line and paragraph separators `U+2028`/`U+2029`, word joiner and
//!   invisible operators `U+2060`–`U+206F`, the byte-order mark `U+FEFF`,
//!   interlinear annotation controls `U+FFF9`–`U+FFFB` and the tag
//!   characters `U+e0000`–`U+e007f` (which can smuggle invisible text).
//!
//! An escaped character is written as `\u{HEX}` (Rust's notation, lowercase
//! hex: a newline is `\u{a}`, ESC `\u{1b}`), one form for every class so a
//! reader learns one notation. All
//! other characters, non-ASCII letters and emoji included, are kept as they
//! are. A backslash is not escaped: the output is for a person to read, not
//! to be parsed back.
//!
//! **Bounding** ([`bounded`]) counts characters of the *output*, escapes and
//! the cut marker included, so a bound is a bound on what reaches the
//! screen: at most `max_chars` characters, cut on a character boundary and
//! never inside an escape, ending in `…` exactly when something was cut.

use std::borrow::Cow;

/// The mark appended when text was cut.
pub const CUT_MARK: char = '…';

/// Whether `c` is escaped by this module's policy (see the module docs).
pub fn is_escaped(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{e0000}'..='\u{e007f}'
        )
}

/// Append the shown form of `c` (escaped or as is) to `out`; returns the
/// number of characters appended.
fn push_shown(c: char, out: &mut String) -> usize {
    if is_escaped(c) {
        let before = out.len();
        out.extend(c.escape_unicode());
        out.len() - before // the escape is ASCII: bytes == chars
    } else {
        out.push(c);
        1
    }
}

/// How many characters the shown form of `c` takes.
fn shown_len(c: char) -> usize {
    if is_escaped(c) {
        c.escape_unicode().len()
    } else {
        1
    }
}

/// `text` with every escaped character (see the module docs) shown as
/// inert text; borrowed unchanged when there is nothing to escape.
pub fn for_terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        push_shown(c, &mut out);
    }
    Cow::Owned(out)
}

/// [`for_terminal`] for a multi-line message (an error with indented
/// reasons): `\n` is kept as a line break, every other escaped character
/// (CR included, so no line can be overwritten) is escaped.
pub fn lines_for_terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c != '\n' && is_escaped(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c == '\n' {
            out.push('\n');
        } else {
            push_shown(c, &mut out);
        }
    }
    Cow::Owned(out)
}

/// `text` escaped as [`for_terminal`] does and cut to at most `max_chars`
/// characters of output (escapes and the `…` mark included), never inside
/// an escape; ends in `…` exactly when something was cut. With
/// `max_chars == 0` the result is empty.
pub fn bounded(text: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max_chars.saturating_mul(4)) + 4);
    let mut used = 0usize;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        let need = shown_len(c);
        // Room for this character, and for the mark if more follows.
        let rest_empty = chars.as_str().is_empty();
        let reserve = usize::from(!rest_empty);
        if used + need + reserve > max_chars {
            // Either this one does not fit or nothing could follow it: cut
            // here unless it fits exactly as the last character.
            if rest_empty && used + need <= max_chars {
                push_shown(c, &mut out);
                return out;
            }
            if used < max_chars {
                out.push(CUT_MARK);
            }
            return out;
        }
        used += push_shown(c, &mut out);
    }
    out
}

/// [`bounded`] for raw bytes that may not be UTF-8 (decoded lossily, so an
/// invalid sequence shows as `U+FFFD`). Only a prefix long enough to fill
/// the bound is decoded.
pub fn bounded_bytes(bytes: &[u8], max_chars: usize) -> String {
    // Each output char needs at least one input byte; 4 bytes per char is
    // the most UTF-8 needs, plus one so a cut is still detected.
    let head = &bytes[..bytes
        .len()
        .min(max_chars.saturating_mul(4).saturating_add(1))];
    bounded(&String::from_utf8_lossy(head), max_chars)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean(s: &str) -> bool {
        !s.chars().any(is_escaped)
    }

    #[test]
    fn plain_text_and_unicode_pass_unchanged_and_borrowed() {
        let s = "plain ünïcode 漢字 🦀 \\ path/to/file.rs";
        assert!(matches!(for_terminal(s), Cow::Borrowed(_)));
        assert_eq!(for_terminal(s), s);
        assert_eq!(bounded(s, 1000), s);
    }

    #[test]
    fn c0_controls_and_del_are_escaped() {
        assert_eq!(for_terminal("a\nb\rc\td"), "a\\u{a}b\\u{d}c\\u{9}d");
        assert_eq!(for_terminal("\0\x07\x08\x7f"), "\\u{0}\\u{7}\\u{8}\\u{7f}");
    }

    #[test]
    fn escape_sequences_are_disarmed_and_visible() {
        let csi = for_terminal("x\x1b[2Jy");
        assert_eq!(csi, "x\\u{1b}[2Jy");
        let osc = for_terminal("\x1b]0;pwned\x07");
        assert_eq!(osc, "\\u{1b}]0;pwned\\u{7}");
        let st = for_terminal("\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\");
        assert!(clean(&st), "{st}");
    }

    #[test]
    fn c1_controls_including_csi_and_osc_are_escaped() {
        assert_eq!(for_terminal("\u{9b}2J"), "\\u{9b}2J");
        assert_eq!(for_terminal("\u{9d}0;t\u{9c}"), "\\u{9d}0;t\\u{9c}");
        assert_eq!(for_terminal("\u{85}"), "\\u{85}");
    }

    #[test]
    fn bidi_controls_are_escaped() {
        for c in [
            '\u{061C}', '\u{200E}', '\u{200F}', '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}',
            '\u{202E}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
        ] {
            let text = format!("a{c}b");
            assert_eq!(for_terminal(&text), format!("a\\u{{{:x}}}b", u32::from(c)));
        }
    }

    #[test]
    fn invisible_formatting_characters_are_escaped() {
        for c in [
            '\u{00AD}',
            '\u{180E}',
            '\u{200B}',
            '\u{200C}',
            '\u{200D}',
            '\u{2028}',
            '\u{2029}',
            '\u{2060}',
            '\u{2064}',
            '\u{FEFF}',
            '\u{FFF9}',
            '\u{FFFB}',
            '\u{e0001}',
            '\u{e0041}',
            '\u{e007f}',
        ] {
            assert!(is_escaped(c), "{:x}", u32::from(c));
            assert!(clean(&for_terminal(&format!("a{c}b"))));
        }
        // Neighbours of the ranges are ordinary text.
        for c in [
            '\u{00AC}',
            '\u{200A}',
            '\u{2070}',
            '\u{FFFC}',
            '\u{e0080}',
            'é',
        ] {
            assert!(!is_escaped(c), "{:x}", u32::from(c));
        }
    }

    #[test]
    fn lines_keep_newlines_and_escape_the_rest() {
        assert_eq!(
            lines_for_terminal("a\n  b\r\x1b[K"),
            "a\n  b\\u{d}\\u{1b}[K"
        );
        assert!(matches!(lines_for_terminal("a\nb"), Cow::Borrowed(_)));
    }

    #[test]
    fn bounded_counts_output_characters_and_marks_a_cut() {
        assert_eq!(bounded("abc", 10), "abc");
        assert_eq!(bounded("abc", 3), "abc");
        assert_eq!(bounded("abcd", 3), "ab…");
        assert_eq!(bounded("abcd", 1), "…");
        assert_eq!(bounded("abcd", 0), "");
        assert_eq!(bounded("", 0), "");
        assert_eq!(bounded("aéb漢字", 4), "aéb…");
        // An escape is never split: it is dropped whole with the mark.
        assert_eq!(bounded("ab\x1bcd", 6), "ab…");
        assert_eq!(bounded("ab\x1b", 8), "ab\\u{1b}");
        assert_eq!(bounded("a\nb", 10), "a\\u{a}b");
    }

    #[test]
    fn bounded_bytes_decodes_lossily_and_bounds() {
        assert_eq!(bounded_bytes(b"\xffok", 10), "\u{fffd}ok");
        assert_eq!(bounded_bytes(b"abcdef", 4), "abc…");
        assert_eq!(bounded_bytes(b"abcd", 4), "abcd");
        assert_eq!(bounded_bytes(b"a\x1b[2J", 20), "a\\u{1b}[2J");
    }

    mod prop {
        use super::super::*;
        use proptest::prelude::*;

        /// Strings rich in the characters the policy is about.
        fn hostile() -> impl Strategy<Value = String> {
            let pick = prop_oneof![
                any::<char>(),
                prop::char::range('\0', '\u{a0}'),
                prop::char::range('\u{2000}', '\u{2070}'),
                Just('\u{FEFF}'),
                Just('\u{e0041}'),
                Just('é'),
                Just('漢'),
            ];
            prop::collection::vec(pick, 0..64).prop_map(|v| v.into_iter().collect())
        }

        proptest! {
            #[test]
            fn output_is_clean_and_within_the_bound(text in hostile(), max in 0usize..80) {
                let out = bounded(&text, max);
                prop_assert!(!out.chars().any(is_escaped), "{out:?}");
                prop_assert!(out.chars().count() <= max);
                let all = for_terminal(&text);
                prop_assert!(!all.chars().any(is_escaped));
                if all.chars().count() <= max {
                    prop_assert_eq!(&out, all.as_ref());
                } else {
                    prop_assert!(max == 0 || out.ends_with(CUT_MARK));
                    // What is kept is a prefix of the full escaped form.
                    prop_assert!(all.starts_with(out.trim_end_matches(CUT_MARK)));
                }
                let lines = lines_for_terminal(&text);
                prop_assert!(!lines.chars().any(|c| c != '\n' && is_escaped(c)));
            }

            #[test]
            fn bytes_are_bounded_too(bytes in prop::collection::vec(any::<u8>(), 0..64), max in 0usize..40) {
                let out = bounded_bytes(&bytes, max);
                prop_assert!(out.chars().count() <= max);
                prop_assert!(!out.chars().any(is_escaped));
            }
        }
    }
}
