//! The bridge in-process against the real fixture MCP server on a pipe.

use std::time::Duration;

use contextgraph_mcp::{BridgeOptions, McpBridge};
use contextgraph_provider_sdk::{audit_answer, path_to_file_uri, sha256_digest, Provider};
use contextgraph_types::{ContextQuery, ErrorCode, FrameId, FrameKind, Verdict, VerifyRequest};

fn query(goal: &str) -> ContextQuery {
    ContextQuery::new(goal, 10, 4000)
}

fn bridge(dir: &std::path::Path, extra: &[&str], options: BridgeOptions) -> McpBridge {
    let mut args: Vec<String> = vec![dir.display().to_string()];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    McpBridge::connect(crate::common::fixture_server(), args, options).expect("bridge connects")
}

fn uri_of(dir: &std::path::Path, name: &str) -> String {
    path_to_file_uri(&std::fs::canonicalize(dir.join(name)).unwrap()).unwrap()
}

#[test]
fn identity_comes_from_the_server_and_data_flow_from_the_options() {
    let dir = crate::common::notes_dir();
    let b = bridge(dir.path(), &[], BridgeOptions::default());
    let info = b.info();
    assert_eq!(info.name, "mcp-fixture-notes");
    assert_eq!(info.version, "0.3.1");
    assert!(!info.data_flow.egress);
    let caps = b.capabilities();
    assert_eq!(caps.query.kinds, vec![FrameKind::Doc, FrameKind::Snippet]);
    assert!(caps.verify);
}

#[test]
fn frames_have_honest_cost_digest_and_provenance_to_the_resource_uri() {
    let dir = crate::common::notes_dir();
    let b = bridge(dir.path(), &[], BridgeOptions::default());
    let q = query("retry backoff policy");
    let result = b.query(&q).unwrap();
    assert!(audit_answer(&q, &result, &b.capabilities()).is_empty());
    let retry_uri = uri_of(dir.path(), "retry.md");
    let frame = result
        .frames
        .iter()
        .find(|f| f.id == retry_uri)
        .expect("retry.md served");
    let content = std::fs::read_to_string(dir.path().join("retry.md")).unwrap();
    assert_eq!(frame.content.as_deref(), Some(content.as_str()));
    assert_eq!(frame.kind, FrameKind::Doc, "text/markdown is a doc");
    assert_eq!(frame.token_cost as usize, content.len().div_ceil(4), "B3");
    let digest = sha256_digest(content.as_bytes());
    assert_eq!(frame.content_digest.as_deref(), Some(digest.as_str()), "D1");
    let mcp = frame
        .provenance
        .iter()
        .find(|p| p.kind == "mcp_resource")
        .unwrap();
    assert_eq!(mcp.uri.as_deref(), Some(retry_uri.as_str()));
    assert_eq!(mcp.digest.as_deref(), Some(digest.as_str()));
    let file = frame
        .provenance
        .iter()
        .find(|p| p.is_file())
        .expect("disk bytes match, so F5 entry");
    assert_eq!(file.digest.as_deref(), Some(digest.as_str()));
    // The binary resource and the unrelated ones are not evidence for this goal.
    assert!(result.frames.iter().all(|f| !f.id.ends_with("logo.png")));
    assert!(result
        .frames
        .iter()
        .all(|f| f.id != uri_of(dir.path(), "config.rs")));
}

#[test]
fn code_resources_are_snippets_and_rank_by_the_goal() {
    let dir = crate::common::notes_dir();
    let b = bridge(dir.path(), &[], BridgeOptions::default());
    let result = b.query(&query("load config parse")).unwrap();
    assert_eq!(result.frames[0].id, uri_of(dir.path(), "config.rs"));
    assert_eq!(result.frames[0].kind, FrameKind::Snippet);
}

#[test]
fn q1_kinds_filter_is_honoured() {
    let dir = crate::common::notes_dir();
    let b = bridge(dir.path(), &[], BridgeOptions::default());
    let mut q = query("retry config fixture");
    q.kinds = vec![FrameKind::Snippet];
    let result = b.query(&q).unwrap();
    assert!(!result.frames.is_empty());
    assert!(result.frames.iter().all(|f| f.kind == FrameKind::Snippet));
    q.kinds = vec![FrameKind::Memory];
    assert!(b.query(&q).unwrap().frames.is_empty());
}

#[test]
fn b1_budget_is_packed_and_truncation_reported() {
    let dir = crate::common::notes_dir();
    let b = bridge(dir.path(), &[], BridgeOptions::default());
    let mut q = query("retry config fixture");
    let all = b.query(&q).unwrap();
    assert!(all.frames.len() >= 2);
    q.max_tokens = all.frames.iter().map(|f| f.token_cost).min().unwrap();
    let small = b.query(&q).unwrap();
    assert!(small.frames.iter().map(|f| f.token_cost).sum::<u32>() <= q.max_tokens);
    assert!(small.truncated);
}

#[test]
fn anchored_resource_ranks_first() {
    let dir = crate::common::notes_dir();
    let b = bridge(dir.path(), &[], BridgeOptions::default());
    let mut q = query("retry config");
    q.anchors = vec!["memo://fixture/about".to_owned()];
    let result = b.query(&q).unwrap();
    assert_eq!(result.frames[0].id, "memo://fixture/about");
}

#[test]
fn max_reads_bounds_the_resources_read() {
    let dir = crate::common::notes_dir();
    let options = BridgeOptions {
        max_reads: 1,
        ..BridgeOptions::default()
    };
    let b = bridge(dir.path(), &[], options);
    let result = b.query(&query("retry config fixture")).unwrap();
    assert_eq!(result.frames.len(), 1);
}

#[test]
fn paginated_listings_are_followed() {
    let dir = crate::common::notes_dir();
    let b = bridge(dir.path(), &["--page-size", "1"], BridgeOptions::default());
    let result = b.query(&query("retry config fixture")).unwrap();
    let ids: Vec<&str> = result.frames.iter().map(|f| f.id.as_str()).collect();
    assert!(
        ids.contains(&"memo://fixture/about"),
        "last page reached: {ids:?}"
    );
    assert!(ids.len() >= 3, "{ids:?}");
}

#[test]
fn oversized_resources_are_skipped() {
    let dir = crate::common::notes_dir();
    let options = BridgeOptions {
        max_resource_bytes: 40,
        ..BridgeOptions::default()
    };
    let b = bridge(dir.path(), &[], options);
    let result = b.query(&query("retry config fixture")).unwrap();
    assert!(result
        .frames
        .iter()
        .all(|f| f.content.as_deref().unwrap().len() <= 40));
    assert!(result.frames.iter().all(|f| !f.id.ends_with("retry.md")));
}

#[test]
fn verify_rereads_valid_stale_gone_and_unknown() {
    let dir = crate::common::notes_dir();
    let b = bridge(dir.path(), &[], BridgeOptions::default());
    let result = b.query(&query("retry config fixture")).unwrap();
    let id_of = |uri: &str| {
        let f = result.frames.iter().find(|f| f.id == uri).unwrap();
        FrameId {
            provider_id: b.info().name,
            frame_id: f.id.clone(),
            content_digest: f.content_digest.clone(),
        }
    };
    let retry = id_of(&uri_of(dir.path(), "retry.md"));
    let config = id_of(&uri_of(dir.path(), "config.rs"));
    let about = id_of("memo://fixture/about");
    std::fs::write(
        dir.path().join("retry.md"),
        "# Retry policy\n\nNow five times.\n",
    )
    .unwrap();
    std::fs::remove_file(dir.path().join("config.rs")).unwrap();
    let no_digest = FrameId {
        content_digest: None,
        ..about.clone()
    };
    let request = VerifyRequest {
        frames: vec![retry.clone(), config.clone(), about.clone(), no_digest],
    };
    let response = b.verify(&request);
    let verdict = |id: &FrameId| {
        response
            .verdicts
            .iter()
            .find(|v| &v.frame == id)
            .map(|v| v.verdict.clone())
    };
    assert_eq!(
        verdict(&retry),
        Some(Verdict::Stale {
            replacement_digest: Some(sha256_digest(b"# Retry policy\n\nNow five times.\n"))
        })
    );
    assert_eq!(verdict(&config), Some(Verdict::Gone));
    assert_eq!(verdict(&about), Some(Verdict::Valid));
    // The digest-less identity is left unanswered: the runner makes it unknown (V1, V2).
    assert_eq!(response.verdicts.len(), 3);
}

#[test]
fn a_crashed_mcp_server_is_a_provider_error_not_a_panic() {
    let dir = crate::common::notes_dir();
    let b = bridge(dir.path(), &["--exit-on-read"], BridgeOptions::default());
    let err = b.query(&query("retry")).unwrap_err();
    assert_eq!(err.code, ErrorCode::Internal, "{err}");
    assert!(err.message.contains("mcp_fixture_server"), "{err}");
    // Still an error, promptly, on the next query too.
    let again = b.query(&query("retry")).unwrap_err();
    assert_eq!(again.code, ErrorCode::Internal);
    // V3: a verify it cannot answer evicts (unknown), never vouches.
    let id = FrameId {
        provider_id: b.info().name,
        frame_id: uri_of(dir.path(), "retry.md"),
        content_digest: Some(sha256_digest(b"anything")),
    };
    let response = b.verify(&VerifyRequest { frames: vec![id] });
    assert!(response
        .verdicts
        .iter()
        .all(|v| v.verdict == Verdict::Unknown));
}

#[test]
fn a_hung_mcp_server_is_unavailable_within_the_deadline() {
    let dir = crate::common::notes_dir();
    let options = BridgeOptions {
        call_timeout: Duration::from_secs(1),
        request_deadline: Duration::from_secs(3),
        ..BridgeOptions::default()
    };
    let b = bridge(dir.path(), &["--hang-on-read"], options);
    let err = b.query(&query("retry")).unwrap_err();
    assert_eq!(err.code, ErrorCode::Unavailable, "{err}");
    assert!(err.message.contains("did not answer"), "{err}");
}

#[test]
fn a_server_that_cannot_start_is_a_named_error() {
    let err = McpBridge::connect(
        "/nonexistent/mcp-server",
        Vec::<String>::new(),
        BridgeOptions::default(),
    )
    .err()
    .expect("no such command");
    assert!(err.to_string().contains("/nonexistent/mcp-server"), "{err}");
}

#[test]
fn a_server_that_never_initializes_times_out() {
    let options = BridgeOptions {
        init_timeout: Duration::from_secs(2),
        ..BridgeOptions::default()
    };
    // `sleep` reads nothing and answers nothing.
    let err = McpBridge::connect("sleep", ["30"], options)
        .err()
        .expect("no initialize");
    assert!(err.to_string().contains("initialization"), "{err}");
}

#[test]
fn the_bridge_can_be_used_and_dropped_inside_an_async_runtime() {
    let dir = crate::common::notes_dir();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let b = bridge(dir.path(), &[], BridgeOptions::default());
        assert!(!b.query(&query("retry")).unwrap().frames.is_empty());
        drop(b);
    });
}

#[test]
fn as_of_before_the_read_excludes_frames_the_bridge_cannot_date_earlier() {
    let dir = crate::common::notes_dir();
    let b = bridge(dir.path(), &[], BridgeOptions::default());
    let mut q = query("retry backoff policy");
    let now = b.query(&q).unwrap();
    assert!(!now.frames.is_empty());
    assert!(now.frames.iter().all(|f| f.recorded_at.is_some()));
    q.as_of = Some("2000-01-01T00:00:00Z".into());
    assert!(b.query(&q).unwrap().frames.is_empty());
}
