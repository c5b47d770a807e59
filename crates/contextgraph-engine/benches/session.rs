//! Issue 16's benchmark: a scripted 10-turn agent session on this
//! repository's source, with overlapping goals and edits to two files
//! between turns, against ten independent calls with the same evidence.
//!
//! `cargo bench -p contextgraph-engine --bench session` prints, per turn,
//! the tokens the session sent and those an independent call sends (the
//! same goal's composition, computed in the same turn), the evidence
//! coverage (every frame of the independent call is either sent or listed
//! as already held, unchanged), and checks that no frame listed as
//! unchanged differs from the file's bytes at that turn (the digest of its
//! provenance range when it was sent, re-read from disk; a frame whose
//! lines moved must be reported as moved, and is checked at its new range). Then it times
//! `context_in_session` with 50 held frames against `context`, alternating,
//! and reports medians (what revalidation adds per call). Exits non-zero if
//! a stale frame is ever listed as unchanged or a target is missed.
//!
//! It also prints the *reuse bound*: the block charges of the distinct
//! frame versions (provider, id, digest) over the ten independent answers,
//! each counted once, plus the first turn's preamble. A session that gives
//! the model every independent answer's evidence sends at least that much,
//! whatever it reuses: the rest of the gap to the target is in how much the
//! answers to related goals overlap (retrieval), not in the session.
//!
//! `CGP_BENCH_REPO=DIR` takes the sources from another checkout (a fixed
//! corpus for before/after figures: this repository's own sources change
//! with every commit); `CGP_BENCH_DUMP=FILE` appends each turn's notes and
//! prompt to FILE, to read what the model is sent; `CGP_BENCH_BUDGET=N`
//! asks each turn with N model tokens instead of 4000. The focused session
//! is also run, reported and not gated, at the product's default budget
//! (8000): the target was set at 4000 when the benchmark was written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use contextgraph_config::Config;
use contextgraph_engine::{ContextRequest, Engine, Session};
use contextgraph_provider_sdk::read_range;
use contextgraph_testkit::corpus::copy_rust_sources;
use contextgraph_types::sha256::sha256_digest;
use contextgraph_types::LineRange;

/// A focused agent session: one task (the frame cache's revalidation),
/// asked about from overlapping angles, with edits to two files it touches.
const FOCUSED: [&str; 10] = [
    "how does the host revalidate held frames with verify",
    "which eviction reasons does revalidation report",
    "frame cache revalidate verify timeout",
    "how does the host revalidate held frames with verify",
    "verify request and verdict types",
    "revalidation report reusable and evicted frames",
    "how are verify verdicts handled in revalidation",
    "frame cache insert and held frames",
    "how does the host revalidate held frames with verify",
    "eviction reasons for stale gone and unknown verdicts",
];

/// A session that wanders across three topics (revalidation, fences,
/// consent), for comparison.
const MIXED: [&str; 10] = [
    "how does the host revalidate held frames with verify",
    "frame cache eviction reasons after revalidation",
    "how does compose fence frame content with a boundary token",
    "choosing the boundary token for fences",
    "how does the host revalidate held frames with verify",
    "consent store grant and revoke records",
    "fence boundary token and the prompt preamble",
    "frame cache revalidation after an edit",
    "consent grant command for egress providers",
    "how does the host revalidate held frames with verify",
];

/// Edits applied before a turn (1-based): (turn, file, from, to). The first
/// adds a line, so every frame below it in the file moves.
const EDITS: [(usize, &str, &str, &str); 3] = [
    (
        4,
        "contextgraph-host/src/cache.rs",
        "Frames held for reuse",
        "Frames held for reuse (edited,\n/// one line longer)",
    ),
    (
        7,
        "contextgraph-types/src/verify.rs",
        "pub",
        "pub /* edited */",
    ),
    (
        9,
        "contextgraph-host/src/cache.rs",
        "Revalidate every held frame",
        "Revalidate every held frame (edited)",
    ),
];

fn edit(ws: &Path, file: &str, from: &str, to: &str) {
    let path = ws.join(file);
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.contains(from), "{file} holds {from:?}");
    std::fs::write(&path, text.replacen(from, to, 1)).expect("write");
}

/// The digest of the bytes a provenance entry addresses, read now.
fn current_digest(uri: &str, range: Option<&str>) -> Option<String> {
    let path = PathBuf::from(uri.strip_prefix("file://")?);
    let bytes = std::fs::read(path).ok()?;
    let slice = match range {
        None => &bytes[..],
        Some(r) => read_range(&bytes, LineRange::parse(r)?)?,
    };
    Some(sha256_digest(slice))
}

/// Model tokens per turn for the gated sessions: 4000 (the budget the
/// target was set at when the benchmark was written), or `CGP_BENCH_BUDGET`.
fn budget() -> u32 {
    std::env::var("CGP_BENCH_BUDGET")
        .ok()
        .and_then(|b| b.parse().ok())
        .unwrap_or(4000)
}

/// The budget `cgp context` and the MCP server ask with when the agent
/// names none; the focused session is also reported at it.
const PRODUCT_DEFAULT_BUDGET: u32 = contextgraph_config::DEFAULT_BUDGET;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

struct Outcome {
    sent: u64,
    independent: u64,
    bound: u64,
    session: Session,
    engine: Engine,
    _dir: tempfile::TempDir,
}

/// Run one scripted session on a fresh copy of the sources.
async fn script(
    repo: &Path,
    name: &str,
    goals: &[&str],
    budget: u32,
    failures: &mut Vec<String>,
) -> Outcome {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("repo");
    copy_rust_sources(repo, &ws);
    let engine = Engine::start(&Config::default(), &ws)
        .await
        .expect("engine");
    let mut session = Session::new();
    // label → (uri, range, digest) of the version the model was sent.
    let mut delivered: BTreeMap<String, (String, Option<String>, String)> = BTreeMap::new();
    let (mut sent_total, mut independent_total) = (0u64, 0u64);
    // The reuse bound: each distinct frame version's block charged once.
    let mut seen_versions: std::collections::BTreeSet<(String, String, Option<String>)> =
        std::collections::BTreeSet::new();
    let mut bound = 0u64;
    println!("== {name} session, {budget} model tokens per turn");
    println!("turn  session  independent  bound  sent  reused  moved  resent  withdrawn  coverage");
    for (i, goal) in goals.iter().enumerate() {
        let n = i + 1;
        for (at, file, from, to) in EDITS {
            if at == n {
                edit(&ws, file, from, to);
            }
        }
        let request = ContextRequest {
            goal: (*goal).to_owned(),
            budget_model_tokens: budget,
            ..ContextRequest::default()
        };
        let turn = engine
            .context_in_session(&session, &request)
            .await
            .expect("turn");
        // No frame listed as unchanged (or moved) may differ from the file
        // now; a moved frame is checked at its new place, then held under
        // its new label.
        for m in &turn.moved {
            let Some((_, _, digest)) = delivered.remove(&m.previous) else {
                failures.push(format!(
                    "{name} turn {n}: {} moved but never delivered",
                    m.previous
                ));
                continue;
            };
            let now = turn
                .citations
                .iter()
                .find(|c| c.label == m.label)
                .and_then(|c| c.provenance.iter().find(|p| p.uri.is_some()));
            let Some(p) = now else {
                failures.push(format!("{name} turn {n}: {} moved, not cited", m.label));
                continue;
            };
            let (uri, range) = (p.uri.clone().unwrap_or_default(), p.range.clone());
            if current_digest(&uri, range.as_deref()).as_ref() != Some(&digest) {
                failures.push(format!(
                    "{name} turn {n}: STALE frame {} listed as moved, unchanged",
                    m.label
                ));
            }
            delivered.insert(m.label.clone(), (uri, range, digest));
        }
        for u in &turn.unchanged {
            let Some((uri, range, digest)) = delivered.get(&u.label) else {
                failures.push(format!(
                    "{name} turn {n}: {} unchanged but never delivered",
                    u.label
                ));
                continue;
            };
            if current_digest(uri, range.as_deref()).as_ref() != Some(digest) {
                failures.push(format!(
                    "{name} turn {n}: STALE frame {} listed as unchanged",
                    u.label
                ));
            }
        }
        for c in &turn.citations {
            if turn.sent.iter().any(|s| s.label == c.label) {
                if let Some(p) = c
                    .provenance
                    .iter()
                    .find(|p| p.uri.is_some() && p.digest.is_some())
                {
                    delivered.insert(
                        c.label.clone(),
                        (
                            p.uri.clone().unwrap_or_default(),
                            p.range.clone(),
                            p.digest.clone().unwrap_or_default(),
                        ),
                    );
                }
            }
        }
        // Coverage: the independent call's frames are all available.
        let available: Vec<(&str, &str)> = turn
            .citations
            .iter()
            .map(|c| (c.frame.provider_id.as_str(), c.frame.frame_id.as_str()))
            .collect();
        let wanted = &turn.answer.composition.citations;
        let covered = wanted
            .iter()
            .filter(|c| {
                available.contains(&(c.frame.provider_id.as_str(), c.frame.frame_id.as_str()))
            })
            .count();
        let resent = turn
            .sent
            .iter()
            .filter(|s| !matches!(s.why, contextgraph_engine::session::SendReason::New))
            .count();
        if let Some(dump) = std::env::var_os("CGP_BENCH_DUMP") {
            use std::io::Write as _;
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(dump)
                .expect("dump");
            let _ = writeln!(
                f,
                "===== {name} turn {n}\n{}----\n{}",
                turn.notes, turn.prompt
            );
        }
        let bound_before = bound;
        for f in &turn.answer.composition.audit.frames {
            if let contextgraph_compose::FrameStatus::Included(inc) = &f.status {
                let version = (
                    f.frame.provider_id.clone(),
                    f.frame.frame_id.clone(),
                    f.frame.content_digest.clone(),
                );
                if seen_versions.insert(version) {
                    bound += u64::from(inc.charge);
                }
            }
        }
        if n == 1 {
            // The preamble goes out once, with the first blocks (on the
            // first turn every included block is new, so the blocks are
            // what the bound grew by).
            bound += turn.independent_tokens.saturating_sub(bound - bound_before);
        }
        println!(
            "{n:>4}  {:>7}  {:>11}  {:>5}  {:>4}  {:>6}  {:>5}  {:>6}  {:>9}  {covered}/{}",
            turn.figures.tokens_sent,
            turn.independent_tokens,
            bound - bound_before,
            turn.sent.len(),
            turn.unchanged.len(),
            turn.moved.len(),
            resent,
            turn.withdrawn.len(),
            wanted.len()
        );
        sent_total += turn.figures.tokens_sent;
        independent_total += turn.independent_tokens;
        session = turn.into_next_session();
    }
    println!(
        "tokens: session {sent_total}, ten independent calls {independent_total}: {:.1}%",
        sent_total as f64 * 100.0 / independent_total as f64
    );
    println!(
        "reuse bound (distinct frame versions of the ten answers, each sent once): {bound} tokens, {:.1}% of independent",
        bound as f64 * 100.0 / independent_total as f64
    );
    Outcome {
        sent: sent_total,
        independent: independent_total,
        bound,
        session,
        engine,
        _dir: dir,
    }
}

fn main() {
    let repo = std::env::var_os("CGP_BENCH_REPO")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    let cache = tempfile::tempdir().expect("tempdir");
    std::env::set_var("CONTEXTGRAPH_WORKSPACE_CACHE", cache.path());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut failures = Vec::new();
        let mixed = script(&repo, "mixed-topic", &MIXED, budget(), &mut failures).await;
        mixed.engine.shutdown().await;
        if budget() != PRODUCT_DEFAULT_BUDGET {
            // Reported, not gated: larger answers to related goals share more.
            let at_default = script(
                &repo,
                "focused-task",
                &FOCUSED,
                PRODUCT_DEFAULT_BUDGET,
                &mut failures,
            )
            .await;
            at_default.engine.shutdown().await;
        }
        let focused = script(&repo, "focused-task", &FOCUSED, budget(), &mut failures).await;
        let ratio = focused.sent as f64 / focused.independent as f64;
        println!("focused-task target: session tokens <= 50% of independent: {:.1}%", ratio * 100.0);
        if ratio > 0.5 {
            failures.push(format!("focused session tokens are {:.1}% of independent", ratio * 100.0));
        }
        let _ = mixed.sent + mixed.independent + mixed.bound + focused.bound;

        // Revalidation with 50 held frames.
        let engine = focused.engine;
        let mut state: serde_json::Value =
            serde_json::from_slice(&focused.session.to_json()).expect("json");
        let held = state["held"].as_array_mut().expect("held");
        println!("held after 10 turns: {}", held.len());
        held.truncate(50);
        let held_n = held.len();
        let fifty = Session::from_json(&serde_json::to_vec(&state).expect("json")).expect("valid");
        let request = ContextRequest {
            goal: "how are usage reports computed".into(),
            budget_model_tokens: 4000,
            ..ContextRequest::default()
        };
        let (mut plain, mut with, mut reval) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..15 {
            let t = Instant::now();
            engine.context(&request).await.expect("context");
            plain.push(t.elapsed());
            let t = Instant::now();
            let turn = engine.context_in_session(&fifty, &request).await.expect("turn");
            with.push(t.elapsed());
            reval.push(turn.revalidation);
        }
        let (p, w, r) = (median(plain), median(with), median(reval));
        println!(
            "{held_n} held frames: context median {:.2} ms, context_in_session median {:.2} ms (adds {:.2} ms); verify of {held_n} frames median {:.2} ms (target <= 5 ms)",
            p.as_secs_f64() * 1e3,
            w.as_secs_f64() * 1e3,
            (w.as_secs_f64() - p.as_secs_f64()) * 1e3,
            r.as_secs_f64() * 1e3
        );
        if r > Duration::from_millis(5) {
            failures.push(format!("verify of {held_n} held frames takes {:.2} ms", r.as_secs_f64() * 1e3));
        }
        engine.shutdown().await;
        if !failures.is_empty() {
            for f in &failures {
                eprintln!("FAILED: {f}");
            }
            std::process::exit(1);
        }
    });
}
