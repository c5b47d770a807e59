use super::*;
use crate::chunk::chunk_file;
use crate::lang::Language;

/// A function of `n` body lines named `name`, indented by `indent`.
fn function(name: &str, indent: &str, n: usize) -> String {
    let mut f = format!("{indent}/// Does {name}.\n{indent}pub fn {name}(x: u64) -> u64 {{\n");
    for i in 0..n {
        f.push_str(&format!(
            "{indent}    let v{i} = x.wrapping_mul({i}) ^ 0x5bd1_e995;\n"
        ));
    }
    f.push_str(&format!("{indent}    x\n{indent}}}\n\n"));
    f
}

fn assert_all_fit(text: &str, chunks: &[Chunk]) {
    let lines = LineIndex::new(text);
    assert!(!chunks.is_empty());
    for c in chunks {
        let len = lines
            .byte_range(c.start_line, c.end_line)
            .map_or(0, |r| r.len());
        assert!(
            len <= MAX_CHUNK_BYTES || c.start_line == c.end_line,
            "{} L{}-{} is {len} bytes",
            c.local_id,
            c.start_line,
            c.end_line
        );
    }
    let mut ids: Vec<&str> = chunks.iter().map(|c| c.local_id.as_str()).collect();
    ids.sort_unstable();
    let n = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), n, "local ids are unique");
}

fn huge_macro_rules() -> String {
    let mut text = String::from("macro_rules! generate {\n    ($t:ty) => {\n");
    for i in 0..80 {
        text.push_str(&function(&format!("helper_{i}"), "        ", 12));
    }
    text.push_str(&function("needle_checksum", "        ", 20));
    text.push_str("    };\n}\n");
    text
}

#[test]
fn no_chunk_of_a_huge_macro_rules_file_exceeds_the_limit() {
    let text = huge_macro_rules();
    assert!(text.len() > 10 * MAX_CHUNK_BYTES);
    let chunks = chunk_file("src/gen.rs", Language::Rust, &text);
    assert_all_fit(&text, &chunks);
    // The head keeps the macro's identity; inner functions are pieces of their own.
    assert!(chunks.iter().any(|c| c.local_id == "gen::generate"));
    let needle = chunks
        .iter()
        .find(|c| {
            c.symbol
                .as_ref()
                .is_some_and(|s| s.name == "needle_checksum")
        })
        .expect("the inner function is a piece");
    assert_eq!(
        needle.symbol.as_ref().map(|s| s.qualified.as_str()),
        Some("gen::generate::needle_checksum")
    );
    let lines = LineIndex::new(&text);
    let body = lines
        .slice(&text, needle.start_line, needle.end_line)
        .unwrap_or("");
    assert!(
        body.starts_with("        /// Does needle_checksum."),
        "{body}"
    );
    assert!(body.trim_end().ends_with('}'));
    assert!(!body.contains("helper_"), "one function per piece: {body}");
}

#[test]
fn no_chunk_of_a_huge_cfg_block_exceeds_the_limit() {
    let mut text =
        String::from("cfg_if::cfg_if! {\n    if #[cfg(unix)] {\n        impl Driver {\n");
    for i in 0..60 {
        text.push_str(&function(&format!("poll_{i}"), "            ", 15));
    }
    text.push_str("        }\n    } else {\n");
    for i in 0..20 {
        text.push_str(&function(&format!("fallback_{i}"), "        ", 15));
    }
    text.push_str("    }\n}\n");
    let chunks = chunk_file("src/driver.rs", Language::Rust, &text);
    assert_all_fit(&text, &chunks);
    let poll = chunks
        .iter()
        .find(|c| c.symbol.as_ref().is_some_and(|s| s.name == "poll_7"))
        .expect("inner method is a piece");
    // The enclosing path is carried in the name: macro, then the impl's type.
    assert_eq!(
        poll.symbol.as_ref().map(|s| s.qualified.as_str()),
        Some("driver::cfg_if!::Driver::poll_7")
    );
    assert_eq!(poll.title, "function driver::cfg_if!::Driver::poll_7");
}

#[test]
fn a_huge_function_is_cut_at_statement_boundaries_with_its_name_as_context() {
    let text = function("long_body", "", 600);
    let chunks = chunk_file("src/long.rs", Language::Rust, &text);
    assert!(chunks.len() > 2);
    assert_all_fit(&text, &chunks);
    let head = &chunks[0];
    assert_eq!(head.local_id, "long::long_body");
    assert_eq!(
        head.start_line, 1,
        "the head starts with the doc comment and signature"
    );
    let lines = LineIndex::new(&text);
    for c in &chunks[1..] {
        assert!(
            c.title.starts_with("function long::long_body"),
            "{}",
            c.title
        );
        assert!(
            c.symbol.is_none(),
            "continuations do not redefine the symbol"
        );
        let last = lines.slice(&text, c.end_line, c.end_line).unwrap_or("");
        assert!(
            last.trim_end().ends_with([';', '}'])
                || last.trim().is_empty()
                || c.end_line == lines.line_count(),
            "{last}"
        );
    }
    // Pieces cover the function's lines without overlap.
    let mut covered: Vec<(u32, u32)> = chunks.iter().map(|c| (c.start_line, c.end_line)).collect();
    covered.sort_unstable();
    assert!(covered.windows(2).all(|w| w[0].1 < w[1].0));
    // The file ends with a blank line after the closing brace.
    assert_eq!(covered.last().map(|c| c.1), Some(lines.line_count() - 1));
    assert_eq!(
        lines.slice(&text, lines.line_count() - 1, lines.line_count() - 1),
        Some("}\n")
    );
}

#[test]
fn a_huge_data_table_is_cut_between_rows() {
    let mut text = String::from("pub static TABLE: [(u32, &str); 3000] = [\n");
    for i in 0..3000 {
        text.push_str(&format!("    ({i}, \"row number {i} of the table\"),\n"));
    }
    text.push_str("];\n");
    let chunks = chunk_file("src/table.rs", Language::Rust, &text);
    assert_all_fit(&text, &chunks);
    let lines = LineIndex::new(&text);
    for c in &chunks {
        let last = lines.slice(&text, c.end_line, c.end_line).unwrap_or("");
        assert!(
            last.trim_end().ends_with([',', ';']),
            "cut inside a row: {last}"
        );
    }
}

#[test]
fn huge_prose_and_plain_files_fit_too() {
    let long_line = "word ".repeat(60);
    let mut md = String::from("# Reference\n");
    for i in 0..400 {
        md.push_str(&format!("{long_line}{i}\n"));
    }
    let chunks = chunk_file("README.md", Language::Markdown, &md);
    assert_all_fit(&md, &chunks);
    assert!(chunks.iter().all(|c| c.kind == ChunkKind::Doc));
    let chunks = chunk_file("data.csv", Language::Other, &md);
    assert_all_fit(&md, &chunks);
    // A single line longer than the limit cannot be cut (chunks are whole lines).
    let one = "x".repeat(3 * MAX_CHUNK_BYTES);
    let chunks = chunk_file("min.js", Language::Other, &one);
    assert_eq!(chunks.len(), 1);
    assert_eq!((chunks[0].start_line, chunks[0].end_line), (1, 1));
}

#[test]
fn small_chunks_are_left_alone() {
    let text = function("short", "", 10);
    let chunks = chunk_file("src/s.rs", Language::Rust, &text);
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].method, "tree-sitter");
    assert_eq!(chunks[0].title, "function s::short");
}

#[test]
fn item_lines_are_recognised_by_their_keywords() {
    assert_eq!(
        item_of("    pub(crate) async fn run(&self)"),
        Some(("function", "run".into()))
    );
    assert_eq!(
        item_of("impl<T: Clone> Display for Wrapper<T> {"),
        Some(("impl", "Wrapper".into()))
    );
    assert_eq!(item_of("impl Client {"), Some(("impl", "Client".into())));
    assert_eq!(
        item_of("func (c *Client) Send(x int) {"),
        Some(("function", "Send".into()))
    );
    assert_eq!(
        item_of("export default class Store {"),
        Some(("class", "Store".into()))
    );
    assert_eq!(
        item_of("    def __init__(self):"),
        Some(("function", "__init__".into()))
    );
    assert_eq!(
        item_of("fn $name() {}"),
        None,
        "macro metavariables are not names"
    );
    assert_eq!(item_of("let implicit = 1;"), None);
    assert_eq!(item_of("important(x);"), None);
}
