//! `cgp consent` end to end: grants pinned to the handshake, receipts per
//! scope, revocation recorded, and `cgp context` honouring all of it.

use contextgraph_testkit::sandbox::Sandbox;

const EGRESS: &str = r#"{"reads":true,"writes":false,"egress":true}"#;
const SCOPED: &str =
    r#"{"reads":true,"writes":false,"egress":true,"egress_scopes":["third-party-model"]}"#;

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn toml_str(p: &std::path::Path) -> String {
    format!("{:?}", p.display().to_string())
}

fn configure(s: &Sandbox, data_flow: &str) {
    let script = s.script_provider("egress-test", data_flow);
    s.write(
        "ws/cgp.toml",
        &format!("[providers.remote]\ncommand = {}\n", toml_str(&script)),
    );
}

#[test]
fn c1_grant_list_and_revoke_round_trip_and_context_follows_the_store() {
    let s = Sandbox::new(crate::CGP);
    configure(&s, EGRESS);
    let out = s.run(&["consent", "list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("no records"), "{}", stdout(&out));

    let out = s.run(&["context", "retry"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cgp consent grant remote"),
        "{}",
        stderr(&out)
    );
    assert_eq!(s.queries_received("egress-test"), 0);

    let out = s.run(&["consent", "grant", "remote", "--grantor", "ada"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let receipt = stdout(&out);
    assert!(
        receipt.contains("grant    remote (egress-test) 1.0.0 (egress) by ada"),
        "{receipt}"
    );
    assert!(
        receipt.contains(&s.path("data/consent.ndjson").display().to_string()),
        "{receipt}"
    );

    let out = s.run(&["consent", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["records"][0]["state"], "in_force", "{v}");
    assert_eq!(v["records"][0]["record"]["provider_version"], "1.0.0");

    let out = s.run(&["context", "retry"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        s.queries_received("egress-test"),
        1,
        "queried once consent is recorded"
    );

    let out = s.run(&["consent", "revoke", "remote"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("revoked  remote"), "{}", stdout(&out));
    let out = s.run(&["consent", "list"]);
    assert!(stdout(&out).contains("revoked "), "{}", stdout(&out));
    let out = s.run(&["context", "retry"]);
    assert!(out.status.success());
    assert_eq!(
        s.queries_received("egress-test"),
        1,
        "nothing more after the revocation"
    );
    // Nothing left to revoke.
    let out = s.run(&["consent", "revoke", "remote"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("nothing to revoke"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn c6_a_scoped_provider_without_scope_is_refused_naming_the_command_and_a_receipt_records_expiry() {
    let s = Sandbox::new(crate::CGP);
    configure(&s, SCOPED);
    let out = s.run(&["consent", "grant", "remote"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("run: cgp consent grant remote --scope third-party-model"),
        "{}",
        stderr(&out)
    );
    let out = s.run(&["consent", "grant", "remote", "--scope", "org-tenant"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("does not declare the scope org-tenant"),
        "{}",
        stderr(&out)
    );
    let out = s.run(&[
        "consent",
        "grant",
        "remote",
        "--scope",
        "third-party-model",
        "--expires",
        "30d",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["records"][0]["record"], "scope_receipt", "{v}");
    assert_eq!(v["records"][0]["scope"], "third-party-model");
    assert!(
        v["records"][0]["expires_at"]
            .as_str()
            .is_some_and(|e| e > v["records"][0]["granted_at"].as_str().unwrap()),
        "{v}"
    );
}

#[test]
fn a_provider_that_keeps_data_local_needs_no_consent_and_bad_input_exits_1() {
    let s = Sandbox::new(crate::CGP);
    configure(&s, EGRESS);
    let out = s.run(&["consent", "grant", "workspace"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("needs no consent"),
        "{}",
        stderr(&out)
    );
    let out = s.run(&["consent", "grant", "nobody"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not configured"), "{}", stderr(&out));
    // A bad flag value is a usage error: exit 2, as `cgp --help` promises (issue 12).
    let out = s.run(&["consent", "grant", "remote", "--expires", "soon"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--expires"), "{}", stderr(&out));
    let out = s.run(&[
        "consent",
        "grant",
        "remote",
        "--expires",
        "2001-01-01T00:00:00Z",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("in the past"), "{}", stderr(&out));
    let out = s.run(&["consent", "revoke", "remote"]);
    assert_eq!(out.status.code(), Some(1));
    // None of these wrote anything.
    let out = s.run(&["consent", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["records"].as_array().unwrap().len(), 0, "{v}");
}

#[test]
fn help_has_examples_and_usage_errors_exit_2() {
    let s = Sandbox::new(crate::CGP);
    for args in [
        &["consent", "--help"][..],
        &["consent", "grant", "--help"][..],
    ] {
        let out = s.run(args);
        assert!(out.status.success());
        assert!(!stdout(&out).contains('\x1b'));
    }
    assert!(stdout(&s.run(&["consent", "--help"])).contains("Examples:"));
    assert_eq!(s.run(&["consent", "grant"]).status.code(), Some(2));
    assert_eq!(s.run(&["consent"]).status.code(), Some(2));
}
