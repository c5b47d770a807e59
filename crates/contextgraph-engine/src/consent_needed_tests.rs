//! [`Engine::consent_needed`] and [`Engine::grant_and_enable`] with real
//! shell-script stdio providers and a real consent store that does not
//! exist when the engine starts (the first-run case a terminal prompt meets).

use std::path::{Path, PathBuf};

use contextgraph_config::{Config, Environment};
use contextgraph_types::{EgressScope, Grantor, GrantorKind};

use crate::{ContextRequest, Engine, GrantRequest, OutcomeStatus};

/// A stdio provider acking with `data_flow`, answering no frames, logging
/// every line it receives to `<name>.log`.
fn script(dir: &Path, name: &str, data_flow: &str) -> PathBuf {
    let path = dir.join(format!("{name}.sh"));
    let ack = format!(
        r#"{{"type":"handshake_ack","protocol_version":"contextgraph/1.0-draft","provider":{{"name":"{name}","version":"2.1.0","data_flow":{data_flow}}},"capabilities":{{"query":{{"kinds":["doc"]}}}}}}"#
    );
    let body = format!(
        "#!/bin/sh\nwhile IFS= read -r line; do\n  printf '%s\\n' \"$line\" >> '{}'\n  case \"$line\" in\n    *'\"type\":\"handshake\"'*) printf '%s\\n' '{ack}' ;;\n    *'\"type\":\"query\"'*) printf '%s\\n' '{{\"type\":\"frames\",\"result\":{{\"frames\":[],\"truncated\":false}}}}' ;;\n    *'\"type\":\"shutdown\"'*) exit 0 ;;\n  esac\ndone\n",
        dir.join(format!("{name}.log")).display()
    );
    std::fs::write(&path, body).unwrap();
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&path, perms).unwrap();
    path
}

fn queries(dir: &Path, name: &str) -> usize {
    std::fs::read_to_string(dir.join(format!("{name}.log")))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("\"type\":\"query\""))
        .count()
}

fn status(answer: &crate::ContextAnswer, name: &str) -> OutcomeStatus {
    answer
        .providers
        .iter()
        .find(|p| p.name == name)
        .map(|p| p.status)
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn consent_needed_lists_refused_egress_providers_and_grant_and_enable_counts_in_this_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let plain = script(
        d,
        "plain-test",
        r#"{"reads":true,"writes":false,"egress":true}"#,
    );
    let scoped = script(
        d,
        "scoped-test",
        r#"{"reads":true,"writes":false,"egress":true,"egress_scopes":["third-party-model"]}"#,
    );
    let local = script(
        d,
        "local-test",
        r#"{"reads":true,"writes":false,"egress":false}"#,
    );
    let store = d.join("consent.ndjson");
    let text = format!(
        "consent_store = {:?}\n[providers.workspace]\nenabled = false\n[providers.plain]\ncommand = {:?}\n[providers.model]\ncommand = {:?}\n[providers.local]\ncommand = {:?}\n",
        store.display().to_string(),
        plain.display().to_string(),
        scoped.display().to_string(),
        local.display().to_string()
    );
    let config =
        Config::from_toml_str(&text, &d.join("cgp.toml"), &Environment::default()).unwrap();
    let mut engine = Engine::start(&config, d).await.unwrap();

    // The egress providers, in the engine's order, with what a grant must cover;
    // the local one needs nothing. Asking sends no payload.
    let needed = engine.consent_needed();
    let summary: Vec<(&str, Vec<EgressScope>, &str)> = needed
        .iter()
        .map(|n| (n.name.as_str(), n.scopes.clone(), n.command.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            (
                "model",
                vec![EgressScope::ThirdPartyModel],
                "cgp consent grant model --scope third-party-model"
            ),
            ("plain", vec![], "cgp consent grant plain"),
        ]
    );
    assert_eq!(needed[0].descriptor.info.version, "2.1.0");
    assert!(
        needed[0].reason.contains("third-party-model"),
        "{}",
        needed[0].reason
    );
    assert!(!store.exists(), "listing writes nothing");

    let grantor = Grantor {
        kind: GrantorKind::Human,
        id: "ada".into(),
    };
    let request = |scopes: Vec<EgressScope>| GrantRequest {
        scopes,
        expires_at: None,
        grantor: grantor.clone(),
    };
    let goal = ContextRequest {
        goal: "retry".into(),
        ..ContextRequest::default()
    };
    // A plain `grant` creates the store, but an engine that started without
    // one does not consult it: `plain` is still refused in this run.
    engine.grant("plain", &request(vec![])).unwrap();
    assert!(store.is_file());
    let answer = engine.context(&goal).await.unwrap();
    assert_eq!(status(&answer, "plain"), OutcomeStatus::ConsentRequired);
    assert_eq!(queries(d, "plain-test"), 0);

    // grant_and_enable attaches the store, so both grants count now.
    let records = engine
        .grant_and_enable("model", &request(vec![EgressScope::ThirdPartyModel]))
        .unwrap();
    assert_eq!(records.len(), 1);
    assert!(engine.consent_needed().is_empty());
    let answer = engine.context(&goal).await.unwrap();
    assert_eq!(
        status(&answer, "plain"),
        OutcomeStatus::Accepted,
        "{:?}",
        answer.providers
    );
    assert_eq!(
        status(&answer, "model"),
        OutcomeStatus::Accepted,
        "{:?}",
        answer.providers
    );
    assert_eq!(status(&answer, "local"), OutcomeStatus::Accepted);
    engine.shutdown().await;
    assert_eq!(queries(d, "plain-test"), 1);
    assert_eq!(queries(d, "scoped-test"), 1);

    // A grant the provider's declaration does not allow is refused as by
    // `grant`, and attaches nothing.
    let mut engine = Engine::start(&config, d).await.unwrap();
    assert!(engine.grant_and_enable("local", &request(vec![])).is_err());
    engine.shutdown().await;
}
