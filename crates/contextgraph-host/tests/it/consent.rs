//! Consent (C1, C2, C6): an egress provider is sent nothing without a live
//! grant pinned to its name and version; off-machine scopes need receipts;
//! expiry is an instant; the store is append-only, shared and crash-tolerant.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::common::{misbehaving, retry_query, stdio_options, PATIENCE};
use contextgraph_host::consent::{self, ConsentLedger};
use contextgraph_host::{
    ConsentRecord, ConsentStore, Host, HostOptions, ProviderOutcome, Revocation,
};
use contextgraph_provider_sdk::{Provider, ProviderError};
use contextgraph_types::{
    Capabilities, ConsentReceipt, ContextQuery, ContextQueryResult, DataFlow, EgressScope, Grantor,
    GrantorKind, ProviderInfo, Timestamp,
};

fn ada() -> Grantor {
    Grantor {
        kind: GrantorKind::Human,
        id: "ada".into(),
    }
}

fn grant(id: &str, version: &str, expires_at: Option<String>) -> ConsentRecord {
    ConsentRecord::Receipt(ConsentReceipt {
        scope: None,
        provider_id: id.into(),
        provider_name: id.into(),
        provider_version: version.into(),
        grantor: ada(),
        granted_at: "2020-01-01T00:00:00Z".into(),
        expires_at,
    })
}

fn receipt(id: &str, scope: EgressScope, expires_at: Option<String>) -> ConsentRecord {
    ConsentRecord::Receipt(ConsentReceipt {
        provider_id: id.into(),
        scope: Some(scope),
        provider_name: id.into(),
        provider_version: "1.0.0".into(),
        grantor: ada(),
        granted_at: "2020-01-01T00:00:00Z".into(),
        expires_at,
    })
}

/// An egress provider that counts the queries it receives.
struct Counting {
    seen: Arc<AtomicUsize>,
    scopes: Vec<EgressScope>,
}

impl Provider for Counting {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: "cloud".into(),
            version: "1.0.0".into(),
            data_flow: DataFlow {
                reads: true,
                writes: false,
                egress: true,
                egress_scopes: self.scopes.clone(),
            },
        }
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }
    fn query(&self, _: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        self.seen.fetch_add(1, Ordering::SeqCst);
        Ok(ContextQueryResult::default())
    }
}

async fn counting_host(store: ConsentStore, scopes: Vec<EgressScope>) -> (Host, Arc<AtomicUsize>) {
    let seen = Arc::new(AtomicUsize::new(0));
    let mut host = Host::new(HostOptions::default()).with_consent_store(store);
    host.add_in_process(Counting {
        seen: Arc::clone(&seen),
        scopes,
    })
    .await
    .expect("added");
    (host, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c2_egress_without_consent_is_sent_nothing_and_says_what_to_grant() {
    let dir = tempfile::tempdir().unwrap();
    let store = ConsentStore::open(dir.path().join("consent.ndjson")).unwrap();
    let (host, seen) = counting_host(store.clone(), vec![]).await;
    let report = host.query_all(&retry_query(), PATIENCE).await;
    match &report.provider("cloud").unwrap().outcome {
        ProviderOutcome::ConsentRequired {
            provider_name,
            provider_version,
            ..
        } => {
            assert_eq!(
                (provider_name.as_str(), provider_version.as_str()),
                ("cloud", "1.0.0")
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        seen.load(Ordering::SeqCst),
        0,
        "a payload reached an egress provider without consent"
    );
    store.append(&grant("cloud", "1.0.0", None)).unwrap();
    let report = host.query_all(&retry_query(), PATIENCE).await;
    assert!(matches!(
        report.provider("cloud").unwrap().outcome,
        ProviderOutcome::Accepted { .. }
    ));
    assert_eq!(seen.load(Ordering::SeqCst), 1);
    // Revocation is a record of its own and takes effect at once.
    store
        .append(&ConsentRecord::Revocation(Revocation {
            provider_id: "cloud".into(),
            scope: None,
            grantor: ada(),
            revoked_at: Timestamp::now().to_wire(),
        }))
        .unwrap();
    let report = host.query_all(&retry_query(), PATIENCE).await;
    assert!(matches!(
        report.provider("cloud").unwrap().outcome,
        ProviderOutcome::ConsentRequired { .. }
    ));
    assert_eq!(seen.load(Ordering::SeqCst), 1);
    assert_eq!(
        store.load().unwrap().records.len(),
        2,
        "append-only: the grant is still on file"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c6_a_grant_pinning_another_version_needs_a_new_grant() {
    let dir = tempfile::tempdir().unwrap();
    let store = ConsentStore::open(dir.path().join("consent.ndjson")).unwrap();
    store.append(&grant("cloud", "0.9.0", None)).unwrap();
    let (host, seen) = counting_host(store, vec![]).await;
    let report = host.query_all(&retry_query(), PATIENCE).await;
    match &report.provider("cloud").unwrap().outcome {
        ProviderOutcome::ConsentRequired { reason, .. } => {
            assert!(reason.contains("0.9.0"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(seen.load(Ordering::SeqCst), 0);
}

/// N16: a grant for the same version under another name is an identity
/// change, and the message shows two different identities.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n16_an_identity_change_message_shows_different_identities() {
    let dir = tempfile::tempdir().unwrap();
    let store = ConsentStore::open(dir.path().join("consent.ndjson")).unwrap();
    let mut renamed = grant("cloud", "1.0.0", None);
    if let ConsentRecord::Receipt(r) = &mut renamed {
        r.provider_name = "cloud-old".into();
    }
    store.append(&renamed).unwrap();
    let (host, seen) = counting_host(store, vec![]).await;
    let report = host.query_all(&retry_query(), PATIENCE).await;
    match &report.provider("cloud").unwrap().outcome {
        ProviderOutcome::ConsentRequired { reason, .. } => {
            assert!(
                reason.contains("\"cloud-old\" version 1.0.0")
                    && reason.contains("now reports \"cloud\" version 1.0.0"),
                "{reason}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(seen.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c6_off_machine_scope_without_receipt_is_refused_naming_the_scope() {
    let dir = tempfile::tempdir().unwrap();
    let store = ConsentStore::open(dir.path().join("consent.ndjson")).unwrap();
    let mut host = Host::new(HostOptions::default()).with_consent_store(store.clone());
    host.add_stdio(misbehaving("egress-scope", "scoped"), stdio_options())
        .await
        .expect("added");
    host.add_stdio(misbehaving("normal", "local"), stdio_options())
        .await
        .expect("added");
    let report = host.query_all(&retry_query(), PATIENCE).await;
    match &report.provider("scoped").unwrap().outcome {
        ProviderOutcome::ScopeReceiptsMissing { scopes, .. } => {
            assert_eq!(scopes, &vec![EgressScope::ThirdPartyModel]);
        }
        other => panic!("{other:?}"),
    }
    assert!(report.provider("scoped").unwrap().sent.is_none());
    assert!(matches!(
        report.provider("local").unwrap().outcome,
        ProviderOutcome::Accepted { .. }
    ));
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c1_stdio_egress_provider_without_consent_is_refused() {
    let mut host = Host::new(HostOptions::default());
    host.add_stdio(misbehaving("egress", "leaky"), stdio_options())
        .await
        .expect("added");
    let report = host.query_all(&retry_query(), PATIENCE).await;
    assert!(matches!(
        report.provider("leaky").unwrap().outcome,
        ProviderOutcome::ConsentRequired { .. }
    ));
    assert!(report.provider("leaky").unwrap().sent.is_none());
    host.shutdown().await;
}

#[test]
fn c6_receipt_expired_by_a_fraction_of_a_second_is_not_live() {
    let now = Timestamp::now();
    let descriptor = contextgraph_host::InProcessProvider::new(Counting {
        seen: Arc::default(),
        scopes: vec![EgressScope::ThirdPartyModel],
    })
    .unwrap()
    .descriptor()
    .clone();
    let expired = now.add(Duration::ZERO).to_wire();
    let just_expired = ConsentLedger {
        records: vec![receipt(
            "cloud",
            EgressScope::ThirdPartyModel,
            Some(expired),
        )],
        warnings: vec![],
        unreadable: vec![],
    };
    // Expires exactly now, i.e. a fraction of a second before any later check.
    let later = now.add(Duration::from_millis(300));
    assert!(!consent::check(&descriptor, &just_expired, later).is_allowed());
    let live = ConsentLedger {
        records: vec![receipt(
            "cloud",
            EgressScope::ThirdPartyModel,
            Some(now.add(Duration::from_millis(600)).to_wire()),
        )],
        warnings: vec![],
        unreadable: vec![],
    };
    assert!(consent::check(&descriptor, &live, later).is_allowed());
}

#[test]
fn consent_store_skips_a_torn_last_line_and_keeps_everything_else() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("consent.ndjson");
    let store = ConsentStore::open(&path).unwrap();
    store.append(&grant("a", "1", None)).unwrap();
    store.append(&grant("b", "1", None)).unwrap();
    // A crash mid-write leaves half a record without its newline.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(br#"{"record":"grant","provider_id":"c","prov"#);
    std::fs::write(&path, bytes).unwrap();
    let ledger = store.load().unwrap();
    assert_eq!(ledger.records.len(), 2);
    assert_eq!(ledger.warnings.len(), 1);
    assert!(ledger.warnings[0].contains("torn"), "{:?}", ledger.warnings);
    // The next append starts on a fresh line: nothing is glued to the torn one.
    store.append(&grant("d", "1", None)).unwrap();
    let ledger = store.load().unwrap();
    assert_eq!(ledger.records.len(), 3);
}

/// Grants and receipts are one record type, but the file keeps its two
/// tags: lines written by earlier versions read the same, each is written
/// back under its own tag, and a line whose tag and scope disagree is
/// unreadable, so consent for its provider fails closed.
#[test]
fn consent_store_reads_both_record_tags_and_refuses_a_tag_that_contradicts_its_scope() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("consent.ndjson");
    let pinned = r#""provider_name":"p","provider_version":"1.0.0","grantor":{"kind":"human","id":"ada"},"granted_at":"2020-01-01T00:00:00Z""#;
    let lines = [
        format!(r#"{{"record":"grant","provider_id":"p",{pinned}}}"#),
        format!(r#"{{"record":"scope_receipt","provider_id":"p","scope":"org-tenant",{pinned}}}"#),
    ];
    std::fs::write(&path, format!("{}\n{}\n", lines[0], lines[1])).unwrap();
    let store = ConsentStore::open(&path).unwrap();
    let ledger = store.load().unwrap();
    assert!(ledger.warnings.is_empty(), "{:?}", ledger.warnings);
    let now = Timestamp::parse("2026-01-01T00:00:00Z").unwrap();
    assert!(ledger.live_grant("p", "p", "1.0.0", now).is_some());
    assert!(ledger
        .live_receipt("p", "p", "1.0.0", &EgressScope::OrgTenant, now)
        .is_some());
    // Written back, each record keeps its tag.
    let again = dir.path().join("again.ndjson");
    let copy = ConsentStore::open(&again).unwrap();
    for record in &ledger.records {
        copy.append(record).unwrap();
    }
    let written = std::fs::read_to_string(&again).unwrap();
    let tags: Vec<serde_json::Value> = written
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["record"].clone())
        .collect();
    assert_eq!(tags, ["grant", "scope_receipt"]);

    // A `grant` line carrying a scope contradicts itself: unreadable, and
    // while it stands nothing is granted to its provider.
    let contradiction =
        format!(r#"{{"record":"grant","provider_id":"p","scope":"org-tenant",{pinned}}}"#);
    std::fs::write(&path, format!("{}\n{contradiction}\n", lines[0])).unwrap();
    let ledger = store.load().unwrap();
    assert_eq!(ledger.records.len(), 1);
    assert_eq!(
        ledger.unreadable_line_for("p"),
        Some(2),
        "{:?}",
        ledger.warnings
    );
    assert!(ledger.live_grant("p", "p", "1.0.0", now).is_none());
}

#[test]
fn consent_store_two_writers_at_once_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/consent.ndjson");
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let path = path.clone();
            std::thread::spawn(move || {
                // Each writer opens the file itself, as a second process would.
                let store = ConsentStore::open(&path).unwrap();
                for i in 0..50 {
                    store
                        .append(&grant(&format!("p{w}-{i}"), "1", None))
                        .unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let ledger = ConsentStore::open(&path).unwrap().load().unwrap();
    assert_eq!(ledger.records.len(), 200);
    assert!(ledger.warnings.is_empty(), "{:?}", ledger.warnings);
}

#[test]
fn consent_store_default_path_honours_the_override() {
    // Only this test touches the variable in this process.
    std::env::set_var("CGP_DATA_DIR", "/tmp/cgp-test-data");
    let path = ConsentStore::default_path().unwrap();
    std::env::remove_var("CGP_DATA_DIR");
    assert_eq!(
        path,
        std::path::PathBuf::from("/tmp/cgp-test-data/consent.ndjson")
    );
}
