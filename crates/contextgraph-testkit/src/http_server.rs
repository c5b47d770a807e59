//! A small HTTP(S) server on 127.0.0.1 for tests of HTTP clients (the host's
//! HTTP transport, the conformance suite's HTTP target): every POST goes to
//! a synchronous handler, run off the runtime's workers. TLS uses a CA and a
//! leaf certificate generated in the test (rcgen).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio_rustls::rustls;

/// What the handler returns: status, extra headers, body.
pub type Reply = (u16, Vec<(String, String)>, Vec<u8>);

/// The handler: request body and `Authorization` header in, reply out.
pub type Handler = Arc<dyn Fn(&[u8], Option<&str>) -> Reply + Send + Sync>;

/// A running server.
pub struct TestServer {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its CA certificate (PEM) when serving TLS.
    pub ca_pem: Option<String>,
    /// Requests handled.
    pub hits: Arc<AtomicUsize>,
    /// The last `Authorization` header seen.
    pub last_auth: Arc<Mutex<Option<String>>>,
}

impl TestServer {
    /// `scheme://127.0.0.1:port/cgp`.
    pub fn url(&self) -> String {
        let scheme = if self.ca_pem.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://127.0.0.1:{}/cgp", self.addr.port())
    }
}

fn tls_config() -> (Arc<rustls::ServerConfig>, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &ca, &ca_key)
        .unwrap();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(rustls::pki_types::PrivatePkcs8KeyDer::from(
        leaf_key.serialize_der(),
    ));
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![leaf.der().clone()], key)
    .unwrap();
    (Arc::new(config), ca.pem())
}

/// Start a server answering every POST with `handler`, on the current tokio
/// runtime (it serves as long as that runtime lives).
pub async fn start(handler: Handler, tls: bool) -> TestServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (acceptor, ca_pem) = if tls {
        let (config, pem) = tls_config();
        (Some(tokio_rustls::TlsAcceptor::from(config)), Some(pem))
    } else {
        (None, None)
    };
    let hits = Arc::new(AtomicUsize::new(0));
    let last_auth = Arc::new(Mutex::new(None));
    let (h, a) = (Arc::clone(&hits), Arc::clone(&last_auth));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (handler, hits, last_auth, acceptor) = (
                Arc::clone(&handler),
                Arc::clone(&h),
                Arc::clone(&a),
                acceptor.clone(),
            );
            tokio::spawn(async move {
                let service = service_fn(move |req: Request<hyper::body::Incoming>| {
                    let (handler, hits, last_auth) = (
                        Arc::clone(&handler),
                        Arc::clone(&hits),
                        Arc::clone(&last_auth),
                    );
                    async move {
                        hits.fetch_add(1, Ordering::SeqCst);
                        let auth = req
                            .headers()
                            .get("authorization")
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_owned);
                        *last_auth.lock().unwrap() = auth.clone();
                        let body = req.into_body().collect().await?.to_bytes();
                        // Handlers are synchronous and may sleep to play a
                        // slow server: run them off the runtime's workers, so
                        // a sleeping handler never stalls the client's
                        // timers and sockets on the same runtime.
                        let (status, headers, out) =
                            tokio::task::spawn_blocking(move || handler(&body, auth.as_deref()))
                                .await
                                .expect("the test handler does not panic");
                        let mut resp = Response::builder().status(status);
                        for (k, v) in headers {
                            resp = resp.header(k, v);
                        }
                        Ok::<_, hyper::Error>(resp.body(Full::new(Bytes::from(out))).unwrap())
                    }
                });
                match acceptor {
                    Some(acceptor) => {
                        if let Ok(tls) = acceptor.accept(stream).await {
                            let _ = http1::Builder::new()
                                .serve_connection(TokioIo::new(tls), service)
                                .await;
                        }
                    }
                    None => {
                        let _ = http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    }
                }
            });
        }
    });
    TestServer {
        addr,
        ca_pem,
        hits,
        last_auth,
    }
}
