//! The engine end to end: real providers (the built-in workspace provider
//! in-process, shell-script stdio providers), a real consent store.

use std::path::PathBuf;

use contextgraph_compose::Placement;
use contextgraph_config::{Config, Environment};
use contextgraph_engine::{
    ConsentState, ContextRequest, Engine, EngineError, EngineOptions, GrantRequest, OutcomeStatus,
};
use contextgraph_types::{EgressScope, Grantor, GrantorKind};

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::write(
            ws.join("src/retry.rs"),
            "/// Retries a request with exponential backoff.\npub fn retry_with_backoff(attempts: u32) -> u32 {\n    attempts * 2\n}\n",
        )
        .unwrap();
        // Keep the workspace index out of the user's cache (set once, before
        // any provider reads it).
        static CACHE: std::sync::Once = std::sync::Once::new();
        CACHE.call_once(|| {
            std::env::set_var(
                "CONTEXTGRAPH_WORKSPACE_CACHE",
                std::env::temp_dir().join("contextgraph-engine-test-cache"),
            )
        });
        Fixture { dir }
    }

    fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    /// A stdio provider as a shell script: acks the handshake declaring
    /// `data_flow`, answers every query with no frames (or never, when
    /// `hang`), and logs every line it receives.
    fn script(&self, name: &str, data_flow: &str, hang: bool) -> PathBuf {
        let path = self.dir.path().join(format!("{name}.sh"));
        let log = self.log(name);
        let ack = format!(
            r#"{{"type":"handshake_ack","protocol_version":"contextgraph/1.0-draft","provider":{{"name":"{name}","version":"1.0.0","data_flow":{data_flow}}},"capabilities":{{"query":{{"kinds":["doc"]}}}}}}"#
        );
        let answer = if hang {
            "sleep 3600".to_owned()
        } else {
            r#"printf '%s\n' '{"type":"frames","result":{"frames":[],"truncated":false}}'"#
                .to_owned()
        };
        let body = format!(
            "#!/bin/sh\nwhile IFS= read -r line; do\n  printf '%s\\n' \"$line\" >> '{}'\n  case \"$line\" in\n    *'\"type\":\"handshake\"'*) printf '%s\\n' '{ack}' ;;\n    *'\"type\":\"query\"'*) {answer} ;;\n    *'\"type\":\"shutdown\"'*) exit 0 ;;\n  esac\ndone\n",
            log.display()
        );
        std::fs::write(&path, body).unwrap();
        let mut perms = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&path, perms).unwrap();
        path
    }

    fn log(&self, name: &str) -> PathBuf {
        self.dir.path().join(format!("{name}.log"))
    }

    fn queries_received(&self, name: &str) -> usize {
        std::fs::read_to_string(self.log(name))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("\"type\":\"query\""))
            .count()
    }

    fn config(&self, extra: &str) -> Config {
        let text = format!(
            "consent_store = {:?}\n{extra}",
            self.dir.path().join("consent.ndjson").display().to_string()
        );
        Config::from_toml_str(&text, &self.ws().join("cgp.toml"), &Environment::default()).unwrap()
    }
}

const EGRESS: &str = r#"{"reads":true,"writes":false,"egress":true}"#;
const SCOPED: &str =
    r#"{"reads":true,"writes":false,"egress":true,"egress_scopes":["third-party-model"]}"#;

fn request(goal: &str) -> ContextRequest {
    ContextRequest {
        goal: goal.into(),
        budget_model_tokens: 4000,
        ..ContextRequest::default()
    }
}

fn ada() -> Grantor {
    Grantor {
        kind: GrantorKind::Human,
        id: "ada".into(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_default_config_answers_from_the_builtin_workspace_provider() {
    let f = Fixture::new();
    let engine = Engine::start(&Config::default(), &f.ws()).await.unwrap();
    let answer = engine.context(&request("retry backoff")).await.unwrap();
    assert_eq!(answer.answered(), 1, "{:?}", answer.providers);
    assert_eq!(answer.providers[0].name, "workspace");
    assert!(answer.composition.prompt.contains("retry_with_backoff"));
    assert!(!answer.composition.citations.is_empty());
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn c2_an_egress_provider_without_consent_is_sent_nothing_and_the_answer_names_the_grant_command(
) {
    let f = Fixture::new();
    let script = f.script("egress-test", EGRESS, false);
    let config = f.config(&format!(
        "[providers.remote]\ncommand = {:?}\n",
        script.display().to_string()
    ));
    let options = EngineOptions {
        grant_command_args: vec!["--dir".into(), "/some dir".into()],
        ..EngineOptions::default()
    };
    let engine = Engine::start_with(&config, &f.ws(), options).await.unwrap();
    let answer = engine.context(&request("retry")).await.unwrap();
    let remote = answer
        .providers
        .iter()
        .find(|p| p.name == "remote")
        .unwrap();
    assert_eq!(remote.status, OutcomeStatus::ConsentRequired, "{remote:?}");
    assert_eq!(
        remote.action.as_deref(),
        Some("cgp consent grant remote --dir '/some dir'")
    );
    assert!(
        remote
            .detail
            .as_deref()
            .unwrap()
            .contains("nothing was sent"),
        "{remote:?}"
    );
    // The workspace provider still answered.
    assert_eq!(answer.answered(), 1);
    engine.shutdown().await;
    assert_eq!(
        f.queries_received("egress-test"),
        0,
        "C2: no payload before consent"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn c1_a_grant_lets_the_egress_provider_be_queried_and_a_revocation_stops_it_again() {
    let f = Fixture::new();
    let script = f.script("egress-test", EGRESS, false);
    let config = f.config(&format!(
        "[providers.remote]\ncommand = {:?}\n",
        script.display().to_string()
    ));
    let only = EngineOptions {
        only: Some(vec!["remote".into()]),
        ..EngineOptions::default()
    };
    let engine = Engine::start_with(&config, &f.ws(), only.clone())
        .await
        .unwrap();
    let receipts = engine
        .grant(
            "remote",
            &GrantRequest {
                scopes: vec![],
                expires_at: None,
                grantor: ada(),
            },
        )
        .unwrap();
    assert_eq!(receipts.len(), 1);
    // A scope it does not declare is refused.
    let err = engine
        .grant(
            "remote",
            &GrantRequest {
                scopes: vec![EgressScope::OrgTenant],
                expires_at: None,
                grantor: ada(),
            },
        )
        .unwrap_err();
    assert!(err.to_string().contains("no off-machine scope"), "{err}");
    engine.shutdown().await;

    let engine = Engine::start(&config, &f.ws()).await.unwrap();
    let answer = engine.context(&request("retry")).await.unwrap();
    let remote = answer
        .providers
        .iter()
        .find(|p| p.name == "remote")
        .unwrap();
    assert_eq!(remote.status, OutcomeStatus::Accepted, "{remote:?}");
    let status = engine.providers().await;
    let remote_status = status.iter().find(|s| s.name == "remote").unwrap();
    assert!(
        matches!(remote_status.consent, ConsentState::Granted { .. }),
        "{remote_status:?}"
    );
    engine.shutdown().await;
    assert_eq!(f.queries_received("egress-test"), 1);

    let store = contextgraph_host::ConsentStore::open(f.dir.path().join("consent.ndjson")).unwrap();
    contextgraph_engine::revoke(&store, "remote", ada()).unwrap();
    let engine = Engine::start(&config, &f.ws()).await.unwrap();
    let answer = engine.context(&request("retry")).await.unwrap();
    let remote = answer
        .providers
        .iter()
        .find(|p| p.name == "remote")
        .unwrap();
    assert_eq!(remote.status, OutcomeStatus::ConsentRequired, "{remote:?}");
    engine.shutdown().await;
    assert_eq!(
        f.queries_received("egress-test"),
        1,
        "nothing more after the revocation"
    );
    // Revoking twice is refused: nothing is in force.
    assert!(contextgraph_engine::revoke(&store, "remote", ada()).is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn c6_a_scoped_provider_needs_a_receipt_for_each_scope_and_the_error_names_them() {
    let f = Fixture::new();
    let script = f.script("scoped-test", SCOPED, false);
    let config = f.config(&format!(
        "[providers.model]\ncommand = {:?}\n",
        script.display().to_string()
    ));
    let engine = Engine::start(&config, &f.ws()).await.unwrap();
    let answer = engine.context(&request("retry")).await.unwrap();
    let model = answer.providers.iter().find(|p| p.name == "model").unwrap();
    assert_eq!(
        model.action.as_deref(),
        Some("cgp consent grant model --scope third-party-model")
    );
    let err = engine
        .grant(
            "model",
            &GrantRequest {
                scopes: vec![],
                expires_at: None,
                grantor: ada(),
            },
        )
        .unwrap_err();
    assert!(matches!(err, EngineError::ScopesRequired { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("cgp consent grant model --scope third-party-model"),
        "{err}"
    );
    let receipts = engine
        .grant(
            "model",
            &GrantRequest {
                scopes: vec![EgressScope::ThirdPartyModel],
                expires_at: None,
                grantor: ada(),
            },
        )
        .unwrap();
    assert!(matches!(
        &receipts[0],
        contextgraph_host::ConsentRecord::Receipt(r) if r.scope.is_some()
    ));
    engine.shutdown().await;
    assert_eq!(f.queries_received("scoped-test"), 0);

    let engine = Engine::start(&config, &f.ws()).await.unwrap();
    let answer = engine.context(&request("retry")).await.unwrap();
    let model = answer.providers.iter().find(|p| p.name == "model").unwrap();
    assert_eq!(model.status, OutcomeStatus::Accepted, "{model:?}");
    engine.shutdown().await;
    assert_eq!(f.queries_received("scoped-test"), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_provider_that_cannot_start_is_reported_while_the_others_answer() {
    let f = Fixture::new();
    let config = f.config("[providers.ghost]\ncommand = \"/nonexistent/cgp-provider\"\n");
    let engine = Engine::start(&config, &f.ws()).await.unwrap();
    let answer = engine.context(&request("retry")).await.unwrap();
    let ghost = answer.providers.iter().find(|p| p.name == "ghost").unwrap();
    assert_eq!(ghost.status, OutcomeStatus::NotStarted);
    assert!(
        ghost
            .detail
            .as_deref()
            .unwrap()
            .starts_with("cannot run `/nonexistent/cgp-provider` (in "),
        "{ghost:?}"
    );
    assert_eq!(answer.answered(), 1);
    // The audit lists it too: nothing is dropped without an entry.
    assert!(answer
        .composition
        .audit
        .providers
        .iter()
        .any(|p| p.provider_id == "ghost"));
    let status = engine.providers().await;
    let ghost = status.iter().find(|s| s.name == "ghost").unwrap();
    assert!(
        ghost.health.is_err() && ghost.version.is_none(),
        "{ghost:?}"
    );
    let json = serde_json::to_value(&status).unwrap();
    assert_eq!(json[0]["health"]["status"], "error", "{json}");
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn each_provider_is_cut_off_at_its_own_timeout() {
    let f = Fixture::new();
    let script = f.script(
        "slow-test",
        r#"{"reads":true,"writes":false,"egress":false}"#,
        true,
    );
    // The workspace provider may take ten minutes; the slow one 2 s. If
    // the per-provider cap did not hold, the fan-out would wait for the longest.
    // The slow one's cap also bounds its start (spawning a shell and its
    // handshake), so it is not made small: 300 ms can pass before a shell
    // even runs on a loaded machine, and the provider would then be
    // reported not started instead of timed out.
    let config = f.config(&format!(
        "[providers.workspace]\ntimeout_ms = 600000\n[providers.slow]\ncommand = {:?}\ntimeout_ms = 2000\n",
        script.display().to_string()
    ));
    let engine = Engine::start(&config, &f.ws()).await.unwrap();
    let answer = engine.context(&request("retry")).await.unwrap();
    let slow = answer.providers.iter().find(|p| p.name == "slow").unwrap();
    assert_eq!(slow.status, OutcomeStatus::TimedOut, "{slow:?}");
    let audit = serde_json::to_value(&answer.composition.audit).unwrap();
    let slow_audit = audit["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["provider_id"] == "slow")
        .unwrap()
        .clone();
    assert_eq!(slow_audit["outcome"]["status"], "timed_out", "{slow_audit}");
    assert!(
        slow_audit["outcome"]["after_ms"].as_u64().unwrap() < 60_000,
        "{slow_audit}"
    );
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn configured_weights_and_placement_reach_the_composer() {
    let f = Fixture::new();
    let docs = f.ws().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(
        docs.join("retry.md"),
        "# Retry\n\nBackoff doubles the delay.\n",
    )
    .unwrap();
    let config = f.config(
        "[providers.workspace]\nweight = 3\n[providers.docs]\ndir = \"docs\"\nweight = 2\n",
    );
    let engine = Engine::start(&config, &f.ws()).await.unwrap();
    let req = ContextRequest {
        placement: Placement::Stable,
        ..request("retry backoff")
    };
    let answer = engine.context(&req).await.unwrap();
    assert_eq!(answer.answered(), 2, "{:?}", answer.providers);
    let weights: Vec<(String, u32)> = answer
        .composition
        .audit
        .providers
        .iter()
        .map(|p| (p.provider_id.clone(), p.weight))
        .collect();
    assert!(weights.contains(&("workspace".into(), 3)), "{weights:?}");
    assert!(weights.contains(&("docs".into(), 2)), "{weights:?}");
    assert_eq!(answer.composition.audit.placement, Placement::Stable);
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_goal_and_a_config_with_nothing_enabled_are_errors() {
    let f = Fixture::new();
    let engine = Engine::start(&Config::default(), &f.ws()).await.unwrap();
    assert!(matches!(
        engine.context(&request("  ")).await,
        Err(EngineError::BadRequest(_))
    ));
    engine.shutdown().await;
    let config = f.config("[providers.workspace]\nenabled = false\n");
    assert!(matches!(
        Engine::start(&config, &f.ws()).await,
        Err(EngineError::NoProviders)
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn c1_a_long_running_engine_that_creates_the_store_honours_a_grant_made_while_it_runs() {
    let f = Fixture::new();
    let script = f.script("egress-test", EGRESS, false);
    let config = f.config(&format!(
        "[providers.remote]\ncommand = {:?}\n",
        script.display().to_string()
    ));
    let options = EngineOptions {
        create_consent_store: true,
        ..EngineOptions::default()
    };
    let engine = Engine::start_with(&config, &f.ws(), options).await.unwrap();
    assert!(f.dir.path().join("consent.ndjson").is_file());
    let before = engine.context(&request("retry")).await.unwrap();
    let remote = before
        .providers
        .iter()
        .find(|p| p.name == "remote")
        .unwrap();
    assert_eq!(remote.status, OutcomeStatus::ConsentRequired);
    // Granted by another process (here: another engine) while this one runs.
    let other = Engine::start_with(
        &config,
        &f.ws(),
        EngineOptions {
            only: Some(vec!["remote".into()]),
            ..EngineOptions::default()
        },
    )
    .await
    .unwrap();
    other
        .grant(
            "remote",
            &GrantRequest {
                scopes: vec![],
                expires_at: None,
                grantor: ada(),
            },
        )
        .unwrap();
    other.shutdown().await;
    let after = engine.context(&request("retry")).await.unwrap();
    let remote = after.providers.iter().find(|p| p.name == "remote").unwrap();
    assert_eq!(remote.status, OutcomeStatus::Accepted, "{remote:?}");
    engine.shutdown().await;
    assert_eq!(f.queries_received("egress-test"), 1);
}

mod fuzz_replay;
#[path = "session/mod.rs"]
mod session;

/// Commit every file of the fixture's workspace as one commit with `message`
/// (a real repository, written with libgit2: no `git` binary needed).
fn commit_all(ws: &std::path::Path, message: &str) {
    let repo = git2::Repository::init(ws).unwrap();
    let mut index = repo.index().unwrap();
    index
        .add_all(["src"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::new(
        "Ada",
        "ada@example.invalid",
        &git2::Time::new(1_704_067_200, 0),
    )
    .unwrap();
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &[])
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_history_provider_is_on_by_default_in_a_git_working_tree_and_off_with_one_line() {
    let f = Fixture::new();
    // A `.git` that is no repository: the built-in history is not started.
    let engine = Engine::start(&Config::default(), &f.ws()).await.unwrap();
    let names: Vec<String> = engine
        .providers()
        .await
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(names, ["workspace"]);
    engine.shutdown().await;
    std::fs::remove_dir_all(f.ws().join(".git")).unwrap();
    commit_all(&f.ws(), "Add retry with exponential backoff");
    let engine = Engine::start(&Config::default(), &f.ws()).await.unwrap();
    let answer = engine
        .context(&request("why does retry use backoff"))
        .await
        .unwrap();
    assert_eq!(answer.answered(), 2, "{:?}", answer.providers);
    assert!(answer.providers.iter().any(|p| p.name == "history"));
    assert!(
        answer
            .composition
            .prompt
            .contains("Add retry with exponential backoff"),
        "{}",
        answer.composition.prompt
    );
    assert!(answer.composition.prompt.contains("retry_with_backoff"));
    engine.shutdown().await;
    let config = f.config("[providers.history]\nenabled = false\n");
    let engine = Engine::start(&config, &f.ws()).await.unwrap();
    let names: Vec<String> = engine
        .providers()
        .await
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(names, ["workspace"]);
    engine.shutdown().await;
}
