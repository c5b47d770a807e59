//! H4: a provider that declared correlation is served concurrently, every
//! reply echoing its request id verbatim, within the in-flight bound.

use std::collections::HashSet;
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use std::thread;

use crate::common::concurrency::{jitter, Occupancy};
use crate::common::{echo_goal, frame_ids, query_line, Host, TestProvider};
use contextgraph_provider_sdk::{ProviderError, ServeOptions};

#[test]
fn h4_fifty_in_flight_queries_are_answered_with_their_own_ids() {
    let provider = TestProvider::new("pipelined").correlated().on_query(|q| {
        thread::sleep(jitter(&q.goal, 8));
        Ok(echo_goal(q))
    });
    let mut host = Host::handshaken(provider, ServeOptions::default());
    for i in 0..50 {
        host.send(&query_line(
            Some(&format!("req-{i}")),
            &format!("goal {i}"),
            5,
            100,
        ));
    }
    let mut seen = HashSet::new();
    let mut order = Vec::new();
    for _ in 0..50 {
        let reply = host.recv();
        let id = reply["id"]
            .as_str()
            .expect("correlated reply carries an id")
            .to_owned();
        let n: usize = id
            .strip_prefix("req-")
            .expect("echoed verbatim")
            .parse()
            .unwrap();
        assert_eq!(
            frame_ids(&reply),
            [format!("frame-for:goal {n}")],
            "reply {id} carries another query's frames"
        );
        assert!(seen.insert(id.clone()), "{id} answered twice");
        order.push(n);
    }
    assert_eq!(seen.len(), 50);
    eprintln!("reply order: {order:?}");
}

#[test]
fn h4_ids_are_echoed_verbatim_whatever_they_look_like() {
    let mut host = Host::handshaken(
        TestProvider::new("verbatim").correlated(),
        ServeOptions::default(),
    );
    for id in ["Q 1", "ünïcödé-7", "{\"not\":\"json\"}", "0"] {
        host.send(&query_line(Some(id), "g", 5, 100));
        assert_eq!(host.recv()["id"], id);
    }
}

#[test]
fn h4_correlated_queries_really_run_concurrently() {
    // Each query waits until ten are inside the provider at once: a runner
    // that served them one at a time would never get there.
    let occupancy = Arc::new(Occupancy::default());
    let inside = Arc::clone(&occupancy);
    let provider = TestProvider::new("concurrent")
        .correlated()
        .on_query(move |q| {
            inside.enter();
            let together = inside.wait_for(10);
            inside.leave();
            if together {
                Ok(echo_goal(q))
            } else {
                Err(ProviderError::internal(
                    "queries were not served concurrently",
                ))
            }
        });
    let mut host = Host::handshaken(provider, ServeOptions::default().with_max_workers(10));
    for i in 0..10 {
        host.send(&query_line(
            Some(&format!("c{i}")),
            &format!("g{i}"),
            5,
            100,
        ));
    }
    for _ in 0..10 {
        let reply = host.recv();
        assert_eq!(reply["type"], "frames", "{reply}");
    }
    assert_eq!(occupancy.peak(), 10);
}

#[test]
fn in_flight_requests_never_exceed_max_in_flight() {
    let occupancy = Arc::new(Occupancy::default());
    let inside = Arc::clone(&occupancy);
    let provider = TestProvider::new("bounded")
        .correlated()
        .on_query(move |q| {
            inside.enter();
            // Hold the slot until the limit is reached, so the bound is exercised.
            inside.wait_for(3);
            thread::sleep(jitter(&q.goal, 3));
            inside.leave();
            Ok(echo_goal(q))
        });
    let mut host = Host::handshaken(
        provider,
        ServeOptions::default()
            .with_max_in_flight(3)
            .with_max_workers(64),
    );
    for i in 0..30 {
        host.send(&query_line(
            Some(&format!("b{i}")),
            &format!("g{i}"),
            5,
            100,
        ));
    }
    let ids: HashSet<String> = (0..30)
        .map(|_| host.recv()["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 30);
    assert_eq!(
        occupancy.peak(),
        3,
        "more than max_in_flight requests ran at once, or the bound was never reached"
    );
}

#[test]
fn h4_correlated_replies_without_request_id_carry_none() {
    let mut host = Host::handshaken(
        TestProvider::new("no-id").correlated(),
        ServeOptions::default(),
    );
    host.send(&query_line(None, "g", 5, 100));
    let reply = host.recv();
    assert_eq!(reply["type"], "frames");
    assert!(reply.get("id").is_none(), "{reply}");
}

#[test]
fn backpressure_reading_pauses_while_max_in_flight_requests_are_outstanding() {
    let occupancy = Arc::new(Occupancy::default());
    let inside = Arc::clone(&occupancy);
    let (release, gate) = channel::<()>();
    let gate = Arc::new(Mutex::new(gate));
    let provider = TestProvider::new("backpressure")
        .correlated()
        .on_query(move |q| {
            inside.enter();
            let _ = gate.lock().unwrap().recv();
            inside.leave();
            Ok(echo_goal(q))
        });
    let mut host = Host::handshaken(
        provider,
        ServeOptions::default()
            .with_max_in_flight(2)
            .with_max_workers(64),
    );
    // Two queries fill the pool, a third waits for a slot, and the junk line
    // behind it would get an immediate bad_request if it were read.
    for i in 0..3 {
        host.send(&query_line(
            Some(&format!("q{i}")),
            &format!("g{i}"),
            5,
            100,
        ));
    }
    host.send("junk behind a full pool");
    assert!(occupancy.wait_for(2));
    release.send(()).unwrap();
    let first = host.recv();
    assert_eq!(
        first["type"], "frames",
        "a line was read while the pool was full: {first}"
    );
    release.send(()).unwrap();
    release.send(()).unwrap();
    let mut rest: Vec<String> = (0..3)
        .map(|_| {
            let r = host.recv();
            r.get("code").map_or_else(
                || r["id"].as_str().unwrap().to_owned(),
                |c| c.as_str().unwrap().to_owned(),
            )
        })
        .collect();
    rest.sort();
    assert_eq!(rest.len(), 3);
    assert!(rest.contains(&"bad_request".to_owned()), "{rest:?}");
    assert_eq!(occupancy.peak(), 2);
}

#[test]
fn worker_threads_never_exceed_max_workers() {
    let occupancy = Arc::new(Occupancy::default());
    let inside = Arc::clone(&occupancy);
    let provider = TestProvider::new("few-workers")
        .correlated()
        .on_query(move |q| {
            inside.enter();
            thread::sleep(jitter(&q.goal, 2));
            inside.leave();
            Ok(echo_goal(q))
        });
    let mut host = Host::handshaken(provider, ServeOptions::default().with_max_workers(2));
    for i in 0..20 {
        host.send(&query_line(
            Some(&format!("w{i}")),
            &format!("g{i}"),
            5,
            100,
        ));
    }
    let ids: HashSet<String> = (0..20)
        .map(|_| host.recv()["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 20, "every queued request is still answered");
    assert!(
        occupancy.peak() <= 2,
        "{} calls ran at once on 2 workers",
        occupancy.peak()
    );
}
