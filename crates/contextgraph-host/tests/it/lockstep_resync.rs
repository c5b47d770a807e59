//! Lock-step providers (no correlation, H4): a reply is never delivered to a
//! request it does not answer, even when an earlier request timed out and
//! its late reply arrives while the next request waits.

use std::time::Duration;

use crate::common::peer::{ack, connect, frames, goal, script};
use contextgraph_host::{Answer, ConnectionError, ConnectionOptions};
use contextgraph_types::ContextQuery;
use tokio::time::Instant;

fn title_of(answer: &Answer) -> String {
    match answer {
        Answer::Frames(r) => r.frames[0].title.clone(),
        other => panic!("expected frames, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h4_lockstep_late_reply_is_never_taken_as_the_next_answer() {
    // The first query is answered after 300 ms; the host gives up at 50 ms.
    let peer = script(ack("slow-lockstep", false, false), |v| {
        let g = goal(v).unwrap_or_default();
        let delay = if g == "first" { 300 } else { 0 };
        vec![(Duration::from_millis(delay), frames(None, &g))]
    });
    let mut options = ConnectionOptions::default();
    options.resync_wait = Duration::from_secs(2);
    let conn = connect(peer, options).await.expect("handshake");
    let first = conn
        .query(
            &ContextQuery::new("first", 1, 100),
            Instant::now() + Duration::from_millis(50),
        )
        .await;
    assert!(
        matches!(first, Err(ConnectionError::Timeout { .. })),
        "{first:?}"
    );
    let second = conn
        .query(
            &ContextQuery::new("second", 1, 100),
            Instant::now() + Duration::from_secs(5),
        )
        .await
        .expect("second answered");
    assert_eq!(
        title_of(&second),
        "second",
        "the late reply to `first` was misdelivered"
    );
    assert_eq!(conn.diagnostics().late_replies, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h4_lockstep_owed_reply_that_never_comes_desynchronises_instead_of_guessing() {
    // The first query is never answered at all.
    let peer = script(ack("mute-lockstep", false, false), |v| {
        let g = goal(v).unwrap_or_default();
        if g == "first" {
            vec![]
        } else {
            vec![(Duration::ZERO, frames(None, &g))]
        }
    });
    let mut options = ConnectionOptions::default();
    options.resync_wait = Duration::from_millis(100);
    let conn = connect(peer, options).await.expect("handshake");
    let first = conn
        .query(
            &ContextQuery::new("first", 1, 100),
            Instant::now() + Duration::from_millis(50),
        )
        .await;
    assert!(matches!(first, Err(ConnectionError::Timeout { .. })));
    let second = conn
        .query(
            &ContextQuery::new("second", 1, 100),
            Instant::now() + Duration::from_secs(5),
        )
        .await;
    assert!(
        matches!(second, Err(ConnectionError::Desynchronised { owed: 1, .. })),
        "{second:?}"
    );
    assert!(
        conn.closed().is_some(),
        "an out-of-step session must be restarted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h4_lockstep_requests_carry_no_id_and_are_answered_in_order() {
    let peer = script(ack("plain-lockstep", false, false), |v| {
        assert!(
            v.get("id").is_none(),
            "an id was sent to a provider without correlation: {v}"
        );
        vec![(Duration::ZERO, frames(None, &goal(v).unwrap_or_default()))]
    });
    let conn = connect(peer, ConnectionOptions::default())
        .await
        .expect("handshake");
    for g in ["a", "b", "c"] {
        let answer = conn
            .query(
                &ContextQuery::new(g, 1, 100),
                Instant::now() + Duration::from_secs(5),
            )
            .await
            .expect("answer");
        assert_eq!(title_of(&answer), g);
    }
}
