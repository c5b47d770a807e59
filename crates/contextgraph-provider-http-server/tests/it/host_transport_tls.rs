//! Our host's HTTP transport against an `HttpServer` over TLS with a bearer
//! token: a small SDK provider is handshaken and queried through a CA
//! generated here (C7), and a wrong token, a missing one, or a missing CA
//! each end in a typed error that never carries the token (C8), with
//! nothing reaching the provider.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{serve, tls_files, PATIENCE};
use contextgraph_host::{
    Answer, BearerToken, HttpConfig, HttpError, HttpProviderClient, ProviderClient, RequestError,
};
use contextgraph_provider_http_server::{AuthToken, HttpServeOptions};
use contextgraph_provider_sdk::{Provider, ProviderError};
use contextgraph_types::{Capabilities, ContextQuery, ContextQueryResult, DataFlow, ProviderInfo};
use tokio::time::Instant;

const TOKEN: &str = "tls-transport-token-4b8e2f19c7";
const WRONG: &str = "tls-transport-wrong-0d3a6e";

/// An SDK provider that records every goal it is asked about.
struct Recording {
    goals: Arc<Mutex<Vec<String>>>,
}

impl Provider for Recording {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: "recording-test-provider".into(),
            version: "1.0.0".into(),
            data_flow: DataFlow::default(),
        }
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }
    fn query(&self, query: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        self.goals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(query.goal.clone());
        Ok(ContextQueryResult::default())
    }
}

/// A TLS server requiring `TOKEN`, the CA that issued its certificate, and
/// the goals its provider saw.
fn tls_server() -> (
    common::Running,
    String,
    Arc<Mutex<Vec<String>>>,
    tempfile::TempDir,
) {
    let pem_dir = tempfile::tempdir().unwrap();
    let (files, ca_pem) = tls_files(&pem_dir);
    let goals = Arc::new(Mutex::new(Vec::new()));
    let running = serve(
        Recording {
            goals: Arc::clone(&goals),
        },
        HttpServeOptions::default()
            .with_tls(files)
            .with_token(AuthToken::new(TOKEN).unwrap()),
    );
    assert!(
        running.url.starts_with("https://127.0.0.1:"),
        "{}",
        running.url
    );
    (running, ca_pem, goals, pem_dir)
}

fn config(url: &str, ca_pem: Option<&str>, token: Option<&str>) -> HttpConfig {
    let mut config = HttpConfig::new(url);
    if let Some(pem) = ca_pem {
        config.extra_roots_pem = vec![pem.as_bytes().to_vec()];
        config.only_extra_roots = true;
    }
    config.bearer = token.map(|t| BearerToken::new(t).expect("a valid test token"));
    config
}

/// The error's `Display` and `Debug`, checked to carry neither token (C8).
fn shown_without_tokens(e: &RequestError) -> String {
    let text = format!("{e} / {e:?}");
    for secret in [TOKEN, WRONG] {
        assert!(!text.contains(secret), "C8: the token leaked: {text}");
    }
    text
}

#[test]
fn c7_our_host_transport_handshakes_and_queries_an_sdk_provider_over_tls_with_a_token() {
    let (running, ca_pem, goals, _pems) = tls_server();
    let provider = HttpProviderClient::new(config(&running.url, Some(&ca_pem), Some(TOKEN)))
        .expect("a valid https URL");
    assert!(!format!("{provider:?}").contains(TOKEN), "C8: {provider:?}");
    let answer = running.rt.block_on(async {
        let descriptor = provider
            .ready(Instant::now() + PATIENCE)
            .await
            .expect("H1: the handshake succeeds over TLS");
        assert_eq!(descriptor.id, "recording-test-provider");
        let query = ContextQuery::new("tls transport goal", 3, 2000);
        provider
            .query(&query, Instant::now() + PATIENCE)
            .await
            .expect("the query is answered")
    });
    assert!(matches!(answer, Answer::Frames(_)), "{answer:?}");
    assert_eq!(
        *goals.lock().unwrap(),
        vec!["tls transport goal".to_owned()],
        "the query reached the provider through TLS and the token check"
    );
    running.stop();
}

#[test]
fn c8_a_wrong_or_missing_token_over_tls_is_a_typed_401_without_the_token() {
    let (running, ca_pem, goals, _pems) = tls_server();
    for token in [Some(WRONG), None] {
        let provider = HttpProviderClient::new(config(&running.url, Some(&ca_pem), token)).unwrap();
        let e = running
            .rt
            .block_on(provider.ready(Instant::now() + PATIENCE))
            .expect_err("the server refuses the handshake");
        let text = shown_without_tokens(&e);
        assert!(
            matches!(e, RequestError::Http(HttpError::Status { status: 401, .. })),
            "{token:?}: a typed 401, got {text}"
        );
    }
    assert!(
        goals.lock().unwrap().is_empty(),
        "nothing reached the provider"
    );
    running.stop();
}

#[test]
fn c7_without_the_ca_the_certificate_is_refused_before_the_token_is_sent() {
    let (running, _ca_pem, goals, _pems) = tls_server();
    let provider = HttpProviderClient::new(config(&running.url, None, Some(TOKEN))).unwrap();
    let e = running
        .rt
        .block_on(provider.ready(Instant::now() + PATIENCE))
        .expect_err("an unknown issuer is not trusted");
    let text = shown_without_tokens(&e);
    match &e {
        RequestError::Http(HttpError::Transport { detail, .. }) => {
            assert!(detail.contains("certificate"), "a TLS reason: {text}");
        }
        _ => panic!("a typed transport error, got {text}"),
    }
    assert!(
        goals.lock().unwrap().is_empty(),
        "nothing reached the provider"
    );
    running.stop();
}
