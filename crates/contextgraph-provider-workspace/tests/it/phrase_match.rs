//! An error message or string literal pasted as the query finds the code
//! that contains it verbatim: the exact word sequence lifts the innermost
//! chunk holding it above chunks that merely repeat the same words.

use crate::common::{ask, ids, q, Fixture};

const ERRORS_RS: &str = r#"/// Decoder state.
pub struct Decoder {
    pos: usize,
}

impl Decoder {
    /// Checks the header.
    pub fn check_header(&self, n: usize) -> Result<(), String> {
        let limit = self.pos + 16;
        if n > limit {
            return Err(format!("header length {} exceeds frame limit", n));
        }
        Ok(())
    }
}

/// frame limit header exceeds length: frame limit, header length, limit exceeds frame
pub fn limits() -> usize {
    0
}
"#;

#[test]
fn pasted_error_message_ranks_the_function_raising_it_first() {
    let f = Fixture::empty();
    f.write("src/errors.rs", ERRORS_RS);
    let p = f.open();
    let r = ask(&p, &q("header length exceeds frame limit"));
    let got = ids(&r);
    assert_eq!(
        got.first().copied(),
        Some("src/errors.rs#errors::Decoder::check_header"),
        "the raiser (innermost chunk holding the literal) ranks first, above the chunk repeating its words and the impl around it: {got:?}"
    );
}

#[test]
fn phrase_words_drop_placeholders_and_punctuation_in_order() {
    use contextgraph_provider_workspace::rank::{contains_phrase, phrase_words};
    let words = phrase_words("header length {} exceeds frame limit");
    assert_eq!(words, ["header", "length", "exceeds", "frame", "limit"]);
    let code = phrase_words(r#"Err(format!("header length {} exceeds frame limit", n))"#);
    assert!(contains_phrase(&code, &words));
    let shuffled = phrase_words("frame limit header exceeds length");
    assert!(!contains_phrase(&shuffled, &words));
    assert!(!contains_phrase(&code, &[]));
}
