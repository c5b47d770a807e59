//! Tokens for lexical ranking, shared by indexing and querying so that both
//! sides always agree.
//!
//! An identifier yields itself (lowercased) and its parts: `retryLoop` gives
//! `retryloop`, `retry`, `loop`; `HTTP_TIMEOUT2` gives `http_timeout2`,
//! `http`, `timeout`. The whole identifier is a rare, high-idf term, so an
//! exact symbol match ranks first; the parts let prose queries ("retry loop")
//! find code.

pub(crate) use crate::term_counts::term_frequencies_of;
pub use crate::term_counts::TermCounts;

/// Longest run treated as a word (longer runs are data, not identifiers).
const MAX_WORD_BYTES: usize = 64;

/// Words too common in prose queries and comments to discriminate anything
/// (the list [`is_stopword`] matches; tests hold the two equal).
#[cfg_attr(not(test), allow(dead_code))]
const STOPWORDS: &[&str] = &[
    "a", "all", "an", "and", "any", "are", "as", "at", "be", "but", "by", "can", "do", "does",
    "else", "for", "from", "has", "how", "if", "in", "into", "is", "it", "its", "not", "of", "on",
    "or", "so", "that", "the", "then", "this", "to", "was", "we", "were", "what", "when", "which",
    "will", "with", "you",
];

/// Longest stopword: longer words skip the search (most tokens do).
const MAX_STOPWORD_BYTES: usize = 5;

fn is_stopword(w: &str) -> bool {
    is_stopword_bytes(w.as_bytes())
}

/// [`is_stopword`] on bytes: callers holding an ASCII copy skip the UTF-8
/// check a `&str` would need.
fn is_stopword_bytes(w: &[u8]) -> bool {
    // One `match` (a jump on length, then a few compares) rather than a
    // binary search: it runs on every short token at index time. A test
    // keeps it equal to [`STOPWORDS`].
    matches!(
        w,
        b"a" | b"all"
            | b"an"
            | b"and"
            | b"any"
            | b"are"
            | b"as"
            | b"at"
            | b"be"
            | b"but"
            | b"by"
            | b"can"
            | b"do"
            | b"does"
            | b"else"
            | b"for"
            | b"from"
            | b"has"
            | b"how"
            | b"if"
            | b"in"
            | b"into"
            | b"is"
            | b"it"
            | b"its"
            | b"not"
            | b"of"
            | b"on"
            | b"or"
            | b"so"
            | b"that"
            | b"the"
            | b"then"
            | b"this"
            | b"to"
            | b"was"
            | b"we"
            | b"were"
            | b"what"
            | b"when"
            | b"which"
            | b"will"
            | b"with"
            | b"you"
    )
}

/// Lowercase `from` into `into` (cleared first); ASCII words, nearly all of
/// code, skip the Unicode case tables. Per character, so that a part of a
/// word lowercases to the same bytes as it does inside the whole word.
fn lowercase_into(from: &str, into: &mut String) {
    into.clear();
    if from.is_ascii() {
        into.push_str(from);
        into.make_ascii_lowercase();
    } else {
        into.extend(from.chars().flat_map(char::to_lowercase));
    }
}

/// Whether `w`, ASCII-lowercased, is a stopword (no allocation: stopwords
/// are short, the comparison runs on a stack copy).
fn is_ascii_stopword(w: &str) -> bool {
    if w.len() > MAX_STOPWORD_BYTES {
        return false;
    }
    // Most parts are lowercase already: looked up as they are, without
    // the copy and its UTF-8 check.
    if !w.bytes().any(|b| b.is_ascii_uppercase()) {
        return is_stopword(w);
    }
    let mut buf = [0u8; MAX_STOPWORD_BYTES];
    let buf = &mut buf[..w.len()];
    buf.copy_from_slice(w.as_bytes());
    buf.make_ascii_lowercase();
    is_stopword_bytes(buf)
}

/// One token as [`for_each_token`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token<'s> {
    /// The token is the ASCII lowercase of this byte range of the text
    /// (the whole word or part is ASCII): no copy was made.
    At(std::ops::Range<usize>),
    /// The token, lowercased into a scratch buffer (a word with non-ASCII
    /// letters), valid for the call only.
    Lowered(&'s str),
}

/// Whether an ASCII byte belongs to a word (`char::is_alphanumeric` or `_`):
/// one table lookup per byte (the range tests it replaces were a fifth of
/// tokenizing a candidate's symbol name on every query).
fn is_ascii_word_byte(b: u8) -> bool {
    WORD_BYTES[usize::from(b)] != 0
}

/// [`WORD_BYTES`] classes: a word byte is exactly one of these.
const LOWER: u8 = 1;
const UPPER: u8 = 2;
const DIGIT: u8 = 4;
const UNDERSCORE: u8 = 8;

/// Per byte value, its class when it is an ASCII word byte, else 0
/// (non-ASCII bytes: 0).
static WORD_BYTES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0usize;
    while b < 128 {
        let c = b as u8;
        table[b] = if c.is_ascii_lowercase() {
            LOWER
        } else if c.is_ascii_uppercase() {
            UPPER
        } else if c.is_ascii_digit() {
            DIGIT
        } else if c == b'_' {
            UNDERSCORE
        } else {
            0
        };
        b += 1;
    }
    table
};

/// Whether an ASCII word whose bytes' classes OR to `classes` is a single
/// part ([`split_ascii_parts`] would report it whole): all lowercase
/// letters, all capitals or all digits (no `_`, no case change, no
/// letter-digit change). Most words of code and prose are; they skip the
/// split.
fn is_single_part(classes: u8) -> bool {
    matches!(classes, LOWER | UPPER | DIGIT)
}

/// Report every token of `text` in order (duplicates included) without
/// copying ASCII tokens: an identifier's parts first, then the identifier.
///
/// Words are maximal runs of alphanumeric characters and `_`; a word of
/// more than [`MAX_WORD_BYTES`] is data and yields nothing. A part (see
/// [`split_parts`]) is reported when it is at least two bytes, differs from
/// the whole word and is not a stopword; the word when it is at least two
/// bytes and not a stopword.
pub(crate) fn for_each_token(text: &str, mut emit: impl FnMut(Token<'_>)) {
    let bytes = text.as_bytes();
    let mut lower = String::new();
    let mut part_lower = String::new();
    let mut i = 0usize;
    // The byte loops below are tight on purpose: they run over every byte
    // of every chunk a build indexes (ASCII bytes by one table lookup,
    // other characters decoded only where they occur).
    while let Some(&b) = bytes.get(i) {
        // Skip to the next word.
        if b < 0x80 {
            if !is_ascii_word_byte(b) {
                i += 1;
                while bytes
                    .get(i)
                    .is_some_and(|&b| b < 0x80 && !is_ascii_word_byte(b))
                {
                    i += 1;
                }
                continue;
            }
        } else {
            let c = text[i..].chars().next().unwrap_or(' ');
            if !c.is_alphanumeric() {
                i += c.len_utf8();
                continue;
            }
        }
        let start = i;
        let mut ascii = true;
        let mut classes = 0u8;
        loop {
            while let Some(&b) = bytes.get(i) {
                let class = WORD_BYTES[usize::from(b)];
                if class == 0 {
                    break;
                }
                classes |= class;
                i += 1;
            }
            // Stopped at the end, an ASCII separator or a non-ASCII
            // character (class 0 too), which may continue the word.
            match bytes.get(i) {
                Some(&b) if b >= 0x80 => {
                    let c = text[i..].chars().next().unwrap_or(' ');
                    if !c.is_alphanumeric() {
                        break;
                    }
                    ascii = false;
                    i += c.len_utf8();
                }
                _ => break,
            }
        }
        let word = &text[start..i];
        if word.len() > MAX_WORD_BYTES {
            continue;
        }
        if ascii {
            // A single part is the whole word, which is never reported as
            // a part.
            if !is_single_part(classes) {
                split_ascii_parts(word.as_bytes(), |a, b| {
                    let part = &word[a..b];
                    if part.len() >= 2 && part.len() != word.len() && !is_ascii_stopword(part) {
                        emit(Token::At(start + a..start + b));
                    }
                });
            }
            if word.len() >= 2 && !is_ascii_stopword(word) {
                emit(Token::At(start..i));
            }
        } else {
            lowercase_into(word, &mut lower);
            split_parts(word, |a, b| {
                let part = &word[a..b];
                lowercase_into(part, &mut part_lower);
                if part_lower.len() >= 2 && part_lower != lower && !is_stopword(&part_lower) {
                    if part.is_ascii() {
                        emit(Token::At(start + a..start + b));
                    } else {
                        emit(Token::Lowered(&part_lower));
                    }
                }
            });
            if lower.len() >= 2 && !is_stopword(&lower) {
                emit(Token::Lowered(&lower));
            }
        }
    }
}

/// The distinct tokens of a symbol's qualified name ([`tokens`], each
/// once, in order of first appearance), separated by single spaces (no
/// token holds one): what an index keeps per symbol chunk
/// (`ChunkRecord::symbol_tokens`) so that queries match names without
/// tokenizing them.
pub fn symbol_tokens(qualified: &str) -> String {
    // Built in place, in one allocation for most names (a name's tokens
    // are its words and their parts, lowercased: rarely twice its length):
    // a token is appended, lowercased where it lies, and cut off again
    // when an earlier word of `out` equals it (tokens are never empty and
    // hold no space, so the words of `out` are the tokens kept). The seen
    // tokens' ranges, a lowercasing buffer and the growth of `out` were
    // three more allocations per symbol, on every symbol chunk a build
    // indexes (issue 29).
    let mut out = String::with_capacity(2 * qualified.len());
    for_each_token(qualified, |t| {
        let before = out.len();
        if before > 0 {
            out.push(' ');
        }
        let start = out.len();
        match t {
            Token::At(r) => {
                out.push_str(&qualified[r]);
                out[start..].make_ascii_lowercase();
            }
            Token::Lowered(s) => out.push_str(s),
        }
        // Split by bytes: `str::split(' ')` searched each word's end with
        // a `memchr` call, dearer than these few-byte words.
        let (earlier, token) = out.as_bytes().split_at(start);
        let seen_before = earlier[..before].split(|&b| b == b' ').any(|w| w == token);
        if seen_before {
            out.truncate(before);
        }
    });
    out
}

/// Call `emit` for every token of `text`, in order (duplicates included).
pub fn tokens(text: &str, mut emit: impl FnMut(&str)) {
    // One buffer reused for every token that needs lowercasing: tokenizing
    // allocates nothing per token (it runs over every candidate's symbol
    // name at query time).
    let mut buf = String::new();
    for_each_token(text, |t| match t {
        Token::At(r) => {
            let s = &text[r];
            if s.bytes().any(|b| b.is_ascii_uppercase()) {
                buf.clear();
                buf.push_str(s);
                buf.make_ascii_lowercase();
                emit(&buf);
            } else {
                emit(s);
            }
        }
        Token::Lowered(s) => emit(s),
    });
}

/// The parts of an identifier, as byte ranges `(start, end)` of it: split
/// at `_`, at lower→upper case changes, at the end of an acronym
/// (`HTTPServer` → `HTTP`, `Server`) and between letters and digits.
fn split_parts(word: &str, mut emit: impl FnMut(usize, usize)) {
    let mut start = 0usize;
    let mut prev: Option<char> = None;
    let mut chars = word.char_indices().peekable();
    while let Some((pos, c)) = chars.next() {
        let before = prev.replace(c);
        if c == '_' {
            if pos > start {
                emit(start, pos);
            }
            start = pos + c.len_utf8();
            continue;
        }
        let Some(p) = before else { continue };
        if pos == start {
            continue;
        }
        let next = chars.peek().map(|x| x.1);
        let boundary = (p.is_lowercase() && c.is_uppercase())
            || (p.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase))
            || (p.is_alphabetic() && c.is_numeric())
            || (p.is_numeric() && c.is_alphabetic());
        if boundary {
            emit(start, pos);
            start = pos;
        }
    }
    if start < word.len() {
        emit(start, word.len());
    }
}

/// [`split_parts`] for an ASCII word, by bytes: the same parts (for ASCII
/// the Unicode case, letter and digit tests are the ASCII ones), without
/// decoding characters. Every candidate's symbol name is tokenized on
/// every query, and every chunk when it is indexed.
fn split_ascii_parts(word: &[u8], mut emit: impl FnMut(usize, usize)) {
    // The byte classes of [`WORD_BYTES`] instead of the `is_ascii_*`
    // tests: the same tests on word bytes, one lookup per byte.
    let class = |b: u8| WORD_BYTES[usize::from(b)];
    let mut start = 0usize;
    let mut prev: Option<u8> = None;
    for (pos, &c) in word.iter().enumerate() {
        let c = class(c);
        let before = prev.replace(c);
        if c == UNDERSCORE {
            if pos > start {
                emit(start, pos);
            }
            start = pos + 1;
            continue;
        }
        let Some(p) = before else { continue };
        if pos == start {
            continue;
        }
        let boundary = match (p, c) {
            (LOWER, UPPER) | (LOWER | UPPER, DIGIT) | (DIGIT, LOWER | UPPER) => true,
            (UPPER, UPPER) => word.get(pos + 1).is_some_and(|&n| class(n) == LOWER),
            _ => false,
        };
        if boundary {
            emit(start, pos);
            start = pos;
        }
    }
    if start < word.len() {
        emit(start, word.len());
    }
}

/// The distinct tokens of `text`, in first-seen order.
pub fn distinct_tokens(text: &str) -> Vec<String> {
    // A set beside the list: linear in the tokens, where a scan of the
    // list was quadratic in distinct words (N5: 64,000 words took 6.6 s).
    let mut seen: foldhash::HashSet<String> = foldhash::HashSet::default();
    let mut out: Vec<String> = Vec::new();
    tokens(text, |t| {
        if !seen.contains(t) {
            seen.insert(t.to_owned());
            out.push(t.to_owned());
        }
    });
    out
}

/// Term frequencies of `text` and its total token count.
pub fn term_frequencies(text: &str) -> (TermCounts, u32) {
    term_frequencies_of(&[text])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_yield_themselves_and_their_parts() {
        assert_eq!(distinct_tokens("retryLoop"), ["retry", "loop", "retryloop"]);
        assert_eq!(
            distinct_tokens("HTTPServer2"),
            ["http", "server", "httpserver2"]
        );
        assert_eq!(
            distinct_tokens("max_attempts the"),
            ["max", "attempts", "max_attempts"]
        );
        assert!(
            STOPWORDS.windows(2).all(|w| w[0] < w[1]),
            "stopwords must stay sorted"
        );
        assert!(STOPWORDS.iter().all(|w| is_stopword(w)));
        // Every word of up to five letters drawn from the stopwords' letters
        // (plus one outsider): the `match` accepts exactly the list.
        let letters: Vec<u8> = {
            let mut l: Vec<u8> = STOPWORDS.iter().flat_map(|w| w.bytes()).collect();
            l.push(b'z');
            l.sort_unstable();
            l.dedup();
            l
        };
        let mut word = Vec::new();
        fn each(letters: &[u8], word: &mut Vec<u8>, depth: usize, check: &mut dyn FnMut(&str)) {
            check(std::str::from_utf8(word).unwrap_or(""));
            if depth == MAX_STOPWORD_BYTES {
                return;
            }
            for &b in letters {
                word.push(b);
                each(letters, word, depth + 1, check);
                word.pop();
            }
        }
        let mut checked = 0usize;
        each(&letters, &mut word, 0, &mut |w| {
            checked += 1;
            assert_eq!(is_stopword(w), STOPWORDS.binary_search(&w).is_ok(), "{w}");
        });
        assert!(checked > 1_000_000);
        assert!(
            STOPWORDS.iter().all(|w| w.len() <= MAX_STOPWORD_BYTES),
            "the length pre-check must not hide a stopword"
        );
        assert_eq!(
            distinct_tokens("ÉTAT_Ünïcode"),
            ["état", "ünïcode", "état_ünïcode"]
        );
    }

    /// The tokenizer as it was before tokens became byte ranges (one
    /// `char` at a time into a word buffer, a `Vec` of the word's chars to
    /// split it): the behaviour the fast one must keep exactly.
    fn reference_tokens(text: &str) -> Vec<String> {
        fn parts(word: &str) -> Vec<&str> {
            let chars: Vec<(usize, char)> = word.char_indices().collect();
            let mut out = Vec::new();
            let mut start = 0usize;
            for i in 0..chars.len() {
                let (pos, c) = chars[i];
                if c == '_' {
                    if pos > start {
                        out.push(&word[start..pos]);
                    }
                    start = pos + c.len_utf8();
                    continue;
                }
                if i == 0 || pos == start {
                    continue;
                }
                let prev = chars[i - 1].1;
                let next = chars.get(i + 1).map(|x| x.1);
                let boundary = (prev.is_lowercase() && c.is_uppercase())
                    || (prev.is_uppercase()
                        && c.is_uppercase()
                        && next.is_some_and(char::is_lowercase))
                    || (prev.is_alphabetic() && c.is_numeric())
                    || (prev.is_numeric() && c.is_alphabetic());
                if boundary {
                    out.push(&word[start..pos]);
                    start = pos;
                }
            }
            if start < word.len() {
                out.push(&word[start..]);
            }
            out
        }
        let mut out = Vec::new();
        let mut flush = |word: &mut String| {
            if !word.is_empty() && word.len() <= MAX_WORD_BYTES {
                let mut lower = String::new();
                lowercase_into(word, &mut lower);
                for p in parts(word) {
                    let mut pl = String::new();
                    lowercase_into(p, &mut pl);
                    if pl.len() >= 2 && pl != lower && !is_stopword(&pl) {
                        out.push(pl);
                    }
                }
                if lower.len() >= 2 && !is_stopword(&lower) {
                    out.push(lower);
                }
            }
            word.clear();
        };
        let mut word = String::new();
        for c in text.chars() {
            if c.is_alphanumeric() || c == '_' {
                word.push(c);
            } else {
                flush(&mut word);
            }
        }
        flush(&mut word);
        out
    }

    fn all_tokens(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        tokens(text, |t| out.push(t.to_owned()));
        out
    }

    /// Deterministic pseudo-random text over an alphabet that exercises
    /// every boundary rule: cases, digits, `_`, non-ASCII letters that
    /// change length when lowercased, non-ASCII digits, separators.
    fn random_text(seed: u64, len: usize) -> String {
        const ALPHABET: &[&str] = &[
            "a", "b", "z", "A", "B", "Z", "0", "7", "_", " ", "\n", ":", "(", "-", "é", "É", "İ",
            "ß", "Σ", "ς", "٣", "ǅ", "ﬁ", "\u{301}", "the", "If", "HTTP", "Server", "x2",
        ];
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        let mut out = String::new();
        for _ in 0..len {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            out.push_str(ALPHABET[(state >> 33) as usize % ALPHABET.len()]);
        }
        out
    }

    /// The byte-wise split of ASCII words gives the parts of the
    /// character-wise one, on every ASCII word of the random texts and on
    /// identifiers of every boundary shape.
    #[test]
    fn the_ascii_split_is_the_character_split() {
        let mut words: Vec<String> = [
            "HTTPServer",
            "parseURLv2",
            "x2y",
            "ABC",
            "aB",
            "Ab",
            "a_b",
            "__a__b__",
            "_",
            "9a",
            "a9",
            "IOError",
            "getHTTP2Response",
            "snake_case_Name",
            "ALL_CAPS_42",
            "A",
            "",
        ]
        .iter()
        .map(|w| (*w).to_owned())
        .collect();
        for i in 0..3000 {
            let text = random_text(i, 1 + i as usize % 40);
            words.extend(
                text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .filter(|w| !w.is_empty())
                    .map(str::to_owned),
            );
        }
        for word in &words {
            let (mut by_char, mut by_byte) = (Vec::new(), Vec::new());
            split_parts(word, |a, b| by_char.push((a, b)));
            split_ascii_parts(word.as_bytes(), |a, b| by_byte.push((a, b)));
            assert_eq!(by_byte, by_char, "{word:?}");
        }
    }

    #[test]
    fn tokens_match_the_reference_tokenizer() {
        let mut texts: Vec<String> = (0..2000)
            .map(|i| random_text(i, 1 + i as usize % 60))
            .collect();
        texts.push("x".repeat(MAX_WORD_BYTES) + " " + &"y".repeat(MAX_WORD_BYTES + 1));
        // Real code: this crate's own sources.
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut stack = vec![src];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if let Ok(t) = std::fs::read_to_string(&p) {
                    texts.push(t);
                }
            }
        }
        assert!(texts.len() > 2010, "the crate's sources were read");
        for text in &texts {
            let expected = reference_tokens(text);
            assert_eq!(all_tokens(text), expected, "{text:?}");
            let mut counts: Vec<(String, u32)> = Vec::new();
            for t in &expected {
                match counts.iter_mut().find(|(x, _)| x == t) {
                    Some(c) => c.1 += 1,
                    None => counts.push((t.clone(), 1)),
                }
            }
            counts.sort();
            let (terms, total) = term_frequencies(text);
            assert_eq!(terms.to_vec(), counts, "{text:?}");
            assert_eq!(total as usize, expected.len());
            if text.len() > 4096 {
                // Symbol names are short; the check is quadratic.
                continue;
            }
            let mut distinct: Vec<&str> = Vec::new();
            for t in &expected {
                if !distinct.contains(&t.as_str()) {
                    distinct.push(t);
                }
            }
            assert_eq!(symbol_tokens(text), distinct.join(" "), "{text:?}");
        }
    }

    /// The counts of the tokens [`reference_tokens`] gives, sorted by term:
    /// what term counting must produce, computed the plain way.
    fn reference_counts(text: &str) -> (Vec<(String, u32)>, u32) {
        let tokens = reference_tokens(text);
        let mut counts: std::collections::BTreeMap<String, u32> = Default::default();
        for t in &tokens {
            *counts.entry(t.clone()).or_default() += 1;
        }
        (counts.into_iter().collect(), tokens.len() as u32)
    }

    /// Counting by sort keys (a term's first eight bytes) counts exactly:
    /// on terms that share their first eight bytes and differ after, that
    /// are eight bytes long or one more or less, that begin one another,
    /// that lowercase to longer Unicode, in one piece or many, one call
    /// after another on the same reused buffers (a large text, then small
    /// ones).
    #[test]
    fn sort_key_counting_is_exact_on_awkward_terms() {
        let long = "x".repeat(MAX_WORD_BYTES - 8);
        let pieces: &[&str] = &[
            "abcdefgh",
            "abcdefg",
            "abcdefghi",
            "abcdefghj",
            "ABCDEFGHX",
            "Abcdefgh",
            "abcdefgh_",
            "zz",
            "z",
            "é",
            "É",
            "İ",
            "ß",
            "ﬁ",
            "Σ",
            "٣",
            "_",
            " ",
            "\n",
            ".",
            "0",
            "9",
            "aB",
            "the",
            "HTTPServer",
            &long,
            "12345678",
            "123456789",
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |n: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize % n
        };
        let mut texts: Vec<String> = Vec::new();
        for i in 0..3000 {
            let len = if i == 0 { 40_000 } else { 1 + next(80) };
            let text: String = (0..len).map(|_| pieces[next(pieces.len())]).collect();
            texts.push(text);
        }
        for text in &texts {
            let (expected, total) = reference_counts(text);
            let (terms, n) = term_frequencies(text);
            assert_eq!((terms.to_vec(), n), (expected.clone(), total), "{text:?}");
            // The same text cut at word boundaries (at spaces), in pieces.
            let pieces: Vec<&str> = text.split_inclusive(' ').collect();
            let (terms, n) = term_frequencies_of(&pieces);
            assert_eq!((terms.to_vec(), n), (expected, total), "{text:?}");
        }
    }

    #[test]
    fn pieces_ending_at_word_boundaries_count_like_their_concatenation() {
        let pieces = [
            "fn retryLoop() {\n",
            "    let HTTP_x = 2;\n",
            "net::retryLoop",
            "function net::retry",
        ];
        let joined = format!("{}{} {} {}", pieces[0], pieces[1], pieces[2], pieces[3]);
        assert_eq!(term_frequencies_of(&pieces), term_frequencies(&joined));
    }
}
