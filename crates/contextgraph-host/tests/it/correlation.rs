//! Correlated providers (H4): pipelined requests are routed by the echoed
//! id; a missing or foreign id is a prompt typed error, not a timeout; a late
//! reply after a timeout is dropped; `verify` is pipelined alongside queries.

use std::time::Duration;

use crate::common::peer::{ack, connect, connect_through, frames, goal, id, script};
use crate::common::{host_with, retry_query, PATIENCE};
use contextgraph_host::{
    Answer, ConnectionError, ConnectionOptions, ProviderOutcome, RequestError,
};
use contextgraph_types::{ContextQuery, FrameId, VerifyRequest};
use serde_json::json;
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h4_wrong_id_is_a_prompt_typed_error_and_neighbours_are_unaffected() {
    let host = host_with(&[("wrong-id", "liar"), ("normal", "healthy")]).await;
    let started = std::time::Instant::now();
    let report = host.query_all(&retry_query(), PATIENCE).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    let liar = report.provider("liar").expect("liar");
    assert!(
        matches!(
            &liar.outcome,
            ProviderOutcome::Failed {
                error: RequestError::Connection(ConnectionError::Correlation { .. })
            }
        ),
        "{:?}",
        liar.outcome
    );
    assert!(matches!(
        report.provider("healthy").unwrap().outcome,
        ProviderOutcome::Accepted { .. }
    ));
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h4_missing_id_is_a_prompt_typed_error() {
    let host = host_with(&[("dropped-id", "forgetful")]).await;
    let started = std::time::Instant::now();
    let report = host.query_all(&retry_query(), PATIENCE).await;
    assert!(started.elapsed() < Duration::from_secs(3));
    let outcome = &report.provider("forgetful").unwrap().outcome;
    match outcome {
        ProviderOutcome::Failed { error } => {
            assert!(error.to_string().contains("H4"), "{error}");
            assert!(error.to_string().contains("forgetful"), "{error}");
        }
        other => panic!("expected an H4 failure, got {other:?}"),
    }
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h4_late_correlated_reply_after_a_timeout_is_dropped_not_misattributed() {
    // Answers "first" after 300 ms and everything else at once, out of order.
    let peer = script(ack("slow-correlated", true, false), |v| {
        let g = goal(v).unwrap_or_default();
        let delay = if g == "first" { 300 } else { 0 };
        vec![(Duration::from_millis(delay), frames(id(v).as_deref(), &g))]
    });
    let conn = connect(peer, ConnectionOptions::default())
        .await
        .expect("handshake");
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
        .await
        .expect("answer");
    match second {
        Answer::Frames(r) => assert_eq!(r.frames[0].title, "second"),
        other => panic!("{other:?}"),
    }
    assert_eq!(conn.diagnostics().late_replies, 1);
    assert!(
        conn.closed().is_none(),
        "a late reply with a known id is not an H4 violation"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_is_pipelined_with_queries_on_a_correlated_provider() {
    // The peer holds the verify's answer until the query after it arrived
    // and was answered: only a host that pipelines both gets both answers.
    let mut held: Option<String> = None;
    let peer = script(ack("pipelined", true, true), move |v| {
        if v["type"] == "verify" {
            let frame = v["request"]["frames"][0].clone();
            held = Some(
                json!({"type": "verified", "response": {"verdicts": [
                {"frame": frame, "status": "valid"}]}})
                .to_string(),
            );
            return vec![];
        }
        let mut out = vec![(
            Duration::ZERO,
            frames(id(v).as_deref(), &goal(v).unwrap_or_default()),
        )];
        if let Some(h) = held.take() {
            out.push((Duration::ZERO, h));
        }
        out
    });
    let conn = connect(peer, ConnectionOptions::default())
        .await
        .expect("handshake");
    let request = VerifyRequest {
        frames: vec![FrameId::new(
            "pipelined",
            "a",
            Some(format!("sha256:{}", "0".repeat(64))),
        )],
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    let query = ContextQuery::new("q", 1, 100);
    let (verified, answered) = tokio::join!(conn.verify(&request, deadline), async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        conn.query(&query, deadline).await
    });
    assert!(matches!(answered, Ok(Answer::Frames(_))), "{answered:?}");
    match verified {
        Ok(Answer::Verified(resp)) => assert!(resp.verdict_for(&request.frames[0]).allows_reuse()),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h4_correlated_queries_are_routed_by_id_when_answered_out_of_order() {
    // Replies to even-numbered goals are delayed, so replies come back shuffled.
    let peer = script(ack("shuffler", true, false), |v| {
        let g = goal(v).unwrap_or_default();
        let n: u64 = g.parse().unwrap_or(0);
        vec![(
            Duration::from_millis(if n & 1 == 0 { 5 } else { 0 }),
            frames(id(v).as_deref(), &g),
        )]
    });
    let conn = connect(peer, ConnectionOptions::default())
        .await
        .expect("handshake");
    let deadline = Instant::now() + Duration::from_secs(5);
    let queries: Vec<ContextQuery> = (0..16)
        .map(|n| ContextQuery::new(n.to_string(), 1, 100))
        .collect();
    let answers = futures_join(&conn, &queries, deadline).await;
    for (q, a) in queries.iter().zip(answers) {
        match a {
            Ok(Answer::Frames(r)) => assert_eq!(r.frames[0].title, q.goal),
            other => panic!("{other:?}"),
        }
    }
}

async fn futures_join(
    conn: &contextgraph_host::Connection,
    queries: &[ContextQuery],
    deadline: Instant,
) -> Vec<Result<Answer, ConnectionError>> {
    let mut set = Vec::new();
    for q in queries {
        set.push(conn.query(q, deadline));
    }
    let mut out = Vec::new();
    // Poll them all concurrently.
    let joined = join_all(set).await;
    out.extend(joined);
    out
}

async fn join_all<F: std::future::Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut pinned: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut results: Vec<Option<F::Output>> = pinned.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in pinned.iter_mut().enumerate() {
            if results[i].is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => results[i] = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    results.into_iter().map(|r| r.expect("completed")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_through_a_pipe_that_takes_a_few_bytes_at_a_time_arrive_whole_and_in_order() {
    // A 16-byte pipe: every request line is written in pieces, so a lone
    // request's immediate write is partial and the writer task finishes it,
    // and concurrent requests queue behind it. A line cut or interleaved
    // with another would not parse and its request would time out.
    let conn = connect_through(
        script(ack("tiny-pipe", true, false), |v| {
            let g = goal(v).unwrap_or_default();
            vec![(Duration::from_millis(1), frames(id(v).as_deref(), &g))]
        }),
        ConnectionOptions::default(),
        16,
    )
    .await
    .expect("handshake");
    let title = |answer: Result<Answer, ConnectionError>| match answer {
        Ok(Answer::Frames(r)) => r.frames[0].title.clone(),
        other => panic!("{other:?}"),
    };
    let deadline = Instant::now() + PATIENCE;
    let lone = ContextQuery::new("the lone request", 4, 1000);
    assert_eq!(title(conn.query(&lone, deadline).await), "the lone request");
    let queries: Vec<ContextQuery> = (0..8)
        .map(|i| ContextQuery::new(format!("concurrent request {i}"), 4, 1000))
        .collect();
    let answers = futures_all(queries.iter().map(|q| conn.query(q, deadline))).await;
    for (i, answer) in answers.into_iter().enumerate() {
        assert_eq!(title(answer), format!("concurrent request {i}"));
    }
    assert_eq!(conn.diagnostics().garbage_lines, 0);
}

/// Await every future concurrently, outputs in order.
async fn futures_all<F: std::future::Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
    let mut futures: Vec<_> = futures.map(|f| Some(Box::pin(f))).collect();
    let mut out: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (slot, o) in futures.iter_mut().zip(out.iter_mut()) {
            if let Some(f) = slot {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => {
                        *o = Some(v);
                        *slot = None;
                    }
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.into_iter().flatten().collect()
}
