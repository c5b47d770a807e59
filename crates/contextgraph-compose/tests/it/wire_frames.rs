//! Interop: real wire data, the shared reference session's frames, composed.
//! Runs when `../shared/wire` is present (the testkit prints a note and the
//! tests return early when it is not).

use crate::common::*;
use contextgraph_compose::{Exclusion, ProviderOutcome, ProviderStatus};
use contextgraph_types::{ContextFrame, ContextQuery, ContextQueryResult};

fn session() -> Option<(ContextQuery, ContextQueryResult)> {
    use contextgraph_testkit::interop::transcript_envelope;
    let query = transcript_envelope("query")?;
    let result = transcript_envelope("frames")?;
    Some((
        serde_json::from_value(query["query"].clone()).expect("ContextQuery"),
        serde_json::from_value(result["result"].clone()).expect("ContextQueryResult"),
    ))
}

#[test]
fn wire_frames_with_placeholder_digests_are_quarantined_for_d1() {
    // The reference session's digests are placeholders ("sha256:aaaa…"), not
    // the digests of the content: a host that recomputes them must refuse.
    let Some((query, result)) = session() else {
        return;
    };
    let outcome = ProviderOutcome::audited("repo-graph", &query, result.clone());
    match &outcome.status {
        ProviderStatus::Quarantined { violations, .. } => {
            assert!(
                violations.iter().any(|v| v.anchor.as_str() == "D1"),
                "{violations:?}"
            );
        }
        other => panic!("expected quarantine, got {other:?}"),
    }
    // Even handed over as accepted, the composer recomputes and refuses each lying frame.
    let outcomes = vec![ProviderOutcome::accepted("repo-graph", result.frames)];
    let c = composed(&outcomes, &budget(1024));
    assert!(c.citations.is_empty());
    assert!(c
        .audit
        .frames
        .iter()
        .all(|f| matches!(f.exclusion(), Some(Exclusion::DigestMismatch { .. }))));
}

#[test]
fn wire_frames_with_honest_digests_compose_and_parse_back() {
    let Some((query, mut result)) = session() else {
        return;
    };
    for f in &mut result.frames {
        f.content_digest = f
            .content
            .as_deref()
            .map(|c| contextgraph_compose::sha256_digest(c.as_bytes()));
    }
    let outcome = ProviderOutcome::audited("repo-graph", &query, result);
    assert!(
        matches!(outcome.status, ProviderStatus::Accepted { .. }),
        "{:?}",
        outcome.status
    );
    let outcomes = vec![outcome];
    let c = composed(&outcomes, &budget(query.max_tokens));
    assert_sound(&c, &outcomes);
    let labels: Vec<&str> = c.citations.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["retry.md L1-20", "config.rs L42-44"]);
    let frames: Vec<&ContextFrame> = outcomes[0].offered_frames().iter().collect();
    assert!(c
        .prompt
        .contains(frames[0].content.as_deref().unwrap_or("?")));
}
