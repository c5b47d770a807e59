//! The shipped model loads, and what it learned makes sense on a few
//! hand-picked words: weak, honest checks (a related pair is more similar
//! than an unrelated control), not exact values, so retraining on a similar
//! corpus keeps them true while a broken pipeline (random or collapsed
//! vectors, a tokenizer mismatch) fails them.

use contextgraph_embed::{builtin, tokenize::TOKENIZER_NAME, StaticModel};

fn model() -> &'static StaticModel {
    builtin().expect("the built-in model loads")
}

#[test]
fn the_builtin_model_loads_with_its_documented_shape() {
    let m = model();
    assert_eq!(m.name(), "code-static-v3");
    assert_eq!(m.dim(), 128);
    assert!(m.vocab_len() > 15_000, "vocab {}", m.vocab_len());
    assert!(m.file().starts_with("built-in model"));
    assert_eq!(m.fingerprint().len(), 32);
    assert_eq!(TOKENIZER_NAME, "code-split-v1");
    // Loading twice gives the same model.
    assert!(std::ptr::eq(m, model()));
}

#[test]
fn the_written_down_fingerprint_is_the_hash_of_the_builtin_bytes() {
    use contextgraph_embed::builtin::{BUILTIN_MODEL_BYTES, BUILTIN_MODEL_FINGERPRINT};
    // `from_bytes` hashes; `builtin()` uses the constant.
    let hashed = StaticModel::from_bytes(BUILTIN_MODEL_BYTES, "copy").expect("loads");
    assert_eq!(hashed.fingerprint(), BUILTIN_MODEL_FINGERPRINT);
    assert_eq!(model().fingerprint(), BUILTIN_MODEL_FINGERPRINT);
}

/// (word, related word, unrelated control): prose words beside the code
/// words that implement them.
const PAIRS: &[(&str, &str, &str)] = &[
    ("budget", "limit", "socket"),
    ("retry", "backoff", "color"),
    ("error", "failure", "pixel"),
    ("delete", "remove", "thread"),
    ("timeout", "deadline", "string"),
    ("encrypt", "cipher", "layout"),
    ("database", "query", "font"),
    ("compress", "gzip", "mutex"),
    ("authenticate", "login", "vector"),
    ("serialize", "json", "thread"),
];

#[test]
fn related_words_are_closer_than_unrelated_controls() {
    let m = model();
    for &(a, related, control) in PAIRS {
        let r = m
            .token_similarity(a, related)
            .unwrap_or_else(|| panic!("{a}/{related} in vocab"));
        let c = m
            .token_similarity(a, control)
            .unwrap_or_else(|| panic!("{a}/{control} in vocab"));
        assert!(r > c, "{a}: {related} {r:.2} should beat {control} {c:.2}");
    }
}

#[test]
fn vectors_are_not_collapsed() {
    // If every vector pointed the same way, every pair would look related.
    let m = model();
    let mean_control: f32 = PAIRS
        .iter()
        .filter_map(|&(a, _, control)| m.token_similarity(a, control))
        .sum::<f32>()
        / PAIRS.len() as f32;
    assert!(
        mean_control < 0.3,
        "mean unrelated similarity {mean_control:.2}"
    );
}

#[test]
fn a_retry_neighbourhood_holds_retry_words() {
    let near: Vec<String> = model()
        .nearest_tokens("retry", 15)
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    let expected = [
        "backoff",
        "reconnect",
        "retrying",
        "attempt",
        "retried",
        "retryable",
    ];
    assert!(
        near.iter().any(|t| expected.contains(&t.as_str())),
        "neighbours of retry: {near:?}"
    );
}

#[test]
fn a_prose_goal_is_closer_to_the_code_that_implements_it() {
    let m = model();
    let goal = m
        .encode("how many times do we retry a failed request")
        .expect("known words");
    let implementation = m
        .encode(
            "fn send_with_backoff(req: Request, max_attempts: u32) { let delay = backoff.next(); }",
        )
        .expect("known words");
    let unrelated = m
        .encode("fn render_glyph(font: &Font, pixel_size: f32) -> Bitmap")
        .expect("known words");
    assert!(goal.cosine(&implementation) > goal.cosine(&unrelated));
}
