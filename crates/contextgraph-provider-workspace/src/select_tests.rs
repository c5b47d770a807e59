//! [`WorkspaceProvider::select`] builds only the frames packing can take;
//! its answer must be exactly that of building every candidate up to the
//! `want`-th fresh one and packing them all ([`WorkspaceProvider::select_all`],
//! the way queries were answered before). Checked over budgets that stop
//! packing at every point (the frame limit, the token budget, the `want`
//! cap) with stale files among the candidates, whose frames cannot be built.

use super::*;
use contextgraph_search::CacheLocation;

/// A function of `size` repeated lines mentioning the goal's words.
fn function(name: &str, size: usize) -> String {
    let mut body = format!("/// Retry the connection with backoff ({name}).\npub fn {name}() {{\n");
    for i in 0..size {
        body.push_str(&format!("    let retry_{i} = backoff_connection({i});\n"));
    }
    body.push_str("}\n\n");
    body
}

fn file(n: usize) -> String {
    (0..6)
        .map(|k| function(&format!("retry_{n}_{k}"), 1 + (n * 7 + k * 13) % 40))
        .collect()
}

#[test]
fn building_only_what_packing_takes_gives_the_same_answer() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("ws");
    std::fs::create_dir_all(root.join("src")).expect("mkdir");
    for n in 0..60 {
        std::fs::write(root.join(format!("src/m{n}.rs")), file(n)).expect("write");
    }
    let options = WorkspaceOptions {
        cache: CacheLocation::Disabled,
        threads: 1,
        ..WorkspaceOptions::default()
    };
    let (provider, _) = WorkspaceProvider::open(&root, options).expect("open");
    // Stale files: indexed, then changed, so their frames cannot be built.
    // A third of them, so that the `want`-th fresh candidate lies well
    // past the `want`-th candidate.
    for n in (0..60).filter(|n| n % 3 == 1) {
        let mut text = file(n);
        text.insert_str(0, "// edited\n");
        std::fs::write(root.join(format!("src/m{n}.rs")), text).expect("edit");
    }
    let mut compared = 0;
    let mut capped = 0;
    for goal in ["retry backoff connection", "backoff", "retry_3_2"] {
        let limits = [0u32, 1, 2, 4, 8, 16, 64, 100]
            .into_iter()
            .flat_map(|frames| (0..20).map(move |k| (frames, 25 + k * k * 80)));
        for (max_frames, max_tokens) in limits {
            for compact in [false, true] {
                let query = ContextQuery::new(goal, max_frames, max_tokens);
                let view = provider.workspace.view();
                let mut files = FileCache::default();
                let ranked = view.search(goal, &SearchOptions::default(), &mut files);
                let (frames, left_out) =
                    provider.select(&view, &ranked, &query, compact, &mut files);
                let want = (max_frames as usize)
                    .saturating_mul(4)
                    .clamp(32, MAX_MATERIALIZED);
                let costs: Vec<u64> = ranked
                    .iter()
                    .map(|r| {
                        view.chunk(r.slot).map_or(u64::MAX, |(_, c)| {
                            let len = match (&c.outline, compact) {
                                (Some(o), true) => o.len(),
                                _ => c.byte_len as usize,
                            };
                            u64::from(token_cost_of_len(len))
                        })
                    })
                    .collect();
                let (all, all_left_out) =
                    provider.select_all(&view, &ranked, &costs, &query, compact, want, &mut files);
                assert_eq!(
                    frames, all,
                    "{goal:?} at {max_frames} frames / {max_tokens} tokens, compact {compact}"
                );
                assert_eq!(
                    left_out, all_left_out,
                    "{goal:?} at {max_frames}/{max_tokens}"
                );
                compared += 1;
                if ranked.len() > want {
                    capped += 1;
                }
            }
        }
    }
    assert_eq!(compared, 3 * 8 * 20 * 2);
    // The `want` cap was reached in some of them (360 chunks, want 32 for
    // small frame limits).
    assert!(capped > 0, "no comparison reached the cap");
}
