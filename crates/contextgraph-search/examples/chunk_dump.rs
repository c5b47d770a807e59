//! Every chunk of every file under the given directories, with all its
//! fields (lines, names, outline, calls, references, imports), in a stable
//! order: `cargo run --release -p contextgraph-search --example chunk_dump
//! -- DIR… > chunks.txt`. Two builds' outputs compared with `cmp` show
//! whether a change to the chunker changed any chunk.

use std::io::Write;
use std::path::{Path, PathBuf};

use contextgraph_search::chunk::chunk_file;
use contextgraph_search::Language;

/// Files larger than the walk's default limit are skipped as the index does.
const MAX_BYTES: u64 = 1024 * 1024;

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() && e.file_name() != ".git" {
            files_under(&path, out);
        } else if kind.is_file() {
            out.push(path);
        }
    }
}

fn main() -> std::io::Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for root in std::env::args().skip(1) {
        let root = PathBuf::from(root);
        let mut files = Vec::new();
        files_under(&root, &mut files);
        for path in files {
            if std::fs::metadata(&path).map_or(true, |m| m.len() > MAX_BYTES) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let rel = path
                .strip_prefix(&root)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            let lang = Language::detect(&rel);
            writeln!(out, "== {} {rel} {}", root.display(), lang.name())?;
            for c in chunk_file(&rel, lang, &text) {
                writeln!(out, "{c:?}")?;
            }
        }
    }
    out.flush()
}
