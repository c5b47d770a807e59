//! Relevance (pure): BM25 with heading matches weighted above body matches,
//! normalised so the best candidate scores 1 and every score is in [0, 1] (F1).

use contextgraph_provider_docs::score::{bm25, normalise, query_terms, SectionTerms};

fn scores(query: &str, sections: &[(&str, &str)]) -> Vec<f32> {
    let stats: Vec<SectionTerms> = sections
        .iter()
        .map(|(t, b)| SectionTerms::new(t, b))
        .collect();
    let refs: Vec<&SectionTerms> = stats.iter().collect();
    normalise(&bm25(&query_terms(query), &refs))
}

#[test]
fn query_terms_drop_function_words_and_fold_case() {
    assert_eq!(
        query_terms("How do I configure the Retry policy?"),
        ["configure", "policy", "retry"]
    );
    assert_eq!(query_terms("Über ÜBER"), ["über"]);
    assert!(query_terms("how do I?").is_empty());
}

#[test]
fn f1_the_best_candidate_scores_one_and_all_scores_are_in_range() {
    let s = scores(
        "retry policy",
        &[
            ("Retry policy", "max attempts"),
            ("Backoff", "retry delay"),
            ("Logging", "stderr"),
        ],
    );
    assert_eq!(s[0], 1.0);
    assert!(s[1] > 0.0 && s[1] < 1.0, "{s:?}");
    assert_eq!(s[2], 0.0, "no match, no score");
    assert!(s.iter().all(|x| (0.0..=1.0).contains(x)));
}

#[test]
fn a_heading_match_outranks_the_same_term_in_the_body() {
    let s = scores(
        "timeouts",
        &[
            ("Networking", "timeouts are 30 seconds"),
            ("Timeouts", "30 seconds"),
        ],
    );
    assert!(s[1] > s[0], "{s:?}");
}

#[test]
fn a_short_focused_section_outranks_a_long_one_mentioning_the_term_once() {
    let long_body = format!("retry {}", "unrelated words here ".repeat(200));
    let s = scores(
        "retry",
        &[
            ("Changelog", long_body.as_str()),
            ("Notes", "retry retry on failure"),
        ],
    );
    assert!(s[1] > s[0], "{s:?}");
}

#[test]
fn rare_terms_weigh_more_than_common_ones() {
    let s = scores(
        "config jitter",
        &[
            ("A", "config config"),
            ("B", "config"),
            ("C", "config jitter"),
        ],
    );
    assert_eq!(s[2], 1.0, "{s:?}");
}

#[test]
fn nothing_to_match_scores_all_zero() {
    assert_eq!(scores("the", &[("Retry", "retry")]), [0.0]);
    assert!(scores("retry", &[]).is_empty());
    assert_eq!(normalise(&[f64::NAN, 2.0, 1.0]), [0.0, 1.0, 0.5]);
}

#[test]
fn case_folding_agrees_between_index_and_query_in_any_script() {
    // Word-final capital sigma: a query typed in capitals still matches.
    let s = scores("ΟΔΟΣ", &[("Οδοσ", "")]);
    assert_eq!(s, [1.0]);
    let s = scores("ÜBER", &[("über uns", "")]);
    assert_eq!(s, [1.0]);
}
