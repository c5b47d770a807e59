//! Tests of the ranking's BM25 accumulators and score keys (`rank.rs`).

use super::*;

/// The keys' ascending order is the ranking's best-first order (score
/// by `total_cmp` descending, then slot), signs, zeros, infinities and
/// NaN included.
#[test]
fn score_keys_sort_best_first() {
    let scores = [
        0.5f32,
        -0.0,
        0.0,
        -1.5,
        f32::INFINITY,
        f32::NAN,
        1e-30,
        0.5,
        -f32::NAN,
    ];
    let acc: Vec<f32> = scores.iter().cycle().take(40).copied().collect();
    let touched: Vec<u32> = (0..40).rev().collect();
    let mut keys = by_score(&touched, &acc);
    keys.sort_unstable();
    let mut expected = touched.clone();
    expected.sort_by(|a, b| acc[*b as usize].total_cmp(&acc[*a as usize]).then(a.cmp(b)));
    assert_eq!(keys.iter().map(|&k| k as u32).collect::<Vec<_>>(), expected);
}
use crate::index::tests::record as file;
use crate::index::Index;

/// The accumulators a thread keeps between searches are zero again
/// after each: a search answers the same after any other search on its
/// thread as it does first on a fresh thread, whether the search before
/// wrote most slots (zeroed whole) or a few (zeroed one by one), and
/// after the index grew or shrank between the two.
#[test]
fn a_search_answers_the_same_after_other_searches_on_its_thread() {
    let mut files = vec![file("common.rs", &[&[("alpha", 3)], &[("alpha", 1)]])];
    for i in 0..60 {
        let terms: &[(&str, u32)] = match i % 3 {
            0 => &[("alpha", 1), ("beta", 2)],
            1 => &[("beta", 1), ("gamma", 1)],
            _ => &[("delta", 1)],
        };
        files.push(file(&format!("f{i}.rs"), &[terms, &[("filler", 1)]]));
    }
    files.push(file("rare.rs", &[&[("rare", 1), ("beta", 1)]]));
    let big = Index::from_records(files.clone());
    let small = Index::from_records(files[..5].to_vec());
    let root = std::path::Path::new("/nonexistent");
    let run = |index: &Index, goal: &str| {
        let graph = Graph { index, root };
        search(&graph, goal, &[], &|_| true)
    };
    let fresh = |index: &Index, goal: &'static str| {
        std::thread::scope(|s| {
            s.spawn(|| run(index, goal))
                .join()
                .expect("the search runs")
        })
    };
    let goals = ["beta gamma", "rare", "rare beta", "alpha delta", "beta"];
    let expected: Vec<Vec<Ranked>> = goals.iter().map(|g| fresh(&big, g)).collect();
    assert!(expected.iter().all(|r| !r.is_empty()));
    // One thread, every goal after every other one (and after searches
    // of a smaller and the same larger index).
    std::thread::scope(|s| {
        s.spawn(|| {
            for before in goals {
                for (goal, want) in goals.iter().zip(&expected) {
                    let _ = run(&big, before);
                    assert_eq!(&run(&big, goal), want, "{goal:?} after {before:?}");
                    let _ = run(&small, before);
                    assert_eq!(&run(&big, goal), want, "{goal:?} after a smaller index");
                }
            }
        })
        .join()
        .expect("the searches run");
    });
}
