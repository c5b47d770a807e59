//! Shared test support: a docs folder, a server on a loopback port with its
//! own runtime, a raw HTTP/1.1 client (full control over status, headers and
//! body), and a self-signed CA + leaf certificate written as PEM files.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::time::Duration;

use contextgraph_provider_docs::{DocsConfig, DocsProvider};
use contextgraph_provider_http_server::{HttpServeOptions, HttpServer, ServeSummary, TlsFiles};
use contextgraph_provider_sdk::Provider;

/// Generous bound on anything a test waits for.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// The testkit's folder about a retry policy.
pub use contextgraph_testkit::docs_fixture::markdown_folder;

/// The docs provider over `folder`.
pub fn docs(folder: &tempfile::TempDir) -> DocsProvider {
    DocsProvider::open(DocsConfig::new(folder.path())).expect("the docs provider opens")
}

/// A running server: its runtime, address, URL and a way to stop it.
pub struct Running {
    pub rt: tokio::runtime::Runtime,
    pub addr: SocketAddr,
    pub url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: Option<tokio::task::JoinHandle<ServeSummary>>,
}

impl Running {
    /// Fire the shutdown future (as a signal would).
    pub fn signal_shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    /// Signal shutdown and wait for `serve` to return.
    pub fn stop(mut self) -> ServeSummary {
        self.signal_shutdown();
        let done = self.done.take().unwrap();
        self.rt
            .block_on(async { tokio::time::timeout(PATIENCE, done).await })
            .expect("serve returns within the patience")
            .expect("the serve task does not panic")
    }
}

/// Serve `provider` on 127.0.0.1:0 with `options`.
pub fn serve<P: Provider>(provider: P, options: HttpServeOptions) -> Running {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let bound = rt
        .block_on(
            HttpServer::new(provider, options)
                .unwrap()
                .bind("127.0.0.1:0".parse().unwrap()),
        )
        .unwrap();
    let (addr, url) = (bound.local_addr(), bound.url());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let done = rt.spawn(bound.serve(async {
        let _ = rx.await;
    }));
    Running {
        rt,
        addr,
        url,
        stop: Some(tx),
        done: Some(done),
    }
}

/// A raw response.
#[derive(Debug)]
pub struct Raw {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Raw {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

/// Send one request (`Connection: close`) with these extra header lines and
/// body, and read the whole response. `Host` and `Content-Length` are added
/// unless given.
pub fn raw(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Raw {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    let has = |n: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(n));
    if !has("host") {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    if !has("content-length") && !has("transfer-encoding") {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    // The server may answer (413, 401) and close before reading the body.
    let _ = stream.write_all(body);
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    parse(&bytes)
}

fn parse(bytes: &[u8]) -> Raw {
    let split = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a complete response head");
    let head = String::from_utf8_lossy(&bytes[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut body = bytes[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        body = dechunk(&body);
    }
    Raw {
        status,
        headers,
        body,
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = data.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size =
            usize::from_str_radix(std::str::from_utf8(&data[..end]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[end + 2..end + 2 + size]);
        data = &data[end + 4 + size..];
    }
}

/// POST one envelope as JSON to `/cgp`.
pub fn post(addr: SocketAddr, body: &[u8], extra: &[(&str, &str)]) -> Raw {
    let mut headers = vec![("Content-Type", "application/json")];
    headers.extend_from_slice(extra);
    raw(addr, "POST", "/cgp", &headers, body)
}

/// `{"type":"handshake",…}` in our version.
pub fn handshake_body() -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "type": "handshake",
        "protocol_version": contextgraph_types::PROTOCOL_VERSION
    }))
    .unwrap()
}

/// A CA and a leaf for `localhost`/`127.0.0.1` signed by it, as PEM files in
/// `dir`; returns the files and the CA certificate PEM.
pub fn tls_files(dir: &tempfile::TempDir) -> (TlsFiles, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &ca, &ca_key)
        .unwrap();
    let cert_chain: PathBuf = dir.path().join("cert.pem");
    let private_key: PathBuf = dir.path().join("key.pem");
    std::fs::write(&cert_chain, leaf.pem()).unwrap();
    std::fs::write(&private_key, leaf_key.serialize_pem()).unwrap();
    (
        TlsFiles {
            cert_chain,
            private_key,
        },
        ca.pem(),
    )
}
