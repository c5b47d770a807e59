//! Prints nearest neighbours and pair similarities for a model, to inspect
//! what it learned.
//!
//! ```text
//! cargo run --release -p contextgraph-embed --example neighbours -- [MODEL] [WORD…]
//! ```
//! Without MODEL (or with `-`), the built-in model is used.

use std::path::Path;
use std::process::ExitCode;

use contextgraph_embed::{builtin, StaticModel};

/// Pairs a code-search model should find related, each with an unrelated
/// control word.
const PAIRS: &[(&str, &str, &str)] = &[
    ("budget", "limit", "socket"),
    ("retry", "backoff", "color"),
    ("error", "failure", "pixel"),
    ("delete", "remove", "thread"),
    ("config", "setting", "parse"),
    ("timeout", "deadline", "string"),
    ("encrypt", "cipher", "layout"),
    ("database", "query", "font"),
    ("compress", "gzip", "mutex"),
    ("authenticate", "login", "vector"),
    ("cache", "memoize", "socket"),
    ("serialize", "json", "thread"),
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let owned;
    let model: &StaticModel = match args.first().map(String::as_str) {
        None | Some("-") => match builtin() {
            Ok(m) => m,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
        Some(path) => match StaticModel::load(Path::new(path)) {
            Ok(m) => {
                owned = m;
                &owned
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    println!(
        "{}: vocab {}, dim {}",
        model.name(),
        model.vocab_len(),
        model.dim()
    );
    let (mut wins, mut total) = (0, 0);
    for &(a, b, control) in PAIRS {
        match (
            model.token_similarity(a, b),
            model.token_similarity(a, control),
        ) {
            (Some(related), Some(unrelated)) => {
                total += 1;
                if related > unrelated {
                    wins += 1;
                }
                println!("{a:>13} ~ {b:<9} {related:+.2}   vs {control:<7} {unrelated:+.2}");
            }
            _ => println!("{a:>13}: a word is not in the vocabulary"),
        }
    }
    println!("related pair above control: {wins}/{total}");
    for word in args.iter().skip(1) {
        let near: Vec<String> = model
            .nearest_tokens(word, 10)
            .into_iter()
            .map(|(t, s)| format!("{t} {s:.2}"))
            .collect();
        println!("{word}: {}", near.join(", "));
    }
    ExitCode::SUCCESS
}
