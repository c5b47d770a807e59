//! The code-aware tokenizer shared by training and encoding (`code-split-v1`).
//!
//! Code spells one concept many ways: `maxTokens`, `max_tokens`,
//! `MAX_TOKENS`, `TokenBudget`, and prose says "token budget". Splitting
//! identifiers into their parts and lowercasing them lets one vector per part
//! serve all of those spellings. The same function builds the training
//! vocabulary and tokenizes text at query time; a model records the
//! tokenizer's name, and the loader refuses a model trained with another one,
//! because its vocabulary would not match what this code produces.
//!
//! Rules, in order:
//! 1. Words are maximal runs of alphanumeric characters; everything else
//!    (`_`, `::`, `.`, spaces, punctuation) separates them.
//! 2. A run splits where a lowercase letter meets an uppercase one
//!    (`camelCase` → `camel`, `case`), before the last capital of a capital
//!    run followed by lowercase (`HTTPServer` → `http`, `server`), and where
//!    letters meet digits (`utf8` → `utf`, `8`).
//! 3. Parts are lowercased.
//! 4. Light plural stripping: `-ies` → `-y` (`entries` → `entry`), `-sses` →
//!    `-ss`, and a final `s` is dropped from parts longer than three
//!    characters unless they end in `ss`, `us` or `is` (`tokens` → `token`,
//!    but `class`, `status`, `axis` stay).
//! 5. Parts shorter than two or longer than [`MAX_TOKEN_CHARS`] characters are
//!    dropped: single letters are loop variables, and very long parts are
//!    hashes, base64 or minified code.

/// The tokenizer's name as recorded in a model's metadata.
pub const TOKENIZER_NAME: &str = "code-split-v1";

/// Parts longer than this (in characters) are dropped.
pub const MAX_TOKEN_CHARS: usize = 32;

/// The class of a character for boundary detection.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Lower,
    Upper,
    Digit,
    Other,
}

#[inline]
fn class(c: char) -> Class {
    if c.is_ascii() {
        return match c as u8 {
            b'a'..=b'z' => Class::Lower,
            b'A'..=b'Z' => Class::Upper,
            b'0'..=b'9' => Class::Digit,
            _ => Class::Other,
        };
    }
    if c.is_numeric() && !c.is_alphabetic() {
        Class::Digit
    } else if c.is_uppercase() {
        Class::Upper
    } else if c.is_alphanumeric() {
        // Lowercase letters and letters without case (CJK, …).
        Class::Lower
    } else {
        Class::Other
    }
}

/// The character starting at byte `i` (a character boundary) and its
/// length; ASCII, the common case in code, skips UTF-8 decoding.
#[inline]
fn char_at(text: &str, i: usize) -> Option<(char, usize)> {
    let b = *text.as_bytes().get(i)?;
    if b.is_ascii() {
        return Some((char::from(b), 1));
    }
    let c = text.get(i..)?.chars().next()?;
    Some((c, c.len_utf8()))
}

/// Calls `emit` with each normalised token of `text`, in order.
///
/// `emit` receives a borrowed buffer that is reused between calls, so the
/// tokenizer allocates nothing per token.
pub fn for_each_token(text: &str, mut emit: impl FnMut(&str)) {
    for_each_token_at(text, |token, _| emit(token));
}

/// [`for_each_token`], with the byte offset in `text` where each token's
/// first character is. A token never spans a character the rules treat as
/// a separator (a newline, say), so the tokens of a run of whole lines are
/// those of the whole text that start in it: a caller that embeds many
/// overlapping line ranges of one file (a cold index build) tokenizes the
/// file once and takes each range's tokens by offset.
pub fn for_each_token_at(text: &str, mut emit: impl FnMut(&str, usize)) {
    let mut part = String::with_capacity(4 * MAX_TOKEN_CHARS);
    let mut part_chars = 0usize;
    let mut part_start = 0usize;
    let mut prev = Class::Other;
    let mut i = 0usize;
    while let Some((c, len)) = char_at(text, i) {
        i += len;
        let cls = class(c);
        if cls == Class::Other {
            if part_chars > 0 {
                flush(&mut part, &mut part_chars, part_start, &mut emit);
            }
            prev = Class::Other;
            continue;
        }
        let boundary = match (prev, cls) {
            (Class::Lower, Class::Upper) => true,
            (Class::Digit, Class::Lower | Class::Upper) => true,
            (Class::Lower | Class::Upper, Class::Digit) => true,
            // `HTTPServer`: the `S` starts a new part when a lowercase follows.
            (Class::Upper, Class::Upper) => {
                char_at(text, i).is_some_and(|(next, _)| class(next) == Class::Lower)
            }
            _ => false,
        };
        if boundary {
            flush(&mut part, &mut part_chars, part_start, &mut emit);
        }
        if part_chars == 0 {
            part_start = i - len;
        }
        if c.is_ascii() {
            part.push(c.to_ascii_lowercase());
        } else {
            part.extend(c.to_lowercase());
        }
        part_chars += 1;
        prev = cls;
    }
    flush(&mut part, &mut part_chars, part_start, &mut emit);
}

/// Collects the tokens of `text` into owned strings (for tests and tools;
/// hot paths use [`for_each_token`]).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(t.to_string()));
    out
}

/// Normalises and emits the current part (which starts at byte `start`),
/// then clears it.
fn flush(
    part: &mut String,
    part_chars: &mut usize,
    start: usize,
    emit: &mut impl FnMut(&str, usize),
) {
    if (2..=MAX_TOKEN_CHARS).contains(part_chars) {
        strip_plural(part);
        emit(part, start);
    }
    part.clear();
    *part_chars = 0;
}

/// Rule 4: light plural stripping, in place. Only ASCII endings are
/// touched, so the byte arithmetic stays on character boundaries.
fn strip_plural(part: &mut String) {
    let len = part.len();
    if len > 4 && part.ends_with("ies") {
        part.truncate(len - 3);
        part.push('y');
    } else if part.ends_with("sses") {
        part.truncate(len - 2);
    } else if len > 3
        && part.ends_with('s')
        && !part.ends_with("ss")
        && !part.ends_with("us")
        && !part.ends_with("is")
    {
        part.truncate(len - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::{for_each_token_at, tokens};

    #[test]
    fn offsets_point_at_each_tokens_first_character() {
        let text = "let maxTokens = HTTPServer::new(x1);\nÉtat utf8";
        let mut seen = Vec::new();
        for_each_token_at(text, |t, at| seen.push((t.to_string(), at)));
        let expected = [
            ("let", 0),
            ("max", 4),
            ("token", 7),
            ("http", 16),
            ("server", 20),
            ("new", 28),
            ("état", 37),
            ("utf", 43),
        ];
        let expected: Vec<(String, usize)> =
            expected.iter().map(|(t, a)| (t.to_string(), *a)).collect();
        assert_eq!(seen, expected);
    }

    #[test]
    fn splits_camel_snake_and_screaming_case_alike() {
        assert_eq!(tokens("maxTokens"), ["max", "token"]);
        assert_eq!(tokens("max_tokens"), ["max", "token"]);
        assert_eq!(tokens("MAX_TOKENS"), ["max", "token"]);
        assert_eq!(tokens("MaxTokens"), ["max", "token"]);
    }

    #[test]
    fn splits_acronym_runs_before_the_last_capital() {
        assert_eq!(tokens("HTTPServer"), ["http", "server"]);
        assert_eq!(tokens("parseJSONValue"), ["parse", "json", "value"]);
        assert_eq!(tokens("IOError"), ["io", "error"]);
    }

    #[test]
    fn splits_letters_from_digits_and_drops_single_characters() {
        assert_eq!(tokens("utf8_decode"), ["utf", "decode"]);
        assert_eq!(tokens("sha256sum"), ["sha", "256", "sum"]);
        assert_eq!(tokens("a b x1"), Vec::<String>::new());
    }

    #[test]
    fn path_and_prose_separators_split_words() {
        assert_eq!(
            tokens("std::io::Read, the reader."),
            ["std", "io", "read", "the", "reader"]
        );
    }

    #[test]
    fn strips_plurals_but_keeps_ss_us_is_endings() {
        assert_eq!(
            tokens("entries classes tokens class status axis bus"),
            ["entry", "class", "token", "class", "status", "axis", "bus"]
        );
    }

    #[test]
    fn drops_overlong_parts() {
        let long = "x".repeat(super::MAX_TOKEN_CHARS + 1);
        assert_eq!(tokens(&format!("{long} ok")), ["ok"]);
    }

    #[test]
    fn non_ascii_letters_are_kept_and_lowercased() {
        assert_eq!(tokens("Größe"), ["größe"]);
    }
}
