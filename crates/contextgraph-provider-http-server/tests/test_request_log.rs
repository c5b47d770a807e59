//! C8: the server's request log, in a test binary of its own.
//!
//! `tracing` caches, per call site and process wide, whether any subscriber
//! wants an event. This test installs its subscriber only on its own thread
//! (`with_default`); in a binary shared with other server tests, a call site
//! first reached on another thread with no subscriber could be cached as
//! "never" and the request lines silently dropped (CI saw exactly that).
//! Alone in its process, every call site is first reached under this
//! test's subscriber.

mod common;

use std::sync::{Arc, Mutex};

use common::{handshake_body, post};
use contextgraph_provider_http_server::{AuthToken, HttpServeOptions, HttpServer};

const TOKEN: &str = "test-token-0123456789abcdef";

#[test]
fn c8_request_logs_carry_status_and_provider_but_no_content_or_token() {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let log = contextgraph_provider_http_server::StderrLog::capturing(
        tracing::Level::INFO,
        Arc::clone(&buffer),
    );
    let folder = common::markdown_folder();
    tracing::subscriber::with_default(log, || {
        // current-thread runtime: every event is emitted on this thread.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let bound = HttpServer::new(
                common::docs(&folder),
                HttpServeOptions::default().with_token(AuthToken::new(TOKEN).unwrap()),
            )
            .unwrap()
            .bind("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
            let addr = bound.local_addr();
            let (tx, rx) = tokio::sync::oneshot::channel::<()>();
            let client = tokio::task::spawn_blocking(move || {
                let auth = format!("Bearer {TOKEN}");
                post(addr, &handshake_body(), &[("Authorization", &auth)]);
                post(
                    addr,
                    br#"{"type":"query","id":"q","query":{"goal":"secret-goal-words","max_frames":2,"max_tokens":900}}"#,
                    &[("Authorization", &auth)],
                );
                post(addr, &handshake_body(), &[("Authorization", "Bearer guessed-token")]);
                let _ = tx.send(());
            });
            bound.serve(async { let _ = rx.await; }).await;
            client.await.unwrap();
        });
    });
    let text = String::from_utf8(buffer.lock().unwrap().clone()).unwrap();
    for needle in [
        "status=200",
        "status=401",
        "reply=\"frames\"",
        "reply=\"handshake_ack\"",
        "provider=contextgraph-provider-docs",
        "latency_us=",
        "method=POST",
    ] {
        assert!(text.contains(needle), "{needle} missing from:\n{text}");
    }
    for secret in [
        TOKEN,
        "guessed-token",
        "secret-goal-words",
        "Retry policy",
        "exponential backoff",
    ] {
        assert!(!text.contains(secret), "{secret} leaked into:\n{text}");
    }
}
