//! What a goal asks for, as the ranker sees it: *concepts*, each a query
//! word plus the inflections of it that the index holds, and the path and
//! test signals computed from them.
//!
//! Goals are mostly prose ("where are consent grants stored on disk?")
//! while code says `store`, `grant`, `load`. Matching `stored` to `store`
//! and `ranked` to `rank` at query time, against the terms the index
//! actually holds, needs no change to what is indexed; grouping the
//! variants into one concept keeps the coordination factor honest (a chunk
//! holding `store` and `stores` has still matched one word of the goal).

use crate::term_substrings::TermSubstrings;
use crate::tokenize::distinct_tokens;

/// Question words and fillers that carry nothing in a goal, on top of the
/// tokenizer's stopwords (which both sides share). Only the query drops
/// them: the index keeps them, so no re-index is needed when this changes.
const QUERY_STOPWORDS: &[&str] = &[
    "been", "being", "could", "did", "doing", "done", "get", "gets", "had", "have", "i", "me",
    "my", "our", "should", "their", "them", "there", "these", "they", "those", "us", "where",
    "who", "whom", "whose", "why", "would",
];

/// Weight of an inflection relative to the word as written.
pub const VARIANT_WEIGHT: f32 = 0.8;

/// Path tokens every file shares (or nearly): never evidence of a topic.
const GENERIC_PATH_TOKENS: &[&str] = &["crates", "lib", "main", "mod", "rs", "src"];

/// Goal words that ask for tests or benchmarks themselves, lifting the
/// demotion of test code.
const TEST_WORDS: &[&str] = &[
    "bench",
    "benches",
    "benchmark",
    "benchmarks",
    "fixture",
    "fixtures",
    "test",
    "testing",
    "tests",
];

/// One word of the goal and the index terms standing for it: the word
/// itself first (when indexed), then its inflections.
#[derive(Debug, Clone, PartialEq)]
pub struct Concept {
    /// `(term, weight)`: 1 for the word as written, [`VARIANT_WEIGHT`] for
    /// an inflection.
    pub terms: Vec<(String, f32)>,
}

/// The words of `text` worth searching for, in order, at most `max`.
pub fn query_words(text: &str, max: usize) -> Vec<String> {
    let mut words = distinct_tokens(text);
    words.retain(|w| !QUERY_STOPWORDS.contains(&w.as_str()));
    words.truncate(max);
    words
}

/// Likely inflections of `word` (plural, past, gerund, and the reverse),
/// without the word itself. Only plain lowercase ASCII words of four or
/// more letters are inflected: identifiers and short words stay exact.
pub fn inflections(word: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if word.len() < 4 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return out;
    }
    let mut push = |s: String| {
        if s.len() >= 3 && s != word && !out.contains(&s) {
            out.push(s);
        }
    };
    let stem_of = |suffix: &str| word.strip_suffix(suffix).map(str::to_owned);
    if let Some(s) = stem_of("ies") {
        push(format!("{s}y"));
    } else if let Some(s) = stem_of("es") {
        push(s.clone());
        push(format!("{s}e"));
    } else if let Some(s) = stem_of("s") {
        if !word.ends_with("ss") {
            push(s);
        }
    }
    if let Some(s) = stem_of("ied") {
        push(format!("{s}y"));
    } else if let Some(s) = stem_of("ed") {
        push(s.clone());
        push(format!("{s}e"));
        push(undouble(&s));
    }
    if let Some(s) = stem_of("ing") {
        push(s.clone());
        push(format!("{s}e"));
        push(undouble(&s));
    }
    if !word.ends_with('s') {
        push(format!("{word}s"));
    }
    out
}

/// `stopp` → `stop`: the doubled consonant of `stopped`, `running`.
fn undouble(stem: &str) -> String {
    let b = stem.as_bytes();
    if b.len() >= 3 && b[b.len() - 1] == b[b.len() - 2] && !b"aeiousl".contains(&b[b.len() - 1]) {
        stem[..stem.len() - 1].to_owned()
    } else {
        stem.to_owned()
    }
}

/// Most inflections searched per word: the ones the index holds most often.
/// Each costs a postings walk, so a prose goal stays near the cost of the
/// same goal without them.
const MAX_VARIANTS: usize = 2;

/// The words of `text` written as plain words, not parts of an identifier:
/// only these are inflected (`retry_socket` and `retrySocket` stay exact).
pub fn prose_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty() && !w.contains('_'))
        .filter(|w| w.chars().all(char::is_lowercase) || is_capitalised(w))
        .map(str::to_lowercase)
        .collect()
}

/// `Stored` at the start of a sentence is still prose; `HttpServer` is not.
fn is_capitalised(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(char::is_uppercase) && chars.all(char::is_lowercase)
}

/// The goal's concepts: each query word with up to `MAX_VARIANTS` (2) of its
/// inflections, those with the highest `df` (zero: not indexed, skipped).
/// Only words in `prose` are inflected. The word itself is kept even when
/// it is not indexed, so it still counts against coverage. A word already
/// present as another concept's term is not repeated.
pub fn concepts(words: &[String], prose: &[String], df: &dyn Fn(&str) -> u32) -> Vec<Concept> {
    let mut out: Vec<Concept> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for word in words {
        if seen.contains(word) {
            continue;
        }
        let mut terms = vec![(word.clone(), 1.0)];
        seen.push(word.clone());
        if prose.contains(word) {
            let mut variants: Vec<(u32, String)> = inflections(word)
                .into_iter()
                .filter(|v| !seen.contains(v) && !words.contains(v))
                .map(|v| (df(&v), v))
                .filter(|(n, _)| *n > 0)
                .collect();
            variants.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            for (_, v) in variants.into_iter().take(MAX_VARIANTS) {
                seen.push(v.clone());
                terms.push((v, VARIANT_WEIGHT));
            }
        }
        out.push(Concept { terms });
    }
    out
}

/// Matches text against the goal's concepts by looking each word up in a
/// map of concept terms, instead of tokenizing into owned strings: it runs
/// for every candidate chunk (its symbol name and its file path), so the
/// usual lowercase ASCII path costs no allocation.
#[derive(Debug)]
pub struct ConceptMatcher<'a> {
    /// Every concept term, with the bits of its concepts. A goal has a few
    /// dozen terms at most: a scan comparing lengths first beats hashing.
    terms: Vec<(&'a str, u32)>,
    concepts: usize,
    /// The same terms, for the quick test that a text holds none of them.
    substrings: TermSubstrings<'a>,
}

impl<'a> ConceptMatcher<'a> {
    /// A matcher for `concepts` (at most 32; later ones are ignored).
    pub fn new(concepts: &'a [Concept]) -> ConceptMatcher<'a> {
        let mut terms: Vec<(&'a str, u32)> = Vec::new();
        for (i, c) in concepts.iter().enumerate().take(32) {
            for (t, _) in &c.terms {
                match terms.iter_mut().find(|(known, _)| *known == t.as_str()) {
                    Some((_, bits)) => *bits |= 1 << i,
                    None => terms.push((t.as_str(), 1 << i)),
                }
            }
        }
        let substrings = TermSubstrings::new(terms.iter().map(|(t, _)| *t));
        ConceptMatcher {
            terms,
            concepts: concepts.len().min(32),
            substrings,
        }
    }

    /// Share of the concepts among the tokens of `text` (an identifier such
    /// as `host::audit::check_budget` yields its parts): 0 to 1. The
    /// ranking reads a symbol's tokens stored at index time instead
    /// ([`stored_token_share`](Self::stored_token_share)).
    pub fn token_share(&self, text: &str) -> f32 {
        if self.concepts == 0 {
            return 0.0;
        }
        let mut mask = 0u32;
        crate::tokenize::tokens(text, |t| mask |= self.bits(t));
        mask.count_ones() as f32 / self.concepts as f32
    }

    /// [`token_share`](Self::token_share) of a name from its stored
    /// tokens ([`symbol_tokens`](crate::tokenize::symbol_tokens) of it):
    /// the same share, each token looked up once, nothing tokenized.
    pub fn stored_token_share(&self, symbol_tokens: &str) -> f32 {
        if self.concepts == 0 {
            return 0.0;
        }
        // Split on the byte: a space is never inside a multibyte
        // character, so the pieces are `split(' ')`'s, without a searcher
        // set up per name (a third of this function's cost at 16k files).
        let mask = symbol_tokens
            .as_bytes()
            .split(|&b| b == b' ')
            .filter(|t| !t.is_empty())
            .fold(0u32, |m, t| m | self.bits(t));
        mask.count_ones() as f32 / self.concepts as f32
    }

    /// Share of the concepts named in the file path `rel_path`
    /// (`crates/contextgraph-host/src/consent/store.rs` names `host`,
    /// `consent`, `store`; `src`, `lib`, `mod` … never count): 0 to 1.
    pub fn path_share(&self, rel_path: &str) -> f32 {
        // Every word, part or token of an ASCII path is (the lowercase of)
        // a byte range of it: a path in which no term occurs ignoring ASCII
        // case names no concept.
        if self.concepts == 0 || !self.substrings.any_in(rel_path) {
            return 0.0;
        }
        self.path_share_tokenized(rel_path)
    }

    /// [`path_share`](Self::path_share) without the quick test: every word
    /// of the path looked up.
    fn path_share_tokenized(&self, rel_path: &str) -> f32 {
        if self.concepts == 0 {
            return 0.0;
        }
        let mut mask = 0u32;
        let mut lookup = |word: &str| {
            if !GENERIC_PATH_TOKENS.contains(&word) {
                mask |= self.bits(word);
            }
        };
        for word in rel_path.split(|c: char| !c.is_alphanumeric() && c != '_') {
            if word.is_empty() {
                continue;
            }
            if word
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
            {
                lookup(word);
                if word.contains('_') {
                    word.split('_')
                        .filter(|p| !p.is_empty())
                        .for_each(&mut lookup);
                }
            } else {
                // `HttpServer.java`: the tokenizer's identifier parts.
                crate::tokenize::tokens(word, &mut lookup);
            }
        }
        mask.count_ones() as f32 / self.concepts as f32
    }

    fn bits(&self, word: impl AsRef<[u8]>) -> u32 {
        let word = word.as_ref();
        self.terms
            .iter()
            .filter(|(t, _)| t.len() == word.len() && t.as_bytes() == word)
            .fold(0, |m, (_, bits)| m | bits)
    }
}

/// Whether the goal asks about tests or benchmarks themselves.
pub fn asks_for_tests(words: &[String]) -> bool {
    words.iter().any(|w| TEST_WORDS.contains(&w.as_str()))
}

/// Whether a chunk is test or benchmark code: under a `tests`, `benches`,
/// `testdata` or `fixtures` directory, in a `test_*` / `*_test(s)` file, or
/// a symbol inside a `tests` module.
pub fn is_test_code(rel_path: &str, qualified_symbol: Option<&str>) -> bool {
    is_test_path(rel_path) || is_test_symbol(qualified_symbol)
}

/// The path half of [`is_test_code`]: a test directory or a test file
/// name. Depends on the path alone, so the ranking asks it once per file
/// ([`crate::index::Index::file_traits`]).
pub fn is_test_path(rel_path: &str) -> bool {
    let mut parts = rel_path.split('/').peekable();
    while let Some(part) = parts.next() {
        let is_file = parts.peek().is_none();
        if !is_file {
            if matches!(
                part,
                "tests" | "test" | "benches" | "testdata" | "fixtures" | "__tests__"
            ) {
                return true;
            }
            continue;
        }
        let stem = part.split('.').next().unwrap_or(part);
        if stem.starts_with("test_")
            || stem.ends_with("_test")
            || stem.ends_with("_tests")
            || part.contains(".test.")
            || part.contains(".spec.")
        {
            return true;
        }
    }
    false
}

/// The symbol half of [`is_test_code`]: a symbol inside a `tests` module.
///
/// The segments are `split("::")`'s (leftmost separators first, so in
/// `a:::tests` the last segment is `:tests`), found by one pass over the
/// bytes: the ranking asks this of every candidate, and a string searcher
/// set up per name cost more than the scan.
pub fn is_test_symbol(qualified_symbol: Option<&str>) -> bool {
    let Some(q) = qualified_symbol else {
        return false;
    };
    let b = q.as_bytes();
    let (mut start, mut i) = (0, 0);
    while i + 1 < b.len() {
        if b[i] == b':' && b[i + 1] == b':' {
            if &b[start..i] == b"tests" {
                return true;
            }
            i += 2;
            start = i;
        } else {
            i += 1;
        }
    }
    &b[start..] == b"tests"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 4,000 texts of 1 to `max_parts` of `pieces` each, drawn by a fixed
    /// linear congruential sequence from `seed` (the same texts every run).
    fn concatenations(pieces: &[&str], seed: u64, max_parts: usize) -> Vec<String> {
        let mut state = seed;
        (0..4000)
            .map(|n| {
                let mut text = String::new();
                for _ in 0..1 + n % max_parts {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    text.push_str(pieces[(state >> 33) as usize % pieces.len()]);
                }
                text
            })
            .collect()
    }

    /// The byte scan finds a `tests` segment exactly where `split("::")`
    /// does, runs of one to four colons and near misses included.
    #[test]
    fn is_test_symbol_is_the_split_segments_test() {
        let pieces = [
            "tests", "test", "s", "a", ":", "::", ":::", "::::", "tests::", "é",
        ];
        let mut found = 0;
        for q in concatenations(&pieces, 7, 6) {
            let by_split = q.split("::").any(|seg| seg == "tests");
            assert_eq!(is_test_symbol(Some(&q)), by_split, "{q:?}");
            found += usize::from(by_split);
        }
        assert!(found > 100 && found < 3900, "both answers drawn: {found}");
        for (q, want) in [
            ("tests", true),
            ("a::tests", true),
            ("tests::b", true),
            ("a::tests::b", true),
            ("a:::tests", false),
            ("a::::tests", true),
            ("tests:::b", true),
            ("atests::b", false),
            ("", false),
        ] {
            assert_eq!(is_test_symbol(Some(q)), want, "{q:?}");
        }
        assert!(!is_test_symbol(None));
    }

    /// A name's share, tokenized or read from its stored tokens, is the
    /// share of its tokens lowercased and looked up, for names of every
    /// shape and terms with capitals and non-ASCII letters among them.
    #[test]
    fn token_share_is_the_share_of_the_lowercased_tokens() {
        let concept = |terms: &[&str]| Concept {
            terms: terms.iter().map(|t| ((*t).to_owned(), 1.0)).collect(),
        };
        let concepts = vec![
            concept(&["http", "https"]),
            concept(&["server"]),
            concept(&["parse", "parsed"]),
            concept(&["URL", "url2"]),
            concept(&["étage"]),
            concept(&["x2", "v"]),
        ];
        let matcher = ConceptMatcher::new(&concepts);
        let reference = |text: &str| {
            let mut mask = 0u32;
            crate::tokenize::tokens(text, |t| mask |= matcher.bits(t));
            mask.count_ones() as f32 / matcher.concepts as f32
        };
        let pieces = [
            "HTTPServer",
            "parse",
            "Parse",
            "PARSED",
            "url",
            "URL",
            "Url2",
            "_",
            "::",
            "Étage",
            "ÉTAGE",
            "étage",
            "x2",
            "X2",
            "http_Server",
            "v",
            "ß",
            " ",
            "https",
            "9",
        ];
        for text in concatenations(&pieces, 7, 6) {
            assert_eq!(matcher.token_share(&text), reference(&text), "{text:?}");
            assert_eq!(
                matcher.stored_token_share(&crate::tokenize::symbol_tokens(&text)),
                reference(&text),
                "{text:?} (stored)"
            );
        }
    }

    /// A path in which the quick test finds no term has no word, part or
    /// token naming a concept: the share with the test is the share of
    /// every word looked up, for paths of every shape.
    #[test]
    fn path_share_is_the_share_of_every_word_looked_up() {
        let concept = |terms: &[&str]| Concept {
            terms: terms.iter().map(|t| ((*t).to_owned(), 1.0)).collect(),
        };
        let concepts = vec![
            concept(&["http", "https"]),
            concept(&["server", "src"]),
            concept(&["URL", "url2"]),
            concept(&["étage"]),
            concept(&["x2", "v"]),
        ];
        let matcher = ConceptMatcher::new(&concepts);
        let pieces = [
            "/",
            ".",
            "-",
            "src",
            "HttpServer",
            "http_server",
            "V",
            "v",
            "x2",
            "X2.rs",
            "url",
            "URL",
            "Url2",
            "étage",
            "ÉTAGE",
            "lib",
            "ab",
            "_",
            "tests",
            "9",
        ];
        for path in concatenations(&pieces, 11, 7) {
            assert_eq!(
                matcher.path_share(&path),
                matcher.path_share_tokenized(&path),
                "{path:?}"
            );
        }
    }

    #[test]
    fn inflections_cover_plural_past_and_gerund_both_ways() {
        assert!(inflections("stored").contains(&"store".to_owned()));
        assert!(inflections("ranked").contains(&"rank".to_owned()));
        assert!(inflections("stopped").contains(&"stop".to_owned()));
        assert!(inflections("composing").contains(&"compose".to_owned()));
        assert!(inflections("running").contains(&"run".to_owned()));
        assert!(inflections("grants").contains(&"grant".to_owned()));
        assert!(inflections("queries").contains(&"query".to_owned()));
        assert!(inflections("frame").contains(&"frames".to_owned()));
        assert!(!inflections("class").contains(&"clas".to_owned()));
        assert!(inflections("http").contains(&"https".to_owned()));
        assert!(inflections("max").is_empty(), "short words stay exact");
        assert!(
            inflections("http_timeout").is_empty(),
            "identifiers stay exact"
        );
    }

    #[test]
    fn query_words_drop_question_words_and_concepts_group_indexed_variants() {
        let words = query_words("where are consent grants stored on disk?", 32);
        assert_eq!(words, ["consent", "grants", "stored", "disk"]);
        let df = |t: &str| {
            u32::from(matches!(
                t,
                "grant" | "store" | "stores" | "consent" | "disk"
            ))
        };
        let prose = prose_words("where are consent grants stored on disk?");
        let c = concepts(&words, &prose, &df);
        assert_eq!(c.len(), 4);
        assert_eq!(
            c[1].terms,
            [
                ("grants".to_owned(), 1.0),
                ("grant".to_owned(), VARIANT_WEIGHT)
            ]
        );
        assert_eq!(c[2].terms[0].0, "stored");
        assert!(c[2].terms.iter().any(|(t, _)| t == "store"));
        assert!(
            c[0].terms.len() == 1,
            "unindexed inflections are not added: {:?}",
            c[0]
        );
    }

    #[test]
    fn identifier_parts_stay_exact_and_only_the_most_frequent_variants_are_kept() {
        let text = "retry_socket retrySocket Stored parsing";
        let words = query_words(text, 32);
        let prose = prose_words(text);
        assert_eq!(prose, ["stored", "parsing"]);
        let c = concepts(&words, &prose, &|t| match t {
            "sockets" | "retrys" => 50,
            "store" => 9,
            "stor" => 1,
            "parse" => 3,
            "parsings" => 2,
            "pars" => 1,
            _ => 0,
        });
        for concept in &c {
            let first = &concept.terms[0].0;
            if first == "socket" || first == "retry" {
                assert_eq!(
                    concept.terms.len(),
                    1,
                    "identifier parts are exact: {concept:?}"
                );
            }
        }
        let variants = |word: &str| -> Vec<String> {
            let concept = c.iter().find(|c| c.terms[0].0 == word).unwrap();
            concept.terms[1..].iter().map(|(t, _)| t.clone()).collect()
        };
        assert_eq!(
            variants("stored"),
            ["store", "stor"],
            "`storeds` is not indexed"
        );
        assert_eq!(
            variants("parsing"),
            ["parse", "parsings"],
            "the two most frequent; `pars` dropped"
        );
    }

    #[test]
    fn a_word_in_the_goal_is_not_repeated_as_another_words_variant() {
        let words = query_words("frame frames", 32);
        let c = concepts(&words, &words, &|_| 1);
        let all: Vec<&str> = c
            .iter()
            .flat_map(|c| c.terms.iter().map(|(t, _)| t.as_str()))
            .collect();
        assert_eq!(all.iter().filter(|t| **t == "frames").count(), 1, "{all:?}");
    }

    #[test]
    fn path_score_counts_concepts_named_by_the_path() {
        let words = query_words("where are consent grants stored on disk?", 32);
        let c = concepts(&words, &words, &|t| u32::from(t == "store"));
        let m = ConceptMatcher::new(&c);
        let half = m.path_share("crates/contextgraph-host/src/consent/store.rs");
        assert!(
            (half - 0.5).abs() < 1e-6,
            "consent and store of four: {half}"
        );
        assert_eq!(m.path_share("README.md"), 0.0);
        assert!(
            (m.path_share("src/ConsentStore.java") - 0.5).abs() < 1e-6,
            "camel case parts"
        );
        assert!(
            (m.path_share("src/consent_store.py") - 0.5).abs() < 1e-6,
            "snake case parts"
        );
        let generic = concepts(&query_words("src lib", 32), &[], &|_| 0);
        assert_eq!(
            ConceptMatcher::new(&generic).path_share("src/lib.rs"),
            0.0,
            "generic path words"
        );
    }

    #[test]
    fn token_share_counts_concepts_among_an_identifiers_parts() {
        let words = query_words("how is the token budget checked?", 32);
        let c = concepts(&words, &words, &|t| u32::from(t == "check"));
        let m = ConceptMatcher::new(&c);
        let share = m.token_share("audit::check_budget");
        assert!(
            (share - 2.0 / 3.0).abs() < 1e-6,
            "budget and check of three: {share}"
        );
        assert_eq!(m.token_share("render::html"), 0.0);
    }

    #[test]
    fn test_code_is_recognised_by_directory_file_name_and_module() {
        assert!(is_test_code("crates/a/tests/test_x.rs", None));
        assert!(is_test_code("crates/a/benches/host.rs", None));
        assert!(is_test_code("pkg/server_test.go", None));
        assert!(is_test_code("web/app.test.ts", None));
        assert!(is_test_code(
            "crates/a/src/rank.rs",
            Some("rank::tests::it_ranks")
        ));
        assert!(!is_test_code("crates/a/src/rank.rs", Some("rank::search")));
        assert!(
            !is_test_code("crates/testkit/src/lib.rs", None),
            "a crate named testkit is not a test dir"
        );
        assert!(!is_test_code("src/attestation.rs", None));
        assert!(asks_for_tests(&query_words(
            "which tests cover the audit?",
            32
        )));
        assert!(!asks_for_tests(&query_words("how is the audit done?", 32)));
    }
}
