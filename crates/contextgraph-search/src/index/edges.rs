//! The code graph's edges inside the index: the symbol table (bare name →
//! defining slots, eager) and the reverse edges (mentions, importers; lazy).

// foldhash: seeded per process, much faster than SipHash on paths and names.
use foldhash::HashMap;

use super::{ChunkRecord, Index};
use crate::chunk::ChunkKind;

/// The reverse edges only anchored queries and the proximity walk read;
/// like [`SlotTerms`], built on first use (from the live records) and then
/// extended by every upsert. Removal leaves dead slots in (readers skip them).
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
    /// The reverse edges, built from the records on first use.
    pub(super) fn edges(&self) -> &Edges {
        self.edges.get_or_init(|| {
            let mut edges = Edges::default();
            for e in self.files.iter().flatten() {
                for (i, c) in e.record.chunks.iter().enumerate() {
                    edges.link(e.first_slot + i as u32, c);
                }
            }
            edges
        })
    }

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

    fn live_only<'a>(&'a self, list: Option<&'a Vec<u32>>) -> impl Iterator<Item = u32> + 'a {
        list.map(Vec::as_slice)
            .unwrap_or(&[])
            .iter()
            .copied()
            .filter(|&s| self.is_live(s))
    }

    /// Live slots defining a bare name.
    pub fn definitions<'a>(&'a self, name: &str) -> impl Iterator<Item = u32> + 'a {
        self.live_only(self.defs.get(name))
    }

    /// Live slots that call, reference or document a bare name.
    pub fn mentions_of<'a>(&'a self, name: &str) -> impl Iterator<Item = u32> + 'a {
        self.live_only(self.edges().mentions.get(name))
    }

    /// Live slots importing a workspace path (by one of their candidates).
    pub fn importers_of<'a>(&'a self, rel_path: &str) -> impl Iterator<Item = u32> + 'a {
        self.live_only(self.edges().importers.get(rel_path))
    }
}
