//! Fixtures shared by the runner tests: a configurable test provider, an
//! in-memory host that talks to `serve` over pipes (no spawning), and the
//! JSON Schema check every envelope the runner emits must pass.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

pub mod concurrency;
pub mod schema;

use std::io::Write;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use contextgraph_codec::{FrameError, LineReader};
use contextgraph_provider_sdk::serve::memory::{pipe, PipeWriter};
use contextgraph_provider_sdk::{
    serve, FrameBuilder, Provider, ProviderError, ServeError, ServeOptions,
};
use contextgraph_types::{
    Capabilities, ContextQuery, ContextQueryResult, DataFlow, FrameKind, ProviderInfo,
    QueryCapability, VerifyRequest, VerifyResponse,
};
use serde_json::{json, Value};

/// Generous bound on waiting for a reply: only reached when the runner is
/// broken (hung), never part of what a test measures.
pub const PATIENCE: Duration = Duration::from_secs(30);

type QueryFn = dyn Fn(&ContextQuery) -> Result<ContextQueryResult, ProviderError> + Send + Sync;
type VerifyFn = dyn Fn(&VerifyRequest) -> VerifyResponse + Send + Sync;

/// A provider whose capabilities and behaviour each test sets.
pub struct TestProvider {
    pub name: String,
    pub caps: Capabilities,
    pub query: Arc<QueryFn>,
    pub verify: Option<Arc<VerifyFn>>,
}

impl TestProvider {
    /// A lock-step provider (no correlation, no verify) serving `doc` and
    /// `snippet`, answering every query with one honest frame whose id
    /// echoes the goal.
    pub fn new(name: &str) -> Self {
        TestProvider {
            name: name.to_owned(),
            caps: Capabilities {
                query: QueryCapability {
                    kinds: vec![FrameKind::Doc, FrameKind::Snippet],
                },
                ..Capabilities::default()
            },
            query: Arc::new(|q| Ok(echo_goal(q))),
            verify: None,
        }
    }

    pub fn correlated(mut self) -> Self {
        self.caps.correlation = true;
        self
    }

    pub fn verifying(mut self) -> Self {
        self.caps.verify = true;
        self
    }

    pub fn fingerprint(mut self, fingerprint: &str) -> Self {
        self.caps.embeddings_fingerprint = Some(fingerprint.to_owned());
        self
    }

    pub fn on_query(
        mut self,
        f: impl Fn(&ContextQuery) -> Result<ContextQueryResult, ProviderError> + Send + Sync + 'static,
    ) -> Self {
        self.query = Arc::new(f);
        self
    }

    pub fn on_verify(
        mut self,
        f: impl Fn(&VerifyRequest) -> VerifyResponse + Send + Sync + 'static,
    ) -> Self {
        self.verify = Some(Arc::new(f));
        self
    }
}

impl Provider for TestProvider {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: self.name.clone(),
            version: "0.1.0".to_owned(),
            data_flow: DataFlow {
                reads: true,
                ..DataFlow::default()
            },
        }
    }

    fn capabilities(&self) -> Capabilities {
        self.caps.clone()
    }

    fn query(&self, query: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        (self.query)(query)
    }

    fn verify(&self, request: &VerifyRequest) -> VerifyResponse {
        match &self.verify {
            Some(f) => f(request),
            None => default_verify(request),
        }
    }
}

/// The trait's default `verify`, reached through a provider that does not override it.
fn default_verify(request: &VerifyRequest) -> VerifyResponse {
    struct Defaults;
    impl Provider for Defaults {
        fn info(&self) -> ProviderInfo {
            unreachable!()
        }
        fn capabilities(&self) -> Capabilities {
            unreachable!()
        }
        fn query(&self, _: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
            unreachable!()
        }
    }
    Defaults.verify(request)
}

/// One honest frame whose id is `frame-for:<goal>`, so a reply can be
/// matched to the query that caused it.
pub fn echo_goal(q: &ContextQuery) -> ContextQueryResult {
    let frame = FrameBuilder::new(
        format!("frame-for:{}", q.goal),
        FrameKind::Doc,
        "Echo",
        format!("you asked: {}", q.goal),
    )
    .score(0.5)
    .build();
    contextgraph_provider_sdk::pack(vec![frame], q)
}

/// The host side of an in-memory connection to a running `serve`.
pub struct Host {
    input: Option<PipeWriter>,
    replies: Option<Receiver<Vec<u8>>>,
    done: Receiver<Result<(), ServeError>>,
}

impl Host {
    /// Serve `provider` with default options.
    pub fn start(provider: impl Provider) -> Self {
        Self::start_with(provider, ServeOptions::default())
    }

    /// Serve `provider` with `options` on a thread, over two in-memory pipes.
    pub fn start_with(provider: impl Provider, options: ServeOptions) -> Self {
        let (to_provider, provider_in) = pipe();
        let (provider_out, from_provider) = pipe();
        let (done_tx, done) = channel();
        thread::spawn(move || {
            let result = serve(provider, provider_in, provider_out, options);
            let _ = done_tx.send(result);
        });
        let (reply_tx, replies) = channel();
        thread::spawn(move || {
            let mut lines = LineReader::new(from_provider);
            while let Some(item) = lines.next_line() {
                let bytes = match item {
                    Ok(line) => line.to_vec(),
                    Err(FrameError::Oversized { .. }) => b"<oversized reply>".to_vec(),
                    Err(_) => break,
                };
                if reply_tx.send(bytes).is_err() {
                    break;
                }
            }
        });
        Host {
            input: Some(to_provider),
            replies: Some(replies),
            done,
        }
    }

    /// Serve and complete a handshake.
    pub fn handshaken(provider: impl Provider, options: ServeOptions) -> Self {
        let mut host = Self::start_with(provider, options);
        host.send(&handshake_line("contextgraph/1.0-draft"));
        let ack = host.recv();
        assert_eq!(ack["type"], "handshake_ack", "{ack}");
        host
    }

    /// Send raw bytes (a newline is not added).
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let input = self.input.as_mut().expect("input still open");
        input.write_all(bytes).expect("provider is reading");
    }

    /// Send one line; false when the provider no longer reads its input.
    pub fn try_send(&mut self, line: &str) -> bool {
        let input = self.input.as_mut().expect("input still open");
        input.write_all(format!("{line}\n").as_bytes()).is_ok()
    }

    /// Send one line (a newline is added).
    pub fn send(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.send_bytes(&bytes);
    }

    /// The next reply, parsed, after checking it is one schema-valid
    /// envelope. Panics if none comes within [`PATIENCE`].
    pub fn recv(&mut self) -> Value {
        let replies = self.replies.as_ref().expect("output still open");
        let bytes = match replies.recv_timeout(PATIENCE) {
            Ok(bytes) => bytes,
            Err(RecvTimeoutError::Timeout) => panic!("no reply within {PATIENCE:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the provider closed its output"),
        };
        let value: Value = serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            panic!(
                "reply is not JSON ({e}): {}",
                String::from_utf8_lossy(&bytes)
            )
        });
        schema::assert_valid_envelope(&value);
        value
    }

    /// End of input, as when the host closes the provider's stdin.
    pub fn close_input(&mut self) {
        self.input = None;
    }

    /// Stop reading the provider's output, as a host that died would.
    pub fn close_output(&mut self) {
        self.replies = None;
    }

    /// What `serve` returned. Panics if it has not returned within [`PATIENCE`].
    pub fn finish(&mut self) -> Result<(), ServeError> {
        self.done
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("serve did not return within {PATIENCE:?}"))
    }

    /// Whether the output ended with no further reply (after `serve` returned).
    pub fn output_ended(&mut self) -> bool {
        let replies = self.replies.as_ref().expect("output still open");
        matches!(
            replies.recv_timeout(PATIENCE),
            Err(RecvTimeoutError::Disconnected)
        )
    }
}

pub fn handshake_line(version: &str) -> String {
    json!({"type": "handshake", "protocol_version": version}).to_string()
}

/// A `query` envelope for `goal`, with an `id` when given.
pub fn query_line(id: Option<&str>, goal: &str, max_frames: u32, max_tokens: u32) -> String {
    let mut env = json!({
        "type": "query",
        "query": {"goal": goal, "max_frames": max_frames, "max_tokens": max_tokens},
    });
    if let Some(id) = id {
        env["id"] = json!(id);
    }
    env.to_string()
}

/// Assert `reply` is an `error` with `code`, and return its message.
pub fn expect_error(reply: &Value, code: &str) -> String {
    assert_eq!(reply["type"], "error", "expected an error, got {reply}");
    assert_eq!(reply["code"], code, "wrong code in {reply}");
    reply["message"]
        .as_str()
        .unwrap_or_else(|| panic!("error without message: {reply}"))
        .to_owned()
}

/// The ids of the frames in a `frames` reply.
pub fn frame_ids(reply: &Value) -> Vec<String> {
    assert_eq!(reply["type"], "frames", "expected frames, got {reply}");
    reply["result"]["frames"]
        .as_array()
        .expect("frames array")
        .iter()
        .map(|f| f["id"].as_str().expect("frame id").to_owned())
        .collect()
}
