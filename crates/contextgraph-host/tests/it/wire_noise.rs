//! Noise on the wire never kills the connection nor makes later requests
//! hang: garbage, blank, oversized (17 MiB) and unknown-type lines before
//! every reply; and an unknown frame kind (U2) is dropped with a report.

use std::time::Duration;

use crate::common::peer::{ack, connect, frames, goal, id, script};
use crate::common::{misbehaving, retry_query, stdio_options, PATIENCE};
use contextgraph_host::{
    Answer, ConnectionOptions, Host, HostOptions, ProviderClient, ProviderOutcome, StdioProvider,
};
use contextgraph_types::ContextQuery;
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn framing_garbage_blank_oversized_and_unknown_lines_are_survived() {
    // The mode acks cleanly, then writes its noise before every reply.
    let provider = StdioProvider::new(misbehaving("garbage-lines", "noisy"), stdio_options());
    provider
        .ready(Instant::now() + PATIENCE)
        .await
        .expect("handshake");
    for _ in 0..3 {
        let answer = provider
            .query(&retry_query(), Instant::now() + PATIENCE)
            .await
            .expect("answered despite the noise");
        assert!(
            matches!(answer, Answer::Frames(ref r) if !r.frames.is_empty()),
            "{answer:?}"
        );
    }
    let diag = provider.diagnostics().expect("connected");
    // Exactly one of each per reply: the noise is read, counted and skipped,
    // never taken for a reply.
    assert_eq!(
        (
            diag.garbage_lines,
            diag.oversized_lines,
            diag.unknown_envelopes
        ),
        (3, 3, 3),
        "{diag:?}"
    );
    provider.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn framing_noise_from_a_scripted_peer_is_counted_and_ignored() {
    let peer = script(ack("scripted-noise", true, false), |v| {
        let reply = frames(id(v).as_deref(), &goal(v).unwrap_or_default());
        vec![
            (Duration::ZERO, "this is not json".to_owned()),
            (Duration::ZERO, String::new()),
            (Duration::ZERO, "x".repeat(2048)),
            (Duration::ZERO, r#"{"type":"ping","id":"zzz"}"#.to_owned()),
            (Duration::ZERO, "[1,2,3]".to_owned()),
            (Duration::ZERO, reply),
        ]
    });
    let mut options = ConnectionOptions::default();
    options.max_line_bytes = 1024;
    let conn = connect(peer, options).await.expect("handshake");
    for g in ["one", "two"] {
        let answer = conn
            .query(
                &ContextQuery::new(g, 1, 100),
                Instant::now() + Duration::from_secs(5),
            )
            .await
            .expect("answer");
        assert!(matches!(answer, Answer::Frames(ref r) if r.frames[0].title == g));
    }
    let d = conn.diagnostics();
    assert_eq!(
        (d.garbage_lines, d.oversized_lines, d.unknown_envelopes),
        (4, 2, 2),
        "{d:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn u2_unknown_kind_is_dropped_with_a_report_and_the_rest_accepted() {
    let mut host = Host::new(HostOptions::default());
    host.add_stdio(misbehaving("unknown-kind", "futurist"), stdio_options())
        .await
        .expect("added");
    let report = host.query_all(&retry_query(), PATIENCE).await;
    match &report.provider("futurist").unwrap().outcome {
        ProviderOutcome::Accepted {
            frames, dropped, ..
        } => {
            assert!(!frames.is_empty());
            assert!(frames.iter().all(|f| f.kind.is_known()));
            assert_eq!(dropped.len(), 1);
            assert_eq!(dropped[0].kind, "hologram");
        }
        other => panic!("{other:?}"),
    }
    host.shutdown().await;
}
