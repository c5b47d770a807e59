//! Prompt overhead of one goal on one directory, composed as `cgp context`
//! composes it with the workspace provider alone: the default budget (8,000
//! model tokens at the default safety factor), the preamble charged first,
//! 64 frames asked for, ranked placement.
//!
//! ```text
//! cargo run --release -p contextgraph-provider-workspace --example goal_overhead -- DIR "GOAL" [BUDGET]
//! ```
//!
//! Prints the prompt's bytes, its blocks, the overhead (everything that is
//! not frame content: preamble, fence lines, attributes) in bytes and
//! percent, the mean label length, and the share of content bytes that
//! appear unchanged in the prompt. The index is cached under
//! `$TMPDIR/cgp-goal-overhead` (the first run on a directory builds it).
//! With `CGP_SHOW_LABELS` set, each block's label, title and size.

use std::process::ExitCode;

use contextgraph_compose::{
    compose, parse_prompt, Budget, Options, Placement, ProviderOutcome, PREAMBLE,
};
use contextgraph_config::{DEFAULT_BUDGET, DEFAULT_SAFETY_FACTOR};
use contextgraph_provider_sdk::Provider;
use contextgraph_provider_workspace::{CacheLocation, WorkspaceOptions, WorkspaceProvider};
use contextgraph_types::{token_cost_of_len, ContextQuery};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("goal_overhead: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: goal_overhead DIR \"GOAL\" [BUDGET]";
    let dir = args.next().ok_or(usage)?;
    let goal = args.next().ok_or(usage)?;
    let model_tokens = match args.next() {
        Some(b) => b.parse().map_err(|e| format!("budget {b}: {e}"))?,
        None => DEFAULT_BUDGET,
    };
    let options = WorkspaceOptions {
        cache: CacheLocation::Base(std::env::temp_dir().join("cgp-goal-overhead")),
        ..WorkspaceOptions::default()
    };
    let (provider, _) = WorkspaceProvider::open(&dir, options).map_err(|e| e.to_string())?;
    let budget = Budget::model_tokens_with_factor(model_tokens, DEFAULT_SAFETY_FACTOR);
    let for_content = budget
        .in_budget_tokens()
        .saturating_sub(token_cost_of_len(PREAMBLE.len()));
    let answer = provider
        .query(&ContextQuery::new(goal.clone(), 64, for_content))
        .map_err(|e| e.to_string())?;
    let offered: Vec<String> = answer
        .frames
        .iter()
        .filter_map(|f| f.content.clone())
        .collect();
    let outcomes = [ProviderOutcome::accepted(
        provider.info().name.as_str(),
        answer.frames,
    )];
    let composition = compose(
        &outcomes,
        &Options::new(budget).with_placement(Placement::Ranked),
    )
    .map_err(|e| e.to_string())?;
    let prompt = &composition.prompt;
    let blocks = parse_prompt(prompt).map_err(|e| e.to_string())?;
    let content: usize = blocks.iter().map(|b| b.content.len()).sum();
    let overhead = prompt.len() - content;
    let labels: usize = blocks.iter().map(|b| b.label.len()).sum();
    let titled = blocks.iter().filter(|b| !b.title.is_empty()).count();
    if std::env::var_os("CGP_SHOW_LABELS").is_some() {
        for b in &blocks {
            println!("{} [{}] {} bytes", b.label, b.title, b.content.len());
        }
    }
    let pct = |part: usize, whole: usize| 100.0 * part as f64 / whole.max(1) as f64;
    println!(
        "goal {goal:?} on {dir} at {model_tokens} model tokens (factor {DEFAULT_SAFETY_FACTOR}): \
         prompt {} bytes, {} blocks ({titled} with a title); overhead {overhead} bytes = {:.2}% \
         (preamble {} bytes); mean label {:.0} bytes",
        prompt.len(),
        blocks.len(),
        pct(overhead, prompt.len()),
        PREAMBLE.len(),
        labels as f64 / blocks.len().max(1) as f64,
    );
    // Each distinct content once (the composer keeps one block per copy).
    let mut included: Vec<&String> = offered
        .iter()
        .filter(|c| blocks.iter().any(|b| b.content == **c))
        .collect();
    included.sort();
    included.dedup();
    let total: usize = included.iter().map(|c| c.len()).sum();
    let verbatim: usize = included
        .iter()
        .filter(|c| prompt.contains(&format!(">\n{c}\n</")))
        .map(|c| c.len())
        .sum();
    println!(
        "verbatim: {verbatim} of {total} content bytes appear unchanged = {:.3}%",
        pct(verbatim, total)
    );
    Ok(())
}
