//! R1: every malformed line is answered with `bad_request` and the next
//! valid query is still answered; unknown notifications are ignored.

use crate::common::{expect_error, frame_ids, query_line, Host, TestProvider};
use contextgraph_provider_sdk::ServeOptions;

/// Send `bad`, expect a `bad_request` (returned), then check a valid query
/// right after it is answered.
fn bad_then_good(host: &mut Host, bad: &[u8], probe: &str) -> serde_json::Value {
    host.send_bytes(bad);
    host.send_bytes(b"\n");
    let reply = host.recv();
    expect_error(&reply, "bad_request");
    host.send(&query_line(Some(probe), probe, 5, 100));
    let next = host.recv();
    assert_eq!(
        frame_ids(&next),
        [format!("frame-for:{probe}")],
        "after {:?}",
        String::from_utf8_lossy(bad)
    );
    reply
}

fn host() -> Host {
    Host::handshaken(
        TestProvider::new("sturdy").correlated(),
        ServeOptions::default().with_max_line_bytes(4096),
    )
}

#[test]
fn r1_not_json() {
    let reply = bad_then_good(&mut host(), b"this is not json", "after-garbage");
    let message = reply["message"].as_str().unwrap();
    assert!(message.contains("not JSON"), "{message}");
    assert!(message.contains("sturdy"), "{message}");
}

#[test]
fn r1_truncated_json() {
    bad_then_good(
        &mut host(),
        br#"{"type":"query","id":"t1","query":{"goal":"x","#,
        "after-truncated",
    );
}

#[test]
fn r1_json_that_is_not_an_object() {
    bad_then_good(&mut host(), b"[1,2,3]", "after-array");
}

#[test]
fn r1_wrong_member_types_echo_the_recovered_id() {
    let reply = bad_then_good(
        &mut host(),
        br#"{"type":"query","id":"wrong-types","query":{"goal":42,"max_frames":"five","max_tokens":-1}}"#,
        "after-wrong-types",
    );
    assert_eq!(reply["id"], "wrong-types");
}

#[test]
fn r1_missing_type_member() {
    bad_then_good(
        &mut host(),
        br#"{"id":"no-type","query":{}}"#,
        "after-no-type",
    );
}

#[test]
fn r1_invalid_utf8() {
    let reply = bad_then_good(
        &mut host(),
        b"{\"type\":\"query\",\"id\":\"\xff\xfe\"}",
        "after-utf8",
    );
    assert!(
        reply["message"].as_str().unwrap().contains("UTF-8"),
        "{reply}"
    );
}

#[test]
fn r1_oversized_line_with_a_small_cap() {
    let mut line = br#"{"type":"query","id":"huge","query":{"goal":""#.to_vec();
    line.extend(std::iter::repeat_n(b'x', 10_000));
    line.extend_from_slice(br#"","max_frames":1,"max_tokens":1}}"#);
    let reply = bad_then_good(&mut host(), &line, "after-oversized");
    let message = reply["message"].as_str().unwrap();
    assert!(message.contains("4096"), "{message}");
}

#[test]
fn r1_unknown_type_with_id_is_bad_request() {
    let reply = bad_then_good(
        &mut host(),
        br#"{"type":"resolve","id":"r1","ref":"x"}"#,
        "after-unknown",
    );
    assert_eq!(reply["id"], "r1");
    assert!(
        reply["message"].as_str().unwrap().contains("resolve"),
        "{reply}"
    );
}

#[test]
fn r1_unknown_type_without_id_is_ignored() {
    let mut host = host();
    host.send(r#"{"type":"subscribe","topic":"everything"}"#);
    host.send(&query_line(Some("probe"), "probe", 5, 100));
    // The first reply is the probe's: the notification got none.
    assert_eq!(host.recv()["id"], "probe");
}

#[test]
fn incoming_error_envelopes_are_ignored() {
    let mut host = host();
    host.send(r#"{"type":"error","code":"internal","message":"host had a bad day"}"#);
    host.send(&query_line(Some("probe"), "probe", 5, 100));
    assert_eq!(host.recv()["id"], "probe");
}

#[test]
fn host_only_envelopes_sent_to_a_provider_are_bad_request() {
    let mut host = host();
    for line in [
        r#"{"type":"frames","id":"f1","result":{"frames":[],"truncated":false}}"#,
        r#"{"type":"verified","response":{"verdicts":[]}}"#,
        r#"{"type":"handshake_ack","protocol_version":"contextgraph/1.0-draft","provider":{"name":"x","version":"1","data_flow":{}},"capabilities":{"query":{"kinds":[]}}}"#,
    ] {
        bad_then_good(&mut host, line.as_bytes(), "after-host-only");
    }
}

#[test]
fn r1_blank_lines_and_crlf_are_tolerated() {
    let mut host = host();
    host.send_bytes(b"\n\r\n   \n");
    host.send_bytes(format!("{}\r\n", query_line(Some("crlf"), "crlf", 5, 100)).as_bytes());
    assert_eq!(host.recv()["id"], "crlf");
}
