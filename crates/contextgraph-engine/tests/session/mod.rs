//! Sessions (issue 16) through the real engine and the built-in workspace
//! provider: reuse only on an explicit `valid`, changed frames resent with
//! a replacement note, byte-identical blocks across turns (D2), a stored
//! session never trusted blindly.

use std::path::Path;

use contextgraph_config::Config;
use contextgraph_engine::session::{SendReason, Session};
use contextgraph_engine::{ContextRequest, Engine, SessionTurn};

use super::Fixture;

const RETRY: &str = "/// Retries a request with exponential backoff.\npub fn retry_with_backoff(attempts: u32) -> u32 {\n    attempts * 2\n}\n";

fn request(goal: &str) -> ContextRequest {
    ContextRequest {
        goal: goal.into(),
        budget_model_tokens: 4000,
        ..ContextRequest::default()
    }
}

/// The block of `label` in `prompt`, opening line to closing line.
fn block_of(prompt: &str, label: &str) -> Option<String> {
    let start = prompt.find(&format!("label=\"{label}\""))?;
    let open = prompt[..start].rfind("<frame-")?;
    let close_tag = &prompt[open + 1..].split([' ', '>']).next()?.to_owned();
    let end = prompt[open..].find(&format!("</{close_tag}>"))? + open + close_tag.len() + 3;
    Some(prompt[open..end].to_owned())
}

async fn turn(engine: &Engine, session: &mut Session, goal: &str) -> SessionTurn {
    let t = engine
        .context_in_session(session, &request(goal))
        .await
        .unwrap();
    *session = t.next_session().clone();
    t
}

/// An engine on `ws` and a session whose first turn ("retry backoff") was
/// sent `src/retry.rs`'s function at lines 1-4, with that frame's label.
async fn retry_turn(ws: &Path) -> (Engine, Session, String) {
    let engine = Engine::start(&Config::default(), ws).await.unwrap();
    let mut session = Session::new();
    let t1 = turn(&engine, &mut session, "retry backoff").await;
    let label = retry_label(&t1);
    assert!(label.starts_with("src/retry.rs:L1-4 "), "{label}");
    (engine, session, label)
}

fn retry_label(t: &SessionTurn) -> String {
    t.citations
        .iter()
        .find(|c| {
            c.frame.frame_id.starts_with("src/retry.rs#")
                && c.frame.frame_id.ends_with("retry_with_backoff")
        })
        .expect("retry.rs cited")
        .label
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reuse_on_valid_resend_on_change_and_identical_bytes_across_turns() {
    let f = Fixture::new();
    let ws = f.ws();
    let engine = Engine::start(&Config::default(), &ws).await.unwrap();
    let mut session = Session::new();

    let t1 = turn(&engine, &mut session, "retry backoff").await;
    let label = retry_label(&t1);
    let original = block_of(&t1.prompt, &label).expect("retry block sent");
    assert!(t1.sent.iter().all(|s| s.why == SendReason::New));
    assert!(t1.figures.tokens_sent <= u64::from(t1.answer.composition.audit.budget.requested));

    // Same goal: nothing changed, nothing is sent, everything is named.
    let t2 = turn(&engine, &mut session, "retry backoff").await;
    assert!(t2.unchanged.iter().any(|u| u.label == label));
    assert!(t2.prompt.is_empty(), "{}", t2.prompt);
    assert!(t2.notes.contains(&label));
    assert_eq!(t2.figures.frames_revalidated, t1.figures.frames_sent);
    assert!(t2.figures.tokens_saved > 0);
    assert!(t2.figures.tokens_sent < t1.figures.tokens_sent);

    // An edit: resent with a note, never called unchanged.
    write(
        &ws.join("src/retry.rs"),
        &RETRY.replace("attempts * 2", "attempts * 3"),
    );
    let t3 = turn(&engine, &mut session, "retry backoff").await;
    assert!(t3
        .unchanged
        .iter()
        .all(|u| !u.frame.frame_id.starts_with("src/retry.rs#")));
    let changed = t3
        .sent
        .iter()
        .find(|s| s.frame.frame_id.starts_with("src/retry.rs#"))
        .expect("resent");
    assert_eq!(
        changed.why,
        SendReason::Changed {
            replaces: label.clone()
        }
    );
    assert!(t3.notes.contains("replaces the earlier"));
    assert!(t3.prompt.contains("attempts * 3"));

    // Reverted: resent again, byte for byte the block of turn 1 (D2).
    write(&ws.join("src/retry.rs"), RETRY);
    let t4 = turn(&engine, &mut session, "retry backoff").await;
    let label4 = retry_label(&t4);
    assert_eq!(block_of(&t4.prompt, &label4), Some(original.clone()));
    assert_eq!(session.totals().turns, 4);

    // A new session renders the frame with the same bytes too.
    let fresh = engine
        .context_in_session(&Session::new(), &request("retry backoff"))
        .await
        .unwrap();
    assert_eq!(block_of(&fresh.prompt, &label), Some(original));
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_session_is_never_taken_at_its_word() {
    let f = Fixture::new();
    let engine = Engine::start(&Config::default(), &f.ws()).await.unwrap();
    let t1 = engine
        .context_in_session(&Session::new(), &request("retry backoff"))
        .await
        .unwrap();
    let label = retry_label(&t1);
    // Claim the model holds another version of retry.rs, and a frame of a
    // provider that does not exist.
    let mut state: serde_json::Value =
        serde_json::from_slice(&t1.next_session().to_json()).unwrap();
    let held = state["held"].as_array_mut().unwrap();
    for h in held.iter_mut() {
        h["frame"]["content_digest"] = format!("sha256:{}", "0".repeat(64)).into();
    }
    let mut ghost = held[0].clone();
    ghost["frame"]["provider_id"] = "ghost".into();
    ghost["label"] = "ghost label".into();
    held.push(ghost);
    let forged = Session::from_json(&serde_json::to_vec(&state).unwrap()).unwrap();
    let t2 = engine
        .context_in_session(&forged, &request("retry backoff"))
        .await
        .unwrap();
    assert!(t2.unchanged.is_empty(), "{:?}", t2.unchanged);
    assert!(t2
        .sent
        .iter()
        .any(|s| s.label == label && matches!(s.why, SendReason::Changed { .. })));
    assert!(t2.withdrawn.iter().any(|w| w.label == "ghost label"));
    engine.shutdown().await;
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

/// An edit above a held frame moves its lines without changing its bytes:
/// it is not resent, and the model is told its new label, never left
/// citing lines that now hold other text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_whose_lines_moved_is_relabelled_not_resent() {
    let f = Fixture::new();
    let ws = f.ws();
    let (engine, mut session, before) = retry_turn(&ws).await;

    write(
        &ws.join("src/retry.rs"),
        &format!("use std::fmt;\n\nconst LIMIT: u32 = 1;\n\n{RETRY}"),
    );
    let t2 = turn(&engine, &mut session, "retry backoff").await;
    let after = retry_label(&t2);
    assert!(after.starts_with("src/retry.rs:L5-8 "), "{after}");
    assert!(
        t2.sent.iter().all(|s| s.label != after),
        "same bytes: not resent"
    );
    assert!(t2.unchanged.iter().all(|u| u.label != before));
    let moved = t2.moved.iter().find(|m| m.label == after).expect("moved");
    assert_eq!(moved.previous, before);
    assert!(
        t2.notes
            .contains(&format!("\"{before}\" is now \"{after}\"")),
        "{}",
        t2.notes
    );
    assert_eq!(t2.figures.frames_reused, 1 + t2.unchanged.len() as u64);

    // From now on the new label is the held one: listed as unchanged.
    let t3 = turn(&engine, &mut session, "retry backoff").await;
    assert!(
        t3.unchanged.iter().any(|u| u.label == after),
        "{}",
        t3.notes
    );
    assert!(t3.moved.is_empty());
    engine.shutdown().await;
}

/// A held frame outside this turn's answer that changed and moved is
/// resent (found again by its own goal) under the label it has now, not
/// the one it was delivered with: the resent bytes sit at the new lines.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_frame_resent_outside_the_answer_carries_its_current_label() {
    let f = Fixture::new();
    let ws = f.ws();
    write(
        &ws.join("src/config.rs"),
        "/// Parses the settings file into a table of options.\npub fn parse_settings_table(text: &str) -> usize {\n    text.lines().count()\n}\n",
    );
    let (engine, mut session, before) = retry_turn(&ws).await;

    // Two lines above it and a changed body.
    write(
        &ws.join("src/retry.rs"),
        &format!(
            "use std::fmt;\n\n{}",
            RETRY.replace("attempts * 2", "attempts * 3")
        ),
    );
    let t2 = turn(&engine, &mut session, "parse settings table").await;
    let resent = t2
        .sent
        .iter()
        .find(|s| s.frame.frame_id.starts_with("src/retry.rs#"))
        .unwrap_or_else(|| panic!("the changed held frame is resent: {:?}", t2.sent));
    assert!(
        resent.label.starts_with("src/retry.rs:L3-6 "),
        "{}",
        resent.label
    );
    assert_eq!(
        resent.why,
        SendReason::Changed {
            replaces: before.clone()
        }
    );
    let block = block_of(&t2.prompt, &resent.label).expect("block under the new label");
    assert!(block.contains("attempts * 3"), "{block}");
    assert!(
        t2.notes.contains(&format!(
            "\"{}\" replaces the earlier \"{before}\"",
            resent.label
        )),
        "{}",
        t2.notes
    );
    engine.shutdown().await;
}

/// A held frame outside this turn's answer whose bytes are still valid but
/// whose lines moved (an edit above it, in a file this turn shows changed)
/// is found again by its own goal and listed as moved: the model is never
/// left citing lines that now hold other text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_valid_held_frame_outside_the_answer_whose_lines_moved_is_relabelled() {
    const JITTER: &str = "/// Adds random jitter to a delay.\npub fn jitter_delay(delay_ms: u64, seed: u64) -> u64 {\n    delay_ms + seed % 7\n}\n";
    let f = Fixture::new();
    let ws = f.ws();
    write(&ws.join("src/retry.rs"), &format!("{RETRY}\n{JITTER}"));
    write(
        &ws.join("src/config.rs"),
        "/// Parses the settings file into a table of options.\npub fn parse_settings_table(text: &str) -> usize {\n    text.lines().count()\n}\n",
    );
    let engine = Engine::start(&Config::default(), &ws).await.unwrap();
    let mut session = Session::new();
    let jitter_of = |t: &SessionTurn| {
        t.citations
            .iter()
            .find(|c| c.frame.frame_id.ends_with("jitter_delay"))
            .map(|c| c.label.clone())
    };
    let t1 = turn(&engine, &mut session, "random jitter delay seed").await;
    let before = jitter_of(&t1).expect("jitter sent");
    assert!(before.starts_with("src/retry.rs:L6-9 "), "{before}");
    let t2 = turn(&engine, &mut session, "retry backoff").await;
    assert!(retry_label(&t2).starts_with("src/retry.rs:L1-4 "));

    // The function above it grows by a line: jitter_delay's bytes are the
    // same, one line lower.
    write(
        &ws.join("src/retry.rs"),
        &format!(
            "{}\n{JITTER}",
            RETRY.replace(
                "attempts * 2\n",
                "let doubled = attempts * 2;\n    doubled\n"
            )
        ),
    );
    let t3 = turn(&engine, &mut session, "parse settings table").await;
    let moved = t3
        .moved
        .iter()
        .find(|m| m.previous == before)
        .unwrap_or_else(|| panic!("jitter_delay relabelled: {}", t3.notes));
    assert!(
        moved.label.starts_with("src/retry.rs:L7-10 "),
        "{}",
        moved.label
    );
    assert!(t3
        .sent
        .iter()
        .all(|s| !s.frame.frame_id.ends_with("jitter_delay")));
    assert!(t3
        .notes
        .contains(&format!("\"{before}\" is now \"{}\"", moved.label)));
    // Outside this goal's evidence: not counted as reuse for this goal.
    assert_eq!(t3.figures.frames_reused, t3.unchanged.len() as u64);
    // From now on it is held under its new label.
    let t4 = turn(&engine, &mut session, "random jitter delay seed").await;
    assert!(
        t4.unchanged.iter().any(|u| u.label == moved.label),
        "{}",
        t4.notes
    );
    engine.shutdown().await;
}

/// A stdio provider (Python) whose every `content_digest` is well formed but
/// not of the content (D1, which the host repairs), and whose `verify`
/// compares a presented digest with the one it declares, as a provider that
/// hashes its frames its own way would.
const WRONG_DIGEST_PROVIDER: &str = r#"
import hashlib, json, sys
CONTENT = "Retries back off exponentially, doubling the delay each time."
DECLARED = "sha256:" + hashlib.sha256((CONTENT + "!").encode()).hexdigest()
def send(v):
    sys.stdout.write(json.dumps(v) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    t = m.get("type")
    if t == "handshake":
        send({"type": "handshake_ack", "protocol_version": "contextgraph/1.0-draft",
              "provider": {"name": "wrong-digest", "version": "1.0.0",
                           "data_flow": {"reads": True, "writes": False, "egress": False}},
              "capabilities": {"query": {"kinds": ["doc"]}, "verify": True}})
    elif t == "query":
        frame = {"id": "notes:retry", "kind": "doc", "title": "Retry notes", "content": CONTENT,
                 "content_digest": DECLARED, "token_cost": (len(CONTENT.encode()) + 3) // 4,
                 "score": 0.9, "provenance": [], "citation_label": "retry notes"}
        send({"type": "frames", "result": {"frames": [frame], "truncated": False}})
    elif t == "verify":
        verdicts = []
        for f in m["request"]["frames"]:
            ok = f.get("content_digest") == DECLARED
            v = {"frame": f, "status": "valid" if ok else "stale"}
            if not ok:
                v["replacement_digest"] = DECLARED
            verdicts.append(v)
        send({"type": "verified", "response": {"verdicts": verdicts}})
    elif t == "shutdown":
        break
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_whose_digest_the_host_repaired_are_reused_across_turns() {
    let f = Fixture::new();
    let script = f.dir.path().join("wrong_digest.py");
    std::fs::write(&script, WRONG_DIGEST_PROVIDER).unwrap();
    let config = f.config(&format!(
        "[providers.workspace]\nenabled = false\n[providers.notes]\ncommand = \"python3\"\nargs = [{:?}]\n",
        script.display().to_string()
    ));
    let engine = Engine::start(&config, &f.ws()).await.unwrap();
    let mut session = Session::new();
    let t1 = turn(&engine, &mut session, "retry backoff").await;
    assert_eq!(t1.sent.len(), 1, "{:?}", t1.answer.providers);
    assert!(
        t1.answer.providers[0]
            .repairs
            .iter()
            .any(|r| r.contains("D1")),
        "the host repaired the digest: {:?}",
        t1.answer.providers
    );
    let held = session.held()[0].clone();
    assert!(held.declared_digest.is_some(), "{held:?}");
    assert_ne!(held.declared_digest, held.frame.content_digest);

    // Verify presents the provider's own digest: `valid`, so reused.
    let t2 = turn(&engine, &mut session, "retry backoff").await;
    assert!(t2.sent.is_empty(), "resent: {:?}\n{}", t2.sent, t2.notes);
    assert_eq!(t2.unchanged.len(), 1, "{}", t2.notes);
    assert!(!t2.notes.contains("source changed"), "{}", t2.notes);

    // The stored session keeps it.
    let stored = Session::from_json(&session.to_json()).unwrap();
    assert_eq!(stored.held()[0].declared_digest, held.declared_digest);
    engine.shutdown().await;
}
