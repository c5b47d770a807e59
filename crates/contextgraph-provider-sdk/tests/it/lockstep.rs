//! H4, lock-step side: a provider that did not declare correlation is served
//! strictly one request at a time, in order, and its replies carry no id.

use std::sync::Arc;
use std::thread;

use crate::common::concurrency::{jitter, Occupancy};
use crate::common::{echo_goal, frame_ids, query_line, Host, TestProvider};
use contextgraph_provider_sdk::ServeOptions;

#[test]
fn h4_lock_step_replies_come_in_request_order_without_ids() {
    let occupancy = Arc::new(Occupancy::default());
    let inside = Arc::clone(&occupancy);
    let provider = TestProvider::new("lockstep").on_query(move |q| {
        inside.enter();
        thread::sleep(jitter(&q.goal, 4));
        inside.leave();
        Ok(echo_goal(q))
    });
    let mut host = Host::handshaken(provider, ServeOptions::default());
    // Pipelined anyway (a well-behaved host would not), and with ids it
    // should not have sent: order and the absence of ids must still hold.
    for i in 0..20 {
        host.send(&query_line(
            Some(&format!("x{i}")),
            &format!("goal {i}"),
            5,
            100,
        ));
    }
    for i in 0..20 {
        let reply = host.recv();
        assert!(
            reply.get("id").is_none(),
            "lock-step reply carries an id: {reply}"
        );
        assert_eq!(frame_ids(&reply), [format!("frame-for:goal {i}")]);
    }
    assert_eq!(
        occupancy.peak(),
        1,
        "a lock-step provider was called concurrently"
    );
}

#[test]
fn h4_lock_step_errors_carry_no_id_either() {
    let mut host = Host::handshaken(
        TestProvider::new("lockstep-errors"),
        ServeOptions::default(),
    );
    host.send(
        r#"{"type":"query","id":"q1","query":{"goal":"g","max_frames":"five","max_tokens":10}}"#,
    );
    let reply = host.recv();
    assert_eq!(reply["code"], "bad_request");
    assert!(reply.get("id").is_none(), "{reply}");
}
