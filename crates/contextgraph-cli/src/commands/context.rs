//! `cgp context "<goal>"`: the main job — the best context for a goal from
//! this workspace, under a budget, as one fenced, cited prompt block.
//!
//! It goes through the shared engine (`contextgraph-engine`): the providers
//! configured in cgp.toml (with no file, the built-in workspace provider
//! over `--dir`, in-process: no configuration, no network) are queried
//! together, each under its own timeout; every answer is audited (B1–B4,
//! F1–F5, D1 recomputed, …) and composed by `contextgraph-compose`: trusted
//! dedup, one global budget split by the configured weights,
//! injection-proof fencing (R3), and an audit entry for every frame offered.
//! An egress provider without consent is sent nothing, and stderr says the
//! exact `cgp consent grant …` command that would allow it (C1, C2, C6).
//! When a person is at the terminal (stdin and stderr are terminals, no
//! `--no-input`, no `CI`), they are asked first, provider by provider, with
//! what it declared; a grant is recorded as `cgp consent grant` records it
//! and the provider is queried in this run, and the default is to skip
//! (see [`super::consent_prompt`]). Pipes and scripts are never asked.
//!
//! Output: the prompt on stdout; with `--json`, the whole composition
//! (prompt, citations, audit, usage — shape documented in
//! `contextgraph-compose`) plus a `providers` list; with `--explain`, a
//! table of included and excluded frames on stderr. Progress goes to stderr
//! only when it is a terminal.

use std::io::{IsTerminal, Write};

use clap::{Args, ValueEnum};
use contextgraph_compose::{Budget, FrameStatus, Placement};
use contextgraph_engine::{
    ContextAnswer, ContextRequest, Engine, EngineOptions, OutcomeStatus, SessionTurn,
};
use contextgraph_types::FrameKind;

use super::config::{runtime, ConfigSelection};
use super::{consent_prompt, CommandError};
use crate::output;
use crate::terminal::for_terminal;

/// Arguments of `cgp context`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  cgp context \"how does the retry loop back off?\"
  cgp context \"fix the failing config test\" --budget 4000 --anchor src/config.rs
  cgp context \"where are frames validated?\" --kinds symbol,doc --json | jq .audit.budget
  cgp context \"explain the consent gate\" --explain > prompt.txt

  cgp context \"what calls the search API?\" --config ./ci/cgp.toml

  One conversation, turn by turn (evidence already sent and unchanged is listed, not resent):
  cgp context \"how is the config loaded?\" --session .cgp-session.json
  cgp context \"where is the config validated?\" --session .cgp-session.json --json | jq .session.totals

Providers come from cgp.toml (see `cgp config`); with none, the built-in workspace provider
reads --dir in-process, with no network. An egress provider without consent is not queried:
stderr names the exact `cgp consent grant …` command to run. On a terminal (stdin and stderr
both terminals, no --no-input, CI unset) cgp first asks, for each such provider, whether to
grant it (recorded like `cgp consent grant`, then queried now) or skip it (the default).

Providers are named by their cgp.toml key ([providers.<key>]); the name each announces is shown
beside it. The host repairs two harmless faults of other CGP implementations and keeps the
frames, saying so on stderr: a content_digest that is not of the content (recomputed, D1) and a
one-line range written L<n> (read as L<n>-<n>, F5). Every other fault drops the provider's whole
answer (B2). --strict-audit (or strict_audit = true in cgp.toml) repairs nothing.

Ranking ablations (the built-in workspace provider; as `cgp serve workspace` reads them):
CGP_RANK_SIGNALS_OFF=semantic,roles (or `all`) switches ranking steps off, CGP_RANK_SIGNALS_ON
switches them on, CGP_SEMANTIC=0 opens without the embedding model; a switch in force is said on
stderr, a misspelt one is an error. Step names: the workspace provider's README.

--explain and --json list every offered frame best first, with its rank (1 is best) and the
score its provider gave it; --json carries \"format_version\" (see `cgp --help`).

Exit codes:
  0  the prompt was written; providers that failed or were refused are reported on stderr
  1  failure: the configuration is wrong, or no provider answered (each one's reason is on stderr)
  2  usage error (also: an empty goal, --dir not a directory, --safety-factor below 1,
     --max-frames 0, --budget 0)
  3  nothing matched: the providers answered, but no frame is in the prompt (stderr says why
     and what to try; the prompt is empty, --json and --html are still written)")]
pub struct ContextArgs {
    /// What the context is for, in your own words.
    #[arg(value_parser = crate::validate::goal)]
    pub goal: String,
    /// The workspace to draw context from, and where cgp.toml is looked for.
    #[command(flatten)]
    pub selection: ConfigSelection,
    /// The budget for the whole prompt block (default: budget in cgp.toml, else 8000).
    #[arg(long, value_parser = crate::validate::budget)]
    pub budget: Option<u32>,
    /// Whether --budget counts model tokens (converted with --safety-factor) or budget tokens (bytes/4).
    #[arg(long, value_enum, default_value_t = BudgetUnit::Model)]
    pub unit: BudgetUnit,
    /// Model tokens assumed per budget token when --unit is model (default: safety_factor in cgp.toml, else 1.35).
    #[arg(long, value_parser = crate::validate::safety_factor)]
    pub safety_factor: Option<f64>,
    /// Only these frame kinds (comma-separated: snippet, symbol, doc, …).
    #[arg(long, value_delimiter = ',', value_parser = crate::validate::kind)]
    pub kinds: Vec<String>,
    /// A file or symbol the goal is about; frames near it rank higher (repeatable).
    #[arg(long = "anchor")]
    pub anchors: Vec<String>,
    /// Ranked puts the best evidence at the edges; stable is byte-identical for prompt caches.
    #[arg(long, value_enum, default_value_t = PlacementArg::Ranked)]
    pub placement: PlacementArg,
    /// The most frames to ask each provider for.
    #[arg(long, default_value_t = 64, value_parser = crate::validate::max_frames)]
    pub max_frames: u32,
    /// Print the whole composition (prompt, citations, audit, usage) as JSON instead of the prompt.
    #[arg(long)]
    pub json: bool,
    /// Print a table of included and excluded frames, with reasons, on stderr.
    #[arg(long)]
    pub explain: bool,
    /// Also write a self-contained HTML report (budget, providers, every frame with its
    /// reason, citations, the prompt) to this file; stdout is unchanged.
    #[arg(long, value_name = "PATH")]
    pub html: Option<std::path::PathBuf>,
    /// Never ask anything on the terminal: an egress provider without consent is skipped, with
    /// the grant command on stderr (as when stdin is not a terminal, or CI is set).
    #[arg(long)]
    pub no_input: bool,
    /// Repair nothing: drop the whole answer of a provider with any fault, even a content digest
    /// of other bytes or a one-line range written L7 for L7-7 (default: strict_audit in
    /// cgp.toml, else off).
    #[arg(long)]
    pub strict_audit: bool,
    /// Answer as one turn of the session kept in FILE (created if missing): evidence an earlier
    /// turn sent that is still valid is listed by label, not sent again; changed evidence is
    /// resent with a note, gone evidence is named as withdrawn. Delete FILE to start afresh.
    #[arg(long, value_name = "FILE")]
    pub session: Option<std::path::PathBuf>,
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
    let config = args.selection.load()?;
    let tokens = args.budget.unwrap_or(config.budget.value);
    let factor = args.safety_factor.unwrap_or(config.safety_factor.value);
    let budget = match args.unit {
        BudgetUnit::Model => Budget::model_tokens_with_factor(tokens, factor),
        BudgetUnit::Budget => Budget::budget_tokens(tokens),
    };
    let request = ContextRequest {
        goal: args.goal.clone(),
        budget_model_tokens: tokens,
        kinds: args
            .kinds
            .iter()
            .map(|k| FrameKind::from_wire(k.trim()))
            .collect(),
        anchors: args.anchors.clone(),
        max_frames: args.max_frames,
        placement: match args.placement {
            PlacementArg::Ranked => Placement::Ranked,
            PlacementArg::Stable => Placement::Stable,
        },
        safety_factor: Some(factor),
        budget: Some(budget),
    };
    let progress = std::io::stderr().is_terminal() && !output::quiet();
    let ask = consent_prompt::interactive(
        args.no_input,
        std::io::stdin().is_terminal(),
        progress,
        std::env::var_os("CI").as_deref(),
    );
    let options = EngineOptions {
        // Indexing progress: a bar on a terminal, otherwise a start and an
        // end line for a long index only (the search library decides).
        progress: !output::quiet(),
        grant_command_args: args.selection.repeat_args(),
        strict_audit: args.strict_audit,
        ..EngineOptions::default()
    };
    if !output::quiet() {
        super::first_index::announce(&config, &args.selection.dir);
    }
    let runtime = runtime()?;
    let mut engine = runtime.block_on(Engine::start_with(&config, &args.selection.dir, options))?;
    if ask {
        // Outside the runtime's future: the person may take their time, and
        // nothing is sent to any provider until they have answered (C2).
        consent_prompt::ask_for_consent(
            &mut engine,
            &mut std::io::stdin().lock(),
            &mut std::io::stderr().lock(),
            &consent_prompt::interactive_user(),
        );
    }
    if let Some(path) = &args.session {
        let session = super::session_file::load(path, &args.selection.dir)?;
        let turn = runtime.block_on(async {
            let status = Progress::show(progress, engine.provider_names().len());
            let turn = engine.context_in_session(&session, &request).await;
            status.clear();
            // The process exits next: the index is not freed piece by piece.
            engine.shutdown_for_exit().await;
            turn
        })?;
        report_providers(&turn.answer)?;
        if args.explain {
            explain(&turn.answer);
        }
        write_outputs(&args, &turn.answer, Some(&turn))?;
        // Kept only once the turn reached stdout: the file never says the
        // model holds what it was not given.
        super::session_file::save(path, &args.selection.dir, turn.next_session())?;
        return no_match(&args, &turn.answer);
    }
    let answer = runtime.block_on(async {
        let status = Progress::show(progress, engine.provider_names().len());
        let answer = engine.context(&request).await;
        status.clear();
        // The process exits next: the index is not freed piece by piece.
        engine.shutdown_for_exit().await;
        answer
    })?;
    report_providers(&answer)?;
    if args.explain {
        explain(&answer);
    }
    write_outputs(&args, &answer, None)?;
    no_match(&args, &answer)
}

/// When no frame is in the prompt: say so on stderr with what to try, and
/// end with [`NoMatch`](super::NoMatch) (exit 3). Otherwise `Ok`.
fn no_match(args: &ContextArgs, answer: &ContextAnswer) -> Result<(), CommandError> {
    let frames = &answer.composition.audit.frames;
    let included = frames.iter().filter(|f| f.is_included()).count();
    match no_match_hint(&args.goal, &args.kinds, frames.len(), included) {
        None => Ok(()),
        Some(text) => {
            crate::width::say(&text);
            Err(Box::new(super::NoMatch))
        }
    }
}

/// What to say when `included` of `offered` frames made it into the prompt
/// and that is none; `None` when there is a prompt.
fn no_match_hint(goal: &str, kinds: &[String], offered: usize, included: usize) -> Option<String> {
    if included > 0 {
        return None;
    }
    let goal = contextgraph_types::display_text::bounded(goal, 80);
    Some(if offered == 0 {
        let scope = if kinds.is_empty() {
            String::new()
        } else {
            format!(" of kind {}", kinds.join(", "))
        };
        format!(
            "cgp: nothing matched {goal:?}: no provider offered a frame{scope}.\n\
             hint: use words that appear in the code or docs (a function, file or error message), \
             add --anchor <file-or-symbol>{}; `cgp providers` shows what is queried.",
            if kinds.is_empty() {
                ""
            } else {
                ", drop --kinds"
            }
        )
    } else {
        format!(
            "cgp: no frame for {goal:?} made it into the prompt: {offered} offered, none included.\n\
             hint: `--explain` says why for each (a larger --budget if they were over budget)."
        )
    })
}

/// Everything written from an answer: the HTML report first (so a bad path
/// fails before anything reaches stdout), then the prompt or the JSON.
fn write_outputs(
    args: &ContextArgs,
    answer: &ContextAnswer,
    turn: Option<&SessionTurn>,
) -> Result<(), CommandError> {
    if let Some(path) = &args.html {
        write_html(path, &args.goal, answer)?;
    }
    let mut stdout = std::io::stdout().lock();
    let written = if args.json {
        json_output(answer)
            .and_then(|v| match turn {
                Some(t) => session_json(v, t),
                None => Ok(v),
            })
            .and_then(|v| {
                serde_json::to_writer_pretty(&mut stdout, &v).map_err(std::io::Error::from)
            })
            .and_then(|()| stdout.write_all(b"\n"))
    } else {
        let text = match turn {
            Some(t) => std::borrow::Cow::Owned(t.text()),
            None => std::borrow::Cow::Borrowed(answer.composition.prompt.as_str()),
        };
        // N11: repository text must not drive a terminal (screen clear,
        // title, OSC 52 clipboard write): escaped on a terminal only, so
        // piped output stays byte-exact.
        if stdout.is_terminal() {
            stdout.write_all(crate::terminal::prompt_for_terminal(&text).as_bytes())
        } else {
            stdout.write_all(text.as_bytes())
        }
    };
    output::finish_stdout(written.and_then(|()| stdout.flush()))
}

/// Render the HTML report and write it to `path` (see `safe_write`: a new
/// file renamed over a regular one, a FIFO or device written to, a link
/// to a file refused), so a failed write never leaves half a report.
fn write_html(
    path: &std::path::Path,
    goal: &str,
    answer: &ContextAnswer,
) -> Result<(), CommandError> {
    let page = contextgraph_compose::html::render_with(
        &answer.composition,
        &contextgraph_compose::html::HtmlOptions {
            goal: Some(goal),
            outcomes: &answer.outcomes,
            ..Default::default()
        },
    );
    crate::safe_write::write_file(path, page.as_bytes()).map_err(|e| {
        format!(
            "--html: cannot write the report: {}",
            crate::terminal::for_terminal(&e.to_string())
        )
        .into()
    })
}

/// The composition's JSON (its documented shape) with `providers` and
/// `warnings` from the engine added beside `prompt`, `citations`, `audit`, `usage`.
fn json_output(answer: &ContextAnswer) -> std::io::Result<serde_json::Value> {
    let mut value = serde_json::to_value(&answer.composition)?;
    if let Some(frames) = value.pointer_mut("/audit/frames") {
        *frames = ranked_frames_json(answer)?;
    }
    let mut value = output::json_document("frames", value);
    if let Some(map) = value.as_object_mut() {
        map.insert(
            "providers".to_owned(),
            serde_json::to_value(&answer.providers)?,
        );
        map.insert(
            "warnings".to_owned(),
            serde_json::to_value(&answer.warnings)?,
        );
    }
    Ok(value)
}

/// `audit.frames` best first, each entry with its `rank` (1 is best) and
/// `score` (as the composer read it; `null` when unknown) beside the
/// composer's fields.
fn ranked_frames_json(answer: &ContextAnswer) -> std::io::Result<serde_json::Value> {
    let ranked = contextgraph_compose::ranked_frames(&answer.composition, &answer.outcomes);
    let mut out = Vec::with_capacity(ranked.len());
    for r in ranked {
        let mut entry = serde_json::to_value(r.entry)?;
        if let Some(map) = entry.as_object_mut() {
            map.insert("rank".to_owned(), r.rank.into());
            // Through the f32's shortest decimal form: 0.95, not 0.949999988.
            let score = r.score.and_then(|s| s.to_string().parse::<f64>().ok());
            map.insert("score".to_owned(), score.into());
        }
        out.push(entry);
    }
    Ok(serde_json::Value::Array(out))
}

/// A session turn's JSON: the composition's shape with `prompt` (the blocks
/// sent), `citations` (session labels) and `usage` (UR1 of what this call
/// sent) of the turn, its `notes`, and `session` (sent, unchanged, moved,
/// withdrawn, this turn's figures and the session's totals).
fn session_json(
    mut value: serde_json::Value,
    turn: &SessionTurn,
) -> std::io::Result<serde_json::Value> {
    if let Some(map) = value.as_object_mut() {
        map.insert("prompt".to_owned(), serde_json::to_value(&turn.prompt)?);
        map.insert("notes".to_owned(), serde_json::to_value(&turn.notes)?);
        map.insert(
            "citations".to_owned(),
            serde_json::to_value(&turn.citations)?,
        );
        map.insert("usage".to_owned(), serde_json::to_value(&turn.usage)?);
        map.insert("session".to_owned(), serde_json::to_value(turn)?);
    }
    Ok(value)
}

/// Say on stderr what every provider that contributed nothing did, and
/// fail when none answered.
fn report_providers(answer: &ContextAnswer) -> Result<(), CommandError> {
    let mut err = std::io::stderr().lock();
    for w in &answer.warnings {
        let _ = writeln!(err, "warning: {}", for_terminal(w));
    }
    let failed: Vec<String> = answer
        .providers
        .iter()
        .filter(|p| p.status != OutcomeStatus::Accepted)
        .map(|p| {
            let detail = p.detail.as_deref().unwrap_or("contributed nothing");
            if detail.starts_with(&format!("provider {}:", p.name)) {
                detail.to_owned()
            } else {
                format!("provider {}: {detail}", p.name)
            }
        })
        .collect();
    // A detail's lines (a provider's stderr) stay lines; everything else in
    // them is escaped.
    let grant_all =
        grant_all(answer).map(|c| format!("to grant them all at once, run: {}", for_terminal(&c)));
    if answer.answered() == 0 {
        let failed: Vec<String> = failed
            .iter()
            .map(|f| crate::terminal::lines_for_terminal(f).replace('\n', "\n  "))
            .chain(grant_all)
            .collect();
        return Err(format!("no provider answered:\n  {}", failed.join("\n  ")).into());
    }
    for f in &failed {
        let _ = writeln!(err, "warning: {}", crate::terminal::lines_for_terminal(f));
    }
    if let Some(all) = grant_all {
        let _ = writeln!(err, "note: {all}");
    }
    // Repairs are not failures, but the provider is not conformant: say so.
    for p in &answer.providers {
        for r in &p.repairs {
            let _ = writeln!(
                err,
                "note: provider {}{}: {}",
                for_terminal(&p.name),
                announced_beside(p),
                for_terminal(r)
            );
        }
    }
    Ok(())
}

/// One `cgp consent grant` for every provider refused for want of consent,
/// when there are several and each needs the same grant (the same scopes
/// and arguments): fifty shards need one command, not fifty.
fn grant_all(answer: &ContextAnswer) -> Option<String> {
    const PREFIX: &str = "cgp consent grant ";
    let mut names = Vec::new();
    let mut rest: Option<&str> = None;
    for p in &answer.providers {
        let Some(action) = p.action.as_deref() else {
            continue;
        };
        let quoted = contextgraph_engine::shell_quote(&p.name);
        let tail = action.strip_prefix(PREFIX)?.strip_prefix(quoted.as_str())?;
        if *rest.get_or_insert(tail) != tail {
            return None;
        }
        names.push(quoted);
    }
    (names.len() > 1).then(|| format!("{PREFIX}{}{}", names.join(" "), rest.unwrap_or_default()))
}

/// ` (announces X)` when the provider announced a name other than its key.
fn announced_beside(p: &contextgraph_engine::ProviderOutcomeSummary) -> String {
    match &p.announced_name {
        Some(a) if *a != p.name => format!(" (announces {})", for_terminal(a)),
        _ => String::new(),
    }
}

/// A one-line status on a terminal while the providers work; nothing when
/// stderr is a pipe or a file.
struct Progress(bool);

impl Progress {
    fn show(on: bool, providers: usize) -> Self {
        if on {
            let _ = write!(
                std::io::stderr().lock(),
                "cgp: asking {providers} provider(s)…"
            );
        }
        Progress(on)
    }

    fn clear(&self) {
        if self.0 {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[K");
        }
    }
}

/// The `--explain` table, on stderr: every offered frame best first, with
/// its rank and score, fitted to the terminal's width (see
/// [`crate::width`]): the frame column takes what the fixed columns leave
/// and the detail is cut last.
fn explain(answer: &ContextAnswer) {
    let c = &answer.composition;
    // Unlimited (not a terminal) still lays the table out at a sane width.
    let columns = crate::width::stderr_columns();
    let layout = columns.min(200);
    let mut err = std::io::stderr().lock();
    let b = &c.audit.budget;
    let mut lines = vec![format!(
        "budget: {} of {} budget tokens used ({} content, {} preamble and fences)",
        b.used,
        b.requested,
        b.content,
        u64::from(b.used).saturating_sub(b.content)
    )];
    // rank(4) score(5) status(8) tokens(6), single spaces, then frame and detail.
    const FIXED: usize = 4 + 1 + 5 + 1 + 8 + 1 + 6 + 2 + 2;
    let room = layout.saturating_sub(1).saturating_sub(FIXED);
    let frame_width = (room * 3 / 5).clamp(16, 60);
    let detail_width = room.saturating_sub(frame_width).max(12);
    lines.push(format!(
        "{:>4} {:>5} {:<8} {:>6}  {:<frame_width$}  label or reason",
        "rank", "score", "status", "tokens", "frame"
    ));
    for r in contextgraph_compose::ranked_frames(c, &answer.outcomes) {
        let f = r.entry;
        // Frame ids, labels and reasons carry file names and provider text;
        // an id or label keeps its end (file, symbol, lines), a reason its start.
        let (status, detail) = match &f.status {
            FrameStatus::Included(inc) => (
                "included",
                crate::width::keep_end(&for_terminal(&inc.label), detail_width),
            ),
            FrameStatus::Excluded(exc) => ("excluded", for_terminal(&exc.to_string())),
        };
        let score = r
            .score
            .map(|s| format!("{s:.3}"))
            .unwrap_or_else(|| "—".to_owned());
        let id = crate::width::keep_end(&for_terminal(&f.frame.frame_id), frame_width);
        lines.push(format!(
            "{:>4} {score:>5} {status:<8} {:>6}  {id:<frame_width$}  {detail}",
            r.rank, f.token_cost,
        ));
    }
    for line in lines {
        let _ = writeln!(err, "{}", crate::width::fit(&line, columns));
    }
}

#[cfg(test)]
mod tests {
    use super::no_match_hint;

    #[test]
    fn a_prompt_with_a_frame_needs_no_hint_and_each_empty_case_gets_its_own() {
        assert_eq!(no_match_hint("retry", &[], 5, 1), None);
        let nothing = no_match_hint("retry", &[], 0, 0).unwrap();
        assert!(nothing.contains("nothing matched \"retry\"") && nothing.contains("--anchor"));
        assert!(!nothing.contains("--kinds"));
        let kinds = no_match_hint("retry", &["doc".to_owned()], 0, 0).unwrap();
        assert!(
            kinds.contains("of kind doc") && kinds.contains("drop --kinds"),
            "{kinds}"
        );
        let over = no_match_hint("retry", &[], 4, 0).unwrap();
        assert!(
            over.contains("4 offered, none included") && over.contains("--explain"),
            "{over}"
        );
        // The goal is shown escaped and bounded.
        let hostile = no_match_hint("a\x1b[2Jb", &[], 0, 0).unwrap();
        assert!(!hostile.contains('\x1b'), "{hostile}");
    }
}
