//! §1 line cap: a provider that writes a line with no newline forever wedges
//! its session (nothing behind the line can be read). The host must declare
//! the session broken, fail every request on it with a typed error naming
//! the provider and the rule, and restart a stdio provider per its respawn
//! policy — never leave it looking alive.

use std::time::Duration;

use crate::common::peer::ack;
use crate::common::{misbehaving, retry_query, stdio_options, PATIENCE};
use contextgraph_host::connection::CloseReason;
use contextgraph_host::{
    Connection, ConnectionError, ConnectionOptions, ProviderClient, RequestError, StdioProvider,
    TransportKind,
};
use contextgraph_types::ContextQuery;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::time::Instant;

/// Whether `e` is the runaway-line failure of provider `name`, either as the
/// error the session was closed with or as the closed session's reason (a
/// request registered just after the close).
fn is_runaway(e: &RequestError, name: &str) -> bool {
    match e {
        RequestError::Connection(ConnectionError::RunawayLine { provider, .. }) => provider == name,
        RequestError::Connection(ConnectionError::Closed {
            provider,
            reason: CloseReason::RunawayLine,
        }) => provider == name,
        _ => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn line_cap_endless_line_fails_in_flight_requests_and_the_provider_is_respawned() {
    let mut options = stdio_options();
    options.connection.max_line_bytes = 1 << 20;
    options.connection.runaway_line_bytes = 1 << 20;
    options.respawn.initial_backoff = Duration::ZERO;
    options.respawn.max_backoff = Duration::ZERO;
    let provider = StdioProvider::new(misbehaving("endless-line", "endless"), options);
    provider
        .ready(Instant::now() + PATIENCE)
        .await
        .expect("handshake");
    let first_pid = provider.pid().expect("running");

    // Several requests in flight on the correlated session: the first one
    // starts the endless line, the others wait behind it. Every one of them
    // must end with the typed error, long before its deadline.
    let deadline = Instant::now() + PATIENCE * 3;
    let q = retry_query();
    let (a, b, c, d) = tokio::join!(
        provider.query(&q, deadline),
        provider.query(&q, deadline),
        provider.query(&q, deadline),
        provider.query(&q, deadline),
    );
    for outcome in [a, b, c, d] {
        let e = outcome.expect_err("an endless line answers nothing");
        assert!(is_runaway(&e, "endless"), "{e:?}");
        assert!(!e.is_timeout(), "{e:?}");
    }
    let e = provider
        .query(&q, deadline)
        .await
        .expect_err("the broken session is retired, not reused");
    assert!(
        matches!(e, RequestError::Down { .. }),
        "the session was retired after the failure: {e:?}"
    );

    // The next ready() restarts it: a new process, a fresh handshake.
    provider
        .ready(Instant::now() + PATIENCE)
        .await
        .expect("respawned");
    let second_pid = provider.pid().expect("running again");
    assert_ne!(first_pid, second_pid, "a new process was started");
    let e = provider
        .query(&q, Instant::now() + PATIENCE * 3)
        .await
        .expect_err("the respawned provider misbehaves the same way");
    assert!(is_runaway(&e, "endless"), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("endless") && text.contains("§1"),
        "the error names the provider and the rule: {text}"
    );
    provider.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn line_cap_endless_line_with_respawn_disabled_leaves_the_provider_down() {
    let mut options = stdio_options();
    options.connection.max_line_bytes = 1 << 20;
    options.connection.runaway_line_bytes = 1 << 20;
    options.respawn.enabled = false;
    let provider = StdioProvider::new(misbehaving("endless-line", "endless"), options);
    provider
        .ready(Instant::now() + PATIENCE)
        .await
        .expect("handshake");
    let e = provider
        .query(&retry_query(), Instant::now() + PATIENCE * 3)
        .await
        .expect_err("an endless line answers nothing");
    assert!(is_runaway(&e, "endless"), "{e:?}");
    let e = provider
        .ready(Instant::now() + PATIENCE)
        .await
        .expect_err("respawn is disabled");
    assert!(matches!(e, RequestError::Down { .. }), "{e:?}");
    assert!(
        e.to_string().contains("§1"),
        "the last failure is named: {e}"
    );
}

/// A peer that acks, then answers the first query with `prefix` and no
/// newline, and keeps the pipe open without writing more.
async fn stalled_peer(prefix_bytes: usize) -> Connection {
    let (host_side, peer_side) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let (read, mut write) = tokio::io::split(peer_side);
        let mut lines = BufReader::new(read).lines();
        let mut acked = false;
        while let Ok(Some(_)) = lines.next_line().await {
            if !acked {
                acked = true;
                let mut line = ack("stalled", true, false);
                line.push('\n');
                if write.write_all(line.as_bytes()).await.is_err() {
                    return;
                }
            } else {
                let filler = vec![b'x'; prefix_bytes];
                if write.write_all(&filler).await.is_err() {
                    return;
                }
            }
        }
    });
    let (read, write) = tokio::io::split(host_side);
    let mut options = ConnectionOptions::default();
    options.max_line_bytes = 1024;
    Connection::open(
        read,
        write,
        "stalled",
        TransportKind::Stdio {
            program: "stalled".into(),
        },
        options,
    )
    .await
    .expect("handshake")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn line_cap_a_line_still_open_past_the_cap_at_the_deadline_breaks_the_session() {
    // 4 KiB: past the 1 KiB cap, far below cap + allowance, and it never
    // ends. At the deadline the request is stuck behind it, not slow.
    let conn = stalled_peer(4096).await;
    let result = conn
        .query(
            &ContextQuery::new("anything", 1, 100),
            Instant::now() + Duration::from_secs(2),
        )
        .await;
    match result {
        Err(ConnectionError::RunawayLine {
            provider,
            line_bytes,
            max_line_bytes,
        }) => {
            assert_eq!(provider, "stalled");
            assert_eq!(max_line_bytes, 1024);
            assert!(line_bytes > 1024, "{line_bytes}");
        }
        other => panic!("expected a runaway-line error, got {other:?}"),
    }
    assert_eq!(conn.closed(), Some(CloseReason::RunawayLine));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadline_a_short_unfinished_line_is_a_plain_timeout_and_the_session_stays_open() {
    // Under the cap: a slow provider mid-reply, not a broken one.
    let conn = stalled_peer(100).await;
    let result = conn
        .query(
            &ContextQuery::new("anything", 1, 100),
            Instant::now() + Duration::from_millis(300),
        )
        .await;
    assert!(
        matches!(result, Err(ConnectionError::Timeout { .. })),
        "{result:?}"
    );
    assert_eq!(conn.closed(), None);
}
