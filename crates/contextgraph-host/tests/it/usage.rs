//! Usage reports (UR1) and attribution (A1–A3): totals pinned to recomputed
//! costs, serialisable as JSON, attribution coherent and billed.

use crate::common::{host_with, retry_query, PATIENCE};
use contextgraph_host::{attribution_records, usage_report};
use contextgraph_types::{token_cost_for, AttributionError, FrameId};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ur1_usage_report_sums_recomputed_costs_and_serialises() {
    let host = host_with(&[("normal", "a"), ("lying-cost", "b")]).await;
    let report = host.query_all(&retry_query(), PATIENCE).await;
    let usage = usage_report(&report);
    assert!(usage.is_coherent());
    let expected: u64 = report
        .accepted_frames()
        .map(|(_, f)| u64::from(token_cost_for(f.content.as_deref())))
        .sum();
    assert!(expected > 0);
    assert_eq!(usage.budget_consumed, expected);
    assert_eq!(usage.budget_requested, retry_query().max_tokens);
    let b = usage
        .providers
        .iter()
        .find(|p| p.provider_id == "b")
        .unwrap();
    assert_eq!(b.token_cost, 0, "a quarantined provider is billed nothing");
    let json = serde_json::to_value(&usage).unwrap();
    assert_eq!(json["budget_consumed"].as_u64(), Some(expected));
    assert!(json["providers"][0]["served_frames"][0]["frame"]["provider_id"].is_string());

    let billed: Vec<FrameId> = usage.providers[0]
        .served_frames
        .iter()
        .map(|s| s.frame.clone())
        .collect();
    let records = attribution_records(&usage, &billed, &billed[..1], &billed[..1]).unwrap();
    assert_eq!(records.len(), billed.len());
    assert!(records.iter().filter(|r| r.cited).count() == 1);
    assert!(serde_json::to_string(&records)
        .unwrap()
        .contains("\"cited\":true"));
    // A3: cited without rendered is incoherent; a frame never billed cannot be attributed.
    assert!(matches!(
        attribution_records(&usage, &billed, &[], &billed[..1]),
        Err(AttributionError::CitedButNotRendered(_))
    ));
    let stranger = FrameId::new("b", "never-served", None);
    assert!(matches!(
        attribution_records(&usage, std::slice::from_ref(&stranger), &[], &[]),
        Err(AttributionError::NotBilled(id)) if id == stranger
    ));
    host.shutdown().await;
}
