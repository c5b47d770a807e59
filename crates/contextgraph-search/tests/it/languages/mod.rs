//! Chunking of the eleven languages added after the first eight, one module
//! per language, each on a file shaped like real projects' (a class or
//! module with methods, imports, calls between files; under `fixtures/`):
//! symbol chunks carry the right name and line range, a definition is
//! found by name in the index (the lookup the definition boost and call
//! resolution use), and calls and imports resolve to the other fixture
//! file where the language's grammar and layout allow.

mod bash;
mod csharp;
mod elixir;
mod haskell;
mod javascript;
mod kotlin;
mod lua;
mod php;
mod ruby;
mod scala;
mod swift;
mod zig;

use contextgraph_search::chunk::{chunk_file, Chunk, ChunkKind};
use contextgraph_search::{Language, Workspace};

use crate::common::{options, write_files};

/// A temporary repository of fixture files, indexed.
pub struct Indexed {
    _dir: tempfile::TempDir,
    _cache: tempfile::TempDir,
    ws: Workspace,
}

impl Indexed {
    /// Write `files` (path, content) and index them.
    pub fn new(files: &[(&str, &str)]) -> Indexed {
        let dir = tempfile::tempdir().expect("temporary directory");
        write_files(dir.path(), files);
        let cache = tempfile::tempdir().expect("cache directory");
        let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("open");
        Indexed {
            _dir: dir,
            _cache: cache,
            ws,
        }
    }

    /// `path#local_id` of every chunk defining the bare `name`, sorted.
    pub fn defined(&self, name: &str) -> Vec<String> {
        let view = self.ws.view();
        let mut out: Vec<String> = view
            .index()
            .definitions(name)
            .filter_map(|s| view.chunk(s))
            .map(|(path, c)| format!("{path}#{}", c.local_id))
            .collect();
        out.sort();
        out
    }

    /// Asserts that chunk `local_id` of `path` calls `name`, and returns
    /// `path#local_id` of the definition the call resolves to, if any.
    pub fn call(&self, path: &str, local_id: &str, name: &str) -> Option<String> {
        let view = self.ws.view();
        let (slot, chunk) = view
            .index()
            .find(path, local_id)
            .unwrap_or_else(|| panic!("{path}: no chunk {local_id}"));
        assert!(
            chunk.calls.iter().any(|c| c == name),
            "{path}#{local_id} should call {name}: {:?}",
            chunk.calls
        );
        let target = view.graph().resolve_name(name, slot, path)?;
        view.chunk(target)
            .map(|(p, c)| format!("{p}#{}", c.local_id))
    }

    /// Asserts that some chunk of `path` imports `module`, and returns the
    /// workspace file the import resolves to, if any.
    pub fn import(&self, path: &str, module: &str) -> Option<String> {
        let view = self.ws.view();
        let index = view.index();
        let imports: Vec<_> = index
            .file_slots(path)
            .filter_map(|s| index.chunk(s))
            .flat_map(|(_, c)| c.imports.clone())
            .collect();
        let found = imports
            .iter()
            .find(|i| i.module == module)
            .unwrap_or_else(|| {
                let modules: Vec<&str> = imports.iter().map(|i| i.module.as_str()).collect();
                panic!("{path} should import {module}: {modules:?}")
            });
        view.graph().resolve_import(&found.candidates)
    }
}

/// The chunks of one file, as the index would cut them.
pub fn chunks(path: &str, text: &str) -> Vec<Chunk> {
    chunk_file(path, Language::detect(path), text)
}

/// The symbol chunk `local_id` of `chunks`, asserted to be named `name`
/// (bare), of kind `kind`, over lines `lines` (1-based, inclusive).
pub fn assert_symbol<'c>(
    chunks: &'c [Chunk],
    local_id: &str,
    name: &str,
    kind: &str,
    lines: (u32, u32),
) -> &'c Chunk {
    let c = chunks
        .iter()
        .find(|c| c.local_id == local_id)
        .unwrap_or_else(|| {
            let ids: Vec<&str> = chunks.iter().map(|c| c.local_id.as_str()).collect();
            panic!("no chunk {local_id}: {ids:?}")
        });
    assert_eq!(c.kind, ChunkKind::Symbol, "{local_id}");
    let symbol = c.symbol.as_ref().expect("a symbol chunk has a symbol");
    assert_eq!(symbol.name, name, "{local_id}: bare name");
    // A second definition of one name in a file is `name~2`.
    let qualified = local_id.split('~').next().unwrap_or(local_id);
    assert_eq!(symbol.qualified, qualified, "{local_id}: qualified name");
    assert_eq!(symbol.kind_label, kind, "{local_id}: kind");
    assert_eq!((c.start_line, c.end_line), lines, "{local_id}: lines");
    c
}

/// The local ids of the symbol chunks of `chunks`, in order.
pub fn symbol_ids(chunks: &[Chunk]) -> Vec<&str> {
    chunks
        .iter()
        .filter(|c| c.kind == ChunkKind::Symbol)
        .map(|c| c.local_id.as_str())
        .collect()
}
