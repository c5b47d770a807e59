//! How much of a composed prompt is evidence, and whether the evidence is
//! quoted byte for byte.
//!
//! ```text
//! # a real answer: `cgp context "…" --json > answer.json`
//! cargo run -p contextgraph-compose --example prompt_overhead -- answer.json
//! # this repository's own source, one frame per 40-line snippet
//! cargo run -p contextgraph-compose --example prompt_overhead -- --source . [BUDGET]
//! ```
//!
//! Reports the prompt's bytes, its blocks, the bytes of frame content (as
//! parsed back), the overhead (everything else: preamble, fence lines,
//! attributes) in bytes and percent, and the share of content bytes found
//! unchanged in the prompt (a content counts when it appears whole, byte for
//! byte, as its block's body).

use contextgraph_compose::{compose, parse_prompt, Budget, Options, ProviderOutcome, PREAMBLE};
use contextgraph_types::{ContextFrame, FrameKind};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("--source") => {
            let dir = args
                .get(1)
                .map_or_else(|| PathBuf::from("."), PathBuf::from);
            let budget = args.get(2).and_then(|b| b.parse().ok());
            from_source(&dir, budget)
        }
        Some(path) => from_answer(Path::new(path)),
        None => Err("usage: prompt_overhead ANSWER.json | --source DIR [BUDGET]".to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("prompt_overhead: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A `cgp context --json` answer (or a bare composition): its `prompt`.
fn from_answer(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let prompt = json
        .get("prompt")
        .or_else(|| json.pointer("/composition/prompt"))
        .and_then(|p| p.as_str())
        .ok_or("no `prompt` string in the JSON")?;
    report(prompt, None)
}

/// Every text file under `dir` (`.rs`, `.md`, `.toml`; no `target`, no
/// hidden directories), cut into 40-line snippets like the workspace
/// provider serves, composed under `budget` budget tokens (default: all).
fn from_source(dir: &Path, budget: Option<u32>) -> Result<(), String> {
    let mut files = Vec::new();
    walk(dir, &mut files).map_err(|e| format!("{}: {e}", dir.display()))?;
    files.sort();
    let mut frames = Vec::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let rel = file.strip_prefix(dir).unwrap_or(file).display().to_string();
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        for (n, chunk) in lines.chunks(40).enumerate() {
            let (first, last) = (n * 40 + 1, n * 40 + chunk.len());
            let mut f = ContextFrame::new(
                format!("{rel}#L{first}-{last}"),
                FrameKind::Snippet,
                rel.clone(),
                chunk.concat(),
            );
            f.citation_label = Some(format!("{rel} L{first}-{last}"));
            frames.push(f);
        }
    }
    let total: usize = frames
        .iter()
        .map(|f| f.content.as_ref().map_or(0, String::len))
        .sum();
    println!(
        "source: {} files, {} snippets, {total} content bytes",
        files.len(),
        frames.len()
    );
    let budget = Budget::budget_tokens(budget.unwrap_or(u32::MAX / 2));
    let outcomes = [ProviderOutcome::accepted(
        "contextgraph-provider-workspace",
        frames,
    )];
    let c = compose(&outcomes, &Options::new(budget)).map_err(|e| e.to_string())?;
    report(&c.prompt, Some(&outcomes))
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" {
                walk(&path, out)?;
            }
        } else if [".rs", ".md", ".toml"].iter().any(|x| name.ends_with(x)) {
            out.push(path);
        }
    }
    Ok(())
}

fn report(prompt: &str, offered: Option<&[ProviderOutcome]>) -> Result<(), String> {
    let blocks = parse_prompt(prompt).map_err(|e| e.to_string())?;
    let content: usize = blocks.iter().map(|b| b.content.len()).sum();
    let overhead = prompt.len() - content;
    let pct = |part: usize, whole: usize| 100.0 * part as f64 / whole.max(1) as f64;
    println!(
        "prompt: {} bytes, {} blocks; content {content} bytes; overhead {overhead} bytes = {:.1}% \
         (preamble {} bytes, {:.0} bytes per block around content)",
        prompt.len(),
        blocks.len(),
        pct(overhead, prompt.len()),
        PREAMBLE.len(),
        (overhead - PREAMBLE.len().min(overhead)) as f64 / blocks.len().max(1) as f64,
    );
    // Verbatim: the original contents (when known), else the parsed ones.
    let originals: Vec<&str> = match offered {
        Some(outcomes) => outcomes
            .iter()
            .flat_map(|o| o.offered_frames())
            .filter_map(|f| f.content.as_deref())
            .filter(|c| blocks.iter().any(|b| b.content == *c))
            .collect(),
        None => blocks.iter().map(|b| b.content.as_str()).collect(),
    };
    let total: usize = originals.iter().map(|c| c.len()).sum();
    let verbatim: usize = originals
        .iter()
        .filter(|c| prompt.contains(&format!(">\n{c}\n</")))
        .map(|c| c.len())
        .sum();
    println!(
        "verbatim: {verbatim} of {total} content bytes appear unchanged in the prompt = {:.3}%",
        pct(verbatim, total)
    );
    Ok(())
}
