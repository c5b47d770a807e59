//! Pooling, weighting, normalisation and similarity on a tiny model whose
//! vectors are chosen by hand, so each expected value is known.

use std::collections::BTreeMap;

use contextgraph_embed::{cosine, Embedding, ModelSpec, StaticModel, Storage};

/// `budget` and `cost` point the same way, `socket` is orthogonal, `the`
/// is a frequent word with weight zero.
fn model() -> StaticModel {
    let spec = ModelSpec {
        name: "tiny".into(),
        tokens: vec![
            "budget".into(),
            "cost".into(),
            "socket".into(),
            "the".into(),
            "token".into(),
        ],
        dim: 3,
        vectors: vec![
            1.0, 0.0, 0.0, //
            1.0, 0.0, 0.0, //
            0.0, 1.0, 0.0, //
            0.0, 0.0, 1.0, //
            0.6, 0.8, 0.0,
        ],
        weights: Some(vec![1.0, 1.0, 1.0, 0.0, 3.0]),
        metadata: BTreeMap::new(),
    };
    StaticModel::from_bytes(
        &spec.to_safetensors(Storage::Float32).expect("valid"),
        "tiny",
    )
    .expect("loads")
}

#[test]
fn an_embedding_is_the_normalised_weighted_mean_of_known_token_vectors() {
    let m = model();
    let e = m.encode("budget socket").expect("known tokens");
    let s = 0.5f32.sqrt();
    assert_eq!(e.as_slice(), [s, s, 0.0]);
    // `the` has weight zero: it changes nothing.
    assert_eq!(m.encode("the budget the socket the"), Some(e));
    // `token` weighs three times as much as `budget`: (1,0,0) + 3·(0.6,0.8,0).
    let e = m.encode("budget token").expect("known tokens");
    let (x, y) = (1.0f32 + 1.8, 2.4f32);
    let n = (x * x + y * y).sqrt();
    assert!((e.as_slice()[0] - x / n).abs() < 1e-6 && (e.as_slice()[1] - y / n).abs() < 1e-6);
}

#[test]
fn identifiers_are_split_and_normalised_before_lookup() {
    let m = model();
    let e = m.encode("MAX_BUDGET").expect("budget part");
    assert_eq!(m.encode("maxBudget"), Some(e.clone()));
    assert_eq!(m.encode("budgets"), Some(e));
}

#[test]
fn text_without_known_or_weighted_tokens_has_no_embedding() {
    let m = model();
    assert_eq!(m.encode("zzz qqq"), None);
    assert_eq!(m.encode("the the"), None, "only zero-weight tokens");
    assert_eq!(m.encode(""), None);
    let mut out = vec![7.0; 3];
    assert!(!m.encode_into("zzz", &mut out));
    assert_eq!(out, [0.0; 3]);
    let mut wrong = vec![0.0; 2];
    assert!(!m.encode_into("budget", &mut wrong), "wrong output length");
}

#[test]
fn cosine_ranks_related_text_above_unrelated_text() {
    let m = model();
    let query = m.encode("what does it cost").expect("cost");
    let related = m.encode("fn check_budget()").expect("budget");
    let unrelated = m.encode("open a socket").expect("socket");
    assert!((query.cosine(&related) - 1.0).abs() < 1e-6);
    assert!(query.cosine(&unrelated).abs() < 1e-6);
    assert_eq!(m.token_similarity("budget", "cost"), Some(1.0));
    assert_eq!(m.token_similarity("budget", "nope"), None);
    assert_eq!(m.nearest_tokens("budget", 1)[0].0, "cost");
}

#[test]
fn free_functions_handle_zero_and_unnormalised_vectors() {
    assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
    assert!((cosine(&[2.0, 0.0], &[3.0, 3.0]) - 0.5f32.sqrt()).abs() < 1e-6);
    assert_eq!(Embedding::from_vec(vec![0.0, 0.0]), None);
    assert_eq!(Embedding::from_vec(vec![f32::NAN, 1.0]), None);
    assert_eq!(
        Embedding::from_vec(vec![3.0, 4.0]).map(Embedding::into_vec),
        Some(vec![0.6, 0.8])
    );
}

/// Rows added four at a time give the bits rows added one at a time give
/// (the cold build's embeddings must not change), whatever the count, with
/// repeated rows and with ids out of range among them.
#[test]
fn rows_added_in_groups_are_rows_added_one_by_one() {
    let model = contextgraph_embed::builtin().expect("the shipped model loads");
    let vocab = model.vocab_len() as u64;
    let mut state = 0x853C_49E6_748F_EA9Bu64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 33
    };
    for round in 0..300 {
        let count = (next() % 40) as usize;
        let ids: Vec<u32> = (0..count)
            .map(|_| match next() % 20 {
                0 => u32::MAX,
                1 => vocab as u32,
                _ => (next() % vocab) as u32,
            })
            .collect();
        let mut grouped = vec![0.0f32; model.dim()];
        let mut single = vec![0.0f32; model.dim()];
        if round % 2 == 1 {
            // From a sum already under way, as a chunk starts from its path's.
            model.add_text("src/index/update.rs", &mut grouped);
            model.add_text("src/index/update.rs", &mut single);
        }
        model.add_rows(&ids, &mut grouped);
        for id in &ids {
            model.add_rows(std::slice::from_ref(id), &mut single);
        }
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&grouped), bits(&single), "{ids:?}");
    }
}
