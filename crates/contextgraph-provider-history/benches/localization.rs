//! Issue 27's localization benchmark: for sampled commits C (see
//! `contextgraph_provider_history::localization`), the query is C's
//! subject, the workspace index is built from C's parent's tree, the
//! history is served as of just before C, and the answers are the code
//! files C modified. File-level recall@10 and MRR@10: the workspace
//! provider alone, and fused with the history provider's frames (each
//! frame's changed files, in frame order; reciprocal-rank fusion, k = 60),
//! with one history frame for the plain goal (by default a plain goal
//! gets none: these figures are why). Tuning repositories: fd, got; held-out: uvicorn, viper.
//! `cargo bench -p contextgraph-provider-history --bench localization`;
//! `CGP_LOCALIZATION_CASES` sets the cases per repository (default 30).

mod common;

use std::collections::HashMap;
use std::path::Path;

use contextgraph_provider_history::localization::{load_cases, Case};
use contextgraph_provider_history::{HistoryOptions, HistoryProvider};
use contextgraph_provider_sdk::Provider;
use contextgraph_provider_workspace::{WorkspaceOptions, WorkspaceProvider};
use contextgraph_search::CacheLocation;
use contextgraph_types::{ContextQuery, Timestamp};

/// Reciprocal-rank fusion constant.
const RRF_K: f32 = 60.0;

fn main() {
    let per_repo: usize = std::env::var("CGP_LOCALIZATION_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    println!("| repository | split | cases | recall@10 workspace | recall@10 +history | MRR@10 workspace | MRR@10 +history |");
    println!("|---|---|---|---|---|---|---|");
    let mut totals: HashMap<&str, [f64; 5]> = HashMap::new();
    for (name, split) in common::BUNDLES {
        let dir = match common::clone_of(name) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("skipping {name}: {e}");
                continue;
            }
        };
        let repo = git2::Repository::open(&dir).expect("open clone");
        let cases = match load_cases(&repo, per_repo) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("skipping {name}: {e}");
                continue;
            }
        };
        let cache = tempfile::tempdir().expect("temp");
        let history = HistoryProvider::open(
            &dir,
            HistoryOptions {
                cache: CacheLocation::Base(cache.path().to_path_buf()),
                // A plain goal gets no history frame by default (the
                // decision these figures were measured for): one here.
                plain_goal_frames: 1,
                ..HistoryOptions::default()
            },
        )
        .expect("history");
        let mut sums = [0f64; 4];
        for case in &cases {
            let [r_ws, r_both, m_ws, m_both] = evaluate(&repo, &history, case);
            sums[0] += r_ws;
            sums[1] += r_both;
            sums[2] += m_ws;
            sums[3] += m_both;
        }
        let n = cases.len().max(1) as f64;
        let split_name = match split {
            common::Split::Tuning => "tuning",
            common::Split::HeldOut => "held-out",
        };
        println!(
            "| {name} | {split_name} | {} | {:.3} | {:.3} | {:.3} | {:.3} |",
            cases.len(),
            sums[0] / n,
            sums[1] / n,
            sums[2] / n,
            sums[3] / n
        );
        let t = totals.entry(split_name).or_insert([0.0; 5]);
        for i in 0..4 {
            t[i] += sums[i];
        }
        t[4] += cases.len() as f64;
    }
    for split in ["tuning", "held-out"] {
        if let Some(t) = totals.get(split) {
            let n = t[4].max(1.0);
            println!(
                "| **all {split}** | | {} | {:.3} | {:.3} | {:.3} | {:.3} |",
                t[4],
                t[0] / n,
                t[1] / n,
                t[2] / n,
                t[3] / n
            );
        }
    }
}

/// recall@10 and MRR@10, workspace alone and fused with history.
fn evaluate(repo: &git2::Repository, history: &HistoryProvider, case: &Case) -> [f64; 4] {
    let tree_dir = tempfile::tempdir().expect("temp");
    write_tree(repo, case.parent, tree_dir.path());
    let options = WorkspaceOptions {
        cache: CacheLocation::Disabled,
        ..WorkspaceOptions::default()
    };
    let (ws, _) = WorkspaceProvider::open(tree_dir.path(), options).expect("workspace");
    let root = ws.root().to_path_buf();
    let q = ContextQuery::new(case.query.as_str(), 40, 30_000);
    let ws_files = dedup(
        ws.query(&q)
            .expect("workspace query")
            .frames
            .iter()
            .filter_map(|f| f.uri.as_deref())
            .filter_map(|u| contextgraph_types::file_uri::file_uri_to_path(u).ok())
            .filter_map(|p| {
                p.strip_prefix(&root)
                    .ok()
                    .map(|r| r.to_string_lossy().into_owned())
            }),
    );
    let mut hq = ContextQuery::new(case.query.as_str(), 10, 30_000);
    hq.as_of = Some(Timestamp::from_unix(case.commit_time - 1, 0).to_string());
    let hist_files = dedup(
        history
            .query(&hq)
            .expect("history query")
            .frames
            .iter()
            .flat_map(|f| changed_files(f.content.as_deref().unwrap_or("")))
            .filter(|p| root.join(p).is_file()),
    );
    let fused = fuse(&ws_files, &hist_files);
    let (r1, m1) = metrics(&ws_files, &case.answers);
    let (r2, m2) = metrics(&fused, &case.answers);
    [r1, r2, m1, m2]
}

/// The paths a history frame lists under "Changed files".
fn changed_files(content: &str) -> Vec<String> {
    content
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("  ")?;
            let (letter, path) = rest.split_once(' ')?;
            if !matches!(letter, "A" | "M" | "D" | "R") {
                return None;
            }
            Some(
                path.rsplit_once(" -> ")
                    .map_or(path, |(_, new)| new)
                    .to_owned(),
            )
        })
        .collect()
}

fn dedup(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// Reciprocal-rank fusion of two rankings.
fn fuse(a: &[String], b: &[String]) -> Vec<String> {
    let mut score: HashMap<&str, f32> = HashMap::new();
    for list in [a, b] {
        for (i, f) in list.iter().enumerate() {
            *score.entry(f.as_str()).or_insert(0.0) += 1.0 / (RRF_K + i as f32 + 1.0);
        }
    }
    let mut out: Vec<(&str, f32)> = score.into_iter().collect();
    out.sort_by(|x, y| y.1.total_cmp(&x.1).then_with(|| x.0.cmp(y.0)));
    out.into_iter().map(|(f, _)| f.to_owned()).collect()
}

/// recall@10 and MRR@10 of `ranked` against `answers`.
fn metrics(ranked: &[String], answers: &[String]) -> (f64, f64) {
    let top: Vec<&String> = ranked.iter().take(10).collect();
    let found = answers.iter().filter(|a| top.contains(a)).count();
    let recall = found as f64 / answers.len().max(1) as f64;
    let mrr = top
        .iter()
        .position(|f| answers.contains(f))
        .map_or(0.0, |i| 1.0 / (i as f64 + 1.0));
    (recall, mrr)
}

/// Write commit `id`'s tree under `dir` (text blobs under 1 MiB).
fn write_tree(repo: &git2::Repository, id: git2::Oid, dir: &Path) {
    let tree = repo.find_commit(id).and_then(|c| c.tree()).expect("tree");
    tree.walk(git2::TreeWalkMode::PreOrder, |parent, entry| {
        if entry.kind() != Some(git2::ObjectType::Blob) {
            return git2::TreeWalkResult::Ok;
        }
        let Some(name) = entry.name() else {
            return git2::TreeWalkResult::Ok;
        };
        if let Ok(blob) = repo.find_blob(entry.id()) {
            if blob.size() < 1 << 20 && !blob.is_binary() {
                let path = dir.join(parent).join(name);
                if let Some(p) = path.parent() {
                    let _ = std::fs::create_dir_all(p);
                }
                let _ = std::fs::write(&path, blob.content());
            }
        }
        git2::TreeWalkResult::Ok
    })
    .expect("tree walk");
}
