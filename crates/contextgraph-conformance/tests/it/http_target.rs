//! The HTTP target: one envelope per POST body, one per response. The test
//! serves the docs provider through the SDK's transport-free `Session`
//! behind the testkit's HTTP test server (so a provider can lie on purpose,
//! which `contextgraph-provider-http-server` would not let it): green under `--strict` (shutdown does not apply to a URL), and a
//! provider lying about costs over the same server is caught.

use crate::common;

use std::net::SocketAddr;
use std::sync::Arc;

use contextgraph_conformance::{run_suite, Status, Target};
use contextgraph_provider_docs::{DocsConfig, DocsProvider};
use contextgraph_provider_sdk::{Provider, ProviderError, Session};
use contextgraph_testkit::http_server::{self, Handler};
use contextgraph_types::{
    Capabilities, ContextQuery, ContextQueryResult, ProviderInfo, VerifyRequest, VerifyResponse,
};

/// Serve `session` on a loopback port (the testkit's HTTP test server, one
/// envelope per POST body and per response, `204` when the provider has
/// nothing to say); the runtime lives as long as the returned value.
fn serve<P: Provider + Send + Sync + 'static>(
    session: Session<P>,
) -> (tokio::runtime::Runtime, SocketAddr) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let session = Arc::new(session);
    let handler: Handler =
        Arc::new(
            move |body: &[u8], _auth: Option<&str>| match session.handle_line(body) {
                Some(reply) => {
                    let mut line = contextgraph_codec::encode_line(&reply).unwrap_or_default();
                    line.pop();
                    (200, Vec::new(), line)
                }
                None => (204, Vec::new(), Vec::new()),
            },
        );
    let server = rt.block_on(http_server::start(handler, false));
    (rt, server.addr)
}

/// The docs provider, overstating every frame's cost by 3 tokens (B3).
struct LyingCosts(DocsProvider);

impl Provider for LyingCosts {
    fn info(&self) -> ProviderInfo {
        self.0.info()
    }
    fn capabilities(&self) -> Capabilities {
        self.0.capabilities()
    }
    fn query(&self, query: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        let mut result = self.0.query(query)?;
        for f in &mut result.frames {
            f.token_cost += 3;
        }
        Ok(result)
    }
    fn verify(&self, request: &VerifyRequest) -> VerifyResponse {
        self.0.verify(request)
    }
}

fn docs(folder: &tempfile::TempDir) -> DocsProvider {
    DocsProvider::open(DocsConfig::new(folder.path())).expect("the docs provider opens the folder")
}

#[test]
fn the_docs_provider_over_http_is_green_under_strict() {
    let folder = common::markdown_folder();
    let (_rt, addr) = serve(Session::new(docs(&folder)));
    let report = run_suite(
        &Target::http(format!("http://{addr}/cgp")),
        &common::options(),
    );
    assert!(report.passed(), "{}", report.render_text());
    assert_eq!(report.summary.skipped, 0);
    assert!(report.check("shutdown").is_none());
    assert!(report.not_applicable.iter().any(|n| n.name == "shutdown"));
    for name in [
        "correlation",
        "malformed-input",
        "verify-honesty",
        "file-provenance",
    ] {
        assert_eq!(
            report.check(name).map(|c| c.status),
            Some(Status::Pass),
            "{name}"
        );
    }
}

#[test]
fn a_lying_provider_over_http_is_caught() {
    let folder = common::markdown_folder();
    let (_rt, addr) = serve(Session::new(LyingCosts(docs(&folder))).enforce_honesty(false));
    let report = run_suite(
        &Target::http(format!("http://{addr}/cgp")),
        &common::options(),
    );
    let budget = report
        .check("budget-honesty")
        .expect("budget honesty applies");
    assert_eq!(budget.status, Status::Fail, "{}", report.render_text());
    assert!(
        budget.evidence.iter().any(|e| e.contains("B3")),
        "{:?}",
        budget.evidence
    );
    assert!(!report.passed());
}

#[test]
fn a_refused_connection_fails_the_handshake_within_the_timeout() {
    // A port bound but never listened on: connections to it are refused,
    // and no other test (here or in another process) can be given it while
    // the suite runs, as it could be a port bound and dropped.
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket
        .bind("127.0.0.1:0".parse().expect("an address"))
        .expect("a free port");
    let addr = socket.local_addr().expect("its address");
    let report = run_suite(
        &Target::http(format!("http://{addr}/cgp")),
        &common::options(),
    );
    drop(socket);
    let handshake = report.check("handshake").expect("handshake always applies");
    assert_eq!(handshake.status, Status::Fail, "{}", report.render_text());
    assert!(!report.passed());
}
