//! R2: `shutdown` and end of input both end serving with `Ok(())` after
//! in-flight work is answered and flushed; the grace is bounded.

use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{echo_goal, frame_ids, query_line, Host, TestProvider};
use contextgraph_provider_sdk::{ServeError, ServeOptions};

#[test]
fn r2_shutdown_returns_ok_and_closes_the_output() {
    let mut host = Host::handshaken(TestProvider::new("tidy"), ServeOptions::default());
    host.send(r#"{"type":"shutdown"}"#);
    host.finish().expect("clean shutdown is Ok");
    assert!(host.output_ended());
}

#[test]
fn r2_end_of_input_returns_ok() {
    let mut host = Host::handshaken(TestProvider::new("tidy"), ServeOptions::default());
    host.close_input();
    host.finish().expect("EOF is Ok");
    assert!(host.output_ended());
}

#[test]
fn r2_end_of_input_before_any_handshake_returns_ok() {
    let mut host = Host::start(TestProvider::new("tidy"));
    host.close_input();
    host.finish().expect("EOF is Ok");
}

#[test]
fn r2_lines_after_shutdown_are_not_read() {
    let mut host = Host::handshaken(TestProvider::new("tidy"), ServeOptions::default());
    host.send(&format!(
        "{{\"type\":\"shutdown\"}}\n{}",
        query_line(None, "late", 5, 100)
    ));
    host.finish().expect("Ok");
    assert!(host.output_ended(), "a query after shutdown was answered");
}

/// A correlated provider whose queries block until the test releases them.
fn gated() -> (
    TestProvider,
    Arc<Mutex<std::sync::mpsc::Receiver<()>>>,
    std::sync::mpsc::Sender<()>,
) {
    let (release, gate) = channel::<()>();
    let gate = Arc::new(Mutex::new(gate));
    let g = Arc::clone(&gate);
    let provider = TestProvider::new("slow").correlated().on_query(move |q| {
        let _ = g.lock().unwrap().recv();
        Ok(echo_goal(q))
    });
    (provider, gate, release)
}

#[test]
fn r2_in_flight_work_is_answered_before_shutdown_completes() {
    let (provider, _gate, release) = gated();
    let mut host = Host::handshaken(
        provider,
        ServeOptions::default().with_shutdown_grace(Duration::from_secs(60)),
    );
    host.send(&query_line(Some("slow-1"), "slow", 5, 100));
    host.send(r#"{"type":"shutdown"}"#);
    release.send(()).unwrap();
    let reply = host.recv();
    assert_eq!(reply["id"], "slow-1");
    assert_eq!(frame_ids(&reply), ["frame-for:slow"]);
    host.finish().expect("Ok");
}

#[test]
fn r2_the_shutdown_grace_is_bounded() {
    let (provider, _gate, _release) = gated();
    let mut host = Host::handshaken(
        provider,
        ServeOptions::default().with_shutdown_grace(Duration::from_millis(50)),
    );
    host.send(&query_line(Some("stuck"), "stuck", 5, 100));
    host.send(r#"{"type":"shutdown"}"#);
    // The query never finishes; serve still returns (within PATIENCE).
    host.finish().expect("Ok after the grace");
    assert!(host.output_ended());
}

#[test]
fn a_host_that_stops_reading_ends_serving_with_an_output_error() {
    let mut host = Host::handshaken(
        TestProvider::new("deaf-host").correlated(),
        ServeOptions::default(),
    );
    host.close_output();
    // Keep the input open: the runner must notice the dead output by itself
    // (at the latest when the next line arrives) and stop reading, which is
    // when sending starts to fail. A runner that never noticed would read
    // all 10,000 lines and then hang waiting for more.
    let mut sent = 0;
    while sent < 10_000 && host.try_send(&query_line(Some(&format!("q{sent}")), "unheard", 5, 100))
    {
        sent += 1;
    }
    assert!(
        sent < 10_000,
        "the runner kept reading for a host that cannot hear it"
    );
    match host.finish() {
        Err(ServeError::Output(_)) => {}
        other => panic!("expected an output error, got {other:?}"),
    }
}
