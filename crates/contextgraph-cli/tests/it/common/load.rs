//! A bounded load of concurrent clients, each sending queries in turn and
//! checking every answer against the expected bytes, for the failover test
//! and the replica benchmark (`benches/replicas.rs` includes this file).

use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::http;

/// One request to send and the exact body it must be answered with.
#[derive(Debug, Clone)]
pub struct Case {
    /// The envelope POSTed.
    pub body: Vec<u8>,
    /// The answer expected, byte for byte.
    pub expected: Vec<u8>,
}

/// One request's outcome.
#[derive(Debug, Clone)]
pub struct Sample {
    /// When it was sent, from the start of the load.
    pub at: Duration,
    /// How long it took.
    pub latency: Duration,
    /// `Err` with why it failed (transport, status, other bytes).
    pub outcome: Result<(), String>,
}

/// A load running on its own threads until its deadline.
pub struct Load {
    clients: Vec<JoinHandle<Vec<Sample>>>,
    /// When it started.
    pub start: Instant,
}

impl Load {
    /// `clients` threads POSTing `cases` to `addr` at `path` back to back
    /// (each starting at its own case) for `duration`.
    pub fn start(
        addr: SocketAddr,
        path: &'static str,
        cases: Vec<Case>,
        clients: usize,
        duration: Duration,
    ) -> Load {
        assert!(!cases.is_empty());
        let cases = Arc::new(cases);
        let start = Instant::now();
        let deadline = start + duration;
        let clients = (0..clients)
            .map(|c| {
                let cases = Arc::clone(&cases);
                std::thread::spawn(move || {
                    let mut samples = Vec::new();
                    let mut i = c;
                    while Instant::now() < deadline {
                        let case = &cases[i % cases.len()];
                        i += 1;
                        let sent = Instant::now();
                        let outcome = match http::request(
                            addr,
                            "POST",
                            path,
                            &case.body,
                            Duration::from_secs(30),
                        ) {
                            Err(e) => Err(format!("transport: {e}")),
                            Ok(r) if r.status != 200 => {
                                Err(format!("status {}: {}", r.status, r.text()))
                            }
                            Ok(r) if r.body != case.expected => Err(format!(
                                "other bytes: {}",
                                r.text().chars().take(300).collect::<String>()
                            )),
                            Ok(_) => Ok(()),
                        };
                        samples.push(Sample {
                            at: sent - start,
                            latency: sent.elapsed(),
                            outcome,
                        });
                    }
                    samples
                })
            })
            .collect();
        Load { clients, start }
    }

    /// Wait for every client; all samples, by send time.
    pub fn finish(self) -> Vec<Sample> {
        let mut all: Vec<Sample> = self
            .clients
            .into_iter()
            .flat_map(|h| h.join().expect("a load client panicked"))
            .collect();
        all.sort_by_key(|s| s.at);
        all
    }
}

/// The `q`-quantile (0..=1) of `latencies`, by nearest rank.
pub fn quantile(latencies: &mut [Duration], q: f64) -> Duration {
    if latencies.is_empty() {
        return Duration::ZERO;
    }
    latencies.sort();
    let rank = ((q * latencies.len() as f64).ceil() as usize).clamp(1, latencies.len());
    latencies[rank - 1]
}
