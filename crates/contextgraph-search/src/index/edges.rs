//! The code graph's edges inside the index: the symbol table (bare name →
//! defining slots) and the reverse edges (mentions, importers), each read
//! from the snapshot's table in place plus what was linked since the load.

// foldhash: seeded per process, much faster than SipHash on paths and names.
use foldhash::HashMap;

use super::frozen::Table;
use super::postings::saved_slots;
use super::{ChunkRecord, Index};
use crate::chunk::ChunkKind;

/// The reverse edges linked since the load (every upsert extends them).
/// Removal leaves dead slots in (readers skip them).
#[derive(Debug, Default, Clone)]
pub(super) struct Edges {
    /// Bare name → slots that call, reference or document it.
    pub(super) mentions: HashMap<String, Vec<u32>>,
    /// Candidate import path → importing slots.
    pub(super) importers: HashMap<String, Vec<u32>>,
}

impl Edges {
    pub(super) fn link(&mut self, slot: u32, c: &ChunkRecord) {
        for name in c.calls.iter().chain(&c.references).chain(&c.documents) {
            match self.mentions.get_mut(name.as_str()) {
                Some(v) => v.push(slot),
                None => {
                    self.mentions.insert(name.clone(), vec![slot]);
                }
            }
        }
        for imp in &c.imports {
            for cand in &imp.candidates {
                match self.importers.get_mut(cand.as_str()) {
                    Some(v) => v.push(slot),
                    None => {
                        self.importers.insert(cand.clone(), vec![slot]);
                    }
                }
            }
        }
    }
}

impl Index {
    /// Record a chunk's definition in the symbol table.
    pub(super) fn link_defs(&mut self, slot: u32, c: &ChunkRecord) {
        if let Some(s) = &c.symbol {
            if c.kind == ChunkKind::Symbol && !s.kind_label.starts_with("impl") {
                match self.defs.get_mut(s.name.as_str()) {
                    Some(v) => v.push(slot),
                    None => {
                        self.defs.insert(s.name.clone(), vec![slot]);
                    }
                }
            }
        }
    }

    /// Live slots listed under `name`: the snapshot's table, then `since`.
    fn live_slots<'a>(
        &'a self,
        table: fn(&super::frozen::Frozen) -> &Table,
        since: Option<&'a Vec<u32>>,
        name: &str,
    ) -> impl Iterator<Item = u32> + 'a {
        let saved = saved_slots(
            self.frozen
                .as_deref()
                .and_then(|f| f.lookup(table(f), name.as_bytes())),
        );
        saved
            .chain(since.map(Vec::as_slice).unwrap_or(&[]).iter().copied())
            .filter(|&s| self.is_live(s))
    }

    /// Live slots defining a bare name.
    pub fn definitions<'a>(&'a self, name: &str) -> impl Iterator<Item = u32> + 'a {
        self.live_slots(|f| &f.defs, self.defs.get(name), name)
    }

    /// Live slots that call, reference or document a bare name.
    pub fn mentions_of<'a>(&'a self, name: &str) -> impl Iterator<Item = u32> + 'a {
        self.live_slots(|f| &f.mentions, self.edges.mentions.get(name), name)
    }

    /// Live slots importing a workspace path (by one of their candidates).
    pub fn importers_of<'a>(&'a self, rel_path: &str) -> impl Iterator<Item = u32> + 'a {
        self.live_slots(
            |f| &f.importers,
            self.edges.importers.get(rel_path),
            rel_path,
        )
    }
}
