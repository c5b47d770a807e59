//! What the workspace provider would refuse is never served from history:
//! secret paths, secrets in diffs (also once removed), ignored files.

use contextgraph_types::ContextFrame;

use crate::repo::{ask, aws_key, story, Op, TestRepo, DAY, T0};

fn text_of(frames: &[ContextFrame]) -> String {
    serde_json::to_string(frames).expect("json")
}

#[test]
fn a_secret_committed_and_removed_is_never_served() {
    let r = TestRepo::new();
    let s = story(&r);
    let p = r.open();
    let key = aws_key();
    for goal in [
        "what changed: deployment credentials",
        "what changed: deploy aws",
        "what changed: aws access key",
        "what changed: env deploy token",
        "what changed: remove deployment credentials aws txt",
    ] {
        let frames = ask(&p, goal);
        let all = text_of(&frames);
        assert!(!all.contains(&key), "{goal}: the key was served: {all}");
        assert!(
            !all.contains("hunter2"),
            "{goal}: the dotenv value was served"
        );
        assert!(!all.contains(".env"), "{goal}: a secret path was listed");
        // The commits themselves may be served (their messages hold no
        // secret), without the diff that does.
        if goal == "what changed: deployment credentials" {
            assert!(
                frames.iter().any(|f| f.id == s.add_credentials.to_string()),
                "{goal}: {all}"
            );
        }
        for f in &frames {
            if f.id.starts_with(&s.add_credentials.to_string())
                || f.id.starts_with(&s.remove_credentials.to_string())
            {
                assert!(!f.id.contains(':'), "{goal}: a diff frame {}", f.id);
            }
        }
    }
    // Anchoring on the file does not bring its diff either.
    use contextgraph_provider_sdk::Provider;
    let mut q = contextgraph_types::ContextQuery::new("aws", 50, 50_000);
    q.anchors = vec!["deploy/aws.txt".into()];
    let all = text_of(&p.query(&q).expect("query").frames);
    assert!(!all.contains(&key));
}

#[test]
fn a_secret_in_a_message_keeps_the_commit_out() {
    let r = TestRepo::new();
    story(&r);
    let key = aws_key();
    r.commit(
        &format!("Rotate the deploy key, old one was {key}"),
        T0 + 8 * DAY,
        &[Op::Write("NOTES.md", "rotated\n")],
    );
    let p = r.open();
    let all = text_of(&ask(&p, "what changed: rotate deploy key"));
    assert!(!all.contains(&key));
    assert!(!all.contains("Rotate the deploy key"));
}

#[test]
fn ignored_files_history_is_not_served() {
    let r = TestRepo::new();
    story(&r);
    r.commit(
        "Add generated report output",
        T0 + 8 * DAY,
        &[Op::Write("out/report.txt", "report numbers\n")],
    );
    r.commit(
        "Ignore the output folder",
        T0 + 9 * DAY,
        &[Op::Write(".gitignore", "out/\n")],
    );
    let p = r.open();
    let all = text_of(&ask(&p, "what changed: generated report output"));
    assert!(!all.contains("out/report.txt"), "{all}");
    assert!(!all.contains("Add generated report output"), "{all}");
}
