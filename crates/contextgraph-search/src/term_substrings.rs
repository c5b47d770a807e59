//! Whether an ASCII text holds any of a goal's terms as a substring,
//! ignoring ASCII case: a necessary condition, checked in one pass over
//! the text's bytes, for any of the text's tokens to *be* a term.
//!
//! Why: the ranking matches every candidate's symbol name and file path
//! against the goal's terms (`ConceptMatcher`), and tokenizing a name into
//! its parts (`HttpServer::read_body` → `http`, `server`, `read`, `body`
//! …) cost about 3,000 instructions a name, on up to 2,000 candidates a
//! query; most names hold no term at all. Every ASCII token is a byte range
//! of its text compared with a term ignoring ASCII case, so a text in which
//! no term occurs that way has no matching token, and its share is zero
//! without tokenizing it (issue 29).

/// The terms of one goal, indexed by their first two bytes.
#[derive(Debug, Clone)]
pub(crate) struct TermSubstrings<'a> {
    /// Whether some term of two bytes or more starts with the byte pair
    /// (first byte × 128 + second byte, both lowercase ASCII): one byte a
    /// pair, so the test per position of a text is one load.
    pairs: Box<[bool; 128 * 128]>,
    /// Whether some one-byte term is this byte (rare: checked only when
    /// there is one).
    singles: [bool; 128],
    any_single: bool,
    /// The terms of two bytes or more, with their first pair.
    terms: Vec<(usize, &'a [u8])>,
}

impl<'a> TermSubstrings<'a> {
    /// The index of `terms`; only lowercase ASCII terms can match an ASCII
    /// text ignoring ASCII case, so the others are left out (callers never
    /// match them against ASCII text either).
    pub(crate) fn new(terms: impl IntoIterator<Item = &'a str>) -> TermSubstrings<'a> {
        let mut out = TermSubstrings {
            pairs: Box::new([false; 128 * 128]),
            singles: [false; 128],
            any_single: false,
            terms: Vec::new(),
        };
        for t in terms {
            let b = t.as_bytes();
            if b.is_empty() || !b.iter().all(|&c| c.is_ascii() && !c.is_ascii_uppercase()) {
                continue;
            }
            match b {
                [one] => {
                    out.singles[usize::from(*one)] = true;
                    out.any_single = true;
                }
                [first, second, ..] => {
                    let pair = pair_index(*first, *second);
                    out.pairs[pair] = true;
                    out.terms.push((pair, b));
                }
                [] => {}
            }
        }
        out
    }

    /// Whether some term occurs in `text` (ASCII) ignoring ASCII case.
    /// `true` for a text that is not ASCII: no claim is made about it.
    pub(crate) fn any_in(&self, text: &str) -> bool {
        let bytes = text.as_bytes();
        if !bytes.is_ascii() {
            return true;
        }
        if self.any_single
            && bytes
                .iter()
                .any(|b| self.singles[usize::from(b.to_ascii_lowercase())])
        {
            return true;
        }
        let Some((&first, rest)) = bytes.split_first() else {
            return false;
        };
        let mut previous = first.to_ascii_lowercase();
        for (i, &b) in rest.iter().enumerate() {
            let lower = b.to_ascii_lowercase();
            let pair = pair_index(previous, lower);
            previous = lower;
            if !self.pairs[pair] {
                continue;
            }
            // The pair starts at `i` of `bytes`.
            let from = &bytes[i..];
            if self.terms.iter().any(|&(p, t)| {
                p == pair && from.len() >= t.len() && from[..t.len()].eq_ignore_ascii_case(t)
            }) {
                return true;
            }
        }
        false
    }
}

/// The index of the byte pair `(a, b)`, both ASCII.
fn pair_index(a: u8, b: u8) -> usize {
    usize::from(a & 0x7f) << 7 | usize::from(b & 0x7f)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exactly "some term is a substring of the text, ASCII case ignored",
    /// for ASCII texts; always `true` for others.
    #[test]
    fn any_in_is_the_substring_test() {
        let term_sets: [&[&str]; 5] = [
            &["read", "body", "x"],
            &["http", "server", "ab"],
            &["Upper", "é", "zz"],
            &[],
            &["a"],
        ];
        let texts = [
            "HttpServer::read_body",
            "hyper::client::conn",
            "",
            "a",
            "ZZtop",
            "UPPER",
            "café",
            "x_y",
            "ab",
            "b",
            "serve",
        ];
        for terms in term_sets {
            let index = TermSubstrings::new(terms.iter().copied());
            for text in texts {
                let expected = !text.is_ascii()
                    || terms.iter().any(|t| {
                        t.bytes().all(|c| c.is_ascii() && !c.is_ascii_uppercase())
                            && !t.is_empty()
                            && text.to_ascii_lowercase().contains(t)
                    });
                assert_eq!(index.any_in(text), expected, "{terms:?} in {text:?}");
            }
        }
    }
}
