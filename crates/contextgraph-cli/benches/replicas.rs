//! The replica benchmark of issue 28 (not a test: it reports figures).
//!
//! Over a checkout (this repository by default, `CGP_BENCH_REPO` else):
//!
//! 1. `cgp index build` once, timed;
//! 2. start-up: a read-only replica from that artifact, spawned ten times,
//!    timed to its announced URL and to its first `GET /healthz` 200
//!    (target: 300 ms or less);
//! 3. identity: each goal asked of a local `cgp serve workspace` (warm
//!    from the same build's cache) and of a replica, bodies compared byte
//!    for byte;
//! 4. failover: three replicas behind the shipped nginx configuration,
//!    `CGP_BENCH_CLIENTS` clients (20) for `CGP_BENCH_SECS` (60), one
//!    replica SIGKILLed half-way: failed queries (target 0) and p99 before
//!    and after the kill (target: after under 2x before).
//!
//! `cargo bench -p contextgraph-cli --bench replicas` (needs nginx:
//! `apt-get install -y nginx-light`). Every load is bounded in time and
//! sends only to loopback.

#[allow(dead_code)]
#[path = "../tests/it/common/http.rs"]
mod http;
#[allow(dead_code)]
#[path = "../tests/it/common/load.rs"]
mod load;
#[allow(dead_code)]
#[path = "../tests/it/common/nginx.rs"]
mod nginx;
#[allow(dead_code)]
#[path = "../tests/it/common/serve_http.rs"]
mod serve_http;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use load::{quantile, Case, Load};

const CGP: &str = env!("CARGO_BIN_EXE_cgp");

/// Goals about this repository (any checkout answers them somehow).
const GOALS: [&str; 12] = [
    "how is an index artifact checksummed",
    "read the HEAD commit from .git without running git",
    "health endpoint for a load balancer",
    "retry a request with exponential backoff",
    "decode the artifact manifest",
    "bound lengths read from an untrusted file",
    "handshake protocol version",
    "rank frames by score",
    "split identifiers into tokens",
    "watch files for changes and refresh the index",
    "bridge to an MCP server",
    "fit frames into a token budget",
];

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn query(i: usize, goal: &str) -> Vec<u8> {
    format!(
        "{{\"type\":\"query\",\"id\":\"q{i}\",\"query\":{{\"goal\":{goal:?},\"max_frames\":8,\"max_tokens\":2000}}}}"
    )
    .into_bytes()
}

struct Bench {
    repo: PathBuf,
    tmp: tempfile::TempDir,
}

impl Bench {
    fn home(&self) -> PathBuf {
        self.tmp.path().join("home")
    }
    fn artifact(&self) -> PathBuf {
        self.tmp.path().join("repo.cgpidx")
    }
    fn cgp(&self) -> Command {
        let mut c = Command::new(CGP);
        c.env("HOME", self.home())
            .env("XDG_CACHE_HOME", self.home().join(".cache"))
            .env_remove("CONTEXTGRAPH_WORKSPACE_CACHE")
            .stdin(Stdio::null());
        c
    }
    fn replica(&self) -> Command {
        let mut c = self.cgp();
        c.args(["serve", "workspace", "--quiet"])
            .arg(&self.repo)
            .arg("--index")
            .arg(self.artifact())
            .args(["--read-only", "--http", "127.0.0.1:0"]);
        c
    }
}

/// Children killed when dropped.
struct Kids(Vec<(Child, SocketAddr)>);
impl Drop for Kids {
    fn drop(&mut self) {
        for (c, _) in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn spawn(command: Command) -> (Child, SocketAddr) {
    let (child, url, _rest) = serve_http::spawn_announced(command);
    (child, http::authority(&url))
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument of libtest's is ignored.
    let repo = std::env::var_os("CGP_BENCH_REPO")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    let repo = std::fs::canonicalize(&repo).expect("the checkout to index");
    let b = Bench {
        repo,
        tmp: tempfile::tempdir().expect("a temporary directory"),
    };
    std::fs::create_dir_all(b.home()).expect("a private home");
    println!("checkout: {}", b.repo.display());

    // 1. Build once.
    let t = Instant::now();
    let out = b
        .cgp()
        .args(["index", "build"])
        .arg(&b.repo)
        .arg("--out")
        .arg(b.artifact())
        .output()
        .expect("cgp index build");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!(
        "build: {} ({})",
        ms(t.elapsed()),
        String::from_utf8_lossy(&out.stdout).trim()
    );

    // 2. Start-up.
    let mut to_url = Vec::new();
    let mut to_health = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        let (child, addr) = spawn(b.replica());
        to_url.push(t.elapsed());
        loop {
            if http::request(addr, "GET", "/healthz", b"", Duration::from_secs(5))
                .is_ok_and(|r| r.status == 200)
            {
                break;
            }
            assert!(t.elapsed() < Duration::from_secs(30), "never healthy");
            std::thread::sleep(Duration::from_millis(1));
        }
        to_health.push(t.elapsed());
        drop(Kids(vec![(child, addr)]));
    }
    println!(
        "start-up (10 runs): to URL median {} max {}; to /healthz 200 median {} max {} (target <= 300 ms)",
        ms(quantile(&mut to_url, 0.5)),
        ms(quantile(&mut to_url, 1.0)),
        ms(quantile(&mut to_health, 0.5)),
        ms(quantile(&mut to_health, 1.0)),
    );

    // 3. Identity with a local serve at the same commit.
    let mut local = b.cgp();
    local
        .args(["serve", "workspace", "--quiet", "--refresh-secs", "0"])
        .arg(&b.repo)
        .args(["--http", "127.0.0.1:0"]);
    let kids = Kids(vec![spawn(local), spawn(b.replica())]);
    let (local_addr, replica_addr) = (kids.0[0].1, kids.0[1].1);
    let hello = br#"{"type":"handshake","protocol_version":"contextgraph/1.0-draft"}"#;
    http::post(local_addr, "/cgp", hello).expect("the local handshake");
    let mut same = 0;
    let mut cases = Vec::new();
    for (i, goal) in GOALS.iter().enumerate() {
        let body = query(i, goal);
        let a = http::post(local_addr, "/cgp", &body).expect("local answer");
        let r = http::post(replica_addr, "/cgp", &body).expect("replica answer");
        if a == r && a.status == 200 {
            same += 1;
        } else {
            println!("  differs: {goal:?}");
        }
        cases.push(Case {
            body,
            expected: r.body,
        });
    }
    drop(kids);
    println!(
        "identity: {same} of {} answers byte-identical to a local serve",
        GOALS.len()
    );

    // 4. Failover under load.
    let Some(nginx_bin) = nginx::find_nginx() else {
        println!("failover: SKIPPED, nginx is not installed (apt-get install -y nginx-light)");
        return;
    };
    let secs = env_or("CGP_BENCH_SECS", 60);
    let clients = env_or("CGP_BENCH_CLIENTS", 20) as usize;
    let mut kids = Kids((0..3).map(|_| spawn(b.replica())).collect());
    let addrs = [kids.0[0].1, kids.0[1].1, kids.0[2].1];
    let balancer = nginx::Nginx::start(&nginx_bin, &addrs);
    let run = Load::start(
        balancer.addr,
        "/cgp",
        cases,
        clients,
        Duration::from_secs(secs),
    );
    std::thread::sleep(Duration::from_secs(secs / 2));
    let kill_at = run.start.elapsed();
    let _ = kids.0[1].0.kill();
    let _ = kids.0[1].0.wait();
    let samples = run.finish();
    let failed: Vec<&load::Sample> = samples.iter().filter(|s| s.outcome.is_err()).collect();
    for s in failed.iter().take(5) {
        println!("  failed at {:?}: {:?}", s.at, s.outcome);
    }
    let warm = Duration::from_secs(2);
    let pick = |from: Duration, to: Duration| -> Vec<Duration> {
        samples
            .iter()
            .filter(|s| s.at >= from && s.at < to)
            .map(|s| s.latency)
            .collect()
    };
    let mut before = pick(warm, kill_at);
    let mut after = pick(kill_at, Duration::MAX);
    let mut window = pick(kill_at, kill_at + Duration::from_secs(5));
    let p99_before = quantile(&mut before, 0.99);
    let p99_after = quantile(&mut after, 0.99);
    println!(
        "failover: {clients} clients, {secs} s, replica 2 of 3 SIGKILLed at {:.1} s: {} queries, {} failed (target 0); \
         {:.0} queries/s",
        kill_at.as_secs_f64(),
        samples.len(),
        failed.len(),
        samples.len() as f64 / secs as f64
    );
    println!(
        "  p50 before {} after {}; p99 before {} after {} ({:.2}x, target < 2x); p99 in the 5 s after the kill {}",
        ms(quantile(&mut before, 0.5)),
        ms(quantile(&mut after, 0.5)),
        ms(p99_before),
        ms(p99_after),
        p99_after.as_secs_f64() / p99_before.as_secs_f64().max(1e-9),
        ms(quantile(&mut window, 0.99)),
    );
}
