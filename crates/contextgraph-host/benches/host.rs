//! Host benchmarks, each with its baseline measured in the same run.
//!
//! The trivial provider is this bench binary itself, re-executed with
//! `CGP_BENCH_PROVIDER=lockstep|correlated`: it answers every query from
//! memory with one precomputed frame, through the provider SDK's runner
//! (a reader thread, a worker pool and a writer thread, with the SDK's
//! honesty audit of every answer). `CGP_BENCH_PROVIDER=minimal` is the
//! smallest correlated provider there is: one thread that reads a line and
//! writes the reply, so what is left of a measurement is the host's cost
//! plus the pipes' and the scheduler's.
//!
//! - `rtt/raw_pipe_echo`: the same query bytes through `cat` (baseline);
//! - `rtt/lockstep_query`: one lock-step query round trip;
//! - `pipelined/correlated_64_in_flight`: per-query time with 64 in flight;
//! - `fanout/16_providers` and `fanout/1_provider` (baseline);
//! - `pipelined/minimal_64_in_flight`, `fanout/16_minimal_providers`: the same
//!   against the minimal provider;
//! - `fanout/raw_1_minimal_pipe`, `fanout/raw_16_minimal_pipes` (baselines):
//!   the query line written to 1 or 16 minimal providers over raw pipes and
//!   one reply read from each, no host logic;
//! - `fanout_current_thread/*`: the 16-provider fan-out and its raw baseline
//!   on a current-thread runtime (the host's per-provider CPU is serialised
//!   there, so the gap to the baseline shows it);
//! - `spawn/bin_true` (baseline: the OS's cost of starting and reaping a
//!   process), `spawn/raw_spawn_and_ack` and `spawn/raw_minimal_spawn_and_ack`
//!   (baselines: the provider spawned with raw pipes, a handshake line
//!   written, the ack read), `spawn/raw_minimal_fork_exec_and_ack` (the same
//!   forced onto `fork` + `exec`), `spawn/spawn_and_handshake`,
//!   `spawn/minimal_spawn_and_handshake`, `spawn/minimal_spawn_and_handshake_bare_name`
//!   (the program found through the provider's `PATH`);
//! - `spawn/raw_16_concurrent_minimal_per_provider` (baseline) and
//!   `spawn/16_concurrent_minimal_per_provider`: 16 spawned at once, the
//!   batch's wall time over 16.

use std::sync::Arc;
use std::time::{Duration, Instant as StdInstant};

use contextgraph_host::{
    Host, HostOptions, ProviderClient, StdioCommand, StdioOptions, StdioProvider,
};
use contextgraph_provider_sdk::{serve_stdio, FrameBuilder, Provider, ProviderError};
use contextgraph_types::{
    Capabilities, ContextFrame, ContextQuery, ContextQueryResult, DataFlow, FrameKind,
    ProviderInfo, QueryCapability,
};
use criterion::{Criterion, Throughput};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::runtime::Runtime;
use tokio::time::Instant;

const ENV: &str = "CGP_BENCH_PROVIDER";

struct Trivial {
    name: String,
    correlated: bool,
    frame: ContextFrame,
}

impl Provider for Trivial {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: self.name.clone(),
            version: "1".into(),
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
            correlation: self.correlated,
            ..Capabilities::default()
        }
    }
    fn query(&self, _: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        Ok(ContextQueryResult {
            frames: vec![self.frame.clone()],
            truncated: false,
            dropped_estimate: None,
        })
    }
}

fn provider_main(mode: &str) {
    let frame = FrameBuilder::new("f1", FrameKind::Doc, "Retry", "retry with backoff")
        .citation_label("retry.md")
        .score(0.5)
        .build();
    let trivial = Trivial {
        name: std::env::var("CGP_BENCH_NAME").unwrap_or_else(|_| "trivial".into()),
        correlated: mode != "lockstep",
        frame,
    };
    if mode == "minimal" {
        minimal_main(&trivial);
    } else {
        let _ = serve_stdio(trivial);
    }
}

/// The minimal provider: one thread; it reads what the pipe has, answers
/// every line in it, and flushes once per read (so pipelined replies share
/// a write and a lone reply never waits).
fn minimal_main(p: &Trivial) {
    use contextgraph_codec::{
        decode_envelope, encode_envelope_into, Envelope, FrameEvent, LineFramer,
    };
    use std::io::{Read, Write};
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    let mut framer = LineFramer::default();
    let mut out = Vec::with_capacity(64 * 1024);
    let result = p.query(&query()).expect("answers from memory");
    loop {
        match stdin.read(framer.read_buf()) {
            Ok(0) | Err(_) => return,
            Ok(n) => framer.commit(n),
        }
        loop {
            match framer.next_event() {
                FrameEvent::Line => {}
                FrameEvent::NeedInput | FrameEvent::End => break,
                _ => continue,
            }
            let reply = match decode_envelope(framer.line()) {
                Ok(Envelope::Handshake { .. }) => Envelope::HandshakeAck {
                    protocol_version: contextgraph_types::PROTOCOL_VERSION.to_owned(),
                    provider: p.info(),
                    capabilities: p.capabilities(),
                },
                Ok(Envelope::Query { id, .. }) => Envelope::Frames {
                    id,
                    result: result.clone(),
                },
                Ok(Envelope::Shutdown) => {
                    let _ = stdout.write_all(&out);
                    return;
                }
                Ok(_) | Err(_) => continue,
            };
            if encode_envelope_into(&reply, &mut out).is_err() {
                return;
            }
        }
        if stdout
            .write_all(&out)
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return;
        }
        out.clear();
    }
}

fn command(mode: &str, name: &str) -> StdioCommand {
    let exe = std::env::current_exe().expect("bench binary path");
    StdioCommand::new(exe)
        .env(ENV, mode)
        .env("CGP_BENCH_NAME", name)
}

fn query() -> ContextQuery {
    ContextQuery::new("how is the retry policy configured?", 4, 1000)
}

fn far() -> Instant {
    Instant::now() + Duration::from_secs(30)
}

/// Spawn the trivial provider with raw pipes and read its ack: the cost of
/// the provider process itself, without the host (baseline).
async fn raw_provider(
    mode: &str,
) -> (
    tokio::process::Child,
    tokio::process::ChildStdin,
    BufReader<tokio::process::ChildStdout>,
) {
    raw_provider_with(mode, false).await
}

/// [`raw_provider`], optionally forced onto `fork` + `exec` (a no-op
/// `pre_exec` hook rules out `posix_spawn`), to show what that path costs.
async fn raw_provider_with(
    mode: &str,
    fork: bool,
) -> (
    tokio::process::Child,
    tokio::process::ChildStdin,
    BufReader<tokio::process::ChildStdout>,
) {
    let exe = std::env::current_exe().expect("bench binary path");
    let mut cmd = std::process::Command::new(exe);
    cmd.env(ENV, mode)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    if fork {
        use std::os::unix::process::CommandExt;
        // SAFETY: the hook does nothing, so it is async-signal-safe.
        #[allow(unsafe_code)] // a bench-only hook, to measure the fork path
        unsafe {
            cmd.pre_exec(|| Ok(()));
        }
    }
    let mut child = tokio::process::Command::from(cmd)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    stdin
        .write_all(b"{\"type\":\"handshake\",\"protocol_version\":\"contextgraph/1.0-draft\"}\n")
        .await
        .unwrap();
    let mut ack = Vec::new();
    stdout.read_until(b'\n', &mut ack).await.unwrap();
    (child, stdin, stdout)
}

fn rtt(c: &mut Criterion, rt: &Runtime) {
    let mut g = c.benchmark_group("rtt");
    g.sample_size(30).measurement_time(Duration::from_secs(4));
    // Baseline: the same bytes through a pipe echo.
    let line = {
        let mut l =
            serde_json::to_vec(&serde_json::json!({"type": "query", "query": query()})).unwrap();
        l.push(b'\n');
        l
    };
    g.bench_function("raw_pipe_echo", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut child = tokio::process::Command::new("cat")
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .kill_on_drop(true)
                    .spawn()
                    .unwrap();
                let mut stdin = child.stdin.take().unwrap();
                let mut stdout = BufReader::new(child.stdout.take().unwrap());
                let mut buf = Vec::new();
                let start = StdInstant::now();
                for _ in 0..iters {
                    stdin.write_all(&line).await.unwrap();
                    stdin.flush().await.unwrap();
                    buf.clear();
                    stdout.read_until(b'\n', &mut buf).await.unwrap();
                }
                start.elapsed()
            })
        })
    });
    // Baseline: the same query written straight to the trivial provider,
    // its reply read back, no host in between.
    g.bench_function("raw_pipe_to_provider", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let (_child, mut stdin, mut stdout) = raw_provider("lockstep").await;
                let mut buf = Vec::new();
                let start = StdInstant::now();
                for _ in 0..iters {
                    stdin.write_all(&line).await.unwrap();
                    buf.clear();
                    stdout.read_until(b'\n', &mut buf).await.unwrap();
                }
                start.elapsed()
            })
        })
    });
    let provider = rt.block_on(async {
        let (p, _) = StdioProvider::start(command("lockstep", "trivial"), StdioOptions::default())
            .await
            .expect("trivial provider starts");
        p
    });
    let q = query();
    g.bench_function("lockstep_query", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = StdInstant::now();
                for _ in 0..iters {
                    provider.query(&q, far()).await.expect("answer");
                }
                start.elapsed()
            })
        })
    });
    rt.block_on(provider.shutdown());
    g.finish();
}

fn pipelined(c: &mut Criterion, rt: &Runtime) {
    let mut g = c.benchmark_group("pipelined");
    g.sample_size(20).measurement_time(Duration::from_secs(5));
    g.throughput(Throughput::Elements(1));
    for (mode, label) in [
        ("correlated", "correlated_64_in_flight"),
        ("minimal", "minimal_64_in_flight"),
    ] {
        let provider = Arc::new(rt.block_on(async {
            let (p, _) = StdioProvider::start(command(mode, "trivial"), StdioOptions::default())
                .await
                .expect("trivial provider starts");
            p
        }));
        g.bench_function(label, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = StdInstant::now();
                    let workers = 64u64;
                    let mut set = tokio::task::JoinSet::new();
                    for w in 0..workers {
                        let p = Arc::clone(&provider);
                        let n = iters / workers + u64::from(w < iters % workers);
                        set.spawn(async move {
                            let q = query();
                            for _ in 0..n {
                                p.query(&q, far()).await.expect("answer");
                            }
                        });
                    }
                    while set.join_next().await.is_some() {}
                    start.elapsed()
                })
            })
        });
        rt.block_on(provider.shutdown());
    }
    g.finish();
}

/// One correlated query line, as the host would send it.
fn query_line(id: u64) -> Vec<u8> {
    let mut l = serde_json::to_vec(
        &serde_json::json!({"type": "query", "id": format!("q{id}"), "query": query()}),
    )
    .unwrap();
    l.push(b'\n');
    l
}

fn fanout(c: &mut Criterion, rt: &Runtime) {
    let mut g = c.benchmark_group("fanout");
    g.sample_size(30).measurement_time(Duration::from_secs(4));
    // Baseline: 16 minimal providers behind raw pipes; the query line is
    // written to each, then one reply read from each. No host logic: what
    // is left is the pipes, the provider processes and the scheduler.
    for (count, label) in [(1usize, "raw_1_minimal_pipe"), (16, "raw_16_minimal_pipes")] {
        let mut sessions = rt.block_on(async {
            let mut v = Vec::new();
            for _ in 0..count {
                v.push(raw_provider("minimal").await);
            }
            v
        });
        let line = query_line(1);
        g.bench_function(label, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut buf = Vec::new();
                    let start = StdInstant::now();
                    for _ in 0..iters {
                        for (_, stdin, _) in sessions.iter_mut() {
                            stdin.write_all(&line).await.unwrap();
                        }
                        for (_, _, stdout) in sessions.iter_mut() {
                            buf.clear();
                            stdout.read_until(b'\n', &mut buf).await.unwrap();
                        }
                    }
                    start.elapsed()
                })
            })
        });
    }
    for (count, mode, label) in [
        (1usize, "correlated", "1_providers"),
        (16, "correlated", "16_providers"),
        (1, "minimal", "1_minimal_provider"),
        (16, "minimal", "16_minimal_providers"),
    ] {
        let host = rt.block_on(async {
            let mut host = Host::new(HostOptions::default());
            for i in 0..count {
                let name = format!("trivial-{i}");
                let client = Arc::new(StdioProvider::new(
                    command(mode, &name),
                    StdioOptions::default(),
                ));
                host.add(client, Duration::from_secs(10))
                    .await
                    .expect("trivial provider starts");
            }
            host
        });
        let q = query();
        g.bench_function(label, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = StdInstant::now();
                    for _ in 0..iters {
                        let report = host.query_all(&q, Duration::from_secs(30)).await;
                        assert_eq!(report.providers.len(), count);
                    }
                    start.elapsed()
                })
            })
        });
        rt.block_on(host.shutdown());
    }
    g.finish();
}

/// The 16-provider fan-out and its raw baseline on a current-thread runtime
/// (everything on the bench's thread), against the two-worker one above.
fn fanout_current_thread(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut g = c.benchmark_group("fanout_current_thread");
    g.sample_size(30).measurement_time(Duration::from_secs(4));
    let mut sessions = rt.block_on(async {
        let mut v = Vec::new();
        for _ in 0..16 {
            v.push(raw_provider("minimal").await);
        }
        v
    });
    let line = query_line(1);
    g.bench_function("raw_16_minimal_pipes", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut buf = Vec::new();
                let start = StdInstant::now();
                for _ in 0..iters {
                    for (_, stdin, _) in sessions.iter_mut() {
                        stdin.write_all(&line).await.unwrap();
                    }
                    for (_, _, stdout) in sessions.iter_mut() {
                        buf.clear();
                        stdout.read_until(b'\n', &mut buf).await.unwrap();
                    }
                }
                start.elapsed()
            })
        })
    });
    drop(sessions);
    let host = rt.block_on(async {
        let mut host = Host::new(HostOptions::default());
        for i in 0..16 {
            let client = Arc::new(StdioProvider::new(
                command("minimal", &format!("trivial-{i}")),
                StdioOptions::default(),
            ));
            host.add(client, Duration::from_secs(10))
                .await
                .expect("trivial provider starts");
        }
        host
    });
    let q = query();
    g.bench_function("16_minimal_providers", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = StdInstant::now();
                for _ in 0..iters {
                    let report = host.query_all(&q, Duration::from_secs(30)).await;
                    assert_eq!(report.providers.len(), 16);
                }
                start.elapsed()
            })
        })
    });
    rt.block_on(host.shutdown());
    g.finish();
}

fn spawn(c: &mut Criterion, rt: &Runtime) {
    let mut g = c.benchmark_group("spawn");
    g.sample_size(20).measurement_time(Duration::from_secs(5));
    // Baseline: what the OS charges to start, run and reap a process that
    // does nothing (fork/exec or posix_spawn, exec, exit, wait).
    g.bench_function("bin_true", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = StdInstant::now();
                for _ in 0..iters {
                    let status = tokio::process::Command::new("/bin/true")
                        .status()
                        .await
                        .expect("/bin/true runs");
                    assert!(status.success());
                }
                start.elapsed()
            })
        })
    });
    for (mode, fork, label) in [
        ("correlated", false, "raw_spawn_and_ack"),
        ("minimal", false, "raw_minimal_spawn_and_ack"),
        ("minimal", true, "raw_minimal_fork_exec_and_ack"),
    ] {
        g.bench_function(label, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let start = StdInstant::now();
                        let session = raw_provider_with(mode, fork).await;
                        total += start.elapsed();
                        drop(session);
                    }
                    total
                })
            })
        });
    }
    // The provider named by a bare file name found through its PATH, as a
    // configuration usually names a program.
    let exe = std::env::current_exe().expect("bench binary path");
    let bare = || {
        let dir = exe.parent().expect("bench binary directory");
        let name = exe.file_name().expect("bench binary name");
        StdioCommand::new(name)
            .env("PATH", dir)
            .env(ENV, "minimal")
            .env("CGP_BENCH_NAME", "trivial")
    };
    for (make, label) in [
        (
            Box::new(|| command("correlated", "trivial")) as Box<dyn Fn() -> StdioCommand>,
            "spawn_and_handshake",
        ),
        (
            Box::new(|| command("minimal", "trivial")),
            "minimal_spawn_and_handshake",
        ),
        (Box::new(bare), "minimal_spawn_and_handshake_bare_name"),
    ] {
        g.bench_function(label, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let start = StdInstant::now();
                        let provider = StdioProvider::new(make(), StdioOptions::default());
                        provider.ready(far()).await.expect("handshake");
                        total += start.elapsed();
                        drop(provider); // kills the process group, untimed
                    }
                    total
                })
            })
        });
    }
    // 16 at once, as a host starting its providers does; each figure is
    // per provider (the batch's wall time over 16). Raw baseline first.
    const BATCH: u32 = 16;
    g.bench_function("raw_16_concurrent_minimal_per_provider", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = StdInstant::now();
                    let mut set = tokio::task::JoinSet::new();
                    for _ in 0..BATCH {
                        set.spawn(raw_provider("minimal"));
                    }
                    let sessions = set.join_all().await;
                    total += start.elapsed() / BATCH;
                    drop(sessions);
                }
                total
            })
        })
    });
    g.bench_function("16_concurrent_minimal_per_provider", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = StdInstant::now();
                    let mut set = tokio::task::JoinSet::new();
                    for i in 0..BATCH {
                        set.spawn(async move {
                            let p = StdioProvider::new(
                                command("minimal", &format!("trivial-{i}")),
                                StdioOptions::default(),
                            );
                            p.ready(far()).await.expect("handshake");
                            p
                        });
                    }
                    let providers = set.join_all().await;
                    total += start.elapsed() / BATCH;
                    drop(providers);
                }
                total
            })
        })
    });
    g.finish();
}

fn main() {
    if let Ok(mode) = std::env::var(ENV) {
        provider_main(&mode);
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut c = Criterion::default().configure_from_args();
    rtt(&mut c, &rt);
    pipelined(&mut c, &rt);
    fanout(&mut c, &rt);
    fanout_current_thread(&mut c);
    spawn(&mut c, &rt);
    c.final_summary();
}
