//! The multi-language retrieval benchmark the project is scored on.
//!
//! Real public projects (pinned archives from the package registries,
//! fetched by `bench/retrieval/fetch` into a cache, never committed), each
//! with at least 20 queries written by reading its code, each query with
//! the files that answer it (`bench/retrieval/projects/<id>/`). Every query
//! is put to the workspace provider as `cgp context` puts it at its default
//! budget; the returned frames are collapsed to distinct files in rank
//! order and scored at file level:
//! - NDCG@10 with binary gains, the ideal DCG over min(10, answer files);
//! - recall@5: the share of the answer files among the first five files;
//! - MRR@10: 1 / rank of the first answer file within the first ten.
//!
//! Means are taken per project, then over projects (so a project with more
//! queries weighs no more), overall, per category (symbol, semantic,
//! architecture) and per split (tuning, heldout, all): tuning may be looked
//! at while changing the ranking, heldout only to report.
//!
//! ```text
//! bench/retrieval/fetch
//! cargo bench -p contextgraph-provider-workspace --bench retrieval_ndcg [-- -v] [--project ID] [--split tuning|heldout]
//! ```
//!
//! `-v` prints each query's answer ranks and the top files of a miss, for
//! tuning projects only: heldout projects are reported as means unless
//! `--heldout-details` is given, so tuning never looks at them by accident.
//!
//! A plain file-level BM25 baseline (`retrieval/bm25.rs`) is scored on the
//! same queries and reported beside the provider (`--no-baseline` skips it).
//!
//! `$CGP_BENCH_CACHE` names the cache (default `bench/retrieval/cache`; a
//! relative path is taken from the workspace root). The provider's own
//! index is persisted in its default cache location, so a second run only
//! loads it. A benchmark command, not a CI test.

#[path = "retrieval/bm25.rs"]
mod bm25;
// `score` (exact matching) is the tests'; the bench scores with `score_with`.
#[allow(dead_code)]
#[path = "retrieval/metrics.rs"]
mod metrics;
// Shared with tests/it/retrieval_bench.rs, which also reads what the
// bench does not (the source file's other keys).
#[allow(dead_code)]
#[path = "retrieval/projects.rs"]
mod projects;
// Shared with tests/it/retrieval_bench.rs (which checks its error paths).
#[allow(dead_code)]
#[path = "retrieval/semble.rs"]
mod semble;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use contextgraph_compose::{Budget, PREAMBLE};
use contextgraph_config::{DEFAULT_BUDGET, DEFAULT_SAFETY_FACTOR};
use contextgraph_provider_sdk::Provider;
use contextgraph_provider_workspace::{WorkspaceOptions, WorkspaceProvider};
use contextgraph_types::display_text::for_terminal;
use contextgraph_types::{token_cost_of_len, ContextQuery};
use metrics::{answer_ranks, distinct_files, score_with, Category, Scores, CATEGORIES, CUTOFF};
use projects::{load_project, project_root, Project, OURS};

/// Frames asked for per query: `cgp context`'s default `--max-frames`.
const MAX_FRAMES: u32 = 64;
/// A project's results: per-query scores with their categories.
struct Outcome {
    project: usize,
    per_query: Vec<(Category, Scores)>,
    /// Wall time of each query in the provider (ms), in query order.
    latencies_ms: Vec<f64>,
    /// Budget tokens of each answer (the frames' summed costs), in query
    /// order: what the answer costs the prompt.
    answer_tokens: Vec<u64>,
}

/// The mean of `values` (0 when empty).
fn mean_tokens(values: &[u64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.iter().sum::<u64>() as f64 / values.len() as f64
}

/// The median of `values` (NaN when empty).
fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

impl Outcome {
    /// The mean over this project's queries of `category` (all when None);
    /// None when it has no such query.
    fn mean(&self, category: Option<Category>) -> Option<Scores> {
        let mut sum = Scores::default();
        let mut n = 0;
        for (c, s) in &self.per_query {
            if category.is_none_or(|want| want == *c) {
                sum.add(*s);
                n += 1;
            }
        }
        (n > 0).then(|| sum.divided(n))
    }
}

struct Args {
    verbose: bool,
    /// Per-query lines for heldout projects too (off by default: tuning
    /// should never look at them).
    heldout_details: bool,
    baseline: bool,
    projects: Vec<String>,
    split: Option<String>,
    /// `--set ours|semble`: only that set's projects.
    set: Option<String>,
    /// `--dump FILE`: every query's answer written out (frame ids, score
    /// bits, content digests, costs, truncation), so that two builds can be
    /// diffed for identical results (a speed-up must not change any answer).
    dump: Option<PathBuf>,
    /// `--repeat N`: each query asked N times (latency over N·queries; a
    /// profiler's query loop). Answers are dumped once.
    repeat: usize,
}

fn parse_args() -> Result<Option<Args>, String> {
    let mut args = Args {
        verbose: false,
        heldout_details: false,
        baseline: true,
        projects: Vec::new(),
        split: None,
        set: None,
        dump: None,
        repeat: 1,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            // `cargo test --benches` lists; nothing to list here.
            "--list" => return Ok(None),
            "--bench" => {}
            "-v" | "--verbose" => args.verbose = true,
            "--no-baseline" => args.baseline = false,
            "--heldout-details" => args.heldout_details = true,
            "--dump" => args.dump = Some(PathBuf::from(it.next().ok_or("--dump needs a file")?)),
            "--repeat" => {
                let n = it.next().ok_or("--repeat needs a count")?;
                args.repeat = n
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or(format!("--repeat {n}: expected a positive count"))?;
            }
            "--project" => args
                .projects
                .push(it.next().ok_or("--project needs a project id")?),
            "--split" => {
                let s = it.next().ok_or("--split needs tuning or heldout")?;
                if s != "tuning" && s != "heldout" {
                    return Err(format!("--split {s}: expected tuning or heldout"));
                }
                args.split = Some(s);
            }
            "--set" => {
                let s = it.next().ok_or("--set needs ours or semble")?;
                if s != OURS && s != semble::SET {
                    return Err(format!("--set {s}: expected {OURS} or {}", semble::SET));
                }
                args.set = Some(s);
            }
            other => {
                return Err(format!(
                    "unknown argument '{other}' (expected -v, --heldout-details, --project ID, --split tuning|heldout, --set ours|semble, --no-baseline, --dump FILE, --repeat N)"
                ))
            }
        }
    }
    Ok(Some(args))
}

/// The content budget `cgp context` asks each provider for by default: the
/// default prompt budget (model tokens, converted with the default safety
/// factor) less the preamble, as the engine computes it.
fn default_content_budget() -> u32 {
    Budget::model_tokens_with_factor(DEFAULT_BUDGET, DEFAULT_SAFETY_FACTOR)
        .in_budget_tokens()
        .saturating_sub(token_cost_of_len(PREAMBLE.len()))
}

fn run_project(
    index: usize,
    project: &Project,
    root: &Path,
    max_tokens: u32,
    verbose: bool,
    baseline: bool,
    timing: &mut Timing,
) -> Result<(Outcome, Option<Outcome>), String> {
    // `CGP_RANK_SIGNALS_OFF=semantic,roles` measures the ranking without
    // those steps; `CGP_SEMANTIC=0` opens without the semantic signal (on by
    // default; `CGP_RANK_SIGNALS_OFF=semantic` also drops it from the
    // ranking, but still embeds the chunks). As `cgp context` reads them.
    let options = WorkspaceOptions::default()
        .with_ranking_from_env()
        .map_err(|e| e.to_string())?;
    let (provider, source) = WorkspaceProvider::open(root, options)
        .map_err(|e| format!("{}: cannot open {}: {e}", project.id, root.display()))?;
    if verbose {
        println!(
            "== {} ({}, {}, index {:?}, {} queries)",
            project.id,
            project.language,
            project.split,
            source,
            project.queries.len()
        );
    }
    // An answer that names no file of the project can never be found: say
    // so, rather than let a typo pass as a ranking miss.
    for q in &project.queries {
        let exists = |a: &str| match project.matching {
            metrics::PathMatch::Exact => root.join(a).is_file(),
            metrics::PathMatch::Suffix => semble::target_exists(root, project, a),
        };
        for a in q.answers.iter().filter(|a| !exists(a)) {
            eprintln!(
                "retrieval_ndcg: {}: answer '{a}' of query '{}' is not a file of the project",
                project.id, q.text
            );
        }
    }
    let bm25 = baseline.then(|| bm25::Bm25::build(root));
    let mut per_query = Vec::with_capacity(project.queries.len());
    let mut latencies_ms = Vec::with_capacity(project.queries.len());
    let mut answer_tokens = Vec::with_capacity(project.queries.len());
    let mut baseline_per_query = Vec::new();
    for q in &project.queries {
        let query = ContextQuery::new(q.text.clone(), MAX_FRAMES, max_tokens);
        let mut answer = None;
        for _ in 0..timing.repeat {
            let started = std::time::Instant::now();
            answer = Some(provider.query(&query));
            latencies_ms.push(started.elapsed().as_secs_f64() * 1e3);
        }
        let Some(answer) = answer else {
            return Err(format!("{}: no query run", project.id));
        };
        if let Some(file) = timing.dump.as_mut() {
            write_answer(file, &project.id, &q.text, &answer)
                .map_err(|e| format!("--dump: cannot write: {e}"))?;
        }
        answer_tokens.push(answer.as_ref().map_or(0, |r| r.total_token_cost()));
        let ranked = match answer {
            Ok(result) => distinct_files(result.frames.into_iter().map(|f| f.id)),
            Err(e) => {
                eprintln!(
                    "{}: query '{}' failed: {}",
                    project.id,
                    q.text,
                    for_terminal(&e.to_string())
                );
                Vec::new()
            }
        };
        let s = score_with(&ranked, &q.answers, project.matching);
        let base = bm25
            .as_ref()
            .map(|b| score_with(&b.rank(&q.text, CUTOFF), &q.answers, project.matching));
        if let Some(b) = base {
            baseline_per_query.push((q.category, b));
        }
        if verbose {
            let ranks: Vec<String> = answer_ranks(&ranked, &q.answers, project.matching)
                .into_iter()
                .map(|r| r.map_or("-".to_owned(), |r| r.to_string()))
                .collect();
            let base = base.map_or(String::new(), |b| format!("  bm25 {:.2}", b.ndcg));
            println!(
                "  {:<12} ndcg {:.2}{base}  ranks [{}]  {}",
                q.category.to_string(),
                s.ndcg,
                ranks.join(","),
                q.text
            );
            if s.ndcg < 1.0 {
                // Paths from the fetched package: shown inert on the terminal.
                let top: Vec<_> = ranked.iter().take(3).map(|f| for_terminal(f)).collect();
                println!("      top: {}", top.join("  "));
            }
        }
        per_query.push((q.category, s));
    }
    let baseline = bm25.map(|_| Outcome {
        project: index,
        per_query: baseline_per_query,
        latencies_ms: Vec::new(),
        answer_tokens: Vec::new(),
    });
    Ok((
        Outcome {
            project: index,
            per_query,
            latencies_ms,
            answer_tokens,
        },
        baseline,
    ))
}

/// How queries are run besides being scored: `--repeat` and `--dump`.
struct Timing {
    repeat: usize,
    dump: Option<std::fs::File>,
}

/// One query's answer as lines a diff compares: the frames in answer
/// order with their score's exact bits, content digest and cost, and a
/// digest of the whole frame as JSON (relations, provenance, labels).
fn write_answer(
    out: &mut impl std::io::Write,
    project: &str,
    query: &str,
    answer: &Result<
        contextgraph_types::ContextQueryResult,
        contextgraph_provider_sdk::ProviderError,
    >,
) -> std::io::Result<()> {
    writeln!(out, "== {project}\t{query}")?;
    match answer {
        Ok(r) => {
            writeln!(
                out,
                "truncated {} dropped {:?}",
                r.truncated, r.dropped_estimate
            )?;
            for f in &r.frames {
                let json = serde_json::to_string(f).map_err(std::io::Error::other)?;
                writeln!(
                    out,
                    "{}\t{:08x}\t{}\t{}\t{}\t{}",
                    f.id,
                    f.score.to_bits(),
                    f.content_digest.as_deref().unwrap_or("-"),
                    f.token_cost,
                    f.citation_label.as_deref().unwrap_or("-"),
                    contextgraph_types::sha256::sha256_digest(json.as_bytes())
                )?;
            }
        }
        Err(e) => writeln!(out, "error {e}")?,
    }
    Ok(())
}

/// Mean over the projects of `outcomes` in `set` and `split` (all when
/// None) of their per-project means for `category`; with the number of
/// projects and queries.
fn mean_over_projects(
    outcomes: &[Outcome],
    projects: &[Project],
    set: &str,
    split: Option<&str>,
    category: Option<Category>,
) -> Option<(Scores, usize, usize)> {
    let mut sum = Scores::default();
    let mut n_projects = 0;
    let mut n_queries = 0;
    for o in outcomes {
        let p = &projects[o.project];
        if p.set != set || split.is_some_and(|s| p.split != s) {
            continue;
        }
        if let Some(m) = o.mean(category) {
            sum.add(m);
            n_projects += 1;
            n_queries += o
                .per_query
                .iter()
                .filter(|(c, _)| category.is_none_or(|want| want == *c))
                .count();
        }
    }
    (n_projects > 0).then(|| (sum.divided(n_projects), n_projects, n_queries))
}

fn report(system: &str, outcomes: &[Outcome], projects: &[Project]) {
    println!();
    println!("## {system}");
    println!(
        "{:<22} {:<6} {:<5} {:<8} {:>4} {:>8} {:>9} {:>7} {:>9} {:>7}",
        "project", "set", "lang", "split", "n", "NDCG@10", "recall@5", "MRR@10", "p50 ms", "tokens"
    );
    for o in outcomes {
        let p = &projects[o.project];
        if let Some(m) = o.mean(None) {
            // Query time in the provider, in-process (the baseline has none).
            let p50 = if o.latencies_ms.is_empty() {
                "-".to_owned()
            } else {
                format!("{:.2}", median(&o.latencies_ms))
            };
            // Mean budget tokens per answer (the baseline has none).
            let tokens = if o.answer_tokens.is_empty() {
                "-".to_owned()
            } else {
                format!("{:.0}", mean_tokens(&o.answer_tokens))
            };
            println!(
                "{:<22} {:<6} {:<5} {:<8} {:>4} {:>8.3} {:>9.3} {:>7.3} {:>9} {:>7}",
                p.id,
                p.set,
                short_language(&p.language),
                p.split,
                o.per_query.len(),
                m.ndcg,
                m.recall,
                m.rr,
                p50,
                tokens
            );
        }
    }
    let all: Vec<f64> = outcomes
        .iter()
        .flat_map(|o| o.latencies_ms.iter().copied())
        .collect();
    if !all.is_empty() {
        println!(
            "query latency in-process, all queries: p50 {:.2} ms",
            median(&all)
        );
    }
    let with_tokens: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| !o.answer_tokens.is_empty())
        .collect();
    if !with_tokens.is_empty() {
        // Per project first, then over projects, as the scores are.
        let per_project: Vec<f64> = with_tokens
            .iter()
            .map(|o| mean_tokens(&o.answer_tokens))
            .collect();
        println!(
            "answer size: mean {:.0} budget tokens per answer (of {} allowed)",
            per_project.iter().sum::<f64>() / per_project.len() as f64,
            default_content_budget()
        );
    }
    let mut sets: Vec<&str> = outcomes.iter().map(|o| projects[o.project].set).collect();
    sets.sort_unstable();
    sets.dedup();
    for set in sets {
        report_set(set, outcomes, projects);
    }
}

/// One set's means: per split and category, then per language.
fn report_set(set: &str, outcomes: &[Outcome], projects: &[Project]) {
    println!();
    println!("### set {set}");
    println!(
        "{:<8} {:<13} {:>8} {:>7} {:>8} {:>9} {:>7}",
        "split", "category", "projects", "queries", "NDCG@10", "recall@5", "MRR@10"
    );
    for split in [Some("tuning"), Some("heldout"), None] {
        let categories = std::iter::once(None).chain(CATEGORIES.iter().copied().map(Some));
        for category in categories {
            if let Some((m, np, nq)) = mean_over_projects(outcomes, projects, set, split, category)
            {
                println!(
                    "{:<8} {:<13} {:>8} {:>7} {:>8.3} {:>9.3} {:>7.3}",
                    split.unwrap_or("all"),
                    category.map_or("overall".to_owned(), |c| c.to_string()),
                    np,
                    nq,
                    m.ndcg,
                    m.recall,
                    m.rr
                );
            }
        }
    }
    println!();
    println!(
        "{:<12} {:<8} {:>8} {:>7} {:>8} {:>9} {:>7}",
        "language", "split", "projects", "queries", "NDCG@10", "recall@5", "MRR@10"
    );
    let of_set: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| projects[o.project].set == set)
        .collect();
    let mut languages: Vec<&str> = of_set
        .iter()
        .map(|o| projects[o.project].language.as_str())
        .collect();
    languages.sort_unstable();
    languages.dedup();
    for language in languages {
        for split in [Some("tuning"), Some("heldout"), None] {
            let of_language: Vec<&Outcome> = of_set
                .iter()
                .copied()
                .filter(|o| projects[o.project].language == language)
                .filter(|o| split.is_none_or(|s| projects[o.project].split == s))
                .collect();
            if of_language.is_empty() {
                continue;
            }
            let mut sum = Scores::default();
            let mut n_queries = 0;
            for o in &of_language {
                if let Some(m) = o.mean(None) {
                    sum.add(m);
                }
                n_queries += o.per_query.len();
            }
            let m = sum.divided(of_language.len());
            println!(
                "{:<12} {:<8} {:>8} {:>7} {:>8.3} {:>9.3} {:>7.3}",
                language,
                split.unwrap_or("all"),
                of_language.len(),
                n_queries,
                m.ndcg,
                m.recall,
                m.rr
            );
        }
    }
}

fn short_language(language: &str) -> &str {
    match language {
        "javascript" => "js",
        "typescript" => "ts",
        "python" => "py",
        "rust" => "rs",
        other => other,
    }
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(Some(a)) => a,
        Ok(None) => return ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("retrieval_ndcg: {e}");
            return ExitCode::from(2);
        }
    };
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let workspace = workspace.canonicalize().unwrap_or(workspace);
    let bench = workspace.join("bench/retrieval");
    let cache = std::env::var_os("CGP_BENCH_CACHE")
        .map(PathBuf::from)
        .map(|c| {
            if c.is_relative() {
                workspace.join(c)
            } else {
                c
            }
        })
        .unwrap_or_else(|| bench.join("cache"));
    let mut dirs: Vec<PathBuf> = match std::fs::read_dir(bench.join("projects")) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect(),
        Err(e) => {
            eprintln!(
                "retrieval_ndcg: cannot list {}: {e}",
                bench.join("projects").display()
            );
            return ExitCode::FAILURE;
        }
    };
    dirs.sort();
    let mut projects = Vec::new();
    let mut problems = 0;
    for dir in &dirs {
        match load_project(dir) {
            Ok(p) => projects.push(p),
            Err(e) => {
                eprintln!("retrieval_ndcg: skipping {e}");
                problems += 1;
            }
        }
    }
    // The third-party set, when it is there (never committed).
    let semble_dir = std::env::var_os("CGP_SEMBLE_EXT")
        .map(PathBuf::from)
        .map(|c| {
            if c.is_relative() {
                workspace.join(c)
            } else {
                c
            }
        })
        .unwrap_or_else(|| workspace.join("../shared/bench/semble-ext"));
    let semble_cache = std::env::var_os("CGP_SEMBLE_CACHE")
        .map(PathBuf::from)
        .map(|c| {
            if c.is_relative() {
                workspace.join(c)
            } else {
                c
            }
        })
        .unwrap_or_else(|| cache.join("semble-ext"));
    if args.set.as_deref() != Some(OURS) {
        if semble_dir.join("annotations/repos.json").is_file() {
            match semble::load_set(&semble_dir) {
                Ok(set) => {
                    for p in set {
                        if projects.iter().any(|q: &Project| q.id == p.id) {
                            eprintln!(
                                "retrieval_ndcg: {}: both sets have a project of that name",
                                p.id
                            );
                            return ExitCode::FAILURE;
                        }
                        projects.push(p);
                    }
                }
                Err(e) => {
                    eprintln!("retrieval_ndcg: the {} set is malformed: {e}", semble::SET);
                    return ExitCode::FAILURE;
                }
            }
        } else if args.set.is_some() {
            eprintln!(
                "retrieval_ndcg: --set {}: the set is not at {} (set CGP_SEMBLE_EXT)",
                semble::SET,
                semble_dir.display()
            );
            return ExitCode::FAILURE;
        } else {
            println!(
                "retrieval_ndcg: no {} set at {}; scoring our projects only",
                semble::SET,
                semble_dir.display()
            );
        }
    }
    for want in &args.projects {
        if !projects.iter().any(|p| &p.id == want) {
            eprintln!("retrieval_ndcg: --project {want}: no such project");
            return ExitCode::from(2);
        }
    }
    let selected: Vec<usize> = (0..projects.len())
        .filter(|&i| args.projects.is_empty() || args.projects.contains(&projects[i].id))
        .filter(|&i| args.split.as_ref().is_none_or(|s| &projects[i].split == s))
        .filter(|&i| args.set.as_deref().is_none_or(|s| projects[i].set == s))
        .collect();
    let max_tokens = default_content_budget();
    println!(
        "retrieval benchmark: {} project(s); each query as `cgp context` asks: max_frames {MAX_FRAMES}, max_tokens {max_tokens} \
         (budget {DEFAULT_BUDGET} model tokens at safety factor {DEFAULT_SAFETY_FACTOR}, less the preamble); cache {}; {} set {} extracted to {}",
        selected.len(),
        cache.display(),
        semble::SET,
        semble_dir.display(),
        semble_cache.display()
    );
    let mut timing = match args.dump.as_ref().map(std::fs::File::create).transpose() {
        Ok(dump) => Timing {
            repeat: args.repeat,
            dump,
        },
        Err(e) => {
            eprintln!("retrieval_ndcg: --dump: cannot create the file: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut outcomes = Vec::new();
    let mut baseline_outcomes = Vec::new();
    let mut missing = Vec::new();
    for i in selected {
        let project = &projects[i];
        let found = if project.set == OURS {
            project_root(&cache, project)
        } else {
            semble::extracted_root(&semble_dir, &semble_cache, project)
        };
        let root = match found {
            Ok(r) => r,
            Err(e) => {
                eprintln!("retrieval_ndcg: {e}");
                missing.push(project.id.clone());
                continue;
            }
        };
        let details = args.verbose && (project.split == "tuning" || args.heldout_details);
        if args.verbose && !details {
            println!(
                "== {}: heldout, per-query lines hidden (--heldout-details shows them; tuning should not look)",
                project.id
            );
        }
        match run_project(
            i,
            project,
            &root,
            max_tokens,
            details,
            args.baseline,
            &mut timing,
        ) {
            Ok((o, b)) => {
                outcomes.push(o);
                baseline_outcomes.extend(b);
            }
            Err(e) => {
                eprintln!("retrieval_ndcg: {e}");
                problems += 1;
            }
        }
    }
    if !missing.is_empty() {
        eprintln!(
            "retrieval_ndcg: {} project(s) without sources ({}): run bench/retrieval/fetch for ours; the {} set ships its own",
            missing.len(),
            missing.join(", "),
            semble::SET
        );
    }
    if outcomes.is_empty() {
        eprintln!("retrieval_ndcg: no project could be scored");
        return ExitCode::FAILURE;
    }
    report("workspace provider", &outcomes, &projects);
    if !baseline_outcomes.is_empty() {
        report(
            "baseline: plain BM25 over whole files",
            &baseline_outcomes,
            &projects,
        );
    }
    if problems > 0 || !missing.is_empty() {
        eprintln!(
            "retrieval_ndcg: {} project(s) left out; the means above are over the others",
            problems + missing.len()
        );
    }
    ExitCode::SUCCESS
}
