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
        return ASCII_CLASS[c as usize];
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

/// [`class`] of each ASCII character: one load instead of range tests on
/// every character of every file a cold build embeds.
static ASCII_CLASS: [Class; 128] = {
    let mut table = [Class::Other; 128];
    let mut b = 0usize;
    while b < 128 {
        table[b] = match b as u8 {
            b'a'..=b'z' => Class::Lower,
            b'A'..=b'Z' => Class::Upper,
            b'0'..=b'9' => Class::Digit,
            _ => Class::Other,
        };
        b += 1;
    }
    table
};

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
    // A part is a run of `text`: it is only located while scanning, and
    // lowercased (into `lowered`, when it is not lowercase already) once
    // complete and of a length that is kept.
    let mut lowered = String::new();
    let mut part_chars = 0usize;
    let mut part_start = 0usize;
    // Whether the part is ASCII lowercase letters or digits so far.
    let mut plain = true;
    let mut prev = Class::Other;
    let mut i = 0usize;
    while let Some((c, len)) = char_at(text, i) {
        let at = i;
        i += len;
        let cls = class(c);
        if cls == Class::Other {
            if part_chars > 0 {
                let part = (part_start..at, part_chars, plain);
                flush(text, part, &mut lowered, &mut emit);
                part_chars = 0;
            }
            prev = Class::Other;
            // The ASCII separators that follow change nothing more.
            i += ascii_run(text, i, Class::Other);
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
            flush(
                text,
                (part_start..at, part_chars, plain),
                &mut lowered,
                &mut emit,
            );
            part_chars = 0;
        }
        if part_chars == 0 {
            part_start = at;
            plain = true;
        }
        if cls == Class::Upper || len > 1 {
            plain = false;
        }
        part_chars += 1;
        prev = cls;
        if matches!(cls, Class::Lower | Class::Digit) {
            // A lowercase letter after a lowercase letter, a digit after a
            // digit: no boundary, the part grows by one. Most characters
            // of code are such, taken here a byte at a time.
            let run = ascii_run(text, i, cls);
            i += run;
            part_chars += run;
        }
    }
    flush(
        text,
        (part_start..i, part_chars, plain),
        &mut lowered,
        &mut emit,
    );
}

/// How many ASCII characters of class `cls` follow in `text` from byte
/// `i`.
#[inline]
fn ascii_run(text: &str, i: usize, cls: Class) -> usize {
    text.as_bytes()
        .get(i..)
        .unwrap_or_default()
        .iter()
        .take_while(|&&b| ASCII_CLASS.get(usize::from(b)) == Some(&cls))
        .count()
}

/// Collects the tokens of `text` into owned strings (for tests and tools;
/// hot paths use [`for_each_token`]).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(t.to_string()));
    out
}

/// Normalises and emits a part (nothing when empty): rules 3 to 5. The
/// part is `(range, chars, plain)`: its bytes in `text`, its length in
/// characters, and whether all are ASCII lowercase letters or digits. A
/// plain part (most words of code) is emitted as a slice of `text`,
/// without a copy; others are lowercased into `lowered`.
fn flush(
    text: &str,
    (range, chars, plain): (std::ops::Range<usize>, usize, bool),
    lowered: &mut String,
    emit: &mut impl FnMut(&str, usize),
) {
    if !(2..=MAX_TOKEN_CHARS).contains(&chars) {
        return;
    }
    let start = range.start;
    let Some(raw) = text.get(range) else {
        return;
    };
    let copied = !plain;
    if copied {
        lowered.clear();
        if raw.is_ascii() {
            lowered.push_str(raw);
            lowered.make_ascii_lowercase();
        } else {
            lowered.extend(raw.chars().flat_map(char::to_lowercase));
        }
    }
    let part = if copied { lowered.as_str() } else { raw };
    let (stem, y) = plural_stem(part);
    let stem = stem.len();
    match (copied, y) {
        (false, false) => emit(raw.get(..stem).unwrap_or(raw), start),
        (true, false) => {
            lowered.truncate(stem);
            emit(lowered, start);
        }
        (_, true) => {
            if !copied {
                lowered.clear();
                lowered.push_str(raw);
            }
            lowered.truncate(stem);
            lowered.push('y');
            emit(lowered, start);
        }
    }
}

/// Rule 4, light plural stripping: the part without its plural ending,
/// and whether a `y` replaces it (`entries` → `entr` + `y`). Only ASCII
/// endings are touched, so the cuts fall on character boundaries.
fn plural_stem(part: &str) -> (&str, bool) {
    let b = part.as_bytes();
    let len = b.len();
    // Every rule needs a final `s`: most parts leave here.
    if b.last() != Some(&b's') {
        return (part, false);
    }
    let cut = |n: usize| part.get(..len - n).unwrap_or(part);
    if len > 4 && b.ends_with(b"ies") {
        (cut(3), true)
    } else if b.ends_with(b"sses") {
        (cut(2), false)
    } else if len > 3 && !b.ends_with(b"ss") && !b.ends_with(b"us") && !b.ends_with(b"is") {
        (cut(1), false)
    } else {
        (part, false)
    }
}

#[cfg(test)]
mod tests {
    use super::{for_each_token_at, tokens};

    /// The tokenizer as it was before parts became ranges of the text
    /// (each character lowercased into a buffer as it was read, the
    /// plural stripped in place): the behaviour the current one keeps.
    fn reference_tokens_at(text: &str) -> Vec<(String, usize)> {
        use super::{char_at, class, Class, MAX_TOKEN_CHARS};
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
        let mut out = Vec::new();
        let mut flush = |part: &mut String, chars: &mut usize, start: usize| {
            if (2..=MAX_TOKEN_CHARS).contains(chars) {
                strip_plural(part);
                out.push((part.clone(), start));
            }
            part.clear();
            *chars = 0;
        };
        let (mut part, mut chars, mut start) = (String::new(), 0usize, 0usize);
        let mut prev = Class::Other;
        let mut i = 0usize;
        while let Some((c, len)) = char_at(text, i) {
            i += len;
            let cls = class(c);
            if cls == Class::Other {
                if chars > 0 {
                    flush(&mut part, &mut chars, start);
                }
                prev = Class::Other;
                continue;
            }
            let boundary = match (prev, cls) {
                (Class::Lower, Class::Upper) => true,
                (Class::Digit, Class::Lower | Class::Upper) => true,
                (Class::Lower | Class::Upper, Class::Digit) => true,
                (Class::Upper, Class::Upper) => {
                    char_at(text, i).is_some_and(|(next, _)| class(next) == Class::Lower)
                }
                _ => false,
            };
            if boundary {
                flush(&mut part, &mut chars, start);
            }
            if chars == 0 {
                start = i - len;
            }
            part.extend(c.to_lowercase());
            chars += 1;
            prev = cls;
        }
        flush(&mut part, &mut chars, start);
        out
    }

    /// Tokens and offsets equal the reference tokenizer's on texts built
    /// to hit every rule: plural endings in both cases and at every length
    /// around the thresholds, acronyms, digits, non-ASCII letters (some
    /// lowercasing to more bytes), the length limits.
    #[test]
    fn tokens_match_the_reference_tokenizer() {
        const PIECES: &[&str] = &[
            "entries",
            "ENTRIES",
            "ies",
            "ties",
            "Ties",
            "classes",
            "sses",
            "SSES",
            "bus",
            "axis",
            "status",
            "s",
            "S",
            "es",
            "ss",
            "is",
            "us",
            "tokens",
            "Tokens",
            "HTTPServer",
            "parseJSON",
            "x1",
            "9",
            "a",
            "B",
            "_",
            " ",
            "\n",
            "::",
            ".",
            "é",
            "É",
            "İ",
            "ß",
            "Σ",
            "ς",
            "٣",
            "ǅ",
            "ﬁ",
            "größe",
            "GRÖSSE",
            "日本",
            "abcdefghijklmnopqrstuvwxyzabcdef",
            "ghijkl",
        ];
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize % n
        };
        for i in 0..4000 {
            let len = if i == 0 { 20_000 } else { 1 + next(40) };
            let text: String = (0..len).map(|_| PIECES[next(PIECES.len())]).collect();
            let mut seen = Vec::new();
            for_each_token_at(&text, |t, at| seen.push((t.to_string(), at)));
            assert_eq!(seen, reference_tokens_at(&text), "{text:?}");
        }
    }

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
