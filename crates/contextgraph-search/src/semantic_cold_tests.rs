//! [`embed_file`] (the file tokenized once, each chunk's tokens taken by
//! line) gives every chunk the bits [`embed_region`] gives it from the
//! concatenated path, title and region: on real sources chunked as a build
//! chunks them, and on every line range of texts built to put token
//! boundaries at line ends (acronyms, non-ASCII letters, a last line
//! without its newline, blank lines, CRLF).

use contextgraph_types::Timestamp;

use super::{embed_file, spare_token_bytes, TOKEN_BUFFERS_KEPT};
use crate::chunk::{chunk_file_in, LineIndex};
use crate::index::{build_chunk_records_in, ChunkRecord};
use crate::lang::Language;
use crate::semantic::embed_region;

fn model() -> &'static contextgraph_embed::StaticModel {
    contextgraph_embed::builtin().expect("the built-in model loads")
}

/// Asserts that `embed_file` gives every chunk the bits the pass after a
/// build gave it: scale and components, one chunk at a time from the
/// concatenated text (`embed_region`).
fn assert_same_bits(
    rel_path: &str,
    text: &str,
    lines: &LineIndex,
    chunks: &[ChunkRecord],
    what: &str,
) {
    let model = model();
    let dim = model.dim();
    let (mut scratch, mut buffer) = (String::new(), vec![0.0f32; dim]);
    let one_by_one: Vec<(u32, Vec<u8>)> = chunks
        .iter()
        .map(|c| {
            let mut components = vec![0u8; dim];
            let scale = match lines.slice(text, c.start_line, c.end_line) {
                Some(region) => embed_region(
                    model,
                    rel_path,
                    &c.title,
                    region,
                    (&mut scratch, &mut buffer, &mut components),
                ),
                None => 0.0,
            };
            (scale.to_bits(), components)
        })
        .collect();
    let v = embed_file(model, rel_path, text, lines, chunks);
    assert_eq!(v.scales.len(), chunks.len());
    assert_eq!(v.components.len(), chunks.len() * dim);
    let by_file: Vec<(u32, Vec<u8>)> = v
        .scales
        .iter()
        .zip(v.components.chunks(dim))
        .map(|(s, c)| (s.to_bits(), c.to_vec()))
        .collect();
    assert_eq!(by_file, one_by_one, "{what}");
}

fn records(rel_path: &str, text: &str, lines: &LineIndex) -> Vec<ChunkRecord> {
    let language = Language::detect(rel_path);
    let chunks = chunk_file_in(rel_path, language, text, lines);
    build_chunk_records_in(text, lines, chunks, None, Timestamp::from_unix(0, 0), None)
}

#[test]
fn a_file_tokenized_once_embeds_each_chunk_as_its_own_text_does() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut stack = vec![src.clone()];
    let mut files = 0usize;
    let mut chunks = 0usize;
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&p) else {
                continue;
            };
            let rel = p
                .strip_prefix(&src)
                .map(|r| r.to_string_lossy().replace('\\', "/"))
                .unwrap_or_default();
            let lines = LineIndex::new(&text);
            let recs = records(&rel, &text, &lines);
            assert_same_bits(&rel, &text, &lines, &recs, &rel);
            files += 1;
            chunks += recs.len();
        }
    }
    assert!(
        files > 50 && chunks > 1000,
        "{files} files, {chunks} chunks"
    );
}

#[test]
fn every_line_range_embeds_as_its_own_text_does() {
    let texts = [
        "HTTPServer\nServer uses HTTP\r\nparseJSONValue(entries)\n\n  État größe utf8_decode\nIOError",
        "fn retryLoop() {\n    let maxTokens = 2;\n}\n",
        "",
        "\n\n\n",
        "ABC\nDef\nGHIjkl\nmnoPQR\n",
    ];
    let template = records("t.rs", "fn a() {}\n", &LineIndex::new("fn a() {}\n"));
    let Some(template) = template.first() else {
        panic!("a function is a chunk");
    };
    for text in texts {
        let lines = LineIndex::new(text);
        let n = lines.line_count() + 1;
        let mut chunks = Vec::new();
        // Every range, and some out of range (no vector).
        for a in 0..=n {
            for b in 0..=n {
                let mut c = template.clone();
                c.start_line = a;
                c.end_line = b;
                c.title = format!("impl Backoff{a} for HTTPRetry{b}");
                chunks.push(c);
            }
        }
        for path in ["src/retry_loop.rs", "", "HTTPServer/ÉTAT.md"] {
            assert_same_bits(path, text, &lines, &chunks, &format!("{text:?} {path:?}"));
        }
    }
}

/// The token buffers a thread reuses from file to file give every file
/// the bits fresh ones give: a huge file (whose buffers are then not
/// kept), then small ones; the buffers kept stay under their cap.
#[test]
fn reused_token_buffers_embed_as_fresh_ones_do() {
    let huge = "fn retryLoop(maxTokens: u32) -> HTTPServer { parse(entries) }\n".repeat(40_000);
    let small = "fn a() {}\nstruct Backoff;\n";
    for (path, text) in [
        ("huge.txt", huge.as_str()),
        ("small.rs", small),
        ("big.md", &huge[..50_000]),
        ("s.rs", small),
    ] {
        let lines = LineIndex::new(text);
        let recs = records(path, text, &lines);
        assert!(!recs.is_empty(), "{path}");
        assert_same_bits(path, text, &lines, &recs, path);
        assert!(spare_token_bytes() <= 2 * TOKEN_BUFFERS_KEPT, "{path}");
    }
}
