//! Consent checks against a scratch consent store: the egress gate (C1, C2,
//! version pinning, revocation) and scope receipts (C6).
//!
//! The adversary is an honest egress provider: the host must not send it a
//! single query until the right record is on file. "Sent" is measured at the
//! provider (its query counter), not taken from the host's word.

use contextgraph_host::{ConsentRecord, ConsentStore, Host, HostOptions, Revocation};
use contextgraph_types::{
    ConsentReceipt, ContextQuery, EgressScope, Grantor, GrantorKind, Timestamp,
};

use super::adversary::{answer, honest_frames, Probe, Scripted};
use super::bridge::seen;
use super::seen::Seen;
use super::HostSuiteOptions;
use contextgraph_conformance::outcome::{Evidence, Outcome};

/// One fan-out round of a consent check.
#[derive(Debug, Clone)]
pub(crate) struct Round {
    /// What was on file.
    pub label: String,
    /// The twin (local provider) outcome.
    pub twin: Seen,
    /// The egress provider outcome.
    pub adversary: Seen,
    /// Whether the egress provider received a query in this round.
    pub sent: bool,
    /// Whether a correct host sends it one.
    pub should_send: bool,
}

/// Decision: the twin is served every round; the egress provider is sent a
/// query exactly in the rounds whose records allow it, and refused with a
/// typed consent outcome in the others.
pub(crate) fn decide_rounds(rounds: &[Round]) -> Outcome {
    let mut e = Evidence::default();
    if rounds.is_empty() {
        return Outcome::fail("no round was run");
    }
    for r in rounds {
        if !r.twin.accepted_some() {
            e.fail(format!(
                "{}: local twin {}; a correct host serves a provider that needs no consent",
                r.label, r.twin
            ));
        }
        match (r.should_send, r.sent) {
            (true, true) if r.adversary.accepted_some() => {
                e.note(format!("{}: egress provider queried, {}", r.label, r.adversary))
            }
            (true, _) => e.fail(format!(
                "{}: egress provider {} (queried: {}); a correct host queries it once the record allows it",
                r.label, r.adversary, r.sent
            )),
            (false, true) => e.fail(format!(
                "{}: the egress provider received a query payload without a live record (C2)",
                r.label
            )),
            (false, false)
                if matches!(
                    r.adversary,
                    Seen::ConsentRequired | Seen::ScopeReceiptsMissing { .. }
                ) =>
            {
                e.note(format!("{}: {}", r.label, r.adversary))
            }
            (false, false) => e.fail(format!(
                "{}: egress provider {}; a correct host refuses it with a typed consent outcome",
                r.label, r.adversary
            )),
        }
    }
    e.finish()
}

fn grantor() -> Grantor {
    Grantor {
        kind: GrantorKind::Policy,
        id: "cgp-inspect-host".to_owned(),
    }
}

fn seconds_from_now(secs: i64) -> String {
    let now = Timestamp::now();
    Timestamp::from_unix(now.unix_seconds() + secs, now.subsec_nanos()).to_wire()
}

struct Rig {
    host: Host,
    store: ConsentStore,
    probe: Probe,
    _dir: tempfile::TempDir,
}

async fn rig(adversary: Scripted) -> Result<Rig, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("cannot create a scratch folder: {e}"))?;
    let store = ConsentStore::open(dir.path().join("consent.ndjson"))
        .map_err(|e| format!("cannot open a scratch consent store: {e}"))?;
    let probe = adversary.probe();
    let mut host = Host::new(HostOptions::default()).with_consent_store(store.clone());
    let twin = Scripted::new("consent-twin", |_| answer(honest_frames("twin", 2)));
    for p in [twin, adversary] {
        host.add_in_process(p)
            .await
            .map_err(|e| format!("adding a provider: {e}"))?;
    }
    Ok(Rig {
        host,
        store,
        probe,
        _dir: dir,
    })
}

impl Rig {
    async fn round(&self, label: &str, should_send: bool, options: &HostSuiteOptions) -> Round {
        let before = self.probe.calls();
        let query = ContextQuery::new("retry policy", 5, 4000);
        let report = self.host.query_all(&query, options.request_timeout).await;
        Round {
            label: label.to_owned(),
            twin: seen(&report, "consent-twin"),
            adversary: seen(&report, ADVERSARY),
            sent: self.probe.calls() > before,
            should_send,
        }
    }

    fn append(&self, record: ConsentRecord) -> Result<(), String> {
        self.store
            .append(&record)
            .map_err(|e| format!("cannot write the scratch consent store: {e}"))
    }
}

const ADVERSARY: &str = "egress-provider";

fn grant(version: &str) -> ConsentRecord {
    ConsentRecord::Receipt(ConsentReceipt {
        scope: None,
        provider_id: ADVERSARY.to_owned(),
        provider_name: ADVERSARY.to_owned(),
        provider_version: version.to_owned(),
        grantor: grantor(),
        granted_at: seconds_from_now(-1),
        expires_at: None,
    })
}

fn receipt(scope: EgressScope, expires_in: Option<i64>) -> ConsentRecord {
    ConsentRecord::Receipt(ConsentReceipt {
        provider_id: ADVERSARY.to_owned(),
        scope: Some(scope),
        provider_name: ADVERSARY.to_owned(),
        provider_version: "1.0.0".to_owned(),
        grantor: grantor(),
        granted_at: seconds_from_now(-5),
        expires_at: expires_in.map(seconds_from_now),
    })
}

fn egress(scopes: Vec<EgressScope>) -> Scripted {
    Scripted::new(ADVERSARY, |_| answer(honest_frames("egress", 2))).with_egress(scopes)
}

pub(crate) async fn consent_gate(options: &HostSuiteOptions) -> Outcome {
    let rig = match rig(egress(vec![])).await {
        Ok(r) => r,
        Err(e) => return Outcome::fail(e),
    };
    let mut rounds = vec![rig.round("no grant on file", false, options).await];
    let steps: [(&str, ConsentRecord, bool); 3] = [
        (
            "a grant pinning another version (0.9.0)",
            grant("0.9.0"),
            false,
        ),
        ("a grant for this version", grant("1.0.0"), true),
        (
            "the grant revoked",
            ConsentRecord::Revocation(Revocation {
                provider_id: ADVERSARY.to_owned(),
                scope: None,
                grantor: grantor(),
                revoked_at: seconds_from_now(0),
            }),
            false,
        ),
    ];
    for (label, record, should_send) in steps {
        if let Err(e) = rig.append(record) {
            return Outcome::fail(e);
        }
        rounds.push(rig.round(label, should_send, options).await);
    }
    rig.host.shutdown().await;
    decide_rounds(&rounds)
}

/// Decision on what the store holds after the receipts were granted: each
/// granted scope recorded once with the pinned name and version.
pub(crate) fn decide_receipts_recorded(records: &[ConsentRecord], scopes: &[&str]) -> Outcome {
    let mut e = Evidence::default();
    for scope in scopes {
        let found = records.iter().any(|r| {
            matches!(r, ConsentRecord::Receipt(rc)
                if rc.scope.as_ref().is_some_and(|s| s.as_str() == *scope)
                    && rc.provider_name == ADVERSARY
                    && rc.provider_version == "1.0.0")
        });
        if found {
            e.note(format!(
                "the store records a receipt for scope {scope} pinning {ADVERSARY} 1.0.0"
            ));
        } else {
            e.fail(format!(
                "no receipt for scope {scope} pinning name and version was read back from the store"
            ));
        }
    }
    e.finish()
}

pub(crate) async fn scope_receipt(options: &HostSuiteOptions) -> Outcome {
    let scopes = vec![EgressScope::ThirdPartyModel, EgressScope::OrgTenant];
    let rig = match rig(egress(scopes)).await {
        Ok(r) => r,
        Err(e) => return Outcome::fail(e),
    };
    let mut rounds = vec![rig.round("no receipts on file", false, options).await];
    let steps: [(&str, ConsentRecord, bool); 3] = [
        (
            "a receipt for third-party-model only",
            receipt(EgressScope::ThirdPartyModel, None),
            false,
        ),
        (
            "an org-tenant receipt that expired a second ago",
            receipt(EgressScope::OrgTenant, Some(-1)),
            false,
        ),
        (
            "a live org-tenant receipt too",
            receipt(EgressScope::OrgTenant, Some(3600)),
            true,
        ),
    ];
    for (label, record, should_send) in steps {
        if let Err(e) = rig.append(record) {
            return Outcome::fail(e);
        }
        rounds.push(rig.round(label, should_send, options).await);
    }
    rig.host.shutdown().await;
    let mut outcome = decide_rounds(&rounds);
    // The refusal must name what is missing: after the first receipt, only org-tenant.
    if let Some(r) = rounds.get(1) {
        if !matches!(&r.adversary, Seen::ScopeReceiptsMissing { scopes } if scopes == &["org-tenant".to_owned()])
        {
            outcome = merge(
                outcome,
                Outcome::fail(format!(
                    "{}: {}; the refusal should name exactly the scope still lacking a receipt (org-tenant)",
                    r.label, r.adversary
                )),
            );
        }
    }
    let recorded = match rig.store.load() {
        Ok(ledger) => {
            decide_receipts_recorded(&ledger.records, &["third-party-model", "org-tenant"])
        }
        Err(e) => Outcome::fail(format!(
            "the scratch consent store cannot be read back: {e}"
        )),
    };
    merge(outcome, recorded)
}

/// Both outcomes' evidence; failed if either failed.
pub(crate) fn merge(a: Outcome, b: Outcome) -> Outcome {
    let mut e = Evidence::default();
    for o in [a, b] {
        let failed = o.kind == contextgraph_conformance::outcome::Kind::Fail;
        for line in o.evidence {
            if failed && line.starts_with('✗') {
                e.fail(line.trim_start_matches("✗ ").to_owned());
            } else {
                e.note(line);
            }
        }
        if failed && !e.failed() {
            e.fail("a sub-check failed");
        }
    }
    e.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use contextgraph_conformance::outcome::Kind;

    fn ok() -> Seen {
        Seen::Accepted {
            ids: vec!["a".into()],
            dropped_kinds: vec![],
        }
    }

    fn round(adversary: Seen, sent: bool, should_send: bool) -> Round {
        Round {
            label: "r".into(),
            twin: ok(),
            adversary,
            sent,
            should_send,
        }
    }

    #[test]
    fn c2_consent_check_fails_when_a_payload_moves_without_a_grant() {
        let good = [
            round(Seen::ConsentRequired, false, false),
            round(ok(), true, true),
        ];
        assert_eq!(decide_rounds(&good).kind, Kind::Pass);
        // The host says "consent required" but had already sent the query.
        let leaky = [round(Seen::ConsentRequired, true, false)];
        assert_eq!(decide_rounds(&leaky).kind, Kind::Fail);
        // A host that never honours a grant cannot tell the cases apart.
        let stuck = [
            round(Seen::ConsentRequired, false, false),
            round(Seen::ConsentRequired, false, true),
        ];
        assert_eq!(decide_rounds(&stuck).kind, Kind::Fail);
    }

    #[test]
    fn c6_receipt_check_fails_when_a_scope_is_not_recorded() {
        let records = vec![receipt(EgressScope::ThirdPartyModel, None)];
        assert_eq!(
            decide_receipts_recorded(&records, &["third-party-model"]).kind,
            Kind::Pass
        );
        assert_eq!(
            decide_receipts_recorded(&records, &["third-party-model", "org-tenant"]).kind,
            Kind::Fail
        );
    }

    #[test]
    fn merge_keeps_a_failure() {
        let m = merge(Outcome::fail("x"), Evidence::default().finish());
        assert_eq!(m.kind, Kind::Fail);
    }
}
