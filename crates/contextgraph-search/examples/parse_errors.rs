//! Where a grammar gives up on a file: each parse error's first and last
//! line and the first line's text, for finding the constructs a grammar
//! cannot parse (`cargo run --release -p contextgraph-search --example
//! parse_errors -- [--raw] FILE…`), as the chunker parses it (the language's
//! parse mask applied; `--raw`: the file's bytes as they are, to see what a
//! mask fixes). A chunker gap shows up as an error that runs to the end of
//! the file.

use contextgraph_search::Language;

fn errors(node: tree_sitter::Node<'_>, text: &str, out: &mut Vec<(usize, usize, String)>) {
    if node.is_error() || node.is_missing() {
        let start = node.start_position().row;
        let line = text.lines().nth(start).unwrap_or("").trim().to_owned();
        out.push((start + 1, node.end_position().row + 1, line));
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if child.has_error() {
            errors(child, text, out);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let raw = args.iter().any(|a| a == "--raw");
    for path in args.iter().filter(|a| *a != "--raw") {
        let Ok(text) = std::fs::read_to_string(path) else {
            eprintln!("{path}: not readable as UTF-8");
            continue;
        };
        let lang = Language::detect(path);
        let Some(grammar) = lang.grammar() else {
            eprintln!("{path}: no grammar");
            continue;
        };
        let mut parser = tree_sitter::Parser::new();
        if parser.set_language(&grammar).is_err() {
            continue;
        }
        // What the chunker parses: the language's parse mask applied.
        let input = if raw {
            std::borrow::Cow::Borrowed(text.as_str())
        } else {
            lang.parse_input(&text)
        };
        let Some(tree) = parser.parse(input.as_ref(), None) else {
            println!("{path}: no tree");
            continue;
        };
        let mut out = Vec::new();
        errors(tree.root_node(), &text, &mut out);
        println!(
            "{path}: {} error(s), {} lines",
            out.len(),
            text.lines().count()
        );
        for (a, b, line) in out.iter().take(12) {
            let shown: String = line.chars().take(100).collect();
            println!("  L{a}-{b}: {shown:?}");
        }
    }
}
