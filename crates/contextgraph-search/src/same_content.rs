//! Files whose bytes another file of the same build already had: their
//! chunk records are that file's, not chunked again.
//!
//! Byte-identical files are common in real trees: a vendored copy, the
//! same crate in two versions side by side (13.5% of the Rust files of the
//! cold-build bench's 6k corpus). Parsing, chunking, counting terms and
//! hashing regions again gives the same records but for what the chunker
//! reads besides the bytes, so a content is reused only where all of that
//! is provably the same, and [`SameContent::key`] holds every such input:
//!
//! - the **language** (detected from the path: it picks the grammar, the
//!   definition tables and the chunking method);
//! - for code, the **module path** the file's definitions are qualified
//!   with (`LangSpec::module_prefix` of the path: `net::retry_loop` in
//!   `src/net.rs`), which is in the names, ids, titles and terms;
//! - for Markdown, the **file name** (the title of the text before the
//!   first heading).
//!
//! Two more inputs differ per file and are redone for each copy
//! ([`SameContent::adapt`]): an import's candidate files, resolved relative
//! to the importing file's path (`LangSpec::import_candidates`, from the
//! module as written, which the records keep), and the timestamps (the
//! file's own mtime). Nothing else of the chunker depends on the path
//! (Text and line windows do not read it). Only files without an earlier
//! record are served (a cold build, a new file): a changed file's chunks
//! keep the timestamps of its own earlier record.
//!
//! The records held for reuse are those of files whose size and file name
//! another file of the batch has too, until the last of those is done. A
//! copy under another name is chunked again: the name filter is what keeps
//! the held records few (on the 16k-file corpus 11,090 files share a size
//! with another, 3,670 a size and a name, and 2,856 have a repeated
//! content), and most copies keep their names (a vendored tree, two
//! versions of a package).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use contextgraph_types::Timestamp;

use crate::index::ChunkRecord;
use crate::lang::Language;
use crate::walk::WalkedFile;

/// What a file's chunk records depend on besides its bytes, and its bytes
/// (by hash).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    language: Language,
    content_hash: [u8; 32],
    /// The module path (code) or file name (Markdown); empty otherwise.
    path_inputs: Vec<String>,
}

/// Records held for reuse, per [`Group`]: (key, records).
type Held = Vec<(Key, Arc<Vec<ChunkRecord>>)>;

/// The files that may have each other's content: a size and (a hash of)
/// a file name. A hash collision only holds a few more records.
type Group = (u64, u64);

fn group_of(file: &WalkedFile) -> Group {
    use std::hash::BuildHasher;
    let name = file.rel_path.rsplit('/').next().unwrap_or(&file.rel_path);
    (
        file.size,
        foldhash::quality::FixedState::with_seed(0).hash_one(name),
    )
}

/// The records of contents already chunked in one batch, shared by its
/// workers.
#[derive(Debug, Default)]
pub(crate) struct SameContent {
    /// Per group of more than one file of the batch, how many of them are
    /// not finished yet: once none is, nothing more of that group can be
    /// served and its records are let go (peak memory).
    unfinished: HashMap<Group, AtomicUsize>,
    done: Mutex<HashMap<Group, Held>>,
}

impl SameContent {
    /// For a batch of `files` (those without an earlier record): only a
    /// group (size, file name) two of them share is looked at.
    pub(crate) fn for_files<'f>(files: impl IntoIterator<Item = &'f WalkedFile>) -> SameContent {
        let mut count: HashMap<Group, usize> = HashMap::new();
        for f in files {
            *count.entry(group_of(f)).or_insert(0) += 1;
        }
        SameContent {
            unfinished: count
                .into_iter()
                .filter(|&(_, n)| n > 1)
                .map(|(group, n)| (group, AtomicUsize::new(n)))
                .collect(),
            done: Mutex::new(HashMap::new()),
        }
    }

    /// The key of `file`'s content, when another file of the batch may
    /// have it (the same size at walk time and the same file name).
    pub(crate) fn key(
        &self,
        file: &WalkedFile,
        language: Language,
        content_hash: [u8; 32],
    ) -> Option<Key> {
        if !self.unfinished.contains_key(&group_of(file)) {
            return None;
        }
        let rel_path = file.rel_path.as_str();
        let path_inputs = match language {
            Language::Markdown => vec![rel_path.rsplit('/').next().unwrap_or(rel_path).to_owned()],
            _ => language
                .spec()
                .map_or_else(Vec::new, |s| (s.module_prefix)(rel_path)),
        };
        Some(Key {
            language,
            content_hash,
            path_inputs,
        })
    }

    /// The records chunked for `key` (of `file`'s group) already, if any.
    pub(crate) fn get(&self, file: &WalkedFile, key: &Key) -> Option<Arc<Vec<ChunkRecord>>> {
        // A worker that panicked holding the lock left a complete map
        // (changes are whole): its contents are still right.
        let done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        done.get(&group_of(file))?
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, r)| Arc::clone(r))
    }

    /// Remembers the records chunked for `key` (of `file`'s group; the
    /// first copy's kept).
    pub(crate) fn put(&self, file: &WalkedFile, key: Key, records: &[ChunkRecord]) {
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        let held = done.entry(group_of(file)).or_default();
        if !held.iter().any(|(k, _)| *k == key) {
            held.push((key, Arc::new(records.to_vec())));
        }
    }

    /// `file` (of the batch) is done with, whatever came of it; after the
    /// last one of its group, that group's records go.
    pub(crate) fn finished(&self, file: &WalkedFile) {
        let group = group_of(file);
        let Some(left) = self.unfinished.get(&group) else {
            return;
        };
        if left.fetch_sub(1, Ordering::AcqRel) == 1 {
            let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
            done.remove(&group);
        }
    }

    /// Records held, over all sizes (tests).
    #[cfg(test)]
    fn held(&self) -> usize {
        let done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        done.values().map(Vec::len).sum()
    }

    /// `records` (of another file with the same key) as `build_chunk_records`
    /// makes them for the file at `rel_path` without an earlier record: its
    /// imports' candidates resolved from its own path, its timestamps
    /// `now` and its mtime.
    pub(crate) fn adapt(
        records: &[ChunkRecord],
        rel_path: &str,
        language: Language,
        now: Timestamp,
        mtime: Option<Timestamp>,
    ) -> Vec<ChunkRecord> {
        let valid_from = crate::index::first_valid_from(now, mtime);
        let spec = language.spec();
        records
            .iter()
            .map(|r| {
                let mut r = r.clone();
                r.recorded_at = now;
                r.valid_from = valid_from;
                if let Some(spec) = spec {
                    for import in &mut r.imports {
                        import.candidates = spec.resolve_import(rel_path, &import.module);
                    }
                }
                r
            })
            .collect()
    }
}

#[cfg(test)]
#[path = "same_content_tests.rs"]
mod tests;
