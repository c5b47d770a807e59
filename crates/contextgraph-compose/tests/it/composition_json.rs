//! Item 5 / `cgp context`: the composition serialises to the documented JSON shape and back.

use crate::common::*;
use contextgraph_compose::{Budget, Composition, Options, ProviderOutcome, ProviderStatus};
use serde_json::{json, Value};

fn sample() -> Composition {
    let uri = "file:///repo/docs/retry.md";
    let outcomes = vec![
        ProviderOutcome::accepted(
            "docs",
            vec![
                file_frame(
                    "retry-doc",
                    "Retry behaviour is set in Config::retry.",
                    uri,
                    Some("L1-20"),
                ),
                file_frame(
                    "retry-dup",
                    "Retry behaviour is set in Config::retry.",
                    uri,
                    Some("L1-20"),
                ),
                frame("huge", &text("huge", 90_000)),
            ],
        ),
        ProviderOutcome::without_frames(
            "web",
            ProviderStatus::ConsentMissing {
                scopes: vec!["third-party-index".into()],
            },
        ),
    ];
    composed(&outcomes, &Options::new(Budget::model_tokens(8000)))
}

#[test]
fn composition_json_has_the_documented_shape() {
    let value: Value = serde_json::to_value(sample()).expect("serialises");
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().expect("object").keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&value), ["audit", "citations", "prompt", "usage"]);
    assert_eq!(
        keys(&value["audit"]),
        ["budget", "frames", "placement", "providers"]
    );
    assert_eq!(value["audit"]["placement"], "stable");
    assert_eq!(
        value["audit"]["budget"]["given"],
        json!({"unit": "model_tokens", "tokens": 8000, "safety_factor": 1.35})
    );
    assert_eq!(value["audit"]["budget"]["requested"], 5925);
    assert_eq!(
        keys(&value["audit"]["budget"]),
        [
            "content",
            "given",
            "preamble",
            "remaining",
            "requested",
            "used"
        ]
    );
    let citation = &value["citations"][0];
    assert_eq!(citation["label"], "label retry-doc");
    assert_eq!(citation["frame"]["provider_id"], "docs");
    assert_eq!(citation["provenance"][0]["type"], "file");
    assert_eq!(citation["merged"][0]["frame_id"], "retry-dup");
    let providers = value["audit"]["providers"].as_array().expect("array");
    assert_eq!(providers[0]["outcome"], json!({"status": "accepted"}));
    assert_eq!(
        providers[1]["outcome"],
        json!({"status": "consent_required", "scopes": ["third-party-index"]})
    );
    let frames = value["audit"]["frames"].as_array().expect("array");
    let by_id = |id: &str| {
        frames
            .iter()
            .find(|f| f["frame"]["frame_id"] == id)
            .expect("listed")
    };
    assert_eq!(
        keys(&by_id("retry-doc")["included"]),
        ["charge", "label", "position"]
    );
    assert_eq!(by_id("retry-dup")["excluded"]["reason"], "duplicate");
    assert_eq!(by_id("retry-dup")["excluded"]["basis"], "same_content");
    assert_eq!(by_id("huge")["excluded"]["reason"], "over_budget");
    assert!(by_id("huge")["content_sha256"]
        .as_str()
        .is_some_and(|d| d.starts_with("sha256:")));
    assert_eq!(
        value["usage"]["budget_consumed"],
        value["audit"]["budget"]["content"]
    );
}

#[test]
fn composition_json_round_trips() {
    let c = sample();
    let text = serde_json::to_string_pretty(&c).expect("serialises");
    let back: Composition = serde_json::from_str(&text).expect("deserialises");
    assert_eq!(back, c);
}

/// One status vocabulary: the audit's serialized `status` of every outcome
/// is the word [`OutcomeStatus`] gives it, which the CLI, engine and MCP
/// tools print; audits written with the earlier word still read.
#[test]
fn every_outcome_serializes_under_its_one_status_word() {
    use contextgraph_compose::{OutcomeAudit, OutcomeStatus};
    let outcomes = [
        (OutcomeAudit::Accepted, OutcomeStatus::Accepted),
        (
            OutcomeAudit::Quarantined {
                anchors: vec!["B3".into()],
                violations: Vec::new(),
            },
            OutcomeStatus::Quarantined,
        ),
        (
            OutcomeAudit::ConsentMissing {
                scopes: vec!["org-tenant".into()],
            },
            OutcomeStatus::ConsentRequired,
        ),
        (
            OutcomeAudit::TimedOut { after_ms: 5 },
            OutcomeStatus::TimedOut,
        ),
        (
            OutcomeAudit::Crashed {
                detail: "exit 1".into(),
            },
            OutcomeStatus::Crashed,
        ),
        (
            OutcomeAudit::Error {
                code: "internal".into(),
                message: "no".into(),
            },
            OutcomeStatus::Error,
        ),
    ];
    for (outcome, status) in outcomes {
        assert_eq!(outcome.status(), status);
        let json = serde_json::to_value(&outcome).unwrap();
        assert_eq!(json["status"], status.as_str(), "{json}");
    }
    let legacy: OutcomeAudit =
        serde_json::from_value(json!({"status": "consent_missing", "scopes": []})).unwrap();
    assert_eq!(legacy.status(), OutcomeStatus::ConsentRequired);
}
