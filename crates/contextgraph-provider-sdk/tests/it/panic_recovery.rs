//! R1: a panic inside the author's `query` is answered as `internal` and the
//! runner keeps serving.

use crate::common::{echo_goal, expect_error, frame_ids, query_line, Host, TestProvider};
use contextgraph_provider_sdk::ServeOptions;

fn panicky() -> TestProvider {
    TestProvider::new("panicky").on_query(|q| {
        if q.goal == "boom" {
            panic!("index out of bounds in the author's code");
        }
        Ok(echo_goal(q))
    })
}

#[test]
fn r1_panic_in_query_is_internal_and_serving_goes_on() {
    let mut host = Host::handshaken(panicky(), ServeOptions::default());
    host.send(&query_line(None, "boom", 5, 100));
    let message = expect_error(&host.recv(), "internal");
    assert!(message.contains("panicked"), "{message}");
    assert!(message.contains("panicky"), "{message}");
    host.send(&query_line(None, "fine", 5, 100));
    assert_eq!(frame_ids(&host.recv()), ["frame-for:fine"]);
}

#[test]
fn r1_panic_in_a_correlated_query_keeps_its_id_and_spares_the_others() {
    let mut host = Host::handshaken(
        panicky().correlated(),
        ServeOptions::default().with_max_in_flight(2),
    );
    for (id, goal) in [
        ("p1", "boom"),
        ("p2", "fine"),
        ("p3", "boom"),
        ("p4", "fine"),
    ] {
        host.send(&query_line(Some(id), goal, 5, 100));
    }
    let mut replies: Vec<(String, String)> = (0..4)
        .map(|_| {
            let r = host.recv();
            let kind = r
                .get("code")
                .and_then(|c| c.as_str())
                .unwrap_or("frames")
                .to_owned();
            (r["id"].as_str().unwrap().to_owned(), kind)
        })
        .collect();
    replies.sort();
    assert_eq!(
        replies,
        [
            ("p1".into(), "internal".into()),
            ("p2".into(), "frames".into()),
            ("p3".into(), "internal".into()),
            ("p4".into(), "frames".into()),
        ]
    );
}

#[test]
fn provider_errors_are_forwarded_with_their_code() {
    let provider = TestProvider::new("picky").on_query(|_| {
        Err(contextgraph_provider_sdk::ProviderError::unsupported_kind(
            "I only serve doc frames",
        ))
    });
    let mut host = Host::handshaken(provider, ServeOptions::default());
    host.send(&query_line(None, "x", 5, 100));
    assert_eq!(
        expect_error(&host.recv(), "unsupported_kind"),
        "I only serve doc frames"
    );
}

#[test]
fn a_provider_error_without_message_still_gets_one() {
    let provider = TestProvider::new("terse")
        .on_query(|_| Err(contextgraph_provider_sdk::ProviderError::unavailable("")));
    let mut host = Host::handshaken(provider, ServeOptions::default());
    host.send(&query_line(None, "x", 5, 100));
    let message = expect_error(&host.recv(), "unavailable");
    assert!(!message.is_empty());
}
