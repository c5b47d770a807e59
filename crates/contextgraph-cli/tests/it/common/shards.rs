//! A fleet of lightweight CGP shards on loopback, served in-process by the
//! real HTTP server adapter (`contextgraph-provider-http-server`), for the
//! 50-shard fan-out test and the `fanout` bench. A real `cgp serve` per
//! shard would be fifty processes indexing fifty checkouts on a 2-core
//! machine; what the fan-out is about (the host's connects, handshakes,
//! consent, deadlines, dedup and budget split) only needs fifty honest
//! HTTP peers.
//!
//! Each shard serves a tiny repository of Rust-like files and answers a
//! goal by a word-overlap search over them (its own search time is
//! recorded, so the bench can report it apart from the host's cost). Two
//! shards given the same `repo` are replicas of one shard: they serve
//! identical frames, which the host must dedup. A [`Role::Slow`] shard
//! holds every query until the fleet is dropped (it answers after any
//! deadline); a [`Role::Dead`] shard is a loopback port with nothing
//! listening: a socket bound to it and never put in the listening state,
//! held for the fleet's life, so a connect is refused and no later bind (a
//! live shard's, another process's) can be handed the same port. Dropping
//! the socket instead once let the next live shard take the freed port, and
//! the "dead" shard answered. Everything binds 127.0.0.1 only and stops when
//! dropped.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use contextgraph_provider_http_server::{HttpServeOptions, HttpServer};
use contextgraph_provider_sdk::{pack, FrameBuilder, Provider, ProviderError};
use contextgraph_types::{
    Capabilities, ContextQuery, ContextQueryResult, DataFlow, EgressScope, FrameKind, ProviderInfo,
    QueryCapability,
};

/// How a shard behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Answers at once.
    Answers,
    /// Handshakes at once, then holds every query until the fleet is
    /// dropped (at most [`SLOW_HOLD`]).
    Slow,
    /// Nothing listens on its port.
    Dead,
}

/// Longest a slow shard holds a query (the fleet releases it sooner when dropped).
pub const SLOW_HOLD: Duration = Duration::from_secs(20);

/// Files per shard repository.
pub const FILES_PER_REPO: usize = 6;

/// One shard to start.
#[derive(Debug, Clone)]
pub struct ShardSpec {
    /// Its name in cgp.toml.
    pub name: String,
    /// The repository it serves (replicas share one).
    pub repo: usize,
    /// How it behaves.
    pub role: Role,
}

/// What one shard saw.
#[derive(Debug, Default)]
pub struct Counters {
    /// Queries received.
    pub queries: AtomicUsize,
    /// Queries answered (a slow shard's only once released).
    pub answered: AtomicUsize,
    /// Each query's search time in the provider, in nanoseconds.
    pub search_ns: Mutex<Vec<u64>>,
}

/// A started shard.
pub struct Shard {
    /// Its spec.
    pub spec: ShardSpec,
    /// Its URL (a closed port for a dead shard).
    pub url: String,
    /// What it saw.
    pub counters: Arc<Counters>,
}

#[derive(Default)]
struct Gate {
    released: Mutex<bool>,
    wake: Condvar,
}

impl Gate {
    fn wait(&self) {
        let deadline = Instant::now() + SLOW_HOLD;
        let mut released = self.released.lock().unwrap_or_else(|p| p.into_inner());
        while !*released {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            released = self
                .wake
                .wait_timeout(released, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    fn release(&self) {
        *self.released.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.wake.notify_all();
    }
}

/// The text of file `k` of repository `repo`: about retries and backoff,
/// with words of its own.
pub fn file_text(repo: usize, k: usize) -> String {
    let mut text = format!(
        "/// Repository {repo}, module {k}: retries a request with exponential backoff,\n\
         /// doubling the delay after each failed attempt up to a ceiling.\n\
         pub fn retry_with_backoff_{repo}_{k}(attempt: u32) -> u64 {{\n"
    );
    for line in 0..(4 + k) {
        text.push_str(&format!(
            "    // step {line}: the delay for attempt {line} of shard {repo} is {} ms\n",
            100u64 << line.min(20)
        ));
    }
    text.push_str(&format!("    100u64 << attempt.min({})\n}}\n", 4 + k));
    text
}

struct ShardProvider {
    repo: usize,
    slow: bool,
    gate: Arc<Gate>,
    counters: Arc<Counters>,
}

impl Provider for ShardProvider {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: "fixture-shard".into(),
            version: "1.0.0".into(),
            // A shard is an org service: what it is sent leaves this
            // machine for the organisation's tenant (C6 receipts).
            data_flow: DataFlow {
                reads: true,
                egress: true,
                egress_scopes: vec![EgressScope::from_wire("org-tenant")],
                ..DataFlow::default()
            },
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            query: QueryCapability {
                kinds: vec![FrameKind::Snippet],
            },
            correlation: true,
            ..Capabilities::default()
        }
    }

    fn query(&self, query: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        self.counters.queries.fetch_add(1, Ordering::SeqCst);
        if self.slow {
            self.gate.wait();
        }
        let began = Instant::now();
        let words: Vec<String> = query
            .goal
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() > 2)
            .map(str::to_lowercase)
            .collect();
        let candidates = (0..FILES_PER_REPO)
            .filter_map(|k| {
                let text = file_text(self.repo, k);
                let lower = text.to_lowercase();
                let hits = words.iter().filter(|w| lower.contains(w.as_str())).count();
                if hits == 0 {
                    return None;
                }
                let path = format!("repo-{}/src/retry_{k}.rs", self.repo);
                Some(
                    FrameBuilder::new(
                        path.clone(),
                        FrameKind::Snippet,
                        format!("retry_with_backoff_{}_{k}", self.repo),
                        text,
                    )
                    .uri(format!("https://git.example/{path}"))
                    .citation_label(path)
                    // Lower repositories and files rank a little higher,
                    // so the order of equal matches is fixed.
                    .score(
                        hits as f32 / words.len().max(1) as f32
                            - k as f32 * 0.01
                            - self.repo as f32 * 0.0001,
                    )
                    .build(),
                )
            })
            .collect();
        let result = pack(candidates, query);
        let took = u64::try_from(began.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.counters
            .search_ns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(took);
        self.counters.answered.fetch_add(1, Ordering::SeqCst);
        Ok(result)
    }
}

/// The shards, served on their own runtime; stopped (slow ones released
/// first) when dropped.
pub struct Fleet {
    /// The shards, in the order given.
    pub shards: Vec<Shard>,
    gate: Arc<Gate>,
    stop: Option<tokio::sync::watch::Sender<bool>>,
    runtime: Option<tokio::runtime::Runtime>,
    /// The dead shards' ports, bound and not listening, held until drop.
    _dead_ports: Vec<tokio::net::TcpSocket>,
}

impl Fleet {
    /// Start `specs` on loopback (two runtime threads serve them all).
    pub fn start(specs: Vec<ShardSpec>) -> Fleet {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime for the shards");
        let gate = Arc::new(Gate::default());
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let mut dead_ports = Vec::new();
        let shards = runtime.block_on(async {
            let mut shards = Vec::with_capacity(specs.len());
            for spec in specs {
                let counters = Arc::new(Counters::default());
                let url = match spec.role {
                    Role::Dead => {
                        // Bound, never listening: connecting is refused,
                        // and the port stays ours until the fleet drops.
                        let socket = tokio::net::TcpSocket::new_v4().expect("a TCP socket");
                        socket
                            .bind(SocketAddr::from(([127, 0, 0, 1], 0)))
                            .expect("bind a loopback port");
                        let addr = socket.local_addr().expect("its address");
                        dead_ports.push(socket);
                        format!("http://{addr}/cgp")
                    }
                    Role::Answers | Role::Slow => {
                        let provider = ShardProvider {
                            repo: spec.repo,
                            slow: spec.role == Role::Slow,
                            gate: Arc::clone(&gate),
                            counters: Arc::clone(&counters),
                        };
                        let options = HttpServeOptions::default()
                            .with_shutdown_grace(Duration::from_millis(200));
                        let bound = HttpServer::new(provider, options)
                            .expect("a shard server")
                            .bind(SocketAddr::from(([127, 0, 0, 1], 0)))
                            .await
                            .expect("bind a shard on loopback");
                        let url = bound.url();
                        let mut stopped = stopped.clone();
                        tokio::spawn(bound.serve(async move {
                            let _ = stopped.wait_for(|s| *s).await;
                        }));
                        url
                    }
                };
                shards.push(Shard {
                    spec,
                    url,
                    counters,
                });
            }
            shards
        });
        Fleet {
            shards,
            gate,
            stop: Some(stop),
            runtime: Some(runtime),
            _dead_ports: dead_ports,
        }
    }

    /// The shard named `name`.
    pub fn shard(&self, name: &str) -> &Shard {
        self.shards
            .iter()
            .find(|s| s.spec.name == name)
            .unwrap_or_else(|| panic!("no shard {name}"))
    }

    /// A `cgp.toml` listing every shard (built-ins off), each with
    /// `timeout_ms` from `timeout_of`.
    pub fn config(&self, timeout_of: impl Fn(&ShardSpec) -> u64) -> String {
        let mut toml = String::from(
            "# Shards of one organisation, one HTTP provider each (issue 28).\n\
             [providers.workspace]\nenabled = false\n[providers.history]\nenabled = false\n",
        );
        for s in &self.shards {
            toml.push_str(&format!(
                "[providers.{}]\nurl = {:?}\ntimeout_ms = {}\n",
                s.spec.name,
                s.url,
                timeout_of(&s.spec)
            ));
        }
        toml
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        self.gate.release();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(true);
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(Duration::from_secs(2));
        }
    }
}
