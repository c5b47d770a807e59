//! HTTP transport: TLS for real with a custom root (C7), plaintext to a
//! remote host refused before any byte (C7), remote means egress (C4),
//! credentials never in errors or Debug (C8), redirects not followed, body cap.

use std::sync::Arc;
use std::time::Duration;

use crate::common::http_server::{start, Handler, TestServer};
use crate::common::PATIENCE;
use contextgraph_host::transport::http::is_loopback_host;
use contextgraph_host::{
    consent, BearerToken, Host, HostError, HostOptions, HttpConfig, HttpError, HttpProviderClient,
    ProviderClient, ProviderDescriptor, ProviderOutcome, RequestError, TransportKind,
};
use contextgraph_provider_sdk::{FrameBuilder, Provider, ProviderError, Session};
use contextgraph_types::{
    Capabilities, ContextQuery, ContextQueryResult, DataFlow, FrameKind, ProviderInfo,
    QueryCapability, Timestamp,
};
use tokio::time::Instant;

const TOKEN: &str = "s3cr3t-bearer-token-value";

struct Docs;

impl Provider for Docs {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: "http-docs".into(),
            version: "1.0.0".into(),
            data_flow: DataFlow {
                reads: true,
                ..DataFlow::default()
            },
        }
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            query: QueryCapability {
                kinds: vec![FrameKind::Doc],
            },
            correlation: true,
            ..Capabilities::default()
        }
    }
    fn query(&self, q: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        let frame = FrameBuilder::new("d1", FrameKind::Doc, "Retry", format!("about {}", q.goal))
            .citation_label("retry.md")
            .score(0.7)
            .build();
        Ok(ContextQueryResult {
            frames: vec![frame],
            truncated: false,
            dropped_estimate: None,
        })
    }
}

fn serving() -> Handler {
    let session = Arc::new(Session::new(Docs));
    Arc::new(
        move |body: &[u8], _auth: Option<&str>| match session.handle_line(body) {
            Some(env) => (200, vec![], serde_json::to_vec(&env).unwrap()),
            None => (204, vec![], vec![]),
        },
    )
}

fn trusting(server: &TestServer) -> HttpConfig {
    let mut config = HttpConfig::new(server.url());
    config.extra_roots_pem = server
        .ca_pem
        .iter()
        .map(|p| p.as_bytes().to_vec())
        .collect();
    config.only_extra_roots = true;
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c7_tls_round_trip_with_a_custom_root() {
    let server = start(serving(), true).await;
    let mut host = Host::new(HostOptions::default());
    let d = host
        .add_http(trusting(&server), PATIENCE)
        .await
        .expect("handshake over TLS");
    assert!(matches!(
        d.transport,
        TransportKind::Http { loopback: true, .. }
    ));
    assert!(
        !d.is_egress(),
        "a loopback provider that declares no egress is local"
    );
    let report = host
        .query_all(&ContextQuery::new("retries", 3, 500), PATIENCE)
        .await;
    match &report.provider("http-docs").unwrap().outcome {
        ProviderOutcome::Accepted { frames, .. } => {
            assert_eq!(frames[0].content.as_deref(), Some("about retries"))
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c7_tls_with_an_untrusted_certificate_is_refused() {
    let server = start(serving(), true).await;
    let mut config = HttpConfig::new(server.url());
    config.only_extra_roots = true;
    let provider = HttpProviderClient::new(config).unwrap();
    let result = provider.ready(Instant::now() + PATIENCE).await;
    assert!(
        matches!(result, Err(RequestError::Http(HttpError::Transport { .. }))),
        "{result:?}"
    );
}

#[test]
fn c7_plaintext_to_a_remote_host_is_refused_before_any_byte() {
    // No server exists at these addresses: the refusal needs no network.
    for url in [
        "http://192.0.2.10/cgp",
        "http://example.invalid/cgp",
        "http://127.0.0.1.example.invalid/",
    ] {
        match HttpProviderClient::new(HttpConfig::new(url)) {
            Err(HttpError::PlaintextToRemote { .. }) => {}
            other => panic!("{url}: {other:?}"),
        }
    }
    assert!(HttpProviderClient::new(HttpConfig::new("https://192.0.2.10/cgp")).is_ok());
    assert!(HttpProviderClient::new(HttpConfig::new("http://127.0.0.1:9/cgp")).is_ok());
}

#[test]
fn c4_loopback_is_decided_on_the_address_not_a_claim() {
    for (host, loopback) in [
        ("127.0.0.1", true),
        ("127.8.9.10", true),
        ("[::1]", true),
        ("localhost", true),
        ("LOCALHOST", true),
        ("10.0.0.1", false),
        ("192.168.1.1", false),
        ("localhost.example.invalid", false),
        ("example.invalid", false),
    ] {
        assert_eq!(is_loopback_host(host), loopback, "{host}");
    }
    assert!(
        HttpProviderClient::new(HttpConfig::new("https://192.0.2.10/"))
            .is_ok_and(|p| !p.is_loopback())
    );
}

#[test]
fn c4_a_remote_provider_is_egress_whatever_it_claims() {
    let descriptor = ProviderDescriptor {
        id: "remote".into(),
        protocol_version: "contextgraph/1.0-draft".into(),
        info: ProviderInfo {
            name: "remote".into(),
            version: "1".into(),
            data_flow: DataFlow {
                reads: true,
                ..DataFlow::default()
            },
        },
        capabilities: Capabilities::default(),
        transport: TransportKind::Http {
            url: "https://192.0.2.10/".into(),
            loopback: false,
        },
    };
    assert!(descriptor.is_egress());
    let decision = consent::check(&descriptor, &Default::default(), Timestamp::now());
    assert!(matches!(
        decision,
        contextgraph_host::ConsentDecision::ConsentRequired { .. }
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_redirect_is_an_error_naming_the_status_and_is_not_followed() {
    let target = start(serving(), false).await;
    let location = target.url();
    let redirecting = start(
        Arc::new(move |_: &[u8], _: Option<&str>| {
            (302, vec![("location".into(), location.clone())], vec![])
        }),
        false,
    )
    .await;
    let mut config = HttpConfig::new(redirecting.url());
    config.bearer = Some(BearerToken::new(TOKEN).expect("a valid test token"));
    let provider = HttpProviderClient::new(config).unwrap();
    let result = provider.ready(Instant::now() + PATIENCE).await;
    match result {
        Err(RequestError::Http(HttpError::Redirect { status, .. })) => assert_eq!(status, 302),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        target.hits.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the redirect was followed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c8_error_body_echoing_the_bearer_token_never_reaches_an_error_or_log() {
    let server = start(
        Arc::new(|_: &[u8], auth: Option<&str>| {
            (
                500,
                vec![],
                format!("internal error; you sent {}", auth.unwrap_or_default()).into_bytes(),
            )
        }),
        false,
    )
    .await;
    let mut config = HttpConfig::new(server.url());
    config.bearer = Some(BearerToken::new(TOKEN).expect("a valid test token"));
    let provider = Arc::new(HttpProviderClient::new(config.clone()).unwrap());
    assert!(!format!("{config:?} {provider:?}").contains(TOKEN));
    let mut host = Host::new(HostOptions::default());
    let error = host
        .add(provider, PATIENCE)
        .await
        .expect_err("500 is an error");
    assert_eq!(
        server.last_auth.lock().unwrap().as_deref(),
        Some(format!("Bearer {TOKEN}").as_str()),
        "the token was sent as the Authorization header"
    );
    let shown = format!("{error} {error:?}");
    assert!(!shown.contains(TOKEN), "token leaked: {shown}");
    assert!(
        !shown.contains("internal error; you sent"),
        "the response body was copied: {shown}"
    );
    assert!(matches!(
        error,
        HostError::Request(RequestError::Http(HttpError::Status { status: 500, .. }))
    ));
}

#[test]
fn c8_credentials_in_the_url_are_refused_without_echoing_them() {
    let e = HttpProviderClient::new(HttpConfig::new("https://user:pa55word@127.0.0.1/"))
        .expect_err("refused");
    assert!(!format!("{e} {e:?}").contains("pa55word"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_response_body_is_capped() {
    let server = start(
        Arc::new(|_: &[u8], _: Option<&str>| (200, vec![], vec![b' '; 2 << 20])),
        false,
    )
    .await;
    let mut config = HttpConfig::new(server.url());
    config.max_body_bytes = 1 << 20;
    let provider = HttpProviderClient::new(config).unwrap();
    let result = provider.ready(Instant::now() + PATIENCE).await;
    assert!(
        matches!(
            result,
            Err(RequestError::Http(HttpError::BodyTooLarge { .. }))
        ),
        "{result:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_request_has_a_deadline() {
    let server = start(
        Arc::new(|_: &[u8], _: Option<&str>| {
            // Far longer than the deadline, so that a loaded machine (the
            // other tests of this binary build TLS keys in parallel) cannot
            // blur "the deadline fired" into "the server answered".
            std::thread::sleep(Duration::from_millis(2_000));
            (200, vec![], vec![])
        }),
        false,
    )
    .await;
    let provider = HttpProviderClient::new(HttpConfig::new(server.url())).unwrap();
    let started = std::time::Instant::now();
    let result = provider
        .ready(Instant::now() + Duration::from_millis(100))
        .await;
    assert!(result.as_ref().is_err_and(|e| e.is_timeout()), "{result:?}");
    let elapsed = started.elapsed();
    assert!(
        elapsed < Duration::from_millis(1_500),
        "a 100 ms deadline took {elapsed:?} against a server that answers after 2 s"
    );
}
