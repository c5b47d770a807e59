//! Interop: the other implementation's recorded provider answer
//! (`../shared/wire/full-stdio-session.ndjson`), served to our host as that
//! provider sent it. Its content digests are placeholders, not digests of the
//! content (a D1 fault the host can repair without trusting the provider
//! more), so under the default policy every frame is kept with a "repaired:
//! D1" record, and under `strict` the answer is quarantined as before.
//! Runs when `../shared/wire` is present (see `contextgraph_testkit::interop`).

use contextgraph_host::{AuditPolicy, Host, HostOptions, ProviderOutcome, RepairKind};
use contextgraph_provider_sdk::{sha256_digest, Provider, ProviderError};
use contextgraph_types::{Capabilities, ContextQuery, ContextQueryResult, ProviderInfo};

use crate::common::PATIENCE;

/// The recorded session's handshake ack, query and answer, replayed.
struct Recorded {
    info: ProviderInfo,
    capabilities: Capabilities,
    query: ContextQuery,
    result: ContextQueryResult,
}

impl Recorded {
    fn load() -> Option<Recorded> {
        use contextgraph_testkit::interop::transcript_envelope;
        let ack = transcript_envelope("handshake_ack")?;
        let query = transcript_envelope("query")?;
        let result = transcript_envelope("frames")?;
        Some(Recorded {
            info: serde_json::from_value(ack["provider"].clone()).expect("ProviderInfo"),
            capabilities: serde_json::from_value(ack["capabilities"].clone())
                .expect("Capabilities"),
            query: serde_json::from_value(query["query"].clone()).expect("ContextQuery"),
            result: serde_json::from_value(result["result"].clone()).expect("ContextQueryResult"),
        })
    }
}

/// Serves the recorded answer to any query, byte for byte as parsed.
struct Replay(ContextQueryResult, ProviderInfo, Capabilities);

impl Provider for Replay {
    fn info(&self) -> ProviderInfo {
        self.1.clone()
    }

    fn capabilities(&self) -> Capabilities {
        self.2.clone()
    }

    fn query(&self, _query: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        Ok(self.0.clone())
    }
}

async fn host_with_recorded(policy: AuditPolicy, recorded: &Recorded) -> Host {
    let mut options = HostOptions::default();
    options.audit = policy;
    let mut host = Host::new(options);
    host.add_in_process_as(
        "peer",
        Replay(
            recorded.result.clone(),
            recorded.info.clone(),
            recorded.capabilities.clone(),
        ),
    )
    .await
    .expect("the recorded provider's handshake is accepted");
    host
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_other_implementations_recorded_frames_are_kept_with_d1_repairs() {
    let Some(recorded) = Recorded::load() else {
        return;
    };
    let offered = recorded.result.frames.len();
    assert!(offered > 0, "the recorded answer has frames");
    let host = host_with_recorded(AuditPolicy::Repair, &recorded).await;
    let report = host.query_all(&recorded.query, PATIENCE).await;
    let outcome = &report.provider("peer").expect("reported").outcome;
    let ProviderOutcome::Accepted {
        frames, repairs, ..
    } = outcome
    else {
        panic!("the recorded answer should be accepted with repairs, got {outcome:?}");
    };
    assert_eq!(frames.len(), offered, "every recorded frame is kept");
    for frame in frames {
        let content = frame.content.as_deref().expect("inline content");
        assert_eq!(
            frame.content_digest.as_deref(),
            Some(sha256_digest(content.as_bytes()).as_str()),
            "{}: the host keeps the content's own digest",
            frame.id
        );
    }
    let d1 = repairs
        .iter()
        .filter(|r| r.kind == RepairKind::ContentDigest)
        .count();
    assert_eq!(d1, offered, "one D1 repair recorded per frame: {repairs:?}");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_quarantines_the_other_implementations_recorded_frames() {
    let Some(recorded) = Recorded::load() else {
        return;
    };
    let host = host_with_recorded(AuditPolicy::Strict, &recorded).await;
    let report = host.query_all(&recorded.query, PATIENCE).await;
    let outcome = &report.provider("peer").expect("reported").outcome;
    let ProviderOutcome::Quarantined { violations, .. } = outcome else {
        panic!("strict should quarantine the recorded answer, got {outcome:?}");
    };
    assert!(
        violations.iter().any(|v| v.anchor.as_str() == "D1"),
        "{violations:?}"
    );
    host.shutdown().await;
}
