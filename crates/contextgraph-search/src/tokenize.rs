//! Tokens for lexical ranking, shared by indexing and querying so that both
//! sides always agree.
//!
//! An identifier yields itself (lowercased) and its parts: `retryLoop` gives
//! `retryloop`, `retry`, `loop`; `HTTP_TIMEOUT2` gives `http_timeout2`,
//! `http`, `timeout`. The whole identifier is a rare, high-idf term, so an
//! exact symbol match ranks first; the parts let prose queries ("retry loop")
//! find code.

/// Longest run treated as a word (longer runs are data, not identifiers).
const MAX_WORD_BYTES: usize = 64;

/// Words too common in prose queries and comments to discriminate anything.
const STOPWORDS: &[&str] = &[
    "a", "all", "an", "and", "any", "are", "as", "at", "be", "but", "by", "can", "do", "does",
    "else", "for", "from", "has", "how", "if", "in", "into", "is", "it", "its", "not", "of", "on",
    "or", "so", "that", "the", "then", "this", "to", "was", "we", "were", "what", "when", "which",
    "will", "with", "you",
];

/// Longest stopword: longer words skip the search (most tokens do).
const MAX_STOPWORD_BYTES: usize = 5;

fn is_stopword(w: &str) -> bool {
    w.len() <= MAX_STOPWORD_BYTES && STOPWORDS.binary_search(&w).is_ok()
}

/// Lowercase `from` into `into` (cleared first); ASCII words, nearly all of
/// code, skip the Unicode case tables.
fn lowercase_into(from: &str, into: &mut String) {
    into.clear();
    if from.is_ascii() {
        into.push_str(from);
        into.make_ascii_lowercase();
    } else {
        into.extend(from.chars().flat_map(char::to_lowercase));
    }
}

/// Call `emit` for every token of `text`, in order (duplicates included).
pub fn tokens(text: &str, mut emit: impl FnMut(&str)) {
    // Three buffers reused for every word: tokenizing allocates nothing
    // per token (it runs over every chunk at index time and over every
    // candidate's symbol name at query time).
    let mut word = String::new();
    let mut lower = String::new();
    let mut part_lower = String::new();
    let flush = |word: &mut String,
                 lower: &mut String,
                 part_lower: &mut String,
                 emit: &mut dyn FnMut(&str)| {
        if word.is_empty() {
            return;
        }
        if word.len() <= MAX_WORD_BYTES {
            lowercase_into(word, lower);
            split_parts(word, |part| {
                lowercase_into(part, part_lower);
                if part_lower.len() >= 2 && *part_lower != *lower && !is_stopword(part_lower) {
                    emit(part_lower);
                }
            });
            if lower.len() >= 2 && !is_stopword(lower) {
                emit(lower);
            }
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut lower, &mut part_lower, &mut emit);
        }
    }
    flush(&mut word, &mut lower, &mut part_lower, &mut emit);
}

/// The parts of an identifier: split at `_`, at lower→upper case changes,
/// at the end of an acronym (`HTTPServer` → `HTTP`, `Server`) and between
/// letters and digits.
fn split_parts(word: &str, mut emit: impl FnMut(&str)) {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut start = 0usize;
    for i in 0..chars.len() {
        let (pos, c) = chars[i];
        if c == '_' {
            if pos > start {
                emit(&word[start..pos]);
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
            || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase))
            || (prev.is_alphabetic() && c.is_numeric())
            || (prev.is_numeric() && c.is_alphabetic());
        if boundary {
            emit(&word[start..pos]);
            start = pos;
        }
    }
    if start < word.len() {
        emit(&word[start..]);
    }
}

/// The distinct tokens of `text`, in first-seen order.
pub fn distinct_tokens(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    tokens(text, |t| {
        if !out.iter().any(|o| o == t) {
            out.push(t.to_owned());
        }
    });
    out
}

/// Term frequencies of `text`, sorted by term, and the total token count.
pub fn term_frequencies(text: &str) -> (Vec<(String, u32)>, u32) {
    // foldhash: seeded per process, several times faster than SipHash on
    // short keys; runs once per token of every chunk at index time.
    let mut map: foldhash::HashMap<String, u32> =
        foldhash::HashMap::with_capacity_and_hasher(text.len() / 16, Default::default());
    let mut total = 0u32;
    tokens(text, |t| {
        total = total.saturating_add(1);
        match map.get_mut(t) {
            Some(n) => *n += 1,
            None => {
                map.insert(t.to_owned(), 1);
            }
        }
    });
    let mut v: Vec<(String, u32)> = map.into_iter().collect();
    v.sort_unstable();
    (v, total)
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
        assert!(
            STOPWORDS.iter().all(|w| w.len() <= MAX_STOPWORD_BYTES),
            "the length pre-check must not hide a stopword"
        );
        assert_eq!(
            distinct_tokens("ÉTAT_Ünïcode"),
            ["état", "ünïcode", "état_ünïcode"]
        );
    }
}
