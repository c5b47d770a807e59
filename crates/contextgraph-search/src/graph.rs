//! The def/ref graph: relations a frame carries (G1, G2) and the neighbours
//! the proximity ranking walks.
//!
//! Edges are stored as names (what a chunk calls, references, documents,
//! imports) and resolved here, at query time, against the live symbol table,
//! so an edit to one file never leaves other files' edges pointing at a
//! definition that moved or vanished.

use std::path::Path;

use contextgraph_types::Relation;

use crate::chunk::ChunkKind;
use crate::index::Index;
use crate::uri::{file_uri, module_uri, symbol_uri};

/// Most relations on one frame (bounded: a frame's size is peer-visible).
const MAX_RELATIONS: usize = 32;

/// Resolves names to slots and slots to URIs.
pub struct Graph<'a> {
    /// The index.
    pub index: &'a Index,
    /// The canonical workspace root.
    pub root: &'a Path,
}

impl<'a> Graph<'a> {
    /// The `file://` URI of a workspace file.
    pub fn file_uri(&self, rel_path: &str) -> String {
        file_uri(self.root, rel_path)
    }

    /// The symbol URI of a slot.
    pub fn slot_symbol_uri(&self, slot: u32) -> Option<String> {
        let (file, c) = self.index.chunk(slot)?;
        Some(symbol_uri(&self.file_uri(file), &c.local_id))
    }

    /// The definition a name used in `from_file` most plausibly refers to:
    /// one in the same file, else the same directory, else the only few
    /// candidates there are (an ambiguous common name resolves to nothing
    /// rather than to a wrong edge).
    pub fn resolve_name(&self, name: &str, from_slot: u32, from_file: &str) -> Option<u32> {
        let cands: Vec<u32> = self
            .index
            .definitions(name)
            .filter(|&s| s != from_slot)
            .take(64)
            .collect();
        if cands.is_empty() {
            return None;
        }
        fn dir(p: &str) -> &str {
            p.rsplit_once('/').map_or("", |(d, _)| d)
        }
        let from_dir = dir(from_file);
        // Paths first (no chunk decoded); a candidate whose saved chunk
        // cannot be read is passed over, as if it had no file.
        let servable = |s: u32| self.index.chunk(s).is_some();
        let path_of = |s: u32| self.index.slot_path(s).unwrap_or_default();
        if let Some(&s) = cands
            .iter()
            .find(|&&s| path_of(s) == from_file && servable(s))
        {
            return Some(s);
        }
        if let Some(&s) = cands
            .iter()
            .find(|&&s| dir(path_of(s)) == from_dir && servable(s))
        {
            return Some(s);
        }
        (cands.len() <= 3).then(|| cands[0])
    }

    /// The workspace file an import resolves to, if any.
    pub fn resolve_import(&self, candidates: &[String]) -> Option<String> {
        candidates
            .iter()
            .find(|c| self.index.file_head(c).is_some_and(|r| r.skipped.is_none()))
            .cloned()
    }

    /// The relations of a slot's frame: `code.defines` (its own symbol URI),
    /// `code.calls`, `code.references`, `doc.documents` (resolved symbol
    /// URIs) and `code.imports` (file or module URIs), each with a
    /// `display_name` a person reads.
    pub fn relations(&self, slot: u32) -> Vec<Relation> {
        self.relations_with(slot, &mut |rel| self.file_uri(rel))
    }

    /// [`relations`](Self::relations) with the file URIs made by
    /// `file_uri`, which must return what [`Graph::file_uri`] does: a
    /// caller building many frames keeps them (one per file, not one per
    /// relation of every frame).
    pub fn relations_with(
        &self,
        slot: u32,
        file_uri: &mut dyn FnMut(&str) -> String,
    ) -> Vec<Relation> {
        let Some((file, c)) = self.index.chunk(slot) else {
            return Vec::new();
        };
        let mut out: Vec<Relation> = Vec::new();
        let push = |out: &mut Vec<Relation>, rel: &str, target: String, display: &str| {
            if out.len() < MAX_RELATIONS
                && !display.trim().is_empty()
                && !out.iter().any(|r| r.rel == rel && r.target_uri == target)
            {
                out.push(Relation {
                    rel: rel.to_owned(),
                    target_uri: target,
                    display_name: Some(display.to_owned()),
                });
            }
        };
        let own_name = c.symbol.as_ref().map(|s| s.name.as_str());
        if c.kind == ChunkKind::Symbol {
            if let Some(s) = &c.symbol {
                push(
                    &mut out,
                    "code.defines",
                    symbol_uri(&file_uri(file), &c.local_id),
                    &s.qualified,
                );
            }
        }
        for (rel, names, cap) in [
            ("code.calls", &c.calls, 12usize),
            ("code.references", &c.references, 8),
            ("doc.documents", &c.documents, 8),
        ] {
            let mut n = 0;
            for name in names {
                if n >= cap {
                    break;
                }
                if Some(name.as_str()) == own_name && rel != "doc.documents" {
                    continue;
                }
                if let Some(target) = self.resolve_name(name, slot, file) {
                    if let Some((target_file, tc)) = self.index.chunk(target) {
                        let uri = symbol_uri(&file_uri(target_file), &tc.local_id);
                        let display = tc
                            .symbol
                            .as_ref()
                            .map_or(name.as_str(), |s| s.qualified.as_str());
                        push(&mut out, rel, uri, display);
                        n += 1;
                    }
                }
            }
        }
        let language = self
            .index
            .file_head(file)
            .map_or("other", |r| r.language.name());
        for imp in c.imports.iter().take(8) {
            let target = match self.resolve_import(&imp.candidates) {
                Some(rel_path) => file_uri(&rel_path),
                None => module_uri(language, &imp.module),
            };
            push(&mut out, "code.imports", target, &imp.module);
        }
        out
    }

    /// Neighbours of a slot in the def/ref graph (both directions), bounded.
    pub fn neighbours(&self, slot: u32, out: &mut Vec<u32>) {
        out.clear();
        let Some((file, c)) = self.index.chunk(slot) else {
            return;
        };
        for name in c
            .calls
            .iter()
            .chain(&c.references)
            .chain(&c.documents)
            .take(48)
        {
            if let Some(t) = self.resolve_name(name, slot, file) {
                out.push(t);
            }
        }
        for imp in c.imports.iter().take(8) {
            if let Some(f) = self.resolve_import(&imp.candidates) {
                out.extend(self.index.file_slots(&f).take(8));
            }
        }
        if let Some(s) = &c.symbol {
            out.extend(self.index.mentions_of(&s.name).take(32));
        }
        out.extend(self.index.importers_of(file).take(16));
        out.sort_unstable();
        out.dedup();
        out.retain(|&s| s != slot);
    }
}
