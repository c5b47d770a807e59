//! `cgp context` with providers that behave like other CGP implementations
//! (the `cgp-fixture-foreign` program): the host repairs what its policy
//! allows and says so, `--strict-audit` / `strict_audit = true` quarantine
//! instead with truthful counts, and two providers announcing the same name
//! (two `cgp serve docs`) are used side by side under their cgp.toml keys.

use contextgraph_testkit::sandbox::Sandbox;

const FOREIGN: &str = env!("CARGO_BIN_EXE_cgp-fixture-foreign");

fn toml_str(p: &std::path::Path) -> String {
    format!("{:?}", p.display().to_string())
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A configuration with only the foreign provider, keyed `foreign`, with
/// the file-digest and short-ranges behaviours; `extra` goes on top.
fn foreign_config(s: &Sandbox, extra: &str) -> std::path::PathBuf {
    s.write(
        "conf/cgp.toml",
        &format!(
            "{extra}[providers.workspace]\nenabled = false\n[providers.foreign]\ncommand = {}\nargs = [\"--name\", \"other-impl\", \"--behave\", \"file-digest,short-ranges\"]\n",
            toml_str(std::path::Path::new(FOREIGN))
        ),
    )
}

fn context_json(
    s: &Sandbox,
    config: &std::path::Path,
    more: &[&str],
) -> (serde_json::Value, String, bool) {
    let mut args = vec![
        "context",
        "retry backoff delay",
        "--json",
        "--no-input",
        "--config",
        config.to_str().unwrap(),
    ];
    args.extend_from_slice(more);
    let out = s.run(&args);
    let v = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (v, text(&out.stderr), out.status.success())
}

fn provider<'a>(v: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    v["providers"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == name))
        .unwrap_or_else(|| panic!("no provider {name} in {v}"))
}

fn audit<'a>(v: &'a serde_json::Value, key: &str) -> &'a serde_json::Value {
    v["audit"]["providers"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["provider_id"] == key))
        .unwrap_or_else(|| panic!("no audit line for {key} in {v}"))
}

#[test]
fn file_hash_digests_and_short_ranges_are_repaired_and_said_so() {
    let s = Sandbox::new(crate::CGP);
    let config = foreign_config(&s, "");
    let (v, stderr, ok) = context_json(&s, &config, &[]);
    assert!(ok, "{stderr}");
    let p = provider(&v, "foreign");
    assert_eq!(p["status"], "accepted", "{p}");
    assert_eq!(p["provider_id"], "foreign");
    assert_eq!(p["announced_name"], "other-impl");
    assert_eq!(p["frames"], 4, "{p}");
    let repairs: Vec<&str> = p["repairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(
        repairs
            .iter()
            .any(|r| r
                .starts_with("repaired: D1 — declared digest was not of the content; recomputed")),
        "{repairs:?}"
    );
    assert!(
        repairs.iter().any(|r| r.starts_with("repaired: F5 — ")),
        "{repairs:?}"
    );
    let a = audit(&v, "foreign");
    assert_eq!(a["frames_included"], 4, "{a}");
    assert!(
        a["repairs"].as_array().is_some_and(|r| !r.is_empty()),
        "{a}"
    );
    let prompt = v["prompt"].as_str().unwrap();
    assert!(prompt.contains("provider=\"foreign\""), "{prompt}");
    assert!(prompt.contains("BASE_DELAY_MS"), "{prompt}");
    // Citations carry the host's identity: recomputed digests, no L<n>.
    for c in v["citations"].as_array().unwrap() {
        assert_eq!(c["frame"]["provider_id"], "foreign");
        for p in c["provenance"].as_array().unwrap() {
            let range = p["range"].as_str().unwrap();
            assert!(range.contains('-'), "{range}");
        }
    }
    assert!(
        stderr.contains("note: provider foreign (announces other-impl): repaired: D1"),
        "{stderr}"
    );
}

#[test]
fn strict_audit_quarantines_them_and_counts_every_frame_it_rejected() {
    let s = Sandbox::new(crate::CGP);
    let config = foreign_config(&s, "");
    let by_flag = context_json(&s, &config, &["--strict-audit"]);
    let config = foreign_config(&s, "strict_audit = true\n");
    let by_file = context_json(&s, &config, &[]);
    for (how, (v, stderr, ok)) in [
        ("--strict-audit", by_flag),
        ("strict_audit = true", by_file),
    ] {
        // Nothing else answered: exit 1, and no JSON on stdout.
        assert!(!ok, "{how}: {stderr}");
        assert!(v.is_null(), "{how}: {v}");
        assert!(
            stderr.contains(
                "provider foreign: B2: its answer of 4 frame(s) broke D1, F5 and was dropped whole"
            ),
            "{how}: {stderr}"
        );
    }
    // With another provider answering, the quarantined one's counts are in the reports.
    let config = s.write(
        "conf/cgp.toml",
        &format!(
            "strict_audit = true\n[providers.foreign]\ncommand = {}\nargs = [\"--behave\", \"placeholder-digest\"]\n",
            toml_str(std::path::Path::new(FOREIGN))
        ),
    );
    let (v, stderr, ok) = context_json(&s, &config, &[]);
    assert!(ok, "{stderr}");
    let p = provider(&v, "foreign");
    assert_eq!(p["status"], "quarantined", "{p}");
    assert_eq!(
        (p["frames_offered"].as_u64(), p["frames_rejected"].as_u64()),
        (Some(4), Some(4)),
        "{p}"
    );
    let a = audit(&v, "foreign");
    assert_eq!(
        (a["frames_offered"].as_u64(), a["frames_included"].as_u64()),
        (Some(4), Some(0)),
        "{a}"
    );
    let usage = v["usage"]["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["provider_id"] == "foreign")
        .unwrap();
    assert_eq!(usage["frames_rejected"], 4, "{usage}");
}

#[test]
fn two_docs_providers_announcing_the_same_name_are_used_side_by_side() {
    let s = Sandbox::new(crate::CGP);
    s.write(
        "a/retry.md",
        "# Retry\n\nThe backoff delay doubles on every retry.\n",
    );
    s.write(
        "b/limits.md",
        "# Limits\n\nA retry gives up after five attempts of backoff.\n",
    );
    let cgp = toml_str(std::path::Path::new(crate::CGP));
    let config = s.write(
        "conf/cgp.toml",
        &format!(
            "[providers.workspace]\nenabled = false\n\
             [providers.docs-a]\ncommand = {cgp}\nargs = [\"serve\", \"docs\", {}]\n\
             [providers.docs-b]\ncommand = {cgp}\nargs = [\"serve\", \"docs\", {}]\n",
            toml_str(&s.path("a")),
            toml_str(&s.path("b"))
        ),
    );
    let (v, stderr, ok) = context_json(&s, &config, &[]);
    assert!(ok, "{stderr}");
    for key in ["docs-a", "docs-b"] {
        let p = provider(&v, key);
        assert_eq!(p["status"], "accepted", "{p}");
        assert_eq!(p["provider_id"], key);
        assert_eq!(p["announced_name"], "contextgraph-provider-docs");
        assert!(p["frames"].as_u64().unwrap() > 0, "{p}");
    }
    let prompt = v["prompt"].as_str().unwrap();
    assert!(prompt.contains("provider=\"docs-a\""), "{prompt}");
    assert!(prompt.contains("provider=\"docs-b\""), "{prompt}");
    assert!(prompt.contains("doubles on every retry"), "{prompt}");
    assert!(prompt.contains("five attempts"), "{prompt}");
    // `cgp providers` shows each key with the announced name beside it.
    let out = s.run(&["providers", "--config", config.to_str().unwrap()]);
    let table = text(&out.stdout);
    assert!(
        table.contains("docs-a (contextgraph-provider-docs)"),
        "{table}"
    );
    assert!(
        table.contains("docs-b (contextgraph-provider-docs)"),
        "{table}"
    );
}
