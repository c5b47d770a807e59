//! `cgp context "<goal>"`: the main job — the best context for a goal from
//! this workspace, under a budget, as one fenced, cited prompt block.
//!
//! The built-in provider is the workspace provider over `--dir` (default:
//! the current directory), run in-process: no configuration, no network.
//! Its answer is audited like any provider's (B1–B4, F1–F5, D1 recomputed,
//! P1–P3, G1–G2, Q1, `as_of`) and composed by `contextgraph-compose`:
//! trusted dedup, one global budget, injection-proof fencing (R3), and an
//! audit entry for every frame offered.
//!
//! Output: the prompt on stdout; with `--json`, the whole composition
//! (prompt, citations, audit, usage — shape documented in
//! `contextgraph-compose`); with `--explain`, a table of included and
//! excluded frames on stderr.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use contextgraph_compose::{
    compose, Budget, Composition, FrameStatus, Options, Placement, ProviderOutcome, PREAMBLE,
};
use contextgraph_provider::Provider;
use contextgraph_provider_workspace::{WorkspaceOptions, WorkspaceProvider};
use contextgraph_types::{token_cost_of_len, ContextQuery, FrameKind, DEFAULT_SAFETY_FACTOR};

use super::CommandError;
use crate::output;

/// Arguments of `cgp context`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  cgp context \"how does the retry loop back off?\"
  cgp context \"fix the failing config test\" --budget 4000 --anchor src/config.rs
  cgp context \"where are frames validated?\" --kinds symbol,doc --json | jq .audit.budget
  cgp context \"explain the consent gate\" --explain > prompt.txt

Exit codes:
  0  the prompt was written (it may be empty when nothing matched; see --explain)
  1  failure: the workspace could not be indexed, or the provider failed
  2  usage error")]
pub struct ContextArgs {
    /// What the context is for, in your own words.
    pub goal: String,
    /// The workspace to draw context from.
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// The budget for the whole prompt block.
    #[arg(long, default_value_t = 8000)]
    pub budget: u32,
    /// Whether --budget counts model tokens (converted with --safety-factor) or budget tokens (bytes/4).
    #[arg(long, value_enum, default_value_t = BudgetUnit::Model)]
    pub unit: BudgetUnit,
    /// Model tokens assumed per budget token when --unit is model.
    #[arg(long, default_value_t = DEFAULT_SAFETY_FACTOR)]
    pub safety_factor: f64,
    /// Only these frame kinds (comma-separated: snippet, symbol, doc, …).
    #[arg(long, value_delimiter = ',')]
    pub kinds: Vec<String>,
    /// A file or symbol the goal is about; frames near it rank higher (repeatable).
    #[arg(long = "anchor")]
    pub anchors: Vec<String>,
    /// Ranked puts the best evidence at the edges; stable is byte-identical for prompt caches.
    #[arg(long, value_enum, default_value_t = PlacementArg::Ranked)]
    pub placement: PlacementArg,
    /// The most frames to ask the provider for.
    #[arg(long, default_value_t = 64)]
    pub max_frames: u32,
    /// Print the whole composition (prompt, citations, audit, usage) as JSON instead of the prompt.
    #[arg(long)]
    pub json: bool,
    /// Print a table of included and excluded frames, with reasons, on stderr.
    #[arg(long)]
    pub explain: bool,
}

/// The unit of `--budget`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum BudgetUnit {
    /// Model tokens, converted into budget tokens with the safety factor.
    Model,
    /// Budget tokens: ceil(bytes / 4), the protocol's accounting unit.
    Budget,
}

/// `--placement`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum PlacementArg {
    /// Best evidence at the edges, weakest in the middle.
    Ranked,
    /// Canonical order, byte-identical for the same frames.
    Stable,
}

/// Run `cgp context`.
pub fn run(args: ContextArgs) -> Result<(), CommandError> {
    if args.goal.trim().is_empty() {
        return Err("the goal is empty: say what the context is for, e.g. cgp context \"how is the config loaded?\"".into());
    }
    let budget = match args.unit {
        BudgetUnit::Model => Budget::model_tokens_with_factor(args.budget, args.safety_factor),
        BudgetUnit::Budget => Budget::budget_tokens(args.budget),
    };
    let options = WorkspaceOptions {
        progress: std::io::stderr().is_terminal(),
        ..WorkspaceOptions::default()
    };
    let (provider, _source) = WorkspaceProvider::open(&args.dir, options)
        .map_err(|e| format!("cannot index the workspace {}: {e}", args.dir.display()))?;
    let provider_id = provider.info().name;

    // The preamble is charged to the same budget, so the provider is asked
    // only for what can still hold content; fences are charged at composition.
    let for_content = budget
        .in_budget_tokens()
        .saturating_sub(token_cost_of_len(PREAMBLE.len()));
    let mut query = ContextQuery::new(args.goal.clone(), args.max_frames, for_content);
    query.kinds = args
        .kinds
        .iter()
        .map(|k| FrameKind::from_wire(k.trim()))
        .collect();
    query.anchors = args.anchors.clone();

    // The provider is ours, but its answer is audited like anyone's (B2).
    let outcome = match provider.query(&query) {
        Ok(result) => ProviderOutcome::audited(provider_id.clone(), &query, result),
        Err(e) => {
            return Err(format!("provider {provider_id} failed ({}): {}", e.code, e.message).into())
        }
    };
    let placement = match args.placement {
        PlacementArg::Ranked => Placement::Ranked,
        PlacementArg::Stable => Placement::Stable,
    };
    let composition = compose(&[outcome], &Options::new(budget).with_placement(placement))
        .map_err(|e| format!("cannot compose the prompt: {e:?}"))?;

    if args.explain {
        explain(&composition);
    }
    let mut stdout = std::io::stdout().lock();
    let written = if args.json {
        serde_json::to_writer_pretty(&mut stdout, &composition)
            .map_err(std::io::Error::from)
            .and_then(|()| stdout.write_all(b"\n"))
    } else {
        stdout.write_all(composition.prompt.as_bytes())
    };
    output::finish_stdout(written.and_then(|()| stdout.flush()))
}

/// The `--explain` table, on stderr.
fn explain(c: &Composition) {
    let mut err = std::io::stderr().lock();
    let b = &c.audit.budget;
    let _ = writeln!(
        err,
        "budget: {} of {} budget tokens used ({} content, {} preamble and fences)",
        b.used,
        b.requested,
        b.content,
        u64::from(b.used).saturating_sub(b.content)
    );
    let _ = writeln!(
        err,
        "{:<9} {:>6}  {:<48}  detail",
        "status", "tokens", "frame"
    );
    for f in &c.audit.frames {
        let (status, detail) = match &f.status {
            FrameStatus::Included(inc) => ("included", format!("as {:?}", inc.label)),
            FrameStatus::Excluded(exc) => ("excluded", format!("{exc}")),
        };
        let _ = writeln!(
            err,
            "{status:<9} {:>6}  {:<48}  {detail}",
            f.token_cost,
            truncate(&f.frame.frame_id, 48)
        );
    }
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut out: String = s.chars().take(max - 1).collect();
        out.push('…');
        out
    }
}
