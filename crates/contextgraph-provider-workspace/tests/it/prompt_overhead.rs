//! Prompt overhead: what a `cgp context` prompt spends on anything but
//! evidence (preamble, fence lines, labels, titles) stays at most 10% at the
//! default budget, on real code: this checkout's search library and
//! composer sources (nested crates, long paths, methods in impl blocks).
//!
//! The answer is composed as `cgp context` composes it: the default budget
//! (8,000 model tokens at the default safety factor), the preamble charged
//! first, 64 frames asked for, ranked placement.

use contextgraph_compose::PREAMBLE;
use contextgraph_compose::{compose, parse_prompt, Budget, Options, Placement, ProviderOutcome};
use contextgraph_config::{DEFAULT_BUDGET, DEFAULT_SAFETY_FACTOR};
use contextgraph_provider_sdk::Provider;
use contextgraph_provider_workspace::{CacheLocation, WorkspaceOptions, WorkspaceProvider};
use contextgraph_types::{token_cost_of_len, ContextQuery};
use std::path::Path;

/// The bound the issue sets on everything that is not frame content.
const MAX_OVERHEAD: f64 = 0.10;

/// Copy the `.rs` files under `from` to `to`, keeping their relative paths.
fn copy_sources(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read dir").flatten() {
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_sources(&path, &target);
        } else if path.extension().is_some_and(|e| e == "rs") {
            std::fs::create_dir_all(to).expect("mkdir");
            std::fs::copy(&path, &target).expect("copy");
        }
    }
}

#[test]
fn prompt_overhead_is_at_most_ten_percent_at_the_default_budget() {
    // The fixture: the sources of the search library and of the composer
    // (real code, nested modules, long paths), copied as they are in this
    // checkout.
    let dir = tempfile::tempdir().expect("temp dir");
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for krate in ["contextgraph-search", "contextgraph-compose"] {
        copy_sources(
            &crates.join(krate).join("src"),
            &dir.path().join("crates").join(krate).join("src"),
        );
    }
    let options = WorkspaceOptions {
        cache: CacheLocation::Disabled,
        ..WorkspaceOptions::default()
    };
    let (provider, _) = WorkspaceProvider::open(dir.path(), options).expect("open");
    let budget = Budget::model_tokens_with_factor(DEFAULT_BUDGET, DEFAULT_SAFETY_FACTOR);
    let for_content = budget
        .in_budget_tokens()
        .saturating_sub(token_cost_of_len(PREAMBLE.len()));
    let goal = "how does an index update remove the postings of a file that changed";
    let answer = provider
        .query(&ContextQuery::new(goal, 64, for_content))
        .expect("query");
    let outcomes = [ProviderOutcome::accepted(
        provider.info().name.as_str(),
        answer.frames,
    )];
    let composition = compose(
        &outcomes,
        &Options::new(budget).with_placement(Placement::Ranked),
    )
    .expect("compose");
    let prompt = &composition.prompt;
    let blocks = parse_prompt(prompt).expect("the prompt parses");
    assert!(blocks.len() >= 5, "several blocks: {}", blocks.len());
    assert!(
        prompt.len() as u64 * 10 >= u64::from(budget.in_budget_tokens()) * 4 * 7,
        "the budget is mostly used: {} bytes",
        prompt.len()
    );
    let content: usize = blocks.iter().map(|b| b.content.len()).sum();
    let overhead = (prompt.len() - content) as f64 / prompt.len() as f64;
    // Shown with `--nocapture`: the figure, reproducibly.
    eprintln!(
        "prompt overhead: {:.2}% of {} bytes, {} blocks",
        overhead * 100.0,
        prompt.len(),
        blocks.len()
    );
    assert!(
        overhead <= MAX_OVERHEAD,
        "overhead {:.2}% of {} bytes over {} blocks; labels: {:?}",
        overhead * 100.0,
        prompt.len(),
        blocks.len(),
        blocks.iter().map(|b| &b.label).collect::<Vec<_>>()
    );
    // The labels are the compact form: path, line range, name in the file.
    for b in &blocks {
        assert!(b.label.contains(".rs:L"), "{}", b.label);
        assert!(
            !b.label.contains("index::"),
            "module path repeated: {}",
            b.label
        );
    }
}
