//! HTTP server benchmarks on loopback, each with its baseline in the same run.
//!
//! The provider is an in-memory SDK provider (correlation declared, honesty
//! guard on, as a real one runs): it answers every query with precomputed
//! frames. The client is `reqwest`, the library our host's HTTP transport
//! uses, with one keep-alive HTTP/1.1 connection per client. The baseline is
//! a bare hyper server on loopback that reads the request body and answers
//! with a fixed body of exactly the bytes the real server sends for the same
//! query (same client, same connection reuse): what is left of a
//! measurement is the server's cost (HTTP checks, the blocking-pool hop,
//! envelope decode, the honesty audit, serialization).
//!
//! - `rtt/baseline_http`, `rtt/http`, `rtt/http_bearer`: one small query
//!   (3 frames, ~1 KiB reply) round trip;
//! - `rtt/baseline_https`, `rtt/https_bearer`: the same over TLS (rcgen CA,
//!   the client trusting only it);
//! - `rtt/host_client_http`: the same query through our host's
//!   `HttpProviderClient` (reply decoded and checked), for reference;
//! - `rtt/session_in_process`: the server's protocol work alone
//!   (`Session::handle_line` plus serializing the reply), no HTTP;
//! - `throughput/*_16_clients`: 16 concurrent keep-alive clients, 32
//!   queries each per iteration; criterion reports queries/s;
//! - `large/*`: one query answered with 64 KiB or 1 MiB of frames
//!   (16 or 256 frames of 4 KiB); criterion reports bytes/s of reply body.
//!
//! Run: `cargo bench -p contextgraph-provider-http-server --bench http_server`.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use contextgraph_provider_http_server::{AuthToken, HttpServeOptions, HttpServer, TlsFiles};
use contextgraph_provider_sdk::{FrameBuilder, Provider, ProviderError, Session};
use contextgraph_types::{
    Capabilities, ContextFrame, ContextQuery, ContextQueryResult, DataFlow, FrameKind,
    ProviderInfo, QueryCapability,
};
use criterion::{BenchmarkGroup, Criterion, Throughput};
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::runtime::Runtime;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

const TOKEN: &str = "bench-token-0123456789abcdef";
const CLIENTS: usize = 16;
const PER_CLIENT: usize = 32;
const LARGE_FRAME_BYTES: usize = 4096;

/// Answers every query with the first `max_frames` of its frames.
struct Canned {
    frames: Vec<ContextFrame>,
}

impl Canned {
    /// Three frames of about 100 bytes of content.
    fn small() -> Self {
        let frames = (0..3)
            .map(|i| {
                FrameBuilder::new(
                    format!("doc:retry#{i}"),
                    FrameKind::Doc,
                    "Retry policy",
                    "Requests are retried with exponential backoff: 100 ms first, doubling, up to max_attempts (4).",
                )
                .uri("file:///repo/docs/retry.md")
                .citation_label(format!("retry.md L{}-{}", i * 10 + 1, i * 10 + 9))
                .score(0.9 - 0.1 * i as f32)
                .build()
            })
            .collect();
        Canned { frames }
    }

    /// 256 frames of 4 KiB of content each (1 MiB in all).
    fn large() -> Self {
        let line = "The first delay is 100 ms and doubles after each attempt. ";
        let frames = (0..256)
            .map(|i| {
                let mut content = line.repeat(LARGE_FRAME_BYTES / line.len() + 1);
                content.truncate(LARGE_FRAME_BYTES);
                FrameBuilder::new(format!("doc:big#{i}"), FrameKind::Doc, "Backoff", content)
                    .citation_label(format!("big.md chunk {i}"))
                    .score(0.5)
                    .build()
            })
            .collect();
        Canned { frames }
    }
}

impl Provider for Canned {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: "bench-canned".into(),
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
    fn query(&self, query: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        let n = usize::try_from(query.max_frames).unwrap_or(usize::MAX);
        Ok(ContextQueryResult {
            frames: self.frames.iter().take(n).cloned().collect(),
            truncated: false,
            dropped_estimate: None,
        })
    }
}

fn small_query() -> ContextQuery {
    ContextQuery::new("how is the retry policy configured?", 3, 1000)
}

fn large_query(frames: u32) -> ContextQuery {
    ContextQuery::new("everything about backoff", frames, 300_000)
}

fn query_body(query: &ContextQuery) -> Bytes {
    let envelope = serde_json::json!({"type": "query", "id": "q1", "query": query});
    Bytes::from(serde_json::to_vec(&envelope).expect("a query serializes"))
}

fn handshake_body() -> Bytes {
    let envelope = serde_json::json!({
        "type": "handshake",
        "protocol_version": contextgraph_types::PROTOCOL_VERSION,
    });
    Bytes::from(serde_json::to_vec(&envelope).expect("a handshake serializes"))
}

/// A CA and a leaf for `127.0.0.1` signed by it, as PEM files in `dir`;
/// returns the files and the CA certificate PEM the client trusts.
fn tls_files(dir: &tempfile::TempDir) -> (TlsFiles, String) {
    let ca_key = rcgen::KeyPair::generate().expect("a CA key");
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).expect("a CA certificate");
    let leaf_key = rcgen::KeyPair::generate().expect("a leaf key");
    let leaf = rcgen::CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
        .expect("leaf params")
        .signed_by(&leaf_key, &ca, &ca_key)
        .expect("a leaf certificate");
    let files = TlsFiles {
        cert_chain: dir.path().join("cert.pem"),
        private_key: dir.path().join("key.pem"),
    };
    std::fs::write(&files.cert_chain, leaf.pem()).expect("write the certificate");
    std::fs::write(&files.private_key, leaf_key.serialize_pem()).expect("write the key");
    (files, ca.pem())
}

/// Start the real server on `rt` (it runs until the bench process exits).
fn serve_real(rt: &Runtime, provider: Canned, options: HttpServeOptions) -> reqwest::Url {
    let bound = rt
        .block_on(
            HttpServer::new(provider, options)
                .expect("the server is built")
                .bind(SocketAddr::from(([127, 0, 0, 1], 0))),
        )
        .expect("the server binds loopback");
    let url = bound.url();
    rt.spawn(bound.serve(std::future::pending()));
    reqwest::Url::parse(&url).expect("the server's URL parses")
}

/// Start the baseline on `rt`: a bare hyper HTTP/1.1 server (over `tls`
/// when given) that reads each request body and answers `reply`.
fn serve_bare(rt: &Runtime, reply: Bytes, tls: Option<Arc<ServerConfig>>) -> reqwest::Url {
    let listener = rt
        .block_on(TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))))
        .expect("the baseline binds loopback");
    let addr = listener.local_addr().expect("a local address");
    let scheme = if tls.is_some() { "https" } else { "http" };
    let acceptor = tls.map(TlsAcceptor::from);
    rt.spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let _ = stream.set_nodelay(true);
            let reply = reply.clone();
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let reply = reply.clone();
                    async move {
                        let _ = req.into_body().collect().await;
                        let mut response = Response::new(Full::new(reply));
                        response.headers_mut().insert(
                            hyper::header::CONTENT_TYPE,
                            hyper::header::HeaderValue::from_static("application/json"),
                        );
                        Ok::<_, Infallible>(response)
                    }
                });
                let http = hyper::server::conn::http1::Builder::new();
                let _ = match acceptor {
                    None => http.serve_connection(TokioIo::new(stream), service).await,
                    Some(acceptor) => match acceptor.accept(stream).await {
                        Ok(tls) => http.serve_connection(TokioIo::new(tls), service).await,
                        Err(_) => return,
                    },
                };
            });
        }
    });
    reqwest::Url::parse(&format!("{scheme}://{addr}/cgp")).expect("the baseline's URL parses")
}

/// A client configured as our host's HTTP transport configures it.
fn client(ca_pem: Option<&str>) -> reqwest::Client {
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .use_rustls_tls()
        .tls_built_in_root_certs(false);
    if let Some(pem) = ca_pem {
        builder = builder
            .add_root_certificate(reqwest::Certificate::from_pem(pem.as_bytes()).expect("CA PEM"));
    }
    builder.build().expect("the client is built")
}

/// One endpoint as seen by a client: where, with which credential.
#[derive(Clone)]
struct Target {
    client: reqwest::Client,
    url: reqwest::Url,
    token: Option<&'static str>,
}

impl Target {
    /// POST `body` and read the whole reply; returns the reply body.
    async fn post(&self, body: &Bytes) -> Bytes {
        let mut request = self
            .client
            .post(self.url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.clone());
        if let Some(token) = self.token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.expect("the server answers");
        assert_eq!(response.status(), 200, "{}", self.url);
        response.bytes().await.expect("the reply body arrives")
    }
}

/// Handshake with a real server (H1) so its session takes queries.
fn handshake(rt: &Runtime, target: &Target) {
    let ack = rt.block_on(target.post(&handshake_body()));
    let ack: serde_json::Value = serde_json::from_slice(&ack).expect("a JSON ack");
    assert_eq!(ack["type"], "handshake_ack", "{ack}");
}

/// What the real server answers to `query`, checked to be frames: the body
/// the baseline replays.
fn reply_of(rt: &Runtime, target: &Target, query: &Bytes) -> Bytes {
    let reply = rt.block_on(target.post(query));
    let value: serde_json::Value = serde_json::from_slice(&reply).expect("a JSON reply");
    assert_eq!(value["type"], "frames", "{value}");
    reply
}

fn bench_posts(
    g: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    rt: &Runtime,
    target: &Target,
    body: &Bytes,
) {
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    criterion::black_box(target.post(body).await);
                }
                start.elapsed()
            })
        })
    });
}

/// 16 clients, each on its own keep-alive connection, each sending
/// `PER_CLIENT` queries one after another; one iteration is the whole batch.
fn bench_load(
    g: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    rt: &Runtime,
    targets: &[Target],
    body: &Bytes,
) {
    // Open every connection before measuring.
    rt.block_on(async {
        for t in targets {
            t.post(body).await;
        }
    });
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    let mut tasks = tokio::task::JoinSet::new();
                    for t in targets {
                        let (t, body) = (t.clone(), body.clone());
                        tasks.spawn(async move {
                            for _ in 0..PER_CLIENT {
                                criterion::black_box(t.post(&body).await);
                            }
                        });
                    }
                    while let Some(done) = tasks.join_next().await {
                        done.expect("a client task completes");
                    }
                }
                start.elapsed()
            })
        })
    });
}

fn main() {
    // The servers get the machine's default multi-thread runtime, as
    // `serve_until_signal` builds it; the round-trip client runs on a
    // current-thread runtime (no thread hop on the client side), the load
    // clients on a multi-thread one.
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("server runtime");
    let client_rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("client runtime");
    let load_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("load runtime");

    let pem_dir = tempfile::tempdir().expect("a temporary folder");
    let (files, ca_pem) = tls_files(&pem_dir);
    let tls_config =
        contextgraph_provider_http_server::tls::server_config(&files).expect("the TLS files load");
    let token = AuthToken::new(TOKEN).expect("a valid token");

    let plain = Target {
        client: client(None),
        url: serve_real(&server_rt, Canned::small(), HttpServeOptions::default()),
        token: None,
    };
    let bearer = Target {
        client: client(None),
        url: serve_real(
            &server_rt,
            Canned::small(),
            HttpServeOptions::default().with_token(token.clone()),
        ),
        token: Some(TOKEN),
    };
    let https = Target {
        client: client(Some(&ca_pem)),
        url: serve_real(
            &server_rt,
            Canned::small(),
            HttpServeOptions::default()
                .with_tls(files.clone())
                .with_token(token.clone()),
        ),
        token: Some(TOKEN),
    };
    let large_plain = Target {
        client: client(None),
        url: serve_real(&server_rt, Canned::large(), HttpServeOptions::default()),
        token: None,
    };
    let large_https = Target {
        client: client(Some(&ca_pem)),
        url: serve_real(
            &server_rt,
            Canned::large(),
            HttpServeOptions::default()
                .with_tls(files)
                .with_token(token),
        ),
        token: Some(TOKEN),
    };
    for t in [&plain, &bearer, &https, &large_plain, &large_https] {
        handshake(&client_rt, t);
    }

    let small = query_body(&small_query());
    let q64k = query_body(&large_query(16));
    let q1m = query_body(&large_query(256));
    let small_reply = reply_of(&client_rt, &plain, &small);
    let reply64k = reply_of(&client_rt, &large_plain, &q64k);
    let reply1m = reply_of(&client_rt, &large_plain, &q1m);
    let bare = |reply: &Bytes, tls: bool, ca: Option<&str>| Target {
        client: client(ca),
        url: serve_bare(
            &server_rt,
            reply.clone(),
            tls.then(|| Arc::clone(&tls_config)),
        ),
        token: None,
    };
    let bare_plain = bare(&small_reply, false, None);
    let bare_https = bare(&small_reply, true, Some(&ca_pem));
    let bare64k = bare(&reply64k, false, None);
    let bare1m = bare(&reply1m, false, None);
    eprintln!(
        "reply bodies: small {} B, 64 KiB query {} B, 1 MiB query {} B",
        small_reply.len(),
        reply64k.len(),
        reply1m.len()
    );

    let mut c = Criterion::default().configure_from_args();

    let mut g = c.benchmark_group("rtt");
    g.sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    bench_posts(&mut g, "baseline_http", &client_rt, &bare_plain, &small);
    bench_posts(&mut g, "http", &client_rt, &plain, &small);
    bench_posts(&mut g, "http_bearer", &client_rt, &bearer, &small);
    bench_posts(&mut g, "baseline_https", &client_rt, &bare_https, &small);
    bench_posts(&mut g, "https_bearer", &client_rt, &https, &small);
    let host = client_rt.block_on(async {
        use contextgraph_host::{HttpConfig, HttpProviderClient, ProviderClient};
        let host =
            HttpProviderClient::new(HttpConfig::new(plain.url.as_str())).expect("a loopback URL");
        host.ready(tokio::time::Instant::now() + Duration::from_secs(10))
            .await
            .expect("H1: the host's handshake succeeds");
        host
    });
    let q = small_query();
    g.bench_function("host_client_http", |b| {
        use contextgraph_host::ProviderClient;
        b.iter_custom(|iters| {
            client_rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
                    criterion::black_box(host.query(&q, deadline).await.expect("answered"));
                }
                start.elapsed()
            })
        })
    });
    let session = Session::new(Canned::small());
    assert!(session.handle_line(&handshake_body()).is_some());
    g.bench_function("session_in_process", |b| {
        b.iter(|| {
            let reply = session.handle_line(&small).expect("a reply");
            criterion::black_box(serde_json::to_vec(&reply).expect("serializes"))
        })
    });
    g.finish();

    let mut g = c.benchmark_group("throughput");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .throughput(Throughput::Elements((CLIENTS * PER_CLIENT) as u64));
    let fleet = |t: &Target, ca: Option<&str>| -> Vec<Target> {
        (0..CLIENTS)
            .map(|_| Target {
                client: client(ca),
                ..t.clone()
            })
            .collect()
    };
    bench_load(
        &mut g,
        "baseline_http_16_clients",
        &load_rt,
        &fleet(&bare_plain, None),
        &small,
    );
    bench_load(
        &mut g,
        "http_16_clients",
        &load_rt,
        &fleet(&plain, None),
        &small,
    );
    bench_load(
        &mut g,
        "https_bearer_16_clients",
        &load_rt,
        &fleet(&https, Some(&ca_pem)),
        &small,
    );
    g.finish();

    let mut g = c.benchmark_group("large");
    g.sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    g.throughput(Throughput::Bytes(reply64k.len() as u64));
    bench_posts(&mut g, "baseline_64KiB", &client_rt, &bare64k, &q64k);
    bench_posts(&mut g, "http_64KiB", &client_rt, &large_plain, &q64k);
    g.throughput(Throughput::Bytes(reply1m.len() as u64));
    bench_posts(&mut g, "baseline_1MiB", &client_rt, &bare1m, &q1m);
    bench_posts(&mut g, "http_1MiB", &client_rt, &large_plain, &q1m);
    bench_posts(&mut g, "https_bearer_1MiB", &client_rt, &large_https, &q1m);
    let session = Session::new(Canned::large());
    assert!(session.handle_line(&handshake_body()).is_some());
    g.bench_function("session_in_process_1MiB", |b| {
        b.iter(|| {
            let reply = session.handle_line(&q1m).expect("a reply");
            criterion::black_box(serde_json::to_vec(&reply).expect("serializes"))
        })
    });
    g.finish();

    c.final_summary();
}
