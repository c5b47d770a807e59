//! Three read-only replicas of one artifact behind one nginx upstream (the
//! shipped `deploy/nginx/cgp-shard.conf`): a replica killed under load
//! costs no query, because nginx retries it on another replica
//! (`proxy_next_upstream … non_idempotent`; CGP queries are idempotent).
//! Skipped, loudly, where nginx is not installed, except under CI=true
//! (`.ci/run` installs it), where that fails. Bounded: a few seconds of
//! load from a few clients.

use std::net::SocketAddr;
use std::process::Child;
use std::sync::mpsc::Receiver;
use std::time::Duration;

use crate::common::checkout::Checkout;
use crate::common::http;
use crate::common::load::{Case, Load};
use crate::common::nginx::{nginx_or_skip, Nginx};
use crate::common::serve_http::spawn_announced;
use crate::index::{query, GOALS};

/// Replica processes, killed when dropped (a failed assertion leaves none).
struct Replicas(Vec<(Child, SocketAddr, Option<Receiver<String>>)>);

impl Drop for Replicas {
    fn drop(&mut self) {
        for (child, _, _) in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn start_replicas(co: &Checkout, n: usize) -> Replicas {
    Replicas(
        (0..n)
            .map(|_| {
                let mut c = co.cgp();
                c.args(["serve", "workspace"])
                    .arg(co.dir())
                    .arg("--index")
                    .arg(co.artifact())
                    .args(["--read-only", "--http", "127.0.0.1:0"]);
                let (child, url, rest) = spawn_announced(c);
                (child, http::authority(&url), Some(rest))
            })
            .collect(),
    )
}

#[test]
fn nginx_failover_retries_queries_on_another_replica_when_one_dies() {
    let Some(nginx) =
        nginx_or_skip("nginx::nginx_failover_retries_queries_on_another_replica_when_one_dies")
    else {
        return;
    };
    let co = Checkout::new();
    co.build();
    let mut replicas = start_replicas(&co, 3);
    let addrs = [replicas.0[0].1, replicas.0[1].1, replicas.0[2].1];
    let balancer = Nginx::start(&nginx, &addrs);

    // What every replica answers, asked of one directly.
    let cases: Vec<Case> = GOALS
        .iter()
        .enumerate()
        .map(|(i, goal)| {
            let body = query(i, goal).into_bytes();
            let reply = http::post(addrs[0], "/cgp", &body).unwrap();
            assert_eq!(reply.status, 200, "{}", reply.text());
            Case {
                body,
                expected: reply.body,
            }
        })
        .collect();

    let load = Load::start(balancer.addr, "/cgp", cases, 4, Duration::from_secs(4));
    std::thread::sleep(Duration::from_millis(1500));
    let killed_at = load.start.elapsed();
    let (victim, victim_addr, victim_log) = &mut replicas.0[1];
    victim.kill().unwrap();
    victim.wait().unwrap();
    let samples = load.finish();

    let failed: Vec<String> = samples
        .iter()
        .filter_map(|s| {
            s.outcome
                .as_ref()
                .err()
                .map(|e| format!("at {:?}: {e}", s.at))
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} queries failed through nginx: {:#?}\nnginx: {}",
        failed.len(),
        samples.len(),
        &failed[..failed.len().min(5)],
        balancer.error_log()
    );
    let after = samples.iter().filter(|s| s.at > killed_at).count();
    assert!(
        after > 0 && samples.len() > after,
        "load on both sides of the kill: {} in all, {after} after",
        samples.len()
    );
    // The killed replica was in the rotation, and nginx saw it die (so a
    // query of its went to another replica instead of failing).
    let victim_log = victim_log
        .take()
        .unwrap()
        .recv_timeout(Duration::from_secs(30))
        .unwrap();
    assert!(victim_log.contains("status=200"), "{victim_log}");
    let log = balancer.error_log();
    assert!(
        log.contains(&victim_addr.to_string()),
        "nginx logged no failure of {victim_addr}: {log}"
    );
    // The live replicas still answer a probe through the balancer.
    let probe = http::get(balancer.addr, "/healthz").unwrap();
    assert_eq!(probe.status, 200, "{}", probe.text());
}
