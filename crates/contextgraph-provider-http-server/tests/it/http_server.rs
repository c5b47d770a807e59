//! The HTTP server end to end: our host's HTTP transport and the
//! conformance suite against it, and every HTTP-level rule (auth, size,
//! path, method, media type, host) over a raw socket.

use crate::common;

use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Duration;

use common::{handshake_body, post, raw, serve, PATIENCE};
use contextgraph_conformance::{run_suite, Status, SuiteOptions, Target};
use contextgraph_host::{Answer, BearerToken, HttpConfig, HttpProviderClient, ProviderClient};
use contextgraph_provider_http_server::{AuthToken, HttpServeOptions, HttpServer};
use contextgraph_provider_sdk::{Provider, ProviderError};
use contextgraph_types::{Capabilities, ContextQuery, ContextQueryResult, DataFlow, ProviderInfo};
use tokio::time::Instant;

const TOKEN: &str = "test-token-0123456789abcdef";

async fn handshake_and_query(config: HttpConfig) -> ContextQueryResult {
    let provider = HttpProviderClient::new(config).expect("a valid URL");
    let descriptor = provider
        .ready(Instant::now() + PATIENCE)
        .await
        .expect("H1: the handshake succeeds");
    assert!(!descriptor.id.is_empty());
    let query = ContextQuery::new("retry policy backoff", 3, 2000);
    match provider
        .query(&query, Instant::now() + PATIENCE)
        .await
        .expect("the query is answered")
    {
        Answer::Frames(result) => result,
        other => panic!("expected frames, got {other:?}"),
    }
}

#[test]
fn h1_our_host_handshakes_and_queries_over_plain_http() {
    let folder = common::markdown_folder();
    let running = serve(common::docs(&folder), HttpServeOptions::default());
    assert!(running.url.starts_with("http://127.0.0.1:") && running.url.ends_with("/cgp"));
    let result = running
        .rt
        .block_on(handshake_and_query(HttpConfig::new(running.url.clone())));
    assert!(!result.frames.is_empty());
    assert!(result.frames[0].title.contains("Retry") || result.frames[0].title.contains("Backoff"));
    running.stop();
}

#[test]
fn c7_our_host_handshakes_and_queries_over_tls_with_a_generated_certificate() {
    let folder = common::markdown_folder();
    let pem_dir = tempfile::tempdir().unwrap();
    let (files, ca_pem) = common::tls_files(&pem_dir);
    let running = serve(
        common::docs(&folder),
        HttpServeOptions::default()
            .with_tls(files)
            .with_token(AuthToken::new(TOKEN).unwrap()),
    );
    assert!(
        running.url.starts_with("https://127.0.0.1:"),
        "{}",
        running.url
    );
    let mut config = HttpConfig::new(running.url.clone());
    config.extra_roots_pem = vec![ca_pem.into_bytes()];
    config.only_extra_roots = true;
    config.bearer = Some(BearerToken::new(TOKEN).expect("a valid test token"));
    let result = running.rt.block_on(handshake_and_query(config));
    assert!(!result.frames.is_empty());

    // Plaintext to the TLS port is not an answer.
    let mut plain = HttpConfig::new(running.url.replace("https://", "http://"));
    plain.bearer = Some(BearerToken::new(TOKEN).expect("a valid test token"));
    let provider = HttpProviderClient::new(plain).unwrap();
    assert!(running
        .rt
        .block_on(provider.ready(Instant::now() + PATIENCE))
        .is_err());
    running.stop();
}

#[test]
fn conformance_strict_passes_against_the_docs_provider_served_over_http() {
    let folder = common::markdown_folder();
    let running = serve(common::docs(&folder), HttpServeOptions::default());
    let options = SuiteOptions::default()
        .strict(true)
        .with_request_timeout(Duration::from_secs(10));
    let report = run_suite(&Target::http(running.url.clone()), &options);
    assert!(report.passed(), "{}", report.render_text());
    assert_eq!(report.summary.skipped, 0, "{}", report.render_text());
    for name in [
        "handshake",
        "malformed-input",
        "correlation",
        "verify-honesty",
    ] {
        assert_eq!(
            report.check(name).map(|c| c.status),
            Some(Status::Pass),
            "{name}: {}",
            report.render_text()
        );
    }
    running.stop();
}

#[test]
fn c8_a_missing_or_wrong_token_gets_401_and_no_content() {
    let folder = common::markdown_folder();
    let running = serve(
        common::docs(&folder),
        HttpServeOptions::default().with_token(AuthToken::new(TOKEN).unwrap()),
    );
    let wrong = format!("Bearer {TOKEN}x");
    for extra in [
        vec![],
        vec![("Authorization", wrong.as_str())],
        vec![("Authorization", "Basic dXNlcjpwYXNz")],
    ] {
        let reply = post(running.addr, &handshake_body(), &extra);
        assert_eq!(reply.status, 401, "{extra:?}");
        assert!(
            reply.body.is_empty(),
            "no content with a 401: {:?}",
            reply.body
        );
        assert_eq!(reply.header("www-authenticate"), Some("Bearer"));
    }
    // The right token is served.
    let right = format!("Bearer {TOKEN}");
    let reply = post(
        running.addr,
        &handshake_body(),
        &[("Authorization", &right)],
    );
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["type"], "handshake_ack");

    // Our host's transport with a wrong token reports the status, no body.
    let mut config = HttpConfig::new(running.url.clone());
    config.bearer = Some(BearerToken::new("not-the-token").expect("a valid test token"));
    let provider = HttpProviderClient::new(config).unwrap();
    let e = running
        .rt
        .block_on(provider.ready(Instant::now() + PATIENCE))
        .unwrap_err();
    assert!(e.to_string().contains("401"), "{e}");
    running.stop();
}

#[test]
fn r1_an_oversized_body_gets_413_with_a_bad_request_envelope() {
    let folder = common::markdown_folder();
    let running = serve(
        common::docs(&folder),
        HttpServeOptions::default().with_max_body_bytes(1024),
    );
    let big = format!(
        r#"{{"type":"query","query":{{"goal":"{}","max_frames":1,"max_tokens":10}}}}"#,
        "x".repeat(4096)
    );
    // Declared length over the limit: refused before reading.
    let reply = post(running.addr, big.as_bytes(), &[]);
    assert_eq!(reply.status, 413);
    let env = reply.json();
    assert_eq!(env["type"], "error");
    assert_eq!(env["code"], "bad_request");
    assert!(env["message"].as_str().unwrap().contains("1024-byte limit"));

    // Chunked, no declared length: cut off while streaming.
    let mut chunked = format!("{:x}\r\n", big.len()).into_bytes();
    chunked.extend_from_slice(big.as_bytes());
    chunked.extend_from_slice(b"\r\n0\r\n\r\n");
    let reply = post(running.addr, &chunked, &[("Transfer-Encoding", "chunked")]);
    assert_eq!(reply.status, 413);
    assert_eq!(reply.json()["code"], "bad_request");

    // A body within the limit is still served afterwards.
    let reply = post(running.addr, &handshake_body(), &[]);
    assert_eq!(reply.json()["type"], "handshake_ack");
    running.stop();
}

#[test]
fn r1_invalid_json_gets_a_bad_request_envelope_and_the_server_stays_up() {
    let folder = common::markdown_folder();
    let running = serve(common::docs(&folder), HttpServeOptions::default());
    for body in [
        &b"this is not json"[..],
        b"{\"type\":\"query\",",
        b"[1,2]",
        b"\xff\xfe",
    ] {
        let reply = post(running.addr, body, &[]);
        assert_eq!(
            reply.status, 200,
            "protocol errors are envelopes, not statuses"
        );
        assert_eq!(reply.header("content-type"), Some("application/json"));
        let env = reply.json();
        assert_eq!(env["type"], "error");
        assert_eq!(env["code"], "bad_request", "{env}");
    }
    assert_eq!(
        post(running.addr, &handshake_body(), &[]).json()["type"],
        "handshake_ack"
    );
    running.stop();
}

#[test]
fn h1_a_query_before_any_handshake_is_refused_and_served_after_one() {
    let folder = common::markdown_folder();
    let running = serve(common::docs(&folder), HttpServeOptions::default());
    let query =
        br#"{"type":"query","id":"q1","query":{"goal":"retry","max_frames":2,"max_tokens":500}}"#;
    let env = post(running.addr, query, &[]).json();
    assert_eq!(env["code"], "bad_request");
    assert!(
        env["message"].as_str().unwrap().contains("handshake first"),
        "{env}"
    );
    assert_eq!(
        post(running.addr, &handshake_body(), &[]).json()["type"],
        "handshake_ack"
    );
    // Another connection: HTTP handshake state is the server's, not the socket's.
    let env = post(running.addr, query, &[]).json();
    assert_eq!(env["type"], "frames", "{env}");
    assert_eq!(env["id"], "q1", "H4: the docs provider correlates");
    running.stop();
}

#[test]
fn r2_a_shutdown_envelope_gets_204_and_the_server_keeps_serving_other_hosts() {
    let folder = common::markdown_folder();
    let running = serve(common::docs(&folder), HttpServeOptions::default());
    let reply = post(running.addr, br#"{"type":"shutdown"}"#, &[]);
    assert_eq!(reply.status, 204);
    assert!(reply.body.is_empty());
    assert_eq!(
        post(running.addr, &handshake_body(), &[]).json()["type"],
        "handshake_ack"
    );
    running.stop();
}

#[test]
fn wrong_path_method_media_type_and_host_are_refused_without_content() {
    let folder = common::markdown_folder();
    let running = serve(common::docs(&folder), HttpServeOptions::default());
    let json = [("Content-Type", "application/json")];
    let body = handshake_body();
    type Case<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>, u16);
    let cases: [Case; 5] = [
        ("POST", "/other", json.to_vec(), 404),
        ("GET", "/cgp", vec![], 405),
        ("POST", "/cgp", vec![("Content-Type", "text/plain")], 415),
        ("POST", "/cgp", vec![], 415),
        (
            "POST",
            "/cgp",
            vec![
                ("Content-Type", "application/json"),
                ("Host", "rebound.example:80"),
            ],
            421,
        ),
    ];
    for (method, path, headers, status) in cases {
        let reply = raw(running.addr, method, path, &headers, &body);
        assert_eq!(reply.status, status, "{method} {path} {headers:?}");
        assert!(reply.body.is_empty(), "{method} {path}: no content");
    }
    let reply = raw(running.addr, "GET", "/cgp", &[], b"");
    assert_eq!(reply.header("allow"), Some("POST"));
    // Parameters on the media type are fine.
    let reply = raw(
        running.addr,
        "POST",
        "/cgp",
        &[("Content-Type", "Application/JSON; charset=utf-8")],
        &body,
    );
    assert_eq!(reply.status, 200);
    running.stop();
}

#[test]
fn c7_a_public_address_without_tls_and_token_is_refused_at_bind() {
    let folder = common::markdown_folder();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let server = HttpServer::new(common::docs(&folder), HttpServeOptions::default()).unwrap();
    let e = rt
        .block_on(server.bind("0.0.0.0:0".parse().unwrap()))
        .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("C7") && text.contains("TLS and a bearer token"),
        "{text}"
    );
    // With the explicit flag it binds.
    let server = HttpServer::new(
        common::docs(&folder),
        HttpServeOptions::default().with_insecure_public(true),
    )
    .unwrap();
    assert!(rt
        .block_on(server.bind("0.0.0.0:0".parse().unwrap()))
        .is_ok());
}

#[test]
fn tls_files_that_are_not_pem_are_named_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let (mut files, _) = common::tls_files(&dir);
    std::fs::write(&files.private_key, "not a key").unwrap();
    let e = HttpServer::new(
        common::docs(&common::markdown_folder()),
        HttpServeOptions::default().with_tls(files.clone()),
    )
    .unwrap_err();
    assert!(e.to_string().contains("key.pem"), "{e}");
    files.cert_chain = dir.path().join("missing.pem");
    let e = HttpServer::new(
        common::docs(&common::markdown_folder()),
        HttpServeOptions::default().with_tls(files),
    )
    .unwrap_err();
    assert!(e.to_string().contains("missing.pem"), "{e}");
}

/// A provider whose `query` tells the test it started, then waits until
/// the test lets it finish: an in-flight request the test controls.
struct Gated {
    started: Mutex<mpsc::Sender<()>>,
    release: Mutex<mpsc::Receiver<()>>,
}

impl Provider for Gated {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: "gated-test-provider".into(),
            version: "1.0.0".into(),
            data_flow: DataFlow::default(),
        }
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }
    fn query(&self, _query: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        let _ = self.started.lock().unwrap().send(());
        let _ = self.release.lock().unwrap().recv_timeout(PATIENCE);
        Ok(ContextQueryResult::default())
    }
}

#[test]
fn shutdown_signal_lets_an_in_flight_request_finish() {
    let (started_tx, started_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel();
    let provider = Gated {
        started: Mutex::new(started_tx),
        release: Mutex::new(release_rx),
    };
    let mut running = serve(
        provider,
        HttpServeOptions::default().with_shutdown_grace(PATIENCE),
    );
    let addr = running.addr;
    assert_eq!(
        post(addr, &handshake_body(), &[]).json()["type"],
        "handshake_ack"
    );
    let in_flight = std::thread::spawn(move || {
        post(
            addr,
            br#"{"type":"query","query":{"goal":"slow","max_frames":1,"max_tokens":10}}"#,
            &[],
        )
    });
    started_rx
        .recv_timeout(PATIENCE)
        .expect("the query reached the provider");
    running.signal_shutdown();
    // New connections are refused once the listener closed; poll until then
    // (bounded), proving the shutdown took effect while the query is held.
    let deadline = std::time::Instant::now() + PATIENCE;
    while std::net::TcpStream::connect(addr).is_ok() {
        assert!(std::time::Instant::now() < deadline, "the listener closed");
        std::thread::yield_now();
    }
    release_tx.send(()).unwrap();
    let reply = in_flight.join().unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.json()["type"],
        "frames",
        "the in-flight query was answered"
    );
    let summary = running.stop();
    assert_eq!(summary.abandoned, 0);
}
