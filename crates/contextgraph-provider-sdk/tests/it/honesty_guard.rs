//! The honesty guard: an answer breaking budget honesty (B1, B3, B4), digests
//! (D1) or the kinds filter (Q1) is replaced by `internal` naming the rules,
//! unless the guard is explicitly turned off.

use crate::common::{expect_error, query_line, Host, TestProvider};
use contextgraph_provider_sdk::{FrameBuilder, ServeOptions};
use contextgraph_types::{ContextFrame, ContextQueryResult, FrameKind};

fn frame(id: &str, content: &str) -> ContextFrame {
    FrameBuilder::new(id, FrameKind::Doc, "Title", content)
        .score(0.5)
        .build()
}

fn lying(mutate: fn(&mut ContextQueryResult)) -> TestProvider {
    TestProvider::new("liar").correlated().on_query(move |_| {
        let mut result = ContextQueryResult {
            frames: vec![frame("a", "twelve bytes"), frame("b", "more content here")],
            truncated: false,
            dropped_estimate: None,
        };
        mutate(&mut result);
        Ok(result)
    })
}

/// Query with a budget of 100 tokens and 5 frames; return the error message.
fn guarded_error(provider: TestProvider, max_tokens: u32) -> String {
    let mut host = Host::handshaken(provider, ServeOptions::default());
    host.send(&query_line(Some("g1"), "goal", 5, max_tokens));
    let reply = host.recv();
    assert_eq!(
        reply["id"], "g1",
        "the error still answers its request: {reply}"
    );
    expect_error(&reply, "internal")
}

#[test]
fn b1_overspending_the_budget_is_withheld() {
    // Honest per-frame costs (3 + 5 tokens) but a budget of 4.
    let message = guarded_error(lying(|_| {}), 4);
    assert!(message.contains("B1 at frames"), "{message}");
    assert!(message.contains("liar"), "{message}");
}

#[test]
fn b3_a_lying_token_cost_is_withheld() {
    let message = guarded_error(lying(|r| r.frames[1].token_cost = 1), 100);
    assert!(message.contains("B3 at frames[1].token_cost"), "{message}");
}

#[test]
fn d1_a_wrong_content_digest_is_withheld() {
    let message = guarded_error(
        lying(|r| r.frames[0].content_digest = Some(format!("sha256:{}", "0".repeat(64)))),
        100,
    );
    assert!(
        message.contains("D1 at frames[0].content_digest"),
        "{message}"
    );
}

#[test]
fn d1_content_changed_after_building_is_withheld() {
    let message = guarded_error(
        lying(|r| r.frames[0].content = Some("twelve bytez".into())),
        100,
    );
    assert!(
        message.contains("D1 at frames[0].content_digest"),
        "{message}"
    );
}

#[test]
fn b4_too_many_frames_is_withheld() {
    let provider = TestProvider::new("liar").on_query(|_| {
        Ok(ContextQueryResult {
            frames: (0..3).map(|i| frame(&format!("f{i}"), "x")).collect(),
            truncated: false,
            dropped_estimate: None,
        })
    });
    let mut host = Host::handshaken(provider, ServeOptions::default());
    host.send(&query_line(None, "goal", 2, 100));
    let message = expect_error(&host.recv(), "internal");
    assert!(message.contains("B4 at frames"), "{message}");
}

#[test]
fn q1_a_frame_of_an_unrequested_kind_is_withheld() {
    let provider = TestProvider::new("liar").on_query(|_| {
        Ok(ContextQueryResult {
            frames: vec![FrameBuilder::new("s", FrameKind::Snippet, "S", "x").build()],
            truncated: false,
            dropped_estimate: None,
        })
    });
    let mut host = Host::handshaken(provider, ServeOptions::default());
    host.send(
        r#"{"type":"query","query":{"goal":"g","kinds":["doc"],"max_frames":5,"max_tokens":100}}"#,
    );
    let message = expect_error(&host.recv(), "internal");
    assert!(message.contains("Q1 at frames[0].kind"), "{message}");
}

#[test]
fn every_violation_is_listed() {
    let message = guarded_error(
        lying(|r| {
            r.frames[0].token_cost = 0;
            r.frames[1].score = 7.0;
        }),
        100,
    );
    assert!(message.contains("B3 at frames[0].token_cost"), "{message}");
    assert!(message.contains("F1 at frames[1].score"), "{message}");
}

#[test]
fn the_guard_off_lets_a_test_double_lie() {
    let mut host = Host::handshaken(
        lying(|r| r.frames[1].token_cost = 1),
        ServeOptions::default().with_honesty(false),
    );
    host.send(&query_line(Some("g1"), "goal", 5, 100));
    let reply = host.recv();
    assert_eq!(reply["type"], "frames", "{reply}");
    assert_eq!(reply["result"]["frames"][1]["token_cost"], 1);
}

#[test]
fn honest_frames_pass_the_guard_untouched() {
    let mut host = Host::handshaken(lying(|_| {}), ServeOptions::default());
    host.send(&query_line(Some("g1"), "goal", 5, 100));
    let reply = host.recv();
    assert_eq!(reply["type"], "frames", "{reply}");
    assert_eq!(reply["result"]["frames"][0]["token_cost"], 3);
    assert_eq!(reply["result"]["frames"][1]["token_cost"], 5);
}
