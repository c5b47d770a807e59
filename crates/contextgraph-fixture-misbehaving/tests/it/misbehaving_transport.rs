//! Transport misbehaviours: `garbage-lines` and `stdout-log`'s cousin
//! framing faults, `endless-line` (a host's line cap), `slow-reply` (a
//! host's deadline).

use crate::common;

use std::time::{Duration, Instant};

use common::{frames_of, roomy_query, Item, Provider, EXIT_DEADLINE, REPLY_DEADLINE};
use serde_json::json;

const LONG: u64 = 17 * 1024 * 1024;

fn expect_prelude(p: &mut Provider) {
    assert_eq!(
        p.next_item(),
        Some(Item::Line(b"this is not an envelope {{{".to_vec()))
    );
    assert_eq!(p.next_item(), Some(Item::Line(Vec::new())), "a blank line");
    match p.next_item() {
        Some(Item::Long(n)) => assert!(n > LONG, "{n}"),
        other => panic!("expected a line over 17 MiB, got {other:?}"),
    }
    assert_eq!(
        p.next_item(),
        Some(Item::Line(br#"{"type":"ping"}"#.to_vec()))
    );
}

#[test]
fn framing_garbage_lines_precede_every_reply_after_a_clean_ack() {
    let mut p = Provider::mode("garbage-lines", &[]);
    p.send(&json!({"type": "handshake", "protocol_version": "contextgraph/1.0-draft"}));
    // The ack is the first line: noise before it would be `stdout-log`'s
    // fault, not this mode's.
    match p.next_item() {
        Some(Item::Line(line)) => {
            let ack: serde_json::Value = serde_json::from_slice(&line).expect("the ack is JSON");
            assert_eq!(ack["type"], "handshake_ack", "{ack}");
        }
        other => panic!("expected the handshake_ack first, got {other:?}"),
    }
    for id in ["q1", "q2"] {
        p.send(&json!({"type": "query", "id": id, "query": roomy_query()}));
        expect_prelude(&mut p);
        frames_of(&p.recv(), id);
    }
}

#[test]
fn line_cap_endless_line_never_ends_and_exits_when_the_pipe_closes() {
    let mut p = Provider::mode("endless-line", &[]);
    let scratch = p.serving_dir();
    p.handshake();
    p.send(&json!({"type": "query", "id": "q1", "query": roomy_query()}));
    let deadline = Instant::now() + REPLY_DEADLINE;
    while p.unterminated_bytes() <= LONG {
        assert!(
            Instant::now() < deadline,
            "only {} bytes arrived",
            p.unterminated_bytes()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(p.try_next_item(), None, "no newline ever came");
    p.close_stdout();
    let status = p
        .wait_exit(EXIT_DEADLINE)
        .expect("exits once the pipe closes");
    assert!(!status.success(), "a broken pipe is a failure exit");
    assert!(!scratch.exists(), "{} left behind", scratch.display());
    assert_eq!(p.temp_entries(), Vec::<std::path::PathBuf>::new());
}

#[test]
fn deadline_slow_reply_waits_delay_ms_before_each_reply() {
    let delay = Duration::from_millis(300);
    let mut p = Provider::mode("slow-reply", &["--delay-ms", "300"]);
    let start = Instant::now();
    p.handshake();
    assert!(
        start.elapsed() >= delay,
        "the ack came after {:?}",
        start.elapsed()
    );
    let start = Instant::now();
    frames_of(&p.query("q", &roomy_query()), "q");
    assert!(
        start.elapsed() >= delay,
        "the reply came after {:?}",
        start.elapsed()
    );
}
