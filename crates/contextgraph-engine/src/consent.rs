//! Granting and revoking consent in the durable store, pinned to what the
//! provider declared at its handshake (C1, C2, C6).

use std::path::PathBuf;
use std::sync::Arc;

use contextgraph_config::Config;
use contextgraph_host::consent::{ConsentLedger, ConsentStore};
use contextgraph_host::{ConsentRecord, ProviderDescriptor, Revocation};
use contextgraph_types::{ConsentReceipt, EgressScope, Grantor, Timestamp};
use serde::Serialize;

use crate::error::EngineError;

/// The consent store file for `config`: its `consent_store`, else the
/// host's default location.
pub fn store_path(config: &Config) -> Result<PathBuf, EngineError> {
    match &config.consent_store {
        Some(s) => Ok(s.value.clone()),
        None => Ok(ConsentStore::default_path()?),
    }
}

/// Open (creating if needed) the consent store for `config`.
pub fn open_store(config: &Config) -> Result<ConsentStore, EngineError> {
    Ok(ConsentStore::open(store_path(config)?)?)
}

/// What to grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantRequest {
    /// The off-machine scopes to grant (C6); empty for a plain egress grant.
    pub scopes: Vec<EgressScope>,
    /// When the grant lapses; `None` means until revoked.
    pub expires_at: Option<Timestamp>,
    /// Who grants.
    pub grantor: Grantor,
}

/// A started egress provider that would be sent nothing for want of
/// consent, as [`Engine::consent_needed`](crate::Engine::consent_needed)
/// reports it.
#[derive(Debug, Clone)]
pub struct ConsentNeeded {
    /// The configured name (what `cgp consent grant` takes).
    pub name: String,
    /// What it declared at its handshake: id, name, version, data flow,
    /// transport. Peer-controlled: escape it before showing it on a terminal.
    pub descriptor: Arc<ProviderDescriptor>,
    /// Why the records on file do not cover it.
    pub reason: String,
    /// The scopes a grant must cover (C6); empty for a plain egress grant (C1, C2).
    pub scopes: Vec<EgressScope>,
    /// The exact `cgp consent grant …` command that would allow it.
    pub command: String,
}

/// The exact command granting `name` the given scopes; `extra` are the
/// arguments that select the same configuration (`--dir`, `--config`).
pub fn grant_command(name: &str, scopes: &[String], extra: &[String]) -> String {
    let mut words = vec![
        "cgp".to_owned(),
        "consent".to_owned(),
        "grant".to_owned(),
        shell_quote(name),
    ];
    for s in scopes {
        words.push("--scope".to_owned());
        words.push(shell_quote(s));
    }
    words.extend(extra.iter().map(|a| shell_quote(a)));
    words.join(" ")
}

/// Quote `word` for a POSIX shell when it needs it.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The records granting `request` to the provider `name` described by
/// `descriptor`, checked against what it declared.
pub(crate) fn grant_records(
    name: &str,
    descriptor: &ProviderDescriptor,
    request: &GrantRequest,
    extra: &[String],
) -> Result<Vec<ConsentRecord>, EngineError> {
    let consent_error = |message: String| EngineError::Consent {
        name: name.to_owned(),
        message,
    };
    if !descriptor.is_egress() {
        return Err(consent_error(format!(
            "{} {} keeps data on this machine (egress: false, reached {}); it needs no consent",
            descriptor.id,
            descriptor.info.version,
            match &descriptor.transport {
                contextgraph_host::TransportKind::Http { .. } => "over loopback HTTP",
                contextgraph_host::TransportKind::Stdio { .. } => "over stdio",
                _ => "in-process",
            }
        )));
    }
    let now = Timestamp::now();
    if let Some(expires) = &request.expires_at {
        if *expires <= now {
            return Err(consent_error(
                "the expiry is in the past; give a later --expires".to_owned(),
            ));
        }
    }
    let declared: Vec<EgressScope> = descriptor
        .info
        .data_flow
        .off_machine_scopes()
        .cloned()
        .collect();
    let (id, pname, version) = (
        descriptor.id.clone(),
        descriptor.info.name.clone(),
        descriptor.info.version.clone(),
    );
    let granted_at = now.to_wire();
    let expires_at = request.expires_at.map(|t| t.to_wire());
    if declared.is_empty() {
        if !request.scopes.is_empty() {
            return Err(consent_error(format!(
                "it declares no off-machine scope, so there is no scope to grant; run: {}",
                grant_command(name, &[], extra)
            )));
        }
        return Ok(vec![ConsentRecord::Receipt(ConsentReceipt {
            scope: None,
            provider_id: id,
            provider_name: pname,
            provider_version: version,
            grantor: request.grantor.clone(),
            granted_at,
            expires_at,
        })]);
    }
    let names: Vec<String> = declared.iter().map(|s| s.as_str().to_owned()).collect();
    if request.scopes.is_empty() {
        return Err(EngineError::ScopesRequired {
            name: name.to_owned(),
            scopes: declared,
            command: grant_command(name, &names, extra),
        });
    }
    if let Some(bad) = request.scopes.iter().find(|s| !declared.contains(s)) {
        return Err(consent_error(format!(
            "C6: it does not declare the scope {} (it declares {}); grant only what it sends data to",
            bad.as_str(),
            names.join(", ")
        )));
    }
    let mut scopes = request.scopes.clone();
    scopes.dedup();
    Ok(scopes
        .into_iter()
        .map(|scope| {
            ConsentRecord::Receipt(ConsentReceipt {
                provider_id: id.clone(),
                scope: Some(scope),
                provider_name: pname.clone(),
                provider_version: version.clone(),
                grantor: request.grantor.clone(),
                granted_at: granted_at.clone(),
                expires_at: expires_at.clone(),
            })
        })
        .collect())
}

/// Record a revocation of everything granted to `provider_id`, after
/// checking there is something in force to revoke.
pub fn revoke(
    store: &ConsentStore,
    provider_id: &str,
    grantor: Grantor,
) -> Result<ConsentRecord, EngineError> {
    let ledger = store.load()?;
    if ledger.pinned_versions(provider_id).is_empty() {
        return Err(EngineError::Consent {
            name: provider_id.to_owned(),
            message: "nothing is granted to it, so there is nothing to revoke; `cgp consent list` shows what is granted".to_owned(),
        });
    }
    let record = ConsentRecord::Revocation(Revocation {
        provider_id: provider_id.to_owned(),
        scope: None,
        grantor,
        revoked_at: Timestamp::now().to_wire(),
    });
    store.append(&record)?;
    Ok(record)
}

/// One record of the store with whether it is still in force.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LedgerEntry {
    /// 1-based position in the store.
    pub index: usize,
    /// `in_force`, `revoked`, `expired`, `not_yet_valid`, `recorded`
    /// (revocations), or `unknown_not_granted` (an unreadable line of the
    /// store may concern its provider).
    pub state: &'static str,
    /// The record as stored.
    pub record: ConsentRecord,
}

/// Every record of `ledger`, in file order, with its state at `now`.
pub fn ledger_entries(ledger: &ConsentLedger, now: Timestamp) -> Vec<LedgerEntry> {
    let records = &ledger.records;
    records
        .iter()
        .enumerate()
        .map(|(i, record)| {
            let revoked_later = |provider: &str, scope: Option<&EgressScope>| {
                records[i + 1..].iter().any(|r| match r {
                    ConsentRecord::Revocation(rev) => {
                        rev.provider_id == provider
                            && match (&rev.scope, scope) {
                                (None, _) => true,
                                (Some(a), Some(b)) => a == b,
                                (Some(_), None) => false,
                            }
                    }
                    _ => false,
                })
            };
            let timed = |granted: &str, expires: Option<&String>| {
                let granted = Timestamp::parse(granted).ok();
                let expires = expires.map(|e| Timestamp::parse(e).ok());
                match (granted, expires) {
                    (None, _) | (_, Some(None)) => "unreadable_time",
                    (Some(g), _) if now < g => "not_yet_valid",
                    (_, Some(Some(e))) if e <= now => "expired",
                    _ => "in_force",
                }
            };
            // A line that cannot be read may be a revocation: fail closed.
            let unknown = |provider: &str| ledger.unreadable_line_for(provider).is_some();
            let state = match record {
                // A revoked grant says so even when an unreadable line may
                // concern its provider; a receipt says "unknown" first.
                ConsentRecord::Receipt(r)
                    if r.is_egress_grant() && revoked_later(&r.provider_id, None) =>
                {
                    "revoked"
                }
                ConsentRecord::Receipt(r) if unknown(&r.provider_id) => "unknown_not_granted",
                ConsentRecord::Receipt(r) if revoked_later(&r.provider_id, r.scope.as_ref()) => {
                    "revoked"
                }
                ConsentRecord::Receipt(r) => timed(&r.granted_at, r.expires_at.as_ref()),
                ConsentRecord::Revocation(_) => "recorded",
            };
            LedgerEntry {
                index: i + 1,
                state,
                record: record.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use contextgraph_types::GrantorKind;

    #[test]
    fn suggested_commands_quote_what_a_shell_would_split_or_expand() {
        assert_eq!(shell_quote("search"), "search");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(
            grant_command("m", &["vendor:x".into()], &["--dir".into(), "my ws".into()]),
            "cgp consent grant m --scope vendor:x --dir 'my ws'"
        );
    }

    fn grantor() -> Grantor {
        Grantor {
            kind: GrantorKind::Human,
            id: "ada".into(),
        }
    }

    fn grant(expires_at: Option<&str>) -> ConsentRecord {
        ConsentRecord::Receipt(ConsentReceipt {
            scope: None,
            provider_id: "p".into(),
            provider_name: "p".into(),
            provider_version: "1".into(),
            grantor: grantor(),
            granted_at: "2026-01-01T00:00:00Z".into(),
            expires_at: expires_at.map(str::to_owned),
        })
    }

    #[test]
    fn ledger_entries_say_which_records_are_in_force_revoked_or_expired() {
        let now = Timestamp::parse("2026-06-01T00:00:00Z").unwrap();
        let ledger = ConsentLedger {
            records: vec![
                grant(None),
                ConsentRecord::Revocation(Revocation {
                    provider_id: "p".into(),
                    scope: None,
                    grantor: grantor(),
                    revoked_at: "2026-02-01T00:00:00Z".into(),
                }),
                grant(Some("2026-03-01T00:00:00Z")),
                grant(None),
                grant(Some("not a time")),
            ],
            warnings: Vec::new(),
            unreadable: Vec::new(),
        };
        let states: Vec<&str> = ledger_entries(&ledger, now)
            .iter()
            .map(|e| e.state)
            .collect();
        assert_eq!(
            states,
            [
                "revoked",
                "recorded",
                "expired",
                "in_force",
                "unreadable_time"
            ]
        );
    }
}
