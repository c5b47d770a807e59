//! A host fanning out across 50 HTTP shards (issue 28, item 4): one
//! `cgp.toml` listing fifty loopback shards (`common::shards`, served
//! in-process by the real HTTP server adapter), two of them dead (nothing
//! listens on their port), one slow (it holds its query past its
//! deadline), two of them replicas of one repository. Consent is by the
//! `org-tenant` scope with receipts, granted in one command. Bounded: the
//! shards live on loopback for the length of the test, and the only wait
//! is the slow shard's 400 ms deadline.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;

use contextgraph_testkit::sandbox::Sandbox;
use serde_json::Value;

use crate::common::shards::{Fleet, Role, ShardSpec};

const SHARDS: usize = 50;
const DEAD: [&str; 2] = ["shard-07", "shard-31"];
const SLOW: &str = "shard-23";
const SLOW_TIMEOUT_MS: u64 = 400;
/// Generous for the others: a loaded 2-core machine must not make a live
/// shard look slow.
const TIMEOUT_MS: u64 = 8000;
const GOAL: &str = "how does the retry backoff double the delay after each attempt";

fn specs() -> Vec<ShardSpec> {
    (0..SHARDS)
        .map(|i| {
            let name = format!("shard-{i:02}");
            let role = if DEAD.contains(&name.as_str()) {
                Role::Dead
            } else if name == SLOW {
                Role::Slow
            } else {
                Role::Answers
            };
            // shard-01 is a replica of shard-00: the same repository.
            let repo = if i == 1 { 0 } else { i };
            ShardSpec { name, repo, role }
        })
        .collect()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn fifty_shards_two_dead_one_slow_answer_within_budget_deduped_and_reported_by_name() {
    let s = Sandbox::new(crate::CGP);
    let fleet = Fleet::start(specs());
    s.write(
        "ws/cgp.toml",
        &fleet.config(|spec| {
            if spec.role == Role::Slow {
                SLOW_TIMEOUT_MS
            } else {
                TIMEOUT_MS
            }
        }),
    );
    let names: Vec<String> = fleet.shards.iter().map(|s| s.spec.name.clone()).collect();

    // C1/C6: without receipts nothing is sent to any shard.
    let refused = s.run(&["context", GOAL, "--json", "--no-input"]);
    assert_ne!(refused.status.code(), Some(0), "{}", text(&refused.stderr));
    let sent: usize = fleet
        .shards
        .iter()
        .map(|s| s.counters.queries.load(Ordering::SeqCst))
        .sum();
    assert_eq!(sent, 0, "no shard is queried before consent");
    // What to grant, once for all of them.
    let all: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| !DEAD.contains(n))
        .collect();
    let once = format!(
        "to grant them all at once, run: cgp consent grant {} --scope org-tenant",
        all.join(" ")
    );
    assert!(
        text(&refused.stderr).contains(&once),
        "{once}\n{}",
        text(&refused.stderr)
    );

    // One command grants every shard it can reach an org-tenant receipt;
    // the two dead ones are named, with why, and the command fails.
    let mut grant = vec!["consent", "grant"];
    grant.extend(names.iter().map(String::as_str));
    grant.extend(["--scope", "org-tenant"]);
    let granted = s.run(&grant);
    let (out, err) = (text(&granted.stdout), text(&granted.stderr));
    assert_eq!(granted.status.code(), Some(1), "{out}\n{err}");
    let receipts: BTreeSet<&str> = out
        .lines()
        .filter(|l| l.starts_with("receipt") && l.contains("scope org-tenant"))
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(receipts.len(), SHARDS - DEAD.len(), "{out}");
    assert!(err.contains("2 of 50 providers not granted"), "{err}");
    for dead in DEAD {
        assert!(!receipts.contains(dead), "{out}");
        assert!(
            err.contains(&format!("provider `{dead}`")) || err.contains(dead),
            "{err}"
        );
    }

    // The answer.
    let answered = s.run(&["context", GOAL, "--json", "--no-input"]);
    let (out, err) = (text(&answered.stdout), text(&answered.stderr));
    assert_eq!(answered.status.code(), Some(0), "{err}");
    // It came without the slow shard's answer: that shard was asked and
    // has not answered yet (it holds its query until the fleet is dropped).
    let slow = fleet.shard(SLOW);
    assert_eq!(slow.counters.queries.load(Ordering::SeqCst), 1);
    assert_eq!(slow.counters.answered.load(Ordering::SeqCst), 0);

    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let providers: BTreeMap<&str, &Value> = v["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p))
        .collect();
    assert_eq!(providers.len(), SHARDS);

    // The dead and the slow are reported by name, with the reason.
    for dead in DEAD {
        let p = providers[dead];
        assert_eq!(p["status"], "not_started", "{p}");
        let detail = p["detail"].as_str().unwrap();
        assert!(
            detail.contains("onnect") && detail.contains("GET /healthz"),
            "why, and what to check: {detail}"
        );
        assert!(
            err.contains(&format!("warning: provider {dead}: ")),
            "{err}"
        );
    }
    let p = providers[SLOW];
    assert_eq!(p["status"], "timed_out", "{p}");
    assert_eq!(p["timeout_ms"], SLOW_TIMEOUT_MS, "{p}");
    // It cost its deadline and no more (timer slack aside).
    let elapsed = p["elapsed_ms"].as_u64().unwrap();
    assert!(
        (SLOW_TIMEOUT_MS - 10..=SLOW_TIMEOUT_MS + 250).contains(&elapsed),
        "the slow shard cost {elapsed} ms against its {SLOW_TIMEOUT_MS} ms deadline: {p}"
    );
    assert!(
        err.contains(&format!("warning: provider {SLOW}: no answer within")),
        "{err}"
    );
    // Everyone else answered; stderr names only the three.
    let accepted = providers
        .values()
        .filter(|p| p["status"] == "accepted")
        .count();
    assert_eq!(accepted, SHARDS - DEAD.len() - 1, "{out}");
    assert_eq!(
        err.lines()
            .filter(|l| l.starts_with("warning: provider"))
            .count(),
        3,
        "{err}"
    );

    // The budget holds, and is spread: no shard takes it all.
    let budget = &v["audit"]["budget"];
    let requested = budget["requested"].as_u64().unwrap();
    assert!(budget["used"].as_u64().unwrap() <= requested, "{budget}");
    assert!(
        v["usage"]["budget_consumed"].as_u64().unwrap() <= requested,
        "{}",
        v["usage"]
    );
    let citations = v["citations"].as_array().unwrap();
    let contributors: BTreeSet<&str> = citations
        .iter()
        .map(|c| c["frame"]["provider_id"].as_str().unwrap())
        .collect();
    assert!(
        contributors.len() >= 20,
        "{} shards in the prompt: {contributors:?}",
        contributors.len()
    );
    let most = v["audit"]["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["used"].as_u64().unwrap_or(0))
        .max()
        .unwrap();
    assert!(most * 4 < requested, "one shard used {most} of {requested}");

    // The replicas' identical frames are one block, citing both.
    let repo0: Vec<&Value> = citations
        .iter()
        .filter(|c| {
            c["frame"]["frame_id"]
                .as_str()
                .is_some_and(|id| id.starts_with("repo-0/"))
        })
        .collect();
    assert!(!repo0.is_empty(), "repository 0 is in the prompt: {out}");
    let ids: BTreeSet<&str> = repo0
        .iter()
        .map(|c| c["frame"]["frame_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids.len(),
        repo0.len(),
        "a frame of the replicas is in the prompt twice"
    );
    for c in &repo0 {
        let mut from: BTreeSet<&str> = c["merged"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["provider_id"].as_str())
            .collect();
        from.insert(c["frame"]["provider_id"].as_str().unwrap());
        assert_eq!(
            from,
            BTreeSet::from(["shard-00", "shard-01"]),
            "each replicated frame cites both replicas: {c}"
        );
    }

    // `cgp providers` at 50, on an 80-column terminal: one line per shard.
    let listed = s
        .command(&["providers"])
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    let (out, err) = (text(&listed.stdout), text(&listed.stderr));
    assert_eq!(listed.status.code(), Some(1), "two are down: {err}");
    for line in out.lines() {
        assert!(
            line.chars().count() < 80,
            "{} columns: {line:?}",
            line.chars().count()
        );
    }
    for name in &names {
        let rows: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with(&format!("{name} ")))
            .collect();
        assert_eq!(rows.len(), 1, "one row for {name}:\n{out}");
        if DEAD.contains(&name.as_str()) {
            assert!(rows[0].contains("DOWN ["), "{out}");
        } else {
            assert!(
                rows[0].contains("ok (") && rows[0].contains("granted"),
                "{out}"
            );
        }
    }
    // Not fifty blocks of eight lines: a line per shard, the notes, a summary.
    assert!(out.lines().count() < SHARDS + 20, "{out}");
    assert!(
        out.starts_with("50 providers: 48 up, 2 down; 0 need consent"),
        "{out}"
    );
    drop(fleet);
}
